-- Attack: gsub calling a function at each of a million empty matches.
return {
  on_place = function(ctx)
    local s = string.rep("x", 1000000) while true do s:gsub("", function() end) end
  end,
}
