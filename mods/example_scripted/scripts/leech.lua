-- Leech: between turns (after every move, once all turrets have fired), drains 1 value
-- from its strongest enemy neighbour (ties: the first found, row by row from the top
-- left) and gains 1 value itself. With no enemy around it does nothing.

return {
  between_turns = function(ctx, self)
    local sx, sy, me = self.x, self.y, self.seat
    local vx, vy, strongest = 0, 0, nil
    for dy = -1, 1 do
      for dx = -1, 1 do
        if dx ~= 0 or dy ~= 0 then
          local x, y = sx + dx, sy + dy
          -- ctx:seat_at gives nil for an empty cell and for a cell off the board;
          -- the value is read only for an enemy.
          local seat = ctx:seat_at(x, y)
          if seat and seat ~= me then
            local value = ctx:value_at(x, y)
            if strongest == nil or value > strongest then
              vx, vy, strongest = x, y, value
            end
          end
        end
      end
    end
    if strongest == nil then
      return
    end

    ctx:damage(vx, vy, 1)
    -- The drain may have destroyed a powder keg whose blast hit the leech: `self` is the
    -- leech as it was when the hook started, so look at its cell again.
    if ctx:seat_at(sx, sy) == me and ctx:type_at(sx, sy) == self.type then
      ctx:set_value(sx, sy, ctx:value_at(sx, sy) + 1)
    end
  end,
}
