-- Attack: a balanced match over a long run of opening brackets (quadratic).
return {
  on_place = function(ctx)
    local s = string.rep("(", 200000) return s:find("%b()")
  end,
}
