-- Attack: gmatch, where a leading ^ is a literal, over a million carets (quadratic in one call).
return {
  on_place = function(ctx)
    for _ in string.rep("^", 1000000):gmatch("^^*x") do end
  end,
}
