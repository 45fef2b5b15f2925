-- Attack: a frontier with a 100,000-character set at every position.
return {
  on_place = function(ctx)
    local s = string.rep("a", 100000) return s:match("%f[" .. string.rep("b", 100000) .. "]x")
  end,
}
