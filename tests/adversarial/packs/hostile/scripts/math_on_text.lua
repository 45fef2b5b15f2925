-- Attack: math.abs of a three-megabyte numeral in an endless loop.
return {
  on_place = function(ctx)
    local s = "1" .. string.rep(" ", 3000000) while true do math.abs(s) end
  end,
}
