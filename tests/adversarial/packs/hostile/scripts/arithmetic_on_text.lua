-- Attack: arithmetic on a three-megabyte numeral in an endless loop (a walk per instruction).
return {
  on_place = function(ctx)
    local s = "1" .. string.rep(" ", 3000000) while true do local x = s + 0 end
  end,
}
