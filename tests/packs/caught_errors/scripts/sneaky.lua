-- An income hook may only read. This one tries to damage a token and hides the error
-- with pcall: the move must still be refused.
return {
  income = function(ctx, me, income)
    pcall(function() ctx:damage(0, 0, 1) end)
    return income
  end,
}
