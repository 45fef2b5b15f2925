//! What value makes a card fair? `balance CARD --tune FIELD` (docs/ai.md, "Tuning a
//! card"): each value tried is a patch of the card (or of its ability or token type),
//! loaded through the content loader like any pack's patch, and judged by a sequential
//! paired test against a fixed control (src/ai/balance.rs, src/ai/sequential.rs).
//!
//! The search assumes the card's effect moves one way with the field. It tests the two
//! ends of the range, then bisects between the last value found too weak and the first
//! found too strong; a value whose test accepts "no effect" is fair, and its neighbours
//! are tested until a too-strong and a too-weak value bound the fair ones. Each point is
//! a sequential test, so values far from fair cost few games and the games go to the
//! values near it.
//!
//! The search runs at the main AI level and, when it differs, a check level; the report says
//! when their fair values disagree.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Serialize;

use super::balance::{self, BalanceError, Test, Verdict};
use super::sequential::Design;
use crate::content::{LoadOptions, PackFolder};
use crate::rules::{CardId, Catalog};

/// The part of the card a field belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Part {
    /// The card itself (`value`).
    Card,
    /// Its ability (`ability.amount`).
    Ability,
    /// Its token type (`token.income_multiplier`).
    Token,
}

/// A whole-number field to tune.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Field {
    /// Whose field.
    pub part: Part,
    /// The key as a pack writes it.
    pub key: String,
}

/// Why a tuning cannot run.
#[derive(Debug, thiserror::Error)]
pub enum TuneError {
    /// A field name that is not `KEY`, `ability.KEY` or `token.KEY`.
    #[error(
        "--tune {0}: give a field of the card (`value`), of its ability (`ability.amount`) or of its token type (`token.income_multiplier`)"
    )]
    Field(String),
    /// The card has no ability.
    #[error("--tune {0}: the card '{1}' has no ability")]
    NoAbility(String, String),
    /// The range is empty or not known.
    #[error("{0}")]
    Range(String),
    /// The patch does not load.
    #[error("the patch setting {field} to {value} does not load: {why}")]
    Patch {
        /// The field.
        field: String,
        /// The value.
        value: i64,
        /// The loader's diagnostics.
        why: String,
    },
    /// Writing the patch failed.
    #[error("cannot write the patch in a temporary folder: {0}")]
    Io(#[from] std::io::Error),
    /// The test could not run.
    #[error(transparent)]
    Balance(#[from] BalanceError),
}

impl Field {
    /// `value`, `ability.KEY` or `token.KEY`.
    pub fn parse(text: &str) -> Result<Field, TuneError> {
        let ok = |k: &str| {
            !k.is_empty()
                && k.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        };
        let (part, key) = match text.split_once('.') {
            None => (Part::Card, text),
            Some(("ability", k)) => (Part::Ability, k),
            Some(("token", k)) => (Part::Token, k),
            Some(_) => return Err(TuneError::Field(text.into())),
        };
        if !ok(key) || key == "id" {
            return Err(TuneError::Field(text.into()));
        }
        Ok(Field {
            part,
            key: key.into(),
        })
    }

    /// As written on the command line.
    #[must_use]
    pub fn name(&self) -> String {
        match self.part {
            Part::Card => self.key.clone(),
            Part::Ability => format!("ability.{}", self.key),
            Part::Token => format!("token.{}", self.key),
        }
    }

    /// Whether `card` has the part the field belongs to.
    pub fn check(&self, catalog: &Catalog, card: CardId) -> Result<(), TuneError> {
        let c = catalog.card(card);
        if self.part == Part::Ability && c.ability.is_none() {
            return Err(TuneError::NoAbility(self.name(), c.meta.id.clone()));
        }
        Ok(())
    }

    /// The values searched when none are given, from the field's value `current`: from
    /// the least a card's value may be (1; 0 for other fields) to twice it plus 2.
    #[must_use]
    pub fn default_range(&self, current: i64) -> [i64; 2] {
        let least = i64::from(self.part == Part::Card && self.key == "value");
        [least.min(current), 2 * current.max(0) + 2]
    }

    /// The field's value in `catalog`, where the catalog keeps it.
    #[must_use]
    pub fn current(&self, catalog: &Catalog, card: CardId) -> Option<i64> {
        let c = catalog.card(card);
        match (self.part, self.key.as_str()) {
            (Part::Card, "value") => Some(i64::from(c.value)),
            (Part::Token, "income_multiplier") => {
                Some(i64::from(catalog.token_type(c.token).income_multiplier))
            }
            _ => None,
        }
    }
}

/// The pack a patch is written as.
pub const PATCH_PACK: &str = "tuning";

/// `catalog` loaded again with `field` of `card` set to `value`: a pack `tuning`
/// (requiring the patched entry's pack) patching the entry, loaded through `options` and
/// the content loader, so the value is checked as any pack's patch is.
pub fn patched(
    options: &LoadOptions,
    catalog: &Catalog,
    card: CardId,
    field: &Field,
    value: i64,
) -> Result<Catalog, TuneError> {
    let c = catalog.card(card);
    let (section, meta) = match field.part {
        Part::Card => ("cards", &c.meta),
        Part::Ability => {
            let a = c
                .ability
                .ok_or_else(|| TuneError::NoAbility(field.name(), c.meta.id.clone()))?;
            ("abilities", &catalog.ability(a).meta)
        }
        Part::Token => ("token_types", &catalog.token_type(c.token).meta),
    };
    let dir = tempfile::tempdir()?;
    write_patch(
        dir.path(),
        section,
        &meta.origin.pack,
        &meta.id,
        &field.key,
        value,
    )?;
    let mut options = options.clone();
    options.folders.push(PackFolder {
        path: dir.path().to_path_buf(),
        required: true,
    });
    if let Some(only) = &mut options.only {
        only.push(PATCH_PACK.into());
    }
    let loaded = crate::script::load(&options);
    let errors: Vec<String> = loaded
        .diagnostics
        .iter()
        .filter(|d| d.path.starts_with(dir.path()))
        .map(|d| d.message.clone())
        .collect();
    match loaded.catalog {
        Some(out) if errors.is_empty() && out.cards().len() == catalog.cards().len() => Ok(out),
        _ => Err(TuneError::Patch {
            field: field.name(),
            value,
            why: if errors.is_empty() {
                "the packs have errors".into()
            } else {
                errors.join("; ")
            },
        }),
    }
}

fn write_patch(
    dir: &Path,
    section: &str,
    pack: &str,
    id: &str,
    key: &str,
    value: i64,
) -> std::io::Result<()> {
    let root = dir.join(PATCH_PACK);
    std::fs::create_dir_all(&root)?;
    std::fs::write(
        root.join("pack.yaml"),
        format!(
            "id: {PATCH_PACK}\nname: Tuning\nversion: 1.0.0\nrequires:\n  - {{ id: {} }}\n",
            serde_json::Value::from(pack)
        ),
    )?;
    std::fs::write(
        root.join("content.yaml"),
        format!(
            "{section}:\n  - id: {}\n    {key}: {value}\n",
            serde_json::Value::from(format!("{pack}:{id}"))
        ),
    )
}

/// One value tried.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Point {
    /// The field's value.
    pub value: i64,
    /// The card's effect against the control (win-rate points as a share).
    pub effect: f64,
    /// Its 95 % interval.
    pub ci95: [f64; 2],
    /// The sequential test's verdict.
    pub verdict: Verdict,
    /// Whether the test decided before its cap.
    pub decided: bool,
    /// Paired games played.
    pub pairs: u32,
}

/// What a tuning found at one AI level.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Tuning {
    /// The level.
    pub level: String,
    /// The fair value: of the values found within noise, the one with the smallest
    /// effect. `None`: no value in the range is fair.
    pub value: Option<i64>,
    /// The fair values' range: from the lowest to the highest value found within noise.
    pub interval: Option<[i64; 2]>,
    /// Why there is no fair value, in words.
    pub no_fair_value: Option<String>,
    /// Every value tried, in order of value: the curve of effect against value.
    pub curve: Vec<Point>,
    /// Paired games spent (each pair is two games).
    pub pairs: u64,
    /// Wall time, seconds.
    pub seconds: f64,
}

/// The whole answer.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TuneReport {
    /// The card.
    pub card: String,
    /// The field.
    pub field: String,
    /// Its value as loaded, when the catalog keeps it.
    pub current: Option<i64>,
    /// The range searched.
    pub range: [i64; 2],
    /// The control the card is measured against.
    pub control: String,
    /// One tuning per level.
    pub levels: Vec<Tuning>,
    /// The levels' fair values disagree: their ranges of fair values do not overlap (or
    /// one has a fair value and the other none).
    pub levels_disagree: bool,
}

/// What to tune.
#[derive(Clone, Debug)]
pub struct Job {
    /// The test at each value (its `level` is replaced by each of `levels`, its `games` is
    /// the cap of each value's sequential test).
    pub test: Test,
    /// The field.
    pub field: Field,
    /// The values tried, lowest first.
    pub range: [i64; 2],
    /// The sequential tests' design.
    pub design: Design,
    /// The levels.
    pub levels: Vec<super::Level>,
}

/// Tune `job`, making each value's content with `make` (usually [`patched`]). `tick`
/// after each game.
pub fn tune(
    catalog: &Catalog,
    job: &Job,
    make: &dyn Fn(i64) -> Result<Catalog, TuneError>,
    tick: &(dyn Fn() + Sync),
) -> Result<TuneReport, TuneError> {
    let watch = Watch {
        tick,
        point: &|_, _| {},
        stop: &std::sync::atomic::AtomicBool::new(false),
    };
    tune_watched(catalog, job, make, &watch)
}

/// How a screen follows a tuning: each game, each value judged, and a flag that stops it.
pub struct Watch<'a> {
    /// After each game.
    pub tick: &'a (dyn Fn() + Sync),
    /// After each value is judged: the level's name and the point (the curve so far).
    pub point: &'a dyn Fn(&str, &Point),
    /// Set to stop: the tuning ends with [`BalanceError::Stopped`] at the end of the
    /// sequential round it is in.
    pub stop: &'a std::sync::atomic::AtomicBool,
}

/// [`tune`], followed by `watch`.
///
/// # Errors
/// As [`tune`], and [`BalanceError::Stopped`] once `watch.stop` is set.
pub fn tune_watched(
    catalog: &Catalog,
    job: &Job,
    make: &dyn Fn(i64) -> Result<Catalog, TuneError>,
    watch: &Watch<'_>,
) -> Result<TuneReport, TuneError> {
    let tick = watch.tick;
    let [lo, hi] = job.range;
    if lo >= hi {
        return Err(TuneError::Range(format!(
            "--range {lo}..{hi} is empty: give the lowest value, then a higher one"
        )));
    }
    let card = job.test.card;
    // The control stays what it is at the loaded value: a plain card of the card's value
    // as loaded, unless one is given.
    let original_value = catalog.card(card).value;
    let control_name = match job.test.control {
        Some(c) => catalog.card(c).meta.id.clone(),
        None => format!("a plain card of value {original_value}"),
    };
    let mut contents: BTreeMap<i64, Catalog> = BTreeMap::new();
    let mut levels = Vec::with_capacity(job.levels.len());
    for &level in &job.levels {
        let started = std::time::Instant::now();
        let mut curve: BTreeMap<i64, Point> = BTreeMap::new();
        let mut judge = |v: i64| -> Result<Verdict, TuneError> {
            if let Some(p) = curve.get(&v) {
                return Ok(p.verdict);
            }
            if let std::collections::btree_map::Entry::Vacant(e) = contents.entry(v) {
                e.insert(make(v)?);
            }
            let content = &contents[&v];
            let (content, control) = match job.test.control {
                Some(c) => (None, c),
                None => {
                    let (derived, id) = balance::with_plain_control_of(content, original_value)
                        .ok_or(BalanceError::NoControl("(no plain token type)".into()))?;
                    (Some(derived), id)
                }
            };
            let content = content.as_ref().unwrap_or(&contents[&v]);
            let test = Test {
                control: Some(control),
                level,
                ..job.test.clone()
            };
            let r = balance::run_sequential_until(content, &test, &job.design, tick, watch.stop)?;
            let decided = r.sequential.as_ref().is_some_and(|s| s.decided);
            let point = Point {
                value: v,
                effect: r.effect,
                ci95: r.ci95,
                verdict: r.verdict,
                decided,
                pairs: r.pairs,
            };
            (watch.point)(level.name(), &point);
            curve.insert(v, point);
            Ok(r.verdict)
        };
        search(lo, hi, &mut judge)?;
        let points: Vec<Point> = curve.into_values().collect();
        levels.push(summary(level, points, [lo, hi], started));
    }
    let levels_disagree = disagree(&levels);
    Ok(TuneReport {
        card: catalog.card(card).meta.id.clone(),
        field: job.field.name(),
        current: job.field.current(catalog, card),
        range: [lo, hi],
        control: control_name,
        levels,
        levels_disagree,
    })
}

/// The search over `lo..=hi` (see the module's doc).
fn search(
    lo: i64,
    hi: i64,
    judge: &mut dyn FnMut(i64) -> Result<Verdict, TuneError>,
) -> Result<(), TuneError> {
    let (at_lo, at_hi) = (judge(lo)?, judge(hi)?);
    // Which way the field makes the card stronger; with the ends alike there is no fair
    // value in between to find by bisection.
    let rising = match (at_lo, at_hi) {
        (Verdict::Weak, Verdict::Strong) => true,
        (Verdict::Strong, Verdict::Weak) => false,
        (Verdict::WithinNoise, _) | (_, Verdict::WithinNoise) => {
            let fair = if at_lo == Verdict::WithinNoise {
                lo
            } else {
                hi
            };
            return widen(fair, lo, hi, judge);
        }
        _ => return Ok(()),
    };
    // Invariant: `weak` is too weak, `strong` too strong.
    let (mut weak, mut strong) = if rising { (lo, hi) } else { (hi, lo) };
    while (strong - weak).abs() > 1 {
        let mid = weak + (strong - weak) / 2;
        match judge(mid)? {
            Verdict::Weak => weak = mid,
            Verdict::Strong => strong = mid,
            Verdict::WithinNoise => return widen(mid, lo, hi, judge),
        }
    }
    Ok(())
}

/// From a fair value, test its neighbours each way until a value is not fair (or the
/// range ends): the fair values' range.
fn widen(
    fair: i64,
    lo: i64,
    hi: i64,
    judge: &mut dyn FnMut(i64) -> Result<Verdict, TuneError>,
) -> Result<(), TuneError> {
    for step in [-1, 1] {
        let mut v = fair + step;
        while (lo..=hi).contains(&v) && judge(v)? == Verdict::WithinNoise {
            v += step;
        }
    }
    Ok(())
}

fn summary(
    level: super::Level,
    curve: Vec<Point>,
    range: [i64; 2],
    started: std::time::Instant,
) -> Tuning {
    let fair: Vec<&Point> = curve
        .iter()
        .filter(|p| p.verdict == Verdict::WithinNoise)
        .collect();
    let value = fair
        .iter()
        .min_by(|a, b| a.effect.abs().total_cmp(&b.effect.abs()))
        .map(|p| p.value);
    let interval = match (fair.first(), fair.last()) {
        (Some(a), Some(b)) => Some([a.value, b.value]),
        _ => None,
    };
    let no_fair_value = value.is_none().then(|| {
        let strong = curve.iter().all(|p| p.verdict == Verdict::Strong);
        let weak = curve.iter().all(|p| p.verdict == Verdict::Weak);
        let [lo, hi] = range;
        if strong {
            format!("too strong at every value from {lo} to {hi}")
        } else if weak {
            format!("too weak at every value from {lo} to {hi}")
        } else {
            "no value is fair: the card turns from too weak to too strong between two neighbouring values".into()
        }
    });
    Tuning {
        level: level.name().into(),
        value,
        interval,
        no_fair_value,
        pairs: curve.iter().map(|p| u64::from(p.pairs)).sum(),
        curve,
        seconds: started.elapsed().as_secs_f64(),
    }
}

/// Whether the levels' answers disagree.
fn disagree(levels: &[Tuning]) -> bool {
    levels
        .windows(2)
        .any(|w| match (w[0].interval, w[1].interval) {
            (Some(a), Some(b)) => a[1] < b[0] || b[1] < a[0],
            (None, None) => w[0].no_fair_value != w[1].no_fair_value,
            _ => true,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_parse_by_part() {
        assert_eq!(Field::parse("value").expect("ok").part, Part::Card);
        let f = Field::parse("ability.amount").expect("ok");
        assert_eq!(
            (f.part, f.key.as_str(), f.name()),
            (Part::Ability, "amount", "ability.amount".into())
        );
        assert_eq!(
            Field::parse("token.income_multiplier").expect("ok").part,
            Part::Token
        );
        for bad in ["", "id", "area.size", "ability.", "value: 3", "Value"] {
            assert!(Field::parse(bad).is_err(), "{bad}");
        }
    }

    /// The search on a known monotone curve: effect = (v − 7) points · 3; within 5
    /// points is fair, so 6, 7 and 8 are fair and everything else is decided.
    #[test]
    fn the_search_finds_the_fair_values_and_spends_little_far_from_them() {
        let verdict = |v: i64| match (v - 7) * 3 {
            e if e >= 5 => Verdict::Strong,
            e if e <= -5 => Verdict::Weak,
            _ => Verdict::WithinNoise,
        };
        for (lo, hi) in [(0, 40), (5, 9), (7, 100), (-50, 7)] {
            let mut tried = Vec::new();
            search(lo, hi, &mut |v| {
                tried.push(v);
                Ok(verdict(v))
            })
            .expect("runs");
            let fair: Vec<i64> = tried
                .iter()
                .copied()
                .filter(|&v| verdict(v) == Verdict::WithinNoise)
                .collect();
            assert!(
                fair.contains(&7) || (fair.contains(&6) && fair.contains(&8)),
                "{lo}..{hi}: {tried:?}"
            );
            assert!(tried.len() <= 12, "{tried:?}");
        }
        // Too strong everywhere: only the ends are tried.
        let mut tried = Vec::new();
        search(0, 10, &mut |v| {
            tried.push(v);
            Ok(Verdict::Strong)
        })
        .expect("runs");
        assert_eq!(tried, [0, 10]);
    }
}
