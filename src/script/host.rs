//! Building the host: [`ScriptHost::new`] makes one sandboxed Lua state per pack with
//! scripts ([`PackState`]) and compiles every script into it, with each problem of a load
//! as a diagnostic placed in the script.
//!
//! Must not: run a hook (that is [`super::run`]).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use mlua::{Function, Lua, Value};

use super::budget::{self, ScriptBudget};
use super::diagnose::{
    Parsed, close_attribute, key_loc, near_column, parse, split_location, token_before,
};
use super::message::{MEMORY_MESSAGE, message};
use super::sandbox;
use super::{
    DEFAULT_INSTRUCTIONS, DEFAULT_MEMORY, HOOK_NAMES, LOAD_INSTRUCTIONS, LOAD_PACK, LOAD_SET,
    STACK_RED_ZONE, STACK_SEGMENT, ctx, fast, memory, raw,
};
use crate::content::diagnostic::Diagnostic;
use crate::content::yaml::Loc;
use crate::rules::{Catalog, ScriptId, nearest};

/// One compiled script: its hooks and the state it runs in.
pub(super) struct Script {
    pub(super) state: usize,
    /// `pack/path`, as errors name it.
    pub(super) name: String,
    pub(super) hooks: [Option<Function>; 5],
    /// The same hooks in the registry, as [`raw::Caller`] calls them.
    pub(super) keys: [Option<mlua::RegistryKey>; 5],
    /// The upvalues of the functions its hooks reach, as its top level left them, put
    /// back before the first hook call of this script in a move when one ran before;
    /// `None` for a script whose functions capture nothing but `_ENV` (most of them).
    /// Its tables need nothing: they are frozen after load.
    pub(super) snapshot: Option<mlua::Table>,
    /// Whether a hook of this script ran since its state was last put back.
    pub(super) dirty: std::cell::Cell<bool>,
    /// The [`ScriptHost::serial`] of the move (or call outside a move) this script's
    /// state was last made current for.
    pub(super) serial: std::cell::Cell<u64>,
}

/// A compiled script's hooks, and its state to put back before moves if it has any.
pub(super) type Compiled = ([Option<Function>; 5], Option<mlua::Table>);

/// One pack's Lua state with its `ctx` table.
pub(super) struct PackState {
    pub(super) lua: Lua,
    pub(super) freeze: sandbox::Freezer,
    pub(super) ctx: ctx::CtxTable,
    /// Calls this state's hooks with its `ctx`.
    pub(super) caller: raw::Caller,
    pub(super) slot: Rc<ctx::CallSlot>,
    /// The host's budget, shared by every pack.
    pub(super) budget: Rc<ScriptBudget>,
    /// Instructions one hook call of this pack may run (`scripts.instructions`).
    pub(super) instructions: u64,
    /// Hook calls of this pack under way (they nest through `ctx` calls).
    pub(super) depth: std::cell::Cell<u32>,
    /// The pack's memory cap in bytes: its `scripts.memory_kb`, or its fixed share of
    /// the content set's total when the caps add up past it.
    pub(super) cap: usize,
}

/// Runs a catalog's scripts. Implements [`Hooks`].
pub struct ScriptHost {
    pub(super) states: Vec<PackState>,
    pub(super) scripts: Vec<Option<Script>>,
    /// The budget every pack's hooks share in a move.
    pub(super) budget: Rc<ScriptBudget>,
    /// Counts moves and calls outside a move: a script whose hooks ran in an earlier
    /// one gets its state put back at its first hook call in this one.
    pub(super) serial: std::cell::Cell<u64>,
    /// When the packs' caps add up past [`memory::CONTENT_SET_MEMORY`]: that total, of
    /// which each pack's state gets a fixed share ([`memory::fixed_share`]).
    pub(super) shared: Option<usize>,
    /// This host's share of the process's script memory.
    _reserved: memory::Reservation,
    /// Hook calls of scripts without state, recorded to be replayed (`memo.rs`).
    pub(super) memo: super::memo::Memo,
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
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Hook {
    OnPlace = 0,
    BetweenTurns = 1,
    Income = 2,
    OnDestroyed = 3,
    Evaluate = 4,
}

impl Hook {
    pub(super) fn name(self) -> &'static str {
        HOOK_NAMES[self as usize]
    }
}

impl ScriptHost {
    /// Whether hook calls of scripts without state are replayed from a record of their
    /// `ctx` calls when they would see what they saw before (on by default; see
    /// docs/ai.md). Off, every hook runs in Lua: the same game, more slowly — a baseline
    /// for measuring, and a check that replays change nothing.
    pub fn set_replays(&self, on: bool) {
        self.memo.set_enabled(on);
    }

    /// Hook calls replayed so far, and replays undone because a `ctx` call went
    /// otherwise (the hook then ran in Lua).
    #[must_use]
    pub fn replay_counts(&self) -> (u64, u64) {
        self.memo.counts()
    }

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
            memo: super::memo::Memo::default(),
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
                budget.begin_load(budget::LoadLimits {
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
                    let memory = memory::fixed_share(
                        limits.map_or(DEFAULT_MEMORY, |p| p.script_memory),
                        total,
                    );
                    let instructions =
                        limits.map_or(DEFAULT_INSTRUCTIONS, |p| p.script_instructions);
                    match PackState::new(memory, instructions, &budget, catalog) {
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
            match host.states[state].compile(&path, &name, &def.source) {
                Ok((hooks, snapshot)) => {
                    let keys = match raw::hook_keys(&host.states[state].lua, &hooks) {
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
                    "the script memory caps of {} add up to {} MiB, more than the {} MiB all packs' scripts may hold together: each pack gets its cap scaled down to fit, {} of it (lower scripts.memory_kb in pack.yaml)",
                    pack_list(&caps),
                    memory::mib(total),
                    memory::mib(shared),
                    memory::share_text(total)
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

    /// The decision under way's instructions spent so far and its limit.
    #[must_use]
    pub fn decision_used(&self) -> Option<(u64, u64)> {
        self.budget.decision_used()
    }

    /// Bytes the packs' Lua states hold now, live data and garbage not yet collected
    /// (each state is capped by its pack's `script_memory`).
    pub fn memory_in_use(&self) -> usize {
        self.states.iter().map(|s| s.lua.used_memory()).sum()
    }

    /// The script's name as messages give it (`pack/scripts/file.lua`).
    pub(super) fn script_name(&self, script: ScriptId) -> String {
        self.scripts
            .get(script.index())
            .and_then(Option::as_ref)
            .map_or_else(|| format!("script #{}", script.0), |s| s.name.clone())
    }
}

/// Keep `catalog`'s token type and card names in `lua`, the names token tables are made
/// of (a host serves one catalog's content).
pub(super) fn keep_names(lua: &mlua::Lua, catalog: &Catalog) -> mlua::Result<()> {
    let types: Vec<&str> = catalog
        .token_types()
        .iter()
        .map(|t| t.meta.id.as_str())
        .collect();
    let cards: Vec<&str> = catalog.cards().iter().map(|c| c.meta.id.as_str()).collect();
    raw::keep_names(lua, &types, &cards)
}

impl PackState {
    fn new(
        memory: usize,
        instructions: u64,
        budget: &Rc<ScriptBudget>,
        catalog: &Catalog,
    ) -> mlua::Result<PackState> {
        let budget = Rc::clone(budget);
        let (lua, freeze) = sandbox::new_state(&budget, memory)?;
        let slot = Rc::new(ctx::CallSlot::default());
        let table = ctx::make(&lua, &slot, &budget)?;
        keep_names(&lua, catalog)?;
        // The functions scripts call most get fast entries (their general twins stay).
        if let Some(meta) = table.metatable() {
            fast::install(&lua, &meta.raw_get("__index")?, (&slot, &budget))?;
        }
        let ctx = ctx::CtxTable::new(&lua, table)?;
        let caller = raw::Caller::new(&lua, &ctx.table)?;
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
            .map_err(|e| fail(Loc::default(), e.to_string()))?;
        // The top level may be as deep as anything else.
        let returned = stacker::maybe_grow(STACK_RED_ZONE, STACK_SEGMENT, || {
            let chunk = parse(&self.lua, source, name, &env, self.budget.load_deadline())?;
            let chunk = match chunk {
                Parsed::Chunk(f) => f,
                Parsed::Cut { line } => {
                    let over = self.budget.load_overrun().map_or_else(
                        || "loading took too long".to_string(),
                        budget::Overrun::describe,
                    );
                    return Err(mlua::Error::RuntimeError(format!(
                        "{name}:{line}: parsing the script stopped here: {over}"
                    )));
                }
            };
            let v = self
                .budget
                .guard(self.ctx.main(), || chunk.call::<Value>(()))?;
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
            .map_err(|e| fail(Loc::default(), e.to_string()))?;
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
