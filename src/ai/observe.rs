//! What one seat may see: the board, the scores, its own stacks, the size of each of the
//! opponent's stacks and the cards the opponent has played (from which stack) — never the
//! opponent's hidden stack order, unless the `omniscient` option is set for testing.
//!
//! An [`Observation`] is built from the true state and holds only public information; the
//! opponent's unknown cards are filled in by [`Observation::determinize`], which samples a
//! full state consistent with everything seen.

use std::sync::OnceLock;

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
    /// Every card played from it, first play first.
    plays: Vec<CardId>,
}

/// The prior weight of "the opponent plays one of the loaded packs' decks", shared
/// equally among those decks; the rest is "some other deck", whose cards are drawn from
/// the whole catalog. Observed plays then update both by Bayes' rule.
const DECK_PRIOR: f64 = 0.5;

/// What the observer believes of the opponent's deck, from the public plays: each loaded
/// deck still consistent with them (with its stacks as they must be now) and the weight
/// of "another deck". Made once per observation.
#[derive(Clone, Debug)]
struct Belief {
    /// Each consistent deck's posterior weight and its stacks now, top first.
    decks: Vec<(f64, Vec<Vec<CardId>>)>,
    /// The posterior weight of a deck that is none of them.
    other: f64,
}

impl Belief {
    fn new(opponent: &[KnownStack], catalog: &Catalog) -> Belief {
        let all = catalog.decks();
        // Under "another deck", each card seen for the first time was one draw without
        // repeats from the catalog; under a loaded deck every play was certain.
        let mut seen: Vec<CardId> = Vec::new();
        for card in opponent.iter().flat_map(|s| s.plays.iter().copied()) {
            if !seen.contains(&card) {
                seen.push(card);
            }
        }
        let n = catalog.cards().len();
        #[allow(clippy::cast_precision_loss)]
        let likelihood: f64 = (0..seen.len())
            .map(|j| 1.0 / n.saturating_sub(j).max(1) as f64)
            .product();
        let other = (1.0 - DECK_PRIOR) * likelihood;
        #[allow(clippy::cast_precision_loss)]
        let each = if all.is_empty() {
            0.0
        } else {
            DECK_PRIOR / all.len() as f64
        };
        let decks = all
            .iter()
            .filter_map(|deck| now(&deck.stacks, opponent).map(|stacks| (each, stacks)))
            .collect();
        Belief { decks, other }
    }

    /// The opponent's stacks in one sampled world: a consistent loaded deck's, or `None`
    /// for "another deck" (drawn card by card).
    fn sample(&self, rng: &mut Pcg32) -> Option<&[Vec<CardId>]> {
        let total: f64 = self.other + self.decks.iter().map(|d| d.0).sum::<f64>();
        if self.decks.is_empty() || total <= 0.0 {
            return None;
        }
        let mut pick = rng.random::<f64>() * total;
        for (weight, stacks) in &self.decks {
            if pick < *weight {
                return Some(stacks);
            }
            pick -= weight;
        }
        None
    }
}

/// The stacks `deck` would have now, if the opponent had played it and made the plays
/// seen: `None` when the sizes or the plays say it is not that deck. A played card goes
/// to the bottom, so a stack played `p` times has turned by `p`.
fn now(deck: &[Vec<CardId>], opponent: &[KnownStack]) -> Option<Vec<Vec<CardId>>> {
    if deck.len() != opponent.len() {
        return None;
    }
    deck.iter()
        .zip(opponent)
        .map(|(cards, known)| {
            let k = cards.len();
            if k != known.size || (k == 0 && !known.plays.is_empty()) {
                return None;
            }
            if known
                .plays
                .iter()
                .enumerate()
                .any(|(j, &c)| cards[j % k] != c)
            {
                return None;
            }
            let turned = if k == 0 { 0 } else { known.plays.len() % k };
            Some(
                cards[turned..]
                    .iter()
                    .chain(&cards[..turned])
                    .copied()
                    .collect(),
            )
        })
        .collect()
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
    /// What the plays say of the opponent's deck, made at the first determinization.
    belief: OnceLock<Belief>,
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
                    plays,
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
            belief: OnceLock::new(),
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
    /// size and its known bottom cards. The opponent's deck is one of the loaded decks
    /// still consistent with the plays, with its posterior probability (see [`Belief`]);
    /// otherwise the unknown cards are drawn from the loaded cards not known to be in the
    /// opponent's deck, each at most once.
    #[must_use]
    pub fn determinize(&self, catalog: &Catalog, rng: &mut Pcg32) -> GameState {
        if let Some(truth) = &self.truth {
            return truth.clone();
        }
        let belief = self
            .belief
            .get_or_init(|| Belief::new(&self.opponent, catalog));
        if let Some(stacks) = belief.sample(rng) {
            let mut state = self.state.clone();
            state.set_stacks(self.seat.other(), stacks);
            return state;
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
