-- Attack: a pattern that recurses past Lua's depth for patterns.
return {
  on_place = function(ctx)
    return string.rep("a", 1000):match(string.rep("a?", 500))
  end,
}
