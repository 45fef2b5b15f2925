//! A game as it was played: the start, each move with its events and the state after it,
//! and a cursor over them (undo and redo move it). One model for every place that keeps
//! a game's history: the sandbox (which undoes, redoes and carries its game over to
//! reloaded content), a game in the client (which only ever adds moves), and what builds
//! on them (saved replays, network games). No screen and no I/O: rules values only.

use std::sync::Arc;

use crate::rules::{
    CardId, Catalog, Engine, Event, GameState, IdMap, Lost, Move, MoveError, Play, Seat, remap_with,
};

/// One move of a timeline and what it did.
#[derive(Clone, Debug)]
pub struct Step {
    /// The move.
    pub mv: Move,
    /// The card it played.
    pub card: CardId,
    /// Its events, in order.
    pub events: Vec<Event>,
    /// The state after it.
    pub after: GameState,
    /// The content it was played with (its events' ids are that catalog's).
    pub catalog: Arc<Catalog>,
}

impl Step {
    /// Both scores after the move.
    #[must_use]
    pub fn scores(&self) -> [i64; 2] {
        [self.after.score(Seat::One), self.after.score(Seat::Two)]
    }
}

/// A moment of a timeline whose events can be looked at: the opening (the opening
/// token's placement) or a move (0-based).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Moment {
    /// Before the first move: the opening token.
    Opening,
    /// Move `n` (0-based).
    Move(usize),
}

/// A start, the moves played from it, and how many of them are applied.
#[derive(Clone, Debug)]
pub struct Timeline {
    start: GameState,
    opening: Vec<Event>,
    opening_catalog: Arc<Catalog>,
    steps: Vec<Step>,
    applied: usize,
}

impl Timeline {
    /// A timeline at `start`, dealt by `catalog` with the `opening` events.
    #[must_use]
    pub fn new(start: GameState, opening: Vec<Event>, catalog: Arc<Catalog>) -> Timeline {
        Timeline {
            start,
            opening,
            opening_catalog: catalog,
            steps: Vec::new(),
            applied: 0,
        }
    }

    /// The state before the first move.
    #[must_use]
    pub fn start(&self) -> &GameState {
        &self.start
    }

    /// The state after the applied moves.
    #[must_use]
    pub fn state(&self) -> &GameState {
        match self.applied {
            0 => &self.start,
            n => &self.steps[n - 1].after,
        }
    }

    /// The applied moves, oldest first.
    #[must_use]
    pub fn steps(&self) -> &[Step] {
        &self.steps[..self.applied]
    }

    /// How many moves are applied, and how many are kept (redo can reach them).
    #[must_use]
    pub fn position(&self) -> (usize, usize) {
        (self.applied, self.steps.len())
    }

    /// The opening token's events.
    #[must_use]
    pub fn opening(&self) -> &[Event] {
        &self.opening
    }

    /// The events of `at` (empty for a move not applied).
    #[must_use]
    pub fn events(&self, at: Moment) -> &[Event] {
        match at {
            Moment::Opening => &self.opening,
            Moment::Move(n) => self.steps().get(n).map_or(&[], |s| &s.events),
        }
    }

    /// The content the events of `at` were made with, if it was played.
    #[must_use]
    pub fn catalog_of(&self, at: Moment) -> Option<&Arc<Catalog>> {
        match at {
            Moment::Opening => Some(&self.opening_catalog),
            Moment::Move(n) => self.steps().get(n).map(|s| &s.catalog),
        }
    }

    /// Play `mv` on `state` (normally a copy of [`Timeline::state`], perhaps with the turn
    /// set, as the sandbox does) with `engine`, and add it; moves undone before are
    /// dropped. On a refusal nothing changes.
    pub fn play(
        &mut self,
        engine: &Engine<'_>,
        catalog: &Arc<Catalog>,
        mut state: GameState,
        mv: Move,
    ) -> Result<&Step, MoveError> {
        // The card is read before the move changes the stacks; `play` checks the move
        // itself (a played move always names a card).
        let card = engine.card_played(&state, mv);
        let mut events = Vec::new();
        engine.play(&mut state, mv, &mut events)?;
        let card = card?;
        self.steps.truncate(self.applied);
        self.steps.push(Step {
            mv,
            card,
            events,
            after: state,
            catalog: Arc::clone(catalog),
        });
        self.applied = self.steps.len();
        Ok(&self.steps[self.applied - 1])
    }

    /// Add a move played elsewhere — a network game's host played it and sent its events
    /// and the state after it — instead of playing it here; moves undone before are
    /// dropped.
    pub fn record(&mut self, step: Step) -> &Step {
        self.steps.truncate(self.applied);
        self.steps.push(step);
        self.applied = self.steps.len();
        &self.steps[self.applied - 1]
    }

    /// Take back the last applied move; false when there is none.
    pub fn undo(&mut self) -> bool {
        let can = self.can_undo();
        self.applied = self.applied.saturating_sub(1);
        can
    }

    /// Apply again the last move taken back; false when there is none.
    pub fn redo(&mut self) -> bool {
        let can = self.can_redo();
        if can {
            self.applied += 1;
        }
        can
    }

    /// Whether there is a move to take back.
    #[must_use]
    pub fn can_undo(&self) -> bool {
        self.applied > 0
    }

    /// Whether there is a move taken back to apply again.
    #[must_use]
    pub fn can_redo(&self) -> bool {
        self.applied < self.steps.len()
    }

    /// Back to the start, forgetting every move.
    pub fn reset(&mut self) {
        self.steps.clear();
        self.applied = 0;
    }

    /// Each seat's score at the start and after every applied move.
    #[must_use]
    pub fn score_trail(&self) -> Vec<[i64; 2]> {
        let start = [self.start.score(Seat::One), self.start.score(Seat::Two)];
        std::iter::once(start)
            .chain(self.steps().iter().map(Step::scores))
            .collect()
    }

    /// Carry the whole timeline (start, every move, the undo and redo history) over from
    /// `old` to `new` through `map` (`old`'s ids to `new`'s, matched by `pack:id`). States
    /// and moves change ids; each move's events keep the catalog they were made with.
    /// When something the timeline uses is gone, nothing changes and the list says what:
    /// first what the current state uses, then the moves of the history, then the start.
    pub fn carry_over(
        &mut self,
        old: &Catalog,
        new: &Catalog,
        map: &IdMap,
    ) -> Result<(), Vec<String>> {
        let remap = |state: &GameState| remap_with(state, map, old, new);
        let words = |lost: Vec<Lost>| lost.into_iter().map(|l| l.to_string());
        let mut problems: Vec<String> = match remap(self.state()) {
            Ok(_) => Vec::new(),
            Err(lost) => words(lost).collect(),
        };
        let start = remap(&self.start);
        let mut states = Vec::with_capacity(self.steps.len());
        for (n, step) in self.steps.iter().enumerate() {
            match remap(&step.after) {
                Ok(s) => states.push(s),
                Err(lost) if problems.is_empty() => problems.extend(
                    words(lost).map(|l| format!("move {} in the undo history: {l}", n + 1)),
                ),
                Err(_) => {}
            }
        }
        let start = match start {
            Ok(s) if problems.is_empty() => s,
            Ok(_) => return Err(problems),
            Err(lost) => {
                problems.extend(words(lost).map(|l| format!("the start: {l}")));
                return Err(problems);
            }
        };
        let mut plays = Vec::with_capacity(self.steps.len());
        let mut cards = Vec::with_capacity(self.steps.len());
        for (n, step) in self.steps.iter().enumerate() {
            let gone = || {
                format!(
                    "move {} plays card {}, which is gone",
                    n + 1,
                    old.card(step.card).meta.key()
                )
            };
            match (step.mv.play, map.card(step.card)) {
                (Play::Card(_), Some(card)) => {
                    plays.push(Play::Card(card));
                    cards.push(card);
                }
                (stack @ Play::Stack(_), Some(card)) => {
                    plays.push(stack);
                    cards.push(card);
                }
                // A card played from a stack is still in it: the states above have
                // said so already, unless nothing else is missing.
                (Play::Stack(_), None) if !problems.is_empty() => {}
                (_, None) => problems.push(gone()),
            }
        }
        if !problems.is_empty() {
            return Err(problems);
        }
        for (((step, after), play), card) in self.steps.iter_mut().zip(states).zip(plays).zip(cards)
        {
            step.after = after;
            step.mv.play = play;
            step.card = card;
        }
        self.start = start;
        Ok(())
    }
}
