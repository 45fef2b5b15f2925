-- Attack: tonumber as a for iterator over three megabytes of text (a walk for two instructions).
return {
  on_place = function(ctx)
    local s = "10" .. string.rep(" ", 3000000) for _ in tonumber, s, 10 do end
  end,
}
