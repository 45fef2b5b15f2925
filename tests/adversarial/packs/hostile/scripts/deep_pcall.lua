-- Attack: pcall nested a thousand deep (Lua's own C-stack limit).
return {
  on_place = function(ctx)
    local function d(n) if n == 0 then return end local ok, e = pcall(d, n - 1) if not ok then error(e, 0) end end d(1000)
  end,
}
