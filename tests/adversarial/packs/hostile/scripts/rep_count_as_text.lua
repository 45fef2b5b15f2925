-- Attack: string.rep with its count written as text, which Lua converts.
return {
  on_place = function(ctx)
    string.rep("x", "1e15")
  end,
}
