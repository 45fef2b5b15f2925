-- state kept in tables reached through globals, one of them the returned hooks table.
M = {}
bag = { n = 0 }
function M.on_place(ctx)
  M.n = (M.n or 0) + 1
  bag.n = bag.n + 1
  ctx:log("M.n=" .. M.n .. " bag.n=" .. bag.n)
end
return M
