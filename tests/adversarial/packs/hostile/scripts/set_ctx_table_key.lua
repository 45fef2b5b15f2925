-- Attack: setting a table-valued key on ctx (its text would be an address).
return {
  on_place = function(ctx)
    ctx[{}] = 1
  end,
}
