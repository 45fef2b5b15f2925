-- Leech: between turns (after every move, once all turrets have fired), drains 1 value
-- from its strongest enemy neighbour (ties: the first found, row by row from the top
-- left) and gains 1 value itself. With no enemy around it does nothing.

return {
  between_turns = function(ctx, self)
    local victim = nil ---@type Token?
    for dy = -1, 1 do
      for dx = -1, 1 do
        if dx ~= 0 or dy ~= 0 then
          -- ctx:token gives nil for an empty cell and for a cell off the board.
          local t = ctx:token(self.x + dx, self.y + dy)
          if t and t.seat ~= self.seat and (victim == nil or t.value > victim.value) then
            victim = t
          end
        end
      end
    end
    if victim == nil then
      return
    end

    ctx:damage(victim.x, victim.y, 1)
    -- The drain may have destroyed a powder keg whose blast hit the leech: `self` is the
    -- leech as it was when the hook started, so look at the board again.
    local now = ctx:token(self.x, self.y)
    if now and now.seat == self.seat and now.type == self.type then
      ctx:set_value(self.x, self.y, now.value + 1)
    end
  end,
}
