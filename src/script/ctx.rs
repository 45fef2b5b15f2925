//! The `ctx` table scripts receive: the only way a script sees or changes the game.
//!
//! The table and its functions are made once per Lua state. For the length of a hook call
//! the host lends the engine's `Effects` (or, for the read-only `income` and `evaluate`
//! hooks, a `GameView`) to the call's slot ([`CallSlot::lend`]); the functions reach the
//! game through it and every change goes through the engine's primitives, tagged with the
//! script and the line of the call.
//!
//! The per-call fields (`seat`, `x`, `y`, …) live in the `CallSlot` and are read through a
//! metatable: nothing is written into Lua at each hook call, and every assignment to `ctx`
//! is refused. Outside a hook call, `ctx` refuses to work. Token and cell tables are made by
//! `raw/stack.rs`. Every function begins with `prologue` (charge, and spoil the replay
//! record when its row has none), through its general function and its fast entry alike.

use std::cell::Cell;
use std::collections::HashMap;
use std::rc::Rc;

use mlua::{Lua, Table, Value};

use super::api::{self, Row};
use super::memo::Op;
pub(super) use super::raw::fast::MAX_NAME;
use super::raw::{Change, Lender, MainThread, Now, Target};
pub(super) use super::raw::{NameOut, TokenOut};

use crate::rules::{
    Cause, Cell as BoardCell, Effects, GameView, HookError, HookErrorKind, MoveResult, ScriptId,
    Seat, Token, TokenTypeId,
};

/// The slot the host fills for the duration of one hook call.
pub(super) struct CallSlot {
    /// What the hook call under way lent (nothing outside one).
    pub(super) lender: Lender,
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
            lender: Lender::default(),
            script: Cell::new(ScriptId(0)),
            failure: std::cell::RefCell::new(None),
            stash: std::cell::RefCell::new(None),
            fields: Cell::new(Fields::default()),
            memo: super::memo::Recorder::default(),
        }
    }
}

impl CallSlot {
    /// Lend `target` to `ctx` for script `script` while `f` runs (the hook call); a
    /// nested call (an `on_destroyed` inside a `ctx:damage`) leaves things as it found
    /// them.
    pub fn lend<R>(
        &self,
        target: &mut Target<'_, '_>,
        script: ScriptId,
        f: impl FnOnce() -> R,
    ) -> R {
        // An error a fast entry kept for its general function that never raised it
        // (the general function failed first, converting an argument the script changed
        // meanwhile) belongs to no later call.
        self.stash.borrow_mut().take();
        let previous = self.script.replace(script);
        let result = self.lender.lend(target, f);
        self.script.set(previous);
        result
    }

    pub(super) fn view<R>(
        &self,
        f: impl FnOnce(&GameView<'_>) -> mlua::Result<R>,
    ) -> mlua::Result<R> {
        self.lender.read(|now| match now {
            Now::Idle => Err(outside()),
            Now::Effects(fx) => f(&fx.view()),
            Now::View(view) => f(view),
            Now::Busy => Err(busy()),
        })
    }

    fn effects<R>(
        &self,
        lua: &Lua,
        what: &str,
        f: impl FnOnce(&mut Effects<'_>) -> Result<R, Refusal>,
    ) -> mlua::Result<R> {
        self.lender.change(|now| match now {
            Change::Idle => Err(outside()),
            Change::Busy => Err(busy()),
            Change::View => {
                let error = located(
                    lua,
                    &format!(
                        "ctx:{what} cannot change the game from a read-only hook (income, evaluate)"
                    ),
                );
                self.poison(lua, &error, HookErrorKind::Script);
                Err(error)
            }
            Change::Effects(fx) => {
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
        })
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

/// A `ctx` function reached the game while another one had it (only a bug of the host
/// does that: the game is never borrowed twice).
#[cold]
fn busy() -> mlua::Error {
    mlua::Error::RuntimeError(
        "ctx: the game is in use by another ctx call (a bug: please report it)".to_string(),
    )
}

/// The line of the script code calling a `ctx` function. A Lua frame right above the
/// call is always the script (the sandbox's own Lua functions never call `ctx`); only a
/// call through `pcall` (a C frame) needs the slower walk.
fn caller_line(lua: &Lua) -> u32 {
    if let Some(line) = super::raw::fast_caller_line() {
        return line;
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
        self.lender.change(|now| {
            if let Change::Effects(fx) = now {
                fx.fail(failure.clone());
            }
        });
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

pub(super) fn cell(x: i64, y: i64) -> BoardCell {
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
fn charge_call(lua: &Lua, budget: &super::budget::ScriptBudget, what: &str) -> mlua::Result<()> {
    budget
        .charge_whole(CALL_INSTRUCTIONS)
        .map_err(|o| overrun(lua, o, what))
}

/// What every `ctx` call does first, through its general function or its fast entry
/// alike: charge the call, and spoil the hook call's record when the function has none
/// (its row in [`api::CTX`]).
#[inline]
pub(super) fn prologue(
    lua: &Lua,
    budget: &super::budget::ScriptBudget,
    slot: &CallSlot,
    row: &Row,
) -> mlua::Result<()> {
    charge_call(lua, budget, row.name)?;
    if !row.recorded {
        slot.memo.spoil();
    }
    Ok(())
}

/// Charge `cost` for a `ctx` call's work: an error (which refuses the move) when the
/// budget is spent or the move's time is up.
pub(super) fn charge(
    lua: &Lua,
    budget: &super::budget::ScriptBudget,
    cost: f64,
    what: &str,
) -> mlua::Result<()> {
    budget.charge(cost).map_err(|o| overrun(lua, o, what))
}

/// The error of a `ctx` call that found the budget spent, which also refuses the move.
#[cold]
fn overrun(lua: &Lua, o: super::budget::Overrun, what: &str) -> mlua::Error {
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
pub(super) fn make(
    lua: &Lua,
    slot: &Rc<CallSlot>,
    budget: &Rc<super::budget::ScriptBudget>,
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

    let mut registered = 0;
    // A method's first argument is `ctx` itself (`ctx:damage(…)`), or whatever a script
    // passes instead: it is read as a truth value, the one conversion that accepts any
    // value without taking a reference to it (most of the cost of a short call otherwise).
    macro_rules! func {
        ($name:literal, |$lua:ident, $slot:ident, $args:tt : $ty:ty| $body:expr) => {{
            // Its row of the one table (a name the table lacks fails the build).
            const ROW: &Row = api::row($name);
            let $slot = Rc::clone(slot);
            let budget = Rc::clone(budget);
            methods.raw_set(
                ROW.name,
                lua.create_function(move |$lua, (_ctx, $args): (bool, $ty)| {
                    // A fast entry that failed hands its error here to be raised.
                    if let Some(error) = $slot.take_stash() {
                        return Err(error);
                    }
                    prologue($lua, &budget, &$slot, ROW)?;
                    let $slot = &$slot;
                    $body
                })?,
            )?;
            registered += 1;
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
            Some(name) => Ok(Value::String(name.string(lua)?)),
            None => Ok(Value::Nil),
        }
    });
    func!("tokens", |lua, s, (): ()| {
        let tokens = s.view(|v| {
            Ok(v.state
                .board()
                .tokens()
                .map(|(at, t)| TokenOut::new(at, t))
                .collect::<Vec<_>>())
        })?;
        per_table(lua, tokens.len(), "tokens")?;
        super::raw::token_list(lua, &tokens)
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
        super::raw::cell_list(lua, &cells)
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
    // Every row has its function (each `func!` names a distinct row, checked above).
    if registered != api::CTX.len() {
        return Err(mlua::Error::RuntimeError(format!(
            "ctx: {registered} functions for the {} of the API table (a bug: please report it)",
            api::CTX.len()
        )));
    }
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
    Ok(token.map(|t| TokenOut::new(cell(x, y), t)))
}

pub(super) fn empty(s: &CallSlot, x: i64, y: i64) -> mlua::Result<bool> {
    let result = s.view(|v| Ok(is_empty(v.state.board(), cell(x, y))));
    s.memo.noted(result, |out| Op::Empty { x, y, out })
}

/// Whether `at` is on `board` and holds no token (what `ctx:empty` says).
pub(super) fn is_empty(board: &crate::rules::Board, at: BoardCell) -> bool {
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
    Ok(kind.map(NameOut::of_type))
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
    // A draw moves the game's generator: a call that draws is never replayed (its row
    // says so, and the prologue spoils the record).
    s.effects(lua, "random", |fx| fx.random(n).map_err(Refusal::Rules))
}

impl CallSlot {
    /// `f` of the current effects (to read their area); `none` in a read-only hook,
    /// which has no area.
    fn with_effects<R>(&self, none: R, f: impl FnOnce(&Effects<'_>) -> R) -> mlua::Result<R> {
        self.lender.read(|now| match now {
            Now::Effects(fx) => Ok(f(fx)),
            Now::View(_) => Ok(none),
            Now::Idle => Err(outside()),
            Now::Busy => Err(busy()),
        })
    }

    /// Call `f(index, cell)` for each on-board cell of the current area.
    fn targets(&self, mut f: impl FnMut(usize, BoardCell) -> mlua::Result<()>) -> mlua::Result<()> {
        self.lender.read(|now| match now {
            Now::Effects(fx) => {
                for (i, at) in fx.targets().enumerate() {
                    f(i, at)?;
                }
                Ok(())
            }
            Now::View(_) => Ok(()),
            Now::Idle => Err(outside()),
            Now::Busy => Err(busy()),
        })
    }
}

/// The `ctx` table, and the thread that runs its state's outermost hook calls.
pub(super) struct CtxTable {
    /// The table scripts receive.
    pub table: Table,
    /// The state's main thread, where outermost hook calls run (see
    /// [`CtxTable::set_fields`]).
    main: MainThread,
}

impl CtxTable {
    /// Wrap `table`, made by [`make`] for `lua`.
    pub fn new(lua: &Lua, table: Table) -> mlua::Result<CtxTable> {
        Ok(CtxTable {
            table,
            main: MainThread::of(lua)?,
        })
    }

    /// The state's main thread, on which its hooks run.
    pub fn main(&self) -> &MainThread {
        &self.main
    }

    /// Set the per-call fields (kept in `slot`, read through ctx's metatable: nothing is
    /// written into Lua); with `restart`, also restart the state's instruction countdown
    /// (see [`MainThread::restart_countdown`]). False when a restart was asked for but no
    /// budget hook is set: the caller installs it.
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
        !restart || self.main.restart_countdown(super::budget::HOOK_EVERY)
    }
}

/// The per-call fields of `ctx`: `seat`, `opponent`, `x`, `y` (nil for `evaluate`).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Fields {
    pub seat: u8,
    pub opponent: u8,
    pub at: Option<(i32, i32)>,
}
