//! Is a card too strong? A paired A/B test: the same games — same seeds, same opponents,
//! both seats — played once with the card in a deck slot and once with a control card in
//! that slot, so everything but the card cancels out. The verdict comes from the paired
//! differences' 95 % interval (docs/ai.md, "Judging one card").

use std::sync::atomic::{AtomicBool, Ordering};

use serde::{Deserialize, Serialize};

use super::sequential::{Design, Moments, Side, step};
use super::simulate::{Config, DeckChoice, MAX_MOVES, outcomes, shard_games};
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
    /// The test was stopped before it ended (by whoever started it).
    #[error("stopped before the verdict")]
    Stopped,
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
    shard: Option<(u32, u32)>,
    tick: &(dyn Fn() + Sync),
) -> (Vec<f64>, Vec<f64>) {
    (
        play_deck(
            catalog,
            test,
            &arm.deck,
            &arm.with,
            (seed, games, shard),
            tick,
        ),
        play_deck(
            catalog,
            test,
            &arm.deck,
            &arm.without,
            (seed, games, shard),
            tick,
        ),
    )
}

/// Play `games` games of the deck `stacks` (called `deck`) against `test`'s opponents
/// with `seed`, taking each seat in turn (only `shard`'s games, when it is given): its
/// points game by game.
pub(super) fn play_deck(
    catalog: &Catalog,
    test: &Test,
    deck: &str,
    stacks: &[Vec<CardId>],
    (seed, games, shard): (u64, u32, Option<(u32, u32)>),
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
        shard,
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
        let (a, b) = play_arm(catalog, test, arm, arm.seed, test.games, None, tick);
        add(tally, &mut diffs, &a, &b);
    }
    Ok(report(
        &catalog.card(test.card).meta.id,
        &names(&arms),
        &tallies,
        &diffs,
    ))
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
    run_sequential_until(catalog, test, design, tick, &AtomicBool::new(false))
}

/// [`run_sequential`] that ends with [`BalanceError::Stopped`] at the end of the round in
/// which `stop` is set (a screen's Stop button).
///
/// # Errors
/// As [`run`], and [`BalanceError::Stopped`].
pub fn run_sequential_until(
    catalog: &Catalog,
    test: &Test,
    design: &Design,
    tick: &(dyn Fn() + Sync),
    stop: &AtomicBool,
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
            let seed = round_seed(arm.seed, round);
            let (a, b) = play_arm(catalog, test, arm, seed, games, None, tick);
            let before = diffs.len();
            add(tally, &mut diffs, &a, &b);
            for d in &diffs[before..] {
                moments.push(*d);
            }
        }
        round += 1;
        if stop.load(Ordering::Relaxed) {
            return Err(BalanceError::Stopped);
        }
        let now = step(design, &moments, standing);
        standing = Some(now);
        if now.decided() {
            break;
        }
    }
    let mut out = report(
        &catalog.card(test.card).meta.id,
        &names(&arms),
        &tallies,
        &diffs,
    );
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

/// What identifies a sharded fixed-size test, so only shards of the same test merge. The
/// command line fills it from its options and sets `content` (a hash of the packs and the
/// decks' cards).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct ShardRun {
    /// The pack whose cards are judged (`--pack`), if the test is of a pack's cards.
    pub pack: Option<String>,
    /// The cards judged, by id, in the order judged.
    pub cards: Vec<String>,
    /// The control given, if one was.
    pub control: Option<String>,
    /// The decks the cards are tried in.
    pub decks: Vec<String>,
    /// Games per deck and variant in the whole test.
    pub games: u32,
    /// Both sides' level.
    pub ai: String,
    /// Seed.
    pub seed: u64,
    /// `hard`'s budget, as text.
    pub budget: String,
    /// Shards of the test.
    pub shards: u32,
    /// What the test plays with.
    pub content: String,
}

/// One deck's games in a shard, in game order: the tested deck's points with the card
/// and with the control (1 a win, ½ a draw, 0 a loss).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct DeckShard {
    /// The deck.
    pub deck: String,
    /// The control card used in it.
    pub control: String,
    /// Points with the card.
    pub with: Vec<f64>,
    /// Points with the control, game for game.
    pub without: Vec<f64>,
}

/// One card's share of a shard.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CardShard {
    /// The card, by id.
    pub card: String,
    /// Its decks, in the order of the test.
    pub decks: Vec<DeckShard>,
}

/// The format of [`BalanceShard`] this version writes and reads.
pub const SHARD_FORMAT: u32 = 1;

/// A shard of a fixed-size test (`balance --shard K/N`): what [`merge_shards`] adds up.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct BalanceShard {
    /// [`SHARD_FORMAT`].
    pub format: u32,
    /// The test.
    pub run: ShardRun,
    /// This shard, from 1.
    pub shard: u32,
    /// Each card's games.
    pub cards: Vec<CardShard>,
    /// Wall time, seconds.
    pub seconds: f64,
}

/// Play shard `k` of `n` of a fixed-size test (the games `g` of each deck and variant with
/// `g % n == k - 1`, both variants the same games, so every pair stays whole). `tick`
/// after each game.
///
/// # Errors
/// As [`run`].
pub fn run_shard(
    catalog: &Catalog,
    test: &Test,
    shard: (u32, u32),
    tick: &(dyn Fn() + Sync),
) -> Result<CardShard, BalanceError> {
    let derived = control_content(catalog, test);
    let catalog = derived.as_ref().map_or(catalog, |(c, _)| c);
    let arms = arms(catalog, test, derived.as_ref().map(|(_, id)| *id))?;
    let decks = arms
        .iter()
        .map(|arm| {
            let (with, without) =
                play_arm(catalog, test, arm, arm.seed, test.games, Some(shard), tick);
            DeckShard {
                deck: arm.deck.clone(),
                control: arm.control.clone(),
                with,
                without,
            }
        })
        .collect();
    Ok(CardShard {
        card: catalog.card(test.card).meta.id.clone(),
        decks,
    })
}

/// Why shards of a test cannot be merged. Shards are numbered from 1 in the order given;
/// [`ShardMergeError::shard_file`] says which one is at fault.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ShardMergeError {
    /// No shard given.
    #[error("no shards to merge")]
    Empty,
    /// A shard of another format.
    #[error(
        "is a shard of format {1}; this version reads format {SHARD_FORMAT}: run the test again with this version"
    )]
    Format(usize, u32),
    /// Two shards are of different tests.
    #[error(
        "is of another test than the first shard: its `run.{field}` is {this}, the first shard's is {first} (the shards of one test have the same cards, control, decks, games, level, seed, budget, shard count and content)"
    )]
    OtherRun {
        /// The shard, from 1.
        shard_file: usize,
        /// The first field of `run` that differs.
        field: String,
        /// Its value in the first shard (JSON).
        first: String,
        /// Its value in this shard (JSON).
        this: String,
    },
    /// A shard's number is outside the test's.
    #[error("says it is shard {1} of {2}: shards run from 1 to {2}")]
    OutOfRange(usize, u32, u32),
    /// A shard appears twice.
    #[error("holds shard {1}, which an earlier file holds too: give each shard once")]
    Twice(usize, u32),
    /// Shards are missing.
    #[error("shards missing: {0:?} (of {1})")]
    Missing(Vec<u32>, u32),
    /// A shard's games do not fit its place in the test.
    #[error("does not hold what its run says: {1}")]
    Malformed(usize, String),
}

impl ShardMergeError {
    /// The shard at fault (from 1, in the order given), when one is.
    #[must_use]
    pub fn shard_file(&self) -> Option<usize> {
        match self {
            ShardMergeError::Format(i, _)
            | ShardMergeError::OtherRun { shard_file: i, .. }
            | ShardMergeError::OutOfRange(i, ..)
            | ShardMergeError::Twice(i, _)
            | ShardMergeError::Malformed(i, _) => Some(*i),
            ShardMergeError::Empty | ShardMergeError::Missing(..) => None,
        }
    }
}

/// Put the shards of a fixed-size test back together: each card's report, exactly the one
/// the test run on one machine gives (the pairs taken in the same order).
///
/// # Errors
/// When the shards are of different tests or formats, a shard is given twice or is
/// missing, or a shard's games do not match its place.
pub fn merge_shards(shards: &[BalanceShard]) -> Result<Vec<BalanceReport>, ShardMergeError> {
    let first = shards.first().ok_or(ShardMergeError::Empty)?;
    let run = &first.run;
    let n = run.shards;
    if n == 0 || n > run.games {
        return Err(ShardMergeError::Malformed(
            1,
            format!(
                "its test has {n} shards of {} games; a test has 1 shard to as many as its games",
                run.games
            ),
        ));
    }
    let mut by_number: Vec<Option<usize>> = vec![None; n as usize];
    for (i, s) in shards.iter().enumerate() {
        let file = i + 1;
        if s.format != SHARD_FORMAT {
            return Err(ShardMergeError::Format(file, s.format));
        }
        if s.run != *run {
            let (field, first, this) = super::simulate::first_difference(run, &s.run);
            return Err(ShardMergeError::OtherRun {
                shard_file: file,
                field,
                first,
                this,
            });
        }
        let slot = s
            .shard
            .checked_sub(1)
            .and_then(|k| by_number.get_mut(k as usize))
            .ok_or(ShardMergeError::OutOfRange(file, s.shard, n))?;
        if slot.is_some() {
            return Err(ShardMergeError::Twice(file, s.shard));
        }
        *slot = Some(i);
        check_shard(s).map_err(|why| ShardMergeError::Malformed(file, why))?;
    }
    let missing: Vec<u32> = (1..=n)
        .filter(|k| by_number[(*k - 1) as usize].is_none())
        .collect();
    if !missing.is_empty() {
        return Err(ShardMergeError::Missing(missing, n));
    }
    let ordered: Vec<&BalanceShard> = by_number.iter().flatten().map(|&i| &shards[i]).collect();
    let mut reports = Vec::with_capacity(run.cards.len());
    for (c, card) in run.cards.iter().enumerate() {
        let parts: Vec<&CardShard> = ordered.iter().map(|s| &s.cards[c]).collect();
        let names: Vec<(String, String)> = first.cards[c]
            .decks
            .iter()
            .map(|d| (d.deck.clone(), d.control.clone()))
            .collect();
        for (k, part) in parts.iter().enumerate() {
            let theirs = part.decks.iter().map(|d| (&d.deck, &d.control));
            if !theirs.eq(names.iter().map(|(d, c)| (d, c))) {
                return Err(ShardMergeError::Malformed(
                    by_number[k].map_or(0, |i| i + 1),
                    format!(
                        "card '{card}' is tried in other decks or against another control than in the first shard"
                    ),
                ));
            }
        }
        let mut tallies = vec![Tally::default(); names.len()];
        let mut diffs = Vec::new();
        for (d, tally) in tallies.iter_mut().enumerate() {
            // Game g of the deck is in shard g % n + 1, at place g / n.
            let (mut a, mut b) = (Vec::new(), Vec::new());
            for g in 0..run.games {
                let part = &parts[(g % n) as usize].decks[d];
                let at = (g / n) as usize;
                a.push(part.with[at]);
                b.push(part.without[at]);
            }
            add(tally, &mut diffs, &a, &b);
        }
        reports.push(report(card, &names, &tallies, &diffs));
    }
    Ok(reports)
}

/// Whether a shard holds what its run says: each card in order, each deck with as many
/// games as the shard plays, each point 0, ½ or 1.
fn check_shard(s: &BalanceShard) -> Result<(), String> {
    let run = &s.run;
    let ids: Vec<&String> = s.cards.iter().map(|c| &c.card).collect();
    if !ids.iter().copied().eq(&run.cards) {
        return Err(format!(
            "its cards are {:?}, its run's are {:?}",
            ids, run.cards
        ));
    }
    let games = shard_games(run.games, s.shard, run.shards) as usize;
    for c in &s.cards {
        for d in &c.decks {
            if d.with.len() != games || d.without.len() != games {
                return Err(format!(
                    "card '{}' in deck '{}' has {} and {} games; shard {} of {} plays {games}",
                    c.card,
                    d.deck,
                    d.with.len(),
                    d.without.len(),
                    s.shard,
                    run.shards
                ));
            }
            if let Some(p) = d
                .with
                .iter()
                .chain(&d.without)
                .find(|p| ![0.0, 0.5, 1.0].contains(*p))
            {
                return Err(format!(
                    "card '{}' in deck '{}' has a game worth {p} points (a game is worth 0, 0.5 or 1)",
                    c.card, d.deck
                ));
            }
        }
    }
    Ok(())
}

/// Count a deck's games `a` (with the card) and `b` (with the control).
fn add(tally: &mut Tally, diffs: &mut Vec<f64>, a: &[f64], b: &[f64]) {
    tally.games += u32::try_from(a.len()).unwrap_or(u32::MAX);
    tally.with += a.iter().sum::<f64>();
    tally.control += b.iter().sum::<f64>();
    diffs.extend(a.iter().zip(b).map(|(x, y)| x - y));
}

/// Each arm's deck and control, by name.
fn names(arms: &[Arm]) -> Vec<(String, String)> {
    arms.iter()
        .map(|a| (a.deck.clone(), a.control.clone()))
        .collect()
}

/// The report of what the decks' games gave: `card` by id, each deck's (deck, control)
/// names, its tally, and every pair's difference in deck order, game order within a deck.
fn report(
    card: &str,
    names: &[(String, String)],
    tallies: &[Tally],
    diffs: &[f64],
) -> BalanceReport {
    let decks = names
        .iter()
        .zip(tallies)
        .map(|((deck, control), t)| {
            let n = f64::from(t.games.max(1));
            DeckResult {
                deck: deck.clone(),
                control: control.clone(),
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
        card: card.to_string(),
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
