-- Attack: gsub whose result would be a gigabyte (a kilobyte at each of a million empty matches).
return {
  on_place = function(ctx)
    local s = string.rep("x", 1000000) return s:gsub("", string.rep("y", 1000))
  end,
}
