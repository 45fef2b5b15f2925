//! What one seat knows of the game: the public state, the opponent's stacks as far as
//! their plays tell, and the opponent's turns with the positions they were made from.

use std::sync::Arc;

use super::{History, Position};
use crate::rules::{CardId, GameState, Seat};

/// One opponent stack as the observer knows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct KnownStack {
    /// How many cards it holds (visible at the table).
    size: usize,
    /// The cards known to be at its bottom, top-most first: those played from it lately.
    bottom: Vec<CardId>,
    /// Every card played from it, first play first.
    plays: Vec<CardId>,
    /// The opponent's turns from this index of [`Observation::turns`] on came after its
    /// last play from this stack: at each, its top card now was on offer and passed over.
    since: usize,
}

impl KnownStack {
    /// A stack of `size` cards none of which has been seen played.
    pub(crate) fn unplayed(size: usize) -> KnownStack {
        KnownStack {
            size,
            bottom: Vec::new(),
            plays: Vec::new(),
            since: 0,
        }
    }

    /// How many cards it holds.
    pub(crate) fn size(&self) -> usize {
        self.size
    }

    /// The cards known to be at its bottom, top-most first.
    pub(crate) fn bottom(&self) -> &[CardId] {
        &self.bottom
    }

    /// Every card played from it, first play first.
    pub(crate) fn plays(&self) -> &[CardId] {
        &self.plays
    }

    /// The first of the opponent's [`Observation::turns`] at which the card on top now
    /// was on offer and passed over.
    pub(crate) fn since(&self) -> usize {
        self.since
    }

    /// Whether the observer does not know the card on top: some card of the stack has
    /// not been played yet.
    pub(crate) fn top_unknown(&self) -> bool {
        self.plays.len() < self.size
    }
}

/// What `seat` knows of the game.
#[derive(Clone, Debug)]
pub struct Observation {
    seat: Seat,
    /// The state with the opponent's stacks emptied: simulate own moves on it directly.
    state: GameState,
    opponent: Vec<KnownStack>,
    /// The opponent's plays, first first: the card and the position it was played from
    /// (where the history kept it); empty when the history kept no position at all.
    turns: Vec<(CardId, Option<Arc<Position>>)>,
    /// With `omniscient`, the true state (for tests and for measuring what hiding costs).
    truth: Option<GameState>,
}

impl Observation {
    /// What `seat` sees of `state`, given every play so far. With `omniscient`, the agent
    /// also sees the opponent's stacks.
    #[must_use]
    pub fn new(state: &GameState, seat: Seat, history: &History, omniscient: bool) -> Observation {
        let other = seat.other();
        let mut opponent: Vec<KnownStack> = state
            .seat(other)
            .stacks()
            .iter()
            .map(|s| KnownStack::unplayed(s.len()))
            .collect();
        // One pass over the plays for every stack (random playouts make an observation
        // every move).
        let theirs = history.plays.iter().filter(|p| p.seat == other);
        for (t, p) in theirs.enumerate() {
            if let Some(known) = opponent.get_mut(usize::from(p.stack)) {
                known.plays.push(p.card);
                known.since = t + 1;
            }
        }
        for known in &mut opponent {
            let seen = known.plays.len().min(known.size);
            known.bottom = known.plays[known.plays.len() - seen..].to_vec();
        }
        // Without a single position kept there is nothing to rate: no list to make.
        let turns = if history.from.iter().any(Option::is_some) {
            history
                .plays
                .iter()
                .zip(history.from.iter().chain(std::iter::repeat(&None)))
                .filter(|(p, _)| p.seat == other)
                .map(|(p, from)| (p.card, from.clone()))
                .collect()
        } else {
            Vec::new()
        };
        let mut public = state.clone();
        let empty: Vec<Vec<CardId>> = vec![Vec::new(); opponent.len()];
        public.set_stacks(other, &empty);
        // The game's future random draws are hidden too: look-ahead draws its own.
        public.reseed(
            u64::from(state.moves_played()).wrapping_mul(0x9E37_79B9_7F4A_7C15)
                ^ u64::from(seat.number()),
        );
        Observation {
            seat,
            state: public,
            opponent,
            turns,
            truth: omniscient.then(|| state.clone()),
        }
    }

    /// The observing seat.
    #[must_use]
    pub fn seat(&self) -> Seat {
        self.seat
    }

    /// The public state: the opponent's stacks are empty in it.
    #[must_use]
    pub fn state(&self) -> &GameState {
        &self.state
    }

    /// The opponent's stacks as the observer knows them, by stack.
    pub(crate) fn opponent(&self) -> &[KnownStack] {
        &self.opponent
    }

    /// The opponent's plays, first first: the card and the position it was played from
    /// (where the history kept it); empty when the history kept no position at all.
    pub(crate) fn turns(&self) -> &[(CardId, Option<Arc<Position>>)] {
        &self.turns
    }

    /// With `omniscient`, the true state.
    pub(crate) fn truth(&self) -> Option<&GameState> {
        self.truth.as_ref()
    }
}
