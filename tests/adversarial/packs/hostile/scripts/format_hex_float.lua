-- Attack: string.format with %a, printed differently by each C library.
return {
  on_place = function(ctx)
    return string.format("%a", 1.5)
  end,
}
