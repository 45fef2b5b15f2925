//! The primitive changes to a game — damage, move, swap, remove, spawn, set type, bank a
//! turn, change a score — each implemented once and each reporting its event.
//!
//! Built-in abilities, token properties and script hooks all change the game only through
//! [`Effects`]; that is what keeps events complete and tracking (the last placed token,
//! destruction, `on_destroyed`) consistent whatever made the change.
//!
//! The seam where scripts plug in is here too, beside the `Effects` its calls receive: the
//! rules core never knows what a script is written in; it calls a [`Hooks`] trait object
//! at four points (an ability's `on_place`, a token type's `between_turns`, `income` and
//! `on_destroyed`), and only for entries whose definition names a script. With no scripts
//! in the catalog the engine never calls it, so [`NoHooks`] costs nothing.
//!
//! A move's caps live here too: its events (`rules.limits.events`), its log text
//! (`rules.limits.log_bytes`) and how deep hooks may nest (`rules.limits.hook_depth`).

use rand::RngExt;

use super::board::Token;
use super::catalog::Catalog;
use super::defs::{Area, NO_AREA};
use super::event::{Cause, Event, EventKind, RemoveReason};
use super::hooks::{BudgetStep, HookError, HookErrorKind};
use super::ids::{CardId, Cell, ScriptId, Seat, TokenTypeId};
use super::state::{GameState, GameView};

/// The largest score or income magnitude: every consumer (the AI's margins, statistics)
/// can subtract two of them without overflow.
pub const MAX_SCORE: i64 = 1 << 52;

/// What became of a token asked to move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MoveResult {
    /// It moved to the empty cell.
    Moved,
    /// The destination was off the board: it was removed.
    Removed,
    /// The destination was taken: it stayed.
    Blocked,
    /// There was no token to move.
    NoToken,
}

/// What [`Effects::checkpoint`] keeps: enough to put the effects back as they were.
#[derive(Debug)]
pub struct Checkpoint {
    state: Option<GameState>,
    events: usize,
    emitted: u32,
    logged: u32,
    failure: Option<HookError>,
    cause: Cause,
    depth: u8,
}

impl Default for Checkpoint {
    fn default() -> Checkpoint {
        Checkpoint {
            state: None,
            events: 0,
            emitted: 0,
            logged: 0,
            failure: None,
            cause: Cause::Rules,
            depth: 0,
        }
    }
}

/// Mutable access to a game during a move, for the engine and for script hooks.
pub struct Effects<'a> {
    state: &'a mut GameState,
    catalog: &'a Catalog,
    hooks: &'a dyn Hooks,
    events: Option<&'a mut Vec<Event>>,
    cause: Cause,
    mover: Seat,
    origin: Cell,
    area: &'a Area,
    depth: u8,
    /// Whether the catalog has scripts (then events are counted against the limit).
    scripted: bool,
    /// Events this move has produced (counted also when they are not recorded, so a
    /// look-ahead refuses exactly the moves a real game refuses).
    emitted: u32,
    /// Bytes of log text this move has written.
    logged: u32,
    /// The first hook failure of this move, kept even if a script caught it.
    failure: Option<HookError>,
}

impl<'a> Effects<'a> {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        state: &'a mut GameState,
        catalog: &'a Catalog,
        hooks: &'a dyn Hooks,
        events: Option<&'a mut Vec<Event>>,
        cause: Cause,
        mover: Seat,
        origin: Cell,
        area: &'a Area,
    ) -> Effects<'a> {
        Effects {
            state,
            catalog,
            hooks,
            events,
            cause,
            mover,
            origin,
            area,
            depth: 0,
            scripted: false,
            emitted: 0,
            logged: 0,
            failure: None,
        }
    }

    /// Count this move's events against `rules.limits.events` (for scripted content).
    pub(crate) fn count_events(&mut self, on: bool) {
        self.scripted = on;
    }

    /// The game as it stands now.
    #[must_use]
    pub fn state(&self) -> &GameState {
        self.state
    }

    /// The catalog.
    #[must_use]
    pub fn catalog(&self) -> &'a Catalog {
        self.catalog
    }

    /// A read-only view of the game.
    #[must_use]
    pub fn view(&self) -> GameView<'_> {
        GameView {
            state: self.state,
            catalog: self.catalog,
        }
    }

    /// The seat acting (the mover, or the owner of the token whose hook runs).
    #[must_use]
    pub fn mover(&self) -> Seat {
        self.mover
    }

    /// The cell the effect is centred on (the placed token, or the hook's token).
    #[must_use]
    pub fn origin(&self) -> Cell {
        self.origin
    }

    /// The on-board cells of the area, in area order. The iterator does not borrow the
    /// effects, so they can change the game while walking it.
    pub fn targets(&self) -> impl Iterator<Item = Cell> + use<'a> {
        self.area.cells_on(self.origin, self.state.board.bounds())
    }

    /// The effect's area (its cells come from [`Area::cells_on`] and its kin).
    #[must_use]
    pub fn area(&self) -> &'a Area {
        self.area
    }

    /// What the next changes are attributed to.
    #[must_use]
    pub fn cause(&self) -> Cause {
        self.cause
    }

    /// Attribute the next changes to `cause` (a script sets its current line).
    pub fn set_cause(&mut self, cause: Cause) {
        self.cause = cause;
    }

    /// Run `f` with a different acting seat, origin, area and cause, then restore them.
    pub(crate) fn scoped<T>(
        &mut self,
        mover: Seat,
        origin: Cell,
        area: &'a Area,
        cause: Cause,
        f: impl FnOnce(&mut Effects<'a>) -> T,
    ) -> T {
        let saved = (self.mover, self.origin, self.area, self.cause);
        (self.mover, self.origin, self.area, self.cause) = (mover, origin, area, cause);
        let result = f(self);
        (self.mover, self.origin, self.area, self.cause) = saved;
        result
    }

    fn emit(&mut self, kind: EventKind) {
        // Built-in effects alone make a bounded number of events (the board is finite);
        // only scripts can loop, so only scripted content pays for the count.
        if self.scripted {
            self.emitted = self.emitted.saturating_add(1);
        }
        let limit = self.catalog.rules().limits.events;
        if self.emitted > limit {
            self.fail(HookError::of(HookErrorKind::Limit, format!(
                "the move made more than {limit} changes (rules.limits.events); is a hook stuck in a loop?"
            )));
            return;
        }
        if let Some(events) = &mut self.events {
            events.push(Event {
                kind,
                cause: self.cause,
            });
        }
    }

    fn index(&self, cell: Cell) -> Result<usize, HookError> {
        self.state
            .board
            .index(cell)
            .ok_or_else(|| HookError::new(format!("cell {cell} is off the board")))
    }

    /// Lower the value of the token on `cell` without resolving its destruction yet.
    /// Returns false when the cell is empty.
    pub(crate) fn lower(&mut self, index: usize, amount: i32) -> bool {
        let Some(token) = self.state.board.at(index) else {
            return false;
        };
        let value = token.value.saturating_sub(amount);
        self.state.board.set_value(index, value, self.catalog);
        let cell = self.state.board.cell(index);
        self.emit(EventKind::Damaged {
            cell,
            amount,
            value,
        });
        true
    }

    /// Destroy the token at `index` if its value is 0 or below (or let it become what its
    /// type's `on_destroyed` says), then run its type's `on_destroyed` hook.
    pub(crate) fn settle(&mut self, index: usize) -> Result<(), HookError> {
        let Some(token) = self.state.board.at(index) else {
            return Ok(());
        };
        if token.value > 0 {
            return Ok(());
        }
        let cell = self.state.board.cell(index);
        let def = self.catalog.token_type(token.kind);
        if let Some(becomes) = def.on_destroyed {
            self.state.board.set_kind(index, becomes.kind, self.catalog);
            self.state
                .board
                .set_value(index, becomes.value, self.catalog);
            let saved = self.cause;
            self.cause = Cause::TokenType {
                kind: token.kind,
                cell,
            };
            self.emit(EventKind::Transformed {
                cell,
                from: token.kind,
                to: becomes.kind,
                value: becomes.value,
            });
            self.cause = saved;
        } else {
            self.state.board.take(index, self.catalog);
            self.untrack(index, None);
            self.emit(EventKind::Removed {
                cell,
                token,
                reason: RemoveReason::Destroyed,
            });
        }
        if let Some(script) = def.script {
            let limit = self.catalog.rules().limits.hook_depth;
            if self.depth >= limit {
                let error = HookError::of(
                    HookErrorKind::Limit,
                    format!(
                        "hooks triggered each other more than {limit} deep (rules.limits.hook_depth): {} was destroyed by a hook that ran inside {limit} others",
                        self.catalog.token_type(token.kind).meta.key()
                    ),
                );
                self.fail(error.clone());
                return Err(error);
            }
            self.depth += 1;
            let hooks = self.hooks;
            let cause = Cause::TokenType {
                kind: token.kind,
                cell,
            };
            // The hook acts for the destroyed token's owner, around its cell.
            let result = self.scoped(token.seat, cell, &NO_AREA, cause, |fx| {
                hooks.on_destroyed(script, fx, cell, token)
            });
            self.depth -= 1;
            if let Err(e) = &result {
                self.fail(e.clone());
            }
            result?;
        }
        Ok(())
    }

    /// Record a hook failure: the move will be refused even if a script catches the error.
    pub fn fail(&mut self, error: HookError) {
        self.failure.get_or_insert(error);
    }

    /// Whether this move's events are kept (a look-ahead's are only counted): a script
    /// host need not find the line of a `ctx` call whose events nobody reads.
    pub fn recording(&self) -> bool {
        self.events.is_some()
    }

    /// How many events are kept so far (0 when they are only counted): a mark for
    /// [`Effects::set_line_since`].
    pub fn recorded(&self) -> usize {
        self.events.as_ref().map_or(0, |e| e.len())
    }

    /// Give the events kept since `mark` whose cause is `script` at line `pending` that
    /// script's real `line`: a script host finds a `ctx` call's line only once the call
    /// made an event.
    pub fn set_line_since(&mut self, mark: usize, script: ScriptId, pending: u32, line: u32) {
        let Some(events) = &mut self.events else {
            return;
        };
        for event in events.iter_mut().skip(mark) {
            if event.cause
                == (Cause::Script {
                    script,
                    line: pending,
                })
            {
                event.cause = Cause::Script { script, line };
            }
        }
    }

    /// Keep in `into` everything a change made through these effects can alter (the
    /// game, the events kept and counted, the log's room, the failure, the cause), to
    /// put back with [`Effects::rollback`]: a script host that tries a recorded hook
    /// call again undoes it this way when it does not go as recorded. `into` is reused
    /// (only the board cells in use are copied).
    pub fn checkpoint(&self, into: &mut Checkpoint) {
        match &mut into.state {
            Some(state) => state.clone_from(self.state),
            None => into.state = Some(self.state.clone()),
        }
        into.events = self.recorded();
        into.emitted = self.emitted;
        into.logged = self.logged;
        into.failure.clone_from(&self.failure);
        into.cause = self.cause;
        into.depth = self.depth;
    }

    /// Put back what [`Effects::checkpoint`] kept in `from` (nothing when it kept
    /// nothing).
    pub fn rollback(&mut self, from: &Checkpoint) {
        let Some(state) = &from.state else { return };
        self.state.clone_from(state);
        if let Some(events) = &mut self.events {
            events.truncate(from.events);
        }
        self.emitted = from.emitted;
        self.logged = from.logged;
        self.failure.clone_from(&from.failure);
        self.cause = from.cause;
        self.depth = from.depth;
    }

    /// The first failure recorded in this move, if any.
    pub(crate) fn take_failure(&mut self) -> Option<HookError> {
        self.failure.take()
    }

    /// The failure that will refuse this move, if one was recorded: a script host stops
    /// the script at its next `ctx` call.
    #[must_use]
    pub fn failure(&self) -> Option<&HookError> {
        self.failure.as_ref()
    }

    /// Keep the last-placed tracking right when the token at `from` moves to `to` (or
    /// leaves the board, `None`).
    fn untrack(&mut self, from: usize, to: Option<usize>) {
        let to = to.and_then(|t| u8::try_from(t).ok());
        for slot in [&mut self.state.last_placed, &mut self.state.prev_placed] {
            if *slot == u8::try_from(from).ok() {
                *slot = to;
            }
        }
    }

    /// Lower the value of the token on `cell` by `amount` and resolve its destruction.
    /// Returns false when the cell is empty.
    pub fn damage(&mut self, cell: Cell, amount: i32) -> Result<bool, HookError> {
        let index = self.index(cell)?;
        if !self.lower(index, amount) {
            return Ok(false);
        }
        self.settle(index)?;
        Ok(true)
    }

    /// Set the value of the token on `cell` (0 or below destroys it).
    /// Returns false when the cell is empty.
    pub fn set_value(&mut self, cell: Cell, value: i32) -> Result<bool, HookError> {
        let index = self.index(cell)?;
        let Some(token) = self.state.board.at(index) else {
            return Ok(false);
        };
        let from = token.value;
        self.state.board.set_value(index, value, self.catalog);
        self.emit(EventKind::ValueSet {
            cell,
            from,
            to: value,
        });
        self.settle(index)?;
        Ok(true)
    }

    /// Move the token on `from` to `to`: off the board removes it; a taken cell blocks it.
    pub fn move_token(&mut self, from: Cell, to: Cell) -> Result<MoveResult, HookError> {
        let index = self.index(from)?;
        Ok(self.move_index(index, to))
    }

    pub(crate) fn move_index(&mut self, index: usize, to: Cell) -> MoveResult {
        let from = self.state.board.cell(index);
        if self.state.board.at(index).is_none() {
            return MoveResult::NoToken;
        }
        match self.state.board.index(to) {
            None => {
                if let Some(token) = self.state.board.take(index, self.catalog) {
                    self.untrack(index, None);
                    self.emit(EventKind::Removed {
                        cell: from,
                        token,
                        reason: RemoveReason::OffBoard,
                    });
                }
                MoveResult::Removed
            }
            Some(dest) if self.state.board.at(dest).is_some() => MoveResult::Blocked,
            Some(dest) => {
                let token = self.state.board.take(index, self.catalog);
                self.state.board.put(dest, token, self.catalog);
                self.untrack(index, Some(dest));
                self.emit(EventKind::Moved { from, to });
                MoveResult::Moved
            }
        }
    }

    /// Swap the contents of two on-board cells.
    pub(crate) fn swap_indices(&mut self, a: usize, b: usize) {
        let ta = self.state.board.take(a, self.catalog);
        let tb = self.state.board.take(b, self.catalog);
        self.state.board.put(a, tb, self.catalog);
        self.state.board.put(b, ta, self.catalog);
        let (pa, pb) = (self.state.last_placed, self.state.prev_placed);
        let map = |slot: Option<u8>| {
            let s = slot.map(usize::from);
            if s == Some(a) {
                u8::try_from(b).ok()
            } else if s == Some(b) {
                u8::try_from(a).ok()
            } else {
                slot
            }
        };
        self.state.last_placed = map(pa);
        self.state.prev_placed = map(pb);
        let (ca, cb) = (self.state.board.cell(a), self.state.board.cell(b));
        self.emit(EventKind::Swapped { a: ca, b: cb });
    }

    /// Swap the tokens (or emptiness) of two cells.
    pub fn swap(&mut self, a: Cell, b: Cell) -> Result<(), HookError> {
        let (ia, ib) = (self.index(a)?, self.index(b)?);
        if ia != ib {
            self.swap_indices(ia, ib);
        }
        Ok(())
    }

    /// Remove the token on `cell`. Returns false when the cell is empty.
    pub fn remove(&mut self, cell: Cell) -> Result<bool, HookError> {
        let index = self.index(cell)?;
        let Some(token) = self.state.board.take(index, self.catalog) else {
            return Ok(false);
        };
        self.untrack(index, None);
        self.emit(EventKind::Removed {
            cell,
            token,
            reason: RemoveReason::Removed,
        });
        Ok(true)
    }

    /// Create a token on an empty cell. Returns false when the cell is taken.
    pub fn spawn(
        &mut self,
        cell: Cell,
        seat: Seat,
        value: i32,
        kind: TokenTypeId,
    ) -> Result<bool, HookError> {
        let index = self.index(cell)?;
        if self.state.board.at(index).is_some() {
            return Ok(false);
        }
        if kind.index() >= self.catalog.token_types().len() {
            return Err(HookError::new(format!("unknown token type #{}", kind.0)));
        }
        let token = Token {
            value,
            kind,
            card: None,
            seat,
        };
        self.state.board.put(index, Some(token), self.catalog);
        self.emit(EventKind::Spawned { cell, token });
        self.settle(index)?;
        Ok(true)
    }

    /// Change the type of the token on `cell`, keeping owner and value.
    /// Returns false when the cell is empty.
    pub fn set_type(&mut self, cell: Cell, kind: TokenTypeId) -> Result<bool, HookError> {
        let index = self.index(cell)?;
        if kind.index() >= self.catalog.token_types().len() {
            return Err(HookError::new(format!("unknown token type #{}", kind.0)));
        }
        let Some(token) = self.state.board.at(index) else {
            return Ok(false);
        };
        let from = token.kind;
        self.state.board.set_kind(index, kind, self.catalog);
        let value = token.value;
        self.emit(EventKind::Transformed {
            cell,
            from,
            to: kind,
            value,
        });
        Ok(true)
    }

    /// Send the played card to the bottom of its stack.
    pub(crate) fn cycle(&mut self, seat: Seat, stack: u8, card: CardId) {
        if let Some(s) = self.state.seats[seat.index()].stack_mut(usize::from(stack)) {
            s.cycle();
        }
        self.emit(EventKind::Cycled { seat, stack, card });
    }

    /// Bank an extra turn for `seat`.
    pub fn extra_turn(&mut self, seat: Seat) {
        let slot = &mut self.state.seats[seat.index()].extra_turns;
        *slot = slot.saturating_add(1);
        self.emit(EventKind::ExtraTurnBanked { seat });
    }

    /// Add `amount` to the value of `seat`'s next placed token.
    pub fn next_token_bonus(&mut self, seat: Seat, amount: i32) {
        let slot = &mut self.state.seats[seat.index()].bonus;
        *slot = slot.saturating_add(amount);
        self.emit(EventKind::BonusBanked { seat, amount });
    }

    /// Add `amount` (possibly negative) to `seat`'s score.
    pub fn add_score(&mut self, seat: Seat, amount: i64) {
        let amount = amount.clamp(-MAX_SCORE, MAX_SCORE);
        let score = &mut self.state.seats[seat.index()].score;
        *score = score.saturating_add(amount).clamp(-MAX_SCORE, MAX_SCORE);
        let total = *score;
        self.emit(EventKind::ScoreChanged {
            seat,
            amount,
            total,
        });
    }

    /// An integer in `1..=n` from the game's seeded generator.
    pub fn random(&mut self, n: i64) -> Result<i64, HookError> {
        if n < 1 {
            return Err(HookError::new(format!(
                "random(n) needs n of at least 1, got {n}"
            )));
        }
        Ok(self.state.rng.random_range(1..=n))
    }

    /// Write a line to the game's log. A move writes at most `rules.limits.log_bytes` of
    /// text; past that the move is refused.
    pub fn log(&mut self, text: String) -> Result<(), HookError> {
        let limit = self.catalog.rules().limits.log_bytes;
        let len = u32::try_from(text.len()).unwrap_or(u32::MAX);
        self.logged = self.logged.saturating_add(len);
        if self.logged > limit {
            let error = HookError::of(
                HookErrorKind::Limit,
                format!("the move logged more than {limit} bytes of text (rules.limits.log_bytes)"),
            );
            self.fail(error.clone());
            return Err(error);
        }
        self.emit(EventKind::Log { text });
        Ok(())
    }

    /// How much more log text this move may write, in bytes.
    #[must_use]
    pub fn log_room(&self) -> usize {
        let limit = self.catalog.rules().limits.log_bytes;
        usize::try_from(limit.saturating_sub(self.logged)).unwrap_or(0)
    }
}

/// Script hooks the engine calls during a move. Implemented by the Lua host.
pub trait Hooks {
    /// A step of a move starts. Every hook of every pack that runs until the next step
    /// shares one budget ([`MoveLimits`](super::MoveLimits)); the move's clock starts
    /// with [`BudgetStep::Move`]. Called only for catalogs with scripts.
    fn begin_step(&self, step: BudgetStep) {
        let _ = step;
    }

    /// The move is over, played or refused: hook calls made outside a move (an AI's
    /// look at the income, say) get budgets of their own again.
    fn end_move(&self) {}

    /// A look at the game outside a move starts (both seats' incomes, a preview): until
    /// the matching [`Hooks::end_look`], the hook calls made outside a move share one
    /// budget and clock instead of each having its own, so a look costs at most one
    /// move's limits however many scripted tokens it asks. Looks nest.
    fn begin_look(&self) {}

    /// The look [`Hooks::begin_look`] started is over.
    fn end_look(&self) {}

    /// An ability's script runs at the ability step; `fx` knows the placed cell and area.
    fn on_place(&self, script: ScriptId, fx: &mut Effects<'_>) -> Result<(), HookError>;

    /// A scripted token type's between-turns hook, for the token on `cell`.
    fn between_turns(
        &self,
        script: ScriptId,
        fx: &mut Effects<'_>,
        cell: Cell,
    ) -> Result<(), HookError>;

    /// Adjusts the income of the scripted token on `cell`; returns the new income.
    fn income(
        &self,
        script: ScriptId,
        view: &GameView<'_>,
        cell: Cell,
        income: i64,
    ) -> Result<i64, HookError>;

    /// A scripted token was destroyed by losing value; `token` is what it was on `cell`.
    fn on_destroyed(
        &self,
        script: ScriptId,
        fx: &mut Effects<'_>,
        cell: Cell,
        token: Token,
    ) -> Result<(), HookError>;
}

/// Hooks for a catalog without scripts: every call is an error, and the engine never
/// makes one unless a definition names a script.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoHooks;

impl NoHooks {
    fn missing(script: ScriptId) -> HookError {
        HookError::of(
            HookErrorKind::Host,
            format!("script #{} cannot run: no script host is loaded", script.0),
        )
    }
}

impl Hooks for NoHooks {
    fn on_place(&self, script: ScriptId, _: &mut Effects<'_>) -> Result<(), HookError> {
        Err(Self::missing(script))
    }

    fn between_turns(
        &self,
        script: ScriptId,
        _: &mut Effects<'_>,
        _: Cell,
    ) -> Result<(), HookError> {
        Err(Self::missing(script))
    }

    fn income(
        &self,
        script: ScriptId,
        _: &GameView<'_>,
        _: Cell,
        _: i64,
    ) -> Result<i64, HookError> {
        Err(Self::missing(script))
    }

    fn on_destroyed(
        &self,
        script: ScriptId,
        _: &mut Effects<'_>,
        _: Cell,
        _: Token,
    ) -> Result<(), HookError> {
        Err(Self::missing(script))
    }
}
