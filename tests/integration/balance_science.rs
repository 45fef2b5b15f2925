//! Balance science: sequential paired tests that stop when the verdict is known, and
//! their saving against the fixed-size test at the same error rates.

use tokensmith::ai::balance::{self, Test, Verdict};
use tokensmith::ai::sequential::{Design, MIN_PAIRS, Side};
use tokensmith::ai::simulate::DeckChoice;
use tokensmith::ai::{Level, Options};
use tokensmith::rules::Catalog;

use crate::support::{TempPacks, root, tokensmith};

/// A pack on top of base with plain cards (no ability, the default token type) whose
/// fair values are known by construction: `plain_four` and `plain_nine` are `plain_two`
/// with its value raised. (In base, a bigger plain token is not always better: with
/// greedy, 4 does worse than 2 in the starter deck, 6 about as well, 8 and more clearly
/// better.)
pub const PROBE: [(&str, &str); 2] = [
    (
        "probe/pack.yaml",
        "id: probe\nname: Probe\nversion: 1.0.0\nrequires:\n  - { id: base, version: \"^1\" }\n",
    ),
    (
        "probe/content.yaml",
        "cards:\n  - id: plain_two\n    value: 2\n  - id: plain_three\n    value: 3\n  - id: plain_four\n    value: 4\n  - id: plain_nine\n    value: 9\n",
    ),
];

/// Base and the probe pack, loaded.
pub fn probe_catalog() -> (TempPacks, Catalog) {
    let packs = TempPacks::new(&PROBE);
    let loaded = tokensmith::script::load(&probe_options(&packs));
    assert!(loaded.diagnostics.is_empty(), "{:#?}", loaded.diagnostics);
    let catalog = loaded.catalog.expect("loads");
    (packs, catalog)
}

/// The first `n` decks of the content.
fn decks(catalog: &Catalog, n: usize) -> Vec<DeckChoice> {
    catalog
        .decks()
        .iter()
        .take(n)
        .map(|d| DeckChoice {
            id: d.meta.id.clone(),
            stacks: d.stacks.clone(),
            per_game: false,
        })
        .collect()
}

fn test(catalog: &Catalog, card: &str, control: Option<&str>, games: u32, seed: u64) -> Test {
    let id = |n: &str| catalog.card_named(n).expect("card");
    let decks = decks(catalog, 2);
    Test {
        card: id(card),
        control: control.map(id),
        decks: decks.clone(),
        opponents: decks,
        games,
        level: Level::Greedy,
        seed,
        threads: 2,
        options: Options::default(),
    }
}

/// A clearly strong card (a plain card of value 9 against one of value 2) is
/// called strong by the sequential test long before its cap and in fewer pairs than the
/// fixed-size test at the same error rates needs; the run is reproducible.
#[test]
fn a_sequential_test_calls_a_clearly_strong_card_strong_early() {
    let (_packs, catalog) = probe_catalog();
    let design = Design::new(0.05, 0.05, 0.05).expect("design");
    let t = test(&catalog, "plain_nine", Some("plain_two"), 400, 3);
    let r = balance::run_sequential(&catalog, &t, &design, &|| {}).expect("runs");
    let s = r.sequential.as_ref().expect("a sequential report");
    assert_eq!(r.verdict, Verdict::Strong, "{r:?}");
    assert!(s.decided && s.strong == Side::Effect, "{s:?}");
    assert!(s.llr_strong >= s.bounds[1], "{s:?}");
    assert!(r.pairs < s.cap_pairs / 2, "{} of {}", r.pairs, s.cap_pairs);
    assert!(
        u64::from(r.pairs) < s.fixed_pairs,
        "{} vs {}",
        r.pairs,
        s.fixed_pairs
    );
    assert_eq!(r.decks.iter().map(|d| d.games).sum::<u32>(), r.pairs);
    // The same seed, the same games and the same stop, whatever the thread count.
    let again = balance::run_sequential(
        &catalog,
        &Test {
            threads: 1,
            ..t.clone()
        },
        &design,
        &|| {},
    )
    .expect("runs");
    assert_eq!((again.pairs, again.effect), (r.pairs, r.effect));
    // The other way round, it is weak.
    let weak = test(&catalog, "plain_two", Some("plain_nine"), 400, 3);
    let w = balance::run_sequential(&catalog, &weak, &design, &|| {}).expect("runs");
    assert_eq!(w.verdict, Verdict::Weak, "{w:?}");
}

/// A card against an identical control: every pair is a tie, both one-sided tests
/// accept "no effect" at the first look, and the test stops there.
#[test]
fn a_sequential_test_of_a_card_without_effect_stops_at_the_first_look() {
    let (_packs, catalog) = probe_catalog();
    let design = Design::new(0.05, 0.05, 0.05).expect("design");
    let t = test(&catalog, "plain_two", None, 400, 1);
    let r = balance::run_sequential(&catalog, &t, &design, &|| {}).expect("runs");
    let s = r.sequential.as_ref().expect("a sequential report");
    assert_eq!(r.verdict, Verdict::WithinNoise);
    assert_eq!((s.strong, s.weak), (Side::Null, Side::Null), "{s:?}");
    assert!(
        u64::from(r.pairs) >= MIN_PAIRS && r.pairs <= 2 * 10 * 2,
        "{}",
        r.pairs
    );
    assert_eq!(
        s.rounds,
        u32::try_from(MIN_PAIRS.div_ceil(20)).expect("small")
    );
}

/// At the cap the test stops undecided and says so; the verdict is then the interval's.
#[test]
fn a_sequential_test_stopped_by_its_cap_says_it_is_undecided() {
    let (_packs, catalog) = probe_catalog();
    // An effect of 1 point cannot be told from 3 in 40 pairs.
    let design = Design::new(0.01, 0.01, 0.01).expect("design");
    let t = test(&catalog, "plain_three", Some("plain_two"), 20, 2);
    let r = balance::run_sequential(&catalog, &t, &design, &|| {}).expect("runs");
    let s = r.sequential.as_ref().expect("a sequential report");
    assert!(!s.decided, "{s:?}");
    assert_eq!((r.pairs, s.cap_pairs), (40, 40));
    let fixed = if r.ci95[0] > 0.0 {
        Verdict::Strong
    } else if r.ci95[1] < 0.0 {
        Verdict::Weak
    } else {
        Verdict::WithinNoise
    };
    assert_eq!(r.verdict, fixed);
}

/// The command line: `--sequential` with its error rates and effect, in text and JSON;
/// out-of-range rates are refused with what to give.
#[test]
fn balance_sequential_on_the_command_line() {
    let packs = TempPacks::new(&PROBE);
    let mods = packs.path().to_str().expect("utf-8").to_string();
    let base = [
        "--mods",
        mods.as_str(),
        "--packs",
        "probe",
        "balance",
        "plain_nine",
        "--control",
        "plain_two",
        "--deck",
        "starter",
        "--deck",
        "shifters",
        "--games",
        "300",
        "--sequential",
        "--threads",
        "2",
    ];
    let out = tokensmith(base).output().expect("runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.starts_with("plain_nine: strong ("), "{text}");
    assert!(
        text.contains("sequential: decided after ")
            && text.contains("alpha 5%, beta 5%, effect 5 points")
            && text.contains("a fixed-size test at the same error rates needs"),
        "{text}"
    );
    let out = tokensmith(
        base.iter()
            .chain(&["--json", "--effect", "10", "--alpha", "0.01"]),
    )
    .output()
    .expect("runs");
    assert!(out.status.success());
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(json["verdict"], "strong");
    assert_eq!(json["sequential"]["decided"], true);
    assert_eq!(json["sequential"]["strong"], "effect");
    assert_eq!(json["sequential"]["effect"], 0.1);
    assert_eq!(json["sequential"]["alpha"], 0.01);
    let out = tokensmith(base.iter().chain(&["--beta", "0.7"]))
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--beta 0.7 is not an error rate"), "{err}");
    // Without --sequential, the error rates mean nothing and are refused.
    let out = tokensmith(["balance", "booster", "--alpha", "0.01"])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
}

/// The median of some figures.
fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n == 0 {
        0.0
    } else if n % 2 == 1 {
        v[n / 2]
    } else {
        f64::midpoint(v[n / 2 - 1], v[n / 2])
    }
}

/// The figures of docs/ai.md, "Games saved, measured": over 20 seeds, a clearly strong
/// card (`plain_nine` against `plain_two`, every base deck, greedy) tested sequentially
/// and with the fixed-size test at the same error rates (α = β = 5 %, δ = 5 points; its
/// size from a pilot run's spread). Run it with
/// `cargo test --test integration balance_science::measure -- --ignored --nocapture`.
#[test]
#[ignore = "a measurement of a few minutes; its figures are in docs/ai.md"]
fn measure_sequential_against_fixed() {
    let (_packs, catalog) = probe_catalog();
    let design = Design::new(0.05, 0.05, 0.05).expect("design");
    let all = decks(&catalog, catalog.decks().len());
    let base = Test {
        decks: all.clone(),
        opponents: all.clone(),
        threads: 2,
        ..test(&catalog, "plain_nine", Some("plain_two"), 100, 1000)
    };
    let pilot = balance::run(&catalog, &base, &|| {}).expect("runs");
    let half = (pilot.ci95[1] - pilot.ci95[0]) / 2.0;
    let sd = half / 1.959_964 * f64::from(pilot.pairs).sqrt();
    let fixed_pairs = design.fixed_pairs(sd);
    let per_deck = u32::try_from(fixed_pairs.div_ceil(all.len() as u64)).expect("small");
    let z = tokensmith::ai::sequential::normal_quantile(0.95);
    let (mut seq_pairs, mut seq_secs, mut fix_pairs, mut fix_secs, mut ratios) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for seed in 1..=20 {
        let started = std::time::Instant::now();
        let t = Test {
            seed,
            games: 10 * per_deck,
            ..base.clone()
        };
        let s = balance::run_sequential(&catalog, &t, &design, &|| {}).expect("runs");
        seq_secs.push(started.elapsed().as_secs_f64());
        assert_eq!(s.verdict, Verdict::Strong, "seed {seed}: {s:?}");
        let started = std::time::Instant::now();
        let f = balance::run(
            &catalog,
            &Test {
                seed,
                games: per_deck,
                ..base.clone()
            },
            &|| {},
        )
        .expect("runs");
        fix_secs.push(started.elapsed().as_secs_f64());
        // The fixed test's one-sided verdict at α.
        let se = (f.ci95[1] - f.ci95[0]) / 2.0 / 1.959_964;
        assert!(f.effect - z * se > 0.0, "seed {seed}: {f:?}");
        seq_pairs.push(f64::from(s.pairs));
        fix_pairs.push(f64::from(f.pairs));
        ratios.push(f64::from(s.pairs) / f64::from(f.pairs));
    }
    let (sp, fp, ss, fs, ratio) = (
        median(seq_pairs.clone()),
        median(fix_pairs),
        median(seq_secs),
        median(fix_secs),
        median(ratios.clone()),
    );
    println!(
        "pilot effect {:+.1} points, sd {sd:.3}; fixed-size test: {fixed_pairs} pairs ({per_deck} games per deck)",
        100.0 * pilot.effect
    );
    println!(
        "sequential pairs per seed: {seq_pairs:?}\nmedian pairs: sequential {sp}, fixed {fp}; ratio median {ratio:.3} (min {:.3}, max {:.3})",
        ratios.iter().copied().fold(f64::INFINITY, f64::min),
        ratios.iter().copied().fold(0.0, f64::max)
    );
    println!("median seconds per verdict: sequential {ss:.2}, fixed {fs:.2} (2 threads)");
    assert!(ratio < 0.5, "{ratio}");
}

/// Game quality in `simulate`: the metrics agree with the report's own figures where
/// they overlap, the shards of a run merge into exactly the whole run's metrics, and the
/// text output shows them.
#[test]
fn simulate_reports_game_quality_that_merges_across_shards() {
    use tokensmith::ai::simulate::{self, Config};
    let catalog = crate::support::base_catalog();
    let d = decks(&catalog, 3);
    let config = Config {
        deck_a: d[0].clone(),
        decks_b: d[1..].to_vec(),
        ai_a: Level::Greedy,
        ai_b: Level::Random,
        games: 40,
        seed: 9,
        threads: 2,
        options: Options::default(),
        max_moves: simulate::MAX_MOVES,
        shard: None,
    };
    let whole = simulate::simulate(&catalog, &config, &|| {});
    let q = &whole.quality;
    assert_eq!(q.games, 40);
    assert!((q.length.mean - whole.avg_moves).abs() < 1e-9, "{q:?}");
    assert!((q.first_seat - whole.first_seat_win_rate).abs() < 1e-9);
    assert!((q.draws - f64::from(whole.draws) / 40.0).abs() < 1e-9);
    assert!(q.length.min <= q.length.p10 && q.length.p10 <= q.length.median);
    assert!(q.length.median <= q.length.p90 && q.length.p90 <= q.length.max);
    assert_eq!(
        q.decided_histogram.iter().sum::<u64>(),
        40 - u64::from(whole.draws)
    );
    assert!((0.0..=1.0).contains(&q.comebacks) && (0.0..=1.0).contains(&q.decided_at));
    let dead: Vec<&str> = whole
        .cards
        .iter()
        .filter(|c| c.dead)
        .map(|c| c.id.as_str())
        .collect();
    assert_eq!(q.dead_cards, dead);
    // Greedy against random: the lead changes sometimes, and not in every game.
    assert!(q.lead_changes > 0.0 && q.lead_change_games < 1.0, "{q:?}");
    let parts: Vec<_> = [2, 1]
        .into_iter()
        .map(|k| {
            let mut s = config.clone();
            s.shard = Some((k, 2));
            simulate::simulate(&catalog, &s, &|| {}).totals
        })
        .collect();
    let merged = simulate::merge(&parts).expect("merge");
    assert_eq!(merged.quality, whole.quality);
    assert_eq!(merged.totals.quality, whole.totals.quality);
    let out = tokensmith([
        "--packs",
        "base",
        "simulate",
        "--deck-a",
        "starter",
        "--deck-b",
        "shifters",
        "--ai-b",
        "random",
        "--games",
        "20",
        "--threads",
        "2",
    ])
    .output()
    .expect("runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    for part in [
        "game quality:\n  game length: mean ",
        "  lead changes: ",
        "comebacks (the half-time leader lost): ",
        "  decisiveness: the winner led for good after ",
        "  first seat: ",
        "  dead cards (picked < 5%): ",
    ] {
        assert!(text.contains(part), "{part}: {text}");
    }
}

/// The load options of base and the probe pack.
pub fn probe_options(packs: &TempPacks) -> tokensmith::content::LoadOptions {
    tokensmith::content::LoadOptions {
        folders: vec![
            tokensmith::content::PackFolder {
                path: root().join("content"),
                required: true,
            },
            tokensmith::content::PackFolder {
                path: packs.path().to_path_buf(),
                required: true,
            },
        ],
        only: None,
        rules_patch: None,
        order: Vec::new(),
    }
}

/// `--tune value` on a card whose fair value is known by construction: `plain_four` is
/// `plain_two` with its value raised, so against `plain_two` it is fair at 2. Both
/// levels find it within ±1, with the curve, each value a patch loaded through the
/// content loader; too strong at every value of a range is said as such.
#[test]
fn tuning_a_raised_copy_finds_the_original_value() {
    use tokensmith::ai::tune::{self, Field, Job};
    let (packs, catalog) = probe_catalog();
    let options = probe_options(&packs);
    let card = catalog.card_named("plain_four").expect("card");
    let field = Field::parse("value").expect("field");
    let make = |v: i64| tune::patched(&options, &catalog, card, &field, v);
    let patched = make(7).expect("patches");
    assert_eq!(patched.card(card).value, 7);
    assert_eq!(patched.cards().len(), catalog.cards().len());
    let job = Job {
        test: test(&catalog, "plain_four", Some("plain_two"), 200, 5),
        field: field.clone(),
        range: [1, 10],
        design: Design::new(0.05, 0.05, 0.05).expect("design"),
        levels: vec![Level::Greedy, Level::Random],
    };
    let r = tune::tune(&catalog, &job, &make, &|| {}).expect("tunes");
    assert_eq!(
        (r.current, r.range, r.field.as_str()),
        (Some(4), [1, 10], "value")
    );
    assert_eq!(r.levels.len(), 2);
    for t in &r.levels {
        let v = t.value.unwrap_or_else(|| panic!("{t:?}"));
        assert!((1..=3).contains(&v), "{}: {v}: {t:?}", t.level);
        let [a, b] = t.interval.expect("an interval");
        assert!(a <= v && v <= b && a >= 1 && b <= 10, "{t:?}");
        let values: Vec<i64> = t.curve.iter().map(|p| p.value).collect();
        assert!(
            values.windows(2).all(|w| w[0] < w[1]) && values.contains(&1) && values.contains(&10)
        );
        assert_eq!(
            t.pairs,
            t.curve.iter().map(|p| u64::from(p.pairs)).sum::<u64>()
        );
        // Five times the original value is clearly too strong.
        let end = t.curve.last().expect("points");
        assert_eq!((end.verdict, end.decided), (Verdict::Strong, true));
    }
    // Too strong at every value of 9..12: no fair value, and only the ends are played.
    let strong = tune::tune(
        &catalog,
        &Job {
            range: [9, 12],
            levels: vec![Level::Greedy],
            ..job
        },
        &make,
        &|| {},
    )
    .expect("tunes");
    let t = &strong.levels[0];
    assert_eq!((t.value, t.curve.len()), (None, 2), "{t:?}");
    assert_eq!(
        t.no_fair_value.as_deref(),
        Some("too strong at every value from 9 to 12")
    );
}

/// The command line: `--tune` in text and JSON, and its refusals.
#[test]
fn balance_tune_on_the_command_line() {
    let packs = TempPacks::new(&PROBE);
    let mods = packs.path().to_str().expect("utf-8").to_string();
    let args = |extra: &[&str]| {
        let mut a = vec![
            "--mods",
            mods.as_str(),
            "--packs",
            "probe",
            "balance",
            "plain_four",
            "--control",
            "plain_two",
            "--deck",
            "starter",
            "--deck",
            "shifters",
            "--threads",
            "2",
        ];
        a.extend_from_slice(extra);
        a.into_iter().map(String::from).collect::<Vec<_>>()
    };
    let out = tokensmith(args(&[
        "--tune",
        "value",
        "--range",
        "1..6",
        "--check-ai",
        "random",
    ]))
    .output()
    .expect("runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.starts_with(
            "plain_four value (now 4): searched 1 to 6 against plain_two\ngreedy: fair at "
        ),
        "{text}"
    );
    assert!(text.contains("\nrandom: "), "{text}");
    assert!(
        text.contains("   value   effect            95% CI  pairs  verdict"),
        "{text}"
    );
    let out = tokensmith(args(&[
        "--tune", "value", "--range", "1..6", "--json", "--ai", "random",
    ]))
    .output()
    .expect("runs");
    assert!(out.status.success());
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(json["card"], "plain_four");
    assert_eq!(json["levels"][0]["level"], "random");
    assert_eq!(json["levels"][1]["level"], "easy");
    let curve = json["levels"][0]["curve"].as_array().expect("a curve");
    assert!(curve.len() >= 2 && curve[0]["value"] == 1, "{json}");
    assert_eq!(json["range"], serde_json::json!([1, 6]));
    assert!(json["levels"][0]["pairs"].as_u64().expect("pairs") > 0);
    for (extra, says) in [
        (
            vec!["--tune", "ability.amount"],
            "the card 'plain_four' has no ability",
        ),
        (
            vec!["--tune", "value", "--range", "5..2"],
            "--range 5..2: give two whole numbers",
        ),
        (
            vec!["--tune", "area.size"],
            "--tune area.size: give a field of the card",
        ),
        (
            vec!["--tune", "value", "--range", "0..3"],
            "the patch setting value to 0 does not load: ",
        ),
    ] {
        let out = tokensmith(args(&extra)).output().expect("runs");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{extra:?}: {err}");
        assert!(err.contains(says), "{extra:?}: {err}");
    }
}
