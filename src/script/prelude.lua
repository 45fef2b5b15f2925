-- The sandbox prelude: runs once in every script state, before any pack script, with the
-- standard functions still at hand. It makes what scripts can see deterministic (the same
-- content, seed and moves give the same events in every process), charges library calls
-- by their worst-case work so the budget bounds their time, and keeps the budget from
-- being swallowed by `pcall`. Its locals are out of the scripts' reach.
local caught, charge, largest, dbg_getupvalue, dbg_setupvalue, dbg_getmetatable,
  dbg_setmetatable, dbg_getinfo = ...

local raw_type, raw_error, raw_next, raw_rawget, raw_set = type, error, next, rawget, rawset
local raw_rawlen, raw_rawequal = rawlen, rawequal
local select, raw_tonumber, raw_ipairs = select, tonumber, ipairs
local raw_pcall, raw_xpcall = pcall, xpcall
local raw_tostring, raw_getmetatable, raw_setmetatable = tostring, getmetatable, setmetatable
local raw_format, raw_find, raw_gsub, raw_sub = string.format, string.find, string.gsub, string.sub
local raw_byte, raw_char, raw_len = string.byte, string.char, string.len
local raw_rep, raw_concat, raw_unpack = string.rep, table.concat, table.unpack
local raw_match, raw_gmatch = string.match, string.gmatch
local raw_reverse, raw_upper, raw_lower = string.reverse, string.upper, string.lower
local math_tointeger, math_type, math_huge = math.tointeger, math.type, math.huge
local math_min, math_max, math_floor = math.min, math.max, math.floor
local pack = table.pack
local max_integer, min_integer = math.maxinteger, math.mininteger

-- An error at the script line that called into the sandbox (never at a line of this
-- prelude, which means nothing to a script's author).
local function fail(message)
  local level = 2
  while true do
    local info = dbg_getinfo(level, "S")
    if not info then level = 0; break end
    if info.what ~= "C" and info.source ~= "=sandbox" then break end
    level = level + 1
  end
  raw_error(message, level)
end

-- Strings share one metatable; scripts may not reach it.
raw_getmetatable("").__metatable = false

---------------------------------------------------------------------------------------
-- Arguments as the C library converts them, so a charge is computed on what will really
-- be used: numbers written as strings, floats with an integral value, strings for numbers.

-- A number as text, the same on every platform (the C library prints NaN's sign as the
-- hardware left it).
local function number_text(v)
  if v ~= v then return "nan" end
  if v == math_huge then return "inf" end
  if v == -math_huge then return "-inf" end
  return raw_tostring(v)
end

-- Whether the sandbox function a script called (the outermost of the sandbox's frames
-- under the script's) was called as a method (`s:rep(3)`): Lua then leaves `self` out of
-- the argument numbers in its messages.
local function as_method()
  local level, last = 2, nil
  while true do
    local info = dbg_getinfo(level, "Sn")
    if not info or info.source ~= "=sandbox" then break end
    last = info
    level = level + 1
  end
  return last ~= nil and last.namewhat == "method"
end

local function bad_arg(who, n, what)
  if as_method() then
    n = n - 1
    if n == 0 then fail("calling '" .. who .. "' on bad self (" .. what .. ")") end
  end
  fail("bad argument #" .. n .. " to '" .. who .. "' (" .. what .. ")")
end

-- The type a message names for argument `n` of a call given `given` arguments: `no
-- value` past them (any absent argument when `given` is not known).
local function got(v, n, given)
  if v == nil and (given == nil or n > given) then return "no value" end
  return raw_type(v)
end

-- What luaL_checklstring would see: a string (numbers converted, platform-independent).
local function arg_str(who, n, v, given)
  local t = raw_type(v)
  if t == "string" then return v end
  if t == "number" then return number_text(v) end
  bad_arg(who, n, "string expected, got " .. got(v, n, given))
end

-- What luaL_checkinteger would see.
local function arg_int(who, n, v, given)
  if raw_type(v) == "string" then
    if #v > 32 then charge(#v // 8, who) end
    v = raw_tonumber(v) or v
  end
  if raw_type(v) == "number" then
    local i = math_tointeger(v)
    if i then return i end
    bad_arg(who, n, "number has no integer representation")
  end
  bad_arg(who, n, "number expected, got " .. got(v, n, given))
end

local function opt_int(who, n, v, default)
  if v == nil then return default end
  return arg_int(who, n, v)
end

local function arg_table(who, n, v)
  if raw_type(v) ~= "table" then
    bad_arg(who, n, "table expected, got " .. (v == nil and "no value" or raw_type(v)))
  end
  return v
end

-- `#t` as luaL_len takes it (a `__len` metamethod may answer anything).
local function length(who, t)
  local kind = raw_type(t)
  if kind ~= "table" and kind ~= "string" then
    local mt = dbg_getmetatable(t)
    if not (raw_type(mt) == "table" and raw_rawget(mt, "__len")) then
      -- Lua's own words, which name no line (the C library raises it).
      raw_error("attempt to get length of a " .. kind .. " value", 0)
    end
  end
  local n = #t
  local i = raw_type(n) == "number" and math_tointeger(n)
  if not i then fail("object length is not an integer") end
  return i
end

-- A string the scripts may make: at most the pack's memory.
local function check_size(who, bytes)
  if bytes > largest then
    fail(who .. ": the result would be " .. raw_format("%.0f", bytes) ..
      " bytes, more than the pack's script memory (" .. largest .. " bytes)")
  end
end

---------------------------------------------------------------------------------------
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
      local mid = math_min(i + width, n + 1)
      local hi = math_min(i + 2 * width, n + 1)
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

-- Tables made by a script's top level are frozen once it has run (see the end of this
-- prelude): their contents move to a table only the sandbox reaches, and the frozen table
-- reads through to it. `frozen_of[t]` is that table's metatable, whose `__frozen` holds
-- the contents and `__n` the length `#t` had.
local frozen_of = raw_setmetatable({}, { __mode = "k" })

-- The table holding `t`'s contents: itself, or what it reads through to when frozen.
local function contents(t)
  local mt = frozen_of[t]
  if mt then return raw_rawget(mt, "__frozen") end
  return t
end

local function sorted_keys(t, who)
  local keys, n = {}, 0
  for k in raw_next, t do
    if not rank[raw_type(k)] then
      fail(who .. ": a table with " .. raw_type(k) ..
        " keys has no fixed order; use numbers or strings as keys")
    end
    n = n + 1
    keys[n] = k
  end
  merge_sort(keys, n, key_less)
  return keys, n
end

function pairs(...)
  if select("#", ...) == 0 then bad_arg("pairs", 1, "value expected") end
  local t = ...
  arg_table("pairs", 1, t)
  local keys, n = sorted_keys(contents(t), "pairs")
  local i = 0
  return function()
    while i < n do
      i = i + 1
      local k = keys[i]
      -- Looked up at every step: an iterator made before `t` was frozen goes on reading it.
      local v = raw_rawget(contents(t), k)
      if v ~= nil then return k, v end
    end
    return nil
  end, t, nil
end

function next(t, key)
  arg_table("next", 1, t)
  t = contents(t)
  local keys, n = sorted_keys(t, "next")
  local start = 1
  if key ~= nil then
    start = nil
    for i = 1, n do
      if keys[i] == key then start = i + 1; break end
    end
    if start == nil then raw_error("invalid key to 'next'", 0) end
  end
  for i = start, n do
    local v = raw_rawget(t, keys[i])
    if v ~= nil then return keys[i], v end
  end
  return nil
end

---------------------------------------------------------------------------------------
-- Text of values: never an address, NaN and infinities the same everywhere.

-- The metatable a script gave a value (setmetatable keeps a snapshot, see below).
local originals = raw_setmetatable({}, { __mode = "k" })

local function safe_tostring(v)
  local t = raw_type(v)
  if t == "number" then return number_text(v) end
  if t == "table" then
    -- The real metatable, whatever its `__metatable` field pretends.
    local mt = dbg_getmetatable(v)
    local f = raw_type(mt) == "table" and raw_rawget(mt, "__tostring") or nil
    if f ~= nil then
      local s = f(v)
      if raw_type(s) ~= "string" then fail("'__tostring' must return a string") end
      return s
    end
    return "table"
  end
  if t == "function" or t == "thread" or t == "userdata" then return t end
  return raw_tostring(v)
end
tostring = safe_tostring

-- string.format, one conversion at a time: `%p` (an address) and `%a` (hexadecimal
-- floats, printed differently by each C library) are refused; NaN and infinities are
-- printed as `nan`, `inf`, `-inf`; tables and functions as their type (or __tostring).
local spec_pattern = "^%%([-+ #0]*)(%d*)%.?(%d*)([%a%%])"

-- One conversion by the C library, its refusals told in Lua's words: at the script's
-- line, arguments counted as `string.format`'s.
local function format_one(spec, v, arg)
  local ok, text = raw_pcall(raw_format, spec, v)
  if ok then return text end
  if text == "not enough memory" then raw_error(text, 0) end
  local what = raw_match(text, "^bad argument #%d+ to '[^']*' %((.*)%)$")
  if what then bad_arg("format", arg + 1, what) end
  fail(text)
end

function string.format(fmt, ...)
  fmt = arg_str("format", 1, fmt)
  local args = pack(...)
  local out, n, arg, pos = {}, 0, 0, 1
  local cost = #fmt
  local len = #fmt
  while pos <= len do
    local at = raw_find(fmt, "%", pos, true)
    if not at then
      n = n + 1; out[n] = raw_sub(fmt, pos)
      break
    end
    if at > pos then n = n + 1; out[n] = raw_sub(fmt, pos, at - 1) end
    local s, e, flags, width, precision, conv = raw_find(fmt, spec_pattern, at)
    if not s then fail("invalid conversion '" .. raw_sub(fmt, at, at + 5) .. "' to 'format'") end
    local spec = raw_sub(fmt, s, e)
    if conv == "%" and e - s > 1 then
      -- `%5%`: Lua takes an argument for it first, then refuses the conversion.
      arg = arg + 1
      if arg > args.n then bad_arg("format", arg + 1, "no value") end
      fail("invalid conversion '" .. spec .. "' to 'format'")
    elseif conv == "%" then
      n = n + 1; out[n] = "%"
    else
      arg = arg + 1
      if arg > args.n then bad_arg("format", arg + 1, "no value") end
      local v = args[arg]
      if conv == "p" then
        fail("string.format: '%p' (an address) is not available in scripts")
      elseif conv == "a" or conv == "A" then
        fail("string.format: '%" .. conv .. "' prints differently on each platform; use '%.17g'")
      elseif conv == "s" then
        v = safe_tostring(v)
        cost = cost + #v
        n = n + 1; out[n] = format_one(spec, v, arg)
      elseif conv == "q" then
        if raw_type(v) == "number" and math_type(v) == "float" then
          -- Lua writes every float as a hexadecimal float (`0x1p+0`), as `%a` does.
          fail("string.format: '%q' of a float prints differently on each platform; use '%.17g'")
        end
        if raw_type(v) == "string" then cost = cost + #v * 4 end
        n = n + 1; out[n] = format_one(spec, v, arg)
      elseif raw_type(v) == "number" and (v ~= v or v == math_huge or v == -math_huge)
        and (conv == "e" or conv == "E" or conv == "f" or conv == "F" or conv == "g" or conv == "G") then
        local text = number_text(v)
        if text ~= "-inf" and raw_find(flags, "+", 1, true) then text = "+" .. text
        elseif text ~= "-inf" and raw_find(flags, " ", 1, true) then text = " " .. text end
        if conv == "E" or conv == "F" or conv == "G" then text = raw_upper(text) end
        local left = raw_find(flags, "-", 1, true) and "-" or ""
        n = n + 1; out[n] = raw_format("%" .. left .. width .. "s", text)
      else
        if raw_type(v) == "string" then
          -- Converted by the C library as luaL_checknumber would (walking the text).
          cost = cost + #v * 2
          v = raw_tonumber(v) or v
        end
        n = n + 1; out[n] = format_one(spec, v, arg)
      end
    end
    pos = e + 1
  end
  charge(cost // 16, "string.format")
  return raw_concat(out)
end

-- A read (or write) of a missing key follows `__index` (`__newindex`) tables inside one
-- instruction, up to 2,000 of them, where neither the count nor the clock can stop it:
-- chains are kept short. A chain only grows at its far end, when a table some metatable
-- already leads to gets a metatable of its own, so that is refused (give a table its
-- metatable before it is used as another's `__index`), and each new chain is measured.
local max_chain = 8
local chain_events = { "__index", "__newindex" }
local chain_ends = raw_setmetatable({}, { __mode = "k" })

-- How many tables a read of a missing key in `x` visits through `event` (0 when `x` is
-- not a table), stopping past `max_chain`.
local function chain_length(x, event)
  local n = 0
  while raw_type(x) == "table" and n <= max_chain do
    n = n + 1
    local mt = dbg_getmetatable(x)
    if mt == nil then break end
    x = raw_rawget(mt, event)
  end
  return n
end

---------------------------------------------------------------------------------------
-- Library calls charged by their real worst-case work (in instructions), computed from
-- the arguments after the conversions the C library makes, before any work is done.
-- Table functions that walk a list run in Lua here, so every step is counted.

function table.insert(t, ...)
  arg_table("insert", 1, t)
  local nargs = select("#", ...)
  local e = length("insert", t) + 1
  if nargs == 1 then
    t[e] = ...
    return
  elseif nargs == 2 then
    local pos, v = ...
    pos = arg_int("insert", 2, pos)
    if pos < 1 or pos > e then bad_arg("insert", 2, "position out of bounds") end
    for i = e, pos + 1, -1 do t[i] = t[i - 1] end
    t[pos] = v
    return
  end
  fail("wrong number of arguments to 'insert'")
end

function table.remove(t, pos)
  arg_table("remove", 1, t)
  local size = length("remove", t)
  pos = opt_int("remove", 2, pos, size)
  if pos ~= size and (pos < 1 or pos > size + 1) then
    bad_arg("remove", 2, "position out of bounds")
  end
  local v = t[pos]
  while pos < size do
    t[pos] = t[pos + 1]
    pos = pos + 1
  end
  t[pos] = nil
  return v
end

function table.move(a1, f, e, t, a2)
  f = arg_int("move", 2, f)
  e = arg_int("move", 3, e)
  t = arg_int("move", 4, t)
  arg_table("move", 1, a1)
  if a2 == nil then a2 = a1 else arg_table("move", 5, a2) end
  if e >= f then
    if not (f > 0 or e < max_integer + f) then bad_arg("move", 3, "too many elements to move") end
    if t > max_integer - (e - f) then bad_arg("move", 4, "destination wrap around") end
    if t > e or t <= f or not raw_rawequal(a1, a2) then
      for i = 0, e - f do a2[t + i] = a1[f + i] end
    else
      for i = e - f, 0, -1 do a2[t + i] = a1[f + i] end
    end
  end
  return a2
end

function table.unpack(t, i, j)
  i = opt_int("unpack", 2, i, 1)
  if j == nil then j = length("unpack", t) else j = arg_int("unpack", 3, j) end
  if i > j then return end
  -- Counted as floats: j - i may not fit an integer. The C function refuses more than
  -- the stack can take (about a million), so this bounds the work too.
  local count = (j + 0.0) - i + 1
  if count >= 1e6 then fail("too many results to unpack") end
  -- Each value missing from `t` is looked up through its `__index` tables (functions
  -- there run as counted Lua).
  charge(count * math_max(1, chain_length(t, "__index")) // 2, "table.unpack")
  return raw_unpack(t, i, j)
end
unpack = table.unpack

function table.concat(t, sep, i, j)
  arg_table("concat", 1, t)
  if sep == nil then sep = "" else sep = arg_str("concat", 2, sep) end
  i = opt_int("concat", 3, i, 1)
  if j == nil then j = length("concat", t) else j = arg_int("concat", 4, j) end
  local parts, n, total = {}, 0, 0
  for k = i, j do
    local v = t[k]
    local tv = raw_type(v)
    if tv == "number" then
      v = number_text(v)
    elseif tv ~= "string" then
      fail("invalid value (" .. tv .. ") at index " .. k .. " in table for 'concat'")
    end
    total = total + #v + #sep
    check_size("table.concat", total)
    n = n + 1
    parts[n] = v
  end
  charge(total // 64, "table.concat")
  return raw_concat(parts, sep)
end

function table.sort(list, less)
  arg_table("sort", 1, list)
  if less == nil then less = function(a, b) return a < b end end
  merge_sort(list, length("sort", list), less)
end

function string.rep(...)
  local s, n, sep = ...
  local given = select("#", ...)
  s = arg_str("rep", 1, s, given)
  n = arg_int("rep", 2, n, given)
  if sep == nil then sep = "" else sep = arg_str("rep", 3, sep) end
  if n <= 0 then return "" end
  -- The C loop runs n times even for empty strings.
  local bytes = (#s + #sep) * (n + 0.0)
  check_size("string.rep", bytes)
  charge(n / 16 + bytes / 32, "string.rep")
  return raw_rep(s, n, sep)
end

local function charged_text(name, f)
  return function(...)
    local s = arg_str(name, 1, (...), select("#", ...))
    charge(#s // 16, "string." .. name)
    return f(s)
  end
end
string.reverse = charged_text("reverse", raw_reverse)
string.upper = charged_text("upper", raw_upper)
string.lower = charged_text("lower", raw_lower)
string.len = function(...) return #arg_str("len", 1, (...), select("#", ...)) end

function string.sub(...)
  local s, i, j = ...
  s = arg_str("sub", 1, s, select("#", ...))
  i = arg_int("sub", 2, i)
  j = opt_int("sub", 3, j, -1)
  charge(#s // 256, "string.sub")
  return raw_sub(s, i, j)
end

function string.byte(s, i, j)
  s = arg_str("byte", 1, s)
  i = opt_int("byte", 2, i, 1)
  j = opt_int("byte", 3, j, i)
  local len = #s
  if i < 0 then i = math_max(len + i + 1, 1) elseif i == 0 then i = 1 end
  if j < 0 then j = len + j + 1 elseif j > len then j = len end
  if i <= j then charge((j - i + 1) // 8, "string.byte") end
  return raw_byte(s, i, j)
end

function string.char(...)
  local n = select("#", ...)
  charge(n // 2, "string.char")
  for i = 1, n do
    local c = arg_int("char", i, (select(i, ...)))
    if c < 0 or c > 255 then bad_arg("char", i, "value out of range") end
  end
  return raw_char(...)
end

-- The pattern functions (string.find, match, gmatch, gsub) are not Lua's C functions but
-- the sandbox's own (pattern.rs), which count their work as they run and charge it to the
-- budget; they are in `string` before this prelude runs.

-- Converting text to a number walks the whole text (spaces and digits); it is charged
-- by its length before it is done, wherever the C library converts: tonumber, math
-- functions given text, arithmetic on strings (the string metamethods).
local function text_cost(v)
  if raw_type(v) == "string" then return #v end
  return 0
end

function tonumber(...)
  local n = select("#", ...)
  if n == 0 then bad_arg("tonumber", 1, "value expected") end
  local v, base = ...
  if base ~= nil then
    base = arg_int("tonumber", 2, base)
    if raw_type(v) ~= "string" then bad_arg("tonumber", 1, "string expected, got " .. got(v, 1, n)) end
    if base < 2 or base > 36 then bad_arg("tonumber", 2, "base out of range") end
  end
  local cost = text_cost((...))
  if cost > 32 then charge(cost // 8, "tonumber") end
  return raw_tonumber(...)
end

-- The arguments each math function needs (numbers, or any value), for Lua's messages.
local math_needs = { fmod = 2, ult = 2, ldexp = 2, pow = 2, atan2 = 2, max = 1, min = 1,
  tointeger = "any", type = "any" }

-- A math function's arguments as luaL_checknumber sees them: a refusal in Lua's words.
local function check_numbers(name, need, n, ...)
  if need == "any" then
    if n == 0 then bad_arg(name, 1, "value expected") end
    return
  end
  if n == 0 and (name == "max" or name == "min") then bad_arg(name, 1, "value expected") end
  for i = 1, math_max(n, need) do
    local v = select(i, ...)
    local t = raw_type(v)
    if t ~= "number" and not (t == "string" and raw_tonumber(v)) then
      bad_arg(name, i, "number expected, got " .. got(v, i, n))
    end
  end
end

local function charged_numbers(name, f)
  local who = "math." .. name
  local need = math_needs[name] or 1
  local any = need == "any"
  return function(...)
    local a, b = ...
    local n = select("#", ...)
    if not any and (raw_type(a) ~= "number" or (n >= 2 and raw_type(b) ~= "number")
        or n < need or n > 2) then
      check_numbers(name, need, n, ...)
    elseif any and n == 0 then
      check_numbers(name, need, n, ...)
    end
    local cost = text_cost(a) + text_cost(b)
    if n > 2 then
      local args = { ... }
      for i = 3, n do cost = cost + text_cost(args[i]) end
      cost = cost + n
    end
    if cost > 32 then charge(cost // 8, who) end
    return f(...)
  end
end
do
  local names = {}
  for name, f in raw_next, math do
    if raw_type(f) == "function" then names[#names + 1] = name end
  end
  for _, name in raw_ipairs(names) do math[name] = charged_numbers(name, math[name]) end
  local meta = dbg_getmetatable("")
  for _, event in raw_ipairs({ "__add", "__sub", "__mul", "__div", "__mod", "__pow", "__unm", "__idiv" }) do
    local f = raw_rawget(meta, event)
    if f ~= nil then
      raw_set(meta, event, function(x, y)
        local cost = text_cost(x) + text_cost(y)
        if cost > 32 then charge(cost // 8, "arithmetic on a string") end
        return f(x, y)
      end)
    end
  end
end

---------------------------------------------------------------------------------------
-- Finalizers and weak tables run when memory is collected, which no script can predict,
-- and `__close` runs while an error unwinds, where the budget cannot stop it. A table's
-- metatable is a snapshot taken by setmetatable, so none of them can be added later;
-- getmetatable still returns the table the script gave.
local forbidden = { "__gc", "__mode", "__close" }

function setmetatable(t, mt)
  arg_table("setmetatable", 1, t)
  if mt ~= nil and raw_type(mt) ~= "table" then
    bad_arg("setmetatable", 2, "nil or table expected, got " .. raw_type(mt))
  end
  if frozen_of[t] then
    fail("setmetatable: the table was made when the script loaded, and such tables " ..
      "are read-only in hooks (scripts keep no state between moves)")
  end
  if raw_type(mt) == "table" then
    local fields = contents(mt)
    for _, key in raw_ipairs(forbidden) do
      if raw_rawget(fields, key) ~= nil then
        fail("setmetatable: '" .. key .. "' is not available in scripts")
      end
    end
    local copy = {}
    for k, v in raw_next, fields do copy[k] = v end
    for _, event in raw_ipairs(chain_events) do
      local target = raw_rawget(copy, event)
      if raw_type(target) == "table" then
        if chain_ends[t] then
          fail("setmetatable: this table is already another metatable's __index or " ..
            "__newindex, and giving it an '" .. event .. "' table of its own would make " ..
            "that chain longer; give each table its metatable before it is used as one")
        end
        if chain_length(target, event) >= max_chain then
          fail("setmetatable: '" .. event .. "' leads through more than " .. (max_chain - 1) ..
            " tables (each read of a missing key would visit them all); make the chain shorter")
        end
      end
    end
    for _, event in raw_ipairs(chain_events) do
      local target = raw_rawget(copy, event)
      if raw_type(target) == "table" then chain_ends[target] = true end
    end
    originals[copy] = mt
    mt = copy
  end
  return raw_setmetatable(t, mt)
end

function getmetatable(v)
  local frozen = frozen_of[v]
  if frozen then return raw_rawget(frozen, "__shown") end
  local mt = raw_getmetatable(v)
  if raw_type(mt) == "table" then return originals[mt] or mt end
  return mt
end

-- Once the budget is spent, or memory ran out, no pcall may catch that: it re-raises.
-- `caught` also tells the host an error was caught (a call that caught one is not replayed: it may have been
-- running out of memory, which a replay would not meet). Errors from ctx calls arrive as
-- host objects; scripts get their message, which `caught` gives (made by the host, not
-- charged: its traceback, cut off, depends on how the call was made, not on the script).
local function checked(ok, ...)
  if not ok then
    local stop, text = caught((...))
    if stop then raw_error((...), 0) end
    if text then
      return false, text, select(2, ...)
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
    local stop, text = caught(e)
    if stop then return e end
    return handler(text or e)
  end
  return checked(raw_xpcall(f, guarded, ...))
end

---------------------------------------------------------------------------------------
-- The libraries are read-only: a script cannot change what another script (or a later
-- hook call) sees. String methods keep working through the string metatable.
local function readonly(t, name)
  return raw_setmetatable({}, {
    __index = t,
    __newindex = function() fail("'" .. name .. "' cannot be changed by scripts") end,
    __metatable = false,
  })
end
rawset = nil
string = readonly(string, "string")
table = readonly(table, "table")
math = readonly(math, "math")
_G = nil

-- The name of a key in a message: never an address.
local function key_name(key)
  if raw_type(key) == "string" then return key end
  if raw_type(key) == "number" then return number_text(key) end
  return "a " .. raw_type(key) .. " key"
end

-- After a script's top level has run, its globals are frozen: hook calls keep no state
-- between calls (the game state lives on the board), so a refused move or a look-ahead
-- by the AI leaves nothing behind in Lua.
local function no_new_globals(_, key)
  fail("scripts keep no state between calls: cannot set global '" .. key_name(key) ..
    "' in a hook (use a local, or store it on the board)")
end

-- Moves a script's globals into a new table that reads through to `fallback`; the host
-- (or `freeze_env` below) then makes the environment read from it and refuse new keys.
local function move_globals(env, fallback)
  local frozen = raw_setmetatable({}, { __index = fallback, __metatable = false })
  local keys = {}
  for k in raw_next, env do keys[#keys + 1] = k end
  for _, k in raw_ipairs(keys) do
    raw_set(frozen, k, raw_rawget(env, k))
    raw_set(env, k, nil)
  end
  return frozen
end

-- Freeze a table a script made its `_ENV` like the globals of its file: what it held
-- stays readable (through the metatable it had), nothing new can be set.
local function freeze_env(t)
  local old = dbg_getmetatable(t)
  local frozen = move_globals(t, nil)
  dbg_setmetatable(frozen, old)
  dbg_setmetatable(t, { __index = frozen, __newindex = no_new_globals, __metatable = false })
end


---------------------------------------------------------------------------------------
-- Script state between moves. A move's result depends only on the game state and the
-- move: nothing a hook does may last until the next move. After a script's top level has
-- run, everything its hooks can reach is fixed:
-- - every table they reach (through upvalues, globals, keys, values and metatables) is
--   frozen: its contents move to a table only the sandbox reaches, and the table itself
--   reads through to it and refuses every write, with a message. Nothing is copied back
--   between moves, however large the tables;
-- - the upvalues of the functions they reach (a top-level `local n = 0` a hook counts
--   in) are recorded, and put back before the first hook call of that script in each
--   move. That is the only work between moves; it runs in Lua, counted against the move's
--   budget and clock, and is capped at load (`max_slots`).
-- A script whose functions capture nothing but `_ENV` has nothing to put back.

-- Upvalue slots a script's state may have (each put back before a move of its hooks).
local max_slots = 10000

-- The sandbox's own tables and functions (recorded below, before any script runs) are
-- never part of a script's state.
local owned = raw_setmetatable({}, { __mode = "k" })

local function own(v)
  local t = raw_type(v)
  if (t ~= "table" and t ~= "function") or owned[v] then return end
  owned[v] = true
  if t == "table" then
    for k, x in raw_next, v do own(k); own(x) end
    own(dbg_getmetatable(v))
  else
    local i = 1
    while true do
      local name, x = dbg_getupvalue(v, i)
      if name == nil then break end
      own(x)
      i = i + 1
    end
  end
end

local function refuse_write(_, key)
  fail("scripts keep no state between moves: this table was made when the script loaded, " ..
    "and such tables are read-only in hooks (tried to set '" .. key_name(key) ..
    "'); build a new table in the hook, or keep what must last on the board")
end

local function frozen_len(t)
  return raw_rawget(frozen_of[t], "__n")
end

-- The metamethods a frozen table keeps from the metatable it had (its `__index` is kept
-- behind its contents; `__newindex` is replaced by the refusal).
local kept_events = { "__add", "__sub", "__mul", "__div", "__mod", "__pow", "__unm",
  "__idiv", "__band", "__bor", "__bxor", "__shl", "__shr", "__bnot", "__concat", "__len",
  "__eq", "__lt", "__le", "__call", "__tostring", "__name" }

local function freeze_table(t)
  if frozen_of[t] or owned[t] then return end
  local old = dbg_getmetatable(t)
  local shown = getmetatable(t)
  local n = raw_rawlen(t)
  local hidden = {}
  local k, v = raw_next(t)
  while k ~= nil do
    raw_set(hidden, k, v)
    raw_set(t, k, nil)
    k, v = raw_next(t, k)
  end
  local mt = { __newindex = refuse_write, __frozen = hidden, __n = n, __shown = shown }
  local index
  if old ~= nil then
    for _, e in raw_ipairs(kept_events) do
      local f = raw_rawget(old, e)
      if f ~= nil then mt[e] = f end
    end
    index = raw_rawget(old, "__index")
  end
  if index == nil then
    mt.__index = hidden
  elseif raw_type(index) == "function" then
    mt.__index = function(p, key)
      local found = raw_rawget(hidden, key)
      if found ~= nil then return found end
      return index(p, key)
    end
  else
    mt.__index = hidden
    raw_setmetatable(hidden, { __index = index })
  end
  if mt.__len == nil then mt.__len = frozen_len end
  dbg_setmetatable(t, mt)
  frozen_of[t] = mt
end

function rawget(t, k)
  arg_table("rawget", 1, t)
  return raw_rawget(contents(t), k)
end

function rawlen(v)
  local frozen = frozen_of[v]
  if frozen then return raw_rawget(frozen, "__n") end
  local t = raw_type(v)
  if t ~= "table" and t ~= "string" then
    bad_arg("rawlen", 1, "table or string expected, got " .. got(v, 1))
  end
  return raw_rawlen(v)
end

-- Call `on_function(f)`, `on_table(t, is_metatable)` and `on_other(v)` (userdata,
-- threads) once for each value reachable from `roots` through upvalues, keys, values and
-- metatables, stopping at the sandbox's own.
local function walk(roots, on_function, on_table, on_other)
  local seen, metas = {}, {}
  local function visit(v)
    local t = raw_type(v)
    if owned[v] or seen[v] then return end
    if t ~= "table" and t ~= "function" then
      if t == "userdata" or t == "thread" then seen[v] = true; on_other(v) end
      return
    end
    seen[v] = true
    if t == "function" then
      on_function(v)
      local i = 1
      while true do
        local name, x = dbg_getupvalue(v, i)
        if name == nil then break end
        visit(x)
        i = i + 1
      end
    else
      on_table(v, metas[v])
      for k, x in raw_next, v do visit(k); visit(x) end
      local mt = dbg_getmetatable(v)
      if mt ~= nil then
        metas[mt] = true
        visit(mt)
        visit(originals[mt])
      end
    end
  end
  for _, root in raw_ipairs(roots) do visit(root) end
end

local function capture(hooks, env)
  -- The roots: what the hooks table holds (the host has read it already; a script reaches
  -- it only through something else it captured) and the file's environment.
  local roots = { env }
  for _, x in raw_next, hooks do roots[#roots + 1] = x end
  -- First every table a function uses as `_ENV` (other than the file's own, frozen by the
  -- host) is frozen like the globals: `_ENV = {}` at the top level keeps no state either.
  local envs = {}
  local function ignore() end
  walk(roots, function(f)
    local i = 1
    while true do
      local name, x = dbg_getupvalue(f, i)
      if name == nil then break end
      if name == "_ENV" and raw_type(x) == "table" and x ~= env and not owned[x] then
        envs[x] = true
      end
      i = i + 1
    end
  end, ignore, ignore)
  for t in raw_next, envs do freeze_env(t) end
  -- The tables that only hold frozen globals (an environment, its metatable, the table
  -- of globals it reads through and that one's metatable): no script can write them.
  local structural = {}
  local function structure(e)
    structural[e] = true
    local mt = dbg_getmetatable(e)
    if mt == nil then return end
    structural[mt] = true
    local frozen = raw_rawget(mt, "__index")
    if raw_type(frozen) == "table" then
      structural[frozen] = true
      local fmt = dbg_getmetatable(frozen)
      if fmt ~= nil then structural[fmt] = true end
    end
  end
  structure(env)
  for t in raw_next, envs do structure(t) end
  -- Then every table is frozen (metatables excepted: the ones in use are copies no script
  -- reaches, see setmetatable) and every upvalue recorded.
  local ups, n, stateless, tables = {}, 0, true, {}
  walk(roots, function(f)
    local info = dbg_getinfo(f, "S")
    if info.what == "C" then
      raw_error("a function made by the host when the script loaded is reached by a hook: " ..
        "it may keep state no move can put back; make it inside the hook (scripts keep " ..
        "no state between moves)", 0)
    end
    local i = 1
    while true do
      local name, x = dbg_getupvalue(f, i)
      if name == nil then break end
      if name ~= "_ENV" then stateless = false end
      ups[n + 1], ups[n + 2], ups[n + 3] = f, i, x
      n = n + 3
      if n > max_slots * 3 then
        raw_error("the hooks of this script reach more than " .. max_slots .. " upvalues " ..
          "(top-level locals captured by functions, counted once per function), each put " ..
          "back before every move; make fewer functions at load (closures made in a loop?)", 0)
      end
      i = i + 1
    end
  end, function(t, is_metatable)
    if not structural[t] and not is_metatable then tables[#tables + 1] = t end
  end, function(v)
    raw_error("a " .. raw_type(v) .. " made when the script loaded is reached by a hook; " ..
      "scripts keep no state between moves", 0)
  end)
  for i = 1, #tables do freeze_table(tables[i]) end
  ups.n = n
  return ups, stateless
end

local function restore(ups)
  for i = 1, ups.n, 3 do
    dbg_setupvalue(ups[i], ups[i + 1], ups[i + 2])
  end
end

own(_ENV)
own(dbg_getmetatable(""))
own(originals)
own(owned)
own(frozen_of)
own(move_globals)
own(no_new_globals)
own(capture)
own(walk)
own(freeze_env)
own(freeze_table)
own(fail)
own(restore)

return move_globals, no_new_globals, capture, restore
