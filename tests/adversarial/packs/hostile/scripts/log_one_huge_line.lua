-- Attack: one ctx:log of eight megabytes.
return {
  on_place = function(ctx)
    ctx:log(string.rep("x", 8000000))
  end,
}
