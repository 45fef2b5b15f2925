-- Attack: ctx:log in an endless loop (text kept outside Lua).
return {
  on_place = function(ctx)
    while true do ctx:log(string.rep("x", 1000)) end
  end,
}
