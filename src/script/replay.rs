//! Playing a hook call's record back (see `memo.rs`, which makes and keeps the records):
//! every `ctx` call of the record made again through the same bodies `ctx.rs` runs for
//! scripts, the plain board reads checked against the board directly. A replay that goes
//! as recorded is the call the script would have made; the first difference after a
//! change undoes everything it changed (`rules::Checkpoint`).
//!
//! Must not: record anything (a replay's changes take the recorded lines), or run Lua.

use mlua::Lua;

use super::ctx::{
    CallSlot, Kind, Spawned, add_score, cell, damage, extra_turn, height, is_empty, move_token,
    remove, score, set_type, set_value, spawn, target, target_count, target_source, width,
};
use super::memo::Op;
use super::raw::{Change, Now};

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

/// Make the recorded call `op` again through `s` (a replay: nothing is recorded, a change
/// takes the recorded line): whether it returned what it returned before.
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

impl CallSlot {
    /// Keep what the current effects can change in `into` (nothing in a read-only hook).
    pub(super) fn checkpoint(&self, into: &mut crate::rules::Checkpoint) {
        self.lender.read(|now| {
            if let Now::Effects(fx) = now {
                fx.checkpoint(into);
            }
        });
    }

    /// Put the current effects back as [`CallSlot::checkpoint`] kept them.
    pub(super) fn rollback(&self, from: &crate::rules::Checkpoint) {
        self.lender.change(|now| {
            if let Change::Effects(fx) = now {
                fx.rollback(from);
            }
        });
    }
}
