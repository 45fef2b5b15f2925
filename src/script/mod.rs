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

pub mod api;
mod call;
mod ctx;
mod fast;
pub mod lint;
pub mod luals;
pub mod memory;
mod pattern;
mod place;
mod sandbox;
mod watchdog;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use mlua::{Function, Lua, Value};

use crate::content::diagnostic::Diagnostic;
use crate::content::yaml::Loc;
use crate::content::{self, LoadOptions, Loaded};
use crate::rules::{
    Catalog, Cell, Effects, GameView, HookError, HookErrorKind, Hooks, ScriptId, Token, nearest,
    split_place,
};
use sandbox::ScriptBudget;

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

/// One compiled script: its hooks and the state it runs in.
struct Script {
    state: usize,
    /// `pack/path`, as errors name it.
    name: String,
    hooks: [Option<Function>; 5],
    /// The same hooks in the registry, as [`call::Caller`] calls them.
    keys: [Option<mlua::RegistryKey>; 5],
    /// The upvalues of the functions its hooks reach, as its top level left them, put
    /// back before the first hook call of this script in a move when one ran before;
    /// `None` for a script whose functions capture nothing but `_ENV` (most of them).
    /// Its tables need nothing: they are frozen after load.
    snapshot: Option<mlua::Table>,
    /// Whether a hook of this script ran since its state was last put back.
    dirty: std::cell::Cell<bool>,
    /// The [`ScriptHost::serial`] of the move (or call outside a move) this script's
    /// state was last made current for.
    serial: std::cell::Cell<u64>,
}

/// A compiled script's hooks, and its state to put back before moves if it has any.
type Compiled = ([Option<Function>; 5], Option<mlua::Table>);

/// One pack's Lua state with its `ctx` table.
struct PackState {
    lua: Lua,
    freeze: sandbox::Freezer,
    ctx: ctx::CtxTable,
    /// Calls this state's hooks with its `ctx`.
    caller: call::Caller,
    slot: Rc<ctx::CallSlot>,
    /// The host's budget, shared by every pack.
    budget: Rc<ScriptBudget>,
    /// Instructions one hook call of this pack may run (`scripts.instructions`).
    instructions: u64,
    /// Hook calls of this pack under way (they nest through `ctx` calls).
    depth: std::cell::Cell<u32>,
    /// The pack's own memory cap (`scripts.memory_kb`), in bytes.
    cap: usize,
}

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

/// Runs a catalog's scripts. Implements [`Hooks`].
pub struct ScriptHost {
    states: Vec<PackState>,
    scripts: Vec<Option<Script>>,
    /// The budget every pack's hooks share in a move.
    budget: Rc<ScriptBudget>,
    /// Counts moves and calls outside a move: a script whose hooks ran in an earlier
    /// one gets its state put back at its first hook call in this one.
    serial: std::cell::Cell<u64>,
    /// When the packs' caps add up past [`memory::CONTENT_SET_MEMORY`]: that total, which
    /// the packs' states then share ([`ScriptHost::fit_memory`]).
    shared: Option<usize>,
    /// This host's share of the process's script memory.
    _reserved: memory::Reservation,
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
    ///
    /// The host reserves its packs' memory caps added up (at most
    /// [`memory::CONTENT_SET_MEMORY`]) from the process's [`memory::PROCESS_MEMORY`] for
    /// as long as it lives; when that much is not free, it is not made.
    pub fn new(catalog: &Catalog) -> Result<ScriptHost, Vec<Diagnostic>> {
        let caps = memory::pack_caps(catalog);
        let total: usize = caps.iter().map(|(_, cap)| *cap).sum();
        let share = total.min(memory::CONTENT_SET_MEMORY);
        let first_file = || {
            PathBuf::from(
                catalog
                    .scripts()
                    .first()
                    .map_or_else(String::new, |s| s.file.clone()),
            )
        };
        let reserved = memory::Reservation::take(share).map_err(|free| {
            vec![Diagnostic::error(
                &first_file(),
                Loc::default(),
                format!(
                    "no script memory left in this process: the scripts of {} need {} MiB, and {} MiB of the {} MiB all script hosts may hold together is free (run fewer threads, or lower scripts.memory_kb in pack.yaml)",
                    pack_list(&caps),
                    memory::mib(share),
                    free / (1024 * 1024),
                    memory::mib(memory::PROCESS_MEMORY)
                ),
            )]
        })?;
        let budget = Rc::new(ScriptBudget::new(&catalog.rules().limits));
        let mut host = ScriptHost {
            states: Vec::new(),
            scripts: Vec::new(),
            budget: Rc::clone(&budget),
            serial: std::cell::Cell::new(0),
            shared: (total > share).then_some(share),
            _reserved: reserved,
        };
        let mut problems = Vec::new();
        let mut state_of_pack: HashMap<&str, usize> = HashMap::new();
        // One load budget per pack (all its top levels), within one for the whole set.
        let set_deadline = std::time::Instant::now() + LOAD_SET;
        let mut loading: Option<&str> = None;
        // Pack by pack (a pack's `ai.lua` comes after every pack's other scripts in the
        // catalog), each script kept at its index.
        let all = catalog.scripts();
        let mut order: Vec<usize> = (0..all.len()).collect();
        let mut first: HashMap<&str, usize> = HashMap::new();
        let firsts: Vec<usize> = all
            .iter()
            .enumerate()
            .map(|(i, d)| *first.entry(d.pack.as_str()).or_insert(i))
            .collect();
        order.sort_by_key(|&i| (firsts[i], i));
        host.scripts = (0..all.len()).map(|_| None).collect();
        for index in order {
            let def = &all[index];
            let path = PathBuf::from(&def.file);
            if loading != Some(def.pack.as_str()) {
                budget.begin_load(sandbox::LoadLimits {
                    instructions: LOAD_INSTRUCTIONS,
                    pack: LOAD_PACK,
                    deadline: set_deadline,
                    set: LOAD_SET,
                });
                loading = Some(def.pack.as_str());
            }
            let state = match state_of_pack.get(def.pack.as_str()) {
                Some(&s) => s,
                None => {
                    let limits = catalog.packs().iter().find(|p| p.id == def.pack);
                    let memory = limits.map_or(DEFAULT_MEMORY, |p| p.script_memory);
                    let instructions =
                        limits.map_or(DEFAULT_INSTRUCTIONS, |p| p.script_instructions);
                    match PackState::new(memory, instructions, &budget) {
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
                            continue;
                        }
                    }
                }
            };
            let name = def.name();
            host.fit_memory();
            match host.states[state].compile(&path, &name, &def.source) {
                Ok((hooks, snapshot)) => {
                    let keys = match call::hook_keys(&host.states[state].lua, &hooks) {
                        Ok(keys) => keys,
                        Err(e) => {
                            problems.push(Diagnostic::error(
                                &path,
                                Loc::default(),
                                format!("cannot keep the script's hooks: {}", message(&e)),
                            ));
                            continue;
                        }
                    };
                    host.scripts[index] = Some(Script {
                        state,
                        name,
                        hooks,
                        keys,
                        snapshot,
                        dirty: std::cell::Cell::new(false),
                        serial: std::cell::Cell::new(0),
                    });
                }
                Err(d) => problems.extend(d),
            }
        }
        budget.end_load();
        problems.extend(host.missing_hooks(catalog));
        if let Some(shared) = host.shared
            && problems.iter().any(|d| d.message.contains(MEMORY_MESSAGE))
        {
            problems.push(Diagnostic::error(
                &first_file(),
                Loc::default(),
                format!(
                    "the script memory caps of {} add up to {} MiB, more than the {} MiB all packs' scripts may hold together: they share those {} MiB (lower scripts.memory_kb in pack.yaml)",
                    pack_list(&caps),
                    memory::mib(total),
                    memory::mib(shared),
                    memory::mib(shared)
                ),
            ));
        }
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
        for a in catalog.abilities() {
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
        for p in catalog.packs() {
            if let Some(id) = p.ai_script
                && !has(id, &[Hook::Evaluate])
            {
                problems.push(Diagnostic::error(
                    &PathBuf::from(
                        catalog
                            .scripts()
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
        for t in catalog.token_types() {
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
    fn call(
        &self,
        script: ScriptId,
        hook: Hook,
        fields: (crate::rules::Seat, Option<Cell>),
        setup: impl FnOnce(&PackState) -> mlua::Result<call::Args>,
        enter: impl FnOnce(&ctx::CallSlot) -> ctx::Entered<'_>,
    ) -> Result<Option<Value>, HookError> {
        let Some(Some(s)) = self.scripts.get(script.index()) else {
            return Err(HookError::of(
                HookErrorKind::Host,
                format!("script #{} is not loaded", script.0),
            ));
        };
        let Some(function) = &s.keys[hook as usize] else {
            return Ok(None);
        };
        if self.budget.starts_episode() {
            // A call outside any move starts from the scripts' loaded state too.
            self.serial.set(self.serial.get() + 1);
        }
        let state = &self.states[s.state];
        if let Some(snapshot) = &s.snapshot
            && s.serial.get() != self.serial.get()
        {
            if s.dirty.get() {
                self.put_back(s, state, snapshot)?;
            }
            s.serial.set(self.serial.get());
        }
        self.fit_memory();
        let fail = |kind: HookErrorKind, text: String| {
            HookError::of(
                kind,
                if text.starts_with(&s.name) || split_place(&text).is_some() {
                    text
                } else {
                    format!("{}: in {}: {text}", s.name, hook.name())
                },
            )
        };
        self.budget
            .enter(hook.name(), state.instructions)
            .map_err(|text| fail(HookErrorKind::Limit, text))?;
        // A hook nested in another of the same pack (an on_destroyed inside ctx:damage)
        // shares the ctx table: give the outer call its fields back afterwards.
        let outermost = state.depth.get() == 0;
        let saved = (!outermost).then(|| state.slot.fields.get());
        let entered = enter(&state.slot);
        state.depth.set(state.depth.get() + 1);
        if s.snapshot.is_some() {
            s.dirty.set(true);
        }
        // However deep hooks nest, across however many packs, the call never runs out of
        // native stack: it continues on a fresh segment when the thread's is low.
        let result = stacker::maybe_grow(STACK_RED_ZONE, STACK_SEGMENT, || {
            // ctx's fields for this call; an outermost call also counts its instructions
            // from zero, whatever ran before it in this state.
            let counted = state.ctx.set_fields(&state.slot, fields, outermost);
            if !counted {
                sandbox::install_hook(&state.lua, &state.budget)?;
            }
            // The hook's own ctx calls find their own lines, not those of a ctx call
            // this hook runs inside.
            let outer = place::suspend_calling();
            // `income` and `evaluate` give a value back; the other hooks' results are
            // ignored.
            let wants = matches!(hook, Hook::Income | Hook::Evaluate);
            let running = watchdog::enter(state.ctx.main());
            let result =
                setup(state).and_then(|args| state.caller.call(&state.lua, function, args, wants));
            watchdog::leave(running);
            place::restore_calling(outer);
            result
        });
        state.depth.set(state.depth.get() - 1);
        self.budget.leave();
        self.fit_memory();
        drop(entered);
        // A bad ctx call the script caught still fails the hook (read-only hooks too),
        // and so does a spent budget, whatever the script did with the error.
        let exceeded = self.budget.exceeded();
        let failure = state.slot.take_failure();
        let result = match result {
            // The common case: the hook ran to its end and nothing failed.
            Ok(value) if failure.is_none() && exceeded.is_none() => {
                if let Some(fields) = saved {
                    state.slot.fields.set(fields);
                }
                return Ok(Some(value));
            }
            other => other,
        };
        let (result, known) = match (result, failure, exceeded) {
            (Ok(_), Some((kind, failure)), _) => {
                (Err(mlua::Error::RuntimeError(failure)), Some(kind))
            }
            (Ok(_), None, Some(o)) => (
                Err(mlua::Error::RuntimeError(o.describe())),
                Some(HookErrorKind::Limit),
            ),
            (result, failure, _) => (result, failure.map(|(kind, _)| kind)),
        };
        if let Some(fields) = saved {
            state.slot.fields.set(fields);
        }
        result.map(Some).map_err(|e| {
            let kind = if is_memory(&e) || exceeded.is_some() {
                HookErrorKind::Limit
            } else {
                known.unwrap_or(HookErrorKind::Script)
            };
            let mut text = message(&e);
            if let Some(shared) = self.shared
                && is_memory(&e)
            {
                text.push_str(&format!(
                    " (or all packs' scripts together reached the {} MiB they share)",
                    memory::mib(shared)
                ));
            }
            fail(kind, text)
        })
    }

    /// An AI decision starts: until [`ScriptHost::end_decision`], every hook and
    /// `evaluate` call counts toward `instructions` (all together) and none may run after
    /// `deadline`; once either is spent, every further call is refused at once with a
    /// limit error. False, changing nothing, when a decision is already under way.
    pub fn begin_decision(
        &self,
        instructions: u64,
        deadline: std::time::Instant,
        wall: std::time::Duration,
    ) -> bool {
        self.budget.begin_decision(instructions, deadline, wall)
    }

    /// The decision is over: the instructions its calls spent, and whether it ran out.
    pub fn end_decision(&self) -> (u64, bool) {
        self.budget.end_decision()
    }

    /// Whether the decision under way ran out of its script budget.
    #[must_use]
    pub fn decision_spent(&self) -> bool {
        self.budget.decision_spent()
    }

    /// With a shared total ([`ScriptHost::shared`]): give each pack's state room to grow
    /// by what the total has left, within its own cap. Called whenever a hook call starts
    /// or ends (only one state runs at a time: a nested call's state is fitted when it
    /// starts, and the others again when it ends), so the states together never pass the
    /// total.
    fn fit_memory(&self) {
        let Some(shared) = self.shared else { return };
        let used: usize = self.states.iter().map(|s| s.lua.used_memory()).sum();
        let room = shared.saturating_sub(used);
        for s in &self.states {
            let limit = s.cap.min(s.lua.used_memory().saturating_add(room)).max(1);
            let _ = s.lua.set_memory_limit(limit);
        }
    }

    /// Bytes the packs' Lua states hold now, live data and garbage not yet collected
    /// (each state is capped by its pack's `script_memory`).
    pub fn memory_in_use(&self) -> usize {
        self.states.iter().map(|s| s.lua.used_memory()).sum()
    }

    /// Put back the upvalues `s`'s top level left (its hooks ran in an earlier move),
    /// counted against this move's budget and clock like a hook: the work grows with what
    /// the top level captured (capped at load), and a failure is this move's and this
    /// script's alone (the next move tries again; other scripts never see it).
    fn put_back(
        &self,
        s: &Script,
        state: &PackState,
        snapshot: &mlua::Table,
    ) -> Result<(), HookError> {
        let fail = |kind: HookErrorKind, text: String| {
            HookError::of(
                kind,
                format!(
                    "{}: putting back the script's state before this move: {text}",
                    s.name
                ),
            )
        };
        self.budget
            .enter("putting back the script's state", u64::MAX)
            .map_err(|text| fail(HookErrorKind::Limit, text))?;
        let result = state.freeze.restore(snapshot);
        self.budget.leave();
        match (result, self.budget.exceeded()) {
            (_, Some(o)) => Err(fail(HookErrorKind::Limit, o.describe())),
            (Ok(()), None) => {
                s.dirty.set(false);
                Ok(())
            }
            (Err(e), None) => Err(fail(
                if is_memory(&e) {
                    HookErrorKind::Limit
                } else {
                    HookErrorKind::Host
                },
                message(&e),
            )),
        }
    }
}

impl PackState {
    fn new(memory: usize, instructions: u64, budget: &Rc<ScriptBudget>) -> mlua::Result<PackState> {
        let budget = Rc::clone(budget);
        let (lua, freeze) = sandbox::new_state(&budget, memory)?;
        let slot = Rc::new(ctx::CallSlot::default());
        let table = ctx::make(&lua, &slot, &budget)?;
        // The functions scripts call most get fast entries (their general twins stay).
        if let Some(meta) = table.metatable() {
            fast::install(&lua, &meta.raw_get("__index")?, &slot, &budget)?;
        }
        let ctx = ctx::CtxTable::new(&lua, table)?;
        let caller = call::Caller::new(&lua, ctx.main(), &ctx.table)?;
        lua.set_app_data(Rc::clone(&slot));
        Ok(PackState {
            lua,
            freeze,
            ctx,
            caller,
            slot,
            budget,
            instructions,
            depth: std::cell::Cell::new(0),
            cap: memory,
        })
    }

    /// Load one script file and check it returns a table of hook functions; with them,
    /// the script's state to put back before moves, if it has any.
    fn compile(&self, path: &Path, name: &str, source: &str) -> Result<Compiled, Vec<Diagnostic>> {
        let fail = |loc: Loc, msg: String| vec![Diagnostic::error(path, loc, msg)];
        // Kept for advice in error messages (a `ctx.name(…)` on the failing line).
        if let Some(mut sources) = self.lua.app_data_mut::<ctx::Sources>() {
            sources.0.insert(name.to_string(), source.to_string());
        } else {
            let mut sources = ctx::Sources::default();
            sources.0.insert(name.to_string(), source.to_string());
            self.lua.set_app_data(sources);
        }
        if let Some(loc) = close_attribute(source) {
            return Err(fail(
                loc,
                "to-be-closed variables (`<close>`) are not available in scripts".to_string(),
            ));
        }
        if let Some(o) = self.budget.load_overrun() {
            return Err(fail(
                Loc { line: 1, column: 1 },
                format!("not loaded: {}", o.describe()),
            ));
        }
        let env = sandbox::script_env(&self.lua).map_err(|e| fail(Loc::default(), message(&e)))?;
        sandbox::install_hook(&self.lua, &self.budget)
            .map_err(|e| fail(Loc::default(), message(&e)))?;
        self.budget
            .enter("the script's top level", self.instructions)
            .map_err(|e| fail(Loc::default(), e))?;
        // The top level may be as deep as anything else.
        let returned = stacker::maybe_grow(STACK_RED_ZONE, STACK_SEGMENT, || {
            let chunk = parse(&self.lua, source, name, &env, self.budget.load_deadline())?;
            let chunk = match chunk {
                Parsed::Chunk(f) => f,
                Parsed::Cut { line } => {
                    let over = self.budget.load_overrun().map_or_else(
                        || "loading took too long".to_string(),
                        sandbox::Overrun::describe,
                    );
                    return Err(mlua::Error::RuntimeError(format!(
                        "{name}:{line}: parsing the script stopped here: {over}"
                    )));
                }
            };
            let running = watchdog::enter(self.ctx.main());
            let v = chunk.call::<Value>(());
            watchdog::leave(running);
            let v = v?;
            if let Some(o) = self.budget.exceeded() {
                return Err(mlua::Error::RuntimeError(o.describe()));
            }
            self.freeze.freeze(&self.lua, &env)?;
            Ok(v)
        });
        self.budget.leave();
        self.budget.clear_call_overrun();
        let located = |e: &mlua::Error| {
            let (line, mut text) = split_location(&message(e), name);
            let near = near_column(source, line, &text);
            if let Some(column) = near
                && let Some((l, c, token)) = token_before(source, line, column)
            {
                text.push_str(&format!(
                    "; the mistake may be just before it, at line {l}, column {c} (`{token}`, the last token before line {line}): is something unfinished there?"
                ));
            }
            fail(
                Loc {
                    line,
                    column: near.unwrap_or(1),
                },
                text,
            )
        };
        let returned = returned.map_err(|e| located(&e))?;
        let Value::Table(table) = returned else {
            return Err(fail(
                Loc { line: 1, column: 1 },
                format!(
                    "a script returns a table of hooks (`return {{ on_place = function(ctx) ... end }}`), but this one returns {}",
                    ctx::describe_value(&returned)
                ),
            ));
        };
        let mut hooks: [Option<Function>; 5] = [None, None, None, None, None];
        let mut problems = Vec::new();
        for pair in table.pairs::<Value, Value>() {
            let Ok((key, value)) = pair else { continue };
            let key_text = match &key {
                Value::String(s) => s.to_string_lossy(),
                other => ctx::a_type(other),
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
                        ctx::describe_value(&other)
                    ),
                )),
            }
        }
        if !problems.is_empty() {
            return Err(problems);
        }
        // Freeze every table the hooks reach and record their upvalues: counted against
        // the pack's load budget, with no cap of its own.
        self.budget
            .enter("freezing the script's tables", u64::MAX)
            .map_err(|e| fail(Loc::default(), e))?;
        let captured = stacker::maybe_grow(STACK_RED_ZONE, STACK_SEGMENT, || {
            let captured = self.freeze.capture(&table, &env);
            match self.budget.exceeded() {
                Some(o) => Err(mlua::Error::RuntimeError(o.describe())),
                None => captured,
            }
        });
        self.budget.leave();
        let (snapshot, stateless) = captured.map_err(|e| located(&e))?;
        // Without the name `_ENV` in its source, no hook can point `_ENV` elsewhere: a
        // script whose functions capture nothing else never needs putting back.
        let kept = (!stateless || source.contains("_ENV")).then_some(snapshot);
        Ok((hooks, kept))
    }
}

/// The message of running out of script memory.
const MEMORY_MESSAGE: &str = "the pack's script memory limit is reached";

/// Packs and their caps for messages, largest first: `a (48 MiB), b (16 MiB)`.
fn pack_list(caps: &[(String, usize)]) -> String {
    let mut caps: Vec<&(String, usize)> = caps.iter().collect();
    caps.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let mut names: Vec<String> = caps
        .iter()
        .take(8)
        .map(|(id, cap)| format!("{id} ({} MiB)", memory::mib(*cap)))
        .collect();
    if caps.len() > 8 {
        names.push(format!("{} more", caps.len() - 8));
    }
    names.join(", ")
}

/// The pieces Lua's parser is fed, in bytes: the clock is read between two pieces.
const PARSE_PIECE: usize = 1024;

/// A script's source as Lua's parser reads it, a piece at a time, until a deadline.
struct Feed<'a> {
    source: &'a [u8],
    at: usize,
    deadline: Option<std::time::Instant>,
    /// Whether the deadline came before the end of the source.
    cut: bool,
}

/// Gives Lua's parser the next piece of a [`Feed`], or nothing (the end of the chunk)
/// once its deadline has passed.
unsafe extern "C-unwind" fn feed_piece(
    _: *mut mlua::ffi::lua_State,
    data: *mut std::ffi::c_void,
    size: *mut usize,
) -> *const std::ffi::c_char {
    // SAFETY: `data` is the `Feed` that `parse` passes to `lua_load`, alive and not
    // otherwise borrowed while `lua_load` runs; `size` is Lua's.
    unsafe {
        let feed = &mut *data.cast::<Feed<'_>>();
        let rest = feed.source.len().saturating_sub(feed.at);
        if rest == 0
            || feed
                .deadline
                .is_some_and(|d| std::time::Instant::now() >= d)
        {
            feed.cut = rest > 0;
            *size = 0;
            return std::ptr::null();
        }
        let n = rest.min(PARSE_PIECE);
        let piece = feed.source.as_ptr().add(feed.at);
        feed.at += n;
        *size = n;
        piece.cast()
    }
}

/// A parsed script, or where parsing was stopped by the load's clock.
enum Parsed {
    Chunk(Function),
    Cut { line: usize },
}

/// Parse `source` as a text chunk named `name` whose `_ENV` is `env`. Lua's parser is one
/// call no instruction count sees, and some constructs cost it time growing with the
/// square of their size (a long `elseif` chain, many labels, names looked up through
/// deeply nested functions): so it is fed a piece at a time and given no more once
/// `deadline` has passed, wherever it is.
fn parse(
    lua: &Lua,
    source: &str,
    name: &str,
    env: &mlua::Table,
    deadline: Option<std::time::Instant>,
) -> mlua::Result<Parsed> {
    let chunk_name = std::ffi::CString::new(format!("@{name}"))
        .unwrap_or_else(|_| std::ffi::CString::from(c"@script"));
    let mut feed = Feed {
        source: source.as_bytes(),
        at: 0,
        deadline,
        cut: false,
    };
    let data: *mut Feed<'_> = &raw mut feed;
    // SAFETY: the closure runs in protected mode with `env` at stack index 1; `lua_load`
    // reads only through `feed` (alive for the call); the closure leaves exactly two
    // values: the chunk and nil, or nil and the error message.
    let (chunk, error): (Value, Value) = unsafe {
        lua.exec_raw(env, |state| {
            let status = mlua::ffi::lua_load(
                state,
                feed_piece,
                data.cast(),
                chunk_name.as_ptr(),
                c"t".as_ptr(),
            );
            if status == mlua::ffi::LUA_OK {
                // The main chunk's only upvalue is its `_ENV`.
                mlua::ffi::lua_pushvalue(state, 1);
                mlua::ffi::lua_setupvalue(state, -2, 1);
                mlua::ffi::lua_pushnil(state);
            } else {
                mlua::ffi::lua_pushnil(state);
                mlua::ffi::lua_insert(state, -2);
            }
            mlua::ffi::lua_remove(state, 1);
        })?
    };
    if feed.cut {
        let line = source.as_bytes()[..feed.at.min(source.len())]
            .iter()
            .filter(|&&b| b == b'\n')
            .count()
            + 1;
        return Ok(Parsed::Cut { line });
    }
    match (chunk, error) {
        (Value::Function(f), _) => Ok(Parsed::Chunk(f)),
        (_, Value::String(m)) => Err(mlua::Error::SyntaxError {
            message: m.to_string_lossy(),
            incomplete_input: false,
        }),
        _ => Err(mlua::Error::RuntimeError(
            "the script could not be parsed".to_string(),
        )),
    }
}

/// Where a script declares a to-be-closed variable (`local x <close> = ...`), if it does:
/// read on Lua's tokens (strings, comments and operators such as `<` and `<=` are tokens
/// of their own, never an attribute), in the names a `local` statement declares.
fn close_attribute(source: &str) -> Option<Loc> {
    let tokens = lua_tokens(source);
    let text = |j: usize| tokens.get(j).map(|t| t.text);
    let is_name = |j: usize| tokens.get(j).is_some_and(|t| t.name);
    let mut i = 0;
    while i < tokens.len() {
        if text(i) != Some("local") || !is_name(i + 1) || text(i + 1) == Some("function") {
            i += 1;
            continue;
        }
        // `local` attnamelist: Name [`<` Name `>`] {`,` Name [`<` Name `>`]}
        let mut j = i + 1;
        while is_name(j) {
            j += 1;
            if text(j) == Some("<") {
                if text(j + 1) == Some("close") && text(j + 2) == Some(">") {
                    return tokens.get(j).map(|t| t.loc);
                }
                j += 3;
            }
            if text(j) != Some(",") {
                break;
            }
            j += 1;
        }
        i = j.max(i + 1);
    }
    None
}

/// One token of Lua source, as far as [`close_attribute`] needs: names and keywords,
/// numbers, and operators (two-character ones whole); strings and comments are skipped.
struct LuaToken<'a> {
    text: &'a str,
    /// A name or keyword (not a number, not an operator).
    name: bool,
    loc: Loc,
}

/// The level of a long bracket (`[[`, `[==[`) opening at `i`, if one does.
fn long_open(b: &[u8], i: usize) -> Option<usize> {
    if b.get(i) != Some(&b'[') {
        return None;
    }
    let level = b[i + 1..].iter().take_while(|&&c| c == b'=').count();
    (b.get(i + 1 + level) == Some(&b'[')).then_some(level)
}

fn lua_tokens(source: &str) -> Vec<LuaToken<'_>> {
    let b = source.as_bytes();
    let mut out = Vec::new();
    let (mut i, mut line, mut line_start) = (0usize, 1u32, 0usize);
    // Skips a long bracket's body from `i` (just after its opening) past its closing.
    let skip_long = |mut i: usize, level: usize, line: &mut u32, line_start: &mut usize| {
        while i < b.len() {
            if b[i] == b'\n' {
                *line += 1;
                *line_start = i + 1;
            } else if b[i] == b']'
                && b[i + 1..].iter().take_while(|&&c| c == b'=').count() == level
                && b.get(i + 1 + level) == Some(&b']')
            {
                return i + level + 2;
            }
            i += 1;
        }
        i
    };
    while i < b.len() {
        let c = b[i];
        let loc = Loc {
            line,
            column: u32::try_from(i - line_start + 1).unwrap_or(1),
        };
        if c == b'\n' {
            i += 1;
            line += 1;
            line_start = i;
        } else if c.is_ascii_whitespace() || !c.is_ascii() {
            i += 1;
        } else if c == b'-' && b.get(i + 1) == Some(&b'-') {
            i += 2;
            if let Some(level) = long_open(b, i) {
                i = skip_long(i + level + 2, level, &mut line, &mut line_start);
            } else {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
        } else if let Some(level) = long_open(b, i) {
            i = skip_long(i + level + 2, level, &mut line, &mut line_start);
        } else if c == b'"' || c == b'\'' {
            i += 1;
            while i < b.len() && b[i] != c && b[i] != b'\n' {
                if b[i] == b'\\' {
                    i += 1;
                    if b.get(i) == Some(&b'\n') {
                        line += 1;
                        line_start = i + 1;
                    }
                }
                i += 1;
            }
            i += 1;
        } else if c.is_ascii_alphanumeric() || c == b'_' {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            out.push(LuaToken {
                text: &source[start..i],
                name: !c.is_ascii_digit(),
                loc,
            });
        } else {
            let next = b.get(i + 1).copied().unwrap_or(0);
            let len = match (c, next) {
                (b'<', b'<' | b'=') | (b'>', b'>' | b'=') | (b'=' | b'~', b'=') => 2,
                (b':', b':') | (b'/', b'/') | (b'.', b'.') => 2,
                _ => 1,
            };
            out.push(LuaToken {
                text: &source[i..i + len],
                name: false,
                loc,
            });
            i += len;
        }
    }
    out
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

/// The message of a Lua error, without mlua's wrapping and tracebacks.
pub(super) fn message(e: &mlua::Error) -> String {
    let text = clean(&raw_message(e));
    match ctx_name_hint(&text) {
        Some(hint) => format!("{text}{hint}"),
        None => text,
    }
}

/// For "… (method 'damge')" or "… (field 'opponnent')": the ctx name meant, when one is
/// close (`; ctx has no 'damge': did you mean ctx:damage?`).
fn ctx_name_hint(text: &str) -> Option<String> {
    let rest = ["(method '", "(field '"]
        .iter()
        .find_map(|open| text.rfind(open).map(|at| &text[at + open.len()..]))?;
    let name = rest.split('\'').next()?;
    if ctx::METHODS.contains(&name) || ctx::FIELDS.contains(&name) {
        return None;
    }
    let candidates = ctx::METHODS.iter().chain(ctx::FIELDS).copied();
    let near = crate::rules::nearest(name, candidates)?;
    let written = if ctx::METHODS.contains(&near.as_str()) {
        format!("ctx:{near}(…)")
    } else {
        format!("ctx.{near}")
    };
    Some(format!("; ctx has no '{name}': did you mean {written}?"))
}

/// The column of the token a Lua syntax error is "near" (`near '='`), when it appears
/// exactly once on the error's line; Lua itself gives only the line.
fn near_column(source: &str, line: u32, message: &str) -> Option<u32> {
    let token = message.rsplit_once("near '")?.1.strip_suffix('\'')?;
    if token.is_empty() || token.starts_with('<') {
        return None;
    }
    let text = source
        .lines()
        .nth(usize::try_from(line).ok()?.checked_sub(1)?)?;
    let mut found = text.match_indices(token);
    let (at, _) = found.next()?;
    if found.next().is_some() {
        return None;
    }
    u32::try_from(text[..at].chars().count() + 1).ok()
}

/// When the token at (`line`, `column`) starts its line: the last token before it, on an
/// earlier line, as (line, column, text). Lua reports a syntax error at the token after
/// the mistake, so a dangling `+` at the end of line 2 is reported on line 3; this names
/// the `+`. Blank lines and lines holding only a `--` comment are passed over.
fn token_before(source: &str, line: u32, column: u32) -> Option<(u32, u32, String)> {
    let index = usize::try_from(line).ok()?.checked_sub(1)?;
    let lines: Vec<&str> = source.lines().take(index + 1).collect();
    let here = lines.get(index)?;
    let first = here.chars().take_while(|c| c.is_whitespace()).count();
    if usize::try_from(column).ok()? != first + 1 {
        return None;
    }
    // Only a few lines back: the mistake is near.
    for back in (index.saturating_sub(8)..index).rev() {
        // Code before a `--` comment (strings holding `--` are rare in hooks).
        let code = lines[back].split("--").next().unwrap_or("").trim_end();
        if code.trim().is_empty() {
            continue;
        }
        let last = code.chars().next_back()?;
        let word = |c: char| c.is_alphanumeric() || c == '_';
        let token: String = if word(last) {
            let n = code.chars().rev().take_while(|c| word(*c)).count();
            code.chars().skip(code.chars().count() - n).collect()
        } else {
            // One symbol, or an operator of two (`..`, `==`, `~=`, `<=`, `>=`, `//`).
            let two: String = code
                .chars()
                .skip(code.chars().count().saturating_sub(2))
                .collect();
            if ["..", "==", "~=", "<=", ">=", "//"].contains(&two.as_str()) {
                two
            } else {
                last.to_string()
            }
        };
        let start = code.chars().count() - token.chars().count() + 1;
        let token: String = token.chars().take(24).collect();
        return Some((
            u32::try_from(back + 1).ok()?,
            u32::try_from(start).ok()?,
            token,
        ));
    }
    None
}

/// The names of ctx's functions (`ctx:name(…)`), for tools and tests.
#[must_use]
pub fn ctx_functions() -> &'static [&'static str] {
    ctx::METHODS
}

/// Calls of a ctx function with a dot (`ctx.damage(…)`), which pass no ctx and shift
/// every argument: each as (line, column, name), comments left out.
#[must_use]
pub fn dot_calls(source: &str) -> Vec<(u32, u32, &'static str)> {
    let mut out = Vec::new();
    for (i, line) in source.lines().enumerate() {
        let code = line.split("--").next().unwrap_or("");
        for (at, _) in code.match_indices("ctx.") {
            let after = &code[at + 4..];
            let Some(&name) = ctx::METHODS.iter().find(|m| {
                after
                    .strip_prefix(**m)
                    .is_some_and(|r| r.trim_start().starts_with('('))
            }) else {
                continue;
            };
            // `myctx.damage(` is another table.
            if code[..at]
                .chars()
                .next_back()
                .is_some_and(|c| c.is_alphanumeric() || c == '_')
            {
                continue;
            }
            let column = code[..at].chars().count() + 1;
            out.push((
                u32::try_from(i + 1).unwrap_or(u32::MAX),
                u32::try_from(column).unwrap_or(u32::MAX),
                name,
            ));
        }
    }
    out
}

/// The longest message a script error may give, in characters; the rest is cut.
const MAX_MESSAGE: usize = 1_000;

/// A number as scripts print it: `nan`, `inf` and `-inf` the same on every platform.
pub(crate) fn number_text(f: f64) -> String {
    if f.is_nan() {
        "nan".to_string()
    } else if f.is_infinite() {
        if f > 0.0 { "inf" } else { "-inf" }.to_string()
    } else {
        // Lua's own text for the value (`%.14g`, with `.0` for integral values).
        let text = format!("{f}");
        if text.contains(['.', 'e', 'E']) {
            text
        } else {
            format!("{text}.0")
        }
    }
}

/// Make a Lua message safe to show and the same in every run: no stack traceback (it
/// shows the sandbox's insides), no line of the sandbox's own prelude, no address (they
/// differ from run to run), NaN spelt one way, control characters escaped (a message
/// cannot forge a new line of output), and at most [`MAX_MESSAGE`] characters.
pub(crate) fn clean(text: &str) -> String {
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
    let mut out = String::with_capacity(text.len().min(MAX_MESSAGE + 8));
    let mut rest = text;
    let mut count = 0usize;
    while let Some(c) = rest.chars().next() {
        if count >= MAX_MESSAGE {
            out.push('…');
            break;
        }
        if let Some(after) = rest.strip_prefix("sandbox:") {
            // `sandbox:LINE: ` of the prelude: dropped.
            let digits = after
                .find(|c: char| !c.is_ascii_digit())
                .unwrap_or(after.len());
            if digits > 0 {
                rest = after[digits..]
                    .strip_prefix(": ")
                    .unwrap_or(&after[digits..]);
                continue;
            }
        }
        if let Some(hex) = rest.strip_prefix(": 0x") {
            // `table: 0x55d1c0a8` (and `NAME: 0x…` from a `__name`): an address.
            let digits = hex
                .find(|c: char| !c.is_ascii_hexdigit())
                .unwrap_or(hex.len());
            if digits >= 6 {
                out.push_str(": (address)");
                rest = &hex[digits..];
                count += 11;
                continue;
            }
        }
        if let Some(after) = rest.strip_prefix("-nan") {
            out.push_str("nan");
            rest = after;
            count += 3;
            continue;
        }
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
        count += 1;
        rest = &rest[c.len_utf8()..];
    }
    out
}

/// Whether `e` is (or wraps) running out of the pack's script memory.
fn is_memory(e: &mlua::Error) -> bool {
    match e {
        mlua::Error::MemoryError(_) => true,
        mlua::Error::CallbackError { cause, .. } | mlua::Error::WithContext { cause, .. } => {
            is_memory(cause)
        }
        _ => false,
    }
}

fn raw_message(e: &mlua::Error) -> String {
    match e {
        mlua::Error::RuntimeError(s) | mlua::Error::SyntaxError { message: s, .. } => s.clone(),
        mlua::Error::MemoryError(_) => {
            format!("{MEMORY_MESSAGE} (too much data in its scripts)")
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
    fn begin_step(&self, step: crate::rules::BudgetStep) {
        if step == crate::rules::BudgetStep::Move {
            self.serial.set(self.serial.get() + 1);
        }
        self.budget.begin_step(step);
    }

    fn end_move(&self) {
        self.budget.end_move();
    }

    fn on_place(&self, script: ScriptId, fx: &mut Effects<'_>) -> Result<(), HookError> {
        let (mover, origin) = (fx.mover(), fx.origin());
        self.call(
            script,
            Hook::OnPlace,
            (mover, Some(origin)),
            |_| Ok(call::Args::CTX),
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
        self.call(
            script,
            Hook::BetweenTurns,
            (mover, Some(cell)),
            |st| {
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
                Ok(call::Args {
                    me: Some(me),
                    number: None,
                })
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
        let result = self.call(
            script,
            Hook::Income,
            (seat, Some(cell)),
            |st| {
                let me = match token {
                    Some(t) => Value::Table(ctx::token_table(&st.lua, view, cell, t)?),
                    None => Value::Nil,
                };
                Ok(call::Args {
                    me: Some(me),
                    number: Some(income),
                })
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
            Some(other) => Err(HookError::of(
                HookErrorKind::Return,
                format!(
                    "{}: in income: the hook must return a whole number, got {}",
                    self.script_name(script),
                    ctx::describe_value(&other)
                ),
            )),
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
        self.call(
            script,
            Hook::OnDestroyed,
            (token.seat, Some(cell)),
            |st| {
                let view = GameView {
                    state: &state_copy,
                    catalog,
                };
                let me = ctx::token_table(&st.lua, &view, cell, token)?;
                Ok(call::Args {
                    me: Some(Value::Table(me)),
                    number: None,
                })
            },
            |slot| slot.enter_effects(fx, script),
        )
        .map(|_| ())
    }
}

impl ScriptHost {
    /// Every pack heuristic's (`ai.lua`) opinion of the position for `seat`, summed. The
    /// engine never calls this: it is for the AI.
    pub fn heuristics(
        &self,
        view: &GameView<'_>,
        seat: crate::rules::Seat,
    ) -> Result<f64, HookError> {
        let mut total = 0.0;
        for p in view.catalog.packs() {
            let Some(script) = p.ai_script else { continue };
            let value = self.call(
                script,
                Hook::Evaluate,
                (seat, None),
                |_| {
                    Ok(call::Args {
                        me: None,
                        number: Some(seat.number().into()),
                    })
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
                    return Err(HookError::of(
                        HookErrorKind::Return,
                        format!(
                            "{}: in evaluate: the hook must return a number, got {}",
                            self.script_name(script),
                            ctx::describe_value(&other)
                        ),
                    ));
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
