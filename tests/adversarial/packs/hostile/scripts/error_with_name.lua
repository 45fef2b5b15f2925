-- Attack: an error object whose __name would print its address.
return {
  on_place = function(ctx)
    error(setmetatable({}, { __name = "boom" }))
  end,
}
