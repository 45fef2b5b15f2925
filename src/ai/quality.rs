//! Game-quality metrics: is the game still worth playing? From each game's record (its
//! length, its winner, and the score lead after every move) to the figures docs/ai.md
//! defines under "Game quality": the length distribution, lead changes, comebacks,
//! decisiveness, draws, the first seat's advantage, and dead and dominant cards.
//!
//! The sums ([`QualityTotals`]) hold whole numbers only, so the totals of a run's shards
//! merge into exactly the totals of the whole run ([`QualityTotals::merge`]), whatever the
//! order. The definitions follow C. Browne, *Automatic generation and evaluation of
//! recombination games* (PhD thesis, QUT, 2008), ch. 5, as Ludii's metrics implement
//! them, adapted to scores: a seat *leads* when its score is higher.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// One game as the metrics need it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GameTrace {
    /// Seat 1's score minus seat 2's after each move, in order.
    pub leads: Vec<i64>,
    /// The winner: `Some(true)` seat 1, `Some(false)` seat 2, `None` a draw (or a game
    /// stopped at the move cap).
    pub first_seat_won: Option<bool>,
}

impl GameTrace {
    /// Record the score lead after a move.
    pub fn push(&mut self, first_minus_second: i64) {
        self.leads.push(first_minus_second);
    }
}

/// Shares are stored in thousandths so sums stay whole numbers.
const SCALE: u64 = 1000;

/// The buckets of the decisiveness histogram (tenths of the game).
pub const DECIDED_BUCKETS: usize = 10;

/// The raw sums the metrics come from.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct QualityTotals {
    /// Games.
    pub games: u64,
    /// Games by length in moves.
    pub lengths: BTreeMap<u32, u64>,
    /// Games by their number of lead changes.
    pub lead_changes: BTreeMap<u32, u64>,
    /// Games someone led at half-time (after ⌊moves / 2⌋ moves) and someone won.
    pub halftime_led: u64,
    /// Of those, games the half-time leader lost.
    pub comebacks: u64,
    /// Games with a winner.
    pub won: u64,
    /// Sum over won games of the share of the game (in thousandths) played before the
    /// winner led for good.
    pub decided_sum: u64,
    /// Won games by that share, in tenths of the game.
    pub decided: [u64; DECIDED_BUCKETS],
    /// Drawn games.
    pub draws: u64,
    /// Games seat 1 won.
    pub first_seat_wins: u64,
}

impl QualityTotals {
    /// Count one game.
    pub fn add(&mut self, game: &GameTrace) {
        self.games += 1;
        let moves = u32::try_from(game.leads.len()).unwrap_or(u32::MAX);
        *self.lengths.entry(moves).or_default() += 1;
        *self
            .lead_changes
            .entry(lead_changes(&game.leads))
            .or_default() += 1;
        let Some(first) = game.first_seat_won else {
            self.draws += 1;
            return;
        };
        self.won += 1;
        self.first_seat_wins += u64::from(first);
        let winner_sign = if first { 1 } else { -1 };
        let half = game.leads.len() / 2;
        if half > 0 {
            let at_half = game.leads[half - 1].signum();
            if at_half != 0 {
                self.halftime_led += 1;
                self.comebacks += u64::from(at_half != winner_sign);
            }
        }
        // The winner leads for good after the last move at which it did not lead.
        let n = game.leads.len() as u64;
        let before = game
            .leads
            .iter()
            .rposition(|&l| l.signum() != winner_sign)
            .map_or(0, |i| i as u64 + 1);
        let share = (before * SCALE).checked_div(n).unwrap_or(0);
        self.decided_sum += share;
        let bucket = usize::try_from(share * DECIDED_BUCKETS as u64 / SCALE).unwrap_or(0);
        self.decided[bucket.min(DECIDED_BUCKETS - 1)] += 1;
    }

    /// Add another part of the same run.
    pub fn merge(&mut self, other: &QualityTotals) {
        self.games += other.games;
        for (k, v) in &other.lengths {
            *self.lengths.entry(*k).or_default() += v;
        }
        for (k, v) in &other.lead_changes {
            *self.lead_changes.entry(*k).or_default() += v;
        }
        self.halftime_led += other.halftime_led;
        self.comebacks += other.comebacks;
        self.won += other.won;
        self.decided_sum += other.decided_sum;
        for (a, b) in self.decided.iter_mut().zip(other.decided) {
            *a += b;
        }
        self.draws += other.draws;
        self.first_seat_wins += other.first_seat_wins;
    }
}

/// How often the leader changed: a change is a move after which the other seat leads
/// than the last seat that led (ties lead nobody and change nothing).
#[must_use]
pub fn lead_changes(leads: &[i64]) -> u32 {
    let mut last = 0i64;
    let mut changes = 0u32;
    for l in leads.iter().map(|l| l.signum()).filter(|&s| s != 0) {
        if last != 0 && l != last {
            changes = changes.saturating_add(1);
        }
        last = l;
    }
    changes
}

/// A card as the dead/dominant test needs it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CardUse {
    /// Its id.
    pub id: String,
    /// Times offered to the seat to move.
    pub offered: u64,
    /// Times played.
    pub played: u64,
    /// Its scripts refused a move: broken, so never called dead.
    pub broken: bool,
}

/// Offers below this say nothing about a card's pick rate.
pub const MIN_OFFERS: u64 = 30;
/// Picked less often than this when offered: dead.
pub const DEAD_PICK: f64 = 0.05;
/// Picked at least this often when offered: dominant.
pub const DOMINANT_PICK: f64 = 0.9;

/// The length distribution.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Lengths {
    /// Mean moves per game.
    pub mean: f64,
    /// The shortest game.
    pub min: u32,
    /// 10th percentile (nearest rank).
    pub p10: u32,
    /// Median (nearest rank).
    pub median: u32,
    /// 90th percentile.
    pub p90: u32,
    /// The longest game.
    pub max: u32,
}

/// The metrics.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Quality {
    /// Games.
    pub games: u64,
    /// How long games are, in moves.
    pub length: Lengths,
    /// Mean lead changes per game.
    pub lead_changes: f64,
    /// Share of games with at least one lead change.
    pub lead_change_games: f64,
    /// Share of games the half-time leader lost (of the won games led at half-time).
    pub comebacks: f64,
    /// Mean share of a won game played before the winner led for good: 0 the winner led
    /// from the first move, near 1 the game was decided at the end.
    pub decided_at: f64,
    /// Won games by that share, in tenths (`[0, 0.1)`, … `[0.9, 1]`).
    pub decided_histogram: [u64; DECIDED_BUCKETS],
    /// Share of drawn games.
    pub draws: f64,
    /// The first seat's share of the points (draws half), with its 95 % Wilson interval.
    pub first_seat: f64,
    /// That interval.
    pub first_seat_ci95: [f64; 2],
    /// Cards offered at least 30 times and picked less than 5 % of the time (broken
    /// cards are not dead: see simulate's `broken`).
    pub dead_cards: Vec<String>,
    /// Cards offered at least 30 times and picked at least 90 % of the time.
    pub dominant_cards: Vec<String>,
}

/// The metrics of `totals`, with `cards` for dead and dominant cards.
#[must_use]
#[allow(clippy::cast_precision_loss)]
pub fn metrics(totals: &QualityTotals, cards: &[CardUse]) -> Quality {
    let t = totals;
    let share = |a: u64, b: u64| if b == 0 { 0.0 } else { a as f64 / b as f64 };
    let rank = |p: u64| nearest_rank(&t.lengths, t.games, p);
    let moves: u64 = t.lengths.iter().map(|(k, v)| u64::from(*k) * v).sum();
    let changes: u64 = t.lead_changes.iter().map(|(k, v)| u64::from(*k) * v).sum();
    let changed: u64 = t.lead_changes.range(1..).map(|(_, v)| v).sum();
    let first = share(2 * t.first_seat_wins + t.draws, 2 * t.games);
    let pick = |c: &CardUse| share(c.played, c.offered);
    let enough = |c: &&CardUse| c.offered >= MIN_OFFERS;
    Quality {
        games: t.games,
        length: Lengths {
            mean: share(moves, t.games),
            min: t.lengths.keys().next().copied().unwrap_or(0),
            p10: rank(10),
            median: rank(50),
            p90: rank(90),
            max: t.lengths.keys().next_back().copied().unwrap_or(0),
        },
        lead_changes: share(changes, t.games),
        lead_change_games: share(changed, t.games),
        comebacks: share(t.comebacks, t.halftime_led),
        decided_at: share(t.decided_sum, t.won * SCALE),
        decided_histogram: t.decided,
        draws: share(t.draws, t.games),
        first_seat: first,
        first_seat_ci95: wilson(first, t.games as f64),
        dead_cards: cards
            .iter()
            .filter(enough)
            .filter(|c| !c.broken && pick(c) < DEAD_PICK)
            .map(|c| c.id.clone())
            .collect(),
        dominant_cards: cards
            .iter()
            .filter(enough)
            .filter(|c| pick(c) >= DOMINANT_PICK)
            .map(|c| c.id.clone())
            .collect(),
    }
}

/// The 95 % Wilson score interval of a proportion `p` over `n` trials.
#[must_use]
pub fn wilson(p: f64, n: f64) -> [f64; 2] {
    if n <= 0.0 {
        return [0.0, 1.0];
    }
    let z = 1.959_964;
    let z2 = z * z;
    let centre = (p + z2 / (2.0 * n)) / (1.0 + z2 / n);
    let half = z * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt() / (1.0 + z2 / n);
    [(centre - half).max(0.0), (centre + half).min(1.0)]
}

/// The nearest-rank `p`th percentile of a histogram holding `n` values.
fn nearest_rank(histogram: &BTreeMap<u32, u64>, n: u64, p: u64) -> u32 {
    if n == 0 {
        return 0;
    }
    let rank = (p * n).div_ceil(100).max(1);
    let mut seen = 0;
    for (k, v) in histogram {
        seen += v;
        if seen >= rank {
            return *k;
        }
    }
    histogram.keys().next_back().copied().unwrap_or(0)
}

impl Quality {
    /// The metrics as lines of text, for `simulate`'s report.
    #[must_use]
    pub fn lines(&self) -> Vec<String> {
        let pct = |x: f64| format!("{:.1}%", 100.0 * x);
        let list = |v: &[String]| {
            if v.is_empty() {
                "none".to_string()
            } else {
                v.join(", ")
            }
        };
        let l = &self.length;
        vec![
            format!(
                "game length: mean {:.1} moves, median {} (10% {}, 90% {}; {} to {})",
                l.mean, l.median, l.p10, l.p90, l.min, l.max
            ),
            format!(
                "lead changes: {:.2} a game, in {} of games; comebacks (the half-time leader lost): {}",
                self.lead_changes,
                pct(self.lead_change_games),
                pct(self.comebacks)
            ),
            format!(
                "decisiveness: the winner led for good after {} of the game on average; draws {}",
                pct(self.decided_at),
                pct(self.draws)
            ),
            format!(
                "first seat: {} of the points (95% CI {} to {})",
                pct(self.first_seat),
                pct(self.first_seat_ci95[0]),
                pct(self.first_seat_ci95[1])
            ),
            format!(
                "dead cards (picked < 5%): {}; dominant cards (picked >= 90%): {}",
                list(&self.dead_cards),
                list(&self.dominant_cards)
            ),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn game(leads: &[i64], first_seat_won: Option<bool>) -> GameTrace {
        GameTrace {
            leads: leads.to_vec(),
            first_seat_won,
        }
    }

    #[test]
    fn lead_changes_ignore_ties() {
        assert_eq!(lead_changes(&[]), 0);
        assert_eq!(lead_changes(&[0, 1, 0, 2, 3]), 0);
        assert_eq!(lead_changes(&[1, -1, 0, -2, 5]), 2);
        assert_eq!(lead_changes(&[-1, 1, -1, 1]), 3);
    }

    /// Hand-made games and the figures docs/ai.md's definitions give them.
    #[test]
    fn metrics_of_known_games() {
        let mut t = QualityTotals::default();
        // Seat 1 leads throughout and wins: no change, decided from the start.
        t.add(&game(&[1, 2, 3, 4], Some(true)));
        // Seat 2 leads at half-time, seat 1 comes back and wins: a comeback, one change
        // (at move 3), decided after 2 of 4 moves.
        t.add(&game(&[-1, -2, 1, 2], Some(true)));
        // A draw, level at the end.
        t.add(&game(&[1, 0, -1, 0, 0, 0], None));
        let cards = [
            CardUse {
                id: "dull".into(),
                offered: 100,
                played: 2,
                broken: false,
            },
            CardUse {
                id: "must".into(),
                offered: 40,
                played: 39,
                broken: false,
            },
            CardUse {
                id: "rare".into(),
                offered: 10,
                played: 0,
                broken: false,
            },
        ];
        let q = metrics(&t, &cards);
        assert_eq!(q.games, 3);
        assert_eq!(
            q.length,
            Lengths {
                mean: 14.0 / 3.0,
                min: 4,
                p10: 4,
                median: 4,
                p90: 6,
                max: 6
            }
        );
        assert!((q.lead_changes - 2.0 / 3.0).abs() < 1e-12);
        assert!((q.lead_change_games - 2.0 / 3.0).abs() < 1e-12);
        assert!((q.comebacks - 0.5).abs() < 1e-12);
        assert!((q.decided_at - 0.25).abs() < 1e-12);
        assert_eq!(q.decided_histogram[0] + q.decided_histogram[5], 2);
        assert!((q.draws - 1.0 / 3.0).abs() < 1e-12);
        assert!((q.first_seat - 5.0 / 6.0).abs() < 1e-12);
        assert_eq!(q.dead_cards, ["dull"]);
        assert_eq!(q.dominant_cards, ["must"]);
    }

    /// Parts merge into exactly the sums of the whole, in any order.
    #[test]
    fn totals_merge_exactly() {
        let games = [
            game(&[1, -1, 2], Some(true)),
            game(&[-3, -2, -1], Some(false)),
            game(&[0, 0], None),
            game(&[1, 1, -1, -1, 1], Some(true)),
        ];
        let mut whole = QualityTotals::default();
        let (mut even, mut odd) = (QualityTotals::default(), QualityTotals::default());
        for (i, g) in games.iter().enumerate() {
            whole.add(g);
            if i % 2 == 0 { &mut even } else { &mut odd }.add(g);
        }
        let mut merged = odd.clone();
        merged.merge(&even);
        assert_eq!(merged, whole);
        even.merge(&odd);
        assert_eq!(even, whole);
    }
}
