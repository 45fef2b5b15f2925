-- Attack: table.unpack of a table whose __len claims 2^40 elements.
return {
  on_place = function(ctx)
    table.unpack(setmetatable({}, { __len = function() return 1 << 40 end }))
  end,
}
