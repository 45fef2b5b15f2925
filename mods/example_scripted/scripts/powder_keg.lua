-- Powder keg: when destroyed by losing value (damage, a drain, a turret, a value set to
-- 0), it blows up: 1 damage to each enemy token around it. Kegs hit by a blast can blow
-- up in turn. A keg moved off the board or removed does not blow up.
--
-- `self` is the keg as it was, at its old cell, which is empty now.

return {
  on_destroyed = function(ctx, self)
    for dy = -1, 1 do
      for dx = -1, 1 do
        local x, y = self.x + dx, self.y + dy
        local t = ctx:token(x, y)            -- nil off the board, and on the keg's own cell
        if t and t.seat ~= self.seat then
          ctx:damage(x, y, 1)
        end
      end
    end
  end,
}
