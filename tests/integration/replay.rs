//! Saved games: a greedy game recorded, saved and re-run by `tokensmith replay` under the
//! same content (identical) and under a changed card (the first differing move and both
//! results); hostile replay files are refused with their place.

use std::ffi::OsStr;
use std::path::Path;
use std::process::Output;
use std::sync::Arc;

use tokensmith::ai::{Level, Options, agent, hooks_for};
use tokensmith::content::LoadOptions;
use tokensmith::observe::{History, Observation};
use tokensmith::replay::{self, Replay};
use tokensmith::rules::Catalog;
use tokensmith::timeline::Timeline;

use crate::support::{self, copy_tree, root};

fn base() -> Arc<Catalog> {
    let loaded = tokensmith::script::load(&LoadOptions {
        only: Some(vec!["base".into()]),
        ..LoadOptions::standard(&root().join("content"), &root().join("mods"))
    });
    Arc::new(loaded.catalog.expect("base loads"))
}

/// A whole greedy-vs-greedy game on the first deck, as a timeline.
fn greedy_game(catalog: &Arc<Catalog>, seed: u64) -> Timeline {
    let scripts = hooks_for(catalog);
    let brain = scripts.brain(catalog);
    let deck = catalog.decks()[0].stacks.clone();
    let mut opening = Vec::new();
    let start = brain
        .engine()
        .new_game([&deck, &deck], seed, &mut opening)
        .expect("deals");
    let mut timeline = Timeline::new(start, opening, Arc::clone(catalog));
    let mut players = [
        agent(Level::Greedy, 1, Options::default()),
        agent(Level::Greedy, 2, Options::default()),
    ];
    while !timeline.state().is_over() {
        assert!(timeline.steps().len() < 500, "the game does not end");
        let seat = timeline.state().turn();
        let obs = Observation::new(timeline.state(), seat, &History::default(), false);
        let mv = players[seat.index()].choose(&brain, &obs).expect("a move");
        let state = timeline.state().clone();
        timeline
            .play(brain.engine(), catalog, state, mv)
            .expect("the move is legal");
    }
    timeline
}

fn recorded(seed: u64) -> Replay {
    let catalog = base();
    let timeline = greedy_game(&catalog, seed);
    let stamps = replay::stamps(
        &catalog,
        &LoadOptions::standard(&root().join("content"), &root().join("mods")).folders,
    );
    replay::record(&timeline, &catalog, seed, stamps, None)
}

fn tokensmith(args: &[&str], profile: &Path) -> Output {
    support::tokensmith([OsStr::new("--profile"), profile.as_os_str()])
        .args(args)
        .output()
        .expect("the binary runs")
}

fn text(o: &[u8]) -> String {
    String::from_utf8_lossy(o).into_owned()
}

#[test]
fn a_saved_game_replays_identically_and_reports_a_changed_card() {
    let dir = tempfile::tempdir().expect("temp dir");
    let game = recorded(5);
    assert!(game.result.over, "the recorded game is finished");
    assert!(
        game.packs[0].hash.as_ref().is_some_and(|h| h.len() == 64),
        "{:?}",
        game.packs
    );
    let path = replay::save(dir.path(), "game", &game).expect("saved");
    let bytes = std::fs::metadata(&path).expect("written").len();
    assert!(bytes < 64 * 1024, "a replay is small: {bytes} bytes");
    // The same file read back is the same game.
    assert_eq!(replay::read(&path).expect("reads"), game);

    let file = path.to_string_lossy().into_owned();
    let same = tokensmith(&["replay", &file], dir.path());
    assert_eq!(
        same.status.code(),
        Some(0),
        "{}{}",
        text(&same.stdout),
        text(&same.stderr)
    );
    let out = text(&same.stdout);
    assert!(out.contains("every move does exactly what it did"), "{out}");
    assert!(
        out.contains(&format!("then {}", game.result.text())),
        "{out}"
    );

    // Weaken the row weakener's token: its moves now place a 2, not a 3.
    let changed = dir.path().join("content");
    copy_tree(&root().join("content"), &changed);
    let cards = changed.join("base").join("cards.yaml");
    let yaml = std::fs::read_to_string(&cards).expect("cards");
    let edited = yaml.replacen(
        "    name: Row Weakener\n    value: 3\n",
        "    name: Row Weakener\n    value: 2\n",
        1,
    );
    assert_ne!(yaml, edited, "the edit applies");
    std::fs::write(&cards, edited).expect("write");
    let content = changed.to_string_lossy().into_owned();
    let differs = tokensmith(
        &["--content", &content, "replay", &file, "--json"],
        dir.path(),
    );
    assert_eq!(
        differs.status.code(),
        Some(1),
        "{}{}",
        text(&differs.stdout),
        text(&differs.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&differs.stdout).expect("JSON");
    let first = report["first_difference"]["number"]
        .as_u64()
        .expect("a move differs");
    let played_weakener = game
        .moves
        .iter()
        .position(|m| m.card == "base:weaken_row")
        .expect("the game plays the weakener");
    assert_eq!(first, played_weakener as u64 + 1, "{report}");
    assert!(
        report["packs"][0]
            .as_str()
            .is_some_and(|p| p.contains("other content")),
        "{report}"
    );
    assert_eq!(report["recorded"]["scores"][0], game.result.scores[0]);
    let text_report = tokensmith(&["--content", &content, "replay", &file], dir.path());
    let out = text(&text_report.stdout);
    assert!(out.contains(&format!("move {first} (seat ")), "{out}");
    assert!(out.contains("plays differently now"), "{out}");
}

/// `good` as a LAN host's save of format `version` with an AI of `level` (JSON) in seat 1
/// and a player with `token` in seat 2.
fn with_table(good: &str, version: u32, level: &str, token: &str) -> String {
    let mut value: serde_json::Value = serde_json::from_str(good).expect("JSON");
    value["version"] = serde_json::json!(version);
    value["table"] = serde_json::from_str(&format!(
        r#"[{{"ai": {{"level": {level}}}}}, {{"player": {{"name": "me", "token": "{token}"}}}}]"#
    ))
    .expect("table JSON");
    value.to_string()
}

#[test]
fn hostile_replay_files_are_refused_with_their_place() {
    let dir = tempfile::tempdir().expect("temp dir");
    let good = replay::to_text(&recorded(2));
    let cases: Vec<(&str, String, &str)> = vec![
        (
            "not-json",
            "{ \"format\": ".to_string(),
            ":1:12: error: EOF while parsing",
        ),
        (
            "other-format",
            good.replacen("tokensmith-replay", "chess-pgn", 1),
            ":1:1: error: this is not a replay",
        ),
        (
            "future",
            good.replacen("\"version\": 1", "\"version\": 9", 1),
            "format version 9",
        ),
        (
            "unknown-key",
            good.replacen("\"seed\"", "\"sneed\"", 1),
            "unknown field `sneed`",
        ),
        (
            "bad-seat",
            good.replacen("\"seat\": 1", "\"seat\": 7", 1),
            "seat must be 1 or 2, found 7",
        ),
        (
            "gone-card",
            good.replace("base:weaken_row", "base:no_such_card"),
            "no_such_card",
        ),
        (
            "table-in-version-1",
            with_table(&good, 1, "\"greedy\"", "00112233445566778899aabbccddeeff"),
            ":1:1: error: `table` needs format version 2",
        ),
        (
            "bad-token",
            with_table(&good, 2, "\"greedy\"", "not-hex"),
            "seat 2's token is not 32 hex digits",
        ),
        (
            "long-name",
            with_table(
                &good,
                2,
                &format!("\"{}\"", "x".repeat(65)),
                "00112233445566778899aabbccddeeff",
            ),
            "seat 1's name is longer than 64 bytes",
        ),
    ];
    for (name, body, wanted) in cases {
        let path = dir.path().join(format!("{name}.json"));
        std::fs::write(&path, body).expect("write");
        let out = tokensmith(&["replay", &path.to_string_lossy()], dir.path());
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{name}: {err}");
        assert!(err.contains(wanted), "{name}: {err}");
        assert!(
            err.contains(&format!("{name}.json")),
            "{name}: the file is named: {err}"
        );
    }
    // A LAN host's save of a game in progress is a replay like any other.
    let path = dir.path().join("lan-save.json");
    std::fs::write(
        &path,
        with_table(&good, 2, "\"greedy\"", "00112233445566778899aabbccddeeff"),
    )
    .expect("write");
    let out = tokensmith(&["replay", &path.to_string_lossy()], dir.path());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    // A move the engine refuses (a stack that does not exist) stops the re-run there.
    let mut value: serde_json::Value = serde_json::from_str(&good).expect("JSON");
    value["moves"][0]["stack"] = serde_json::json!(200);
    let path = dir.path().join("bad-stack.json");
    std::fs::write(&path, value.to_string()).expect("write");
    let out = tokensmith(&["replay", &path.to_string_lossy()], dir.path());
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("move 1 is refused now"),
        "{}",
        text(&out.stdout)
    );
    // Too large: refused before it is parsed.
    let path = dir.path().join("huge.json");
    std::fs::write(&path, " ".repeat(5 * 1024 * 1024)).expect("write");
    let out = tokensmith(&["replay", &path.to_string_lossy()], dir.path());
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("huge.json"),
        "{}",
        text(&out.stderr)
    );
}
