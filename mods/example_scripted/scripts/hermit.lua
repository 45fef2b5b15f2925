-- Hermit: +1 income for each empty cell around it. Cells off the board are not empty
-- cells, so a hermit in a corner earns at most +3, on an edge at most +5.
--
-- `income` runs while the seats score (and whenever the game shows an income). It only
-- reads the board and returns the token's new income.

return {
  income = function(ctx, self, income)
    local sx, sy, empty = self.x, self.y, 0
    for dy = -1, 1 do
      for dx = -1, 1 do
        if (dx ~= 0 or dy ~= 0) and ctx:empty(sx + dx, sy + dy) then
          empty = empty + 1
        end
      end
    end
    -- `income` is what the token earns without the script: (value + auras) x multiplier.
    return income + empty
  end,
}
