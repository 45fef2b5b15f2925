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

mod ctx;
mod sandbox;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use mlua::{Function, Lua, Value};

use crate::content::diagnostic::Diagnostic;
use crate::content::yaml::Loc;
use crate::content::{self, LoadOptions, Loaded};
use crate::rules::{Catalog, Cell, Effects, GameView, HookError, Hooks, ScriptId, Token, nearest};
use sandbox::Budget;

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

/// One compiled script: its hooks and the state it runs in.
struct Script {
    state: usize,
    /// `pack/path`, as errors name it.
    name: String,
    hooks: [Option<Function>; 5],
}

/// One pack's Lua state with its `ctx` table.
struct PackState {
    lua: Lua,
    freeze: sandbox::Freezer,
    ctx: ctx::CtxTable,
    slot: Rc<ctx::Slot>,
    budget: Rc<Budget>,
}

/// Runs a catalog's scripts. Implements [`Hooks`].
pub struct ScriptHost {
    states: Vec<PackState>,
    scripts: Vec<Option<Script>>,
}

impl std::fmt::Debug for ScriptHost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScriptHost")
            .field("states", &self.states.len())
            .field("scripts", &self.scripts.len())
            .finish()
    }
}

/// Which hook, by index into [`Script::hooks`].
#[derive(Clone, Copy)]
enum Hook {
    OnPlace = 0,
    BetweenTurns = 1,
    Income = 2,
    OnDestroyed = 3,
    Evaluate = 4,
}

impl Hook {
    fn name(self) -> &'static str {
        HOOK_NAMES[self as usize]
    }
}

impl ScriptHost {
    /// Compile every script of `catalog`. Problems (a missing file, a syntax error, a
    /// script that does not return a table of hooks) come back as diagnostics with the
    /// script's path and line; a host is returned only when there are none.
    pub fn new(catalog: &Catalog) -> Result<ScriptHost, Vec<Diagnostic>> {
        let mut host = ScriptHost {
            states: Vec::new(),
            scripts: Vec::new(),
        };
        let mut problems = Vec::new();
        let mut state_of_pack: HashMap<&str, usize> = HashMap::new();
        for def in &catalog.scripts {
            let path = PathBuf::from(&def.file);
            let state = match state_of_pack.get(def.pack.as_str()) {
                Some(&s) => s,
                None => {
                    let limits = catalog.packs.iter().find(|p| p.id == def.pack);
                    let memory = limits.map_or(DEFAULT_MEMORY, |p| p.script_memory);
                    let instructions =
                        limits.map_or(DEFAULT_INSTRUCTIONS, |p| p.script_instructions);
                    match PackState::new(memory, instructions) {
                        Ok(s) => {
                            host.states.push(s);
                            state_of_pack.insert(def.pack.as_str(), host.states.len() - 1);
                            host.states.len() - 1
                        }
                        Err(e) => {
                            problems.push(Diagnostic::error(
                                &path,
                                Loc::default(),
                                format!("cannot start the script sandbox: {}", message(&e)),
                            ));
                            host.scripts.push(None);
                            continue;
                        }
                    }
                }
            };
            let name = format!("{}/{}", def.pack, def.path);
            match host.states[state].compile(&path, &name, &def.source) {
                Ok(hooks) => host.scripts.push(Some(Script { state, name, hooks })),
                Err(d) => {
                    problems.extend(d);
                    host.scripts.push(None);
                }
            }
        }
        problems.extend(host.missing_hooks(catalog));
        if problems.is_empty() {
            Ok(host)
        } else {
            Err(problems)
        }
    }

    /// Abilities whose script has no `on_place`, token types whose script has no token
    /// hook: reported where the ability or token type is defined.
    fn missing_hooks(&self, catalog: &Catalog) -> Vec<Diagnostic> {
        let mut problems = Vec::new();
        let has = |id: ScriptId, hooks: &[Hook]| {
            self.scripts
                .get(id.index())
                .and_then(Option::as_ref)
                .is_none_or(|s| hooks.iter().any(|&h| s.hooks[h as usize].is_some()))
        };
        let at = |meta: &crate::rules::Meta| {
            (
                PathBuf::from(&meta.origin.file),
                Loc {
                    line: meta.origin.line,
                    column: meta.origin.column,
                },
            )
        };
        for a in &catalog.abilities {
            if let crate::rules::Effect::Script(id) = a.effect
                && !has(id, &[Hook::OnPlace])
            {
                let (path, loc) = at(&a.meta);
                problems.push(Diagnostic::error(
                    &path,
                    loc,
                    format!(
                        "ability '{}' runs {}, which returns no on_place hook",
                        a.meta.id,
                        self.script_name(id)
                    ),
                ));
            }
        }
        for p in &catalog.packs {
            if let Some(id) = p.ai_script
                && !has(id, &[Hook::Evaluate])
            {
                problems.push(Diagnostic::error(
                    &PathBuf::from(
                        catalog
                            .scripts
                            .get(id.index())
                            .map_or_else(String::new, |s| s.file.clone()),
                    ),
                    Loc { line: 1, column: 1 },
                    format!(
                        "{} must return {{ evaluate = function(ctx, seat) ... end }}",
                        self.script_name(id)
                    ),
                ));
            }
        }
        for t in &catalog.token_types {
            if let Some(id) = t.script
                && !has(id, &[Hook::BetweenTurns, Hook::Income, Hook::OnDestroyed])
            {
                let (path, loc) = at(&t.meta);
                problems.push(Diagnostic::error(
                    &path,
                    loc,
                    format!(
                        "token type '{}' runs {}, which returns none of the token hooks (between_turns, income, on_destroyed)",
                        t.meta.id,
                        self.script_name(id)
                    ),
                ));
            }
        }
        problems
    }

    /// Run `hook` of `script` with `ctx` pointing at `enter`'s target.
    fn call<A: mlua::IntoLuaMulti, R: mlua::FromLuaMulti>(
        &self,
        script: ScriptId,
        hook: Hook,
        setup: impl FnOnce(&PackState) -> mlua::Result<A>,
        enter: impl FnOnce(&ctx::Slot) -> ctx::Entered<'_>,
    ) -> Result<Option<R>, HookError> {
        let Some(Some(s)) = self.scripts.get(script.index()) else {
            return Err(HookError::new(format!(
                "script #{} is not loaded",
                script.0
            )));
        };
        let Some(function) = &s.hooks[hook as usize] else {
            return Ok(None);
        };
        let state = &self.states[s.state];
        // A hook nested in another of the same pack (an on_destroyed inside ctx:damage)
        // shares the ctx table: give the outer call its fields back afterwards.
        let saved = if state.budget.busy() {
            state.ctx.save_fields().ok()
        } else {
            None
        };
        let outermost = !state.budget.busy();
        let _entered = enter(&state.slot);
        if outermost && let Err(e) = sandbox::install_hook(&state.lua, &state.budget) {
            return Err(HookError::new(format!("{}: {}", s.name, message(&e))));
        }
        state.budget.enter(hook.name());
        let result = setup(state).and_then(|args| function.call::<R>(args));
        state.budget.leave();
        // A bad ctx call the script caught still fails the hook (read-only hooks too).
        let result = match (result, state.slot.take_failure()) {
            (Ok(_), Some(failure)) => Err(mlua::Error::RuntimeError(failure)),
            (result, _) => result,
        };
        if let Some(fields) = saved {
            let _ = state.ctx.restore_fields(fields);
        }
        result.map(Some).map_err(|e| {
            let text = message(&e);
            HookError::new(if text.starts_with(&s.name) {
                text
            } else {
                format!("{}: in {}: {text}", s.name, hook.name())
            })
        })
    }
}

impl PackState {
    fn new(memory: usize, instructions: u64) -> mlua::Result<PackState> {
        let budget = Rc::new(Budget::default());
        budget.limit.set(instructions);
        let (lua, freeze) = sandbox::new_state(&budget, memory)?;
        let slot = Rc::new(ctx::Slot::default());
        let ctx = ctx::CtxTable::new(&lua, ctx::make(&lua, &slot)?)?;
        lua.set_app_data(Rc::clone(&slot));
        Ok(PackState {
            lua,
            freeze,
            ctx,
            slot,
            budget,
        })
    }

    /// Load one script file and check it returns a table of hook functions.
    fn compile(
        &self,
        path: &Path,
        name: &str,
        source: &str,
    ) -> Result<[Option<Function>; 5], Vec<Diagnostic>> {
        let fail = |loc: Loc, msg: String| vec![Diagnostic::error(path, loc, msg)];
        if let Some(loc) = close_attribute(source) {
            return Err(fail(
                loc,
                "to-be-closed variables (`<close>`) are not available in scripts".to_string(),
            ));
        }
        let env = sandbox::script_env(&self.lua).map_err(|e| fail(Loc::default(), message(&e)))?;
        sandbox::install_hook(&self.lua, &self.budget)
            .map_err(|e| fail(Loc::default(), message(&e)))?;
        self.budget.enter("the script's top level");
        let returned = self
            .lua
            .load(source)
            .set_name(format!("@{name}"))
            .set_mode(mlua::chunk::ChunkMode::Text)
            .set_environment(env.clone())
            .eval::<Value>();
        let returned = returned.and_then(|v| {
            self.freeze.freeze(&self.lua, &env)?;
            Ok(v)
        });
        self.budget.leave();
        let returned = returned.map_err(|e| {
            let (line, text) = split_location(&message(&e), name);
            fail(Loc { line, column: 1 }, text)
        })?;
        let Value::Table(table) = returned else {
            return Err(fail(
                Loc { line: 1, column: 1 },
                format!(
                    "a script returns a table of hooks (`return {{ on_place = function(ctx) ... end }}`), but this one returns {}",
                    describe(&returned)
                ),
            ));
        };
        let mut hooks: [Option<Function>; 5] = [None, None, None, None, None];
        let mut problems = Vec::new();
        for pair in table.pairs::<Value, Value>() {
            let Ok((key, value)) = pair else { continue };
            let key_text = match &key {
                Value::String(s) => s.to_string_lossy(),
                other => format!("a {}", other.type_name()),
            };
            let Some(index) = HOOK_NAMES.iter().position(|h| *h == key_text) else {
                let hint = nearest(&key_text, HOOK_NAMES.iter().copied())
                    .map(|n| format!(" (did you mean '{n}'?)"))
                    .unwrap_or_default();
                problems.push(Diagnostic::error(
                    path,
                    key_loc(source, &key_text),
                    format!(
                        "the returned table has '{key_text}', which is not a hook{hint}; hooks are {}",
                        HOOK_NAMES.join(", ")
                    ),
                ));
                continue;
            };
            match value {
                Value::Function(f) => hooks[index] = Some(f),
                other => problems.push(Diagnostic::error(
                    path,
                    key_loc(source, &key_text),
                    format!(
                        "hook '{key_text}' must be a function, found {}",
                        describe(&other)
                    ),
                )),
            }
        }
        if problems.is_empty() {
            Ok(hooks)
        } else {
            Err(problems)
        }
    }
}

fn describe(v: &Value) -> String {
    match v {
        Value::Nil => "nothing".to_string(),
        Value::Integer(_) => "an integer".to_string(),
        other => format!("a {}", other.type_name()),
    }
}

/// Where a script declares a to-be-closed variable (`local x <close> = ...`), if it does.
fn close_attribute(source: &str) -> Option<Loc> {
    for (i, line) in source.lines().enumerate() {
        let code = line.split("--").next().unwrap_or("");
        if let Some(start) = code.find('<') {
            let rest = &code[start + 1..];
            let word = rest.trim_start();
            if word.starts_with("close") && word["close".len()..].trim_start().starts_with('>') {
                return Some(Loc {
                    line: u32::try_from(i + 1).unwrap_or(1),
                    column: u32::try_from(start + 1).unwrap_or(1),
                });
            }
        }
    }
    None
}

/// The location of `key = ` in a script's source, to point at a returned hook by name.
fn key_loc(source: &str, key: &str) -> Loc {
    for (i, line) in source.lines().enumerate() {
        if let Some(col) = line.find(key)
            && line[col + key.len()..].trim_start().starts_with('=')
            && !line[..col].ends_with(|c: char| c.is_alphanumeric() || c == '_')
        {
            return Loc {
                line: u32::try_from(i + 1).unwrap_or(1),
                column: u32::try_from(col + 1).unwrap_or(1),
            };
        }
    }
    Loc { line: 1, column: 1 }
}

/// `name:LINE: text` → (LINE, text); other messages keep line 1.
fn split_location(text: &str, name: &str) -> (u32, String) {
    if let Some(rest) = text.strip_prefix(name).and_then(|r| r.strip_prefix(':'))
        && let Some((line, msg)) = rest.split_once(':')
        && let Ok(line) = line.trim().parse::<u32>()
    {
        return (line, msg.trim().to_string());
    }
    (1, text.to_string())
}

/// `file.lua:LINE: rest` → (`file.lua:LINE`, `rest`).
fn split_place(text: &str) -> Option<(&str, &str)> {
    let lua_end = text.find(".lua:")? + ".lua:".len();
    let after = &text[lua_end..];
    let digits = after.find(|c: char| !c.is_ascii_digit())?;
    if digits == 0 || !after[digits..].starts_with(": ") {
        return None;
    }
    Some((&text[..lua_end + digits], &after[digits + 2..]))
}

/// The message of a Lua error, without mlua's wrapping and tracebacks.
pub(super) fn message(e: &mlua::Error) -> String {
    clean(&raw_message(e))
}

/// Drop stack tracebacks (they show the sandbox's insides) and addresses (they differ
/// from run to run) from a Lua message.
fn clean(text: &str) -> String {
    let text = text
        .split("\nstack traceback:")
        .next()
        .unwrap_or(text)
        .trim_end();
    for kind in ["table", "function", "userdata", "thread"] {
        if let Some(rest) = text.strip_prefix(kind).and_then(|r| r.strip_prefix(": 0x"))
            && rest.chars().all(|c| c.is_ascii_hexdigit())
        {
            return format!(
                "an error value that is a {kind}, not a message (raise errors with a string)"
            );
        }
    }
    text.to_string()
}

fn raw_message(e: &mlua::Error) -> String {
    match e {
        mlua::Error::RuntimeError(s) | mlua::Error::SyntaxError { message: s, .. } => s.clone(),
        mlua::Error::MemoryError(_) => {
            "the pack's script memory limit is reached (too much data in its scripts)".to_string()
        }
        mlua::Error::CallbackError { cause, .. } => message(cause),
        mlua::Error::WithContext { cause, .. } => message(cause),
        mlua::Error::BadArgument { to, pos, cause, .. } => {
            // ctx functions are called as methods: argument 1 is ctx itself.
            let cause = raw_message(cause);
            let call = to.as_deref().map_or_else(String::new, |t| format!("{t}: "));
            let n = pos.saturating_sub(1);
            match split_place(&cause) {
                Some((place, rest)) => format!("{place}: {call}argument {n}: {rest}"),
                None => format!("{call}argument {n}: {cause}"),
            }
        }
        mlua::Error::FromLuaConversionError {
            from,
            to,
            message: m,
        } => {
            format!(
                "expected {to}, got {from}{}",
                m.as_deref().map(|m| format!(" ({m})")).unwrap_or_default()
            )
        }
        other => other.to_string(),
    }
}

impl Hooks for ScriptHost {
    fn evaluate(&self, view: &GameView<'_>, seat: crate::rules::Seat) -> Result<f64, HookError> {
        self.heuristics(view, seat)
    }

    fn on_place(&self, script: ScriptId, fx: &mut Effects<'_>) -> Result<(), HookError> {
        let (mover, origin) = (fx.mover(), fx.origin());
        self.call::<_, ()>(
            script,
            Hook::OnPlace,
            |st| {
                st.ctx.set_fields(mover, Some(origin))?;
                Ok(st.ctx.table.clone())
            },
            |slot| slot.enter_effects(fx, script),
        )
        .map(|_| ())
    }

    fn between_turns(
        &self,
        script: ScriptId,
        fx: &mut Effects<'_>,
        cell: Cell,
    ) -> Result<(), HookError> {
        let mover = fx.mover();
        let token = fx.state().board().get(cell);
        let view_token = token.map(|t| (cell, t));
        let catalog = fx.catalog();
        let state_copy = fx.state().clone();
        self.call::<_, ()>(
            script,
            Hook::BetweenTurns,
            |st| {
                st.ctx.set_fields(mover, Some(cell))?;
                let me = match view_token {
                    Some((at, t)) => {
                        let view = GameView {
                            state: &state_copy,
                            catalog,
                        };
                        Value::Table(ctx::token_table(&st.lua, &view, at, t)?)
                    }
                    None => Value::Nil,
                };
                Ok((st.ctx.table.clone(), me))
            },
            |slot| slot.enter_effects(fx, script),
        )
        .map(|_| ())
    }

    fn income(
        &self,
        script: ScriptId,
        view: &GameView<'_>,
        cell: Cell,
        income: i64,
    ) -> Result<i64, HookError> {
        let token = view.state.board().get(cell);
        let seat = token.map_or(crate::rules::Seat::One, |t| t.seat);
        let result = self.call::<_, Value>(
            script,
            Hook::Income,
            |st| {
                st.ctx.set_fields(seat, Some(cell))?;
                let me = match token {
                    Some(t) => Value::Table(ctx::token_table(&st.lua, view, cell, t)?),
                    None => Value::Nil,
                };
                Ok((st.ctx.table.clone(), me, income))
            },
            |slot| slot.enter_view(view, script),
        )?;
        match result {
            None => Ok(income),
            Some(Value::Integer(n)) => Ok(n),
            Some(Value::Number(f)) if f.fract() == 0.0 && f.abs() < 9.0e15 => {
                // An integral float such as 2.0 counts as that integer.
                #[allow(clippy::cast_possible_truncation)]
                Ok(f as i64)
            }
            Some(other) => Err(HookError::new(format!(
                "{}: in income: the hook must return a whole number, got {}",
                self.script_name(script),
                describe(&other)
            ))),
        }
    }

    fn on_destroyed(
        &self,
        script: ScriptId,
        fx: &mut Effects<'_>,
        cell: Cell,
        token: Token,
    ) -> Result<(), HookError> {
        let catalog = fx.catalog();
        let state_copy = fx.state().clone();
        self.call::<_, ()>(
            script,
            Hook::OnDestroyed,
            |st| {
                st.ctx.set_fields(token.seat, Some(cell))?;
                let view = GameView {
                    state: &state_copy,
                    catalog,
                };
                let me = ctx::token_table(&st.lua, &view, cell, token)?;
                Ok((st.ctx.table.clone(), me))
            },
            |slot| slot.enter_effects(fx, script),
        )
        .map(|_| ())
    }
}

impl ScriptHost {
    /// Every pack heuristic's opinion of the position for `seat`, summed.
    fn heuristics(&self, view: &GameView<'_>, seat: crate::rules::Seat) -> Result<f64, HookError> {
        let mut total = 0.0;
        for p in &view.catalog.packs {
            let Some(script) = p.ai_script else { continue };
            let value = self.call::<_, Value>(
                script,
                Hook::Evaluate,
                |st| {
                    st.ctx.set_fields(seat, None)?;
                    Ok((st.ctx.table.clone(), seat.number()))
                },
                |slot| slot.enter_view(view, script),
            )?;
            total += match value {
                Some(Value::Integer(n)) => {
                    #[allow(clippy::cast_precision_loss)]
                    let n = n as f64;
                    n
                }
                Some(Value::Number(f)) if f.is_finite() => f,
                None | Some(Value::Nil) => 0.0,
                Some(other) => {
                    return Err(HookError::new(format!(
                        "{}: in evaluate: the hook must return a number, got {}",
                        self.script_name(script),
                        describe(&other)
                    )));
                }
            };
        }
        Ok(total)
    }

    fn script_name(&self, script: ScriptId) -> String {
        self.scripts
            .get(script.index())
            .and_then(Option::as_ref)
            .map_or_else(|| format!("script #{}", script.0), |s| s.name.clone())
    }
}

/// Load packs and compile their scripts: [`content::load`] plus every script problem as a
/// diagnostic. The catalog is given only when both are clean.
#[must_use]
pub fn load(options: &LoadOptions) -> Loaded {
    let mut loaded = content::load(options);
    if let Some(catalog) = &loaded.catalog
        && !catalog.scripts.is_empty()
        && let Err(problems) = ScriptHost::new(catalog)
    {
        loaded.diagnostics.extend(problems);
        loaded
            .diagnostics
            .sort_by(|a, b| (&a.path, a.line, a.column).cmp(&(&b.path, b.line, b.column)));
        loaded.catalog = None;
    }
    loaded
}
