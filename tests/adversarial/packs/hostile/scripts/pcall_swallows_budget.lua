-- Attack: an endless loop of pcall that catches every error.
return {
  on_place = function(ctx)
    while true do pcall(error, "again") end
  end,
}
