-- Attack: string.format with %p.
return {
  on_place = function(ctx)
    return string.format("%p", {})
  end,
}
