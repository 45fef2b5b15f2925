local s = string.rep("", 1 << 53)
return { on_place = function(ctx) end }
