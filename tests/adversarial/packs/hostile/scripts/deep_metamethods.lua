-- Attack: __index metamethods calling each other a million deep.
return {
  on_place = function(ctx)
    local t t = setmetatable({}, { __index = function(_, k) return t[k + 1] end }) return t[1]
  end,
}
