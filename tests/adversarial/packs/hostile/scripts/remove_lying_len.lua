-- Attack: table.remove from a table whose __len claims 2^60 elements.
return {
  on_place = function(ctx)
    table.remove(setmetatable({}, { __len = function() return 1 << 60 end }), 1)
  end,
}
