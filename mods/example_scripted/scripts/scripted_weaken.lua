-- Scripted Weaken: a Lua twin of base's `weaken` ability (damage 1 to each target), so
-- the cost of a scripted ability can be measured against the built-in one.
--
-- ctx:target_count() and ctx:target(i) return plain numbers, so this loop builds no Lua
-- tables at all (ctx:targets() would build one table per target and a list).

return {
  on_place = function(ctx)
    for i = 1, ctx:target_count() do
      local x, y = ctx:target(i)
      ctx:damage(x, y, 1)
    end
  end,
}
