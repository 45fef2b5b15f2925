-- Between every turn, just under the per-call budget: many misers together must
-- still be stopped by the move's shared budget.
return {
  between_turns = function(ctx, me)
    for i = 1, 900000 do end
  end,
}
