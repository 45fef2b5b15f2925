-- Attack: == of two equal 16 MB strings in an endless loop (a comparison every other instruction).
return {
  on_place = function(ctx)
    local a, b = string.rep("x", 16000000), string.rep("x", 16000000) while true do if a == b then end if a == b then end if a == b then end if a == b then end if a == b then end if a == b then end if a == b then end if a == b then end end
  end,
}
