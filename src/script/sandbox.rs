//! One sandboxed Lua state: only `string`, `table`, `math` (without `random`) and the safe
//! base functions; an instruction budget per hook call that `pcall` cannot swallow; a
//! memory cap; deterministic iteration, sorting and printing (see `prelude.lua`).

use std::cell::Cell;
use std::rc::Rc;

use mlua::{HookTriggers, Lua, LuaOptions, StdLib, Table, VmState};

/// How often the budget hook runs, in VM instructions.
pub(super) const HOOK_EVERY: u32 = 1_000;

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

/// The instruction budget of the hook call under way.
#[derive(Debug, Default)]
pub(super) struct Budget {
    /// Instructions allowed per hook call.
    pub limit: Cell<u64>,
    /// Instructions counted in this call (in steps of [`HOOK_EVERY`]).
    pub used: Cell<u64>,
    /// Set once the budget is exceeded; stays set until the next call starts, so no
    /// `pcall` inside the script can catch the overrun.
    pub exceeded: Cell<bool>,
    /// The hook being run (`on_place`…), for the overrun message.
    pub hook: Cell<&'static str>,
    /// Hook calls under way in this state (hooks can nest through `on_destroyed`).
    depth: Cell<u32>,
    /// When the outermost call started: a wall-clock backstop against library calls the
    /// instruction count cannot see.
    started: Cell<Option<std::time::Instant>>,
}

/// Wall time a hook call may take whatever its instruction count: a backstop for work the
/// count cannot see (string concatenation with `..` on huge strings), far beyond what the
/// largest instruction budget needs, so it never decides an ordinary game.
pub(super) const WALL_LIMIT: std::time::Duration = std::time::Duration::from_millis(1000);

impl Budget {
    /// A hook call starts: the outermost one starts a fresh count; nested ones share it,
    /// so a loop that keeps triggering nested hooks still runs out.
    pub fn enter(&self, hook: &'static str) {
        if self.depth.get() == 0 {
            self.used.set(0);
            self.exceeded.set(false);
            self.hook.set(hook);
            // The clock starts at the first budget tick: a short hook never reads it.
            self.started.set(None);
        }
        self.depth.set(self.depth.get() + 1);
    }

    /// Count `cost` instructions of work done inside one library call; an error when the
    /// budget is spent.
    pub fn charge(&self, cost: f64) -> mlua::Result<()> {
        if cost.is_nan() || cost <= 0.0 {
            return Ok(());
        }
        // Float to integer: saturating, which is what a huge cost should do.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let cost = cost.min(1.0e15) as u64;
        let used = self.used.get().saturating_add(cost);
        self.used.set(used);
        if used > self.limit.get() {
            self.exceeded.set(true);
            return Err(mlua::Error::RuntimeError(format!(
                "the instruction budget of {} per hook call is spent in {} (large string or table work)",
                self.limit.get(),
                self.hook.get()
            )));
        }
        Ok(())
    }

    /// Whether a hook call is under way in this state.
    pub fn busy(&self) -> bool {
        self.depth.get() > 0
    }

    /// A hook call ends.
    pub fn leave(&self) {
        self.depth.set(self.depth.get().saturating_sub(1));
    }
}

/// A fresh sandboxed state with `budget` enforced and `memory` bytes at most, and the
/// function that freezes a script's globals once its top level has run.
pub(super) fn new_state(budget: &Rc<Budget>, memory: usize) -> mlua::Result<(Lua, Freezer)> {
    let lua = Lua::new_with(
        StdLib::STRING | StdLib::TABLE | StdLib::MATH,
        LuaOptions::default(),
    )?;
    let globals = lua.globals();
    for name in REMOVED_GLOBALS {
        globals.raw_set(*name, mlua::Value::Nil)?;
    }
    let string: Table = globals.get("string")?;
    string.raw_set("dump", mlua::Value::Nil)?;
    let math: Table = globals.get("math")?;
    math.raw_set("random", mlua::Value::Nil)?;
    math.raw_set("randomseed", mlua::Value::Nil)?;

    let flag = Rc::clone(budget);
    let exceeded = lua.create_function(move |_, ()| Ok(flag.exceeded.get()))?;
    let account = Rc::clone(budget);
    let charge = lua.create_function(move |_, cost: f64| {
        account.charge(cost)?;
        Ok(())
    })?;
    let (move_globals, refuse): (mlua::Function, mlua::Function) = lua
        .load(include_str!("prelude.lua"))
        .set_name("=sandbox")
        .call((exceeded, charge))?;
    let freeze = Freezer {
        move_globals,
        refuse,
    };

    install_hook(&lua, budget)?;
    lua.set_memory_limit(memory)?;
    Ok((lua, freeze))
}

/// (Re)install the budget hook. Installing it also restarts Lua's own instruction
/// countdown, so each outermost hook call is counted from zero exactly, whatever ran
/// before it in this state.
pub(super) fn install_hook(lua: &Lua, budget: &Rc<Budget>) -> mlua::Result<()> {
    let counter = Rc::clone(budget);
    lua.set_hook(
        HookTriggers::new().every_nth_instruction(HOOK_EVERY),
        move |_, debug| {
            let used = counter.used.get() + u64::from(HOOK_EVERY);
            counter.used.set(used);
            let late = match counter.started.get() {
                Some(t) => t.elapsed() > WALL_LIMIT,
                None => {
                    counter.started.set(Some(std::time::Instant::now()));
                    false
                }
            };
            if counter.exceeded.get() || used > counter.limit.get() || late {
                counter.exceeded.set(true);
                let place = debug
                    .source()
                    .source
                    .map(|s| s.trim_start_matches(['@', '=']).to_string())
                    .unwrap_or_default();
                let line = debug.current_line().unwrap_or(0);
                let what = if late && used <= counter.limit.get() {
                    format!("ran for more than {} ms", WALL_LIMIT.as_millis())
                } else {
                    format!(
                        "spent the instruction budget of {} per hook call",
                        counter.limit.get()
                    )
                };
                return Err(mlua::Error::RuntimeError(format!(
                    "{place}:{line}: {} {what}; is there an endless loop?",
                    counter.hook.get()
                )));
            }
            Ok(VmState::Continue)
        },
    )?;
    Ok(())
}

/// Freezes a script's globals once its top level has run: hook calls keep no state.
pub(super) struct Freezer {
    move_globals: mlua::Function,
    refuse: mlua::Function,
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
