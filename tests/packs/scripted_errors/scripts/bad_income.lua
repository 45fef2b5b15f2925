-- Returns text where a whole number is expected.
return {
  income = function(ctx, self, income)
    return "lots"
  end,
}
