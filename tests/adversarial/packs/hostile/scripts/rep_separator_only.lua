-- Attack: string.rep of empty strings with an empty separator.
return {
  on_place = function(ctx)
    string.rep("", 1 << 40, "")
  end,
}
