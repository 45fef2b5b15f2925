-- Changes the board first, then fails: the whole move must be undone.
return {
  on_place = function(ctx)
    for i = 1, ctx:target_count() do
      local x, y = ctx:target(i)
      ctx:damage(x, y, 1)
    end
    error("the misfire went off")
  end,
}
