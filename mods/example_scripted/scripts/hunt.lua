-- Hunt: the ability of the Hunter card (abilities.yaml). It runs when the card is
-- played, at the ability step, over the card's area.
--
-- 1. Look at the area: the strongest enemy token in it (ties: the first in area order).
-- 2. No enemy: the hunter (the placed token) gains 1 value.
-- 3. Otherwise deal it 2 damage, then look again at its cell:
--    - empty (it was destroyed): claim the cell with a friendly basic token of value 1;
--    - an enemy token is still there (it survived, or a resilient became basic 1):
--      push it one cell further away from the hunter; off the board removes it, a taken
--      cell stops it.

-- A compile-time constant and a global helper of this file: the hook captures no
-- top-level local, so the script has no state and the host can replay its calls
-- (docs/lua.md, "Scripts without state are replayed").
local DAMAGE <const> = 2

function sign(n)
  if n > 0 then return 1 elseif n < 0 then return -1 else return 0 end
end

return {
  on_place = function(ctx)
    -- Short local names for the per-call fields (a hook nested inside ctx:damage, such
    -- as a powder keg blowing up, leaves them as they were).
    local me, hx, hy = ctx.seat, ctx.x, ctx.y

    local prey = nil ---@type Token?
    for _, cell in ipairs(ctx:targets()) do
      local t = ctx:token(cell.x, cell.y)
      if t and t.seat ~= me and (prey == nil or t.value > prey.value) then
        prey = t
      end
    end

    if prey == nil then
      local hunter = ctx:token(hx, hy)
      if hunter then
        ctx:set_value(hx, hy, hunter.value + 1)
      end
      return
    end

    ctx:damage(prey.x, prey.y, DAMAGE)
    local left = ctx:token(prey.x, prey.y)
    if left == nil then
      ctx:spawn(prey.x, prey.y, { seat = me, value = 1, type = "base:basic" })
    elseif left.seat ~= me then
      ctx:move(prey.x, prey.y, prey.x + sign(prey.x - hx), prey.y + sign(prey.y - hy))
    end
  end,
}
