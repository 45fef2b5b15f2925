//! Hostile packs and files (`tests/adversarial/`): every attack is refused cleanly, within
//! a time bound, and the process lives on. The packs and scenarios are written by
//! `tests/adversarial/generate.py`; the scenarios run one test each through the scenario
//! harness (`tests/scenarios.rs`, as `adversarial::FILE`); this module runs them through the
//! command line (whose commands run on a worker thread), simulation workers and the client's AI
//! thread, and attacks the file-system side (links, pipes, huge files, names that are not
//! UTF-8, backups that already exist).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use tokensmith::content::LoadOptions;
use tokensmith::rules::{Engine, EventKind, GameState, Move, Play};
use tokensmith::script::ScriptHost;

use super::support::{self, root};

/// Generous: a loaded 2-core machine in a debug build must never fail it, while a hang
/// (the attacks run for hours or forever unchecked) always does.
const BOUND: Duration = Duration::from_secs(60);

fn adversarial() -> PathBuf {
    root().join("tests/adversarial")
}

fn tokensmith(args: &[&str]) -> Output {
    let started = Instant::now();
    let out = support::tokensmith(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run tokensmith: {e}"));
    assert!(
        started.elapsed() < BOUND,
        "tokensmith {args:?} took {:?}",
        started.elapsed()
    );
    out
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn scenario_files() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(adversarial().join("scenarios"))
        .unwrap_or_else(|e| panic!("tests/adversarial/scenarios: {e}"))
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    files
}

#[test]
fn chains_through_many_packs_are_refused_by_the_command_line() {
    let files: Vec<String> = scenario_files()
        .iter()
        .filter(|p| p.to_string_lossy().contains("chain"))
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    assert_eq!(files.len(), 2);
    let mut args = vec!["scenario"];
    args.extend(files.iter().map(String::as_str));
    let out = tokensmith(&args);
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("2 passed, 0 failed"), "{}", text(&out));
}

#[test]
fn chains_through_many_packs_run_in_simulation_workers() {
    // The AI tries the chain cards (refused every time) in two worker threads.
    let out = tokensmith(&[
        "--mods",
        "tests/adversarial/chain",
        "--all-packs",
        "simulate",
        "--deck-a",
        "chain01:kickers",
        "--deck-b",
        "chain01:kickers",
        "--games",
        "4",
        "--threads",
        "2",
        "--json",
    ]);
    assert!(out.status.success(), "{}", text(&out));
    let report: serde_json::Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("JSON: {e}\n{}", text(&out)));
    assert_eq!(report["games"], 4, "{report}");
}

/// The client's threads (needs the `client` feature).
#[cfg(feature = "client")]
mod on_the_client {
    use egui_kittest::kittest::Queryable as _;
    use tokensmith::app::{App, Library};
    use tokensmith::content::LoadOptions;

    use super::adversarial;
    use crate::client::{harness_for, run_until};
    use crate::support::root;

    #[test]
    fn chains_through_many_packs_run_on_the_clients_threads() {
        let library = Library::load(LoadOptions::standard(
            &root().join("content"),
            &adversarial().join("chain"),
        ));
        assert!(library.catalog.is_some(), "{:?}", library.diagnostics);
        let mut h = harness_for(App::new(library));
        h.run();
        for label in [
            "Play vs AI",
            "Blue's deck (you)",
            "Kickers",
            "Red's deck (AI)",
            "Kickers",
            "Start",
        ] {
            h.get_by_label(label).click();
            h.run();
        }
        assert!(h.state().game().is_some(), "the game starts");
        // Our chain card, played on the UI thread (a test thread with a small stack): refused.
        h.key_press(egui::Key::Num1);
        h.step();
        h.get_all_by_label_contains(": empty")
            .next()
            .map(|n| n.click())
            .unwrap_or_else(|| panic!("an empty cell"));
        h.step();
        assert_eq!(h.state().game().map(|g| g.session.played().len()), Some(0));
        // A plain card is played, then the AI (its thread tries the chain cards) answers.
        h.key_press(egui::Key::Num3);
        h.step();
        h.get_all_by_label_contains(": empty")
            .next()
            .map(|n| n.click())
            .unwrap_or_else(|| panic!("an empty cell"));
        h.step();
        run_until(&mut h, "the AI's move", |h| {
            h.state()
                .game()
                .is_some_and(|g| g.session.played().len() >= 2)
        });
    }
}

#[test]
fn a_hanging_library_call_at_a_scripts_top_level_does_not_hang_validate() {
    let out = tokensmith(&["--mods", "tests/adversarial/toplevel", "validate"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        text(&out).contains("hang.lua:1:") && text(&out).contains("spent the instruction budget"),
        "{}",
        text(&out)
    );
}

/// The hostile pack, loaded with base.
fn hostile() -> (tokensmith::rules::Catalog, ScriptHost) {
    let loaded = tokensmith::script::load(&LoadOptions {
        only: Some(vec!["hostile".into()]),
        ..LoadOptions::standard(&root().join("content"), &adversarial().join("packs"))
    });
    let catalog = loaded
        .catalog
        .unwrap_or_else(|| panic!("{:?}", loaded.diagnostics));
    let host = ScriptHost::new(&catalog).unwrap_or_else(|d| panic!("{d:?}"));
    (catalog, host)
}

/// Play `card` at each cell in turn (both seats alternating) and return each move's log
/// lines, or its refusal.
fn play(card: &str, cells: &[(i32, i32)]) -> Vec<Result<Vec<String>, String>> {
    let (catalog, host) = hostile();
    let engine = Engine::new(&catalog, &host);
    let id = catalog.card_named(card).unwrap_or_else(|e| panic!("{e}"));
    let deck = &catalog.decks()[0].stacks;
    let mut events = Vec::new();
    let mut state: GameState = engine
        .new_game([deck, deck], 1, &mut events)
        .unwrap_or_else(|e| panic!("{e}"));
    let mut out = Vec::new();
    for &(x, y) in cells {
        let seat = state.turn();
        let mut events = Vec::new();
        let mv = Move {
            seat,
            play: Play::Card(id),
            cell: tokensmith::rules::Cell::new(x, y),
        };
        out.push(match engine.play(&mut state, mv, &mut events) {
            Ok(()) => Ok(events
                .iter()
                .filter_map(|e| match &e.kind {
                    EventKind::Log { text } => Some(text.clone()),
                    _ => None,
                })
                .collect()),
            Err(e) => Err(e.to_string()),
        });
    }
    out
}

#[test]
fn state_kept_in_load_time_tables_is_refused_the_same_way_at_every_move() {
    // Tables made at load are frozen: every move's write is refused with the same
    // message, whatever moves ran before (the upvalue counter is put back too).
    for (card, line, key) in [
        ("upvalue_counter", 7, "'1'"),
        ("global_tables", 5, "'n'"),
        ("hooks_only", 4, "'n'"),
    ] {
        let logs = play(card, &[(0, 0), (5, 5), (0, 5)]);
        for log in &logs {
            let Err(e) = log else {
                panic!("{card}: the write must be refused: {logs:?}")
            };
            assert!(
                e.contains(&format!("{card}.lua:{line}:"))
                    && e.contains("read-only in hooks")
                    && e.contains(key),
                "{card}: {e}"
            );
        }
        assert!(logs.windows(2).all(|w| w[0] == w[1]), "{logs:?}");
    }
}

#[test]
fn a_replaced_env_is_frozen_like_the_globals() {
    let logs = play("env_swap", &[(0, 0)]);
    let Err(e) = &logs[0] else {
        panic!("setting a global of the new _ENV must be refused: {logs:?}")
    };
    assert!(
        e.contains("env_swap.lua:8:") && e.contains("cannot set global 'hits'"),
        "{e}"
    );
}

#[test]
fn a_gmatch_iterator_made_at_the_top_level_starts_again_each_move() {
    let logs = play("gmatch_top_level", &[(0, 0), (5, 5), (0, 5)]);
    for log in &logs {
        assert_eq!(
            log.as_deref(),
            Ok(&["word=one".to_string()][..]),
            "{logs:?}"
        );
    }
}

#[test]
fn values_print_the_same_on_every_platform_and_never_as_addresses() {
    let logs = play("text_probe", &[(0, 0)]);
    let lines = logs[0].clone().unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        lines,
        [
            "table",
            "table",
            "nan nan inf -inf",
            "nan|  inf|-inf  |+inf|NAN",
            "nan table",
            "nan,inf",
            "nan|nan",
            "table",
            "nan",
        ]
    );
}

#[test]
fn every_scenarios_events_are_byte_identical_in_five_processes() {
    let mut args = vec!["scenario".to_string(), "--events".to_string()];
    args.extend(
        scenario_files()
            .iter()
            .map(|p| p.to_string_lossy().into_owned()),
    );
    let mut repository: Vec<String> = std::fs::read_dir(root().join("tests/scenarios"))
        .unwrap_or_else(|e| panic!("tests/scenarios: {e}"))
        .filter_map(Result::ok)
        .map(|e| e.path().to_string_lossy().into_owned())
        .filter(|p| p.ends_with(".yaml"))
        .collect();
    repository.sort();
    args.extend(repository);
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let first = tokensmith(&refs);
    assert!(first.status.success(), "{}", text(&first));
    for _ in 1..5 {
        let again = tokensmith(&refs);
        assert_eq!(
            again.stdout, first.stdout,
            "the event output differs between processes"
        );
    }
}

// ---------------------------------------------------------------------------------------
// Files

/// A mods folder with one small valid pack, `evil`, plus whatever `extra` adds to it.
fn evil_pack(extra: impl FnOnce(&Path)) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let pack = dir.path().join("evil");
    std::fs::create_dir_all(&pack).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(
        pack.join("pack.yaml"),
        "id: evil\nname: Evil\nversion: 1.0.0\nrequires:\n  - { id: base, version: \"^1\" }\n",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    extra(&pack);
    dir
}

fn validate(mods: &Path, json: bool) -> Output {
    let mods = mods.to_string_lossy().into_owned();
    let mut args = vec!["--mods", mods.as_str(), "validate"];
    if json {
        args.push("--json");
    }
    tokensmith(&args)
}

#[cfg(unix)]
#[test]
fn a_file_name_that_is_not_utf8_is_shown_lossily_in_json() {
    use std::os::unix::ffi::OsStrExt as _;
    let dir = evil_pack(|pack| {
        let name = std::ffi::OsStr::from_bytes(b"bad\xff.yaml");
        std::fs::write(pack.join(name), "cards: [").unwrap_or_else(|e| panic!("{e}"));
    });
    let out = validate(dir.path(), true);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let report: serde_json::Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&out)));
    let path = report["diagnostics"][0]["path"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(path.ends_with("bad\u{fffd}.yaml"), "{report}");
}

#[cfg(unix)]
#[test]
fn links_inside_a_pack_are_not_followed() {
    let outside = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(
        outside.path().join("stolen.yaml"),
        "cards:\n  - { id: stolen, value: 1 }\n",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let dir = evil_pack(|pack| {
        let link = |to: &Path, name: &str| {
            std::os::unix::fs::symlink(to, pack.join(name)).unwrap_or_else(|e| panic!("{e}"));
        };
        link(Path::new("/"), "root");
        link(outside.path(), "elsewhere");
        link(&outside.path().join("stolen.yaml"), "stolen.yaml");
        link(Path::new("/dev/zero"), "zero.yaml");
        std::fs::create_dir_all(pack.join("scripts")).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(
            pack.join("abilities.yaml"),
            "abilities:\n  - { id: peek, name: Peek, description: x, script: scripts/peek.lua }\n",
        )
        .unwrap_or_else(|e| panic!("{e}"));
        std::os::unix::fs::symlink(
            outside.path().join("stolen.yaml"),
            pack.join("scripts/peek.lua"),
        )
        .unwrap_or_else(|e| panic!("{e}"));
    });
    let out = validate(dir.path(), false);
    let said = text(&out);
    assert_eq!(out.status.code(), Some(1), "{said}");
    for name in ["root", "elsewhere", "stolen.yaml", "zero.yaml"] {
        assert!(
            said.contains(&format!(
                "evil/{name}:1:1: warning: this is a symbolic link"
            )),
            "{name}: {said}"
        );
    }
    assert!(
        said.contains("script file 'scripts/peek.lua' cannot be read"),
        "{said}"
    );
    assert!(said.contains("it is a symbolic link"), "{said}");
}

#[cfg(unix)]
fn fifo(path: &Path) {
    let status = Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap_or_else(|e| panic!("mkfifo: {e}"));
    assert!(status.success());
}

#[cfg(unix)]
#[test]
fn named_pipes_and_huge_files_are_refused_without_waiting_or_reading() {
    let dir = evil_pack(|pack| {
        fifo(&pack.join("pipe.yaml"));
        let big = std::fs::File::create(pack.join("big.yaml")).unwrap_or_else(|e| panic!("{e}"));
        // Sparse: 64 MB on paper, nothing on disk.
        big.set_len(64 * 1024 * 1024)
            .unwrap_or_else(|e| panic!("{e}"));
    });
    let out = validate(dir.path(), false);
    let said = text(&out);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(
        said.contains("pipe.yaml:1:1: error: cannot read this file: it is a named pipe"),
        "{said}"
    );
    assert!(
        said.contains("big.yaml:1:1: error: cannot read this file: it is 67108864 bytes; the most read for a content file is 4194304 bytes"),
        "{said}"
    );
}

#[cfg(unix)]
#[test]
fn a_pipe_in_the_decks_folder_blocks_no_deck_command() {
    let profile = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    std::fs::create_dir_all(profile.path().join("decks")).unwrap_or_else(|e| panic!("{e}"));
    fifo(&profile.path().join("decks/x.yaml"));
    std::os::unix::fs::symlink("/dev/zero", profile.path().join("decks/zero.yaml"))
        .unwrap_or_else(|e| panic!("{e}"));
    let dir = profile.path().to_string_lossy().into_owned();
    let out = tokensmith(&["--profile", &dir, "deck", "list"]);
    let said = text(&out);
    assert!(out.status.success(), "{said}");
    assert!(said.contains("x.yaml: it is not a regular file"), "{said}");
    assert!(said.contains("zero.yaml: it is a symbolic link"), "{said}");
    assert!(
        profile.path().join("decks/x.yaml").exists(),
        "left where it was"
    );
}

const FORMAT_1: &str = "title: Old\ncards:\n  - [weaken_row, push_row]\n  - [spawn_row, booster]\n  - [flip_cross, weaken_cross, gift]\n  - [push_cross, weaken_ring]\n";

#[test]
fn a_migration_backup_never_overwrites_an_older_one() {
    let profile = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let decks = profile.path().join("decks");
    std::fs::create_dir_all(&decks).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(decks.join("old.yaml"), FORMAT_1).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(decks.join("old.yaml.v1.bak"), "an earlier backup")
        .unwrap_or_else(|e| panic!("{e}"));
    let mut p =
        tokensmith::profile::Profile::open(profile.path()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(p.decks().len(), 1);
    assert_eq!(
        std::fs::read_to_string(decks.join("old.yaml.v1.bak"))
            .ok()
            .as_deref(),
        Some("an earlier backup")
    );
    assert_eq!(
        std::fs::read_to_string(decks.join("old.yaml.v1.bak2"))
            .ok()
            .as_deref(),
        Some(FORMAT_1)
    );
    let notes = p.notes.join("\n");
    assert!(
        notes.contains("the original is kept as") && notes.contains("old.yaml.v1.bak2"),
        "{notes}"
    );
}

#[test]
fn a_renamed_deck_keeps_its_original_text() {
    let profile = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let decks = profile.path().join("decks");
    std::fs::create_dir_all(&decks).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(decks.join("My Deck.yaml"), FORMAT_1).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(decks.join("My Deck.yaml.orig"), "taken").unwrap_or_else(|e| panic!("{e}"));
    let mut p =
        tokensmith::profile::Profile::open(profile.path()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(p.decks().len(), 1);
    assert_eq!(
        std::fs::read_to_string(decks.join("My Deck.yaml.orig"))
            .ok()
            .as_deref(),
        Some("taken")
    );
    assert_eq!(
        std::fs::read_to_string(decks.join("My Deck.yaml.orig2"))
            .ok()
            .as_deref(),
        Some(FORMAT_1),
        "the kept file holds the original, not the migrated text"
    );
}

#[cfg(unix)]
#[test]
fn saving_keeps_a_files_permissions() {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let path = dir.path().join("deck.yaml");
    tokensmith::fsutil::write_atomic(&path, b"one").unwrap_or_else(|e| panic!("{e}"));
    let mode = |p: &Path| {
        std::fs::metadata(p)
            .map(|m| m.permissions().mode() & 0o777)
            .unwrap_or(0)
    };
    assert_eq!(mode(&path), 0o644, "a new file is readable by all");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640))
        .unwrap_or_else(|e| panic!("{e}"));
    tokensmith::fsutil::write_atomic(&path, b"two").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(mode(&path), 0o640, "a replaced file keeps its permissions");
}

#[test]
fn a_value_echoed_in_a_diagnostic_cannot_forge_lines_or_flood() {
    let long = "x".repeat(3_000_000);
    let dir = evil_pack(|pack| {
        std::fs::write(
            pack.join("cards.yaml"),
            format!(
                "cards:\n  - {{ id: a, value: 1, ability: \"no\\nfake.yaml:1:1: error: forged\" }}\n  - {{ id: b, value: 1, ability: \"{long}\" }}\n"
            ),
        )
        .unwrap_or_else(|e| panic!("{e}"));
    });
    let out = validate(dir.path(), false);
    let said = text(&out);
    assert_eq!(out.status.code(), Some(1));
    assert!(!said.lines().any(|l| l.starts_with("fake.yaml")), "{said}");
    assert!(said.len() < 20_000, "the output is {} bytes", said.len());
}
