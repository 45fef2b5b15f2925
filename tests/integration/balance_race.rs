//! Racing variants: `balance CARD --variants FILE` ranks known variants in their order,
//! drops the clearly worse ones early, and refuses a bad or hostile variants file at its
//! place.

use std::path::Path;

use tokensmith::ai::race::{self, Entrant, RaceReport};
use tokensmith::ai::sequential::Design;
use tokensmith::ai::simulate::DeckChoice;
use tokensmith::ai::variants;
use tokensmith::ai::{Level, Options, balance};
use tokensmith::rules::Catalog;

use crate::balance_science::{PROBE, probe_catalog, probe_options};
use crate::support::{TempPacks, tokensmith};

/// Three variants of `plain_four` whose order is known by construction: at value 2 it
/// is `plain_two`, the control (no effect at all); at 9 and at 15 it is a bigger plain
/// token, clearly stronger, and 15 more so than 9.
pub const THREE: &str = "variants:\n  - name: fifteen\n    cards:\n      - { id: probe:plain_four, value: 15 }\n  - name: two\n    cards:\n      - { id: probe:plain_four, value: 2 }\n  - name: nine\n    cards:\n      - { id: probe:plain_four, value: 9 }\n";

fn entrants(packs: &TempPacks, catalog: &Catalog, text: &str) -> Vec<Entrant> {
    let file = Path::new("variants.yaml");
    let options = probe_options(packs);
    variants::parse(file, text)
        .expect("reads")
        .iter()
        .map(|v| Entrant {
            name: v.name.clone(),
            changes: v.changes(),
            content: variants::patched(&options, catalog, file, v).expect("patches"),
        })
        .collect()
}

fn test(catalog: &Catalog, games: u32, seed: u64) -> balance::Test {
    let id = |n: &str| catalog.card_named(n).expect("card");
    let decks: Vec<DeckChoice> = ["starter", "shifters"]
        .iter()
        .map(|d| DeckChoice {
            id: (*d).into(),
            stacks: catalog
                .decks()
                .iter()
                .find(|x| x.meta.id == *d)
                .expect("deck")
                .stacks
                .clone(),
            per_game: false,
        })
        .collect();
    balance::Test {
        card: id("plain_four"),
        control: Some(id("plain_two")),
        decks: decks.clone(),
        opponents: decks,
        games,
        level: Level::Greedy,
        seed,
        threads: 2,
        options: Options::default(),
    }
}

fn names(r: &RaceReport) -> Vec<&str> {
    r.variants.iter().map(|s| s.name.as_str()).collect()
}

/// The race ranks the three known variants in their order, on shared control games,
/// and drops the clearly worst before the cap; every variant's pairs are the same games
/// as the control's, so the games played are the control's plus each variant's.
#[test]
fn the_race_ranks_three_known_variants_in_their_order() {
    let (packs, catalog) = probe_catalog();
    let entrants = entrants(&packs, &catalog, THREE);
    assert_eq!(
        entrants[0].content.card(test(&catalog, 1, 1).card).value,
        15
    );
    let design = Design::new(0.05, 0.05, 0.05).expect("design");
    let r = race::race(
        &catalog,
        &test(&catalog, 300, 1),
        &design,
        &entrants,
        &|| {},
    )
    .expect("races");
    assert_eq!(names(&r), ["two", "nine", "fifteen"], "{r:#?}");
    let [two, nine, fifteen] = &r.variants[..] else {
        panic!("three standings")
    };
    assert_eq!((two.rank, nine.rank, fifteen.rank), (1, 2, 3));
    assert_eq!((two.effect, two.ci95), (0.0, [0.0, 0.0]));
    assert!(nine.effect > 0.0 && fifteen.effect > nine.effect, "{r:#?}");
    let dropped = fifteen.dropped.as_ref().expect("fifteen is dropped");
    assert!(dropped.pairs < r.cap_pairs, "{r:#?}");
    assert!(two.dropped.is_none());
    // plain_four is in no deck: every variant shares the control games.
    assert!(r.variants.iter().all(|s| s.shared_control), "{r:#?}");
    let control_games = u64::from(two.pairs);
    let played: u64 = r.variants.iter().map(|s| u64::from(s.pairs)).sum();
    assert_eq!(r.games, control_games + played);
    // The same seed gives the same race.
    let again = race::race(
        &catalog,
        &test(&catalog, 300, 1),
        &design,
        &entrants,
        &|| {},
    )
    .expect("races");
    assert_eq!(
        (names(&again), again.games),
        (names(&r), r.games),
        "reproducible"
    );
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).expect("writes");
    path.to_str().expect("utf-8").to_string()
}

/// The command line: text and JSON, and a bad or hostile file refused at its place.
#[test]
fn balance_variants_on_the_command_line() {
    let packs = TempPacks::new(&PROBE);
    let mods = packs.path().to_str().expect("utf-8").to_string();
    let dir = tempfile::tempdir().expect("temp");
    let three = write(dir.path(), "three.yaml", THREE);
    let run = |file: &str, extra: &[&str]| {
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
            "--games",
            "100",
            "--variants",
            file,
        ];
        a.extend_from_slice(extra);
        tokensmith(a).output().expect("runs")
    };
    let out = run(&three, &[]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.starts_with("plain_four: 3 variants raced against plain_two (greedy vs greedy, both seats; alpha 5%, effect 5 points)\nstopped after "),
        "{text}"
    );
    assert!(
        text.contains("rank  variant                    effect            95% CI  pairs  verdict\n   1  two                          +0.0      +0.0 to +0.0"),
        "{text}"
    );
    assert!(
        text.contains("variants:\n  two: probe:plain_four: value 2\n"),
        "{text}"
    );
    let out = run(&three, &["--json"]);
    assert!(out.status.success());
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(json["card"], "plain_four");
    assert_eq!(json["variants"][0]["name"], "two");
    assert_eq!(json["variants"][0]["rank"], 1);
    assert_eq!(
        json["variants"][0]["changes"],
        serde_json::json!(["probe:plain_four: value 2"])
    );
    assert!(json["games"].as_u64().expect("games") > 0);
    // Mistakes, at their place in the file.
    for (name, body, says) in [
        (
            "typo.yaml",
            "variants:\n  - name: as loaded\n  - name: typo\n    cards:\n      - { id: probe:plain_fuor, value: 3 }\n",
            "typo.yaml:5:15: variant 'typo': pack 'probe' has no card 'plain_fuor' to patch (did you mean 'plain_four'?)",
        ),
        (
            "kind.yaml",
            "variants:\n  - name: as loaded\n  - name: words\n    cards:\n      - id: probe:plain_four\n        value: lots\n",
            "kind.yaml:6:16: variant 'words': expected an integer, found the string 'lots'",
        ),
        (
            "bare.yaml",
            "variants:\n  - name: as loaded\n  - name: bare\n    cards:\n      - { id: plain_four, value: 3 }\n",
            "bare.yaml:5:15: 'plain_four': a variant patches entries of the loaded packs; write the id with its pack",
        ),
    ] {
        let file = write(dir.path(), name, body);
        let out = run(&file, &[]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{name}");
        assert!(err.contains(says), "{name}: {err}");
    }
    // Hostile: thousands of variants, a huge file, deep nesting.
    let many: String = (0..5000).map(|i| format!("  - name: v{i}\n")).collect();
    let huge = format!(
        "variants:\n  - name: a\n  - name: b\n# {}\n",
        "x".repeat(300_000)
    );
    let deep = format!(
        "variants:\n  - name: a\n  - name: b\n    rules: {{ x: {}1{} }}\n",
        "[".repeat(5000),
        "]".repeat(5000)
    );
    for (name, body, says) in [
        (
            "many.yaml",
            format!("variants:\n{many}"),
            "at most 16 race at once",
        ),
        (
            "huge.yaml",
            huge,
            "the most read for a variants file is 262144 bytes",
        ),
        ("deep.yaml", deep, "deep"),
    ] {
        let file = write(dir.path(), name, &body);
        let out = run(&file, &[]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{name}");
        assert!(err.contains(says), "{name}: {err}");
        assert!(err.len() < 2000, "{name}: a short message: {err}");
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    match n {
        0 => 0.0,
        _ if n % 2 == 1 => v[n / 2],
        _ => f64::midpoint(v[n / 2 - 1], v[n / 2]),
    }
}

/// The figures of docs/ai.md, "Racing variants": over 10 seeds, the three known
/// variants raced in one job against each variant judged alone by its own sequential
/// test (its own control games; α = β = 5 %, δ = 5 points, at most 300 games per deck),
/// games and seconds per ranking. Run it with
/// `cargo test --test integration balance_race::measure -- --ignored --nocapture`.
#[test]
#[ignore = "a measurement of a few minutes; its figures are in docs/ai.md"]
fn measure_race_against_separate_tests() {
    let (packs, catalog) = probe_catalog();
    let entrants = entrants(&packs, &catalog, THREE);
    let design = Design::new(0.05, 0.05, 0.05).expect("design");
    let (mut race_games, mut race_secs, mut alone_games, mut alone_secs, mut ratios) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let (mut race_right, mut alone_right) = (0, 0);
    for seed in 1..=10 {
        let t = test(&catalog, 300, seed);
        let started = std::time::Instant::now();
        let r = race::race(&catalog, &t, &design, &entrants, &|| {}).expect("races");
        race_secs.push(started.elapsed().as_secs_f64());
        #[allow(clippy::cast_precision_loss)]
        let race = r.games as f64;
        race_games.push(race);
        race_right += usize::from(names(&r) == ["two", "nine", "fifteen"]);
        let started = std::time::Instant::now();
        let mut games = 0.0;
        let mut alone: Vec<(f64, &str)> = Vec::new();
        for e in &entrants {
            let b = balance::run_sequential(&e.content, &t, &design, &|| {}).expect("runs");
            games += 2.0 * f64::from(b.pairs);
            alone.push((b.effect.abs(), e.name.as_str()));
        }
        alone_secs.push(started.elapsed().as_secs_f64());
        alone.sort_by(|a, b| a.0.total_cmp(&b.0));
        alone_right += usize::from(alone.iter().map(|a| a.1).eq(["two", "nine", "fifteen"]));
        alone_games.push(games);
        ratios.push(race / games);
        println!(
            "seed {seed}: race {} games in {:.2} s ({}), alone {games} games",
            r.games,
            race_secs[race_secs.len() - 1],
            names(&r).join(" < ")
        );
    }
    println!(
        "median games per ranking: race {}, alone {}; ratio median {:.3}; median seconds: race {:.2}, alone {:.2}; right order: race {race_right}/10, alone {alone_right}/10",
        median(race_games),
        median(alone_games),
        median(ratios),
        median(race_secs),
        median(alone_secs)
    );
}
