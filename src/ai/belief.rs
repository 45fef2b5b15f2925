//! What the AI believes of the opponent's deck from what one seat has seen, and the
//! ratings that belief reads.
//!
//! A [`Belief`] weighs the loaded decks still consistent with the plays against "another
//! deck", and each unseen stack top by the cards the opponent passed over while it was
//! on offer ([`passed`]): a card worth more than the one played is less likely to have
//! been there ([`pass_log`]). Those worths are rated through the engine at the positions
//! a [`History`](crate::observe::History) keeps ([`rate`]), and kept with each
//! [`Position`] for one catalog `stamp`. Rating is metered per decision (simulated plays,
//! a share of the script instructions), and a later decision goes on where the last one
//! stopped. [`Worlds`](super::Worlds) draws full states from a belief.

use rand::RngExt;
use rand_pcg::Pcg32;

use super::Brain;
use crate::observe::{KnownStack, Observation, Position, Worth};
use crate::rules::{CardId, Catalog, Seat};

/// The prior weight of "the opponent plays one of the loaded packs' decks", shared
/// equally among those decks; the rest is "some other deck", whose cards are drawn from
/// the whole catalog. Observed plays then update both by Bayes' rule.
const DECK_PRIOR: f64 = 0.5;

/// Below this share of "another deck" in the belief from the plays alone, what the
/// opponent passed over is not worked out (see [`Belief::of`]).
const OTHER_WORTH_TELLING: f64 = 0.01;

/// How sharply a passed-over card is thought worse than the one played: the opponent is
/// taken to prefer a card worth `d` more income swing with odds `e^(SHARPNESS·d)`.
const SHARPNESS: f64 = 1.0;

/// The chance that a choice says nothing at all (the opponent looks further ahead than
/// one move, or errs): keeps a card it passed over possible, only less likely.
const SLIP: f64 = 0.05;

/// The log of how likely it is that the opponent played a card worth `played` while
/// holding one worth `passed`.
fn pass_log(played: f64, passed: f64) -> f64 {
    let prefer = 1.0 / (1.0 + (SHARPNESS * (passed - played)).exp());
    (SLIP + (1.0 - SLIP) * prefer).ln()
}

/// What the observer believes of the opponent's deck, from the public plays: each loaded
/// deck still consistent with them (with its stacks as they must be now) and the weight
/// of "another deck", whose stacks' top cards are drawn by what the opponent passed over.
/// Made once per decision ([`Worlds`](super::Worlds)).
#[derive(Clone, Debug)]
pub(super) struct Belief {
    /// Each consistent deck's posterior weight and its stacks now, top first.
    decks: Vec<(f64, Vec<Vec<CardId>>)>,
    /// The posterior weight of a deck that is none of them.
    other: f64,
    /// Under "another deck", by stack, how likely each card (by index) is to be its top
    /// card now, relative to the others (`None`: no evidence, or the top is known).
    tops: Vec<Option<Vec<f64>>>,
}

impl Belief {
    /// `passed` is, by stack, the log likelihood of the opponent's choices given each
    /// card (by index) on top of it ([`passed`]); empty for no evidence.
    fn new(opponent: &[KnownStack], catalog: &Catalog, passed: &[Vec<f64>]) -> Belief {
        let all = catalog.decks();
        // Under "another deck", each card seen for the first time was one draw without
        // repeats from the catalog; under a loaded deck every play was certain.
        let mut seen: Vec<CardId> = Vec::new();
        for card in opponent.iter().flat_map(|s| s.plays().iter().copied()) {
            if !seen.contains(&card) {
                seen.push(card);
            }
        }
        let n = catalog.cards().len();
        // In logs: with many cards seen the product is too small for a float.
        #[allow(clippy::cast_precision_loss)]
        let likelihood: f64 = (0..seen.len())
            .map(|j| -(n.saturating_sub(j).max(1) as f64).ln())
            .sum();
        let evidence = |stack: usize| passed.get(stack).filter(|l| l.len() == n);
        // The tops the choices say: relative weights under "another deck" (its top is one
        // of the cards not seen), and how likely the choices are on average over them.
        let mut other_log = (1.0 - DECK_PRIOR).ln() + likelihood;
        let tops: Vec<Option<Vec<f64>>> = (0..opponent.len())
            .map(|j| {
                let logs = evidence(j)?;
                let open = |c: &usize| !seen.iter().any(|s| s.index() == *c);
                let high = (0..n)
                    .filter(open)
                    .map(|c| logs[c])
                    .fold(f64::NEG_INFINITY, f64::max);
                if !high.is_finite() {
                    return None;
                }
                let weights: Vec<f64> = (0..n)
                    .map(|c| {
                        if open(&c) {
                            (logs[c] - high).exp()
                        } else {
                            0.0
                        }
                    })
                    .collect();
                #[allow(clippy::cast_precision_loss)]
                let mean = weights.iter().sum::<f64>() / (0..n).filter(open).count() as f64;
                other_log += high + mean.ln();
                Some(weights)
            })
            .collect();
        #[allow(clippy::cast_precision_loss)]
        let each = if all.is_empty() {
            0.0
        } else {
            DECK_PRIOR / all.len() as f64
        };
        let decks: Vec<(f64, Vec<Vec<CardId>>)> = all
            .iter()
            .filter_map(|deck| now(&deck.stacks, opponent).map(|stacks| (each, stacks)))
            .map(|(each, stacks)| {
                let log = each.ln()
                    + stacks
                        .iter()
                        .enumerate()
                        .filter_map(|(j, cards)| Some(evidence(j)?[cards.first()?.index()]))
                        .sum::<f64>();
                (log, stacks)
            })
            .collect();
        // Back from logs, scaled so the likeliest is 1: long runs of evidence make the
        // likelihoods themselves too small for a float.
        let high = decks.iter().map(|d| d.0).fold(other_log, f64::max);
        Belief {
            decks: decks
                .into_iter()
                .map(|(log, stacks)| ((log - high).exp(), stacks))
                .collect(),
            other: (other_log - high).exp(),
            tops,
        }
    }

    /// What the plays say of the opponent's deck as `obs` sees them, with `brain` (its
    /// decision's budgets apply); what was passed over only while "another deck" keeps at
    /// least 1 % of the belief from the plays alone.
    pub(super) fn of(obs: &Observation, brain: &Brain<'_>) -> Belief {
        let catalog = brain.engine().catalog();
        // Once the plays all but prove a loaded deck, what was passed over could only
        // reorder worlds that are almost never drawn: not worth rating positions for.
        let plain = Belief::new(obs.opponent(), catalog, &[]);
        let decks: f64 = plain.decks.iter().map(|d| d.0).sum();
        if plain.other < OTHER_WORTH_TELLING * (plain.other + decks) {
            return plain;
        }
        Belief::new(obs.opponent(), catalog, &passed(obs, brain))
    }

    /// The opponent's stacks in one sampled world: a consistent loaded deck's, or `None`
    /// for "another deck" (drawn card by card).
    pub(super) fn sample(&self, rng: &mut Pcg32) -> Option<&[Vec<CardId>]> {
        let total: f64 = self.other + self.decks.iter().map(|d| d.0).sum::<f64>();
        if self.decks.is_empty() || total <= 0.0 || !total.is_finite() {
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

    /// Under "another deck", how likely each card (by index) is to be on top of stack
    /// `stack` now, relative to the others: `None` without evidence, or with its top known.
    pub(super) fn top(&self, stack: usize) -> Option<&[f64]> {
        self.tops.get(stack)?.as_deref()
    }
}

/// Take a card from `pool` with chances by `weights` (by card index); uniformly when
/// none of the pool has any weight.
pub(super) fn draw_weighted(
    pool: &mut Vec<CardId>,
    weights: &[f64],
    rng: &mut Pcg32,
) -> Option<CardId> {
    if pool.is_empty() {
        return None;
    }
    let weight = |c: &CardId| weights.get(c.index()).copied().unwrap_or(0.0);
    let total: f64 = pool.iter().map(weight).sum();
    let mut at = rng.random_range(0..pool.len());
    if total > 0.0 && total.is_finite() {
        let mut pick = rng.random::<f64>() * total;
        for (i, c) in pool.iter().enumerate() {
            let w = weight(c);
            if w > 0.0 {
                // Rounding may leave `pick` past the sum: then the last card with weight.
                at = i;
            }
            if pick < w {
                break;
            }
            pick -= w;
        }
    }
    Some(pool.swap_remove(at))
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
            if k != known.size() || (k == 0 && !known.plays().is_empty()) {
                return None;
            }
            if known
                .plays()
                .iter()
                .enumerate()
                .any(|(j, &c)| cards[j % k] != c)
            {
                return None;
            }
            let turned = if k == 0 { 0 } else { known.plays().len() % k };
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

/// By opponent stack, by card index: the log likelihood of the opponent's choices
/// since its last play from that stack, were that card on top all along. At each of
/// those turns the card was on offer and the opponent played another; a card worth
/// more than the one played is less likely to have been there ([`pass_log`]). Empty
/// for a stack whose top is known or was never passed over, or whose positions the
/// history did not keep.
fn passed(obs: &Observation, brain: &Brain<'_>) -> Vec<Vec<f64>> {
    let catalog = brain.engine().catalog();
    let n = catalog.cards().len();

    // Only the cards that may be on top are worth rating: none seen played.
    let mut wanted = vec![true; n];
    for card in obs.opponent().iter().flat_map(|s| s.plays().iter()) {
        if let Some(w) = wanted.get_mut(card.index()) {
            *w = false;
        }
    }
    // The turns some unseen top was passed over at, newest first: a new position is
    // rated before older ones whose ratings were cut short.
    let from = obs
        .opponent()
        .iter()
        .filter(|s| s.top_unknown())
        .map(KnownStack::since)
        .min()
        .unwrap_or(obs.turns().len());
    let mut plays = RATING_PLAYS;
    let mut worth: Vec<Option<Vec<Worth>>> = vec![None; obs.turns().len()];
    for t in (from..obs.turns().len()).rev() {
        if let (played, Some(position)) = &obs.turns()[t] {
            worth[t] = Some(rate(position, brain, *played, &wanted, &mut plays));
        }
    }
    obs.opponent()
        .iter()
        .map(|stack| {
            if !stack.top_unknown() {
                return Vec::new();
            }
            let mut logs = vec![0.0; n];
            let mut any = false;
            let since = obs.turns().iter().zip(&worth).skip(stack.since());
            for ((played, _), values) in since {
                let Some(values) = values else { continue };
                let Some(Some(Some(chosen))) = values.get(played.index()).copied() else {
                    continue;
                };
                for (log, value) in logs.iter_mut().zip(values) {
                    // A card not rated, or with no legal move there, tells nothing.
                    if let Some(Some(v)) = value {
                        *log += pass_log(chosen, *v);
                    }
                }
                any = true;
            }
            if any { logs } else { Vec::new() }
        })
        .collect()
}

/// What rating positions may spend in one decision: this many simulated plays, and no
/// more once the decision has used a quarter of its script instructions (the rest is
/// the search's). What is rated is kept with the position, so a later decision goes on
/// where this one stopped.
const RATING_PLAYS: usize = 4096;

/// The share of a decision's script instructions past which no more is rated.
const RATING_SCRIPT_SHARE: f64 = 0.25;

/// What is known of each card's worth at `position`, after rating `first` and then every
/// card `wanted` (by index) not rated yet, within `plays` (taken from as it goes) and the
/// decision's share of script instructions. What is rated is merged into the position:
/// two searches rating at once each pay their own work.
fn rate(
    position: &Position,
    brain: &Brain<'_>,
    first: CardId,
    wanted: &[bool],
    plays: &mut usize,
) -> Vec<Worth> {
    let catalog = brain.engine().catalog();
    let n = catalog.cards().len();
    let mut known = position.known_worth(catalog.stamp(), n);
    let state = position.state();
    let seat = state.turn();
    let mut holding = state.clone();
    let mut scratch = state.clone();
    let todo = std::iter::once(first).chain(
        catalog
            .card_ids()
            .filter(|c| wanted.get(c.index()).copied().unwrap_or(false)),
    );
    let mut fresh = false;
    for card in todo {
        let c = card.index();
        if known.get(c).is_none_or(Option::is_some) {
            continue;
        }
        if *plays == 0 || brain.decision_past(RATING_SCRIPT_SHARE) {
            break;
        }
        let mut stacks = vec![Vec::new(); holding.seat(seat).stacks().len().max(1)];
        stacks[0].push(card);
        holding.set_stacks(seat, &stacks);
        let (mut best, mut whole) = (None::<f64>, true);
        for mv in brain.engine().legal_moves(&holding) {
            if *plays == 0 {
                whole = false;
                break;
            }
            *plays -= 1;
            scratch.clone_from(&holding);
            if brain.play_lookahead(&mut scratch, mv).is_err() {
                // Refused by a script (or out of budget): says nothing of the card.
                whole = false;
                continue;
            }
            let gain = |s: Seat| scratch.score(s) - holding.score(s);
            #[allow(clippy::cast_precision_loss)]
            let swing = (gain(seat) - gain(seat.other())) as f64;
            best = Some(best.map_or(swing, |b| b.max(swing)));
        }
        if whole && !brain.decision_spent() {
            known[c] = Some(best);
            fresh = true;
        }
    }
    if fresh {
        position.learn_worth(catalog.stamp(), &known);
    }
    known
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::observe::History;
    use crate::rules::{Cause, Event, EventKind, GameState};

    #[test]
    fn a_card_passed_over_while_worse_was_played_is_less_likely() {
        // Played a card worth 3: one worth 0 was likely passed over, one worth 6 not,
        // yet never impossible; equal worth is a coin toss.
        assert!(pass_log(3.0, 0.0) > pass_log(3.0, 3.0));
        assert!(pass_log(3.0, 3.0) > pass_log(3.0, 6.0));
        assert!((pass_log(3.0, 3.0) - (SLIP + (1.0 - SLIP) * 0.5).ln()).abs() < 1e-12);
        // The floor: far better is still SLIP, far worse is certain.
        assert!((pass_log(0.0, 1000.0) - SLIP.ln()).abs() < 1e-9);
        assert!(pass_log(1000.0, 0.0).abs() < 1e-9);
    }

    #[test]
    fn each_stack_hears_only_the_turns_since_its_last_play() {
        let catalog = crate::content::base_for_tests();
        let cards: Vec<CardId> = catalog.card_ids().collect();
        let stacks: Vec<Vec<CardId>> = cards[..12].chunks(3).map(<[CardId]>::to_vec).collect();
        let state = GameState::new(&catalog, [&stacks, &stacks], 1);
        // Every card worth nothing (no legal move), but the ones played (5), a card worth
        // more (10) and one worth less (0).
        let (better, worse) = (cards[20], cards[21]);
        let mut history = History::new();
        let position = history
            .position_of(&state)
            .unwrap_or_else(|| panic!("a history that keeps positions"));
        let mut worth = vec![Some(None); cards.len()];
        for c in &cards[..12] {
            worth[c.index()] = Some(Some(5.0));
        }
        worth[better.index()] = Some(Some(10.0));
        worth[worse.index()] = Some(Some(0.0));
        position.learn_worth(catalog.stamp(), &worth);
        // The opponent played from stack 0, 1, 0, 1: stack 0's top has been passed over
        // once since (turn 3), stack 1's never, stacks 2 and 3's at all four turns.
        let play = |stack: u8, card: CardId| Event {
            kind: EventKind::Cycled {
                seat: Seat::Two,
                stack,
                card,
            },
            cause: Cause::Card(card),
        };
        for (stack, card) in [(0, cards[0]), (1, cards[3]), (0, cards[1]), (1, cards[4])] {
            history.record(Some(Arc::clone(&position)), &[play(stack, card)]);
        }
        let obs = Observation::new(&state, Seat::One, &history, false);
        let scripts = crate::ai::hooks_for(&catalog);
        let brain = scripts.brain(&catalog);
        let logs = passed(&obs, &brain);
        let near = |a: f64, b: f64| (a - b).abs() < 1e-9;
        assert!(near(logs[0][better.index()], pass_log(5.0, 10.0)));
        assert!(near(logs[0][worse.index()], pass_log(5.0, 0.0)));
        assert!(logs[1].is_empty(), "stack 1 was played last");
        for stack in [2, 3] {
            assert!(near(logs[stack][better.index()], 4.0 * pass_log(5.0, 10.0)));
            assert!(near(logs[stack][worse.index()], 4.0 * pass_log(5.0, 0.0)));
            // A card with no legal move tells nothing.
            assert!(near(logs[stack][cards[30].index()], 0.0));
        }
    }

    #[test]
    fn evidence_draws_the_likely_top_and_weighs_the_loaded_decks_by_theirs() {
        let catalog = crate::content::base_for_tests();
        let n = catalog.cards().len();
        let decks = catalog.decks();
        let shape = &decks[0].stacks;
        let opponent: Vec<KnownStack> = shape
            .iter()
            .map(|s| KnownStack::unplayed(s.len()))
            .collect();
        // A card on top of no loaded deck's first stack: the choices say it is there.
        let likely = catalog
            .card_ids()
            .find(|c| decks.iter().all(|d| d.stacks[0].first() != Some(c)))
            .unwrap_or_else(|| panic!("a card no deck opens with"));
        let mut logs = vec![-20.0; n];
        logs[likely.index()] = 0.0;
        let mut passed = vec![Vec::new(); opponent.len()];
        passed[0] = logs;
        let told = Belief::new(&opponent, &catalog, &passed);
        let plain = Belief::new(&opponent, &catalog, &[]);
        assert!(plain.tops.iter().all(Option::is_none));
        assert!(told.tops[1..].iter().all(Option::is_none));
        let weights = told.tops[0]
            .as_ref()
            .unwrap_or_else(|| panic!("evidence for stack 0"));
        assert!((weights[likely.index()] - 1.0).abs() < 1e-12);
        assert!(
            weights
                .iter()
                .enumerate()
                .all(|(c, w)| c == likely.index() || *w < 1e-6)
        );
        let mut pool: Vec<CardId> = catalog.card_ids().collect();
        let mut rng = rand::SeedableRng::seed_from_u64(9);
        let hits = (0..100)
            .filter(|_| draw_weighted(&mut pool.clone(), weights, &mut rng) == Some(likely))
            .count();
        assert!(hits >= 99, "the likely top drawn {hits} times of 100");
        // Uniform without weights: every card of the pool can come.
        let drawn = draw_weighted(&mut pool, &[], &mut rng);
        assert!(drawn.is_some() && pool.len() == n - 1);
        // The loaded decks open stack 0 with another card: their share falls.
        let share = |b: &Belief| {
            let decks: f64 = b.decks.iter().map(|d| d.0).sum();
            decks / (decks + b.other)
        };
        assert!(!plain.decks.is_empty());
        assert!(
            share(&told) < share(&plain) / 1000.0,
            "{} vs {}",
            share(&told),
            share(&plain)
        );
    }
}
