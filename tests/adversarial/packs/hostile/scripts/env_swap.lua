-- _ENV replaced at the top level: the new environment is frozen too.
local saved = _ENV
_ENV = setmetatable({}, { __index = saved })
hits = 0
return {
  on_place = function(ctx)
    ctx:log("hits=" .. hits)
    hits = hits + 1
  end,
}
