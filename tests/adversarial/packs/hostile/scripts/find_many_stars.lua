-- Attack: find with thirty a* before a missing b (exponential backtracking).
return {
  on_place = function(ctx)
    local s = string.rep("a", 100000) return s:find(string.rep("a*", 30) .. "b")
  end,
}
