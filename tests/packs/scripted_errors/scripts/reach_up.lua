-- Damages the cell above the placed token; on the top row that cell is off the board,
-- which is an error for a call that changes the game.
return {
  on_place = function(ctx)
    ctx:damage(ctx.x, ctx.y - 1, 1)
  end,
}
