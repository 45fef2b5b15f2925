//! Is a card too strong? A paired A/B test: the same games — same seeds, same opponents,
//! both seats — played once with the card in a deck slot and once with a control card in
//! that slot, so everything but the card cancels out. The verdict comes from the paired
//! differences' 95 % interval (docs/ai.md, "Judging one card").

use serde::Serialize;

use super::sequential::{Design, Moments, Side, step};
use super::simulate::{Config, DeckChoice, MAX_MOVES, outcomes};
use super::{Level, Options};
use crate::rules::{CardId, Catalog, Engine, NoHooks};

/// What to test.
#[derive(Clone, Debug)]
pub struct Test {
    /// The card.
    pub card: CardId,
    /// The control card (`None`: a plain card of the same value, see
    /// [`with_plain_control`]).
    pub control: Option<CardId>,
    /// The decks the card is tried in (each against every deck of `opponents`).
    pub decks: Vec<DeckChoice>,
    /// The opponents' decks.
    pub opponents: Vec<DeckChoice>,
    /// Games per deck and variant.
    pub games: u32,
    /// Both sides' level.
    pub level: Level,
    /// Seed.
    pub seed: u64,
    /// Worker threads (0: all cores).
    pub threads: usize,
    /// How `hard` thinks.
    pub options: Options,
}

/// The verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The card wins more than its control: the interval is above zero.
    Strong,
    /// The card wins less: the interval is below zero.
    Weak,
    /// The interval holds zero.
    WithinNoise,
}

impl Verdict {
    /// In words.
    #[must_use]
    pub fn words(self) -> &'static str {
        match self {
            Verdict::Strong => "strong",
            Verdict::Weak => "weak",
            Verdict::WithinNoise => "within noise",
        }
    }
}

/// One deck's share of the test.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DeckResult {
    /// The deck.
    pub deck: String,
    /// The control card used in it.
    pub control: String,
    /// Games per variant.
    pub games: u32,
    /// The deck's win rate with the card.
    pub win_rate_with: f64,
    /// With the control.
    pub win_rate_control: f64,
}

/// The test's result.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BalanceReport {
    /// The card.
    pub card: String,
    /// Paired games (per variant).
    pub pairs: u32,
    /// Win rate with the card, all decks.
    pub win_rate_with: f64,
    /// With the control.
    pub win_rate_control: f64,
    /// Mean paired difference (with − control), in win-rate points (−1 to 1).
    pub effect: f64,
    /// Its 95 % interval.
    pub ci95: [f64; 2],
    /// What it means.
    pub verdict: Verdict,
    /// Per deck.
    pub decks: Vec<DeckResult>,
    /// How a sequential test stopped (`--sequential`; absent for a fixed-size test).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sequential: Option<SequentialReport>,
}

/// How a sequential test ([`run_sequential`]) stopped.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SequentialReport {
    /// α: the chance of calling a card without effect strong (or weak).
    pub alpha: f64,
    /// β: the chance of missing an effect of `effect` or more.
    pub beta: f64,
    /// δ, the effect decided on, as a share.
    pub effect: f64,
    /// Both one-sided tests decided before the cap (else the verdict is the interval's).
    pub decided: bool,
    /// The strong test (H1: +δ): `open`, `null` or `effect`.
    pub strong: Side,
    /// The weak test (H1: −δ).
    pub weak: Side,
    /// The strong test's log-likelihood ratio when the test stopped.
    pub llr_strong: f64,
    /// The weak test's.
    pub llr_weak: f64,
    /// The bounds: H0 accepted at or below the first, H1 at or above the second.
    pub bounds: [f64; 2],
    /// Rounds played (each plays every deck against every opponent in both seats).
    pub rounds: u32,
    /// The most pairs it could have played (`--games` per deck).
    pub cap_pairs: u32,
    /// The pairs a fixed-size test with the same α, β and δ needs, at the standard
    /// deviation of the differences observed.
    pub fixed_pairs: u64,
    /// The share of those pairs not played: 1 − pairs ÷ `fixed_pairs`.
    pub saved: f64,
    /// Wall time, seconds.
    pub seconds: f64,
}

/// The content with a control card for `card` added: a plain card of the same value —
/// no ability, a token type with no aura, turret, script or transformation and a
/// multiplier of 1 — so the test measures what the card does beyond its value. `None`
/// when the content has no plain token type.
#[must_use]
pub fn with_plain_control(catalog: &Catalog, card: CardId) -> Option<(Catalog, CardId)> {
    with_plain_control_of(catalog, catalog.card(card).value)
}

/// The content with a plain control card of `value` added (see [`with_plain_control`]):
/// tuning keeps the control of the value the card had as loaded while the card changes.
#[must_use]
pub fn with_plain_control_of(catalog: &Catalog, value: i32) -> Option<(Catalog, CardId)> {
    let plain = catalog.token_types().iter().position(|t| {
        t.aura.is_none()
            && t.on_destroyed.is_none()
            && t.between_turns.is_none()
            && t.script.is_none()
            && t.income_multiplier == 1
    })?;
    let token = crate::rules::TokenTypeId::from_index(plain);
    let id = CardId(u16::try_from(catalog.cards().len()).ok()?);
    let derived = catalog.clone().edited(|parts| {
        parts.cards.push(crate::rules::CardDef {
            meta: crate::rules::Meta {
                id: "control".into(),
                name: format!("Control ({value}, plain)"),
                description: "A plain card of the tested card's value, made for the test.".into(),
                origin: crate::rules::Origin {
                    pack: "balance".into(),
                    file: "(made for the test)".into(),
                    line: 0,
                    column: 0,
                },
            },
            value,
            token,
            ability: None,
            area: crate::rules::Area::EMPTY,
        });
    });
    Some((derived, id))
}

/// The control for `card` in `deck` when no plain one can be made: the card with no
/// ability nearest in value (then the first in load order) that is neither `card` nor
/// in the deck.
#[must_use]
pub fn control_for(catalog: &Catalog, card: CardId, deck: &[Vec<CardId>]) -> Option<CardId> {
    let value = catalog.card(card).value;
    let free = |c: &CardId| *c != card && !deck.iter().flatten().any(|d| d == c);
    let plain = catalog
        .card_ids()
        .filter(free)
        .filter(|&c| catalog.card(c).ability.is_none())
        .min_by_key(|&c| (catalog.card(c).value - value).abs());
    plain.or_else(|| catalog.card_ids().find(free))
}

/// `deck` with `card` in its slot: where the card already is, else the top of the first
/// stack. Returns the deck and the slot's card before (the card itself if it was there).
fn with_card(deck: &[Vec<CardId>], card: CardId) -> (Vec<Vec<CardId>>, (usize, usize)) {
    let mut stacks = deck.to_vec();
    for (i, s) in stacks.iter().enumerate() {
        if let Some(j) = s.iter().position(|&c| c == card) {
            return (stacks, (i, j));
        }
    }
    if let Some(first) = stacks.first_mut() {
        if first.is_empty() {
            first.push(card);
        } else {
            first[0] = card;
        }
    }
    (stacks, (0, 0))
}

/// Why a test cannot run.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum BalanceError {
    /// No deck to try the card in.
    #[error("no deck to try the card in: give --deck ID, or load a pack with decks")]
    NoDecks,
    /// No control card.
    #[error("no control card for deck '{0}': every other card is in it")]
    NoControl(String),
    /// A variant breaks the deck rules.
    #[error(
        "deck '{deck}' with {what} breaks the deck rules: {why}; give decks where the card and its control both fit with --deck ID (repeat it), or another --control"
    )]
    BadDeck {
        /// The deck.
        deck: String,
        /// Which variant.
        what: String,
        /// Why.
        why: String,
    },
}

/// A variant of a deck (with the card, or with its control) that breaks the deck rules.
#[derive(Debug, thiserror::Error)]
#[error("with {card} it breaks the deck rules: {}", problem.message(crate::rules::Whose::Deck))]
pub struct Misfit {
    /// The card the variant holds in the slot, by name.
    pub card: String,
    /// The first rule it breaks.
    pub problem: crate::rules::DeckError,
}

/// Whether `deck` can take `card` in its slot (see [`Test`]) and, in a second copy,
/// `control` in the same slot, under the deck rules; why not. A control the deck already
/// holds elsewhere would be in it twice.
pub fn swap_fits(
    catalog: &Catalog,
    card: CardId,
    control: CardId,
    deck: &[Vec<CardId>],
) -> Result<(), Misfit> {
    let engine = Engine::new(catalog, &NoHooks);
    let (with, slot) = with_card(deck, card);
    let mut without = with.clone();
    if let Some(c) = without.get_mut(slot.0).and_then(|s| s.get_mut(slot.1)) {
        *c = control;
    }
    for (what, stacks) in [(card, &with), (control, &without)] {
        engine
            .check_deck(crate::rules::Seat::One, stacks)
            .map_err(|problem| Misfit {
                card: catalog.card(what).meta.name.clone(),
                problem,
            })?;
    }
    Ok(())
}

/// One deck of a test: the deck with the card in its slot and with the control there.
pub(super) struct Arm {
    pub(super) deck: String,
    pub(super) control: String,
    pub(super) with: Vec<Vec<CardId>>,
    pub(super) without: Vec<Vec<CardId>>,
    pub(super) seed: u64,
}

/// What one deck's games gave so far.
#[derive(Clone, Copy, Default)]
struct Tally {
    games: u32,
    with: f64,
    control: f64,
}

/// The decks of `test` made ready: the card and the control put in the slot, both
/// checked against the deck rules. `plain` is the control made for the test, if any.
pub(super) fn arms(
    catalog: &Catalog,
    test: &Test,
    plain: Option<CardId>,
) -> Result<Vec<Arm>, BalanceError> {
    if test.decks.is_empty() || test.opponents.is_empty() {
        return Err(BalanceError::NoDecks);
    }
    let engine = Engine::new(catalog, &NoHooks);
    let key = |c: CardId| catalog.card(c).meta.name.clone();
    let mut out = Vec::with_capacity(test.decks.len());
    for (k, deck) in test.decks.iter().enumerate() {
        let (with, slot) = with_card(&deck.stacks, test.card);
        let control = match test.control.or(plain) {
            Some(c) => c,
            None => control_for(catalog, test.card, &with)
                .ok_or_else(|| BalanceError::NoControl(deck.id.clone()))?,
        };
        let mut without = with.clone();
        if let Some(c) = without.get_mut(slot.0).and_then(|s| s.get_mut(slot.1)) {
            *c = control;
        }
        for (what, stacks) in [(key(test.card), &with), (key(control), &without)] {
            if let Err(e) = engine.check_deck(crate::rules::Seat::One, stacks) {
                return Err(BalanceError::BadDeck {
                    deck: deck.id.clone(),
                    what,
                    why: e.message(crate::rules::Whose::Deck),
                });
            }
        }
        out.push(Arm {
            deck: deck.id.clone(),
            control: key(control),
            with,
            without,
            // The same seeds for both variants; another run of seeds per deck.
            seed: test.seed ^ (k as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15),
        });
    }
    Ok(out)
}

/// The seed of round `round` of a deck whose seed is `seed`: round 0 is the deck's own
/// seed (a fixed-size test is one round), later rounds new runs of seeds (SplitMix64).
pub(super) fn round_seed(seed: u64, round: u32) -> u64 {
    if round == 0 {
        return seed;
    }
    let mut z = u64::from(round).wrapping_mul(0xD1B5_4A32_D192_ED03);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    seed ^ z ^ (z >> 31)
}

/// Play `games` paired games of `arm` with `seed`: the tested deck's points with the
/// card and with the control, game by game.
fn play_arm(
    catalog: &Catalog,
    test: &Test,
    arm: &Arm,
    seed: u64,
    games: u32,
    tick: &(dyn Fn() + Sync),
) -> (Vec<f64>, Vec<f64>) {
    (
        play_deck(catalog, test, &arm.deck, &arm.with, seed, games, tick),
        play_deck(catalog, test, &arm.deck, &arm.without, seed, games, tick),
    )
}

/// Play `games` games of the deck `stacks` (called `deck`) against `test`'s opponents
/// with `seed`, taking each seat in turn: its points game by game.
pub(super) fn play_deck(
    catalog: &Catalog,
    test: &Test,
    deck: &str,
    stacks: &[Vec<CardId>],
    seed: u64,
    games: u32,
    tick: &(dyn Fn() + Sync),
) -> Vec<f64> {
    let config = Config {
        deck_a: DeckChoice {
            id: deck.to_string(),
            stacks: stacks.to_vec(),
            per_game: false,
        },
        decks_b: test.opponents.clone(),
        ai_a: test.level,
        ai_b: test.level,
        games,
        seed,
        threads: test.threads,
        options: test.options,
        max_moves: MAX_MOVES,
        shard: None,
    };
    outcomes(catalog, &config, tick)
}

/// The games per deck of one round of a sequential test: every opponent in both seats,
/// repeated to at least 10 games.
pub(super) fn round_games(opponents: usize) -> u32 {
    let cycle = u32::try_from(opponents.max(1))
        .unwrap_or(u32::MAX / 4)
        .saturating_mul(if opponents.is_multiple_of(2) { 1 } else { 2 });
    cycle.saturating_mul(10u32.div_ceil(cycle).max(1))
}

/// The content the test plays with (`derived` when a plain control was made) and that
/// control.
pub(super) fn control_content(catalog: &Catalog, test: &Test) -> Option<(Catalog, CardId)> {
    match test.control {
        Some(_) => None,
        None => with_plain_control(catalog, test.card),
    }
}

/// Run `test` with `test.games` games per deck and variant; `tick` after each game.
pub fn run(
    catalog: &Catalog,
    test: &Test,
    tick: &(dyn Fn() + Sync),
) -> Result<BalanceReport, BalanceError> {
    let derived = control_content(catalog, test);
    let catalog = derived.as_ref().map_or(catalog, |(c, _)| c);
    let arms = arms(catalog, test, derived.as_ref().map(|(_, id)| *id))?;
    let mut tallies = vec![Tally::default(); arms.len()];
    let mut diffs = Vec::new();
    for (arm, tally) in arms.iter().zip(&mut tallies) {
        let (a, b) = play_arm(catalog, test, arm, arm.seed, test.games, tick);
        add(tally, &mut diffs, &a, &b);
    }
    Ok(report(catalog, test, &arms, &tallies, &diffs))
}

/// Run `test` sequentially: rounds of paired games in every deck until the two
/// one-sided tests of `design` have decided (src/ai/sequential.rs), or `test.games` games
/// per deck and variant have been played. `tick` after each game.
pub fn run_sequential(
    catalog: &Catalog,
    test: &Test,
    design: &Design,
    tick: &(dyn Fn() + Sync),
) -> Result<BalanceReport, BalanceError> {
    let started = std::time::Instant::now();
    let derived = control_content(catalog, test);
    let catalog = derived.as_ref().map_or(catalog, |(c, _)| c);
    let arms = arms(catalog, test, derived.as_ref().map(|(_, id)| *id))?;
    let mut tallies = vec![Tally::default(); arms.len()];
    let mut diffs = Vec::new();
    let mut moments = Moments::default();
    let mut standing = None;
    let per_round = round_games(test.opponents.len());
    let cap = test.games.max(1);
    let mut round = 0u32;
    while tallies.first().is_some_and(|t| t.games < cap) {
        let games = per_round.min(cap - tallies[0].games);
        for (arm, tally) in arms.iter().zip(&mut tallies) {
            let (a, b) = play_arm(catalog, test, arm, round_seed(arm.seed, round), games, tick);
            let before = diffs.len();
            add(tally, &mut diffs, &a, &b);
            for d in &diffs[before..] {
                moments.push(*d);
            }
        }
        round += 1;
        let now = step(design, &moments, standing);
        standing = Some(now);
        if now.decided() {
            break;
        }
    }
    let mut out = report(catalog, test, &arms, &tallies, &diffs);
    let now = standing.unwrap_or_else(|| step(design, &moments, None));
    if now.strong == Side::Effect {
        out.verdict = Verdict::Strong;
    } else if now.weak == Side::Effect {
        out.verdict = Verdict::Weak;
    } else if now.decided() {
        out.verdict = Verdict::WithinNoise;
    }
    let fixed_pairs = design.fixed_pairs(moments.variance().sqrt());
    #[allow(clippy::cast_precision_loss)]
    let saved = if fixed_pairs > 0 {
        1.0 - moments.n as f64 / fixed_pairs as f64
    } else {
        0.0
    };
    out.sequential = Some(SequentialReport {
        alpha: design.alpha,
        beta: design.beta,
        effect: design.effect,
        decided: now.decided(),
        strong: now.strong,
        weak: now.weak,
        llr_strong: now.llr_strong,
        llr_weak: now.llr_weak,
        bounds: design.bounds(),
        rounds: round,
        cap_pairs: cap.saturating_mul(u32::try_from(arms.len()).unwrap_or(u32::MAX)),
        fixed_pairs,
        saved,
        seconds: started.elapsed().as_secs_f64(),
    });
    Ok(out)
}

/// Count a deck's games `a` (with the card) and `b` (with the control).
fn add(tally: &mut Tally, diffs: &mut Vec<f64>, a: &[f64], b: &[f64]) {
    tally.games += u32::try_from(a.len()).unwrap_or(u32::MAX);
    tally.with += a.iter().sum::<f64>();
    tally.control += b.iter().sum::<f64>();
    diffs.extend(a.iter().zip(b).map(|(x, y)| x - y));
}

/// The report of what the decks' games gave.
fn report(
    catalog: &Catalog,
    test: &Test,
    arms: &[Arm],
    tallies: &[Tally],
    diffs: &[f64],
) -> BalanceReport {
    let decks = arms
        .iter()
        .zip(tallies)
        .map(|(arm, t)| {
            let n = f64::from(t.games.max(1));
            DeckResult {
                deck: arm.deck.clone(),
                control: arm.control.clone(),
                games: t.games,
                win_rate_with: t.with / n,
                win_rate_control: t.control / n,
            }
        })
        .collect();
    let (effect, ci95) = paired_interval(diffs);
    let verdict = if ci95[0] > 0.0 {
        Verdict::Strong
    } else if ci95[1] < 0.0 {
        Verdict::Weak
    } else {
        Verdict::WithinNoise
    };
    let pairs = u32::try_from(diffs.len()).unwrap_or(u32::MAX);
    let n = f64::from(pairs.max(1));
    BalanceReport {
        card: catalog.card(test.card).meta.id.clone(),
        pairs,
        win_rate_with: tallies.iter().map(|t| t.with).sum::<f64>() / n,
        win_rate_control: tallies.iter().map(|t| t.control).sum::<f64>() / n,
        effect,
        ci95,
        verdict,
        decks,
        sequential: None,
    }
}

/// The mean of paired differences and its 95 % interval (normal approximation, sample
/// standard deviation; z = 1.96). With fewer than two pairs the interval is ±1.
#[must_use]
#[allow(clippy::cast_precision_loss)]
pub fn paired_interval(diffs: &[f64]) -> (f64, [f64; 2]) {
    let n = diffs.len();
    if n == 0 {
        return (0.0, [-1.0, 1.0]);
    }
    let mean = diffs.iter().sum::<f64>() / n as f64;
    if n < 2 {
        return (mean, [-1.0, 1.0]);
    }
    let var = diffs.iter().map(|d| (d - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
    let half = 1.959_964 * (var / n as f64).sqrt();
    (mean, [mean - half, mean + half])
}
