-- Attack: gsub with a pattern that backtracks over the whole text at every position.
return {
  on_place = function(ctx)
    local s = string.rep("a", 100000) return s:gsub("a*a*b", "")
  end,
}
