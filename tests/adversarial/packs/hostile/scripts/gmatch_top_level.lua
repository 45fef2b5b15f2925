-- a gmatch iterator made at the top level: its position is put back before each move.
local words = ("one two three four"):gmatch("%a+")
return {
  on_place = function(ctx)
    ctx:log("word=" .. tostring(words()))
  end,
}
