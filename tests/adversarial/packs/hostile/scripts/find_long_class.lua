-- Attack: a pattern whose character class is 100,000 characters long.
return {
  on_place = function(ctx)
    local s = string.rep("a", 100000) return s:find("[" .. string.rep("b", 100000) .. "]")
  end,
}
