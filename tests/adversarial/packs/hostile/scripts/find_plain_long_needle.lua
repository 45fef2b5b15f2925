-- Attack: a plain search for a long needle in a long text (n × m comparisons).
return {
  on_place = function(ctx)
    local s = string.rep("a", 1000000) return s:find(string.rep("a", 500000) .. "b", 1, true)
  end,
}
