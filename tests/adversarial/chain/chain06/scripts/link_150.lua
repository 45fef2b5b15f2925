-- Deep in nested pcalls (C calls of Lua's own), spawn the next pack's link at
-- value 0: it is destroyed at once and its on_destroyed runs inside this one.
local function deep(ctx, n)
  if n == 0 then
    return ctx:spawn(ctx.x, ctx.y, { type = "chain07:link_150", value = 0 })
  end
  local ok, e = pcall(deep, ctx, n - 1)
  if not ok then error(e, 0) end
  return e
end
return {
  on_destroyed = function(ctx, me)
    deep(ctx, 150)
  end,
}
