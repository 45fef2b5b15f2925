-- Attack: tables made without end until the pack's memory is gone.
return {
  on_place = function(ctx)
    local t = {} for i = 1, 1e12 do t[i] = { i } end
  end,
}
