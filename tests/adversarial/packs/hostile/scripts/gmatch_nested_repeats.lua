-- Attack: gmatch with repetitions nested by alternation-like classes.
return {
  on_place = function(ctx)
    local s = string.rep("ab", 50000) for w in s:gmatch("[ab]*[ab]*[ab]*c") do end
  end,
}
