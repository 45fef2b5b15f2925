-- Fails between turns, so every move is refused while a grumpy token is on the board.
return {
  between_turns = function(ctx, self)
    error(string.format("grumpy at (%d, %d) will not let the game go on", self.x, self.y))
  end,
}
