-- Attack: a hook setting a global.
return {
  on_place = function(ctx)
    counter = 1
  end,
}
