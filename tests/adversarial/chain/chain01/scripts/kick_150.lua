return {
  on_place = function(ctx)
    ctx:spawn(ctx.x, (ctx.y + 1) % ctx:height(), { type = "chain01:link_150", value = 0 })
  end,
}
