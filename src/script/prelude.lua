-- The sandbox prelude: runs once in every script state, before any pack script, with the
-- standard functions still at hand. It makes what scripts can see deterministic (the same
-- content, seed and moves give the same events in every process) and keeps the instruction
-- budget from being swallowed by `pcall`. Its locals are out of the scripts' reach.
local budget_exceeded, charge = ...

local raw_type, raw_error, raw_next, raw_rawget, raw_set = type, error, next, rawget, rawset
local select = select
local raw_pcall, raw_xpcall = pcall, xpcall
local raw_tostring, raw_getmetatable, raw_setmetatable = tostring, getmetatable, setmetatable
local raw_format, raw_find, raw_gsub, raw_sub = string.format, string.find, string.gsub, string.sub
local pack, unpack = table.pack, table.unpack

-- Strings share one metatable; scripts may not reach it.
raw_getmetatable("").__metatable = false

-- Keys are ordered numbers first (ascending), then strings (byte order), then false, true.
local rank = { number = 1, string = 2, boolean = 3 }

local function key_less(a, b)
  local ra, rb = rank[raw_type(a)], rank[raw_type(b)]
  if ra ~= rb then return ra < rb end
  if ra == 3 then return (not a) and b end
  return a < b
end

-- A stable merge sort: the same input always gives the same order, ties keep their order.
local function merge_sort(list, n, less)
  if n < 2 then return end
  local buffer = {}
  local width = 1
  while width < n do
    local i = 1
    while i <= n do
      local mid = math.min(i + width, n + 1)
      local hi = math.min(i + 2 * width, n + 1)
      local a, b, k = i, mid, i
      while a < mid and b < hi do
        if less(list[b], list[a]) then
          buffer[k] = list[b]; b = b + 1
        else
          buffer[k] = list[a]; a = a + 1
        end
        k = k + 1
      end
      while a < mid do buffer[k] = list[a]; a = a + 1; k = k + 1 end
      while b < hi do buffer[k] = list[b]; b = b + 1; k = k + 1 end
      i = hi
    end
    for j = 1, n do list[j] = buffer[j] end
    width = width * 2
  end
end

local function sorted_keys(t, who)
  local keys, n = {}, 0
  for k in raw_next, t do
    if not rank[raw_type(k)] then
      raw_error(who .. ": a table with " .. raw_type(k) ..
        " keys has no fixed order; use numbers or strings as keys", 3)
    end
    n = n + 1
    keys[n] = k
  end
  merge_sort(keys, n, key_less)
  return keys, n
end

function pairs(t)
  if raw_type(t) ~= "table" then
    raw_error("bad argument #1 to 'pairs' (table expected, got " .. raw_type(t) .. ")", 2)
  end
  local keys, n = sorted_keys(t, "pairs")
  local i = 0
  return function()
    while i < n do
      i = i + 1
      local k = keys[i]
      local v = raw_rawget(t, k)
      if v ~= nil then return k, v end
    end
    return nil
  end, t, nil
end

function next(t, key)
  if raw_type(t) ~= "table" then
    raw_error("bad argument #1 to 'next' (table expected, got " .. raw_type(t) .. ")", 2)
  end
  local keys, n = sorted_keys(t, "next")
  local start = 1
  if key ~= nil then
    start = nil
    for i = 1, n do
      if keys[i] == key then start = i + 1; break end
    end
    if start == nil then raw_error("invalid key to 'next'", 2) end
  end
  for i = start, n do
    local v = raw_rawget(t, keys[i])
    if v ~= nil then return keys[i], v end
  end
  return nil
end

function table.sort(list, less)
  if raw_type(list) ~= "table" then
    raw_error("bad argument #1 to 'sort' (table expected, got " .. raw_type(list) .. ")", 2)
  end
  less = less or function(a, b) return a < b end
  merge_sort(list, #list, less)
end

-- Addresses differ from run to run: tables, functions and threads print as their type.
local function safe_tostring(v)
  local t = raw_type(v)
  if t == "table" or t == "function" or t == "thread" or t == "userdata" then
    local mt = raw_getmetatable(v)
    if raw_type(mt) == "table" and raw_rawget(mt, "__tostring") ~= nil then
      local s = raw_tostring(v)
      if raw_type(s) ~= "string" then raw_error("'__tostring' must return a string", 2) end
      return s
    end
    return t
  end
  return raw_tostring(v)
end
tostring = safe_tostring

function string.format(fmt, ...)
  if raw_type(fmt) == "string" then
    local plain = (raw_gsub(fmt, "%%%%", ""))
    if raw_find(plain, "%%[-+ #0]*%d*%.?%d*p") then
      raw_error("string.format: '%p' (an address) is not available in scripts", 2)
    end
  end
  local args = pack(...)
  for i = 1, args.n do
    local t = raw_type(args[i])
    if t == "table" or t == "function" or t == "thread" or t == "userdata" then
      args[i] = safe_tostring(args[i])
    end
  end
  return raw_format(fmt, unpack(args, 1, args.n))
end

-- Library functions that do a lot of work in one VM instruction are charged for it, so the
-- instruction budget bounds their time too.
local raw_rep, raw_concat = string.rep, table.concat
local raw_match, raw_gmatch, raw_gsub_fn = string.match, string.gmatch, string.gsub
local raw_find_fn, raw_len, raw_max = string.find, string.len, math.max

local raw_insert, raw_remove, raw_move, raw_unpack = table.insert, table.remove, table.move, table.unpack
local raw_reverse, raw_upper, raw_lower = string.reverse, string.upper, string.lower

function table.insert(list, ...)
  if raw_type(list) == "table" then charge(#list // 8) end
  return raw_insert(list, ...)
end

function table.remove(list, ...)
  if raw_type(list) == "table" then charge(#list // 8) end
  return raw_remove(list, ...)
end

function table.move(a1, f, e, t, a2)
  if raw_type(f) == "number" and raw_type(e) == "number" and e >= f then charge((e - f + 1) // 8) end
  return raw_move(a1, f, e, t, a2)
end

function table.unpack(list, i, j)
  if raw_type(list) == "table" then charge(((j or #list) - (i or 1) + 1) // 8) end
  return raw_unpack(list, i, j)
end
unpack = table.unpack

local function charged(f)
  return function(s, ...)
    if raw_type(s) == "string" then charge(raw_len(s) // 64) end
    return f(s, ...)
  end
end
string.reverse, string.upper, string.lower = charged(raw_reverse), charged(raw_upper), charged(raw_lower)

function string.rep(s, n, sep)
  if raw_type(n) == "number" and n > 0 then
    local piece = raw_len(raw_tostring(s)) + (sep ~= nil and raw_len(raw_tostring(sep)) or 0)
    charge((piece * n) // 64)
  end
  return raw_rep(s, n, sep)
end

function table.concat(list, sep, i, j)
  if raw_type(list) == "table" then
    charge((j or #list) - (i or 1) + 1)
  end
  return raw_concat(list, sep, i, j)
end

-- Backtracking patterns can take time that grows as (length of the subject) to the power
-- (number of repetitions in the pattern): refuse the hopeless ones, charge the rest.
local function pattern_cost(who, s, pattern)
  if raw_type(s) ~= "string" and raw_type(s) ~= "number" then return end
  if raw_type(pattern) ~= "string" then return end
  local n = raw_len(raw_tostring(s)) + 1
  local plain = (raw_gsub_fn(pattern, "%%.", "x"))
  local _, repeats = raw_gsub_fn(plain, "[%*%+%-%?]", "")
  -- An unanchored pattern is tried at every position of the subject.
  local anchored = raw_find_fn(pattern, "^", 1, true) == 1
  local cost = n ^ (repeats + (anchored and 0 or 1))
  if cost > 1e8 then
    raw_error(who .. ": this pattern has " .. repeats .. " repetitions; on " .. (n - 1) ..
      " characters it could run for a very long time; simplify it or split the text", 3)
  end
  charge(cost // 16)
end

function string.find(s, pattern, init, plain_flag)
  if not plain_flag then pattern_cost("string.find", s, pattern) end
  return raw_find_fn(s, pattern, init, plain_flag)
end

function string.match(s, pattern, init)
  pattern_cost("string.match", s, pattern)
  return raw_match(s, pattern, init)
end

function string.gmatch(s, pattern, init)
  pattern_cost("string.gmatch", s, pattern)
  return raw_gmatch(s, pattern, init)
end

function string.gsub(s, pattern, repl, n)
  pattern_cost("string.gsub", s, pattern)
  return raw_gsub_fn(s, pattern, repl, n)
end

-- Finalizers and weak tables run when memory is collected, which no script can predict,
-- and `__close` runs while an error unwinds, where the budget cannot stop it. A table's
-- metatable is a snapshot taken by setmetatable, so none of them can be added later;
-- getmetatable still returns the table the script gave.
local originals = raw_setmetatable({}, { __mode = "k" })
local forbidden = { "__gc", "__mode", "__close" }

function setmetatable(t, mt)
  if raw_type(mt) == "table" then
    for _, key in ipairs(forbidden) do
      if raw_rawget(mt, key) ~= nil then
        raw_error("setmetatable: '" .. key .. "' is not available in scripts", 2)
      end
    end
    local copy = {}
    for k, v in raw_next, mt do copy[k] = v end
    originals[copy] = mt
    mt = copy
  end
  return raw_setmetatable(t, mt)
end

function getmetatable(v)
  local mt = raw_getmetatable(v)
  if raw_type(mt) == "table" then return originals[mt] or mt end
  return mt
end

-- The message of a host error object, without the host's wording and traceback.
local function error_text(e)
  local s = raw_tostring(e)
  local cut = raw_find(s, "\nstack traceback:", 1, true)
  if cut then s = raw_sub(s, 1, cut - 1) end
  local at = raw_find(s, "runtime error: ", 1, true)
  if at then s = raw_sub(s, at + 15) end
  return s
end

-- Once the budget is spent, no pcall may catch that: it re-raises. Errors from ctx calls
-- arrive as host objects; scripts get their message.
local function checked(ok, ...)
  if not ok then
    if budget_exceeded() then raw_error((...), 0) end
    local e = ...
    if raw_type(e) == "userdata" then
      return false, error_text(e), select(2, ...)
    end
  end
  return ok, ...
end

function pcall(f, ...)
  return checked(raw_pcall(f, ...))
end

function xpcall(f, handler, ...)
  -- A spent budget skips the handler: it would run where the count cannot stop it.
  local function guarded(e)
    if budget_exceeded() then return e end
    if raw_type(e) == "userdata" then e = error_text(e) end
    return handler(e)
  end
  return checked(raw_xpcall(f, guarded, ...))
end

-- The libraries are read-only: a script cannot change what another script (or a later
-- hook call) sees. String methods keep working through the string metatable.
local function readonly(t, name)
  return raw_setmetatable({}, {
    __index = t,
    __newindex = function() raw_error("'" .. name .. "' cannot be changed by scripts", 2) end,
    __metatable = false,
  })
end
rawset = nil
string = readonly(string, "string")
table = readonly(table, "table")
math = readonly(math, "math")
_G = nil

-- After a script's top level has run, its globals are frozen: hook calls keep no state
-- between calls (the game state lives on the board), so a refused move or a look-ahead
-- by the AI leaves nothing behind in Lua.
local function no_new_globals(_, key)
  raw_error("scripts keep no state between calls: cannot set global '" .. raw_tostring(key) ..
    "' in a hook (use a local, or store it on the board)", 2)
end

-- Moves a script's globals into a new table that reads through to the sandbox; the host
-- then makes the script's environment read from it and refuse new globals.
local function move_globals(env, globals)
  local frozen = raw_setmetatable({}, { __index = globals, __metatable = false })
  local keys = {}
  for k in raw_next, env do keys[#keys + 1] = k end
  for _, k in ipairs(keys) do
    raw_set(frozen, k, raw_rawget(env, k))
    raw_set(env, k, nil)
  end
  return frozen
end

return move_globals, no_new_globals
