//! A game as it was played: the start, each move with its events and the state after it,
//! and a cursor over them (undo and redo move it). One model for every place that keeps
//! a game's history: the sandbox (which undoes, redoes and carries its game over to
//! reloaded content), a game in the client (which only ever adds moves), and what builds
//! on them (saved replays, network games). No screen and no I/O: rules values only.
//!
//! A [`Timeline`] is a start state with its opening events, the [`Step`]s taken from it
//! (an [`Action`] — a move, or an [`Edit`] by hand from the sandbox — its events, the
//! state after it and the catalog its events were made with) and a cursor.
//! [`Timeline::carry_over`] moves it to changed content through an `IdMap`, all or nothing,
//! saying what is missing. A LAN joiner [`Timeline::record`]s the steps the host played,
//! with the host's events and state.

use std::sync::Arc;

use crate::rules::{
    CardId, Catalog, Cell, Engine, Event, GameState, IdMap, Lost, Move, MoveError, Play, Seat,
    Token, remap_with,
};

/// Why an edit by hand was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EditError {
    /// The token's type is not in the content.
    #[error("that token type is not in the content")]
    UnknownTokenType,
    /// The cell is off the board.
    #[error("cell {0} is off the board")]
    OffBoard(Cell),
    /// There is no token to remove.
    #[error("there is no token at {0}")]
    Empty(Cell),
    /// More stacks than a seat may have.
    #[error("a seat has at most {} stacks", crate::rules::MAX_STACKS)]
    TooManyStacks,
    /// A card of the stacks is not in the content.
    #[error("a card of those stacks is not in the content")]
    UnknownCard,
}

/// What an edit uses that new content no longer has (`pack:id`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
enum Gone {
    #[error("token type {0} is gone")]
    TokenType(String),
    #[error("card {0} is gone")]
    Card(String),
}

/// A change made by hand to a position (the sandbox's position editor): not a move of
/// the game, but a step of its timeline, undone and redone like one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Edit {
    /// Put a token on a cell, replacing what was there.
    Put {
        /// The cell.
        cell: Cell,
        /// The token.
        token: Token,
    },
    /// Take the token off a cell.
    Remove {
        /// The cell.
        cell: Cell,
    },
    /// Set a seat's score.
    Score {
        /// The seat.
        seat: Seat,
        /// Its new score.
        score: i64,
    },
    /// Set a seat's banked extra turns.
    ExtraTurns {
        /// The seat.
        seat: Seat,
        /// How many it has banked.
        banked: u8,
    },
    /// Replace a seat's stacks (each top card first).
    Stacks {
        /// The seat.
        seat: Seat,
        /// The stacks.
        stacks: Vec<Vec<CardId>>,
    },
}

impl Edit {
    /// Apply the edit to `state`; an edit that cannot apply (a cell off the board) is
    /// refused and changes nothing.
    pub fn apply(&self, catalog: &Catalog, state: &mut GameState) -> Result<(), EditError> {
        match self {
            Edit::Put { cell, token } => {
                if token.kind.index() >= catalog.token_types().len() {
                    return Err(EditError::UnknownTokenType);
                }
                if !state.set_token(catalog, *cell, Some(*token)) {
                    return Err(EditError::OffBoard(*cell));
                }
            }
            Edit::Remove { cell } => {
                if state.board().get(*cell).is_none() {
                    return Err(EditError::Empty(*cell));
                }
                state.set_token(catalog, *cell, None);
            }
            Edit::Score { seat, score } => state.set_score(*seat, *score),
            Edit::ExtraTurns { seat, banked } => state.set_extra_turns(*seat, *banked),
            Edit::Stacks { seat, stacks } => {
                if stacks.len() > crate::rules::MAX_STACKS {
                    return Err(EditError::TooManyStacks);
                }
                if stacks
                    .iter()
                    .flatten()
                    .any(|c| c.index() >= catalog.cards().len())
                {
                    return Err(EditError::UnknownCard);
                }
                state.set_stacks(*seat, stacks);
            }
        }
        Ok(())
    }

    /// The edit in words, for the event log: `put seat 1 Booster 3 at (2, 2)`.
    #[must_use]
    pub fn describe(&self, catalog: &Catalog) -> String {
        match self {
            Edit::Put { cell, token } => format!(
                "put seat {} {} {} at {cell}",
                token.seat,
                catalog.token_type(token.kind).meta.name,
                token.value
            ),
            Edit::Remove { cell } => format!("removed the token at {cell}"),
            Edit::Score { seat, score } => format!("set seat {seat}'s score to {score}"),
            Edit::ExtraTurns { seat, banked } => {
                format!("set seat {seat}'s banked extra turns to {banked}")
            }
            Edit::Stacks { seat, stacks } => {
                let stacks: Vec<String> = stacks
                    .iter()
                    .map(|s| {
                        let names: Vec<&str> = s
                            .iter()
                            .map(|&c| catalog.card(c).meta.id.as_str())
                            .collect();
                        format!("[{}]", names.join(", "))
                    })
                    .collect();
                format!("set seat {seat}'s stacks to {}", stacks.join(" "))
            }
        }
    }

    /// The edit with `old`'s ids as `new`'s, or what is gone (in words, for the list
    /// [`Timeline::carry_over`] returns).
    fn carried(&self, old: &Catalog, map: &IdMap) -> Result<Edit, Gone> {
        Ok(match self {
            Edit::Put { cell, token } => {
                let kind = map
                    .kind(token.kind)
                    .ok_or_else(|| Gone::TokenType(old.token_type(token.kind).meta.key()))?;
                let card = token.card.and_then(|c| map.card(c));
                Edit::Put {
                    cell: *cell,
                    token: Token {
                        kind,
                        card,
                        ..*token
                    },
                }
            }
            Edit::Stacks { seat, stacks } => {
                let mut out = Vec::with_capacity(stacks.len());
                for s in stacks {
                    let mut cards = Vec::with_capacity(s.len());
                    for &c in s {
                        cards.push(
                            map.card(c)
                                .ok_or_else(|| Gone::Card(old.card(c).meta.key()))?,
                        );
                    }
                    out.push(cards);
                }
                Edit::Stacks {
                    seat: *seat,
                    stacks: out,
                }
            }
            other => other.clone(),
        })
    }
}

/// What a step of a timeline did: a move of the game, or an edit by hand.
#[derive(Clone, Debug)]
pub enum Action {
    /// A move and the card it played.
    Move {
        /// The move.
        mv: Move,
        /// The card it played.
        card: CardId,
    },
    /// A change to the position made by hand.
    Edit(Edit),
}

/// One step of a timeline (a move, or an edit) and what it did.
#[derive(Clone, Debug)]
pub struct Step {
    /// The move or edit.
    pub action: Action,
    /// Its events, in order (none for an edit).
    pub events: Vec<Event>,
    /// The state after it.
    pub after: GameState,
    /// The content it was played with (its events' ids are that catalog's).
    pub catalog: Arc<Catalog>,
}

impl Step {
    /// The move and its card, when the step is a move.
    #[must_use]
    pub fn played(&self) -> Option<(Move, CardId)> {
        match &self.action {
            Action::Move { mv, card } => Some((*mv, *card)),
            Action::Edit(_) => None,
        }
    }

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

    /// Play `mv` on `state` (normally a copy of [`Timeline::state`]) with `engine`, and
    /// add it; moves undone before are dropped. On a refusal nothing changes.
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
        Ok(self.push(Action::Move { mv, card: card? }, events, state, catalog))
    }

    /// Play `mv` on the current state as [`Engine::play_any_seat`] does (a card from
    /// outside the stacks may be any seat's: the sandbox's), and add it; moves undone
    /// before are dropped. On a refusal nothing changes.
    pub fn play_any_seat(
        &mut self,
        engine: &Engine<'_>,
        catalog: &Arc<Catalog>,
        mv: Move,
    ) -> Result<&Step, MoveError> {
        let mut state = self.state().clone();
        let card = engine.card_played(&state, mv);
        let mut events = Vec::new();
        engine.play_any_seat(&mut state, mv, Some(&mut events))?;
        Ok(self.push(Action::Move { mv, card: card? }, events, state, catalog))
    }

    fn push(
        &mut self,
        action: Action,
        events: Vec<Event>,
        after: GameState,
        catalog: &Arc<Catalog>,
    ) -> &Step {
        self.record(Step {
            action,
            events,
            after,
            catalog: Arc::clone(catalog),
        })
    }

    /// Apply `edit` to the current state and add it as a step; steps undone before are
    /// dropped. A refused edit changes nothing.
    pub fn edit(&mut self, catalog: &Arc<Catalog>, edit: Edit) -> Result<&Step, EditError> {
        let mut state = self.state().clone();
        edit.apply(catalog, &mut state)?;
        Ok(self.push(Action::Edit(edit), Vec::new(), state, catalog))
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
        let mut actions = Vec::with_capacity(self.steps.len());
        for (n, step) in self.steps.iter().enumerate() {
            let (mv, card) = match &step.action {
                Action::Move { mv, card } => (*mv, *card),
                Action::Edit(edit) => {
                    match edit.carried(old, map) {
                        Ok(e) => actions.push(Action::Edit(e)),
                        Err(gone) => problems.push(format!("edit {}: {gone}", n + 1)),
                    }
                    continue;
                }
            };
            let gone = || {
                format!(
                    "move {} plays card {}, which is gone",
                    n + 1,
                    old.card(card).meta.key()
                )
            };
            match (mv.play, map.card(card)) {
                (Play::Card(_), Some(card)) => actions.push(Action::Move {
                    mv: Move {
                        play: Play::Card(card),
                        ..mv
                    },
                    card,
                }),
                (Play::Stack(_), Some(card)) => actions.push(Action::Move { mv, card }),
                // A card played from a stack is still in it: the states above have
                // said so already, unless nothing else is missing.
                (Play::Stack(_), None) if !problems.is_empty() => {}
                (_, None) => problems.push(gone()),
            }
        }
        if !problems.is_empty() {
            return Err(problems);
        }
        for ((step, after), action) in self.steps.iter_mut().zip(states).zip(actions) {
            step.after = after;
            step.action = action;
        }
        self.start = start;
        Ok(())
    }
}
