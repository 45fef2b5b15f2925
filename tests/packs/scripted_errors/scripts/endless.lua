-- An endless loop inside pcall: the spent budget goes through the pcall.
return {
  on_place = function(ctx)
    pcall(function()
      while true do end
    end)
    ctx:log("never reached")
  end,
}
