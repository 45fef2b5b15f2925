//! What one seat may see: the board, the scores, its own stacks, the size of each of the
//! opponent's stacks and the cards the opponent has played (from which stack) — never the
//! opponent's hidden stack order, unless the `omniscient` option is set for testing.
//!
//! An [`Observation`] is built from the true state and holds only public information; the
//! AI fills in the opponent's unknown cards from it (`ai::Worlds`), never this module.
//!
//! A [`History`] holds the public plays of a game, each with the position it was made from
//! (both seats' stacks emptied: nothing hidden), the newest [`KEPT_POSITIONS`] at most. A
//! client, which gets the plays and not their positions, builds its history with
//! [`History::follow`]: a play's position is the state seen one move before it. A
//! [`Position`] also keeps, for one catalog `stamp`, what each card was worth there as the
//! AI rates it, as plain data: whoever rates next goes on from it.
//!
//! Rules values only: the AI, the LAN host and the client use it; it uses nothing above
//! `rules`. The parts only the AI reads (an observation's known opponent stacks and turns,
//! a position's worth) are `pub(crate)`.

mod observation;
mod position;

use std::sync::Arc;

pub(crate) use observation::KnownStack;
pub use observation::Observation;
pub use position::Position;
pub(crate) use position::Worth;

use crate::rules::{CardId, Event, EventKind, GameState, Seat};

/// A card a seat played, as everyone at the table saw it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PublicPlay {
    /// Who played it.
    pub seat: Seat,
    /// From which of their stacks (0-based).
    pub stack: u8,
    /// The card.
    pub card: CardId,
}

/// Every play of a game so far, as everyone at the table saw it, with the public position
/// each was made from where it was seen live: what the opponent passed over says what it
/// holds (the AI reads it when it fills in hidden cards).
#[derive(Clone, Debug, Default)]
pub struct History {
    plays: Vec<PublicPlay>,
    /// For each play, the position it was made from; `None` (or missing at the end) where
    /// it was not kept: a history restored from the network, or one kept without
    /// positions.
    from: Vec<Option<Arc<Position>>>,
    /// Whether [`History::record`] keeps positions.
    keep: bool,
}

impl History {
    /// An empty history that keeps the position of every play.
    #[must_use]
    pub fn new() -> History {
        History {
            keep: true,
            ..History::default()
        }
    }

    /// An empty history that keeps the plays only: for agents that never fill in hidden
    /// cards, where a copy of the position per move would be work for nothing.
    #[must_use]
    pub fn plays_only() -> History {
        History::default()
    }

    /// A history of `plays` without their positions (restored from what the network sent).
    #[must_use]
    pub fn from_plays(plays: Vec<PublicPlay>) -> History {
        History {
            plays,
            from: Vec::new(),
            keep: true,
        }
    }

    /// The position of a move about to be made from `state`, for [`History::record`]:
    /// made only when this history keeps positions (taken before the move, it spares the
    /// caller a copy of the whole state).
    #[must_use]
    pub fn position_of(&self, state: &GameState) -> Option<Arc<Position>> {
        self.keep.then(|| Arc::new(Position::of(state)))
    }

    /// Append the plays in `events`, made from `from` ([`History::position_of`] the state
    /// before them).
    pub fn record(&mut self, from: Option<Arc<Position>>, events: &[Event]) {
        let mark = self.plays.len();
        for e in events {
            if let EventKind::Cycled { seat, stack, card } = e.kind {
                self.plays.push(PublicPlay { seat, stack, card });
            }
        }
        if let Some(position) = from.filter(|_| self.plays.len() > mark) {
            self.from.resize(mark, None);
            self.from.resize(self.plays.len(), Some(position));
            self.keep_newest();
        }
    }

    /// Let go of the oldest positions past [`KEPT_POSITIONS`].
    fn keep_newest(&mut self) {
        let mut kept = self.from.iter().filter(|p| p.is_some()).count();
        for old in &mut self.from {
            if kept <= KEPT_POSITIONS {
                break;
            }
            if old.take().is_some() {
                kept -= 1;
            }
        }
    }

    /// Follow a game seen one state at a time, as a client sees it: `plays` are the
    /// plays so far as the latest state, `now`, gives them, and `before` the state seen
    /// just before that one. A single new play, one move after `before`, was made from
    /// it, and its position is kept (when this history keeps positions); any other new
    /// play (states missed in between, say while reconnecting) keeps none. Plays that do
    /// not go on from the ones held (another game) replace them.
    pub fn follow(&mut self, before: Option<&GameState>, now: &GameState, plays: Vec<PublicPlay>) {
        let held = self.plays.len();
        let goes_on = plays.len() >= held && plays[..held] == self.plays[..];
        if !self.keep {
            self.plays = plays;
            return;
        }
        if !goes_on {
            // Another game: none of its plays' positions was seen.
            self.from.clear();
            self.plays = plays;
            return;
        }
        self.from.resize(held, None);
        if let Some(before) = before
            && plays.len() == held + 1
            && before.moves_played().checked_add(1) == Some(now.moves_played())
        {
            self.from.push(Some(Arc::new(Position::of(before))));
            self.keep_newest();
        }
        self.plays = plays;
    }

    /// Whether [`History::record`] keeps the positions.
    #[must_use]
    pub fn keeps(&self) -> bool {
        self.keep
    }

    /// The plays, first play first.
    #[must_use]
    pub fn plays(&self) -> &[PublicPlay] {
        &self.plays
    }

    /// The position play `play` (an index into [`History::plays`]) was made from, where
    /// this history kept it.
    #[must_use]
    pub fn position(&self, play: usize) -> Option<&Arc<Position>> {
        self.from.get(play)?.as_ref()
    }
}

/// The most positions a history keeps, the newest: how long a game runs is up to whoever
/// runs it (a host, for a client), and a position is a copy of the board and scores with
/// a rating per card. The rating reads the newest first and only the turns since each
/// stack's last play.
pub const KEPT_POSITIONS: usize = 512;
