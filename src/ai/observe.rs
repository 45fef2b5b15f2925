//! What one seat may see: the board, the scores, its own stacks, the size of each of the
//! opponent's stacks and the cards the opponent has played (from which stack) — never the
//! opponent's hidden stack order, unless the `omniscient` option is set for testing.
//!
//! An [`Observation`] is built from the true state and holds only public information; the
//! opponent's unknown cards are filled in by [`Observation::determinize`], which samples a
//! full state consistent with everything seen.

use rand::RngExt;
use rand_pcg::Pcg32;

use crate::rules::{CardId, Catalog, Event, EventKind, GameState, Seat};

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

/// Append the plays in `events` to `history`.
pub fn record(history: &mut Vec<PublicPlay>, events: &[Event]) {
    for e in events {
        if let EventKind::Cycled { seat, stack, card } = e.kind {
            history.push(PublicPlay { seat, stack, card });
        }
    }
}

/// One opponent stack as the observer knows it.
#[derive(Clone, Debug, PartialEq, Eq)]
struct KnownStack {
    /// How many cards it holds (visible at the table).
    size: usize,
    /// The cards known to be at its bottom, top-most first: those played from it lately.
    bottom: Vec<CardId>,
}

/// What `seat` knows of the game.
#[derive(Clone, Debug)]
pub struct Observation {
    seat: Seat,
    /// The state with the opponent's stacks emptied: simulate own moves on it directly.
    state: GameState,
    opponent: Vec<KnownStack>,
    /// With `omniscient`, the true state (for tests and for measuring what hiding costs).
    truth: Option<GameState>,
}

impl Observation {
    /// What `seat` sees of `state`, given every play so far. With `omniscient`, the agent
    /// also sees the opponent's stacks.
    #[must_use]
    pub fn new(
        state: &GameState,
        seat: Seat,
        history: &[PublicPlay],
        omniscient: bool,
    ) -> Observation {
        let other = seat.other();
        let opponent: Vec<KnownStack> = state
            .seat(other)
            .stacks()
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let plays: Vec<CardId> = history
                    .iter()
                    .filter(|p| p.seat == other && usize::from(p.stack) == i)
                    .map(|p| p.card)
                    .collect();
                let size = s.len();
                let known = plays.len().min(size);
                KnownStack {
                    size,
                    bottom: plays[plays.len() - known..].to_vec(),
                }
            })
            .collect();
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

    /// A full state consistent with what the seat has seen: each opponent stack keeps its
    /// size and its known bottom cards; the unknown cards above them are drawn from the
    /// loaded cards not known to be in the opponent's deck, each at most once.
    #[must_use]
    pub fn determinize(&self, catalog: &Catalog, rng: &mut Pcg32) -> GameState {
        if let Some(truth) = &self.truth {
            return truth.clone();
        }
        let known: Vec<CardId> = self
            .opponent
            .iter()
            .flat_map(|s| s.bottom.iter().copied())
            .collect();
        let mut pool: Vec<CardId> = catalog.card_ids().filter(|c| !known.contains(c)).collect();
        let mut stacks = Vec::with_capacity(self.opponent.len());
        for stack in &self.opponent {
            let unknown = stack.size - stack.bottom.len();
            let mut cards = Vec::with_capacity(stack.size);
            for _ in 0..unknown {
                let card = if pool.is_empty() {
                    // A catalog smaller than a deck: repeat a known card rather than fail.
                    known.first().copied().unwrap_or(CardId(0))
                } else {
                    pool.swap_remove(rng.random_range(0..pool.len()))
                };
                cards.push(card);
            }
            cards.extend_from_slice(&stack.bottom);
            stacks.push(cards);
        }
        let mut state = self.state.clone();
        state.set_stacks(self.seat.other(), &stacks);
        state
    }
}
