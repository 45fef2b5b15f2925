//! Is a card too strong? A paired A/B test: the same games — same seeds, same opponents,
//! both seats — played once with the card in a deck slot and once with a control card in
//! that slot, so everything but the card cancels out. The verdict comes from the paired
//! differences' 95 % interval (docs/ai.md, "Judging one card").

use serde::Serialize;

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
}

/// The content with a control card for `card` added: a plain card of the same value —
/// no ability, a token type with no aura, turret, script or transformation and a
/// multiplier of 1 — so the test measures what the card does beyond its value. `None`
/// when the content has no plain token type.
#[must_use]
pub fn with_plain_control(catalog: &Catalog, card: CardId) -> Option<(Catalog, CardId)> {
    let plain = catalog.token_types().iter().position(|t| {
        t.aura.is_none()
            && t.on_destroyed.is_none()
            && t.between_turns.is_none()
            && t.script.is_none()
            && t.income_multiplier == 1
    })?;
    let token = crate::rules::TokenTypeId::from_index(plain);
    let value = catalog.card(card).value;
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

/// Run `test`; `tick` after each game.
pub fn run(
    catalog: &Catalog,
    test: &Test,
    tick: &(dyn Fn() + Sync),
) -> Result<BalanceReport, BalanceError> {
    if test.decks.is_empty() || test.opponents.is_empty() {
        return Err(BalanceError::NoDecks);
    }
    // The default control is a plain card of the same value, added to the content.
    let derived = match test.control {
        Some(_) => None,
        None => with_plain_control(catalog, test.card),
    };
    let catalog = derived.as_ref().map_or(catalog, |(c, _)| c);
    let plain = derived.as_ref().map(|(_, id)| *id);
    let engine = Engine::new(catalog, &NoHooks);
    let key = |c: CardId| catalog.card(c).meta.name.clone();
    let mut diffs: Vec<f64> = Vec::new();
    let (mut with_total, mut control_total) = (0.0, 0.0);
    let mut decks = Vec::new();
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
        let config = |stacks: &Vec<Vec<CardId>>| Config {
            deck_a: DeckChoice {
                id: deck.id.clone(),
                stacks: stacks.clone(),
                per_game: false,
            },
            decks_b: test.opponents.clone(),
            ai_a: test.level,
            ai_b: test.level,
            games: test.games,
            // The same seeds for both variants; another run of seeds per deck.
            seed: test.seed ^ (k as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15),
            threads: test.threads,
            options: test.options,
            max_moves: MAX_MOVES,
            shard: None,
        };
        let a = outcomes(catalog, &config(&with), tick);
        let b = outcomes(catalog, &config(&without), tick);
        let (sa, sb): (f64, f64) = (a.iter().sum(), b.iter().sum());
        let n = f64::from(test.games.max(1));
        decks.push(DeckResult {
            deck: deck.id.clone(),
            control: key(control),
            games: test.games,
            win_rate_with: sa / n,
            win_rate_control: sb / n,
        });
        with_total += sa;
        control_total += sb;
        diffs.extend(a.iter().zip(&b).map(|(x, y)| x - y));
    }
    let (effect, ci95) = paired_interval(&diffs);
    let verdict = if ci95[0] > 0.0 {
        Verdict::Strong
    } else if ci95[1] < 0.0 {
        Verdict::Weak
    } else {
        Verdict::WithinNoise
    };
    let pairs = u32::try_from(diffs.len()).unwrap_or(u32::MAX);
    let n = f64::from(pairs.max(1));
    Ok(BalanceReport {
        card: catalog.card(test.card).meta.id.clone(),
        pairs,
        win_rate_with: with_total / n,
        win_rate_control: control_total / n,
        effect,
        ci95,
        verdict,
        decks,
    })
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
