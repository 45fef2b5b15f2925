-- Fills every empty cell with a miser.
return {
  on_place = function(ctx)
    for x = 0, ctx:width() - 1 do
      for y = 0, ctx:height() - 1 do
        ctx:spawn(x, y, { type = "miser", value = 5 })
      end
    end
  end,
}
