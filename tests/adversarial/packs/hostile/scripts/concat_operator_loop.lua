-- Attack: `..` of a 4 MB string in an endless loop (work one instruction hides).
return {
  on_place = function(ctx)
    local big = string.rep("x", 4000000) while true do local y = big .. "z" end
  end,
}
