//! The Lua host: runs the scripts packs name (`script:` on abilities and token types)
//! through the rules core's [`Hooks`] seam.
//!
//! Each pack with scripts gets its own sandboxed Lua state (so packs cannot see each
//! other's globals and each has its own memory cap); each script file gets its own
//! environment in it. Scripts are compiled once, when the host is made. A host is cheap to
//! make and not shareable between threads: every worker thread makes its own with
//! [`ScriptHost::new`] from the same [`Catalog`].
//!
//! Must not: change the game except through `rules::Effects`, or let a script reach files,
//! the clock, randomness outside the game's generator, or another pack's state.
//!
//! Loading a content set's scripts is bounded: script sources are capped per file, per
//! pack and per set when read (in `content::compile`); one budget (`LOAD_INSTRUCTIONS` and
//! the clock `LOAD_PACK`) covers all the top levels of a pack, parsing included, within one
//! clock for the whole set (`LOAD_SET`). *Why:* a LAN host or an installed archive may send
//! a pack written to make loading hang.

pub mod api;
mod budget;
mod ctx;
mod diagnose;
mod fast;
mod host;
pub mod lint;
pub mod luals;
mod memo;
pub mod memory;
mod message;
mod pattern;
mod place;
// The one room of `unsafe` code: every call into Lua's C API, behind a safe API.
#[allow(unsafe_code)]
mod raw;
mod replay;
mod run;
mod sandbox;
pub mod threads;

use std::path::Path;
use std::rc::Rc;

use mlua::Value;

use crate::content::diagnostic::Diagnostic;
use crate::content::yaml::Loc;
use crate::content::{self, LoadOptions, Loaded};
use budget::ScriptBudget;
pub use diagnose::dot_calls;
pub use host::ScriptHost;

/// The hooks a script may define (`evaluate` only in a pack's `ai.lua`).
const HOOK_NAMES: &[&str] = &[
    "on_place",
    "between_turns",
    "income",
    "on_destroyed",
    "evaluate",
];

/// Instruction budget per hook call when a pack gives none.
const DEFAULT_INSTRUCTIONS: u64 = content::discover::DEFAULT_SCRIPT_INSTRUCTIONS;
/// Memory cap per pack when a pack gives none, in bytes.
const DEFAULT_MEMORY: usize = 16 * 1024 * 1024;

/// Instructions all top levels of one pack's scripts may run together when loading (and
/// freezing what they built), whatever the pack's `scripts.instructions`.
pub const LOAD_INSTRUCTIONS: u64 = 50_000_000;
/// Wall time loading one pack's scripts may take (parsing and every top level).
pub const LOAD_PACK: std::time::Duration = std::time::Duration::from_millis(1_000);
/// Wall time loading the scripts of every pack of a content set may take together.
pub const LOAD_SET: std::time::Duration = std::time::Duration::from_millis(5_000);

/// The native stack a hook call needs free before it starts; with less, the call runs on
/// a fresh stack segment of [`STACK_SEGMENT`] bytes. One hook level (Lua's own limit of
/// 200 nested C calls in a state, plus the host's frames) fits well inside it, so hooks
/// nested to `rules.limits.hook_depth` across any number of packs never overflow the
/// stack of whichever thread runs them.
const STACK_RED_ZONE: usize = 2 * 1024 * 1024;
/// The size of a stack segment a deep hook call continues on.
const STACK_SEGMENT: usize = 8 * 1024 * 1024;

/// The stack size given to every thread Tokensmith starts that may run hooks (the AI's
/// thinking, simulation workers, reloads); deeper calls continue on segments anyway.
pub const THREAD_STACK: usize = 16 * 1024 * 1024;

/// The names of ctx's functions (`ctx:name(…)`), sorted, for tools and tests.
#[must_use]
pub fn ctx_functions() -> Vec<&'static str> {
    let mut names: Vec<&'static str> = api::ctx_names().collect();
    names.sort_unstable();
    names
}

/// Load packs and compile their scripts: [`content::load`] plus every script problem as a
/// diagnostic. The catalog is given only when both are clean.
#[must_use]
pub fn load(options: &LoadOptions) -> Loaded {
    let mut loaded = content::load(options);
    let Some(catalog) = &loaded.catalog else {
        return loaded;
    };
    if catalog.scripts().is_empty() {
        return loaded;
    }
    for script in catalog.scripts() {
        for (line, column, name) in dot_calls(&script.source) {
            loaded.diagnostics.push(Diagnostic::warning(
                Path::new(&script.file),
                Loc { line, column },
                format!(
                    "`ctx.{name}(…)` calls ctx's function without ctx, so every argument \
                     shifts by one: write `ctx:{name}(…)` with a colon"
                ),
            ));
        }
    }
    if let Err(problems) = ScriptHost::new(catalog) {
        loaded.diagnostics.extend(problems);
        loaded.catalog = None;
    } else {
        loaded
            .diagnostics
            .extend(lint::diagnostics(catalog.scripts()));
    }
    loaded
        .diagnostics
        .sort_by(|a, b| (&a.path, a.line, a.column).cmp(&(&b.path, b.line, b.column)));
    loaded
}

/// Every name a script finds in the sandbox: the base functions and values, then
/// `string.NAME`, `table.NAME` and `math.NAME`, sorted. What docs/lua.md lists is checked
/// against it by a test.
#[must_use]
pub fn sandbox_names() -> Vec<String> {
    let budget = Rc::new(ScriptBudget::new(&crate::rules::MoveLimits::DEFAULT));
    let Ok((lua, _)) = sandbox::new_state(&budget, DEFAULT_MEMORY) else {
        return Vec::new();
    };
    let mut names = Vec::new();
    for pair in lua.globals().pairs::<String, Value>() {
        let Ok((name, value)) = pair else { continue };
        match (&value, name.as_str()) {
            (Value::Table(proxy), "string" | "table" | "math") => {
                // The read-only library reads through to the real one.
                let library = proxy
                    .metatable()
                    .and_then(|m| m.raw_get::<mlua::Table>("__index").ok());
                let members = library.iter().flat_map(|t| t.pairs::<String, Value>());
                for (member, _) in members.flatten() {
                    names.push(format!("{name}.{member}"));
                }
            }
            _ => names.push(name),
        }
    }
    names.sort();
    names
}
