-- Attack: `..` of a 16 MB string with itself in an endless loop (a 32 MB copy per instruction).
return {
  on_place = function(ctx)
    local a = string.rep("x", 16000000) while true do local _ = a .. a end
  end,
}
