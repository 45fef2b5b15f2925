//! One sandboxed Lua state: only `string`, `table`, `math` (without `random`) and the safe
//! base functions; an instruction budget per hook call that `pcall` cannot swallow; a
//! memory cap; deterministic iteration, sorting and printing (see `prelude.lua`). The
//! budget itself is `budget.rs`'s.
//!
//! The state is deterministic (sorted `pairs`/`next`, a stable `table.sort`, no addresses,
//! NaN printed one way) and read-only; a script's globals are frozen after its top level;
//! the prelude's `capture`/`restore` save and put back what hooks can reach. The debug
//! library is loaded only for the prelude and removed before any pack script runs. Garbage
//! collection is generational (the incremental collector falls behind the pattern of a
//! move: a little garbage each time state is put back). `__index`/`__newindex` chains are at
//! most 8 tables (`setmetatable` refuses longer ones), since Lua follows them inside one
//! instruction.

use std::rc::Rc;

use mlua::{HookTriggers, Lua, Table, VmState};

use super::budget::{HOOK_EVERY, Overrun, ScriptBudget};
use super::raw::watchdog;

/// Base functions removed from the sandbox: they reach files, load code or depend on when
/// memory is collected.
const REMOVED_GLOBALS: &[&str] = &[
    "dofile",
    "loadfile",
    "load",
    "loadstring",
    "require",
    "collectgarbage",
    "print",
    "module",
    "package",
    "io",
    "os",
    "debug",
    "coroutine",
    "utf8",
    "warn",
];

/// A fresh sandboxed state with `budget` enforced and `memory` bytes at most, and the
/// prelude's functions the host calls (freezing globals, capturing and restoring a
/// script's state).
pub(super) fn new_state(budget: &Rc<ScriptBudget>, memory: usize) -> mlua::Result<(Lua, Freezer)> {
    // The five functions of the debug library the prelude captures into locals no script
    // can reach, to find and restore a script's state between moves.
    let (lua, inspect) = super::raw::new_lua_with_inspect()?;
    let globals = lua.globals();
    for name in REMOVED_GLOBALS {
        globals.raw_set(*name, mlua::Value::Nil)?;
    }
    let string: Table = globals.get("string")?;
    for name in ["dump", "pack", "unpack", "packsize"] {
        string.raw_set(name, mlua::Value::Nil)?;
    }
    // The pattern functions, metered (before the prelude, which builds on them).
    let meter = Rc::clone(budget);
    let charge: Rc<dyn Fn(f64) -> Result<(), String>> =
        Rc::new(move |cost| meter.charge(cost).map_err(Overrun::describe));
    super::pattern::install(&lua, &string, &charge, memory)?;
    let math: Table = globals.get("math")?;
    math.raw_set("random", mlua::Value::Nil)?;
    math.raw_set("randomseed", mlua::Value::Nil)?;

    let flag = Rc::clone(budget);
    // An error a script caught: whether it must be raised again (a spent budget), and
    // the message of a host error object, without the host's wording and traceback.
    let caught = lua.create_function(move |lua, e: mlua::Value| {
        flag.note_caught(is_memory_value(&e));
        let text = match &e {
            mlua::Value::Error(error) => Some(lua.create_string(error_text(&error.to_string()))?),
            _ => None,
        };
        Ok((flag.exceeded().is_some(), text))
    })?;
    let account = Rc::clone(budget);
    let charge = lua.create_function(move |lua, (cost, what): (f64, Option<String>)| {
        account.charge(cost).map_err(|o| {
            let place = super::place::script_place(lua);
            let what = what.map(|w| format!("{w}: ")).unwrap_or_default();
            mlua::Error::RuntimeError(format!("{place}{what}{}", o.describe()))
        })
    })?;
    let largest = i64::try_from(memory).unwrap_or(i64::MAX);
    let (move_globals, refuse, capture, restore): (
        mlua::Function,
        mlua::Function,
        mlua::Function,
        mlua::Function,
    ) = lua
        .load(include_str!("prelude.lua"))
        .set_name("=sandbox")
        .call((
            caught,
            charge,
            largest,
            inspect.getupvalue,
            inspect.setupvalue,
            inspect.getmetatable,
            inspect.setmetatable,
            inspect.getinfo,
        ))?;
    let freeze = Freezer {
        move_globals,
        refuse,
        capture,
        restore,
    };

    // Generational collection: every move leaves a little garbage while putting script
    // state back writes the same old tables again, which keeps the incremental collector
    // re-marking them; it falls ever further behind until each allocation meets the
    // memory cap and runs a full collection (milliseconds a move). Young collections
    // keep up with that pattern at any length of play.
    lua.gc_set_mode(mlua::prelude::LuaGcMode::Generational(Default::default()));
    install_hook(&lua, budget)?;
    lua.set_memory_limit(memory)?;
    Ok((lua, freeze))
}

/// The message of a host error's text: what comes before its traceback, after
/// mlua's "runtime error: ".
fn error_text(text: &str) -> &str {
    let text = text
        .split_once("\nstack traceback:")
        .map_or(text, |(message, _)| message);
    text.split_once("runtime error: ")
        .map_or(text, |(_, message)| message)
}

/// Whether an error value a script caught is running out of memory: Lua's own (its
/// message, which Lua keeps for that) or a host call's.
fn is_memory_value(e: &mlua::Value) -> bool {
    match e {
        mlua::Value::String(s) => s.as_bytes().as_ref() == b"not enough memory",
        mlua::Value::Error(e) => super::message::is_memory(e),
        _ => false,
    }
}

/// (Re)install the budget hook. Installing it also restarts Lua's own instruction
/// countdown, so each outermost hook call is counted from zero exactly, whatever ran
/// before it in this state.
pub(super) fn install_hook(lua: &Lua, budget: &Rc<ScriptBudget>) -> mlua::Result<()> {
    let counter = Rc::clone(budget);
    lua.set_hook(
        HookTriggers::new().every_nth_instruction(HOOK_EVERY),
        move |_, debug| match charge_tick(&counter) {
            Ok(()) => Ok(VmState::Continue),
            Err(o) => {
                let place = debug
                    .source()
                    .source
                    .map(|s| s.trim_start_matches(['@', '=']).to_string())
                    .unwrap_or_default();
                let line = debug.current_line().unwrap_or(0);
                Err(mlua::Error::RuntimeError(format!(
                    "{place}:{line}: {}",
                    o.describe()
                )))
            }
        },
    )?;
    Ok(())
}

/// The instruction hook's charge: [`HOOK_EVERY`] instructions, or, when the watchdog
/// made the hook fire early because the thread is past its deadline, a look at the clock
/// (and the countdown set back to its interval).
fn charge_tick(budget: &ScriptBudget) -> Result<(), Overrun> {
    if watchdog::take_forced(i32::try_from(HOOK_EVERY).unwrap_or(i32::MAX)) {
        budget.overdue().map_or(Ok(()), Err)
    } else {
        budget.charge_whole(u64::from(HOOK_EVERY))
    }
}

/// The prelude's functions the host calls on a state.
pub(super) struct Freezer {
    move_globals: mlua::Function,
    refuse: mlua::Function,
    capture: mlua::Function,
    restore: mlua::Function,
}

impl Freezer {
    /// Make `env` read-only: its globals move to a table it reads through, and setting a
    /// new global is an error.
    pub fn freeze(&self, lua: &Lua, env: &Table) -> mlua::Result<()> {
        let frozen: Table = self.move_globals.call((env, lua.globals()))?;
        let meta = lua.create_table()?;
        meta.raw_set("__index", frozen)?;
        meta.raw_set("__newindex", &self.refuse)?;
        meta.raw_set("__metatable", false)?;
        env.set_metatable(Some(meta))?;
        Ok(())
    }

    /// Everything a loaded script can change later (the upvalues of its functions, the
    /// tables they reach, whatever it made its `_ENV`), recorded as it is now, and whether
    /// that is nothing at all (its functions capture only `_ENV` and reach no table a
    /// script can write). Tables a script set as `_ENV` are frozen like its globals.
    pub fn capture(&self, hooks: &Table, env: &Table) -> mlua::Result<(Table, bool)> {
        self.capture.call((hooks, env))
    }

    /// Put everything [`Freezer::capture`] recorded back as it was.
    pub fn restore(&self, snapshot: &Table) -> mlua::Result<()> {
        self.restore.call(snapshot)
    }
}

/// A new environment for one script: its own globals, reading the sandbox's.
pub(super) fn script_env(lua: &Lua) -> mlua::Result<Table> {
    let env = lua.create_table()?;
    let meta = lua.create_table()?;
    meta.raw_set("__index", lua.globals())?;
    meta.raw_set("__metatable", false)?;
    env.set_metatable(Some(meta))?;
    Ok(env)
}

#[cfg(test)]
#[path = "cost_tests.rs"]
mod cost_tests;

#[cfg(test)]
#[path = "compat_tests.rs"]
mod compat_tests;
