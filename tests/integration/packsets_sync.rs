//! "Get what this needs": a replay saved in a profile with three packs from an index runs
//! in a fresh profile after `replay FILE --sync`, which fetches its packs by content hash
//! into a temporary set (the player's own set untouched) or, with `--keep`, into the
//! profile; hostile lists (a hash no index has, one that is not a hash, a pack no index
//! lists, a pack named without a hash, too many packs) are refused with nothing changed.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use tokensmith::ai::{Level, Options, agent, hooks_for};
use tokensmith::content::{LoadOptions, PackFolder};
use tokensmith::observe::{History, Observation};
use tokensmith::rules::Catalog;
use tokensmith::timeline::Timeline;

use crate::index::{World, edit_json, published, text};
use crate::support::root;

/// The player `who`'s catalog of base, alpha, beta and gamma, from their installed packs.
fn catalog_of(w: &World, who: &str) -> (Arc<Catalog>, Vec<PackFolder>) {
    let options = LoadOptions {
        only: Some(
            ["base", "alpha", "beta", "gamma"]
                .map(String::from)
                .to_vec(),
        ),
        ..LoadOptions::standard(&root().join("content"), &w.path("empty"))
    };
    let mut options = options;
    options.folders.push(PackFolder {
        path: w.path(&format!("{who}/packs")),
        required: true,
    });
    let loaded = tokensmith::script::load(&options);
    let catalog = loaded
        .catalog
        .unwrap_or_else(|| panic!("the packs load: {:?}", loaded.diagnostics));
    (Arc::new(catalog), options.folders)
}

/// A greedy game with the first deck, whose first three stacks start with alpha's,
/// beta's and gamma's cards, saved as a replay at `path`.
fn save_game(catalog: &Arc<Catalog>, folders: &[PackFolder], path: &Path) {
    let scripts = hooks_for(catalog);
    let brain = scripts.brain(catalog);
    let mut deck = catalog.decks()[0].stacks.clone();
    for (stack, pack) in ["alpha", "beta", "gamma"].into_iter().enumerate() {
        let card = catalog
            .card_ids()
            .find(|c| catalog.card(*c).meta.key() == format!("{pack}:{pack}_card"))
            .unwrap_or_else(|| panic!("{pack}'s card is loaded"));
        deck[stack].insert(0, card);
    }
    let seed = 3;
    let mut opening = Vec::new();
    let start = brain
        .engine()
        .new_game([&deck, &deck], seed, &mut opening)
        .unwrap_or_else(|e| panic!("deals: {e:?}"));
    let mut timeline = Timeline::new(start, opening, Arc::clone(catalog));
    let mut players = [
        agent(Level::Greedy, 1, Options::default()),
        agent(Level::Greedy, 2, Options::default()),
    ];
    while !timeline.state().is_over() && timeline.steps().len() < 12 {
        let seat = timeline.state().turn();
        let obs = Observation::new(timeline.state(), seat, &History::default(), false);
        let mv = players[seat.index()]
            .choose(&brain, &obs)
            .unwrap_or_else(|| panic!("a move"));
        let state = timeline.state().clone();
        timeline
            .play(brain.engine(), catalog, state, mv)
            .unwrap_or_else(|e| panic!("the move is legal: {e:?}"));
    }
    let stamps = tokensmith::replay::stamps(catalog, folders);
    let replay = tokensmith::replay::record(&timeline, catalog, seed, stamps, None);
    let json = serde_json::to_string_pretty(&replay).unwrap_or_default();
    std::fs::write(path, json).unwrap_or_else(|e| panic!("{e}"));
}

/// A world whose player `first` installed alpha and beta (which requires alpha) and
/// gamma from `index` and saved a game with their cards at `game.json`.
fn a_game_with_three_index_packs() -> (World, PathBuf) {
    let w = published();
    w.pack("gamma", "1.0.0", &[], 3);
    w.publish("gamma", "index");
    w.player_with("first", "index");
    for args in [
        &["pack", "install", "beta"][..],
        &["pack", "install", "gamma"],
        &["pack", "enable", "beta"],
        &["pack", "enable", "gamma"],
    ] {
        let out = w.player("first", args);
        assert!(out.status.success(), "{args:?}: {}", text(&out));
    }
    let (catalog, folders) = catalog_of(&w, "first");
    let game = w.path("game.json");
    save_game(&catalog, &folders, &game);
    (w, game)
}

fn enabled(w: &World, who: &str) -> String {
    let set = std::fs::read_to_string(w.path(&format!("{who}/packs.yaml"))).unwrap_or_default();
    set.lines()
        .skip_while(|l| !l.starts_with("enabled"))
        .take_while(|l| !l.starts_with("order") && !l.starts_with('#'))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn a_replay_with_three_index_packs_runs_in_a_fresh_profile_after_sync() {
    let (w, game) = a_game_with_three_index_packs();
    let file = game.to_string_lossy().into_owned();
    // It plays as saved where it was made.
    let out = w.player("first", &["replay", &file]);
    assert!(out.status.success(), "{}", text(&out));

    // A fresh profile lacks its packs: the replay cannot be played there as it is.
    w.player_with("second", "index");
    let out = w.player("second", &["replay", &file]);
    assert!(!out.status.success(), "{}", text(&out));

    // --sync gets them by hash into a temporary set and plays it as saved.
    let out = w.player("second", &["replay", &file, "--sync"]);
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    for line in [
        "install alpha 1.0.0 (from index 'main')",
        "install beta 1.0.0 (from index 'main')",
        "install gamma 1.0.0 (from index 'main')",
        "your own packs and enabled set are unchanged",
    ] {
        assert!(t.contains(line), "expected '{line}' in: {t}");
    }
    assert!(
        t.find("get what").unwrap_or(usize::MAX) < t.find("installed alpha").unwrap_or(0),
        "the plan comes first: {t}"
    );
    assert!(w.installed("second").is_empty(), "nothing kept: {t}");
    assert!(!enabled(&w, "second").contains("alpha"), "{t}");

    // --json keeps stdout one JSON object (the plan goes to stderr).
    let out = w.player("second", &["replay", &file, "--sync", "--json"]);
    assert!(out.status.success(), "{}", text(&out));
    let report: Result<serde_json::Value, _> = serde_json::from_slice(&out.stdout);
    assert!(report.is_ok(), "{}", text(&out));

    // --keep installs them and enables the replay's packs; then they are here.
    let out = w.player("second", &["replay", &file, "--sync", "--keep"]);
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    assert_eq!(w.installed("second"), ["alpha", "beta", "gamma"], "{t}");
    let set = enabled(&w, "second");
    for id in ["alpha", "beta", "gamma"] {
        assert!(set.contains(id), "{id} enabled: {set}");
    }
    let out = w.player("second", &["replay", &file, "--sync"]);
    let t = text(&out);
    assert!(
        out.status.success() && t.contains("every pack it names is here"),
        "{t}"
    );
    // --keep only with --sync; --sync not with --packs.
    let out = w.player("second", &["replay", &file, "--keep"]);
    assert!(!out.status.success());
    let out = w.player("second", &["--packs", "alpha", "replay", &file, "--sync"]);
    assert!(
        !out.status.success() && text(&out).contains("does not go with --packs"),
        "{}",
        text(&out)
    );
}

#[test]
fn a_replay_s_hostile_pack_lists_are_refused_and_change_nothing() {
    let (w, game) = a_game_with_three_index_packs();
    w.player_with("victim", "index");
    let pins = || std::fs::read_to_string(w.path("victim/index-pins.json")).unwrap_or_default();
    let pins_before = pins();
    let refused = |name: &str, change: &dyn Fn(&mut serde_json::Value), needle: &str| {
        let path = w.path(name);
        std::fs::copy(&game, &path).unwrap_or_else(|e| panic!("{e}"));
        edit_json(&path, |v| change(v));
        let out = w.player(
            "victim",
            &["replay", &path.to_string_lossy(), "--sync", "--keep"],
        );
        let t = text(&out);
        assert!(!out.status.success(), "{name}: {t}");
        assert!(t.contains(needle), "{name}: expected '{needle}' in: {t}");
        assert!(t.contains("nothing was changed"), "{name}: {t}");
        assert!(
            w.installed("victim").is_empty(),
            "{name}: nothing installed"
        );
        assert_eq!(enabled(&w, "victim"), "", "{name}: the set is untouched");
        assert_eq!(pins(), pins_before, "{name}: no key pinned");
    };
    let gamma = |v: &serde_json::Value| {
        v["packs"]
            .as_array()
            .and_then(|a| a.iter().position(|p| p["id"] == "gamma"))
            .unwrap_or(0)
    };
    refused(
        "other-hash.json",
        &|v| {
            let i = gamma(v);
            v["packs"][i]["hash"] = serde_json::json!("ab".repeat(32));
        },
        "no index has 'gamma' with content hash abababababab",
    );
    refused(
        "not-a-hash.json",
        &|v| {
            let i = gamma(v);
            v["packs"][i]["hash"] = serde_json::json!("../../etc/passwd");
        },
        "its content hash '../../etc/passwd' is not 64 hex digits",
    );
    refused(
        "no-hash.json",
        &|v| {
            let i = gamma(v);
            v["packs"][i]["hash"] = serde_json::Value::Null;
        },
        "names 'gamma' 1.0.0 without a content hash",
    );
    refused(
        "unknown-pack.json",
        &|v| {
            if let Some(a) = v["packs"].as_array_mut() {
                a.push(serde_json::json!({"id": "nosuch", "version": "1.0.0", "hash": "cd".repeat(32)}));
            }
        },
        "no index lists the pack 'nosuch'",
    );
    refused(
        "twice.json",
        &|v| {
            let p = v["packs"][1].clone();
            if let Some(a) = v["packs"].as_array_mut() {
                a.push(p);
            }
        },
        "twice",
    );
    refused(
        "huge.json",
        &|v| {
            if let Some(a) = v["packs"].as_array_mut() {
                for i in 0..300 {
                    a.push(serde_json::json!({"id": format!("p{i}"), "version": "1.0.0", "hash": "cd".repeat(32)}));
                }
            }
        },
        "at most 256 are fetched",
    );
    // The honest replay still works after all that.
    let out = w.player("victim", &["replay", &game.to_string_lossy(), "--sync"]);
    assert!(out.status.success(), "{}", text(&out));
}

/// A scenario about alpha (published in `index`), naming alpha's content hash as `hash`.
fn alpha_scenario(w: &World, name: &str, hash: &str) -> String {
    let path = w.path(name);
    std::fs::write(
        &path,
        format!(
            "name: alpha's card places its token\npacks: [alpha]\npack_hashes: {{ alpha: \"{hash}\" }}\nrules: {{ opening_token: null }}\ndecks:\n  1: [[alpha_card, gift], [weaken_row, push_row], [spawn_row, booster], [push_cross, weaken_ring]]\nmoves:\n  - {{ seat: 1, card: alpha_card, at: [2, 2] }}\nexpect:\n  board:\n    - {{ at: [2, 2], seat: 1, value: 1, type: alpha_token }}\n"
        ),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    path.to_string_lossy().into_owned()
}

#[test]
fn a_scenario_gets_the_packs_it_names_by_hash() {
    let w = published();
    let hash = tokensmith::packs::hash(&w.path("src/alpha")).unwrap_or_else(|e| panic!("{e}"));
    let file = alpha_scenario(&w, "alpha.yaml", &hash);
    w.player_with("tester", "index");
    // Without its pack the scenario cannot run.
    let out = w.player("tester", &["scenario", &file]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let out = w.player("tester", &["scenario", &file, "--sync"]);
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    assert!(
        t.contains("install alpha 1.0.0 (from index 'main')") && t.contains("pass  alpha's card"),
        "{t}"
    );
    assert!(w.installed("tester").is_empty(), "{t}");
    // A hash no index has: refused before anything is fetched.
    let bad = alpha_scenario(&w, "other.yaml", &"ab".repeat(32));
    let out = w.player("tester", &["scenario", &bad, "--sync"]);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(2), "{t}");
    assert!(
        t.contains("no index has 'alpha' with content hash abababababab")
            && t.contains("nothing was changed"),
        "{t}"
    );
    // Kept: installed and enabled.
    let out = w.player("tester", &["scenario", &file, "--sync", "--keep"]);
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    assert_eq!(w.installed("tester"), ["alpha"], "{t}");
    assert!(enabled(&w, "tester").contains("alpha"), "{t}");
}

#[cfg(feature = "client")]
/// The client for the player `who`, with their profile's packs.
fn app_for(w: &World, who: &str) -> tokensmith::app::App {
    let profile_dir = w.path(who);
    crate::client::app_in_profile(&profile_dir, w.path("empty"))
}

#[cfg(feature = "client")]
fn shows(label: &'static str) -> impl Fn(&egui_kittest::Harness<'_, tokensmith::app::App>) -> bool {
    use egui_kittest::kittest::Queryable as _;
    move |h| h.query_by_label_contains(label).is_some()
}

#[cfg(feature = "client")]
#[test]
fn the_replays_screen_gets_a_replay_s_packs_on_a_worker_and_plays_it() {
    use egui_kittest::kittest::Queryable as _;
    let (w, game) = a_game_with_three_index_packs();
    w.player_with("second", "index");
    let replays = w.path("second/replays");
    std::fs::create_dir_all(&replays).unwrap_or_else(|e| panic!("{e}"));
    std::fs::copy(&game, replays.join("shared.json")).unwrap_or_else(|e| panic!("{e}"));
    let mut h = crate::client::harness_for(app_for(&w, "second"));
    h.run();
    h.get_by_label("Replays").click();
    h.run();
    h.get_by_label("Get packs and play shared").click();
    crate::client::run_until(&mut h, "the packs, then the replay", shows("move 0 of"));
    let sandbox = h
        .state()
        .sandbox()
        .unwrap_or_else(|| panic!("the replay is watched"));
    let packs: Vec<String> = sandbox
        .sandbox
        .catalog()
        .packs()
        .iter()
        .map(|p| p.id.clone())
        .collect();
    assert_eq!(packs, ["base", "alpha", "beta", "gamma"]);
    assert!(w.installed("second").is_empty(), "a temporary set only");
    assert!(!enabled(&w, "second").contains("alpha"));
}

/// The client of `who` on the Mods screen's Set tab with `text` pasted.
#[cfg(feature = "client")]
fn pasted_on_the_set_tab(
    w: &World,
    who: &str,
    text: &str,
) -> egui_kittest::Harness<'static, tokensmith::app::App> {
    use egui_kittest::kittest::Queryable as _;
    let mut h = crate::client::harness_for(app_for(w, who));
    h.run();
    h.get_by_label("Mods").click();
    h.run();
    h.get_by_label("Set").click();
    h.run();
    h.get_by_label("paste a shared set").click();
    h.run();
    h.get_by_label("paste a shared set").type_text(text);
    h.run();
    h
}

/// A world where the player "first" installed and enabled beta (which requires alpha),
/// and the lock file of that set.
#[cfg(feature = "client")]
fn beta_locked() -> (World, serde_json::Value) {
    let w = published();
    w.player_with("first", "index");
    for args in [
        &["pack", "install", "beta"][..],
        &["pack", "enable", "beta"],
    ] {
        let out = w.player("first", args);
        assert!(out.status.success(), "{args:?}: {}", text(&out));
    }
    let out = w.player("first", &["pack", "lock"]);
    (w, serde_json::from_slice(&out.stdout).unwrap_or_default())
}

#[cfg(feature = "client")]
#[test]
fn the_mods_screen_shows_who_requires_what_and_shares_and_uses_a_set() {
    use egui_kittest::kittest::{NodeT as _, Queryable as _};
    let (w, locked) = beta_locked();
    let shared = locked.to_string();

    let mut h = crate::client::harness_for(app_for(&w, "first"));
    h.run();
    h.get_by_label("Mods").click();
    h.run();
    assert!(
        h.query_by_label("· required by beta").is_some(),
        "alpha's row says beta requires it"
    );
    h.get_by_label("Set").click();
    h.run();
    assert!(h.query_by_label("beta 1.0.0").is_some(), "the tree's top");
    assert!(h.query_by_label("  alpha 1.0.0").is_some(), "under it");
    h.get_by_label("Share this set").click();
    h.run();
    assert!(
        h.query_by_label_contains("Copied the set to the clipboard")
            .is_some(),
        "shared"
    );
    drop(h);

    w.player_with("second", "index");
    let mut h = pasted_on_the_set_tab(&w, "second", &shared);
    let typed = h
        .get_by_label("paste a shared set")
        .accesskit_node()
        .value()
        .unwrap_or_default();
    assert!(typed.contains("tokensmith-lock"), "pasted: {typed:?}");
    h.get_by_label("Show plan").click();
    crate::client::run_until(
        &mut h,
        "the plan",
        shows("install alpha 1.0.0 (from index 'main')"),
    );
    assert!(w.installed("second").is_empty(), "nothing before Apply");
    h.get_by_label("Apply").click();
    crate::client::run_until(&mut h, "the set applied", shows("Applied the shared set"));
    assert_eq!(w.installed("second"), ["alpha", "beta"]);
    assert!(enabled(&w, "second").contains("beta"));
    crate::client::run_until(&mut h, "the tree read again", |h| {
        h.query_by_label("beta 1.0.0").is_some()
    });
}

/// A pasted set that cannot be used (a pack's hash changed on the way; text that is not a
/// lock file) is refused on the Set tab with what is wrong, Apply stays off, and nothing
/// is installed or turned on.
#[cfg(feature = "client")]
#[test]
fn a_refused_paste_on_the_set_tab_says_why_and_changes_nothing() {
    use egui_kittest::kittest::{NodeT as _, Queryable as _};
    let (w, mut locked) = beta_locked();
    let alpha = locked["packs"]
        .as_array()
        .and_then(|a| a.iter().position(|p| p["id"] == "alpha"))
        .unwrap_or_else(|| panic!("alpha in the lock: {locked}"));
    locked["packs"][alpha]["hash"] = serde_json::json!("ab".repeat(32));
    let tampered = locked.to_string();

    w.player_with("second", "index");
    let before = enabled(&w, "second");
    for (pasted, says) in [
        (tampered.as_str(), "not the abababababab the lock names"),
        ("hello, here is my set", "the pasted set"),
    ] {
        let mut h = pasted_on_the_set_tab(&w, "second", pasted);
        h.get_by_label("Show plan").click();
        crate::client::run_until(&mut h, "the refusal", |h| {
            h.query_by_label_contains(says).is_some()
        });
        assert!(
            h.get_by_label("Apply").accesskit_node().is_disabled(),
            "Apply stays off for a refused set"
        );
        assert!(w.installed("second").is_empty(), "nothing installed");
        assert_eq!(enabled(&w, "second"), before, "nothing turned on");
    }
}
