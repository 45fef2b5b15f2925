-- Attack: string.rep with its count as a three-megabyte numeral, in an endless loop.
return {
  on_place = function(ctx)
    local s = string.rep("0", 3000000) .. "1" while true do string.rep("x", s) end
  end,
}
