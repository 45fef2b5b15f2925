//! Pack sets shared and reproduced: a lock file from one profile makes a fresh profile
//! play exactly the same packs (ids, versions, hashes, order); hostile lock files (huge,
//! wrong hashes, unknown indexes, ids twice, orders that do not match, requirements in a
//! cycle) are refused with
//! nothing changed; and the dependency views (`pack why`, `pack tree`, `pack orphans`).

use crate::index::{World, edit_json, published, text};

/// What `pack list --json` says of the packs that play, without folders: id, version,
/// hash, enabled and place in the list.
fn listed(w: &World, who: &str) -> Vec<(String, String, String, bool)> {
    let out = w.player(who, &["pack", "list", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    v["packs"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|p| {
                    (
                        p["id"].as_str().unwrap_or_default().to_string(),
                        p["version"].as_str().unwrap_or_default().to_string(),
                        p["hash"].as_str().unwrap_or_default().to_string(),
                        p["enabled"].as_bool().unwrap_or(false),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

fn order(w: &World, who: &str) -> String {
    text(&w.player(who, &["pack", "order"]))
}

#[test]
fn a_lock_file_reproduces_a_set_exactly_in_a_fresh_profile() {
    let w = published();
    w.pack("gamma", "1.0.0", &[], 3);
    w.publish("gamma", "index");
    w.pack("alpha", "1.1.0", &[], 1);
    w.publish("alpha", "index");
    w.player_with("first", "index");
    for args in [
        &["pack", "install", "alpha@1.0.0"][..],
        &["pack", "install", "beta"],
        &["pack", "install", "gamma"],
        &["pack", "enable", "beta"],
        &["pack", "enable", "gamma"],
        &["pack", "order", "gamma"],
    ] {
        let out = w.player("first", args);
        assert!(out.status.success(), "{args:?}: {}", text(&out));
    }
    let lock = w.path("set.lock");
    let out = w.player("first", &["pack", "lock", "--out", &lock.to_string_lossy()]);
    assert!(out.status.success(), "{}", text(&out));
    let locked = std::fs::read_to_string(&lock).unwrap_or_default();
    assert!(
        locked.len() < 4096,
        "small enough to paste: {} bytes",
        locked.len()
    );
    assert!(locked.contains("\"version\": \"1.0.0\""), "{locked}");

    w.player_with("second", "index");
    let out = w.player("second", &["pack", "sync", &lock.to_string_lossy()]);
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    assert!(
        t.contains("plan:") && t.contains("install alpha 1.0.0"),
        "{t}"
    );
    assert_eq!(listed(&w, "first"), listed(&w, "second"));
    assert_eq!(order(&w, "first"), order(&w, "second"));
    // Synced again: nothing to install.
    let out = w.player("second", &["pack", "sync", &lock.to_string_lossy()]);
    assert!(
        out.status.success() && !text(&out).contains("install "),
        "{}",
        text(&out)
    );

    // A profile with other versions and more packs on is brought to the lock too.
    w.player_with("third", "index");
    for args in [
        &["pack", "install", "alpha"][..],
        &["pack", "enable", "alpha"],
    ] {
        assert!(w.player("third", args).status.success());
    }
    let out = w.player("third", &["pack", "sync", &lock.to_string_lossy()]);
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    assert!(t.contains("downgrade alpha 1.1.0 -> 1.0.0"), "{t}");
    assert_eq!(listed(&w, "first"), listed(&w, "third"));
}

#[test]
fn hostile_lock_files_are_refused_and_change_nothing() {
    let w = published();
    w.player_with("first", "index");
    for args in [
        &["pack", "install", "beta"][..],
        &["pack", "enable", "beta"],
    ] {
        assert!(w.player("first", args).status.success());
    }
    let lock = w.path("set.lock");
    assert!(
        w.player("first", &["pack", "lock", "--out", &lock.to_string_lossy()])
            .status
            .success()
    );
    w.player_with("victim", "index");
    let before = listed(&w, "victim");
    let refused = |name: &str, change: &dyn Fn(&mut serde_json::Value), needle: &str| {
        let path = w.path(name);
        std::fs::copy(&lock, &path).unwrap_or_else(|e| panic!("{e}"));
        edit_json(&path, |v| change(v));
        let out = w.player("victim", &["pack", "sync", &path.to_string_lossy()]);
        let t = text(&out);
        assert!(!out.status.success(), "{name}: {t}");
        assert!(t.contains(needle), "{name}: expected '{needle}' in: {t}");
        assert_eq!(listed(&w, "victim"), before, "{name}: nothing changed");
    };
    let first_installed = |v: &serde_json::Value| {
        v["packs"]
            .as_array()
            .and_then(|a| a.iter().position(|p| p["source"] == "installed"))
            .unwrap_or(0)
    };
    refused(
        "wrong-hash.lock",
        &|v| {
            let i = first_installed(v);
            v["packs"][i]["hash"] = serde_json::json!("ab".repeat(32));
        },
        "not the abababababab the lock names",
    );
    refused(
        "unknown-index.lock",
        &|v| {
            let i = first_installed(v);
            v["packs"][i]["index"] = serde_json::json!("https://evil.invalid/index/");
        },
        "which this profile does not list",
    );
    refused(
        "twice.lock",
        &|v| {
            let p = v["packs"][0].clone();
            if let Some(a) = v["packs"].as_array_mut() {
                a.push(p);
            }
        },
        "twice",
    );
    refused(
        "order.lock",
        &|v| {
            if let Some(a) = v["order"].as_array_mut() {
                let first = a[0].clone();
                a.push(first);
            }
        },
        "its order names",
    );
    refused(
        "not-a-lock.lock",
        &|v| v["format"] = serde_json::json!("something-else"),
        "is 'something-else', not 'tokensmith-lock'",
    );
    // Huge: refused before it is parsed.
    let huge = w.path("huge.lock");
    std::fs::write(&huge, vec![b' '; 2 * 1024 * 1024]).unwrap_or_else(|e| panic!("{e}"));
    let out = w.player("victim", &["pack", "sync", &huge.to_string_lossy()]);
    assert!(!out.status.success());
    assert!(
        text(&out).contains("the most read for a lock file is 1048576"),
        "{}",
        text(&out)
    );
    assert_eq!(listed(&w, "victim"), before);

    // Requirements in a cycle: the index's owner signs alpha 1.0.0 again as requiring
    // beta, which requires alpha. A lock naming both from that index is refused before
    // any archive is read, and nothing changes.
    let key = w.author_key();
    w.copy_index("index", "cycle", |dir| {
        edit_json(&dir.join("packs/alpha.json"), |v| {
            v["versions"][0]["requires"] = serde_json::json!([{ "id": "beta", "version": "^1" }]);
            let entry: tokensmith::index::Entry =
                serde_json::from_value(v["versions"][0].clone()).unwrap_or_else(|e| panic!("{e}"));
            v["versions"][0]["signature"] =
                serde_json::json!(tokensmith::index::keys::sign(&key, &entry.message("alpha")));
        });
    });
    w.player_with("circular", "cycle");
    let before = listed(&w, "circular");
    let index = w.path("index").to_string_lossy().into_owned();
    let cycle = w.path("cycle").to_string_lossy().into_owned();
    let path = w.path("cycle.lock");
    std::fs::copy(&lock, &path).unwrap_or_else(|e| panic!("{e}"));
    let mut moved = 0;
    edit_json(&path, |v| {
        for p in v["packs"].as_array_mut().into_iter().flatten() {
            if p["index"]
                .as_str()
                .is_some_and(|i| i.trim_end_matches('/') == index)
            {
                p["index"] = serde_json::json!(cycle);
                moved += 1;
            }
        }
    });
    assert_eq!(moved, 2, "alpha and beta come from the index");
    let out = w.player("circular", &["pack", "sync", &path.to_string_lossy()]);
    let t = text(&out);
    assert!(!out.status.success(), "{t}");
    assert!(
        t.contains("the packs' requirements form a cycle") && t.contains("nothing was changed"),
        "{t}"
    );
    assert_eq!(listed(&w, "circular"), before, "nothing changed");
    assert!(w.installed("circular").is_empty(), "{t}");
}

#[test]
fn why_tree_and_orphans_show_who_needs_what() {
    let w = published();
    w.player_with("player", "index");
    for args in [
        &["pack", "install", "beta"][..],
        &["pack", "enable", "beta"],
    ] {
        let out = w.player("player", args);
        assert!(out.status.success(), "{}", text(&out));
    }
    let out = w.player("player", &["pack", "why", "alpha"]);
    assert!(text(&out).contains("beta requires alpha"), "{}", text(&out));
    let out = w.player("player", &["pack", "tree"]);
    let t = text(&out);
    assert!(
        t.starts_with("beta 1.0.0\n") && t.contains("\n  alpha 1.0.0\n"),
        "{t}"
    );
    let out = w.player("player", &["pack", "orphans"]);
    assert!(text(&out).contains("no orphans"), "{}", text(&out));
    // beta goes: alpha was only there for it.
    let out = w.player("player", &["pack", "remove", "beta"]);
    assert!(out.status.success(), "{}", text(&out));
    let out = w.player("player", &["pack", "orphans"]);
    assert!(
        text(&out).contains("alpha: installed as a requirement"),
        "{}",
        text(&out)
    );
    let out = w.player("player", &["pack", "orphans", "--remove"]);
    assert!(
        out.status.success() && text(&out).contains("removed alpha"),
        "{}",
        text(&out)
    );
    assert!(w.installed("player").is_empty());
    // A pack asked for by name is never an orphan.
    let out = w.player("player", &["pack", "install", "alpha"]);
    assert!(out.status.success(), "{}", text(&out));
    let out = w.player("player", &["pack", "orphans"]);
    assert!(text(&out).contains("no orphans"), "{}", text(&out));
    let out = w.player("player", &["pack", "why", "nothere"]);
    assert!(!out.status.success());
}

#[test]
fn bisect_finds_a_planted_breaking_pack_among_sixteen_in_five_runs() {
    let w = World::new();
    for i in 0..16 {
        w.pack(&format!("p{i:02}"), "1.0.0", &[], 1);
    }
    // p11 breaks: its card names an ability no pack has (loaded alone it is an error;
    // the packs before it in the load order are fine).
    let broken = w.path("src/p11/content.yaml");
    let text_before = std::fs::read_to_string(&broken).unwrap_or_default();
    std::fs::write(
        &broken,
        text_before.replace(
            "token: p11_token,",
            "token: p11_token, ability: no_such_ability,",
        ),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    for i in 0..16 {
        let out = w.run("src", "bisector", &["pack", "enable", &format!("p{i:02}")]);
        assert!(out.status.success(), "{}", text(&out));
    }
    let out = w.run("src", "bisector", &["pack", "bisect"]);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(1), "{t}");
    assert!(
        t.contains("the first pack whose set fails: p11 1.0.0"),
        "{t}"
    );
    let runs = t.lines().filter(|l| l.starts_with("run ")).count();
    assert!(runs <= 5, "{runs} runs: {t}");
    // Known good packs are left out of the search; a set that passes says so.
    std::fs::write(&broken, text_before).unwrap_or_else(|e| panic!("{e}"));
    let out = w.run("src", "bisector", &["pack", "bisect", "--good", "p00,p01"]);
    let t = text(&out);
    assert!(
        out.status.success() && t.contains("every pack that plays passes"),
        "{t}"
    );
    assert!(t.contains("of 14 packs"), "{t}");
}

#[test]
fn bisect_finds_the_pack_that_makes_a_scenario_fail_among_sixteen_in_five_runs() {
    let w = World::new();
    for i in 0..16 {
        w.pack(&format!("p{i:02}"), "1.0.0", &[], 1);
    }
    // p05 breaks: its card names an ability no pack has, so a scenario that loads it
    // cannot run.
    let broken = w.path("src/p05/content.yaml");
    let before = std::fs::read_to_string(&broken).unwrap_or_default();
    std::fs::write(
        &broken,
        before.replace(
            "token: p05_token,",
            "token: p05_token, ability: no_such_ability,",
        ),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    for i in 0..16 {
        let out = w.run("src", "bisector", &["pack", "enable", &format!("p{i:02}")]);
        assert!(out.status.success(), "{}", text(&out));
    }
    let scenario = w.path("spawn.yaml");
    std::fs::write(
        &scenario,
        "name: spawn_row plays on an empty board\nrules: { opening_token: null }\nmoves:\n  - { seat: 1, card: spawn_row, at: [2, 2] }\n",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let file = scenario.to_string_lossy().into_owned();
    // It passes alone.
    let out = w.run("src", "bisector", &["scenario", &file]);
    assert!(out.status.success(), "{}", text(&out));
    let out = w.run("src", "bisector", &["pack", "bisect", "--scenario", &file]);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(1), "{t}");
    assert!(
        t.contains("the first pack whose set fails: p05 1.0.0"),
        "{t}"
    );
    assert!(t.contains("fails (the scenario cannot run"), "{t}");
    let runs = t.lines().filter(|l| l.starts_with("run ")).count();
    assert!(runs <= 5, "{runs} runs: {t}");
    // Fixed, the scenario passes with every pack.
    std::fs::write(&broken, before).unwrap_or_else(|e| panic!("{e}"));
    let out = w.run("src", "bisector", &["pack", "bisect", "--scenario", &file]);
    let t = text(&out);
    assert!(
        out.status.success() && t.contains("nothing to find (the scenario passes)"),
        "{t}"
    );
}
