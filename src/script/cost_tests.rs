//! The differential cost test: calls of every library function the sandbox offers, with
//! arguments shaped to make them work hard (long texts, backtracking patterns, numerals
//! as text, metamethods), each in an endless loop until the budget stops it. Wall time per
//! charged instruction must stay within a fixed factor of a plain Lua loop's: no call may do
//! much more work than it is charged for.

use std::rc::Rc;
use std::time::{Duration, Instant};

use mlua::Function;

use super::{ScriptBudget, new_state};
use crate::rules::{BudgetStep, MoveLimits};

/// Instructions each case may spend.
const UNITS: u64 = 400_000;
/// How much slower per charged instruction than plain Lua a call may be. Generous: work
/// that escapes the meter makes a case tens to thousands of times slower.
const FACTOR: f64 = 30.0;

/// The processor time this thread has used (wall time where that cannot be read): a busy
/// machine that takes the processor away does not count.
fn cpu_time() -> Duration {
    super::super::raw::thread_cpu_time().unwrap_or_else(|| START.with(Instant::elapsed))
}

thread_local! {
    static START: Instant = Instant::now();
}

/// Processor time of `body` looped until `UNITS` instructions are spent, after `setup` (not
/// counted).
fn run(setup: &str, body: &str) -> Result<Duration, String> {
    let limits = MoveLimits {
        instructions: UNITS,
        wall_ms: 10_000,
        ..MoveLimits::DEFAULT
    };
    let budget = Rc::new(ScriptBudget::new(&limits));
    let (lua, _) = new_state(&budget, 256 << 20).map_err(|e| e.to_string())?;
    let code = format!("{setup}\nreturn function()\n  while true do\n    {body}\n  end\nend\n");
    let f: Function = lua
        .load(&code)
        .set_name("@cost.lua")
        .eval()
        .map_err(|e| format!("setup: {e}"))?;
    // The setup's work is not part of the measure: the count and the clock start afresh.
    budget.begin_step(BudgetStep::Move);
    budget.enter("cost", u64::MAX).map_err(|e| e.to_string())?;
    let started = cpu_time();
    let result = f.call::<()>(());
    let took = cpu_time().saturating_sub(started);
    budget.leave();
    match result {
        Err(e) if e.to_string().contains(&format!("shared budget of {UNITS}")) => Ok(took),
        Err(e) => Err(format!("stopped by something else: {e}")),
        Ok(()) => Err("the loop ended".to_string()),
    }
}

const LONG: &str = r#"
local spaces = "1" .. string.rep(" ", 100000)
local digits = string.rep("0", 100000) .. "1"
local a100k = string.rep("a", 100000)
local list = {}
for i = 1, 10000 do list[i] = "item" .. i end
local numbers = {}
for i = 1, 2000 do numbers[i] = (i * 7919) % 2003 end
local proxy = setmetatable({}, { __index = function(_, i) return i end })
local lying = setmetatable({}, { __len = function() return 10000 end, __index = function() return "x" end })
local named = setmetatable({}, { __tostring = function() return string.rep("t", 1000) end })
local keyed = {}
for i = 1, 1000 do keyed["k" .. i] = i end
local deep = list
for i = 1, 7 do deep = setmetatable({}, { __index = deep }) end
local deep_set = {}
for i = 1, 7 do deep_set = setmetatable({}, { __newindex = deep_set }) end
local math_names = { "abs", "acos", "asin", "atan", "ceil", "cos", "deg", "exp", "floor",
  "fmod", "log", "max", "min", "modf", "rad", "sin", "sqrt", "tan", "tointeger", "type", "ult",
  -- Lua 5.4's compatibility functions, which the sandbox keeps.
  "atan2", "cosh", "frexp", "ldexp", "log10", "pow", "sinh", "tanh" }
local function cmp(x, y) return x < y end
local Cmp = { __lt = function(x, y) return x.v < y.v end }
local boxed = {}
for i = 1, 500 do boxed[i] = setmetatable({ v = (i * 31) % 500 }, Cmp) end
"#;

/// (what, the loop's body) with [`LONG`] as setup.
const CASES: &[(&str, &str)] = &[
    (
        "find with backtracking",
        r#"a100k:sub(1, 5000):find(string.rep("a*", 8) .. "b")"#,
    ),
    (
        "find, plain, long needle",
        r#"a100k:find(string.rep("a", 5000) .. "b", 1, true)"#,
    ),
    ("find, no specials", r#"a100k:find("ab")"#),
    (
        "find with a long class",
        r#"a100k:sub(1, 3000):find("[" .. string.rep("b", 3000) .. "]")"#,
    ),
    ("find with %b", r#"string.rep("(", 20000):find("%b()")"#),
    ("find with start as text", r#"("x"):find("x", digits)"#),
    (
        "match with back-references",
        r#"a100k:sub(1, 3000):match("(a*)%1%1b")"#,
    ),
    (
        "match with a frontier",
        r#"a100k:sub(1, 3000):match("%f[" .. string.rep("b", 3000) .. "]x")"#,
    ),
    ("match with captures", r#"a100k:match("(a)(a)(a)()(a*)")"#),
    (
        "gmatch with a literal caret",
        r#"for _ in string.rep("^", 20000):gmatch("^^*x") do end"#,
    ),
    ("gmatch over words", r#"for _ in a100k:gmatch("a") do end"#),
    (
        "gsub with a function",
        r#"a100k:sub(1, 10000):gsub("", function() end)"#,
    ),
    (
        "gsub with a table",
        r#"a100k:sub(1, 10000):gsub(".", { a = "b" })"#,
    ),
    ("gsub with escapes", r#"a100k:gsub(".*", "%0%0%0%0")"#),
    ("gsub, empty matches", r#"a100k:gsub("", "x")"#),
    ("tonumber of spaces", "tonumber(spaces)"),
    ("tonumber with a base", "tonumber(spaces, 10)"),
    ("arithmetic on text", "local x = spaces + 0"),
    ("unary minus on text", "local x = -spaces"),
    ("math.abs of text", "math.abs(spaces)"),
    ("math.max of text", "math.max(spaces, spaces, spaces)"),
    ("math.floor of text", "math.floor(digits)"),
    ("string.rep", r#"string.rep("ab", 100000)"#),
    (
        "string.rep with count as text",
        r#"string.rep("x", digits)"#,
    ),
    ("string.rep of nothing", r#"string.rep("", 1000000)"#),
    ("string.format %d of text", r#"string.format("%d", spaces)"#),
    ("string.format %s", r#"string.format("%s%s", a100k, a100k)"#),
    ("string.format %q", r#"string.format("%q", a100k)"#),
    ("string.byte", "a100k:byte(1, 10000)"),
    ("string.char", "string.char(a100k:byte(1, 5000))"),
    ("string.upper", "a100k:upper()"),
    ("string.lower", "a100k:lower()"),
    ("string.reverse", "a100k:reverse()"),
    ("string.sub", "a100k:sub(2, -2)"),
    ("string.len", "a100k:len()"),
    ("table.concat", "table.concat(list, \",\")"),
    ("table.concat with __len and __index", "table.concat(lying)"),
    (
        "table.insert at the front",
        r#"table.insert(list, 1, "x") table.remove(list, 1)"#,
    ),
    ("table.move", "table.move(list, 1, 10000, 2)"),
    (
        "table.sort",
        "local t = { table.unpack(numbers) } table.sort(t)",
    ),
    (
        "table.sort with a comparator",
        "local t = { table.unpack(numbers) } table.sort(t, cmp)",
    ),
    (
        "table.sort with __lt",
        "local t = { table.unpack(boxed) } table.sort(t)",
    ),
    ("table.unpack", "table.unpack(list)"),
    ("select", "select(\"#\", table.unpack(list))"),
    ("tostring with __tostring", "tostring(named)"),
    ("pairs", "for k in pairs(keyed) do end"),
    ("next", "next(keyed)"),
    (
        "ipairs over __index",
        "for i in ipairs(proxy) do if i > 1000 then break end end",
    ),
    (
        "reads through the longest __index chain",
        "local v = deep[1]",
    ),
    (
        "writes through the longest __newindex chain",
        "deep_set[1] = nil",
    ),
    (
        "table.unpack over the longest __index chain",
        "table.unpack(deep, 1, 10000)",
    ),
    (
        "table.concat over the longest __index chain",
        "table.concat(deep, \",\", 1, 10000)",
    ),
    (
        "ipairs over the longest __index chain",
        "for i in ipairs(deep) do end",
    ),
    (
        "every math function given text",
        "for _, name in ipairs(math_names) do pcall(math[name], spaces, spaces) end",
    ),
    (
        "the base functions of constant work",
        "local a, b, c = type(list), rawequal(list, list), rawlen(list) \
         local d, e, f = rawget(keyed, \"k1\"), getmetatable(named), select(2, 1, 2) \
         assert(true) pcall(function() error(\"x\") end) xpcall(error, tostring, \"x\") \
         setmetatable({}, Cmp) unpack(numbers, 1, 10) table.pack(1, 2, 3)",
    ),
];

/// Functions whose work is one step whatever their arguments, not worth a case of their
/// own: they are named in the base functions' case above.
#[test]
fn the_cost_test_calls_every_library_function_the_sandbox_offers() {
    let budget = Rc::new(ScriptBudget::new(&MoveLimits::DEFAULT));
    let (lua, _) = new_state(&budget, 1 << 20).unwrap_or_else(|e| panic!("{e}"));
    let mut offered = Vec::new();
    let globals = lua.globals();
    for pair in globals.pairs::<String, mlua::Value>() {
        let (name, value) = pair.unwrap_or_else(|e| panic!("{e}"));
        match value {
            mlua::Value::Function(_) => offered.push(name),
            // The libraries are read-only proxies: their functions are behind `__index`.
            mlua::Value::Table(proxy) => {
                let library = proxy
                    .metatable()
                    .and_then(|m| m.raw_get::<mlua::Table>("__index").ok())
                    .unwrap_or(proxy);
                for pair in library.pairs::<String, mlua::Value>() {
                    let (f, value) = pair.unwrap_or_else(|e| panic!("{e}"));
                    if matches!(value, mlua::Value::Function(_)) {
                        offered.push(format!("{name}.{f}"));
                    }
                }
            }
            _ => {}
        }
    }
    let text: String = CASES
        .iter()
        .map(|(_, body)| *body)
        .chain([LONG])
        .collect::<Vec<_>>()
        .join("\n");
    let named = |f: &str| {
        let short = f.rsplit('.').next().unwrap_or(f);
        text.contains(&format!("{f}("))
            || text.contains(&format!(":{short}("))
            || text.contains(&format!("\"{short}\""))
            || (!f.contains('.') && text.contains(&format!("{short}(")))
    };
    let missing: Vec<&String> = offered.iter().filter(|f| !named(f)).collect();
    assert!(
        offered.len() > 40,
        "the sandbox's functions were found: {offered:?}"
    );
    assert!(
        missing.is_empty(),
        "library functions no cost case calls: {missing:?}"
    );
}

#[test]
fn no_library_call_does_much_more_work_than_it_is_charged_for() {
    let mut failures = Vec::new();
    let mut report = Vec::new();
    for (what, body) in CASES {
        // Each case beside its own reference (plain instructions), runs of the two taken
        // in turn and the best of three of each: the machine may be busy, and how busy
        // may change from one case to the next (other tests run beside this one).
        let (mut bases, mut times) = (Vec::new(), Vec::new());
        for _ in 0..3 {
            bases.extend(run("local x = 0", "x = x + 1").ok());
            times.push(run(LONG, body));
        }
        let Some(base) = bases.iter().min().copied() else {
            failures.push(format!(
                "{what}: the plain loop was not stopped by the budget"
            ));
            continue;
        };
        let bound = base.mul_f64(FACTOR) + Duration::from_millis(5);
        let best = times.iter().filter_map(|t| t.as_ref().ok()).min().copied();
        match (best, times.iter().find_map(|t| t.as_ref().err())) {
            (_, Some(e)) => failures.push(format!("{what}: {e}")),
            (Some(t), None) => {
                report.push(format!(
                    "{what}: {:.1}×",
                    t.as_secs_f64() / base.as_secs_f64()
                ));
                if t > bound {
                    failures.push(format!(
                        "{what}: {t:?} for {UNITS} instructions, more than {FACTOR}× a plain loop's {base:?}"
                    ));
                }
            }
            (None, None) => failures.push(format!("{what}: no run")),
        }
    }
    println!("{}", report.join("\n"));
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
