//! The differential test of errors: calls of the sandbox's library functions that Lua
//! refuses, run as script code in a sandboxed state and in a plain Lua 5.4 state, must
//! fail with the same message (argument numbers in method calls, `got no value` against
//! `got nil`, the conversions `string.format` refuses).

use std::rc::Rc;

use mlua::Lua;

use super::{ScriptBudget, new_state};
use crate::rules::MoveLimits;

/// Calls Lua refuses, each a statement of its own.
const CALLS: &[&str] = &[
    "string.rep()",
    "string.rep(nil, 2)",
    "string.rep('x')",
    "string.rep('x', nil)",
    "string.rep('x', {})",
    "string.rep('x', 1.5)",
    "string.rep('x', 2, {})",
    "('x'):rep()",
    "('x'):rep({})",
    "('x'):rep(2, {})",
    "string.sub()",
    "string.sub('x', {})",
    "('x'):sub({})",
    "string.byte('x', {})",
    "('x'):byte({})",
    "string.upper()",
    "string.upper({})",
    "string.len()",
    "string.reverse(nil)",
    "string.find()",
    "string.find('x')",
    "string.find('x', nil)",
    "('x'):find()",
    "('x'):find({})",
    "('x'):find('x', {})",
    "string.match('x', '[')",
    "('x'):match('(')",
    "('x'):match()",
    "string.gmatch()",
    "('x'):gmatch()",
    "string.gsub('x')",
    "string.gsub('x', 'x')",
    "('x'):gsub('x')",
    "('x'):gsub('x', true)",
    "('x'):gsub('x', 'y', {})",
    "('x'):gsub('(', 'y')",
    "('x'):gsub('x', '%2')",
    "string.format()",
    "string.format('%d')",
    "string.format('%d', 'x')",
    "string.format('%d', 1.5)",
    "string.format('%5%')",
    "string.format('%-%')",
    "string.format('%y', 1)",
    "string.format('%10.3q', 'x')",
    "('%d'):format()",
    "('%d'):format({})",
    "string.char(-1)",
    "string.char({})",
    "table.concat()",
    "table.concat({}, {})",
    "table.concat({ {} })",
    "table.insert()",
    "table.insert({}, 1, 2, 3)",
    "table.insert({}, 5, 1)",
    "table.insert({}, 'x', 1)",
    "table.remove()",
    "table.remove({}, 5)",
    "table.unpack()",
    "table.unpack({}, 'x')",
    "table.move()",
    "table.move({}, 1)",
    "table.sort()",
    "table.sort({}, 1)",
    "setmetatable()",
    "setmetatable(1, {})",
    "setmetatable({}, 1)",
    "tonumber()",
    "tonumber('10', 99)",
    "tonumber(10, 16)",
    "math.floor()",
    "math.floor('x')",
    "math.max()",
    "math.tointeger()",
    "select()",
    "select(0, 1)",
    "rawget()",
    "rawlen(1)",
    "pairs()",
    "next()",
    "next({}, 'missing')",
    "ipairs()",
];

fn run(lua: &Lua, call: &str) -> String {
    match lua.load(call).set_name("@t").exec() {
        Ok(()) => "no error".to_string(),
        Err(e) => {
            let text = e.to_string();
            let text = text.split("\nstack traceback").next().unwrap_or(&text);
            text.trim_start_matches("runtime error: ").to_string()
        }
    }
}

#[test]
fn library_errors_are_lua_s_word_for_word() {
    let budget = Rc::new(ScriptBudget::new(&MoveLimits {
        instructions: u64::MAX,
        wall_ms: u32::MAX,
        ..MoveLimits::DEFAULT
    }));
    let (ours, _) = new_state(&budget, 64 << 20).unwrap_or_else(|e| panic!("{e}"));
    let theirs = Lua::new();
    let mut failures = Vec::new();
    for call in CALLS {
        let (a, b) = (run(&ours, call), run(&theirs, call));
        if a != b {
            failures.push(format!("{call}\n  ours   {a}\n  Lua's  {b}"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} differ:\n{}",
        failures.len(),
        CALLS.len(),
        failures.join("\n")
    );
}
