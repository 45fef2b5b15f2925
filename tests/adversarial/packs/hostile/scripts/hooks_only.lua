-- only the returned hooks table, reached through a global.
H = {}
H.on_place = function(ctx)
  H.n = (H.n or 0) + 1
  ctx:log("H.n=" .. H.n)
end
return H
