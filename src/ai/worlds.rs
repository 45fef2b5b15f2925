//! Full states drawn from what one seat has seen, for the agents that fill in the
//! opponent's hidden cards (`normal`, `hard`).
//!
//! [`Worlds::determinize`] gives a state consistent with everything an [`Observation`]
//! holds. What the plays say of the opponent's deck (a `Belief`, `belief.rs`) is worked
//! out at the first draw and kept for the rest of the decision: an agent makes one
//! `Worlds` per decision, and `hard`'s two trees draw from the same one.

use std::sync::OnceLock;

use rand::RngExt;
use rand_pcg::Pcg32;

use super::Brain;
use super::belief::{Belief, draw_weighted};
use crate::observe::Observation;
use crate::rules::{CardId, GameState};

/// The full states one decision draws from an observation, with what the plays say of
/// the opponent's deck, made at the first draw.
#[derive(Debug)]
pub struct Worlds<'a> {
    obs: &'a Observation,
    belief: OnceLock<Belief>,
}

impl<'a> Worlds<'a> {
    /// The worlds `obs` allows; nothing is worked out before the first draw.
    #[must_use]
    pub fn new(obs: &'a Observation) -> Worlds<'a> {
        Worlds {
            obs,
            belief: OnceLock::new(),
        }
    }

    /// The observation drawn from.
    #[must_use]
    pub fn observation(&self) -> &'a Observation {
        self.obs
    }

    /// A full state consistent with what the seat has seen: each opponent stack keeps its
    /// size and its known bottom cards. The opponent's deck is one of the loaded decks
    /// still consistent with the plays, with its posterior probability (see `belief.rs`);
    /// otherwise the unknown cards are drawn from the loaded cards not known to be in the
    /// opponent's deck, each at most once, a stack's top card by how likely the
    /// opponent's choices make it: a card it passed over while playing a worse one is
    /// less likely still to be there.
    ///
    /// The first call works out the belief, with `brain` (its decision's budgets apply;
    /// see `Belief::of`).
    #[must_use]
    pub fn determinize(&self, brain: &Brain<'_>, rng: &mut Pcg32) -> GameState {
        let obs = self.obs;
        if let Some(truth) = obs.truth() {
            return truth.clone();
        }
        let catalog = brain.engine().catalog();
        let belief = self.belief.get_or_init(|| Belief::of(obs, brain));
        if let Some(stacks) = belief.sample(rng) {
            let mut state = obs.state().clone();
            state.set_stacks(obs.seat().other(), stacks);
            return state;
        }
        let opponent = obs.opponent();
        let known: Vec<CardId> = opponent
            .iter()
            .flat_map(|s| s.bottom().iter().copied())
            .collect();
        let mut pool: Vec<CardId> = catalog.card_ids().filter(|c| !known.contains(c)).collect();
        // The tops with evidence first, in a random order so that none is favoured when
        // two want the same card.
        let mut tops: Vec<Option<CardId>> = vec![None; opponent.len()];
        let mut order: Vec<usize> = (0..opponent.len())
            .filter(|&j| opponent[j].size() > opponent[j].bottom().len())
            .filter(|&j| belief.top(j).is_some())
            .collect();
        for i in (1..order.len()).rev() {
            order.swap(i, rng.random_range(0..=i));
        }
        for j in order {
            if let Some(weights) = belief.top(j) {
                tops[j] = draw_weighted(&mut pool, weights, rng);
            }
        }
        let mut stacks = Vec::with_capacity(opponent.len());
        for (stack, top) in opponent.iter().zip(tops) {
            let unknown = stack.size() - stack.bottom().len();
            let mut cards = Vec::with_capacity(stack.size());
            cards.extend(top);
            while cards.len() < unknown {
                let card = draw_weighted(&mut pool, &[], rng)
                    // A catalog smaller than a deck: repeat a known card rather than fail.
                    .unwrap_or_else(|| known.first().copied().unwrap_or(CardId(0)));
                cards.push(card);
            }
            cards.extend_from_slice(stack.bottom());
            stacks.push(cards);
        }
        let mut state = obs.state().clone();
        state.set_stacks(obs.seat().other(), &stacks);
        state
    }
}
