//! Random decks, exactly as docs/rules.md's "Random decks" says, deterministic per seed:
//!
//! - *random content*: each stack starts with the rules' smallest size; one more card is
//!   added with probability 1/2, then another with 1/3, then 1/4, … up to the largest
//!   size (2–3 cards is common, 5 rare). The first stack draws only cards that are not a
//!   loss on the opening move, as the move evaluator rates them on an empty board. A card
//!   appears at most once in the deck.
//! - *random from saved decks*: one of them, uniformly.

use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg32;

use super::Brain;
use super::eval::evaluate;
use crate::rules::{CardId, Catalog, GameState, Move, Play, Seat};

/// Why a random deck cannot be made from the loaded content.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RandomDeckError {
    /// Too few cards for the deck drawn.
    #[error("the loaded content has {have} cards; this random deck needs {need}")]
    TooFewCards {
        /// Cards loaded.
        have: usize,
        /// Cards the drawn stack sizes need.
        need: usize,
    },
    /// Too few cards are fit to open with.
    #[error("only {have} card(s) are not a loss on the opening move; the first stack needs {need}")]
    TooFewOpeners {
        /// Cards fit to open with.
        have: usize,
        /// Cards the first stack needs.
        need: usize,
    },
}

/// How playing `card` first, on an empty board, changes the mover's evaluation at its
/// best cell (`None` when the card cannot be played at all).
#[must_use]
pub fn opening_value(brain: &Brain<'_>, card: CardId) -> Option<f64> {
    let catalog = brain.engine().catalog();
    let empty = GameState::new(catalog, [&[], &[]], 0);
    let before = evaluate(brain, &empty, Seat::One);
    let mut scratch = empty.clone();
    let mut best: Option<f64> = None;
    for cell in empty.board().empty_cells() {
        scratch.clone_from(&empty);
        let mv = Move {
            seat: Seat::One,
            play: Play::Card(card),
            cell,
        };
        if brain.play_lookahead(&mut scratch, mv).is_ok() {
            let v = evaluate(brain, &scratch, Seat::One) - before;
            best = Some(best.map_or(v, |b: f64| b.max(v)));
        }
    }
    best
}

/// The cards that are not a loss on the opening move, in catalog order.
#[must_use]
pub fn openers(brain: &Brain<'_>) -> Vec<CardId> {
    brain
        .engine()
        .catalog()
        .card_ids()
        .filter(|&c| opening_value(brain, c).is_some_and(|v| v >= 0.0))
        .collect()
}

/// The stack sizes of a random-content deck: the smallest size, then one more card with
/// probability 1/2, another with 1/3, … while the largest size allows.
fn stack_sizes(catalog: &Catalog, rng: &mut Pcg32) -> Vec<usize> {
    let rules = &catalog.rules();
    (0..rules.stacks)
        .map(|_| {
            let mut n = usize::from(rules.stack_min);
            let mut odds = 2u32;
            while n < usize::from(rules.stack_max) && rng.random_range(0..odds) == 0 {
                n += 1;
                odds += 1;
            }
            n
        })
        .collect()
}

/// Take `n` cards at random from `pool` (removing them).
fn draw(pool: &mut Vec<CardId>, n: usize, rng: &mut Pcg32) -> Vec<CardId> {
    (0..n)
        .map(|_| pool.swap_remove(rng.random_range(0..pool.len())))
        .collect()
}

/// A random-content deck for the loaded content, the same for the same seed.
pub fn random_content(brain: &Brain<'_>, seed: u64) -> Result<Vec<Vec<CardId>>, RandomDeckError> {
    let catalog = brain.engine().catalog();
    let mut rng = Pcg32::seed_from_u64(seed);
    let sizes = stack_sizes(catalog, &mut rng);
    let need: usize = sizes.iter().sum();
    let have = catalog.cards().len();
    if have < need {
        return Err(RandomDeckError::TooFewCards { have, need });
    }
    let mut openers = openers(brain);
    let first = sizes.first().copied().unwrap_or(0);
    if openers.len() < first {
        return Err(RandomDeckError::TooFewOpeners {
            have: openers.len(),
            need: first,
        });
    }
    let mut stacks = vec![draw(&mut openers, first, &mut rng)];
    let mut pool: Vec<CardId> = catalog
        .card_ids()
        .filter(|c| !stacks[0].contains(c))
        .collect();
    for &n in sizes.iter().skip(1) {
        stacks.push(draw(&mut pool, n, &mut rng));
    }
    Ok(stacks)
}

/// One of `count` saved decks, uniformly, the same for the same seed (`None` without any).
#[must_use]
pub fn random_saved(count: usize, seed: u64) -> Option<usize> {
    (count > 0).then(|| Pcg32::seed_from_u64(seed).random_range(0..count))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_content_decks_follow_the_rules_over_many_seeds() {
        let catalog = crate::content::base_for_tests();
        // A planter worth 1 gives the opponent more than it gains even in a corner: a
        // loss on the opening move. Every base card is fine at its best cell.
        let planter = catalog
            .card_named("plant_ring")
            .unwrap_or_else(|e| panic!("{e}"));
        let catalog = catalog.edited(|p| p.cards[planter.index()].value = 1);
        let scripts = crate::ai::hooks_for(&catalog);
        let brain = scripts.brain(&catalog);
        assert!(opening_value(&brain, planter).is_some_and(|v| v < 0.0));
        let openers = openers(&brain);
        assert_eq!(openers.len(), catalog.cards().len() - 1);
        assert!(!openers.contains(&planter));
        let mut sizes = [0usize; 6];
        let seeds = 2000u64;
        for seed in 0..seeds {
            let deck = random_content(&brain, seed).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(
                deck,
                random_content(&brain, seed).unwrap_or_default(),
                "deterministic"
            );
            brain
                .engine()
                .check_deck(Seat::One, &deck)
                .unwrap_or_else(|e| panic!("seed {seed}: {e}"));
            let mut all: Vec<CardId> = deck.iter().flatten().copied().collect();
            let n = all.len();
            all.sort();
            all.dedup();
            assert_eq!(all.len(), n, "a card at most once");
            assert!(
                deck[0].iter().all(|c| openers.contains(c)),
                "a viable first stack"
            );
            for s in &deck {
                sizes[s.len()] += 1;
            }
        }
        // Expected shares per stack: 2 cards 1/2, 3 cards 1/3, 4 cards 1/8, 5 cards 1/24.
        #[allow(clippy::cast_precision_loss)] // Counts of a few thousand.
        let share = |n: usize| sizes[n] as f64 / (seeds * 4) as f64;
        for (n, want) in [(2, 0.5), (3, 1.0 / 3.0), (4, 0.125), (5, 1.0 / 24.0)] {
            assert!(
                (share(n) - want).abs() < 0.02,
                "size {n}: {} vs {want}",
                share(n)
            );
        }
        assert_eq!(random_saved(0, 1), None);
        assert!(random_saved(5, 1).is_some_and(|i| i < 5));
    }
}
