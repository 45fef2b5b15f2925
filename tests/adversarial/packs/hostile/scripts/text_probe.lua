-- every way a value becomes text, which must read the same on every platform.
return {
  on_place = function(ctx)
    local decoy = setmetatable({}, { __metatable = { __tostring = 1 } })
    ctx:log(tostring(decoy))
    ctx:log(tostring(setmetatable({}, { __name = "named" })))
    ctx:log(tostring(0/0) .. " " .. tostring(-(0/0)) .. " " .. tostring(1/0) .. " " .. tostring(-1/0))
    ctx:log(string.format("%f|%5.1f|%-6g|%+e|%G", 0/0, 1/0, -1/0, 1/0, 0/0))
    ctx:log(string.format("%s %s", 0/0, {}))
    ctx:log(table.concat({ 0/0, 1/0 }, ","))
    ctx:log(string.rep(0/0, 2, "|"))
    local ok, e = pcall(error, setmetatable({}, { __name = "x" }))
    ctx:log(type(e))
    ctx:log(0/0)
  end,
}
