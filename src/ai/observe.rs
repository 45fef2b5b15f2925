//! What one seat may see: the board, the scores, its own stacks, the size of each of the
//! opponent's stacks and the cards the opponent has played (from which stack) — never the
//! opponent's hidden stack order, unless the `omniscient` option is set for testing.
//!
//! An [`Observation`] is built from the true state and holds only public information; the
//! opponent's unknown cards are filled in by [`Observation::determinize`], which samples a
//! full state consistent with everything seen.

use std::sync::{Arc, OnceLock};

use rand::RngExt;
use rand_pcg::Pcg32;

use super::Brain;
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

/// Every play of a game so far, as everyone at the table saw it, with the public position
/// each was made from where it was seen live: what the opponent passed over says what it
/// holds (see [`Observation::determinize`]).
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

    /// Append the plays in `events`, made from `before`.
    pub fn record(&mut self, before: &GameState, events: &[Event]) {
        let mark = self.plays.len();
        for e in events {
            if let EventKind::Cycled { seat, stack, card } = e.kind {
                self.plays.push(PublicPlay { seat, stack, card });
            }
        }
        if self.keep && self.plays.len() > mark {
            let position = Arc::new(Position::of(before));
            self.from.resize(mark, None);
            self.from.resize(self.plays.len(), Some(position));
        }
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

    /// Forget the plays after the first `n` (a move taken back).
    pub fn truncate(&mut self, n: usize) {
        self.plays.truncate(n);
        self.from.truncate(n);
    }
}

/// A position a play was made from, with nothing hidden in it (both seats' stacks empty,
/// the generator reseeded), and what each card would have been worth there to the seat
/// that played, worked out once when an observer first needs it.
#[derive(Debug)]
pub struct Position {
    state: GameState,
    /// The catalog's stamp and, by card, the player's best income swing with that card
    /// on top of a stack (`None`: no legal move with it).
    worth: OnceLock<(u64, Vec<Option<f64>>)>,
}

impl Position {
    fn of(state: &GameState) -> Position {
        let mut public = state.clone();
        for seat in [Seat::One, Seat::Two] {
            let empty = vec![Vec::new(); public.seat(seat).stacks().len()];
            public.set_stacks(seat, &empty);
        }
        public.reseed(u64::from(state.moves_played()).wrapping_mul(0x9E37_79B9_7F4A_7C15));
        Position {
            state: public,
            worth: OnceLock::new(),
        }
    }

    /// What each card of `brain`'s catalog would have been worth here to the seat to
    /// move: its best income swing, as `greedy` rates a move. `None` when a script ran
    /// out of the decision's budget on the way (nothing is kept then).
    fn worth(&self, brain: &Brain<'_>) -> Option<Vec<Option<f64>>> {
        let catalog = brain.engine().catalog();
        if let Some((stamp, worth)) = self.worth.get()
            && *stamp == catalog.stamp()
        {
            return Some(worth.clone());
        }
        let seat = self.state.turn();
        let mut holding = self.state.clone();
        let mut scratch = self.state.clone();
        let mut worth = Vec::with_capacity(catalog.cards().len());
        for card in catalog.card_ids() {
            let mut stacks = vec![Vec::new(); holding.seat(seat).stacks().len().max(1)];
            stacks[0].push(card);
            holding.set_stacks(seat, &stacks);
            let mut best: Option<f64> = None;
            for mv in brain.engine().legal_moves(&holding) {
                scratch.clone_from(&holding);
                if brain.play_lookahead(&mut scratch, mv).is_err() {
                    continue;
                }
                let gain = |s: Seat| scratch.score(s) - holding.score(s);
                #[allow(clippy::cast_precision_loss)]
                let swing = (gain(seat) - gain(seat.other())) as f64;
                best = Some(best.map_or(swing, |b| b.max(swing)));
            }
            if brain.decision_spent() {
                return None;
            }
            worth.push(best);
        }
        // Kept for the next observer, unless another catalog's figures are there first
        // (a reload during the game): then this one works them out again.
        let _ = self.worth.set((catalog.stamp(), worth.clone()));
        Some(worth)
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
    /// The opponent's turns from this index of [`Observation::turns`] on came after its
    /// last play from this stack: at each, its top card now was on offer and passed over.
    since: usize,
}

impl KnownStack {
    /// Whether the observer does not know the card on top: some card of the stack has
    /// not been played yet.
    fn top_unknown(&self) -> bool {
        self.plays.len() < self.size
    }
}

/// The prior weight of "the opponent plays one of the loaded packs' decks", shared
/// equally among those decks; the rest is "some other deck", whose cards are drawn from
/// the whole catalog. Observed plays then update both by Bayes' rule.
const DECK_PRIOR: f64 = 0.5;

/// Below this share of "another deck" in the belief from the plays alone, what the
/// opponent passed over is not worked out (see [`Observation::determinize`]).
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
/// Made once per observation.
#[derive(Clone, Debug)]
struct Belief {
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
    /// card (by index) on top of it ([`Observation::passed`]); empty for no evidence.
    fn new(opponent: &[KnownStack], catalog: &Catalog, passed: &[Vec<f64>]) -> Belief {
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
        let evidence = |stack: usize| passed.get(stack).filter(|l| l.len() == n);
        // The tops the choices say: relative weights under "another deck" (its top is one
        // of the cards not seen), and how likely the choices are on average over them.
        let mut other_log = ((1.0 - DECK_PRIOR) * likelihood).ln();
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

    /// The opponent's stacks in one sampled world: a consistent loaded deck's, or `None`
    /// for "another deck" (drawn card by card).
    fn sample(&self, rng: &mut Pcg32) -> Option<&[Vec<CardId>]> {
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
}

/// Take a card from `pool` with chances by `weights` (by card index); uniformly when
/// none of the pool has any weight.
fn draw_weighted(pool: &mut Vec<CardId>, weights: &[f64], rng: &mut Pcg32) -> Option<CardId> {
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
            if pick < w {
                at = i;
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
    /// The opponent's plays, first first: the card and the position it was played from
    /// (where the history kept it); empty when the history kept no position at all.
    turns: Vec<(CardId, Option<Arc<Position>>)>,
    /// With `omniscient`, the true state (for tests and for measuring what hiding costs).
    truth: Option<GameState>,
    /// What the plays say of the opponent's deck, made at the first determinization.
    belief: OnceLock<Belief>,
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
            .map(|s| KnownStack {
                size: s.len(),
                bottom: Vec::new(),
                plays: Vec::new(),
                since: 0,
            })
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

    /// By opponent stack, by card index: the log likelihood of the opponent's choices
    /// since its last play from that stack, were that card on top all along. At each of
    /// those turns the card was on offer and the opponent played another; a card worth
    /// more than the one played is less likely to have been there ([`pass_log`]). Empty
    /// for a stack whose top is known or was never passed over, or whose positions the
    /// history did not keep.
    fn passed(&self, brain: &Brain<'_>) -> Vec<Vec<f64>> {
        let n = brain.engine().catalog().cards().len();
        let mut worth: Vec<Option<Option<Vec<Option<f64>>>>> = vec![None; self.turns.len()];
        self.opponent
            .iter()
            .map(|stack| {
                if !stack.top_unknown() || stack.size == 0 {
                    return Vec::new();
                }
                let mut logs = vec![0.0; n];
                let mut any = false;
                let since = self.turns.iter().zip(worth.iter_mut()).skip(stack.since);
                for ((played, from), values) in since {
                    let Some(from) = from else { continue };
                    let values = values.get_or_insert_with(|| from.worth(brain));
                    let Some(values) = values else { continue };
                    let Some(Some(chosen)) = values.get(played.index()).copied() else {
                        continue;
                    };
                    for (log, value) in logs.iter_mut().zip(values.iter()) {
                        // A card with no legal move there was no choice to pass over.
                        if let Some(v) = value {
                            *log += pass_log(chosen, *v);
                        }
                    }
                    any = true;
                }
                if any { logs } else { Vec::new() }
            })
            .collect()
    }

    /// A full state consistent with what the seat has seen: each opponent stack keeps its
    /// size and its known bottom cards. The opponent's deck is one of the loaded decks
    /// still consistent with the plays, with its posterior probability (see [`Belief`]);
    /// otherwise the unknown cards are drawn from the loaded cards not known to be in the
    /// opponent's deck, each at most once, a stack's top card by how likely the
    /// opponent's choices make it: a card it passed over while playing a worse one is
    /// less likely still to be there.
    ///
    /// The first call works out the belief, with `brain` (its decision's budgets apply);
    /// what was passed over only while "another deck" keeps at least 1 % of it.
    #[must_use]
    pub fn determinize(&self, brain: &Brain<'_>, rng: &mut Pcg32) -> GameState {
        if let Some(truth) = &self.truth {
            return truth.clone();
        }
        let catalog = brain.engine().catalog();
        let belief = self.belief.get_or_init(|| {
            // Once the plays all but prove a loaded deck, what was passed over could only
            // reorder worlds that are almost never drawn: not worth rating positions for.
            let plain = Belief::new(&self.opponent, catalog, &[]);
            let decks: f64 = plain.decks.iter().map(|d| d.0).sum();
            if plain.other < OTHER_WORTH_TELLING * (plain.other + decks) {
                return plain;
            }
            Belief::new(&self.opponent, catalog, &self.passed(brain))
        });
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
        // The tops with evidence first, in a random order so that none is favoured when
        // two want the same card.
        let mut tops: Vec<Option<CardId>> = vec![None; self.opponent.len()];
        let mut order: Vec<usize> = (0..self.opponent.len())
            .filter(|&j| self.opponent[j].size > self.opponent[j].bottom.len())
            .filter(|&j| belief.tops.get(j).is_some_and(Option::is_some))
            .collect();
        for i in (1..order.len()).rev() {
            order.swap(i, rng.random_range(0..=i));
        }
        for j in order {
            if let Some(Some(weights)) = belief.tops.get(j) {
                tops[j] = draw_weighted(&mut pool, weights, rng);
            }
        }
        let mut stacks = Vec::with_capacity(self.opponent.len());
        for (stack, top) in self.opponent.iter().zip(tops) {
            let unknown = stack.size - stack.bottom.len();
            let mut cards = Vec::with_capacity(stack.size);
            cards.extend(top);
            while cards.len() < unknown {
                let card = draw_weighted(&mut pool, &[], rng)
                    // A catalog smaller than a deck: repeat a known card rather than fail.
                    .unwrap_or_else(|| known.first().copied().unwrap_or(CardId(0)));
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_card_passed_over_while_worse_was_played_is_less_likely() {
        // Played a card worth 3: one worth 0 was likely passed over, one worth 6 not,
        // yet never impossible; equal worth is a coin toss.
        assert!(pass_log(3.0, 0.0) > pass_log(3.0, 3.0));
        assert!(pass_log(3.0, 3.0) > pass_log(3.0, 6.0));
        assert!((pass_log(3.0, 3.0) - (SLIP + (1.0 - SLIP) * 0.5).ln()).abs() < 1e-12);
        assert!(pass_log(0.0, 1000.0) >= SLIP.ln() - 1e-12);
        assert!(pass_log(1000.0, 0.0) <= 1e-12);
    }

    #[test]
    fn evidence_draws_the_likely_top_and_weighs_the_loaded_decks_by_theirs() {
        let catalog = crate::content::base_for_tests();
        let n = catalog.cards().len();
        let decks = catalog.decks();
        let shape = &decks[0].stacks;
        let opponent: Vec<KnownStack> = shape
            .iter()
            .map(|s| KnownStack {
                size: s.len(),
                bottom: Vec::new(),
                plays: Vec::new(),
                since: 0,
            })
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
