//! The command line: output formats and exit codes, run as a real process.

use std::process::Output;

use crate::support::{self, TempPacks, root};

fn tokensmith(args: &[&str]) -> Output {
    support::tokensmith(args).output().expect("the binary runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn validate_is_clean_on_the_shipped_packs() {
    let out = tokensmith(&["validate"]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    let text = stdout(&out);
    let last = text.lines().last().unwrap_or_default();
    assert!(last.ends_with(", 0 errors, 0 warnings"), "{text}");
    assert!(last.starts_with("4 packs, "), "{text}");
}

#[test]
fn validate_json_reports_counts_and_diagnostics() {
    let out = tokensmith(&["validate", "--json"]);
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("valid JSON");
    assert_eq!(v["ok"], true);
    assert_eq!(v["errors"], 0);
    assert_eq!(v["diagnostics"].as_array().map(Vec::len), Some(0));
    assert_eq!(v["packs"][0]["id"], "base");
}

#[test]
fn validate_reports_errors_with_locations_and_exit_code_1() {
    let packs = TempPacks::new(&[
        ("broken/pack.yaml", "id: broken\nversion: 1.0.0\n"),
        ("broken/cards.yaml", "cards:\n  - id: a\n    value: three\n"),
    ]);
    let dir = packs.path().to_string_lossy().into_owned();
    let out = tokensmith(&["--content", &dir, "validate"]);
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    let expected = format!("{dir}/broken/cards.yaml:3:12: error: expected an integer");
    assert!(text.contains(&expected), "{text}");

    let json = tokensmith(&["--content", &dir, "validate", "--json"]);
    assert_eq!(json.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).expect("valid JSON");
    assert_eq!(v["ok"], false);
    let d = &v["diagnostics"][0];
    assert_eq!(
        (d["line"].as_u64(), d["column"].as_u64()),
        (Some(3), Some(12))
    );
    assert_eq!(d["severity"], "error");
}

#[test]
fn scenario_exit_codes_say_pass_fail_or_unreadable() {
    let dir = tempfile::tempdir().expect("temp dir");
    let write = |name: &str, text: &str| {
        let p = dir.path().join(name);
        std::fs::write(&p, text).expect("write");
        p.to_string_lossy().into_owned()
    };
    let pass = write(
        "pass.yaml",
        "name: placing scores\nrules: { opening_token: null }\nmoves:\n  - { seat: 1, card: weaken_row, at: [0, 0] }\nexpect:\n  scores: { 1: 3, 2: 0 }\n",
    );
    let fail = write(
        "fail.yaml",
        "name: wrong score\nrules: { opening_token: null }\nmoves:\n  - { seat: 1, card: weaken_row, at: [0, 0] }\nexpect:\n  scores: { 1: 4 }\n",
    );
    let bad = write("bad.yaml", "name: typo\nmovs: []\n");

    let out = tokensmith(&["scenario", &pass]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert!(stdout(&out).contains("1 passed, 0 failed"));

    let out = tokensmith(&["scenario", &pass, &fail]);
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    assert!(text.contains("FAIL  wrong score"), "{text}");
    assert!(
        text.contains("score of seat 1: expected 4, found 3"),
        "{text}"
    );

    let out = tokensmith(&["scenario", &bad]);
    assert_eq!(out.status.code(), Some(2));
    let text = stdout(&out);
    assert!(
        text.contains("bad.yaml:2:1: error: unknown field `movs` (did you mean `moves`?)"),
        "{text}"
    );
}

#[test]
fn committed_schemas_are_current() {
    for (name, schema) in tokensmith::scenario::schemas() {
        let path = root().join("schemas").join(name);
        let committed = std::fs::read_to_string(&path).unwrap_or_default();
        let current = tokensmith::cli::schema_text(&schema).expect("schema serializes");
        assert!(
            committed == current,
            "{} is stale: run `cargo run -- schema --out schemas` and commit the result",
            path.display()
        );
    }
}

#[test]
fn content_schema_lists_exactly_the_sections_the_loader_reads() {
    let (_, schema) = tokensmith::scenario::schemas()
        .into_iter()
        .find(|(n, _)| *n == "content.schema.json")
        .expect("content schema");
    let value = serde_json::to_value(&schema).expect("json");
    let mut keys: Vec<&str> = value["properties"]
        .as_object()
        .expect("properties")
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort_unstable();
    let mut sections = tokensmith::content::doc::SECTIONS.to_vec();
    sections.sort_unstable();
    assert_eq!(keys, sections);
}

#[test]
fn deck_random_prints_the_same_loadable_deck_for_a_seed() {
    let first = tokensmith(&["deck", "random", "--seed", "7"]);
    assert!(
        first.status.success(),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    let text = stdout(&first);
    assert_eq!(
        text,
        stdout(&tokensmith(&["deck", "random", "--seed", "7"]))
    );
    assert_ne!(
        text,
        stdout(&tokensmith(&["deck", "random", "--seed", "8"]))
    );
    // The output is a deck entry a pack can ship as it is.
    let packs = super::support::TempPacks::new(&[
        (
            "mine/pack.yaml",
            "id: mine\nname: Mine\nversion: 1.0.0\nrequires:\n  - { id: base, version: \"^1\" }\n  - { id: frost, version: \"^1\" }\n  - { id: example_scripted, version: \"^1\" }\n",
        ),
        ("mine/decks.yaml", &text),
    ]);
    let root = super::support::root();
    let loaded = super::support::load_folders(
        &[
            root.join("content"),
            root.join("mods"),
            packs.path().to_path_buf(),
        ],
        None,
    );
    assert!(
        loaded
            .catalog
            .is_some_and(|c| c.deck_named("mine:random_7").is_ok()),
        "{:?}",
        loaded.diagnostics
    );
}

#[test]
fn decks_are_imported_listed_shown_exported_and_simulated_from_the_profile() {
    let profile = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let p = profile.path().to_string_lossy().to_string();
    let fixtures = super::support::root().join("tests/fixtures/profile");
    let v1 = fixtures.join("v1/decks/old_aggro.yaml");
    let imported = tokensmith(&["--profile", &p, "deck", "import", &v1.to_string_lossy()]);
    assert!(
        imported.status.success(),
        "{}",
        String::from_utf8_lossy(&imported.stderr)
    );
    // The same id again is refused unless asked, and --as keeps both.
    let again = tokensmith(&["--profile", &p, "deck", "import", &v1.to_string_lossy()]);
    assert!(!again.status.success());
    let why = String::from_utf8_lossy(&again.stderr);
    assert!(
        why.contains("a deck 'old_aggro' is saved already") && why.contains("--as old-aggro"),
        "{why}"
    );
    let kept = tokensmith(&[
        "--profile",
        &p,
        "deck",
        "import",
        &v1.to_string_lossy(),
        "--as",
        "old-aggro",
    ]);
    assert!(
        kept.status.success(),
        "{}",
        String::from_utf8_lossy(&kept.stderr)
    );
    let replaced = tokensmith(&[
        "--profile",
        &p,
        "deck",
        "import",
        &v1.to_string_lossy(),
        "--replace",
    ]);
    assert!(replaced.status.success());
    let list = stdout(&tokensmith(&["--profile", &p, "deck", "list"]));
    assert!(list.contains("old-aggro\tOld Aggro"), "{list}");
    assert!(
        list.contains("old_aggro\tOld Aggro\tstacks 2+2+3+2\tok"),
        "{list}"
    );
    let shown = stdout(&tokensmith(&["--profile", &p, "deck", "show", "old_aggro"]));
    assert!(
        shown.starts_with("format_version: 2\nid: old_aggro\n"),
        "{shown}"
    );
    let out = profile.path().join("shared.yaml");
    let export = tokensmith(&[
        "--profile",
        &p,
        "deck",
        "export",
        "old_aggro",
        "--out",
        &out.to_string_lossy(),
    ]);
    assert!(export.status.success());
    assert_eq!(std::fs::read_to_string(&out).unwrap_or_default(), shown);
    // A deck that breaks the stack rules is refused with the reason, and not saved.
    let bad = profile.path().join("bad.yaml");
    std::fs::write(
        &bad,
        "format_version: 2\nid: bad\nname: Bad\nstacks:\n  - [base:weaken_row]\n",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let refused = tokensmith(&["--profile", &p, "deck", "import", &bad.to_string_lossy()]);
    assert!(!refused.status.success());
    let why = String::from_utf8_lossy(&refused.stderr);
    assert!(why.contains("bad.yaml") && why.contains("stacks"), "{why}");
    let missing = tokensmith(&["--profile", &p, "deck", "show", "old_agro"]);
    assert!(String::from_utf8_lossy(&missing.stderr).contains("did you mean 'old_aggro'?"));
    // simulate takes saved decks and random content.
    let sim = tokensmith(&[
        "--profile",
        &p,
        "simulate",
        "--deck-a",
        "old_aggro",
        "--deck-b",
        "random",
        "--games",
        "4",
        "--threads",
        "1",
        "--ai-a",
        "random",
        "--ai-b",
        "random",
    ]);
    assert!(
        sim.status.success(),
        "{}",
        String::from_utf8_lossy(&sim.stderr)
    );
    assert!(stdout(&sim).contains("with old_aggro"));
}

#[test]
fn simulate_shards_merge_into_the_whole_runs_report_and_caps_are_reported() {
    let dir = tempfile::tempdir().expect("tmp");
    let base = [
        "--packs", "base", "simulate", "--deck-a", "starter", "--deck-b", "shifters", "--games",
        "12", "--seed", "3", "--json",
    ];
    let normal = |text: &[u8]| {
        let mut v: serde_json::Value = serde_json::from_slice(text).expect("json");
        v["games_per_second"] = serde_json::Value::Null;
        v["totals"]["seconds"] = serde_json::Value::Null;
        v["totals"]["shards"] = serde_json::Value::Null;
        v["totals"]["run"]["shards"] = serde_json::Value::Null;
        v
    };
    let whole = tokensmith(&base);
    assert!(
        whole.status.success(),
        "{}",
        String::from_utf8_lossy(&whole.stderr)
    );
    let mut files = Vec::new();
    for k in ["1/2", "2/2"] {
        let mut args = base.to_vec();
        args.extend(["--shard", k]);
        let out = tokensmith(&args);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let file = dir.path().join(format!("shard{}.json", files.len() + 1));
        std::fs::write(&file, &out.stdout).expect("write");
        files.push(file.to_string_lossy().into_owned());
    }
    let merged = tokensmith(&["simulate", "merge", &files[0], &files[1], "--json"]);
    assert!(
        merged.status.success(),
        "{}",
        String::from_utf8_lossy(&merged.stderr)
    );
    assert_eq!(normal(&merged.stdout), normal(&whole.stdout));
    let text = tokensmith(&["simulate", "merge", &files[1], &files[0]]);
    assert!(
        stdout(&text).starts_with("12 games (shard 1, 2 of 2): A (greedy with starter)"),
        "{}",
        stdout(&text)
    );
    // A shard of another run: the message names its file and the field that differs.
    let mut other = base.to_vec();
    other[10] = "4";
    other.extend(["--shard", "2/2"]);
    let out = tokensmith(&other);
    assert!(out.status.success());
    let foreign = dir.path().join("other.json");
    std::fs::write(&foreign, &out.stdout).expect("write");
    let foreign = foreign.to_string_lossy().into_owned();
    let refused = tokensmith(&["simulate", "merge", &files[0], &foreign]);
    let err = String::from_utf8_lossy(&refused.stderr).into_owned();
    assert_eq!(refused.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!(
            "cannot merge {foreign}: it is of another run than {}: its `totals.run.seed` is 4, {}'s is 3",
            files[0], files[0]
        )),
        "{err}"
    );
    let twice = tokensmith(&["simulate", "merge", &files[0], &files[0]]);
    let err = String::from_utf8_lossy(&twice.stderr).into_owned();
    assert!(
        err.contains(&format!("cannot merge {}: it holds shard 1", files[0])),
        "{err}"
    );
    let missing = tokensmith(&["simulate", "merge", &files[0]]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("shards missing: [2] (of 2)"));
    let capped = tokensmith(&[
        "--packs",
        "base",
        "simulate",
        "--deck-a",
        "starter",
        "--deck-b",
        "shifters",
        "--games",
        "4",
        "--max-moves",
        "3",
    ]);
    assert!(capped.status.success());
    assert!(
        stdout(&capped).contains("warning: 4 of 4 games reached the 3-move cap and count as draws (starter vs shifters: 4)"),
        "{}",
        stdout(&capped)
    );
}

#[test]
fn list_shows_ids_with_key_fields_and_where_each_is_defined() {
    let profile = tempfile::tempdir().expect("tmp");
    let p = profile.path().to_string_lossy().into_owned();
    let cards = tokensmith(&["--profile", &p, "list", "cards", "--json"]);
    assert!(
        cards.status.success(),
        "{}",
        String::from_utf8_lossy(&cards.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&cards.stdout).expect("json");
    let list = v.as_array().expect("a list");
    assert_eq!(list.len(), 39, "a fresh profile plays base alone");
    let first = &list[0];
    assert_eq!(first["key"], "base:weaken_row");
    assert_eq!(first["at"], "content/base/cards.yaml:5");
    assert_eq!(first["summary"], "value 3, basic, weaken over row");
    let types = tokensmith(&["--profile", &p, "list", "token-types"]);
    let text = stdout(&types);
    assert!(
        text.lines()
            .any(|l| l.starts_with("base:golden") && l.contains("income × 2")),
        "{text}"
    );
    let off = tokensmith(&[
        "--profile",
        &p,
        "list",
        "abilities",
        "--pack",
        "example_scripted",
    ]);
    assert_eq!(off.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&off.stderr).contains("pack 'example_scripted' is not enabled"),
        "{}",
        String::from_utf8_lossy(&off.stderr)
    );
    let on = tokensmith(&[
        "--profile",
        &p,
        "--packs",
        "example_scripted",
        "list",
        "abilities",
        "--pack",
        "example_scripted",
    ]);
    let text = stdout(&on);
    assert!(text.starts_with("example_scripted:hunt"), "{text}");
    assert!(
        text.contains("(mods/example_scripted/abilities.yaml:5)"),
        "{text}"
    );
}

/// Without a display, the client's command says so in a sentence (no library path, no
/// source line) and exits with 2, as docs/cli.md says.
#[cfg(all(feature = "client", target_os = "linux"))]
#[test]
fn no_command_without_a_display_says_so_plainly() {
    let out = support::tokensmith::<_, &str>([])
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .env_remove("WAYLAND_SOCKET")
        .output()
        .expect("the binary runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("no display to open the window on"), "{err}");
    assert!(!err.contains(".rs:"), "{err}");
}

#[test]
fn every_command_ends_quietly_when_its_output_pipe_is_closed() {
    let dir = tempfile::tempdir().expect("tmp");
    let profile = dir.path().join("profile").to_string_lossy().into_owned();
    let report = dir.path().join("report.json");
    let out = tokensmith(&[
        "--profile",
        &profile,
        "--packs",
        "base",
        "simulate",
        "--deck-a",
        "starter",
        "--deck-b",
        "shifters",
        "--games",
        "2",
        "--json",
    ]);
    assert!(out.status.success());
    std::fs::write(&report, &out.stdout).expect("write");
    let report = report.to_string_lossy().into_owned();
    let schemas = dir.path().join("schemas").to_string_lossy().into_owned();
    let commands: [&[&str]; 10] = [
        &["validate"],
        &["validate", "--json"],
        &["pack", "list"],
        &["pack", "list", "--json"],
        &["pack", "conflicts", "--json"],
        &["list", "cards"],
        &["deck", "random", "--seed", "1"],
        &["simulate", "merge", &report],
        &["simulate", "merge", &report, "--json"],
        &["schema", "--out", &schemas],
    ];
    for args in commands {
        let mut command = support::tokensmith(["--profile", profile.as_str()].iter().chain(args));
        let mut child = command
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("the binary runs");
        // The reader goes away before the command writes a byte.
        drop(child.stdout.take());
        let out = child.wait_with_output().expect("it ends");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {err}");
        assert!(
            !err.contains("Broken pipe") && !err.contains("panicked"),
            "{args:?}: {err}"
        );
    }
}

/// `balance --control X` leaves out the default decks that hold X already (naming them)
/// instead of failing on the first; a deck given with --deck that cannot take the swap
/// is refused with what to do.
#[test]
fn balance_with_a_control_uses_the_decks_where_the_swap_is_legal() {
    let dir = tempfile::tempdir().expect("tmp");
    let p = dir.path().to_string_lossy().into_owned();
    let base = [
        "--profile",
        &p,
        "--packs",
        "base",
        "balance",
        "lure",
        "--control",
        "booster",
        "--games",
        "2",
        "--threads",
        "1",
    ];
    let o = tokensmith(&base);
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(0), "{err}");
    for deck in ["starter", "gardeners"] {
        assert!(
            err.contains(&format!("note: deck '{deck}' (with ")),
            "{deck}: {err}"
        );
    }
    assert!(
        err.contains("is left out: it holds the control booster already"),
        "{err}"
    );
    let out = stdout(&o);
    for deck in ["shifters", "siege", "high_rollers"] {
        assert!(out.contains(deck), "{deck}: {out}");
    }
    assert!(!out.contains("\nstarter "), "{out}");
    assert!(
        out.contains("balance measures what the card does when it is played"),
        "{out}"
    );
    let mut given = base.to_vec();
    given.extend(["--deck", "starter"]);
    let o = tokensmith(&given);
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("deck 'starter' with Booster breaks the deck rules")
            && err.contains("give decks where the card and its control both fit with --deck ID"),
        "{err}"
    );
}

/// `pack new` makes a pack that validates with no warning and a scenario that passes, plain
/// and scripted; it never overwrites, and refuses an id that cannot be one.
#[test]
fn pack_new_makes_a_pack_that_validates_and_a_scenario_that_passes() {
    let dir = tempfile::tempdir().expect("tmp");
    let mods = dir.path().join("mods");
    std::fs::create_dir_all(&mods).expect("mods");
    let m = mods.to_string_lossy().into_owned();
    let run = |args: &[&str]| {
        support::tokensmith(["--mods", m.as_str()].iter().chain(args))
            .output()
            .expect("the binary runs")
    };
    for (id, extra) in [("first", None), ("scripted_one", Some("--scripted"))] {
        let mut args = vec!["pack", "new", id];
        args.extend(extra);
        let out = run(&args);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(mods.join(id).join("pack.yaml").is_file());
    }
    assert!(mods.join("scripted_one/scripts/spark.lua").is_file());
    assert!(mods.join("scripted_one/.luarc.json").is_file());
    assert!(
        mods.join("scripted_one/.definitions/tokensmith.lua")
            .is_file()
    );
    let out = run(&["validate"]);
    let text = String::from_utf8_lossy(&out.stdout);
    // Together, the two packs' cards of one id are told apart.
    assert!(
        out.status.success()
            && text.contains("0 errors, 1 warning")
            && text.contains("warning: card 'lantern' is also defined by pack 'first'"),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for id in ["first", "scripted_one"] {
        let scenario = mods.join(format!("{id}.scenario.yaml"));
        // Each file's schema line names the checkout's `schemas/` beside the packs folder,
        // as seen from where the file is.
        for (file, schema) in [
            (scenario.clone(), "scenario"),
            (mods.join(id).join("pack.yaml"), "pack"),
        ] {
            let text = std::fs::read_to_string(&file).expect("read");
            let path = text
                .lines()
                .find_map(|l| l.strip_prefix("# yaml-language-server: $schema="))
                .unwrap_or_else(|| panic!("{}: no schema line", file.display()));
            let wanted = dir
                .path()
                .join("schemas")
                .join(format!("{schema}.schema.json"));
            std::fs::create_dir_all(dir.path().join("schemas")).expect("schemas");
            std::fs::write(&wanted, "{}").expect("a stand-in schema");
            let resolved = file.parent().expect("a folder").join(path);
            assert!(
                resolved.is_file(),
                "{}: {path} does not lead to {}",
                file.display(),
                wanted.display()
            );
            assert!(path.ends_with(&format!("{schema}.schema.json")), "{path}");
        }
        let out = run(&["scenario", &scenario.to_string_lossy()]);
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && text.contains("1 passed, 0 failed"),
            "{text}"
        );
    }
    // Never over an existing pack: refused, the pack as it was.
    let before = std::fs::read_to_string(mods.join("first/content.yaml")).expect("read");
    let out = run(&["pack", "new", "first", "--scripted"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("exists already"));
    assert_eq!(
        std::fs::read_to_string(mods.join("first/content.yaml")).expect("read"),
        before
    );
    assert!(!mods.join("first/scripts").exists());
    let out = run(&["pack", "new", "My Pack"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot be a pack id"));
}
