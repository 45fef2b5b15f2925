-- a counter kept in an upvalue: put back before each move.
local n = 0
local seen = {}
return {
  on_place = function(ctx)
    n = n + 1
    seen[#seen + 1] = n
    ctx:log("n=" .. n .. " seen=" .. #seen)
  end,
}
