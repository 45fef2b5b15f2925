//! Hook calls replayed from a record of their `ctx` calls.
//!
//! A script whose functions capture nothing but `_ENV` keeps no state (its tables are
//! frozen at load, see `prelude.lua`): a call of one of its hooks depends only on its
//! arguments (`self`, `ctx`'s fields, income's number) and on what its `ctx` calls
//! return. The AI plays the same position's hooks again and again — every candidate move
//! runs every leech's `between_turns` and every hermit's `income` — and most see exactly
//! what they saw the last time.
//!
//! So a hook call of such a script records each `ctx` call it makes with the arguments
//! and the result ([`Op`]). The next call with the same [`Key`] plays that record back
//! through the same `ctx` bodies instead of running Lua: every read must give what it
//! gave, and every change is made again through the engine (its events and their script
//! lines as they were) and must report what it reported. The first difference undoes the
//! replay ([`rules::Checkpoint`]) and the hook runs in Lua, recording afresh. A replay
//! is therefore the call the script would have made, move for move.
//!
//! What a replay may not skip:
//! - the budget: it charges the instructions the recorded call was charged (a call
//!   counts from zero, so that is what running it again would count), and is not tried
//!   when that would pass a limit: the Lua run then stops where it must;
//! - another hook: a change that would start one (a token destroyed whose type has an
//!   `on_destroyed`) fails the replay before the hook runs, and the call runs in Lua.
//!   A call that started another hook while recording is not kept.
//!
//! Not recorded (the call runs in Lua every time): hooks of scripts with state, calls
//! nested in another hook of the same state, and any call that used a `ctx` function
//! without a record ([`Recorder::spoil`]: `tokens`, `random`, `log`), failed, caught an
//! error with `pcall` or `xpcall` (it may have run out of memory, which depends on more
//! than its arguments), or made more than [`MAX_OPS`] calls (the look before its first
//! change counts as one).
//!
//! Bounds: [`MAX_OPS`] calls a record, [`MAX_ENTRIES`] records and [`MAX_TOTAL_OPS`] calls
//! a host; past them the host forgets every record and starts again.
//!
//! Plain board reads are compared against the board directly; up to four records a key
//! (`VARIANTS`). A read records only what it returns: a whole token for `ctx:token`, one part
//! of a cell for `ctx:empty`, `ctx:seat_at`, `ctx:value_at` and `ctx:type_at`, so their
//! records hold through changes to the rest of the cell; `ctx:targets()` is recorded as its
//! area's fingerprint and centre, which make the list. A record also holds whether the cell
//! of its first change was taken (what a change reports), checked with the reads. Playing a
//! record back is `replay.rs`'s. A test plays every look-ahead move with replays on and off (and
//! quietly first) and compares states, events and refusals.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use mlua::Value;
use rustc_hash::FxHashMap;

use crate::rules::{self, Cell as BoardCell, ScriptId, Seat, Token, TokenTypeId};

/// The most `ctx` calls one record holds.
pub(super) const MAX_OPS: usize = 64;
/// The most records a host keeps.
pub(super) const MAX_ENTRIES: usize = 4096;
/// The most records one key keeps (the last ones that went as recorded first): the AI
/// tries many moves from one position, most of which leave a hook's neighbourhood as it
/// was and some of which change it.
pub(super) const VARIANTS: usize = 4;
/// The most `ctx` calls all of a host's records hold together (about 1.5 MiB).
pub(super) const MAX_TOTAL_OPS: usize = 32 * 1024;

/// One `ctx` call of a recorded hook call: its arguments and what it returned; a change
/// also keeps the script line it was made from (its events carry it).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Op {
    Width(i32),
    Height(i32),
    OnBoard {
        x: i64,
        y: i64,
        out: bool,
    },
    Token {
        x: i64,
        y: i64,
        out: Option<Token>,
    },
    /// `ctx:empty`, `ctx:seat_at`, `ctx:value_at`, `ctx:type_at`: one part of a cell,
    /// so a record of them still holds when the rest of the cell changes.
    Empty {
        x: i64,
        y: i64,
        out: bool,
    },
    SeatAt {
        x: i64,
        y: i64,
        out: Option<Seat>,
    },
    ValueAt {
        x: i64,
        y: i64,
        out: Option<i32>,
    },
    TypeAt {
        x: i64,
        y: i64,
        out: Option<TokenTypeId>,
    },
    Score {
        n: i64,
        out: i64,
    },
    TargetCount(usize),
    /// `ctx:targets()`: the area (by [`rules::Area::fingerprint`], not its address: a
    /// host outlives the catalog it was made for when a clone of it takes its place) and
    /// the cell it is centred on, which make the list.
    Targets {
        area: u64,
        origin: (i32, i32),
    },
    Target {
        i: i64,
        out: Option<(i32, i32)>,
    },
    Damage {
        x: i64,
        y: i64,
        n: i64,
        out: bool,
        line: u32,
    },
    SetValue {
        x: i64,
        y: i64,
        value: i64,
        out: bool,
        line: u32,
    },
    Move {
        from: (i64, i64),
        to: (i64, i64),
        out: bool,
        line: u32,
    },
    Remove {
        x: i64,
        y: i64,
        out: bool,
        line: u32,
    },
    /// Whether the cell of a call's first change held a token just before it. Not a
    /// read of the script's: a replay checks it with the reads before that change, so a
    /// record whose first change would report otherwise (the cell emptied or filled
    /// since) is passed over before the board is changed, not undone after. Only whether
    /// the cell is taken: that is what a change reports (a token's value, seat or type
    /// there changes nothing a replay compares, and the change itself is made again
    /// through the engine).
    Before {
        x: i64,
        y: i64,
        taken: bool,
    },
    /// `ctx:spawn`, with the seat, value and type its spec came to.
    Spawn {
        at: (i64, i64),
        seat: Seat,
        value: i32,
        kind: TokenTypeId,
        out: bool,
        line: u32,
    },
    SetType {
        at: (i64, i64),
        kind: TokenTypeId,
        out: bool,
        line: u32,
    },
    ExtraTurn {
        n: i64,
        line: u32,
    },
    AddScore {
        n: i64,
        amount: i64,
        line: u32,
    },
}

impl Op {
    /// Whether the call changes the game.
    fn changes(&self) -> bool {
        matches!(
            self,
            Op::Damage { .. }
                | Op::SetValue { .. }
                | Op::Move { .. }
                | Op::Remove { .. }
                | Op::Spawn { .. }
                | Op::SetType { .. }
                | Op::ExtraTurn { .. }
                | Op::AddScore { .. }
        )
    }
}

/// A state's record of the hook call under way, kept in its [`CallSlot`].
#[derive(Default)]
pub(super) struct Recorder {
    /// Whether the call under way is recorded.
    on: Cell<bool>,
    /// Whether it did something a record cannot hold.
    spoiled: Cell<bool>,
    /// Whether it changed the game yet.
    changed: Cell<bool>,
    ops: RefCell<Vec<Op>>,
    /// During a replay, the script line of the change being made again.
    pub(super) line: Cell<Option<u32>>,
    /// The script line of the last change made (kept by `ctx`'s changing functions).
    pub(super) last_line: Cell<u32>,
}

impl Recorder {
    /// Whether a call is being recorded (a change then finds its script line).
    pub(super) fn on(&self) -> bool {
        self.on.get()
    }

    /// Record the call about to run.
    pub(super) fn start(&self) {
        self.ops.borrow_mut().clear();
        self.spoiled.set(false);
        self.changed.set(false);
        self.on.set(true);
    }

    /// The calls recorded since [`Recorder::start`], unless the record was spoiled.
    pub(super) fn stop(&self) -> Option<Box<[Op]>> {
        let was = self.on.replace(false);
        // The buffer keeps its room for the next call; a record kept is an exact copy.
        let mut ops = self.ops.borrow_mut();
        let kept = (was && !self.spoiled.get()).then(|| Box::from(ops.as_slice()));
        ops.clear();
        kept
    }

    /// Whether a change about to be made is the recorded call's first (see [`Op::Before`]).
    pub(super) fn first_change(&self) -> bool {
        self.on.get() && !self.changed.replace(true)
    }

    /// The call under way used what a record cannot hold: it is not kept.
    pub(super) fn spoil(&self) {
        if self.on.get() {
            self.spoiled.set(true);
        }
    }

    /// Record `result` of a `ctx` call as `op(result)`; an error spoils the record.
    pub(super) fn noted<T: Copy>(
        &self,
        result: mlua::Result<T>,
        op: impl FnOnce(T) -> Op,
    ) -> mlua::Result<T> {
        if self.on.get() {
            match &result {
                Ok(out) if !self.spoiled.get() => {
                    let mut ops = self.ops.borrow_mut();
                    if ops.len() < MAX_OPS {
                        ops.push(op(*out));
                    } else {
                        self.spoiled.set(true);
                    }
                }
                Ok(_) => {}
                Err(_) => self.spoiled.set(true),
            }
        }
        result
    }
}

/// What identifies a hook call: the script, the hook and everything passed to it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) struct Key {
    script: ScriptId,
    hook: u8,
    seat: Seat,
    at: Option<BoardCell>,
    me: Option<(BoardCell, Token)>,
    number: Option<i64>,
}

impl Key {
    /// The key of a call of `hook` (its index in the script's hooks) of `script` with
    /// `ctx` fields `(seat, at)`, `self` the token `me` (if any) and the number after it.
    pub(super) fn new(
        script: ScriptId,
        hook: u8,
        (seat, at): (Seat, Option<BoardCell>),
        me: Option<(BoardCell, Token)>,
        number: Option<i64>,
    ) -> Key {
        Key {
            script,
            hook,
            seat,
            at,
            me,
            number,
        }
    }
}

/// What a recorded call returned (only these are kept).
#[derive(Clone, Copy, Debug)]
pub(super) enum Returned {
    Nil,
    Integer(i64),
    Number(f64),
}

impl Returned {
    fn of(value: &Value) -> Option<Returned> {
        match value {
            Value::Nil => Some(Returned::Nil),
            Value::Integer(n) => Some(Returned::Integer(*n)),
            Value::Number(f) => Some(Returned::Number(*f)),
            _ => None,
        }
    }

    pub(super) fn value(self) -> Value {
        match self {
            Returned::Nil => Value::Nil,
            Returned::Integer(n) => Value::Integer(n),
            Returned::Number(f) => Value::Number(f),
        }
    }
}

/// A recorded call.
pub(super) struct Entry {
    pub(super) ops: Box<[Op]>,
    /// Whether any of its calls changes the game (then a replay keeps a checkpoint).
    pub(super) changes: bool,
    /// How many calls come before the first change (reads a replay can check without
    /// undoing anything).
    pub(super) reads: usize,
    /// The instructions it was charged.
    pub(super) cost: u64,
    pub(super) returned: Returned,
}

/// The records of one key, the most useful first.
#[derive(Clone, Default)]
pub(super) struct Variants(pub(super) [Option<Rc<Entry>>; VARIANTS]);

/// A host's records, and the state of a replay under way.
#[derive(Default)]
pub struct Memo {
    /// Hashed with Fx: a key is a few small numbers, and a lookup runs at every hook
    /// call (the map is bounded, so no key set can make it slow for long).
    entries: RefCell<FxHashMap<Key, Variants>>,
    /// Records all keys hold.
    records: Cell<usize>,
    /// `ctx` calls all records hold.
    ops: Cell<usize>,
    /// Set while a replay runs: any hook call then fails at once (see the module).
    replaying: Cell<bool>,
    /// Hook calls started: a recorded call during which this moved started another.
    calls: Cell<u64>,
    checkpoint: RefCell<rules::Checkpoint>,
    /// Off, nothing is recorded or replayed (a baseline to measure against).
    off: Cell<bool>,
    /// Replays that went as recorded, and ones that did not.
    hits: Cell<u64>,
    misses: Cell<u64>,
}

impl Memo {
    /// Count a hook call starting: refused (`false`) while a replay runs.
    pub(super) fn starting(&self) -> bool {
        self.calls.set(self.calls.get().wrapping_add(1));
        !self.replaying.get()
    }

    /// Hook calls started so far.
    pub(super) fn calls(&self) -> u64 {
        self.calls.get()
    }

    /// Whether records are made and replayed.
    pub(super) fn enabled(&self) -> bool {
        !self.off.get()
    }

    /// Turn recording and replaying on or off (off also forgets every record).
    pub(super) fn set_enabled(&self, on: bool) {
        self.off.set(!on);
        if !on {
            self.entries.borrow_mut().clear();
            self.records.set(0);
            self.ops.set(0);
        }
    }

    /// Replays that went as recorded and ones that were undone, so far.
    pub(super) fn counts(&self) -> (u64, u64) {
        (self.hits.get(), self.misses.get())
    }

    /// The records of `key`, the last one replayed first.
    pub(super) fn get(&self, key: &Key) -> Option<Variants> {
        self.entries.borrow().get(key).cloned()
    }

    /// Record `index` of `key` went as recorded: it is tried first next time.
    pub(super) fn promote(&self, key: &Key, index: usize) {
        if index > 0
            && let Some(v) = self.entries.borrow_mut().get_mut(key)
        {
            v.0[..=index].rotate_right(1);
        }
    }

    /// Keep `ops` as the record of `key`, charged `cost` and returning `returned`.
    pub(super) fn keep(&self, key: Key, ops: Box<[Op]>, cost: u64, returned: &Value) {
        let Some(returned) = Returned::of(returned) else {
            return;
        };
        let mut entries = self.entries.borrow_mut();
        if self.records.get() >= MAX_ENTRIES || self.ops.get() + ops.len() > MAX_TOTAL_OPS {
            entries.clear();
            self.records.set(0);
            self.ops.set(0);
        }
        let reads = ops.iter().position(Op::changes).unwrap_or(ops.len());
        let entry = Rc::new(Entry {
            changes: reads < ops.len(),
            reads,
            ops,
            cost,
            returned,
        });
        let (mut records, mut total) = (self.records.get(), self.ops.get());
        let variants = entries.entry(key).or_default();
        // The newest first; the oldest falls off the end.
        if let Some(old) = &variants.0[VARIANTS - 1] {
            records -= 1;
            total -= old.ops.len();
        }
        variants.0.rotate_right(1);
        records += 1;
        total += entry.ops.len();
        variants.0[0] = Some(entry);
        self.records.set(records);
        self.ops.set(total);
    }

    /// A replay of `entry` starts: any hook call fails until [`Memo::replayed`]. The
    /// checkpoint to undo it with is handed out with it.
    pub(super) fn replaying(&self) -> std::cell::RefMut<'_, rules::Checkpoint> {
        self.replaying.set(true);
        self.checkpoint.borrow_mut()
    }

    /// The replay is over, gone as recorded or not.
    pub(super) fn replayed(&self, same: bool) {
        self.replaying.set(false);
        let counter = if same { &self.hits } else { &self.misses };
        counter.set(counter.get() + 1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// However many calls are recorded, a host keeps at most [`MAX_ENTRIES`] records,
    /// [`VARIANTS`] a key and [`MAX_TOTAL_OPS`] `ctx` calls.
    #[test]
    fn records_stay_within_their_bounds() {
        let memo = Memo::default();
        let ops: Box<[Op]> = vec![Op::Width(6); MAX_OPS].into();
        for n in 0..3 * i64::try_from(MAX_ENTRIES).unwrap_or(i64::MAX) {
            // A few keys recorded again and again, and many new ones.
            let key = Key::new(
                ScriptId(0),
                2,
                (Seat::One, None),
                None,
                Some(if n % 2 == 0 { n % 7 } else { n }),
            );
            memo.keep(key, ops.clone(), 10, &Value::Integer(n));
            assert!(memo.records.get() <= MAX_ENTRIES);
            assert!(memo.ops.get() <= MAX_TOTAL_OPS);
            let counted: usize = memo
                .entries
                .borrow()
                .values()
                .map(|v| v.0.iter().flatten().map(|e| e.ops.len()).sum::<usize>())
                .sum();
            assert_eq!(counted, memo.ops.get(), "the total is kept exactly");
        }
        let key = Key::new(ScriptId(0), 2, (Seat::One, None), None, Some(0));
        let kept = memo.get(&key).expect("a key recorded often is kept");
        assert!(kept.0.iter().all(Option::is_some), "{VARIANTS} variants");
        memo.set_enabled(false);
        assert!(memo.get(&key).is_none() && memo.ops.get() == 0);
    }
}
