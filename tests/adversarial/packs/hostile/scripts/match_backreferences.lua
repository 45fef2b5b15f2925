-- Attack: a pattern with back-references over a long text.
return {
  on_place = function(ctx)
    local s = string.rep("a", 20000) return s:match("(a*)%1%1")
  end,
}
