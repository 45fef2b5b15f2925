//! Which variant of a card is nearest to fair? `balance CARD --variants FILE` (docs/ai.md,
//! "Racing variants"): every variant plays the same games (seeds, decks, opponents),
//! paired against control games shared where they can be, and the variants clearly
//! farther from fair than another are dropped as the evidence comes in. A variant whose
//! content plays the control games differently (its patches reach a card of those games,
//! a token type, an ability or the rules) plays its own control games on the same seeds,
//! so each effect is the card's in its own content, as `--tune` measures it.
//!
//! The rule is successive elimination (Even-Dar, Mannor and Mansour, *Action Elimination
//! and Stopping Conditions for the Multi-Armed Bandit*, JMLR 2006; Maron and Moore's
//! Hoeffding races, 1997) on the paired effects `μ` (the card's points in a variant minus
//! the control's in the same game), with normal intervals of radius `z s ÷ √n` where `z`
//! makes every interval the race may ever look at hold at once with probability 1 − α
//! (a union bound over the `K` per-variant and `K (K − 1) ÷ 2` pairwise intervals at each
//! of the at most `R` looks): `z = Φ⁻¹(1 − α ÷ (2 M R))`, `M = K (K + 1) ÷ 2`. A variant `i`
//! is dropped at a look when, for some other variant `j` still racing, `|μ_i| > |μ_j|`
//! follows from those intervals:
//! - its interval of `|μ_i|` lies above `j`'s interval of `|μ_j|`, or
//! - both signs are settled (`s_i`, `s_j`: each interval of `μ` excludes zero) and the
//!   interval of the paired contrast `s_i d_i − s_j d_j` (whose mean is
//!   `|μ_i| − |μ_j|`, game by game on the same seeds) lies above zero.
//!
//! When all intervals hold, the variant nearest to fair is never dropped, so the chance
//! of ever dropping it is at most α (with the normal approximation). The race stops when
//! one variant is left, when the ones left are within δ (`--effect`) of each other, or at
//! the cap (`--games` per deck).

use serde::Serialize;

use super::balance::{
    self, BalanceError, Test, Verdict, arms, control_content, paired_interval, play_deck,
    round_games, round_seed,
};
use super::sequential::{Design, MIN_PAIRS, Moments, normal_quantile};
use crate::rules::{Catalog, Engine, NoHooks};

/// One variant in the race: its name, its patches in words and its content.
#[derive(Clone, Debug)]
pub struct Entrant {
    /// The name.
    pub name: String,
    /// Its patches in words (none: the content as loaded).
    pub changes: Vec<String>,
    /// The content with its patches.
    pub content: Catalog,
}

/// When and why a variant left the race.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Dropped {
    /// The look (round) at which it was dropped, from 1.
    pub round: u32,
    /// The pairs it had played.
    pub pairs: u32,
    /// The variant it was clearly farther from fair than.
    pub by: String,
}

/// One variant's result.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Standing {
    /// Its place: 1 is nearest to fair.
    pub rank: u32,
    /// The name.
    pub name: String,
    /// Its patches in words.
    pub changes: Vec<String>,
    /// The card's effect against the control (win-rate points as a share).
    pub effect: f64,
    /// Its 95 % interval (for this variant alone).
    pub ci95: [f64; 2],
    /// The race's interval of the effect (simultaneous with all the others, at 1 − α).
    pub race_interval: [f64; 2],
    /// The verdict of its 95 % interval.
    pub verdict: Verdict,
    /// Pairs played.
    pub pairs: u32,
    /// The deck's win rate with the card in this variant.
    pub win_rate_with: f64,
    /// With the control, over the same games.
    pub win_rate_control: f64,
    /// Whether its control games were the shared ones, played in the content as loaded
    /// (else it played its own, in its own content, on the same seeds).
    pub shared_control: bool,
    /// When it left the race (`None`: it raced to the end).
    pub dropped: Option<Dropped>,
}

/// Why the race stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Stop {
    /// One variant is left.
    OneLeft,
    /// The variants left are within δ of each other.
    WithinEffect,
    /// The cap was reached with several left.
    Cap,
}

impl Stop {
    /// In words.
    #[must_use]
    pub fn words(self) -> &'static str {
        match self {
            Stop::OneLeft => "one variant left",
            Stop::WithinEffect => "the variants left are within the effect size of each other",
            Stop::Cap => "the cap (--games per deck) was reached",
        }
    }
}

/// The race's result.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RaceReport {
    /// The card.
    pub card: String,
    /// The control it is measured against.
    pub control: String,
    /// α: the chance of ever dropping the variant nearest to fair.
    pub alpha: f64,
    /// δ (a share): variants left within it of each other end the race.
    pub effect: f64,
    /// The intervals' z.
    pub z: f64,
    /// Rounds played (each plays every deck against every opponent in both seats).
    pub rounds: u32,
    /// The most pairs a variant could play.
    pub cap_pairs: u32,
    /// Games played in all: the shared control games, the variants' own control games
    /// and every variant's games with the card.
    pub games: u64,
    /// Why it stopped.
    pub stopped: Stop,
    /// Wall time, seconds.
    pub seconds: f64,
    /// The variants, nearest to fair first: those still racing by the size of their
    /// effect, then those dropped, the last dropped first.
    pub variants: Vec<Standing>,
}

/// The mean, standard deviation and count of `x`.
fn moments(x: impl Iterator<Item = f64>) -> Moments {
    let mut m = Moments::default();
    for v in x {
        m.push(v);
    }
    m
}

/// The smallest variance an interval is computed with (as the sequential test does).
const MIN_VARIANCE: f64 = 1e-4;

#[allow(clippy::cast_precision_loss)]
fn interval(m: &Moments, z: f64) -> [f64; 2] {
    let r = z * (m.variance().max(MIN_VARIANCE) / m.n.max(1) as f64).sqrt();
    [m.mean() - r, m.mean() + r]
}

/// The interval of `|μ|` from that of `μ`.
fn abs_interval([lo, hi]: [f64; 2]) -> [f64; 2] {
    if lo > 0.0 {
        [lo, hi]
    } else if hi < 0.0 {
        [-hi, -lo]
    } else {
        [0.0, (-lo).max(hi)]
    }
}

/// The sign of `μ` when its interval excludes zero.
fn sign([lo, hi]: [f64; 2]) -> Option<f64> {
    if lo > 0.0 {
        Some(1.0)
    } else if hi < 0.0 {
        Some(-1.0)
    } else {
        None
    }
}

/// Race `entrants`: `test.card` in each one's content against the control of `test`, on
/// the same seeds, under `design`'s α and δ (its β is not used). The control games are
/// played once, in `catalog` (the content as loaded), for every variant whose content
/// plays them alike (it changes no rule, token type or ability, and no card of the
/// control games); every other variant plays its own control games in its own content,
/// on the same seeds. `tick` after each game.
pub fn race(
    catalog: &Catalog,
    test: &Test,
    design: &Design,
    entrants: &[Entrant],
    tick: &(dyn Fn() + Sync),
) -> Result<RaceReport, BalanceError> {
    let running = std::sync::atomic::AtomicBool::new(false);
    race_until(catalog, test, design, entrants, tick, &running)
}

/// [`race`] that ends with [`BalanceError::Stopped`] at the end of the round in which
/// `stop` is set (a screen's Stop button).
///
/// # Errors
/// As [`race`], and [`BalanceError::Stopped`].
pub fn race_until(
    catalog: &Catalog,
    test: &Test,
    design: &Design,
    entrants: &[Entrant],
    tick: &(dyn Fn() + Sync),
    stop: &std::sync::atomic::AtomicBool,
) -> Result<RaceReport, BalanceError> {
    let started = std::time::Instant::now();
    let derived = control_content(catalog, test);
    let base = derived.as_ref().map_or(catalog, |(c, _)| c);
    let arms = arms(base, test, derived.as_ref().map(|(_, id)| *id))?;
    let lanes = entrants
        .iter()
        .map(|e| lane(catalog, test, &arms, e))
        .collect::<Result<Vec<Lane>, BalanceError>>()?;
    let k = entrants.len();
    let per_round = round_games(test.opponents.len());
    let cap = test.games.max(1);
    let looks = cap.div_ceil(per_round).max(1);
    let intervals = (k * (k + 1) / 2).max(1);
    #[allow(clippy::cast_precision_loss)]
    let z = normal_quantile(1.0 - design.alpha / (2.0 * intervals as f64 * f64::from(looks)));
    let mut control: Vec<Vec<f64>> = vec![Vec::new(); k];
    let mut with: Vec<Vec<f64>> = vec![Vec::new(); k];
    let mut dropped: Vec<Option<Dropped>> = vec![None; k];
    let mut games = 0u64;
    let mut played = 0u32;
    let mut round = 0u32;
    let mut stopped = Stop::Cap;
    while played < cap {
        let n = per_round.min(cap - played);
        let alive: Vec<usize> = (0..k).filter(|&i| dropped[i].is_none()).collect();
        for (a, arm) in arms.iter().enumerate() {
            let seed = round_seed(arm.seed, round);
            let play = |content: &Catalog, stacks: &[Vec<crate::rules::CardId>]| {
                play_deck(content, test, &arm.deck, stacks, (seed, n, None), tick)
            };
            let shared = alive
                .iter()
                .any(|&i| lanes[i].own.is_none())
                .then(|| play(base, &arm.without));
            games += shared.as_ref().map_or(0, |s| s.len() as u64);
            for &i in &alive {
                let lane = &lanes[i];
                let ctrl = match (&lane.own, &shared) {
                    (Some((content, own)), _) => {
                        let c = play(
                            content.as_ref().unwrap_or(&entrants[i].content),
                            &own[a].without,
                        );
                        games += c.len() as u64;
                        c
                    }
                    (None, Some(s)) => s.clone(),
                    (None, None) => Vec::new(),
                };
                control[i].extend(ctrl);
                let w = play(&entrants[i].content, &arm.with);
                games += w.len() as u64;
                with[i].extend(w);
            }
        }
        played += n;
        round += 1;
        if stop.load(std::sync::atomic::Ordering::Relaxed) {
            return Err(BalanceError::Stopped);
        }
        if (control.iter().map(Vec::len).max().unwrap_or(0) as u64) < MIN_PAIRS {
            continue;
        }
        let out = look(&control, &with, &alive, z, design.effect);
        for &(i, by) in &out.drop {
            dropped[i] = Some(Dropped {
                round,
                pairs: u32::try_from(with[i].len()).unwrap_or(u32::MAX),
                by: entrants[by].name.clone(),
            });
        }
        if alive.len() - out.drop.len() <= 1 {
            stopped = Stop::OneLeft;
            break;
        }
        if out.within_effect {
            stopped = Stop::WithinEffect;
            break;
        }
    }
    let mut standings = standings(entrants, &control, &with, dropped, z);
    for s in &mut standings {
        s.shared_control = entrants
            .iter()
            .zip(&lanes)
            .any(|(e, l)| e.name == s.name && l.own.is_none());
    }
    Ok(RaceReport {
        card: catalog.card(test.card).meta.id.clone(),
        control: arms.first().map(|a| a.control.clone()).unwrap_or_default(),
        alpha: design.alpha,
        effect: design.effect,
        z,
        rounds: round,
        cap_pairs: cap.saturating_mul(u32::try_from(arms.len()).unwrap_or(u32::MAX)),
        games,
        stopped,
        seconds: started.elapsed().as_secs_f64(),
        variants: standings,
    })
}

/// How one variant's games are played: `own` is `None` when it shares the control games
/// played in the content as loaded, else its own control content (`None`: its content
/// itself) and decks.
struct Lane {
    own: Option<(Option<Catalog>, Vec<balance::Arm>)>,
}

/// The lane of `e` (see [`race`]), its decks checked against the deck rules.
fn lane(
    catalog: &Catalog,
    test: &Test,
    arms: &[balance::Arm],
    e: &Entrant,
) -> Result<Lane, BalanceError> {
    let content = &e.content;
    let engine = Engine::new(content, &NoHooks);
    for arm in arms {
        engine
            .check_deck(crate::rules::Seat::One, &arm.with)
            .map_err(|why| BalanceError::BadDeck {
                deck: arm.deck.clone(),
                what: format!("the variant '{}'", crate::rules::echo(&e.name)),
                why: why.message(crate::rules::Whose::Deck),
            })?;
    }
    let used = arms
        .iter()
        .flat_map(|a| a.without.iter().flatten())
        .chain(
            test.opponents
                .iter()
                .flat_map(|d| d.stacks.iter().flatten()),
        )
        .filter(|c| c.index() < catalog.cards().len());
    let alike = content.rules() == catalog.rules()
        && content.token_types() == catalog.token_types()
        && content.abilities() == catalog.abilities()
        && used.clone().all(|&c| content.card(c) == catalog.card(c));
    if alike {
        return Ok(Lane { own: None });
    }
    let derived = match test.control {
        Some(_) => None,
        None => Some(
            balance::with_plain_control_of(content, catalog.card(test.card).value)
                .ok_or_else(|| BalanceError::NoControl("(no plain token type)".into()))?,
        ),
    };
    let own = balance::arms(
        derived.as_ref().map_or(content, |(c, _)| c),
        test,
        derived.as_ref().map(|(_, id)| *id),
    )?;
    Ok(Lane {
        own: Some((derived.map(|(c, _)| c), own)),
    })
}

/// What one look at the race decided.
struct Look {
    /// The variants dropped, each with one it is clearly farther from fair than.
    drop: Vec<(usize, usize)>,
    /// The variants kept are within δ of each other.
    within_effect: bool,
}

/// One look at the variants `alive` (see the module's doc). The one with the smallest
/// estimated `|μ|` is never dropped, so one is always left.
fn look(control: &[Vec<f64>], with: &[Vec<f64>], alive: &[usize], z: f64, effect: f64) -> Look {
    let diffs = |i: usize| {
        with[i]
            .iter()
            .zip(&control[i])
            .map(|(a, b)| a - b)
            .collect::<Vec<f64>>()
    };
    let d: Vec<Vec<f64>> = (0..with.len())
        .map(|i| {
            if alive.contains(&i) {
                diffs(i)
            } else {
                Vec::new()
            }
        })
        .collect();
    let mu: Vec<[f64; 2]> = d
        .iter()
        .map(|x| interval(&moments(x.iter().copied()), z))
        .collect();
    let mean = |i: usize| moments(d[i].iter().copied()).mean();
    let leader = alive
        .iter()
        .copied()
        .min_by(|&a, &b| mean(a).abs().total_cmp(&mean(b).abs()));
    // |μ_i| − |μ_j|: the contrast's interval when both signs are settled, else the bounds
    // of the two |μ| intervals.
    let gap = |i: usize, j: usize| -> [f64; 2] {
        let (ai, aj) = (abs_interval(mu[i]), abs_interval(mu[j]));
        let loose = [ai[0] - aj[1], ai[1] - aj[0]];
        match (sign(mu[i]), sign(mu[j])) {
            (Some(si), Some(sj)) => {
                let c = interval(
                    &moments(d[i].iter().zip(&d[j]).map(|(x, y)| si * x - sj * y)),
                    z,
                );
                [c[0].max(loose[0]), c[1].min(loose[1])]
            }
            _ => loose,
        }
    };
    let mut drop = Vec::new();
    for &i in alive {
        if Some(i) == leader {
            continue;
        }
        if let Some(&j) = alive.iter().find(|&&j| j != i && gap(i, j)[0] > 0.0) {
            drop.push((i, j));
        }
    }
    let kept: Vec<usize> = alive
        .iter()
        .copied()
        .filter(|i| !drop.iter().any(|(d, _)| d == i))
        .collect();
    let within_effect = kept.iter().all(|&i| {
        kept.iter().all(|&j| {
            let g = gap(i, j);
            i == j || (g[0] > -effect && g[1] < effect)
        })
    });
    Look {
        drop,
        within_effect,
    }
}

/// The standings, nearest to fair first.
#[allow(clippy::cast_precision_loss)]
fn standings(
    entrants: &[Entrant],
    control: &[Vec<f64>],
    with: &[Vec<f64>],
    dropped: Vec<Option<Dropped>>,
    z: f64,
) -> Vec<Standing> {
    let mut out: Vec<Standing> = entrants
        .iter()
        .zip(with)
        .zip(control)
        .zip(dropped)
        .map(|(((e, w), control), dropped)| {
            let d: Vec<f64> = w.iter().zip(control).map(|(a, b)| a - b).collect();
            let (effect, ci95) = paired_interval(&d);
            let verdict = if ci95[0] > 0.0 {
                Verdict::Strong
            } else if ci95[1] < 0.0 {
                Verdict::Weak
            } else {
                Verdict::WithinNoise
            };
            let n = w.len().max(1) as f64;
            Standing {
                rank: 0,
                name: e.name.clone(),
                changes: e.changes.clone(),
                effect,
                ci95,
                race_interval: interval(&moments(d.iter().copied()), z),
                verdict,
                pairs: u32::try_from(w.len()).unwrap_or(u32::MAX),
                win_rate_with: w.iter().sum::<f64>() / n,
                win_rate_control: control.iter().sum::<f64>() / n,
                shared_control: false,
                dropped,
            }
        })
        .collect();
    out.sort_by(|a, b| {
        let round = |s: &Standing| s.dropped.as_ref().map_or(u32::MAX, |d| d.round);
        round(b)
            .cmp(&round(a))
            .then(a.effect.abs().total_cmp(&b.effect.abs()))
    });
    for (i, s) in out.iter_mut().enumerate() {
        s.rank = u32::try_from(i + 1).unwrap_or(u32::MAX);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Three variants whose paired outcomes are known: `a` equals the control, `b` wins
    /// one game in four more, `c` one in two. The look keeps `a` and drops the other
    /// two (each clearly farther from fair than `a`), and never drops the leader.
    #[test]
    fn a_look_drops_the_variants_clearly_farther_from_fair() {
        let n = 400;
        let control: Vec<f64> = (0..n).map(|i| f64::from(i % 2)).collect();
        let a = control.clone();
        let b: Vec<f64> = control
            .iter()
            .enumerate()
            .map(|(i, &c)| if i % 4 == 0 { 1.0 } else { c })
            .collect();
        let c: Vec<f64> = control
            .iter()
            .enumerate()
            .map(|(i, &c)| if i % 2 == 0 { 1.0 } else { c })
            .collect();
        let with = vec![c, a, b];
        let controls = vec![control.clone(); 3];
        let out = look(&controls, &with, &[0, 1, 2], 3.5, 0.05);
        let mut dropped: Vec<usize> = out.drop.iter().map(|(i, _)| *i).collect();
        dropped.sort_unstable();
        assert_eq!(dropped, [0, 2]);
        assert!(out.drop.iter().all(|(_, by)| *by == 1 || *by == 2));
        // Identical variants: nobody is dropped, and they are within δ.
        let same = vec![control.clone(), control.clone()];
        let out = look(&same, &same, &[0, 1], 3.5, 0.05);
        assert!(out.drop.is_empty() && out.within_effect);
    }

    #[test]
    fn intervals_of_the_size_of_an_effect() {
        assert_eq!(abs_interval([0.1, 0.3]), [0.1, 0.3]);
        assert_eq!(abs_interval([-0.3, -0.1]), [0.1, 0.3]);
        assert_eq!(abs_interval([-0.3, 0.1]), [0.0, 0.3]);
        assert_eq!(sign([-0.3, 0.1]), None);
    }
}
