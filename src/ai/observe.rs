//! What one seat may see: the board, the scores, its own stacks, the size of each of the
//! opponent's stacks and the cards the opponent has played (from which stack) — never the
//! opponent's hidden stack order, unless the `omniscient` option is set for testing.
//!
//! An [`Observation`] is built from the true state and holds only public information; the
//! opponent's unknown cards are filled in by [`Observation::determinize`], which samples a
//! full state consistent with everything seen.
//!
//! A [`History`] holds the public plays of a game, each with the position it was made from
//! (both seats' stacks emptied: nothing hidden), the newest 512 positions at most. A client,
//! which gets the plays and not their positions, builds its history with
//! [`History::follow`]: a play's position is the state seen one move before it.
//! `determinize` draws from a belief that weighs the loaded decks still consistent with the
//! plays against "another deck", and each unseen stack top by the cards the opponent passed
//! over while it was on offer. A [`Position`] keeps what each card was worth there as it is
//! rated, for one catalog `stamp`. Rating is metered per decision (simulated plays, a share
//! of the script instructions), and a later decision goes on where the last one stopped.

use std::sync::{Arc, Mutex, OnceLock, PoisonError};

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
}

/// The most positions a history keeps, the newest: how long a game runs is up to whoever
/// runs it (a host, for a client), and a position is a copy of the board and scores with
/// a rating per card. The rating reads the newest first and only the turns since each
/// stack's last play.
const KEPT_POSITIONS: usize = 512;

/// A position a play was made from, with nothing hidden in it (both seats' stacks empty,
/// the generator reseeded), and what each card would have been worth there to the seat
/// that played, rated card by card as observers need it and kept for the next.
#[derive(Debug)]
pub struct Position {
    state: GameState,
    /// The catalog's stamp and, by card, what is known of its worth (see [`Worth`]).
    worth: Mutex<(u64, Vec<Worth>)>,
}

/// A card's worth at a position to the seat to move: `None` not rated yet (or its rating
/// was cut short, or a script failed in it); `Some(None)` no legal move with it;
/// `Some(Some(swing))` its best income swing, as `greedy` rates a move.
type Worth = Option<Option<f64>>;

/// What rating positions may spend in one decision: this many simulated plays, and no
/// more once the decision has used a quarter of its script instructions (the rest is
/// the search's). What is rated is kept with the position, so a later decision goes on
/// where this one stopped.
const RATING_PLAYS: usize = 4096;

/// The share of a decision's script instructions past which no more is rated.
const RATING_SCRIPT_SHARE: f64 = 0.25;

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
            worth: Mutex::new((0, Vec::new())),
        }
    }

    /// What is known of each card's worth here, after rating `first` and then every card
    /// `wanted` (by index) not rated yet, within `plays` (taken from as it goes) and the
    /// decision's share of script instructions. The lock is held only to copy and to
    /// merge: two searches rating at once each pay their own work.
    fn worth(
        &self,
        brain: &Brain<'_>,
        first: CardId,
        wanted: &[bool],
        plays: &mut usize,
    ) -> Vec<Worth> {
        let catalog = brain.engine().catalog();
        let n = catalog.cards().len();
        let mut known = {
            let kept = self.worth.lock().unwrap_or_else(PoisonError::into_inner);
            if kept.0 == catalog.stamp() && kept.1.len() == n {
                kept.1.clone()
            } else {
                vec![None; n]
            }
        };
        let seat = self.state.turn();
        let mut holding = self.state.clone();
        let mut scratch = self.state.clone();
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
            let mut kept = self.worth.lock().unwrap_or_else(PoisonError::into_inner);
            if kept.0 != catalog.stamp() || kept.1.len() != n {
                *kept = (catalog.stamp(), vec![None; n]);
            }
            for (slot, mine) in kept.1.iter_mut().zip(&known) {
                if slot.is_none() {
                    *slot = *mine;
                }
            }
        }
        known
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
    /// A stack of `size` cards none of which has been seen played.
    fn unplayed(size: usize) -> KnownStack {
        KnownStack {
            size,
            bottom: Vec::new(),
            plays: Vec::new(),
            since: 0,
        }
    }

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
        let catalog = brain.engine().catalog();
        let n = catalog.cards().len();

        // Only the cards that may be on top are worth rating: none seen played.
        let mut wanted = vec![true; n];
        for card in self.opponent.iter().flat_map(|s| s.plays.iter()) {
            if let Some(w) = wanted.get_mut(card.index()) {
                *w = false;
            }
        }
        // The turns some unseen top was passed over at, newest first: a new position is
        // rated before older ones whose ratings were cut short.
        let from = self
            .opponent
            .iter()
            .filter(|s| s.top_unknown())
            .map(|s| s.since)
            .min()
            .unwrap_or(self.turns.len());
        let mut plays = RATING_PLAYS;
        let mut worth: Vec<Option<Vec<Worth>>> = vec![None; self.turns.len()];
        for t in (from..self.turns.len()).rev() {
            if let (played, Some(position)) = &self.turns[t] {
                worth[t] = Some(position.worth(brain, *played, &wanted, &mut plays));
            }
        }
        self.opponent
            .iter()
            .map(|stack| {
                if !stack.top_unknown() {
                    return Vec::new();
                }
                let mut logs = vec![0.0; n];
                let mut any = false;
                let since = self.turns.iter().zip(&worth).skip(stack.since);
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
        // The floor: far better is still SLIP, far worse is certain.
        assert!((pass_log(0.0, 1000.0) - SLIP.ln()).abs() < 1e-9);
        assert!(pass_log(1000.0, 0.0).abs() < 1e-9);
    }

    #[test]
    fn a_position_keeps_nothing_hidden() {
        let catalog = crate::content::base_for_tests();
        let cards: Vec<CardId> = catalog.card_ids().collect();
        let a = vec![cards[0..3].to_vec(), cards[3..6].to_vec()];
        let b = vec![cards[6..9].to_vec(), cards[9..12].to_vec()];
        let one = GameState::new(&catalog, [&a, &b], 1);
        let mut two = one.clone();
        two.set_stacks(Seat::Two, &a);
        two.set_stacks(Seat::One, &b);
        two.reseed(99);
        let (p, q) = (Position::of(&one), Position::of(&two));
        assert_eq!(
            p.state, q.state,
            "stacks and draws differ only where hidden"
        );
        assert!(p.state.seat(Seat::One).hand().next().is_none());
        assert!(p.state.seat(Seat::Two).hand().next().is_none());
    }

    /// A client's history keeps the position of an opponent's play only when it saw the
    /// state just before it: one move, one new play.
    #[test]
    fn a_followed_history_keeps_positions_seen_just_before_a_play() {
        use crate::rules::{Engine, NoHooks};
        let catalog = crate::content::base_for_tests();
        let engine = Engine::new(&catalog, &NoHooks);
        let cards: Vec<CardId> = catalog.card_ids().collect();
        let stacks: Vec<Vec<CardId>> = cards[..12].chunks(3).map(<[CardId]>::to_vec).collect();
        // Six states, one move apart; seat 1 (the opponent of the seat watching) moves
        // first and then every other move.
        let mut states = vec![GameState::new(&catalog, [&stacks, &stacks], 1)];
        let mut theirs = Vec::new();
        let mut plays = vec![Vec::new()];
        for _ in 0..5 {
            let mut next = states[states.len() - 1].clone();
            let mv = engine.legal_moves(&next)[0];
            let mut events = Vec::new();
            engine
                .play(&mut next, mv, &mut events)
                .expect("a legal move");
            if mv.seat == Seat::One {
                for e in &events {
                    if let EventKind::Cycled { seat, stack, card } = e.kind {
                        theirs.push(PublicPlay { seat, stack, card });
                    }
                }
            }
            plays.push(theirs.clone());
            states.push(next);
        }
        let kept = |h: &History| h.from.iter().map(Option::is_some).collect::<Vec<_>>();
        // Every state seen: the opponent's plays, from states 0, 2 and 4, keep their
        // positions.
        let mut seen_all = History::new();
        seen_all.follow(None, &states[0], plays[0].clone());
        for i in 1..states.len() {
            seen_all.follow(Some(&states[i - 1]), &states[i], plays[i].clone());
        }
        assert_eq!(seen_all.plays().len(), 3);
        assert_eq!(kept(&seen_all), [true, true, true]);
        let position = seen_all.from[1].as_ref().expect("kept");
        assert_eq!(position.state, Position::of(&states[2]).state);
        // State 2 missed (a reconnect): the play made from it keeps none, as the play
        // that came two moves after what was seen.
        let mut gap = History::new();
        gap.follow(None, &states[0], plays[0].clone());
        gap.follow(Some(&states[0]), &states[1], plays[1].clone());
        gap.follow(Some(&states[1]), &states[3], plays[3].clone());
        gap.follow(Some(&states[3]), &states[4], plays[4].clone());
        gap.follow(Some(&states[4]), &states[5], plays[5].clone());
        assert_eq!(kept(&gap), [true, false, true]);
        // Another game's plays replace the ones held; a history of plays only keeps none.
        gap.follow(None, &states[0], Vec::new());
        assert!(gap.plays().is_empty() && gap.from.is_empty());
        // However long a game runs, only the newest positions are kept.
        let mut long = History::new();
        let mut so_far = Vec::new();
        for _ in 0..KEPT_POSITIONS + 40 {
            so_far.push(plays[1][0]);
            long.follow(Some(&states[0]), &states[1], so_far.clone());
        }
        assert_eq!(long.plays().len(), KEPT_POSITIONS + 40);
        assert_eq!(kept(&long)[..40], [false; 40]);
        assert!(kept(&long)[40..].iter().all(|&k| k));
        let mut bare = History::plays_only();
        for i in 1..states.len() {
            bare.follow(Some(&states[i - 1]), &states[i], plays[i].clone());
        }
        assert_eq!(bare.plays().len(), 3);
        assert_eq!(kept(&bare), Vec::<bool>::new());
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
        let position = Arc::new(Position::of(&state));
        {
            let mut worth = vec![Some(None); cards.len()];
            for c in &cards[..12] {
                worth[c.index()] = Some(Some(5.0));
            }
            worth[better.index()] = Some(Some(10.0));
            worth[worse.index()] = Some(Some(0.0));
            *position
                .worth
                .lock()
                .unwrap_or_else(PoisonError::into_inner) = (catalog.stamp(), worth);
        }
        // The opponent played from stack 0, 1, 0, 1: stack 0's top has been passed over
        // once since (turn 3), stack 1's never, stacks 2 and 3's at all four turns.
        let play = |stack: u8, card: CardId| PublicPlay {
            seat: Seat::Two,
            stack,
            card,
        };
        let history = History {
            plays: vec![
                play(0, cards[0]),
                play(1, cards[3]),
                play(0, cards[1]),
                play(1, cards[4]),
            ],
            from: vec![Some(Arc::clone(&position)); 4],
            keep: true,
        };
        let obs = Observation::new(&state, Seat::One, &history, false);
        let scripts = crate::ai::hooks_for(&catalog);
        let brain = scripts.brain(&catalog);
        let logs = obs.passed(&brain);
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
