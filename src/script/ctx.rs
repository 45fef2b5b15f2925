//! The `ctx` table scripts receive: the only way a script sees or changes the game.
//!
//! The table and its functions are made once per Lua state. During a hook call the host
//! points [`Current`] at the engine's `Effects` (or, for the read-only `income` hook, at a
//! `GameView`); the functions reach the game through it and every change goes through
//! the engine's primitives, tagged with the script and the line of the call.

use std::cell::Cell;
use std::collections::HashMap;
use std::rc::Rc;

use mlua::{Lua, Table, Value};

use super::memo::Op;

use crate::rules::{
    Catalog, Cause, Cell as BoardCell, Effects, GameView, HookError, HookErrorKind, MoveResult,
    ScriptId, Seat, Token, TokenTypeId,
};

/// What the `ctx` functions act on right now.
#[derive(Clone, Copy, Default)]
pub(super) enum Current {
    /// No hook is running: `ctx` used outside its call is an error.
    #[default]
    Idle,
    /// A hook that may change the game.
    Effects(*mut Effects<'static>),
    /// The read-only `income` hook.
    View(*const GameView<'static>),
}

/// The slot the host fills for the duration of one hook call.
pub(super) struct CallSlot {
    current: Cell<Current>,
    script: Cell<ScriptId>,
    /// A bad ctx call in this hook call, kept even if the script caught it.
    failure: std::cell::RefCell<Option<HookError>>,
    /// The error of a fast `ctx` entry, for its general function to raise (see
    /// `fast.rs`).
    stash: std::cell::RefCell<Option<mlua::Error>>,
    /// The per-call fields of the hook call under way (`ctx.seat`, …).
    pub fields: Cell<Fields>,
    /// The record of the hook call under way, or the line of a replayed change.
    pub memo: super::memo::Recorder,
}

impl Default for CallSlot {
    fn default() -> Self {
        CallSlot {
            current: Cell::new(Current::Idle),
            script: Cell::new(ScriptId(0)),
            failure: std::cell::RefCell::new(None),
            stash: std::cell::RefCell::new(None),
            fields: Cell::new(Fields::default()),
            memo: super::memo::Recorder::default(),
        }
    }
}

/// Restores the previous [`Current`] when a hook call ends (also by error or unwinding),
/// so nested hook calls (an `on_destroyed` inside a `ctx:damage`) leave things as found.
pub(super) struct Entered<'a> {
    slot: &'a CallSlot,
    previous: (Current, ScriptId),
}

impl Drop for Entered<'_> {
    fn drop(&mut self) {
        self.slot.current.set(self.previous.0);
        self.slot.script.set(self.previous.1);
    }
}

impl CallSlot {
    /// Point `ctx` at `fx` until the returned guard is dropped.
    pub fn enter_effects<'s>(&'s self, fx: &mut Effects<'_>, script: ScriptId) -> Entered<'s> {
        // An error a fast entry kept for its general function that never raised it
        // (the general function failed first, converting an argument the script changed
        // meanwhile) belongs to no later call.
        self.stash.borrow_mut().take();
        let previous = (self.current.get(), self.script.get());
        let ptr: *mut Effects<'_> = fx;
        self.current.set(Current::Effects(ptr.cast()));
        self.script.set(script);
        Entered {
            slot: self,
            previous,
        }
    }

    /// Point `ctx` at a read-only view until the returned guard is dropped.
    pub fn enter_view<'s>(&'s self, view: &GameView<'_>, script: ScriptId) -> Entered<'s> {
        // An error a fast entry kept for its general function that never raised it
        // (the general function failed first, converting an argument the script changed
        // meanwhile) belongs to no later call.
        self.stash.borrow_mut().take();
        let previous = (self.current.get(), self.script.get());
        let ptr: *const GameView<'_> = view;
        self.current.set(Current::View(ptr.cast()));
        self.script.set(script);
        Entered {
            slot: self,
            previous,
        }
    }

    fn view<R>(&self, f: impl FnOnce(&GameView<'_>) -> mlua::Result<R>) -> mlua::Result<R> {
        match self.current.get() {
            Current::Idle => Err(outside()),
            // SAFETY: the pointer was made from a live `&mut Effects` by `enter_effects`,
            // whose guard is alive for as long as the hook call that can reach this code;
            // the host does not touch that `Effects` while the script runs, and nested hook
            // calls use pointers reborrowed from it that end before this one is used again.
            Current::Effects(p) => f(&unsafe { &*p }.view()),
            // SAFETY: as above, for the shared view given to `enter_view`.
            Current::View(p) => f(unsafe { &*p }),
        }
    }

    fn effects<R>(
        &self,
        lua: &Lua,
        what: &str,
        f: impl FnOnce(&mut Effects<'_>) -> Result<R, Refusal>,
    ) -> mlua::Result<R> {
        match self.current.get() {
            Current::Idle => Err(outside()),
            Current::View(_) => {
                let error = located(
                    lua,
                    &format!(
                        "ctx:{what} cannot change the game from a read-only hook (income, evaluate)"
                    ),
                );
                self.poison(lua, &error, HookErrorKind::Script);
                Err(error)
            }
            Current::Effects(p) => {
                // SAFETY: see `view`.
                let fx = unsafe { &mut *p };
                if let Some(failed) = fx.failure() {
                    // The move is refused already (too many events, say): stop the script.
                    let error = located(lua, &format!("ctx:{what}: {}", failed.message));
                    return Err(error);
                }
                // The line goes into the events' causes: none are kept in a look-ahead,
                // and it is found only once the call made an event (most calls on an
                // empty cell make none).
                let recording = fx.recording();
                let mark = fx.recorded();
                let script = self.script.get();
                let saved = fx.cause();
                fx.set_cause(Cause::Script {
                    script,
                    line: if recording { PENDING_LINE } else { 0 },
                });
                let result = f(fx);
                fx.set_cause(saved);
                // A recorded call keeps every change's line, for its events when it is
                // replayed; a replay gives the recorded one.
                let made = recording && fx.recorded() > mark;
                if made || self.memo.on() {
                    let line = self.memo.line.get().unwrap_or_else(|| caller_line(lua));
                    if made {
                        fx.set_line_since(mark, script, PENDING_LINE, line);
                    }
                    self.memo.last_line.set(line);
                }
                // A limit the change ran into (too many events) stops the script too.
                let failed = fx.failure().cloned();
                let kind = failed.as_ref().map_or(HookErrorKind::Script, |f| f.kind);
                let result = match (result, failed) {
                    (Ok(_), Some(failed)) => Err(Refusal::Rules(failed)),
                    (result, _) => result,
                };
                result.map_err(|e| {
                    // A failure of a hook this call triggered already names its own
                    // script and line: that is the place to show, not every caller's.
                    let (error, place) = match e {
                        Refusal::Rules(HookError {
                            place: Some(place),
                            message,
                            ..
                        }) => (mlua::Error::RuntimeError(message), Some(place)),
                        Refusal::Rules(HookError { message, .. }) | Refusal::Call(message) => (
                            located(lua, &format!("ctx:{what}: {message}")),
                            super::place::script_place_of(lua),
                        ),
                    };
                    // A bad ctx call refuses the move even when the script catches it.
                    let failure = HookError::at(kind, place, super::message::message(&error));
                    fx.fail(failure.clone());
                    self.failure.borrow_mut().get_or_insert(failure);
                    error
                })
            }
        }
    }
}

/// Why a `ctx` call could not change the game.
pub(super) enum Refusal {
    /// The call itself is wrong (a seat that is not 1 or 2, a value out of range): placed
    /// at the script line calling `ctx`.
    Call(String),
    /// The rules refused the change or a hook it triggered failed, with that failure's
    /// own place when it has one.
    Rules(HookError),
}

impl From<String> for Refusal {
    fn from(text: String) -> Refusal {
        Refusal::Call(text)
    }
}

impl From<ArgError> for Refusal {
    fn from(e: ArgError) -> Refusal {
        Refusal::Call(e.to_string())
    }
}

/// The line in a `ctx` call's cause while the call runs, before its events get the
/// call's real line (no script has this many lines: sources are capped).
const PENDING_LINE: u32 = u32::MAX;

fn outside() -> mlua::Error {
    mlua::Error::RuntimeError(
        "ctx can only be used during the hook call it was given to".to_string(),
    )
}

/// The line of the script code calling a `ctx` function. A Lua frame right above the
/// call is always the script (the sandbox's own Lua functions never call `ctx`); only a
/// call through `pcall` (a C frame) needs the slower walk.
fn caller_line(lua: &Lua) -> u32 {
    if let Some(state) = super::place::calling() {
        // SAFETY: a fast entry under way set this: the thread calling it, alive.
        return unsafe { super::place::raw_caller_line(state) };
    }
    lua.inspect_stack(1, |d| d.current_line())
        .flatten()
        .and_then(|l| u32::try_from(l).ok())
        .or_else(|| super::place::caller(lua).map(|(_, line)| line))
        .unwrap_or(0)
}

/// The scripts' sources by name (`pack/scripts/x.lua`), for advice on the failing line.
#[derive(Default)]
pub(super) struct Sources(pub HashMap<String, String>);

/// An error message with the calling script's `file:line:` in front, and a word on a
/// `ctx.name(…)` call on that line (which passes no ctx).
fn located(lua: &Lua, message: &str) -> mlua::Error {
    let Some((file, line)) = super::place::caller(lua) else {
        return mlua::Error::RuntimeError(message.to_string());
    };
    let hint = lua
        .app_data_ref::<Sources>()
        .and_then(|s| {
            let text = s.0.get(&file)?;
            let code = text.lines().nth(usize::try_from(line).ok()?.checked_sub(1)?)?;
            super::diagnose::dot_calls(code).first().map(|&(_, _, name)| {
                format!(" (`ctx.{name}(…)` passes no ctx, so the arguments shift: write `ctx:{name}(…)`)")
            })
        })
        .unwrap_or_default();
    mlua::Error::RuntimeError(format!("{file}:{line}: {message}{hint}"))
}

/// A whole-number argument of a ctx call. A wrong value is reported at the calling
/// script's line and refuses the move, like every bad ctx argument.
pub(super) struct Int(pub i64);

impl mlua::FromLua for Int {
    fn from_lua(value: Value, lua: &Lua) -> mlua::Result<Int> {
        let found = match value {
            Value::Integer(n) => return Ok(Int(n)),
            Value::Number(f) if f.fract() == 0.0 && f.abs() < 9.0e15 => {
                #[allow(clippy::cast_possible_truncation)]
                return Ok(Int(f as i64));
            }
            other => describe_value(&other),
        };
        Err(bad_argument(
            lua,
            &format!("expected a whole number, got {found}"),
        ))
    }
}

/// An argument error at the calling script's line, which also refuses the move.
fn bad_argument(lua: &Lua, message: &str) -> mlua::Error {
    let error = located(lua, message);
    if let Some(slot) = lua.app_data_ref::<Rc<CallSlot>>() {
        slot.poison(lua, &error, HookErrorKind::Script);
    }
    error
}

/// A Lua value as an error message describes what a script gave: `nothing (nil)`,
/// `the number 2.5`, `true`, `a string`, `a table`. The one wording of `src/script`
/// (ctx arguments, a script's returned value, its hooks).
pub(super) fn describe_value(value: &Value) -> String {
    match value {
        Value::Nil => "nothing (nil)".to_string(),
        Value::Integer(n) => format!("the number {n}"),
        Value::Number(f) => format!("the number {}", super::message::number_text(*f)),
        Value::Boolean(b) => format!("the boolean {b}"),
        other => a_type(other),
    }
}

/// A value's Lua type with its article: `a table`, `an error`.
pub(super) fn a_type(value: &Value) -> String {
    let name = value.type_name();
    let article = if name.starts_with(['a', 'e', 'i', 'o', 'u']) {
        "an"
    } else {
        "a"
    };
    format!("{article} {name}")
}

/// The longest name (of a token type) a `ctx` call takes, in bytes: far longer than any
/// id, and short enough that looking it up costs nothing.
pub(super) const MAX_NAME: usize = 256;

/// A name argument (a string, or a number written as text), at most [`MAX_NAME`] bytes.
pub(super) struct Text(pub String);

impl mlua::FromLua for Text {
    fn from_lua(value: Value, lua: &Lua) -> mlua::Result<Text> {
        match &value {
            Value::String(s) if s.as_bytes().len() > MAX_NAME => Err(bad_argument(
                lua,
                &format!(
                    "a name is at most {MAX_NAME} bytes, got a string of {} bytes",
                    s.as_bytes().len()
                ),
            )),
            Value::String(s) => Ok(Text(s.to_string_lossy())),
            Value::Integer(n) => Ok(Text(n.to_string())),
            Value::Number(f) => Ok(Text(f.to_string())),
            other => Err(bad_argument(
                lua,
                &format!("expected a string, got {}", describe_value(other)),
            )),
        }
    }
}

/// `ctx:spawn`'s `{seat =, value =, type =}`, each optional (nil: all defaults).
pub(super) struct Spec {
    seat: Option<i64>,
    value: Option<i64>,
    kind: Option<String>,
}

impl Spec {
    /// A spec read by a fast entry (plain integers, a name of at most [`MAX_NAME`] bytes).
    pub(super) fn plain(seat: Option<i64>, value: Option<i64>, kind: Option<String>) -> Spec {
        Spec { seat, value, kind }
    }
}

impl mlua::FromLua for Spec {
    fn from_lua(value: Value, lua: &Lua) -> mlua::Result<Spec> {
        match value {
            Value::Table(t) => {
                // A table made when the script loaded is frozen: its fields are in the
                // table its metatable's `__frozen` holds (see prelude.lua).
                let t = t
                    .metatable()
                    .and_then(|m| m.raw_get::<mlua::Table>("__frozen").ok())
                    .unwrap_or(t);
                Ok(Spec {
                    seat: t.raw_get::<Option<Int>>("seat")?.map(|i| i.0),
                    value: t.raw_get::<Option<Int>>("value")?.map(|i| i.0),
                    kind: t.raw_get::<Option<Text>>("type")?.map(|t| t.0),
                })
            }
            other => Err(bad_argument(
                lua,
                &format!(
                    "ctx:spawn needs a spec table, such as {{}} for a basic 1 of ctx.seat or \
                     {{seat = 1, value = 2, type = 'basic'}}; got {}",
                    describe_value(&other)
                ),
            )),
        }
    }
}

impl CallSlot {
    /// Refuse the move under way (if any) with this error of a `ctx` call, even if the
    /// script catches it: placed at the script line calling `ctx`.
    fn poison(&self, lua: &Lua, error: &mlua::Error, kind: HookErrorKind) {
        let failure = HookError::at(
            kind,
            super::place::script_place_of(lua),
            super::message::message(error),
        );
        if let Current::Effects(p) = self.current.get() {
            // SAFETY: see `view`; only the failure slot is touched.
            let fx = unsafe { &mut *p };
            fx.fail(failure.clone());
        }
        self.failure.borrow_mut().get_or_insert(failure);
    }

    /// The bad ctx call of the hook call that just ended, if any.
    pub fn take_failure(&self) -> Option<HookError> {
        self.failure.borrow_mut().take()
    }

    /// Keep a fast entry's error for its general function to raise.
    pub(super) fn stash(&self, error: mlua::Error) {
        *self.stash.borrow_mut() = Some(error);
    }

    /// The error a fast entry kept, if any (taken).
    pub(super) fn take_stash(&self) -> Option<mlua::Error> {
        self.stash.borrow_mut().take()
    }
}

fn cell(x: i64, y: i64) -> BoardCell {
    let c = |v: i64| i32::try_from(v).unwrap_or(i32::MAX);
    BoardCell::new(c(x), c(y))
}

/// A number argument of a `ctx` call that is out of its range.
#[derive(Debug, thiserror::Error)]
pub(super) enum ArgError {
    /// Not a seat number.
    #[error("a seat is 1 or 2, got {0}")]
    Seat(i64),
    /// Past what the board's numbers hold.
    #[error("{what} {value} is out of range")]
    Range {
        /// What the number is (`value`, `damage`).
        what: &'static str,
        /// The number given.
        value: i64,
    },
}

fn seat(n: i64) -> Result<Seat, ArgError> {
    Seat::from_number(n).ok_or(ArgError::Seat(n))
}

fn in_range(value: i64, what: &'static str) -> Result<i32, ArgError> {
    i32::try_from(value).map_err(|_| ArgError::Range { what, value })
}

/// What every `ctx` call is charged, in instructions, before any work.
pub(super) const CALL_INSTRUCTIONS: u64 = 16;
/// [`CALL_INSTRUCTIONS`] as the charges of work measured in parts take it.
#[allow(clippy::cast_precision_loss)]
pub(super) const CALL_COST: f64 = CALL_INSTRUCTIONS as f64;

/// Charge a `ctx` call's fixed cost, [`CALL_INSTRUCTIONS`], like [`charge`].
pub(super) fn charge_call(
    lua: &Lua,
    budget: &super::sandbox::ScriptBudget,
    what: &str,
) -> mlua::Result<()> {
    budget
        .charge_whole(CALL_INSTRUCTIONS)
        .map_err(|o| overrun(lua, o, what))
}

/// Charge `cost` for a `ctx` call's work: an error (which refuses the move) when the
/// budget is spent or the move's time is up.
pub(super) fn charge(
    lua: &Lua,
    budget: &super::sandbox::ScriptBudget,
    cost: f64,
    what: &str,
) -> mlua::Result<()> {
    budget.charge(cost).map_err(|o| overrun(lua, o, what))
}

/// The error of a `ctx` call that found the budget spent, which also refuses the move.
#[cold]
fn overrun(lua: &Lua, o: super::sandbox::Overrun, what: &str) -> mlua::Error {
    let error = located(lua, &format!("ctx:{what}: {}", o.describe()));
    if let Some(slot) = lua.app_data_ref::<Rc<CallSlot>>() {
        slot.poison(lua, &error, HookErrorKind::Limit);
    }
    error
}

/// The name of a key in a message, never an address.
fn key_name(key: &Value) -> String {
    match key {
        Value::String(s) => crate::rules::echo(&s.to_string_lossy()),
        Value::Integer(n) => n.to_string(),
        other => format!("{} key", a_type(other)),
    }
}

/// Build the `ctx` table for a state; its functions act on `slot`, charged to `budget`.
/// The `ctx` functions whose calls a hook call's record holds (see `memo.rs`): their
/// bodies below record themselves. Any other spoils the record.
const RECORDED: &[&str] = &[
    "width",
    "height",
    "on_board",
    "token",
    "empty",
    "seat_at",
    "value_at",
    "type_at",
    "score",
    "target_count",
    "target",
    "targets",
    "damage",
    "set_value",
    "move",
    "remove",
    "spawn",
    "set_type",
    "extra_turn",
    "add_score",
];

pub(super) fn make(
    lua: &Lua,
    slot: &Rc<CallSlot>,
    budget: &Rc<super::sandbox::ScriptBudget>,
) -> mlua::Result<Table> {
    // The functions live in a table scripts only read through ctx's metatable, so no
    // script can replace them; the per-call fields are read from the slot through that
    // table's own metatable (`fast::install`).
    let methods = lua.create_table()?;
    let ctx = lua.create_table()?;
    let meta = lua.create_table()?;
    meta.raw_set("__index", &methods)?;
    meta.raw_set(
        "__newindex",
        lua.create_function(|lua, (_t, key): (Value, Value)| -> mlua::Result<()> {
            Err(located(
                lua,
                &format!(
                    "ctx cannot be changed by scripts (tried to set '{}')",
                    key_name(&key)
                ),
            ))
        })?,
    )?;
    meta.raw_set("__metatable", false)?;
    ctx.set_metatable(Some(meta))?;

    // A method's first argument is `ctx` itself (`ctx:damage(…)`), or whatever a script
    // passes instead: it is read as a truth value, the one conversion that accepts any
    // value without taking a reference to it (most of the cost of a short call otherwise).
    macro_rules! func {
        ($name:literal, |$lua:ident, $slot:ident, $args:tt : $ty:ty| $body:expr) => {{
            let $slot = Rc::clone(slot);
            let budget = Rc::clone(budget);
            methods.raw_set(
                $name,
                lua.create_function(move |$lua, (_ctx, $args): (bool, $ty)| {
                    // A fast entry that failed hands its error here to be raised.
                    if let Some(error) = $slot.take_stash() {
                        return Err(error);
                    }
                    charge_call($lua, &budget, $name)?;
                    if !RECORDED.contains(&$name) {
                        $slot.memo.spoil();
                    }
                    let $slot = &$slot;
                    $body
                })?,
            )?;
        }};
    }
    // What a ctx call that builds one table per token or cell is charged per table.
    let per_table = {
        let budget = Rc::clone(budget);
        move |lua: &Lua, n: usize, what: &str| {
            #[allow(clippy::cast_precision_loss)]
            let cost = n as f64 * CALL_COST;
            charge(lua, &budget, cost, what)
        }
    };
    let per_table_targets = per_table.clone();

    func!("width", |_lua, s, (): ()| width(s));
    func!("height", |_lua, s, (): ()| height(s));
    func!(
        "on_board",
        |_lua, s, (Int(x), Int(y)): (Int, Int)| on_board(s, x, y)
    );
    func!("token", |lua, s, (Int(x), Int(y)): (Int, Int)| {
        match token_at(s, x, y)? {
            Some(t) => Ok(Value::Table(t.table(lua)?)),
            None => Ok(Value::Nil),
        }
    });
    func!("empty", |_lua, s, (Int(x), Int(y)): (Int, Int)| empty(
        s, x, y
    ));
    func!("seat_at", |_lua, s, (Int(x), Int(y)): (Int, Int)| seat_at(
        s, x, y
    ));
    func!(
        "value_at",
        |_lua, s, (Int(x), Int(y)): (Int, Int)| value_at(s, x, y)
    );
    func!("type_at", |lua, s, (Int(x), Int(y)): (Int, Int)| {
        match type_at(s, x, y)? {
            Some(name) => Ok(Value::String(lua.create_string(name.bytes())?)),
            None => Ok(Value::Nil),
        }
    });
    func!("tokens", |lua, s, (): ()| {
        let tokens = s.view(|v| {
            Ok(v.state
                .board()
                .tokens()
                .map(|(at, t)| TokenOut::new(v.catalog, at, t))
                .collect::<Vec<_>>())
        })?;
        per_table(lua, tokens.len(), "tokens")?;
        // SAFETY: one protected call makes the list and its tables (`list_of`).
        unsafe { list_of(lua, &tokens, |state, keys, token| token.push(state, keys)) }
    });
    func!("score", |lua, s, (Int(n),): (Int,)| score(lua, s, n));
    func!("targets", |lua, s, (): ()| {
        let mut cells = Vec::new();
        s.targets(|_, at| {
            cells.push([i64::from(at.x), i64::from(at.y)]);
            Ok(())
        })?;
        per_table_targets(lua, cells.len(), "targets")?;
        target_source(s)?;
        // SAFETY: one protected call makes the list and its tables (`list_of`); each
        // pair table is a raw set of two keys.
        unsafe {
            list_of(lua, &cells, |state, keys, xy| {
                use mlua::ffi;
                ffi::lua_createtable(state, 0, 2);
                for (key, n) in [Key::X, Key::Y].into_iter().zip(xy) {
                    push_key(state, keys, key);
                    ffi::lua_pushinteger(state, *n);
                    ffi::lua_rawset(state, -3);
                }
            })
        }
    });
    func!("target_count", |_lua, s, (): ()| target_count(s));
    func!("target", |_lua, s, (Int(i),): (Int,)| {
        Ok(match target(s, i)? {
            Some((x, y)) => (Value::Integer(x.into()), Value::Integer(y.into())),
            None => (Value::Nil, Value::Nil),
        })
    });
    func!(
        "damage",
        |lua, s, (Int(x), Int(y), Int(n)): (Int, Int, Int)| damage(lua, s, x, y, n)
    );
    func!("set_value", |lua,
                        s,
                        (Int(x), Int(y), Int(value)): (
        Int,
        Int,
        Int
    )| set_value(lua, s, x, y, value));
    func!("move", |lua,
                   s,
                   (Int(x), Int(y), Int(tx), Int(ty)): (
        Int,
        Int,
        Int,
        Int
    )| move_token(lua, s, x, y, tx, ty));
    func!("remove", |lua, s, (Int(x), Int(y)): (Int, Int)| remove(
        lua, s, x, y
    ));
    func!(
        "spawn",
        |lua, s, (Int(x), Int(y), spec): (Int, Int, Spec)| spawn(lua, s, x, y, Spawned::Spec(spec))
    );
    func!("set_type", |lua,
                       s,
                       (Int(x), Int(y), Text(kind)): (
        Int,
        Int,
        Text
    )| set_type(lua, s, x, y, Kind::Named(kind)));
    func!("extra_turn", |lua, s, (Int(n),): (Int,)| extra_turn(
        lua, s, n
    ));
    func!("add_score", |lua, s, (Int(n), Int(amount)): (Int, Int)| {
        add_score(lua, s, n, amount)
    });
    func!("random", |lua, s, (Int(n),): (Int,)| random(lua, s, n));
    func!("log", |lua, s, (text,): (Value,)| {
        let text = match text {
            Value::String(t) => t,
            Value::Integer(n) => lua.create_string(n.to_string())?,
            Value::Number(f) => lua.create_string(super::message::number_text(f))?,
            other => {
                return Err(bad_argument(
                    lua,
                    &format!("expected a string, got {}", describe_value(&other)),
                ));
            }
        };
        s.effects(lua, "log", |fx| {
            // Measured before it is copied: text past the move's room is refused unread.
            let len = text.as_bytes().len();
            if len > fx.log_room() {
                let limit = fx.catalog().rules().limits.log_bytes;
                let error = HookError::of(
                    HookErrorKind::Limit,
                    format!(
                        "the move logged more than {limit} bytes of text (rules.limits.log_bytes)"
                    ),
                );
                fx.fail(error.clone());
                return Err(Refusal::Rules(error));
            }
            fx.log(super::message::clean(&text.to_string_lossy()))
                .map_err(Refusal::Rules)
        })
    });
    Ok(ctx)
}

// The bodies of the `ctx` functions that have a fast entry (see `fast.rs`): each is
// called by the general function (arguments converted by mlua) and by the fast entry
// (plain integers read off the stack), so both behave alike by construction.

//
// Each records its call in the slot's record when one is made (see `memo.rs`); a `ctx`
// function without a record spoils it instead.

pub(super) fn width(s: &CallSlot) -> mlua::Result<i32> {
    s.memo
        .noted(s.view(|v| Ok(v.state.board().width())), Op::Width)
}

pub(super) fn height(s: &CallSlot) -> mlua::Result<i32> {
    s.memo
        .noted(s.view(|v| Ok(v.state.board().height())), Op::Height)
}

pub(super) fn on_board(s: &CallSlot, x: i64, y: i64) -> mlua::Result<bool> {
    let result = s.view(|v| Ok(v.state.board().contains(cell(x, y))));
    s.memo.noted(result, |out| Op::OnBoard { x, y, out })
}

/// The token on `(x, y)` as the board holds it (recorded like `ctx:token`).
pub(super) fn token_raw(s: &CallSlot, x: i64, y: i64) -> mlua::Result<Option<Token>> {
    s.memo
        .noted(s.board_token(x, y), |out| Op::Token { x, y, out })
}

pub(super) fn token_at(s: &CallSlot, x: i64, y: i64) -> mlua::Result<Option<TokenOut>> {
    let token = token_raw(s, x, y)?;
    s.view(|v| Ok(token.map(|t| TokenOut::new(v.catalog, cell(x, y), t))))
}

pub(super) fn empty(s: &CallSlot, x: i64, y: i64) -> mlua::Result<bool> {
    let result = s.view(|v| Ok(is_empty(v.state.board(), cell(x, y))));
    s.memo.noted(result, |out| Op::Empty { x, y, out })
}

/// Whether `at` is on `board` and holds no token (what `ctx:empty` says).
fn is_empty(board: &crate::rules::Board, at: BoardCell) -> bool {
    board.contains(at) && board.get(at).is_none()
}

pub(super) fn seat_at(s: &CallSlot, x: i64, y: i64) -> mlua::Result<Option<i64>> {
    let result = s.view(|v| Ok(v.state.board().get(cell(x, y)).map(|t| t.seat)));
    s.memo
        .noted(result, |out| Op::SeatAt { x, y, out })
        .map(|seat| seat.map(|seat| seat.number().into()))
}

pub(super) fn value_at(s: &CallSlot, x: i64, y: i64) -> mlua::Result<Option<i64>> {
    let result = s.view(|v| Ok(v.state.board().get(cell(x, y)).map(|t| t.value)));
    s.memo
        .noted(result, |out| Op::ValueAt { x, y, out })
        .map(|value| value.map(i64::from))
}

pub(super) fn type_at(s: &CallSlot, x: i64, y: i64) -> mlua::Result<Option<NameOut>> {
    let result = s.view(|v| Ok(v.state.board().get(cell(x, y)).map(|t| t.kind)));
    let kind = s.memo.noted(result, |out| Op::TypeAt { x, y, out })?;
    s.view(|v| Ok(kind.map(|kind| NameOut::of_type(v.catalog, kind))))
}

pub(super) fn score(lua: &Lua, s: &CallSlot, n: i64) -> mlua::Result<i64> {
    let result = seat(n)
        .map_err(|e| {
            let error = located(lua, &format!("ctx:score: {e}"));
            s.poison(lua, &error, HookErrorKind::Script);
            error
        })
        .and_then(|seat| s.view(|v| Ok(v.state.score(seat))));
    s.memo.noted(result, |out| Op::Score { n, out })
}

pub(super) fn target_count(s: &CallSlot) -> mlua::Result<usize> {
    let result = s.with_effects(0, |fx| fx.targets().count());
    s.memo.noted(result, Op::TargetCount)
}

pub(super) fn target(s: &CallSlot, i: i64) -> mlua::Result<Option<(i32, i32)>> {
    let result = s.with_effects(None, |fx| {
        let n = usize::try_from(i).ok()?.checked_sub(1)?;
        fx.targets().nth(n).map(|at| (at.x, at.y))
    });
    s.memo.noted(result, |out| Op::Target { i, out })
}

/// Where `ctx:targets()` takes its cells from (recorded like a read): the area, by its
/// offsets' fingerprint, and the cell it is centred on; a read-only hook has no area
/// (fingerprint 0, like an empty one).
pub(super) fn target_source(s: &CallSlot) -> mlua::Result<(u64, (i32, i32))> {
    let result = s.with_effects((0, (0, 0)), |fx| {
        let origin = fx.origin();
        (fx.area().fingerprint(), (origin.x, origin.y))
    });
    s.memo
        .noted(result, |(area, origin)| Op::Targets { area, origin })
}

/// What `ctx:spawn` places: as a script's spec says, or as a replay recorded it.
pub(super) enum Spawned {
    Spec(Spec),
    Resolved(Seat, i32, TokenTypeId),
}

pub(super) fn spawn(lua: &Lua, s: &CallSlot, x: i64, y: i64, what: Spawned) -> mlua::Result<bool> {
    resolved_change(
        lua,
        s,
        ("spawn", x, y),
        |fx| match what {
            Spawned::Resolved(seat, value, kind) => Ok((seat, value, kind)),
            Spawned::Spec(spec) => {
                let seat = match spec.seat {
                    Some(n) => seat(n)?,
                    None => fx.mover(),
                };
                let value = in_range(spec.value.unwrap_or(1), "value")?;
                let kind = fx
                    .catalog()
                    .token_type_named(spec.kind.as_deref().unwrap_or("basic"))
                    .map_err(|e| e.to_string())?;
                Ok((seat, value, kind))
            }
        },
        |fx, (seat, value, kind)| {
            fx.spawn(cell(x, y), seat, value, kind)
                .map_err(Refusal::Rules)
        },
        |(seat, value, kind), out, line| Op::Spawn {
            at: (x, y),
            seat,
            value,
            kind,
            out,
            line,
        },
    )
}

/// The type `ctx:set_type` gives: named by a script, or as a replay recorded it.
pub(super) enum Kind {
    Named(String),
    Id(TokenTypeId),
}

pub(super) fn set_type(lua: &Lua, s: &CallSlot, x: i64, y: i64, kind: Kind) -> mlua::Result<bool> {
    resolved_change(
        lua,
        s,
        ("set_type", x, y),
        |fx| match kind {
            Kind::Id(id) => Ok(id),
            Kind::Named(name) => Ok(fx
                .catalog()
                .token_type_named(&name)
                .map_err(|e| e.to_string())?),
        },
        |fx, kind| fx.set_type(cell(x, y), kind).map_err(Refusal::Rules),
        |kind, out, line| Op::SetType {
            at: (x, y),
            kind,
            out,
            line,
        },
    )
}

/// A change on `(x, y)` whose arguments are worked out first (`resolve`: a seat, a
/// type named by a script) and then made (`apply`): the record (`op`) keeps them worked
/// out, so a replay makes the same change however the script named them. A call refused
/// before they were worked out spoils the record.
fn resolved_change<R: Copy>(
    lua: &Lua,
    s: &CallSlot,
    (what, x, y): (&str, i64, i64),
    resolve: impl FnOnce(&mut Effects<'_>) -> Result<R, Refusal>,
    apply: impl FnOnce(&mut Effects<'_>, R) -> Result<bool, Refusal>,
    op: impl FnOnce(R, bool, u32) -> Op,
) -> mlua::Result<bool> {
    let mut made = None;
    s.before(x, y);
    let result = s.effects(lua, what, |fx| {
        let resolved = resolve(fx)?;
        made = Some(resolved);
        apply(fx, resolved)
    });
    let Some(resolved) = made else {
        s.memo.spoil();
        return result;
    };
    changed(s, result, |out, line| op(resolved, out, line))
}

impl CallSlot {
    /// The token on `(x, y)`, unrecorded.
    fn board_token(&self, x: i64, y: i64) -> mlua::Result<Option<Token>> {
        self.view(|v| Ok(v.state.board().get(cell(x, y))))
    }

    /// While recording, whether `(x, y)` holds a token before the call's first change
    /// ([`Op::Before`]).
    fn before(&self, x: i64, y: i64) {
        if self.memo.first_change() {
            // An error here spoils the record, like any read's.
            let _ = self.memo.noted(self.board_token(x, y), |seen| Op::Before {
                x,
                y,
                taken: seen.is_some(),
            });
        }
    }
}

/// Record a change's `result` (with the line it was made from).
fn changed<T: Copy>(
    s: &CallSlot,
    result: mlua::Result<T>,
    op: impl FnOnce(T, u32) -> Op,
) -> mlua::Result<T> {
    let line = s.memo.last_line.get();
    s.memo.noted(result, |out| op(out, line))
}

pub(super) fn damage(lua: &Lua, s: &CallSlot, x: i64, y: i64, n: i64) -> mlua::Result<bool> {
    s.before(x, y);
    let result = s.effects(lua, "damage", |fx| {
        if n < 0 {
            return Err(Refusal::Call(format!(
                "damage must be 0 or more, got {n} (use ctx:set_value to raise a value)"
            )));
        }
        let n = in_range(n, "damage")?;
        fx.damage(cell(x, y), n).map_err(Refusal::Rules)
    });
    changed(s, result, |out, line| Op::Damage { x, y, n, out, line })
}

pub(super) fn set_value(lua: &Lua, s: &CallSlot, x: i64, y: i64, value: i64) -> mlua::Result<bool> {
    s.before(x, y);
    let result = s.effects(lua, "set_value", |fx| {
        let value = in_range(value, "value")?;
        fx.set_value(cell(x, y), value).map_err(Refusal::Rules)
    });
    changed(s, result, |out, line| Op::SetValue {
        x,
        y,
        value,
        out,
        line,
    })
}

pub(super) fn move_token(
    lua: &Lua,
    s: &CallSlot,
    x: i64,
    y: i64,
    tx: i64,
    ty: i64,
) -> mlua::Result<bool> {
    s.before(x, y);
    let result = s.effects(lua, "move", |fx| {
        match fx
            .move_token(cell(x, y), cell(tx, ty))
            .map_err(Refusal::Rules)?
        {
            MoveResult::Moved | MoveResult::Removed => Ok(true),
            MoveResult::Blocked => Ok(false),
            MoveResult::NoToken => Err(Refusal::Call(format!(
                "there is no token at ({x}, {y}) to move"
            ))),
        }
    });
    changed(s, result, |out, line| Op::Move {
        from: (x, y),
        to: (tx, ty),
        out,
        line,
    })
}

pub(super) fn remove(lua: &Lua, s: &CallSlot, x: i64, y: i64) -> mlua::Result<bool> {
    s.before(x, y);
    let result = s.effects(lua, "remove", |fx| {
        fx.remove(cell(x, y)).map_err(Refusal::Rules)
    });
    changed(s, result, |out, line| Op::Remove { x, y, out, line })
}

pub(super) fn extra_turn(lua: &Lua, s: &CallSlot, n: i64) -> mlua::Result<()> {
    let result = s.effects(lua, "extra_turn", |fx| {
        fx.extra_turn(seat(n)?);
        Ok(())
    });
    changed(s, result, |(), line| Op::ExtraTurn { n, line })
}

pub(super) fn add_score(lua: &Lua, s: &CallSlot, n: i64, amount: i64) -> mlua::Result<()> {
    let result = s.effects(lua, "add_score", |fx| {
        fx.add_score(seat(n)?, amount);
        Ok(())
    });
    changed(s, result, |(), line| Op::AddScore { n, amount, line })
}

pub(super) fn random(lua: &Lua, s: &CallSlot, n: i64) -> mlua::Result<i64> {
    // A draw moves the game's generator: a call that draws is never replayed.
    s.memo.spoil();
    s.effects(lua, "random", |fx| fx.random(n).map_err(Refusal::Rules))
}

/// Make the recorded call `op` again through `s` (a replay: nothing is recorded, a change
/// takes the recorded line): whether it returned what it returned before.
/// Whether a plain read of the board, `op`, gives on `board` what it gave; `None` for any
/// other call. Read straight off the board, not through its `ctx` function: nothing is
/// recorded during a replay, and a replay's reads before its first change all see one
/// board (looked up once for them).
fn read_on(board: &crate::rules::Board, op: Op) -> Option<bool> {
    match op {
        Op::Token { x, y, out } => Some(board.get(cell(x, y)) == out),
        Op::Before { x, y, taken } => Some(board.get(cell(x, y)).is_some() == taken),
        Op::OnBoard { x, y, out } => Some(board.contains(cell(x, y)) == out),
        Op::Empty { x, y, out } => Some(is_empty(board, cell(x, y)) == out),
        Op::SeatAt { x, y, out } => Some(board.get(cell(x, y)).map(|t| t.seat) == out),
        Op::ValueAt { x, y, out } => Some(board.get(cell(x, y)).map(|t| t.value) == out),
        Op::TypeAt { x, y, out } => Some(board.get(cell(x, y)).map(|t| t.kind) == out),
        _ => None,
    }
}

fn again(op: Op, lua: &Lua, s: &CallSlot) -> bool {
    let at = |line: u32| s.memo.line.set(Some(line));
    match op {
        Op::Token { .. }
        | Op::OnBoard { .. }
        | Op::Before { .. }
        | Op::Empty { .. }
        | Op::SeatAt { .. }
        | Op::ValueAt { .. }
        | Op::TypeAt { .. } => s
            .view(|v| Ok(read_on(v.state.board(), op)))
            .ok()
            .flatten()
            .unwrap_or(false),
        Op::Width(out) => width(s).ok() == Some(out),
        Op::Height(out) => height(s).ok() == Some(out),
        Op::Score { n, out } => score(lua, s, n).ok() == Some(out),
        Op::TargetCount(out) => target_count(s).ok() == Some(out),
        Op::Target { i, out } => target(s, i).ok() == Some(out),
        Op::Damage { x, y, n, out, line } => {
            at(line);
            damage(lua, s, x, y, n).ok() == Some(out)
        }
        Op::SetValue {
            x,
            y,
            value,
            out,
            line,
        } => {
            at(line);
            set_value(lua, s, x, y, value).ok() == Some(out)
        }
        Op::Move {
            from,
            to,
            out,
            line,
        } => {
            at(line);
            move_token(lua, s, from.0, from.1, to.0, to.1).ok() == Some(out)
        }
        Op::Remove { x, y, out, line } => {
            at(line);
            remove(lua, s, x, y).ok() == Some(out)
        }
        Op::ExtraTurn { n, line } => {
            at(line);
            extra_turn(lua, s, n).is_ok()
        }
        Op::Targets { area, origin } => target_source(s).ok() == Some((area, origin)),
        Op::Spawn {
            at: (x, y),
            seat,
            value,
            kind,
            out,
            line,
        } => {
            at(line);
            spawn(lua, s, x, y, Spawned::Resolved(seat, value, kind)).ok() == Some(out)
        }
        Op::SetType {
            at: (x, y),
            kind,
            out,
            line,
        } => {
            at(line);
            set_type(lua, s, x, y, Kind::Id(kind)).ok() == Some(out)
        }
        Op::AddScore { n, amount, line } => {
            at(line);
            add_score(lua, s, n, amount).is_ok()
        }
    }
}

impl CallSlot {
    /// Play back, on the effects or view this slot points at, the first of `variants`
    /// whose reads before its first change give what they gave, if `affords` its cost:
    /// its index when every `ctx` call went as recorded. When a call after a change did
    /// not, everything the replay changed is undone through `checkpoint` (kept at the
    /// first change), and so is the failure a refused change marked, and no other
    /// variant is tried.
    pub(super) fn replay(
        &self,
        lua: &Lua,
        variants: &super::memo::Variants,
        affords: impl Fn(u64) -> bool,
        checkpoint: &mut crate::rules::Checkpoint,
    ) -> Option<usize> {
        // The reads before a record's first change all see one board: it is looked up
        // once for them, and the plain board reads are checked against it directly.
        let reads_again = |ops: &[Op]| {
            self.view(|v| {
                let board = v.state.board();
                Ok(ops
                    .iter()
                    .all(|&op| read_on(board, op).unwrap_or_else(|| again(op, lua, self))))
            })
            .unwrap_or(false)
        };
        let (index, entry) = variants.0.iter().enumerate().find_map(|(i, e)| {
            let e = e.as_ref()?;
            (affords(e.cost) && reads_again(&e.ops[..e.reads])).then_some((i, e))
        })?;
        if entry.changes {
            self.checkpoint(checkpoint);
        }
        let same = entry.ops[entry.reads..]
            .iter()
            .all(|&op| again(op, lua, self));
        self.memo.line.set(None);
        if same {
            return Some(index);
        }
        self.rollback(checkpoint);
        let _ = self.take_failure();
        None
    }
}

/// A list (a sequence table) of one table per item, each pushed by `push`, made in one
/// protected call: through mlua's API each table and each field would be a protected
/// call of its own (a raw set, and a string pushed under a memory cap, are).
///
/// The field names are looked up once for the whole list (see [`Keys`]).
///
/// # Safety
/// `push` leaves exactly one value (the item's table) on the stack, needs at most six
/// slots, and only pushes and raw-sets (running out of memory raises a Lua error, which
/// the protected call catches; `push` holds nothing that needs dropping).
unsafe fn list_of<T>(
    lua: &Lua,
    items: &[T],
    push: impl Fn(*mut mlua::ffi::lua_State, Keys, &T),
) -> mlua::Result<Table> {
    use mlua::ffi;
    let size = std::ffi::c_int::try_from(items.len()).unwrap_or(std::ffi::c_int::MAX);
    // SAFETY: the contract; the keys table (or the nil in its place) stays under the
    // list and is taken off at the end, leaving the list alone on the stack, the one
    // result.
    unsafe {
        lua.exec_raw::<Table>((), |state| {
            let keys = push_keys(state);
            ffi::lua_createtable(state, size, 0);
            let mut n: ffi::lua_Integer = 0;
            for item in items {
                push(state, keys, item);
                n += 1;
                ffi::lua_rawseti(state, -2, n);
            }
            ffi::lua_remove(state, -2);
        })
    }
}

/// A field of a token or cell table (and of `ctx:spawn`'s spec: seat, value, type).
#[derive(Clone, Copy)]
pub(super) enum Key {
    X = 1,
    Y,
    Seat,
    Value,
    Type,
    Card,
}

impl Key {
    /// Every key, in the order of their numbers.
    const ALL: [Key; 6] = [Key::X, Key::Y, Key::Seat, Key::Value, Key::Type, Key::Card];

    fn name(self) -> &'static std::ffi::CStr {
        match self {
            Key::X => c"x",
            Key::Y => c"y",
            Key::Seat => c"seat",
            Key::Value => c"value",
            Key::Type => c"type",
            Key::Card => c"card",
        }
    }
}

/// The registry slot of a state's [`Key`] names as Lua strings (its address is the key):
/// pushing a kept string is a table read, where pushing a C string hashes it and looks
/// it up among the interned strings each time.
static KEYS_SLOT: u8 = 0;

fn keys_slot() -> *const std::ffi::c_void {
    (&raw const KEYS_SLOT).cast()
}

/// Which name a kept name is: the keys table keeps the names of token types and cards
/// as Lua strings beside the field names, type number `n` (from 1) at `8 + 2n` and card
/// number `n` at `9 + 2n`. A host serves one catalog's content (its clones share it), so
/// a number always stands for the same name. Bounded by the catalog.
#[derive(Clone, Copy)]
enum Name {
    Type = 0,
    Card = 1,
}

/// The slot of the kept name `number` (from 1) of kind `name` in the keys table.
fn name_slot(name: Name, number: i64) -> mlua::ffi::lua_Integer {
    number.saturating_mul(2).saturating_add(8 + name as i64)
}

/// Keep the [`Key`] names as Lua strings in `lua`'s registry, for [`push_key`], with room
/// for the type and card names [`push_name`] keeps.
pub(super) fn keep_keys(lua: &Lua) -> mlua::Result<()> {
    use mlua::ffi;
    // SAFETY: a protected call gives room for the table and a key, and catches running
    // out of memory; `lua_rawsetp` pops the table.
    unsafe {
        lua.exec_raw::<()>((), |state| {
            ffi::lua_createtable(state, 8, 0);
            for key in Key::ALL {
                ffi::lua_pushstring(state, key.name().as_ptr());
                ffi::lua_rawseti(state, -2, key as ffi::lua_Integer);
            }
            ffi::lua_rawsetp(state, ffi::LUA_REGISTRYINDEX, keys_slot());
        })
    }
}

/// Where a token or cell table finds its field names (and a token's type and card
/// names): the keys table [`keep_keys`] made, at a fixed stack index (an absolute index
/// or a C function's upvalue), or none (the names are pushed as C strings).
#[derive(Clone, Copy)]
pub(super) struct Keys(Option<std::ffi::c_int>);

impl Keys {
    /// Whether there is no keys table.
    pub(super) fn is_none(self) -> bool {
        self.0.is_none()
    }

    /// The keys table at `index` (absolute, or an upvalue's pseudo-index).
    ///
    /// # Safety
    /// While the result is used, the value at `index` is the table [`keep_keys`] made.
    pub(super) unsafe fn at(index: std::ffi::c_int) -> Keys {
        Keys(Some(index))
    }
}

/// Push the state's kept keys table, or nil where [`keep_keys`] never ran: where to find
/// it while it stays on the stack.
///
/// # Safety
/// `state` has room for one more value.
pub(super) unsafe fn push_keys(state: *mut mlua::ffi::lua_State) -> Keys {
    use mlua::ffi;
    // SAFETY: the contract; a raw read of the registry raises no error.
    unsafe {
        if ffi::lua_rawgetp(state, ffi::LUA_REGISTRYINDEX, keys_slot()) == ffi::LUA_TTABLE {
            Keys(Some(ffi::lua_absindex(state, -1)))
        } else {
            Keys(None)
        }
    }
}

/// Push `key`'s name: from the kept keys table when there is one, or else as a C string.
///
/// # Safety
/// `state` has room for one more value, and `keys` holds (see [`Keys::at`]).
pub(super) unsafe fn push_key(state: *mut mlua::ffi::lua_State, keys: Keys, key: Key) {
    use mlua::ffi;
    // SAFETY: the contract; a raw read of the keys table raises no error.
    unsafe {
        match keys.0 {
            Some(at) => {
                ffi::lua_rawgeti(state, at, key as ffi::lua_Integer);
            }
            None => {
                ffi::lua_pushstring(state, key.name().as_ptr());
            }
        }
    }
}

/// Push `name`, the name of type or card `number` (from 1): from the names kept in the
/// keys table when there is one (keeping it there the first time), or else as a new
/// string. Hashing a name and finding it among the interned strings costs more than a
/// table read, and tokens are read all the time.
///
/// # Safety
/// `state` has room for two more values, `name` points at its bytes, and `keys` holds
/// (see [`Keys::at`]). Running out of memory raises a Lua error (a long jump): the caller
/// holds nothing that needs dropping.
unsafe fn push_name(
    state: *mut mlua::ffi::lua_State,
    keys: Keys,
    kind: Name,
    number: i64,
    name: (*const u8, usize),
) {
    use mlua::ffi;
    // SAFETY: the contract; raw reads and sets run no metamethod; only the name is left
    // on the stack.
    unsafe {
        let Some(at) = keys.0 else {
            ffi::lua_pushlstring(state, name.0.cast(), name.1);
            return;
        };
        let slot = name_slot(kind, number);
        if ffi::lua_rawgeti(state, at, slot) == ffi::LUA_TSTRING {
            return;
        }
        ffi::lua_pop(state, 1);
        ffi::lua_pushlstring(state, name.0.cast(), name.1);
        ffi::lua_pushvalue(state, -1);
        ffi::lua_rawseti(state, at, slot);
    }
}

/// The number a name is kept under in the keys table: its index + 1.
fn number_of(index: usize) -> i64 {
    i64::try_from(index).map_or(i64::MAX, |i| i.saturating_add(1))
}

/// A token type's name as scripts see it (`ctx:type_at`, a token table's `type`): its number + 1 and its name,
/// which points into the catalog (it outlives every hook call).
#[derive(Clone, Copy)]
pub(super) struct NameOut(i64, (*const u8, usize));

impl NameOut {
    fn of_type(catalog: &Catalog, kind: TokenTypeId) -> NameOut {
        let name = catalog.token_type(kind).meta.id.as_str();
        NameOut(number_of(kind.index()), (name.as_ptr(), name.len()))
    }

    /// The name's bytes.
    fn bytes(&self) -> &[u8] {
        // SAFETY: the pointer and length were taken from a name of the catalog, which
        // outlives every hook call (and so this value).
        unsafe { std::slice::from_raw_parts(self.1.0, self.1.1) }
    }

    /// Push the name, found through `keys`.
    ///
    /// # Safety
    /// As for [`push_name`].
    pub(super) unsafe fn push(&self, state: *mut mlua::ffi::lua_State, keys: Keys) {
        // SAFETY: the contract.
        unsafe { push_name(state, keys, Name::Type, self.0, self.1) }
    }
}

/// A token as scripts see it, ready to become a table: `{x, y, seat, value, type, card}`.
/// The two names point into the catalog, which outlives every hook call.
#[derive(Clone, Copy)]
pub(super) struct TokenOut {
    numbers: [i64; 4],
    kind: NameOut,
    /// The card's number + 1 and name.
    card: Option<(i64, (*const u8, usize))>,
}

impl TokenOut {
    pub(super) fn new(catalog: &Catalog, at: BoardCell, token: Token) -> TokenOut {
        let kind = NameOut::of_type(catalog, token.kind);
        let card = token.card.map(|c| {
            let name = catalog.card(c).meta.id.as_str();
            (number_of(c.index()), (name.as_ptr(), name.len()))
        });
        TokenOut {
            numbers: [
                at.x.into(),
                at.y.into(),
                token.seat.number().into(),
                token.value.into(),
            ],
            kind,
            card,
        }
    }

    /// Push the token's table on `state`'s stack, its names found through `keys`.
    ///
    /// # Safety
    /// `state` has room for six more values, `keys` holds (see [`Keys::at`]), and the
    /// catalog the names point into is alive. Running out of memory raises a Lua error (a
    /// long jump): the caller holds nothing that needs dropping.
    pub(super) unsafe fn push(&self, state: *mut mlua::ffi::lua_State, keys: Keys) {
        use mlua::ffi;
        // SAFETY: see the function's contract; each field is a raw set of a key and a
        // value into the new table (no metamethod runs).
        unsafe {
            ffi::lua_createtable(state, 0, 6);
            let numbers = [Key::X, Key::Y, Key::Seat, Key::Value];
            for (key, n) in numbers.into_iter().zip(self.numbers) {
                push_key(state, keys, key);
                ffi::lua_pushinteger(state, n);
                ffi::lua_rawset(state, -3);
            }
            push_key(state, keys, Key::Type);
            self.kind.push(state, keys);
            ffi::lua_rawset(state, -3);
            if let Some((number, name)) = self.card {
                push_key(state, keys, Key::Card);
                push_name(state, keys, Name::Card, number, name);
                ffi::lua_rawset(state, -3);
            }
        }
    }

    /// Push the token's table on `state`'s stack, its names found through the keys table
    /// in the registry (looked up, then taken off again).
    ///
    /// # Safety
    /// `state` has room for seven more values and the catalog the names point into is
    /// alive. Running out of memory raises a Lua error (a long jump): the caller holds
    /// nothing that needs dropping.
    pub(super) unsafe fn push_alone(&self, state: *mut mlua::ffi::lua_State) {
        // SAFETY: the contract; the keys table (or the nil in its place) is taken off,
        // leaving the token's table on top.
        unsafe {
            let keys = push_keys(state);
            self.push(state, keys);
            mlua::ffi::lua_remove(state, -2);
        }
    }

    /// The token's table, made in one protected call (a raw set through the API is a
    /// protected call of its own, and so is pushing a string while a memory cap is set).
    pub(super) fn table(&self, lua: &Lua) -> mlua::Result<Table> {
        // SAFETY: a protected call gives room for the keys table, the token's table and a
        // key and value, and catches running out of memory; the token's table is left
        // alone on the stack.
        unsafe { lua.exec_raw::<Table>((), |state| self.push_alone(state)) }
    }
}

impl CallSlot {
    /// Keep what the current effects can change in `into` (nothing in a read-only hook).
    pub(super) fn checkpoint(&self, into: &mut crate::rules::Checkpoint) {
        if let Current::Effects(p) = self.current.get() {
            // SAFETY: see `view`.
            unsafe { &*p }.checkpoint(into);
        }
    }

    /// Put the current effects back as [`CallSlot::checkpoint`] kept them.
    pub(super) fn rollback(&self, from: &crate::rules::Checkpoint) {
        if let Current::Effects(p) = self.current.get() {
            // SAFETY: see `view`.
            unsafe { &mut *p }.rollback(from);
        }
    }

    /// `f` of the current effects (to read their area); `none` in a read-only hook,
    /// which has no area.
    fn with_effects<R>(&self, none: R, f: impl FnOnce(&Effects<'_>) -> R) -> mlua::Result<R> {
        match self.current.get() {
            // SAFETY: see `view`.
            Current::Effects(p) => Ok(f(unsafe { &*p })),
            Current::View(_) => Ok(none),
            Current::Idle => Err(outside()),
        }
    }

    /// Call `f(index, cell)` for each on-board cell of the current area.
    fn targets(&self, mut f: impl FnMut(usize, BoardCell) -> mlua::Result<()>) -> mlua::Result<()> {
        match self.current.get() {
            Current::Effects(p) => {
                // SAFETY: see `view`.
                let fx = unsafe { &*p };
                for (i, at) in fx.targets().enumerate() {
                    f(i, at)?;
                }
                Ok(())
            }
            Current::View(_) => Ok(()),
            Current::Idle => Err(outside()),
        }
    }
}

/// The `ctx` table, and the thread that runs its state's outermost hook calls.
pub(super) struct CtxTable {
    /// The table scripts receive.
    pub table: Table,
    /// The state's main thread, where outermost hook calls run (see
    /// [`CtxTable::set_fields`]).
    main: *mut mlua::ffi::lua_State,
}

impl CtxTable {
    /// Wrap `table`, made by [`make`] for `lua`.
    pub fn new(lua: &Lua, table: Table) -> mlua::Result<CtxTable> {
        let mut main = std::ptr::null_mut();
        // SAFETY: only reads the running thread's pointer.
        unsafe {
            lua.exec_raw::<()>((), |state| main = state)?;
        }
        Ok(CtxTable { table, main })
    }

    /// The state's main thread, on which its hooks run.
    pub fn main(&self) -> *mut mlua::ffi::lua_State {
        self.main
    }

    /// Set the per-call fields (kept in `slot`, read through ctx's metatable: nothing is
    /// written into Lua); with `restart`, also restart the state's instruction countdown
    /// (see [`super::sandbox::restart_countdown`]). False when a restart was asked for but
    /// no budget hook is set: the caller installs it.
    pub fn set_fields(
        &self,
        slot: &CallSlot,
        (mover, origin): (Seat, Option<BoardCell>),
        restart: bool,
    ) -> bool {
        slot.fields.set(Fields {
            seat: mover.number(),
            opponent: mover.other().number(),
            at: origin.map(|at| (at.x, at.y)),
        });
        // SAFETY: an outermost call runs on the state's main thread, which no Lua code is
        // running on now; restarting reads and sets its hook fields only.
        !restart || unsafe { super::sandbox::restart_countdown(self.main) }
    }
}

/// The per-call fields of `ctx`: `seat`, `opponent`, `x`, `y` (nil for `evaluate`).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Fields {
    pub seat: u8,
    pub opponent: u8,
    pub at: Option<(i32, i32)>,
}
