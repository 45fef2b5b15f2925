-- Attack: table.insert into a table whose __len claims 2^60 elements.
return {
  on_place = function(ctx)
    table.insert(setmetatable({}, { __len = function() return 1 << 60 end }), 1, "x")
  end,
}
