-- Attack: a plain search for a long needle in a long text (n × m comparisons).
return {
  on_place = function(ctx)
    local s, n = string.rep("a", 1000000), string.rep("a", 500000) .. "b" while true do s:find(n, 1, true) end
  end,
}
