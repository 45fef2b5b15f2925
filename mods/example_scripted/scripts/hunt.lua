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

    -- The prey's cell and value. ctx:seat_at and ctx:value_at read one part of a cell
    -- as a plain value (nil for an empty cell), with no table made.
    local px, py, strongest = 0, 0, nil
    for i = 1, ctx:target_count() do
      local x, y = ctx:target(i)
      local seat = ctx:seat_at(x, y)
      if seat and seat ~= me then
        local value = ctx:value_at(x, y)
        if strongest == nil or value > strongest then
          px, py, strongest = x, y, value
        end
      end
    end

    if strongest == nil then
      local value = ctx:value_at(hx, hy)
      if value then
        ctx:set_value(hx, hy, value + 1)
      end
      return
    end

    ctx:damage(px, py, DAMAGE)
    local left = ctx:seat_at(px, py)
    if left == nil then
      ctx:spawn(px, py, { seat = me, value = 1, type = "base:basic" })
    elseif left ~= me then
      ctx:move(px, py, px + sign(px - hx), py + sign(py - hy))
    end
  end,
}
