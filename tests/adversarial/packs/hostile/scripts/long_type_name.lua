-- Attack: a four-megabyte type name passed to ctx:spawn (a did-you-mean over every name).
return {
  on_place = function(ctx)
    ctx:spawn(0, 0, { type = string.rep("a", 4000000) })
  end,
}
