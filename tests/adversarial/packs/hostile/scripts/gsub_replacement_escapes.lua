-- Attack: gsub copying a whole long match into each replacement many times.
return {
  on_place = function(ctx)
    local s = string.rep("x", 100000) while true do s:gsub(".*", "%0%0%0%0%0%0%0%0") end
  end,
}
