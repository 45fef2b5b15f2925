-- Attack: setting a global with a table key.
return {
  on_place = function(ctx)
    _ENV[{}] = 1
  end,
}
