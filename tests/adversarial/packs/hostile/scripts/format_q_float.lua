-- Attack: string.format %q of a float, printed as a hexadecimal float by C.
return {
  on_place = function(ctx)
    return string.format("%q", 1.0)
  end,
}
