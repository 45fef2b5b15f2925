//! The sandbox's game, apart from its screen: the content and a [`Timeline`] of moves
//! and edits by hand, with undo and redo, carry-over to reloaded content, and its steps
//! played again under new content through [`crate::replay::play_again`]. No drawing.
//!
//! Besides undo, redo and carry-over, the sandbox steps through a saved game and writes its
//! game as a scenario through `scenario::write`.

use std::sync::Arc;

use crate::rules::{
    CardId, Catalog, Cell, DeckId, Engine, Event, GameState, IdMap, Move, Play, Seat,
};
use crate::timeline::{Action, Edit, Moment, Step, Timeline};

use super::super::session::{SessionError, Table};

/// What re-playing the sandbox's moves under new content gave.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReplayReport {
    /// The first move whose events differ, with its events before and now.
    pub first_difference: Option<crate::replay::Difference>,
    /// The first step the new content refuses (1-based, with why): the replay stops there.
    pub refused: Option<(usize, String)>,
    /// Final scores before and after.
    pub scores: [[i64; 2]; 2],
    /// Cells whose final token differs.
    pub cells: Vec<Cell>,
}

/// The sandbox's game: the content it is played with and its [`Timeline`].
pub struct Sandbox {
    table: Table,
    timeline: Timeline,
    seed: u64,
}

impl Sandbox {
    /// A sandbox game with `deck` for both seats.
    pub fn new(catalog: Arc<Catalog>, deck: DeckId, seed: u64) -> Result<Sandbox, SessionError> {
        let table = Table::new(Arc::clone(&catalog));
        let stacks = &catalog
            .decks()
            .get(deck.index())
            .ok_or(SessionError::NoDeck)?
            .stacks;
        let (start, opening) = table.deal([stacks, stacks], seed)?;
        Ok(Sandbox {
            table,
            timeline: Timeline::new(start, opening, catalog),
            seed,
        })
    }

    /// A saved game to step through: dealt and played under `catalog`, then taken back
    /// to the start (Redo steps forward). Fails when the content lacks one of its cards
    /// or cannot deal its decks; a move the content refuses ends the game there, and the
    /// second value says which.
    pub fn from_replay(
        catalog: Arc<Catalog>,
        replay: &crate::replay::Replay,
    ) -> Result<(Sandbox, Option<String>), String> {
        let table = Table::new(Arc::clone(&catalog));
        let played = crate::replay::timeline(replay, &table.engine(), &catalog)
            .map_err(|e| e.to_string())?;
        let refused = played
            .refused
            .map(|(n, why)| format!("move {n} is refused by the content now loaded: {why}"));
        let mut sandbox = Sandbox {
            table,
            timeline: played.timeline,
            seed: replay.seed,
        };
        while sandbox.undo() {}
        Ok((sandbox, refused))
    }

    /// The content.
    #[must_use]
    pub fn catalog(&self) -> &Arc<Catalog> {
        self.table.catalog()
    }

    /// The engine.
    #[must_use]
    pub fn engine(&self) -> Engine<'_> {
        self.table.engine()
    }

    /// The game's moves, with undo and redo.
    #[must_use]
    pub fn timeline(&self) -> &Timeline {
        &self.timeline
    }

    /// The current state.
    #[must_use]
    pub fn state(&self) -> &GameState {
        self.timeline.state()
    }

    /// The applied moves, oldest first.
    #[must_use]
    pub fn steps(&self) -> &[Step] {
        self.timeline.steps()
    }

    /// The opening token's events.
    #[must_use]
    pub fn opening(&self) -> &[Event] {
        self.timeline.opening()
    }

    /// The content the events of `at` were made with.
    #[must_use]
    pub fn catalog_of(&self, at: Moment) -> &Arc<Catalog> {
        self.timeline
            .catalog_of(at)
            .unwrap_or_else(|| self.table.catalog())
    }

    /// The move that plays `card` for `seat` on `cell`.
    #[must_use]
    pub fn move_for(seat: Seat, card: CardId, cell: Cell) -> Move {
        Move {
            seat,
            play: Play::Card(card),
            cell,
        }
    }

    /// The state a move of `seat` is played on (and previewed on): the current one with
    /// `seat` to move.
    #[must_use]
    pub fn base_for(&self, seat: Seat) -> GameState {
        let mut state = self.state().clone();
        Engine::any_seat_to_move(&mut state, seat);
        state
    }

    /// Play `mv` (any seat, any card); moves undone before are dropped.
    pub fn play(&mut self, mv: Move) -> Result<&Step, SessionError> {
        let engine = self.table.engine();
        Ok(self
            .timeline
            .play_any_seat(&engine, self.table.catalog(), mv)?)
    }

    /// Take back the last move; false when there is none.
    pub fn undo(&mut self) -> bool {
        self.timeline.undo()
    }

    /// Play again the last move taken back; false when there is none.
    pub fn redo(&mut self) -> bool {
        self.timeline.redo()
    }

    /// Whether there is something to undo.
    #[must_use]
    pub fn can_undo(&self) -> bool {
        self.timeline.can_undo()
    }

    /// Whether there is something to redo.
    #[must_use]
    pub fn can_redo(&self) -> bool {
        self.timeline.can_redo()
    }

    /// Carry the whole sandbox (start, every move, undo and redo) over to `catalog`
    /// through `map` (the current content's ids to `catalog`'s, matched by `pack:id`).
    /// When something the game uses is gone, nothing changes and the list says what
    /// ([`Timeline::carry_over`]).
    pub fn adopt(&mut self, catalog: Arc<Catalog>, map: &IdMap) -> Result<(), Vec<String>> {
        let old = Arc::clone(self.table.catalog());
        self.timeline.carry_over(&old, &catalog, map)?;
        self.table = Table::new(catalog);
        Ok(())
    }

    /// The applied steps played again from the start under the content now loaded.
    fn played_again(&self) -> crate::replay::PlayedAgain {
        crate::replay::play_again(
            &self.engine(),
            self.catalog(),
            self.timeline.start().clone(),
            self.timeline.opening().to_vec(),
            self.steps().iter().map(|s| s.action.clone()),
        )
    }

    /// Play the applied moves again from the start under the content now loaded, and
    /// say where the outcome differs from what was played. Nothing changes.
    #[must_use]
    pub fn replay(&self) -> ReplayReport {
        let again = self.played_again();
        let recorded = crate::replay::step_lines(&self.timeline);
        let first_difference =
            crate::replay::first_difference(&again.timeline, recorded.iter().map(|r| r.as_deref()));
        let (last, now) = (self.state(), again.timeline.state());
        let mut cells: Vec<Cell> = Vec::new();
        for c in last
            .board()
            .tokens()
            .chain(now.board().tokens())
            .map(|(c, _)| c)
        {
            let differs = match (last.board().get(c), now.board().get(c)) {
                (Some(a), Some(b)) => a.value != b.value || a.seat != b.seat || a.kind != b.kind,
                (None, None) => false,
                _ => true,
            };
            if differs && !cells.contains(&c) {
                cells.push(c);
            }
        }
        ReplayReport {
            first_difference,
            refused: again.refused,
            scores: [
                [last.score(Seat::One), last.score(Seat::Two)],
                [now.score(Seat::One), now.score(Seat::Two)],
            ],
            cells,
        }
    }

    /// Replace the game with its replay under the content now loaded (after
    /// [`Sandbox::replay`]): the steps the new content accepts, played again.
    pub fn adopt_replay(&mut self) {
        self.timeline = self.played_again().timeline;
    }

    /// Change the position by hand (the position editor): an undoable step.
    pub fn edit(&mut self, edit: Edit) -> Result<&Step, crate::timeline::EditError> {
        let catalog = Arc::clone(self.table.catalog());
        self.timeline.edit(&catalog, edit)
    }

    /// The applied moves as a scenario file named `name`, with `expect:` filled from the
    /// present position (see [`crate::scenario::write`]).
    pub fn scenario(&self, name: &str, pack_dirs: &[String]) -> Result<String, String> {
        // A scenario starts from a position and plays moves: the position after the last
        // edit by hand is its start, and the moves after it are its moves.
        let steps = self.steps();
        let last_edit = steps
            .iter()
            .rposition(|s| matches!(s.action, Action::Edit(_)));
        let (start, rest) = match last_edit {
            Some(i) => (&steps[i].after, &steps[i + 1..]),
            None => (self.timeline.start(), steps),
        };
        let moves: Vec<Move> = rest
            .iter()
            .filter_map(|s| s.played().map(|p| p.0))
            .collect();
        crate::scenario::write::scenario_text(
            &self.engine(),
            &crate::scenario::write::Recording {
                name,
                pack_dirs,
                seed: self.seed,
                start,
                moves: &moves,
            },
        )
        .map_err(|e| e.to_string())
    }

    /// Back to the start, forgetting every move.
    pub fn reset(&mut self) {
        self.timeline.reset();
    }
}
