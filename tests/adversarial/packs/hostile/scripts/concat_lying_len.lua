-- Attack: table.concat of a table whose __len and __index invent a quadrillion strings.
return {
  on_place = function(ctx)
    table.concat(setmetatable({}, { __len = function() return 1 << 50 end, __index = function() return "x" end }))
  end,
}
