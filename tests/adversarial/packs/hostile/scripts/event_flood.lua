-- Attack: changes in an endless loop (events kept outside Lua).
return {
  on_place = function(ctx)
    while true do ctx:add_score(1, 0) end
  end,
}
