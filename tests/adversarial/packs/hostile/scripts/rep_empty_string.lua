-- Attack: string.rep of an empty string a quadrillion times (a C loop with nothing to copy).
return {
  on_place = function(ctx)
    string.rep("", 1 << 53)
  end,
}
