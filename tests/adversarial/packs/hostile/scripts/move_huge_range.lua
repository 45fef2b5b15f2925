-- Attack: table.move over 2^60 indices.
return {
  on_place = function(ctx)
    table.move({}, 1, 1 << 60, 2)
  end,
}
