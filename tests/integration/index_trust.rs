//! What an index install promises, attacked: an archive is the pack its signed entry
//! names (id, version, requirements) or nothing is installed; pins survive two installs at
//! once and a kill at any moment; plans are bounded; nothing is written through links; and
//! the owner's snapshot and timestamp refuse an old listing (rollback), a frozen one
//! (expired), files not in the snapshot (mix-and-match) and unsigned yanks. Players can go
//! back (`ID@VERSION` downgrades, `pack rollback`), see yanked versions with the way out,
//! and follow an author's key move while a stranger's key is still refused.

use std::path::Path;

use tokensmith::index::{Entry, PackFile, fresh, keys};

use crate::index::{World, edit_json, published, text};

/// Rewrite `packs/ID.json` of `index` through `change` with each version signed again
/// by `key`, then sign the index as its owner.
fn resigned(
    w: &World,
    index: &str,
    id: &str,
    key: &ed25519_dalek::SigningKey,
    change: impl FnOnce(&mut PackFile),
) {
    let path = w.path(&format!("{index}/packs/{id}.json"));
    let mut file: PackFile =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap_or_default())
            .unwrap_or_else(|e| panic!("{e}"));
    change(&mut file);
    for e in &mut file.versions {
        e.signature = keys::sign(key, &e.message(id));
    }
    std::fs::write(&path, serde_json::to_vec_pretty(&file).unwrap_or_default())
        .unwrap_or_else(|e| panic!("{e}"));
    let summary = w.path(&format!("{index}/summary.json"));
    edit_json(&summary, |_| {});
    w.sign_index(index);
}

/// Copy the listing files of the index folder `from` over those of `to`: what a host
/// serving an older (or newer) listing of the same index sends.
fn copy_listing(w: &World, from: &str, to: &str) {
    for f in [
        "index.json",
        "summary.json",
        "snapshot.json",
        "timestamp.json",
        "packs/alpha.json",
    ] {
        std::fs::copy(w.path(&format!("{from}/{f}")), w.path(&format!("{to}/{f}")))
            .unwrap_or_else(|e| panic!("{e}"));
    }
}

fn pins(w: &World, who: &str) -> serde_json::Value {
    let text =
        std::fs::read_to_string(w.path(&format!("{who}/index-pins.json"))).unwrap_or_default();
    serde_json::from_str(&text).unwrap_or(serde_json::Value::Null)
}

#[test]
fn an_archive_holding_another_pack_than_its_signed_entry_is_refused_before_unpacking() {
    let w = published();
    // The author M of `beta` ships, as beta 2.0.0, an archive that holds `alpha` 9.0.0.
    w.pack("alpha", "9.0.0", &[], 9);
    w.publish("alpha", "evil");
    let key = w.author_key();
    std::fs::copy(
        w.path("evil/archives/alpha-9.0.0.zip"),
        w.path("index/archives/beta-2.0.0.zip"),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let bytes = std::fs::read(w.path("index/archives/beta-2.0.0.zip")).unwrap_or_default();
    let alpha9: PackFile = serde_json::from_str(
        &std::fs::read_to_string(w.path("evil/packs/alpha.json")).unwrap_or_default(),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    resigned(&w, "index", "beta", &key, |f| {
        let mut two: Entry = f.versions[0].clone();
        two.version = "2.0.0".into();
        two.archive = "archives/beta-2.0.0.zip".into();
        two.sha256 = tokensmith::index::sha256(&bytes);
        two.size = bytes.len() as u64;
        two.hash = alpha9.versions[0].hash.clone();
        f.versions.push(two);
    });
    w.player_with("player", "index");
    let out = w.player("player", &["pack", "install", "alpha@1.0.0"]);
    assert!(out.status.success(), "{}", text(&out));
    let out = w.player("player", &["pack", "install", "beta"]);
    let t = text(&out);
    assert!(!out.status.success(), "{t}");
    assert!(
        t.contains(
            "its archive holds the pack 'alpha' 9.0.0, not the beta 2.0.0 its signed entry names"
        ) && t.contains("nothing was installed"),
        "{t}"
    );
    assert_eq!(w.installed("player"), ["alpha"]);
    let manifest =
        std::fs::read_to_string(w.path("player/packs/alpha/pack.yaml")).unwrap_or_default();
    assert!(
        manifest.contains("version: 1.0.0"),
        "alpha untouched: {manifest}"
    );

    // Requirements that differ from the signed entry's: refused too.
    w.pack("alpha", "1.0.0", &[], 1);
    w.pack("gamma", "1.0.0", &[("alpha", "^1")], 3);
    w.publish("gamma", "index");
    resigned(&w, "index", "gamma", &key, |f| {
        f.versions[0].requires.clear()
    });
    let out = w.player("player", &["pack", "install", "gamma"]);
    let t = text(&out);
    assert!(!out.status.success(), "{t}");
    assert!(
        t.contains(
            "its archive's pack.yaml requires alpha ^1, base ^1, but its signed entry says nothing"
        ),
        "{t}"
    );
    assert_eq!(w.installed("player"), ["alpha"]);
}

#[test]
fn two_installs_at_once_keep_both_pins_and_a_kill_never_leaves_a_pack_without_its_pin() {
    let w = published();
    w.pack("gamma", "1.0.0", &[], 3);
    w.publish("gamma", "index");
    for round in 0..4 {
        let who = format!("racer{round}");
        w.player_with(&who, "index");
        let a = w.player_spawn(&who, &["pack", "install", "alpha"]);
        let b = w.player_spawn(&who, &["pack", "install", "gamma"]);
        for child in [a, b] {
            let out = child.wait_with_output().unwrap_or_else(|e| panic!("{e}"));
            assert!(out.status.success(), "{}", text(&out));
        }
        let p = pins(&w, &who);
        assert!(
            p["packs"]["alpha"].is_string() && p["packs"]["gamma"].is_string(),
            "round {round}: both pins kept: {p}"
        );
    }
    // Kills at spread-out moments of an install of beta with alpha: whatever is on disk
    // after each, every installed pack has its pin.
    for (i, delay) in [0u64, 5, 10, 20, 30, 45, 60, 80, 110, 150, 200, 300]
        .iter()
        .enumerate()
    {
        let who = format!("killed{i}");
        w.player_with(&who, "index");
        let mut child = w.player_spawn(&who, &["pack", "install", "beta"]);
        std::thread::sleep(std::time::Duration::from_millis(*delay));
        let _ = child.kill();
        let _ = child.wait();
        let p = pins(&w, &who);
        for id in w.installed(&who) {
            if id == "packs-previous" {
                continue;
            }
            assert!(
                p["packs"][&id].is_string(),
                "kill after {delay} ms: {id} has no pin: {p}"
            );
        }
        // And the next command finishes the job with the same key.
        let out = w.player(&who, &["pack", "install", "beta"]);
        assert!(out.status.success(), "{}", text(&out));
    }
}

#[test]
fn wide_requirement_trees_are_refused_quickly_with_a_message() {
    let w = published();
    let key = w.author_key();
    // 300 packs, each requiring the next 64 of a tree three deep: refused by the plan's
    // bound on its total, fast.
    let count = 300;
    w.copy_index("index", "wide", |dir| {
        let alpha: PackFile = serde_json::from_str(
            &std::fs::read_to_string(dir.join("packs/alpha.json")).unwrap_or_default(),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        for i in 0..count {
            let id = format!("w{i:03}");
            let mut e = alpha.versions[0].clone();
            e.archive = format!("archives/{id}-1.0.0.zip");
            e.requires = (i * 64 + 1..(i * 64 + 65).min(count))
                .map(|j| tokensmith::index::Requires {
                    id: format!("w{j:03}"),
                    version: "*".into(),
                })
                .collect();
            e.signature = keys::sign(&key, &e.message(&id));
            let file = PackFile {
                id: id.clone(),
                name: id.clone(),
                description: String::new(),
                versions: vec![e],
            };
            std::fs::write(
                dir.join(format!("packs/{id}.json")),
                serde_json::to_vec(&file).unwrap_or_default(),
            )
            .unwrap_or_else(|e| panic!("{e}"));
        }
        let mut summary: tokensmith::index::SummaryFile = serde_json::from_str(
            &std::fs::read_to_string(dir.join("summary.json")).unwrap_or_default(),
        )
        .unwrap_or_default();
        for i in 0..count {
            let id = format!("w{i:03}");
            summary.packs.push(tokensmith::index::Summary {
                id: id.clone(),
                name: id,
                description: String::new(),
                latest: Some("1.0.0".into()),
                versions: vec!["1.0.0".into()],
            });
        }
        std::fs::write(
            dir.join("summary.json"),
            serde_json::to_vec(&summary).unwrap_or_default(),
        )
        .unwrap_or_else(|e| panic!("{e}"));
    });
    w.player_with("player", "wide");
    let started = std::time::Instant::now();
    w.refused(
        "player",
        &["w000"],
        "the plan would install more than 256 packs",
    );
    assert!(
        started.elapsed().as_secs() < 20,
        "refused in {:?}",
        started.elapsed()
    );
}

#[test]
fn publishing_through_links_and_to_web_addresses_is_refused() {
    let w = published();
    #[cfg(unix)]
    {
        let outside = w.path("outside");
        std::fs::create_dir_all(&outside).unwrap_or_else(|e| panic!("{e}"));
        w.copy_index_unsigned("index", "linked", |dir| {
            std::fs::remove_dir_all(dir.join("archives")).unwrap_or_else(|e| panic!("{e}"));
            std::os::unix::fs::symlink(&outside, dir.join("archives"))
                .unwrap_or_else(|e| panic!("{e}"));
        });
        w.pack("alpha", "1.5.0", &[], 1);
        let out = w.publish_as("author", "alpha", "linked");
        let t = text(&out);
        assert!(!out.status.success(), "{t}");
        assert!(t.contains("must be real folders inside it"), "{t}");
        assert_eq!(
            std::fs::read_dir(&outside)
                .map(Iterator::count)
                .unwrap_or(0),
            0,
            "nothing written outside"
        );
    }
    let out = w.run(
        "src",
        "author",
        &[
            "pack",
            "publish",
            &w.path("src/alpha").to_string_lossy(),
            "--index",
            "http://example.invalid/idx",
        ],
    );
    let t = text(&out);
    assert!(
        !out.status.success() && t.contains("is a web address: publish into a folder"),
        "{t}"
    );
    assert!(!Path::new("http:").exists());
}

#[test]
fn a_missing_key_file_is_said_once_and_nothing_is_installed() {
    let w = published();
    // Versions signed by a key whose public file the index lacks.
    let stranger = ed25519_dalek::SigningKey::from_bytes(&[7u8; 32]);
    let stranger_id = keys::key_id(&stranger.verifying_key());
    w.copy_index_unsigned("index", "keyless", |_| {});
    resigned(&w, "keyless", "alpha", &stranger, |f| {
        for e in &mut f.versions {
            e.key = stranger_id.clone();
        }
    });
    w.player_with("player", "keyless");
    let out = w.player("player", &["pack", "install", "alpha"]);
    let t = text(&out);
    assert!(!out.status.success(), "{t}");
    assert_eq!(t.matches("it is not there").count(), 1, "{t}");
    assert!(t.contains("nothing was installed"), "{t}");
    assert!(w.installed("player").is_empty());
}

#[test]
fn old_frozen_and_mixed_listings_are_refused_and_seen_versions_only_grow() {
    let w = published();
    w.player_with("player", "index");
    // Keep the index as it is now, then publish a new version.
    w.copy_index_unsigned("index", "old", |_| {});
    w.pack("alpha", "1.1.0", &[], 1);
    w.publish("alpha", "index");
    w.copy_index_unsigned("index", "new", |_| {});
    let out = w.player("player", &["pack", "search", "alpha"]);
    assert!(text(&out).contains("alpha 1.1.0"), "{}", text(&out));
    // Rollback: the host serves the older, validly signed copy.
    copy_listing(&w, "old", "index");
    let out = w.player("player", &["pack", "install", "alpha"]);
    let t = text(&out);
    assert!(!out.status.success(), "{t}");
    assert!(
        t.contains("older than the version") && t.contains("rollback"),
        "{t}"
    );
    assert!(w.installed("player").is_empty());
    // The host serves the current files again, and the owner publishes: fresh again.
    copy_listing(&w, "new", "index");
    w.pack("alpha", "1.2.0", &[], 1);
    w.publish("alpha", "index");
    let out = w.player("player", &["pack", "install", "alpha"]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        text(&out).contains("installed alpha 1.2.0"),
        "{}",
        text(&out)
    );

    // Mix-and-match: a pack file that is not in the snapshot, and one changed after it.
    w.pack("delta", "1.0.0", &[], 4);
    w.copy_index_unsigned("index", "mixed", |_| {});
    w.publish("delta", "mixed");
    let stale = w.path("mixed/snapshot.json");
    std::fs::copy(w.path("index/snapshot.json"), &stale).unwrap_or_else(|e| panic!("{e}"));
    std::fs::copy(
        w.path("index/timestamp.json"),
        w.path("mixed/timestamp.json"),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    std::fs::copy(w.path("index/summary.json"), w.path("mixed/summary.json"))
        .unwrap_or_else(|e| panic!("{e}"));
    w.player_with("mixer", "mixed");
    let out = w.player("mixer", &["pack", "install", "delta"]);
    let t = text(&out);
    assert!(!out.status.success(), "{t}");
    assert!(
        t.contains("no index lists the pack 'delta'"),
        "delta is not in the snapshot: {t}"
    );
    edit_json(&w.path("mixed/packs/alpha.json"), |v| {
        v["description"] = serde_json::json!("changed after signing");
    });
    let out = w.player("mixer", &["pack", "install", "alpha"]);
    let t = text(&out);
    assert!(!out.status.success(), "{t}");
    assert!(
        t.contains("packs/alpha.json is not the one the owner's signed snapshot"),
        "{t}"
    );

    // Freeze: a timestamp past its expiry warns for a week, then is refused.
    let key = w.author_key();
    let expire = |days_ago: u64| {
        let path = w.path("index/timestamp.json");
        let mut t: fresh::Timestamp =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap_or_default())
                .unwrap_or_default();
        t.version += 1;
        t.expires = fresh::now() - days_ago * 86_400;
        t.signature = keys::sign(&key, &t.message());
        std::fs::write(&path, serde_json::to_vec(&t).unwrap_or_default())
            .unwrap_or_else(|e| panic!("{e}"));
    };
    expire(2);
    let out = w.player("player", &["pack", "search", "alpha"]);
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    assert!(
        t.contains("its timestamp expired on") && t.contains("refresh-timestamp"),
        "{t}"
    );
    expire(8);
    let out = w.player("player", &["pack", "outdated"]);
    let t = text(&out);
    assert!(t.contains("frozen"), "{t}");
    // Renewed by its owner: fine again.
    let out = w.run(
        "src",
        "author",
        &[
            "index",
            "refresh-timestamp",
            &w.path("index").to_string_lossy(),
        ],
    );
    assert!(out.status.success(), "{}", text(&out));
    let out = w.player("player", &["pack", "outdated"]);
    assert!(
        out.status.success() && !text(&out).contains("expired"),
        "{}",
        text(&out)
    );

    // Stripped of its owner's signature: refused once one was seen.
    w.copy_index_unsigned("index", "stripped", |dir| {
        std::fs::write(
            dir.join("index.json"),
            r#"{"format": "tokensmith-index", "version": 1}"#,
        )
        .unwrap_or_else(|e| panic!("{e}"));
    });
    let state = w.path("player/index-state/main.json");
    let before = std::fs::read_to_string(&state).unwrap_or_default();
    let out = w.player("player", &["index", "remove", "main"]);
    assert!(out.status.success());
    std::fs::create_dir_all(w.path("player/index-state")).ok();
    std::fs::write(&state, before).unwrap_or_else(|e| panic!("{e}"));
    let sources = w.path("player/indexes.json");
    std::fs::write(
        &sources,
        serde_json::json!({"indexes": [{"name": "main", "location": w.path("stripped").to_string_lossy()}]}).to_string(),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let out = w.player("player", &["pack", "outdated"]);
    let t = text(&out);
    assert!(
        t.contains("was signed by its owner before, and now has no owner"),
        "{t}"
    );
}

#[test]
fn unsigned_yanks_are_refused_and_yanked_installed_versions_show_the_way_out() {
    let w = published();
    w.player_with("player", "index");
    let out = w.player("player", &["pack", "install", "beta"]);
    assert!(out.status.success(), "{}", text(&out));
    // A yank mark the author did not sign (the owner re-signed the snapshot).
    w.copy_index("index", "forged", |dir| {
        edit_json(&dir.join("packs/alpha.json"), |v| {
            v["versions"][0]["yanked"] = serde_json::json!(true);
        });
    });
    w.player_with("other", "forged");
    let out = w.player("other", &["pack", "install", "alpha"]);
    let t = text(&out);
    assert!(
        !out.status.success()
            && t.contains("the yank of alpha 1.0.0 is not signed by its author's key"),
        "{t}"
    );

    // The author publishes 1.1.0 and yanks it after the player updated: every view says
    // so, with the way back.
    w.pack("alpha", "1.1.0", &[], 1);
    w.publish("alpha", "index");
    let out = w.player("player", &["pack", "update", "alpha"]);
    assert!(out.status.success(), "{}", text(&out));
    w.author(&[
        "pack",
        "yank",
        "alpha@1.1.0",
        "--index",
        &w.path("index").to_string_lossy(),
    ]);
    let out = w.player("player", &["pack", "outdated"]);
    let t = text(&out);
    assert!(
        t.contains("alpha 1.1.0 is yanked by its author")
            && t.contains("tokensmith pack install alpha@1.0.0"),
        "{t}"
    );
    let out = w.player("player", &["pack", "list"]);
    let t = text(&out);
    assert!(
        t.contains("yanked: alpha 1.1.0 is yanked by its author"),
        "{t}"
    );
    let out = w.player("player", &["pack", "list", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    let alpha = v["packs"]
        .as_array()
        .and_then(|p| p.iter().find(|p| p["id"] == "alpha"))
        .cloned();
    assert!(alpha.is_some_and(|a| a["yanked"].is_string()), "{v}");
    // The way out: exactly 1.0.0, a downgrade; then rollback goes back and forth.
    let out = w.player("player", &["pack", "install", "alpha@1.0.0"]);
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    assert!(
        t.contains("downgrade alpha 1.1.0 -> 1.0.0")
            && t.contains("downgraded alpha 1.1.0 -> 1.0.0"),
        "{t}"
    );
    let version =
        || std::fs::read_to_string(w.path("player/packs/alpha/pack.yaml")).unwrap_or_default();
    assert!(version().contains("version: 1.0.0"));
    let out = w.player("player", &["pack", "rollback", "alpha"]);
    assert!(
        out.status.success() && text(&out).contains("rolled alpha back from 1.0.0 to 1.1.0"),
        "{}",
        text(&out)
    );
    assert!(version().contains("version: 1.1.0"));
    let out = w.player("player", &["pack", "rollback", "alpha"]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(version().contains("version: 1.0.0"));
    let out = w.player("player", &["pack", "rollback", "beta"]);
    assert!(
        !out.status.success() && text(&out).contains("no earlier version of 'beta' is kept"),
        "{}",
        text(&out)
    );
    // Asking for the installed version exactly changes nothing.
    let out = w.player("player", &["pack", "install", "alpha@1.0.0"]);
    assert!(
        out.status.success() && text(&out).contains("installed already"),
        "{}",
        text(&out)
    );
}

#[test]
fn a_key_move_signed_by_the_pinned_key_is_followed_and_revoked_keys_are_refused() {
    let w = published();
    w.player_with("player", "index");
    let out = w.player("player", &["pack", "install", "alpha"]);
    assert!(out.status.success(), "{}", text(&out));
    let old_id = keys::key_id(&w.author_key().verifying_key());
    w.author(&["key", "rotate"]);
    w.pack("alpha", "1.1.0", &[], 1);
    let out = w.publish_as("author", "alpha", "index");
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    // Players follow the move without --accept-new-key.
    let out = w.player("player", &["pack", "update", "alpha"]);
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    assert!(
        t.contains(&format!("its author moved from the key {old_id}"))
            && t.contains("updated alpha 1.0.0 -> 1.1.0"),
        "{t}"
    );
    let new_id = keys::key_id(&w.author_key().verifying_key());
    let pinned = pins(&w, "player")["packs"]["alpha"]
        .as_str()
        .map(str::to_string)
        .unwrap_or_default();
    assert_eq!(
        pinned,
        keys::public_hex(&w.author_key().verifying_key()),
        "the new key is pinned"
    );

    // The author revokes the old key: a player who pinned it is no longer led through it.
    w.player_with("late", "index");
    let out = w.player("late", &["pack", "install", "alpha@1.0.0"]);
    assert!(out.status.success(), "{}", text(&out));
    w.author(&[
        "key",
        "revoke",
        &old_id,
        "--index",
        &w.path("index").to_string_lossy(),
    ]);
    let out = w.player("late", &["pack", "update", "alpha"]);
    let t = text(&out);
    assert!(!out.status.success(), "{t}");
    assert!(
        t.contains(&format!("through the revoked key {old_id}")),
        "{t}"
    );
    // Versions signed by the revoked key are refused for new installs too.
    w.player_with("fresh", "index");
    let out = w.player("fresh", &["pack", "install", "alpha@1.0.0"]);
    let t = text(&out);
    assert!(
        !out.status.success() && t.contains("which is revoked"),
        "{t}"
    );
    let _ = new_id;
}

#[test]
fn an_index_over_http_that_rolls_back_is_refused() {
    let w = published();
    let server = crate::index::Server::new(&w.path("index"));
    let out = w.player("player", &["index", "add", "web", &server.url("")]);
    assert!(out.status.success(), "{}", text(&out));
    w.copy_index_unsigned("index", "old", |_| {});
    w.pack("alpha", "1.1.0", &[], 1);
    w.publish("alpha", "index");
    let out = w.player("player", &["pack", "search", "alpha"]);
    assert!(text(&out).contains("alpha 1.1.0"), "{}", text(&out));
    // The server now sends the older, validly signed files.
    copy_listing(&w, "old", "index");
    let out = w.player("player", &["pack", "install", "alpha"]);
    let t = text(&out);
    assert!(!out.status.success(), "{t}");
    assert!(t.contains("a rollback"), "{t}");
    assert!(w.installed("player").is_empty());
}

#[cfg(feature = "client")]
#[test]
fn the_browse_tab_marks_a_yanked_installed_version_and_goes_to_the_way_out() {
    use egui_kittest::kittest::Queryable as _;
    use tokensmith::app::App;

    let w = published();
    w.player_with("player", "index");
    let out = w.player("player", &["pack", "install", "alpha"]);
    assert!(out.status.success(), "{}", text(&out));
    w.pack("alpha", "1.1.0", &[], 1);
    w.publish("alpha", "index");
    let out = w.player("player", &["pack", "update", "alpha"]);
    assert!(out.status.success(), "{}", text(&out));
    w.author(&[
        "pack",
        "yank",
        "alpha@1.1.0",
        "--index",
        &w.path("index").to_string_lossy(),
    ]);
    let mut h = browse(&w, "player", "alpha");
    let ready = |label: &'static str| {
        move |h: &egui_kittest::Harness<'_, App>| h.query_by_label_contains(label).is_some()
    };
    crate::client::run_until(&mut h, "the search", ready("alpha  1.0.0"));
    h.get_by_label_contains("alpha  1.0.0").click();
    crate::client::run_until(
        &mut h,
        "the pack's versions",
        ready("is yanked by its author"),
    );
    assert!(
        h.query_by_label_contains("1.1.0 is yanked by its author")
            .is_some()
    );
    h.get_by_label("Go back to 1.0.0").click();
    crate::client::run_until(&mut h, "the install", ready("Installed: 1.0.0"));
    let manifest =
        std::fs::read_to_string(w.path("player/packs/alpha/pack.yaml")).unwrap_or_default();
    assert!(manifest.contains("version: 1.0.0"), "{manifest}");
}

#[cfg(feature = "client")]
#[test]
fn checking_a_newer_version_of_an_installed_pack_against_my_packs_works() {
    use egui_kittest::kittest::Queryable as _;
    use tokensmith::app::App;

    let w = published();
    w.player_with("player", "index");
    let out = w.player("player", &["pack", "install", "alpha"]);
    assert!(out.status.success(), "{}", text(&out));
    w.pack("alpha", "1.1.0", &[], 1);
    w.publish("alpha", "index");
    let mut h = browse(&w, "player", "alpha");
    let ready = |label: &'static str| {
        move |h: &egui_kittest::Harness<'_, App>| h.query_by_label_contains(label).is_some()
    };
    crate::client::run_until(&mut h, "the search", ready("alpha  1.1.0"));
    h.get_by_label_contains("alpha  1.1.0").click();
    crate::client::run_until(&mut h, "the pack's versions", ready("Installed: 1.0.0"));
    h.get_by_label("Check against my packs").click();
    crate::client::run_until(
        &mut h,
        "the check",
        ready("Checked: signatures and hashes match"),
    );
    assert!(h.query_by_label_contains("already used").is_none());
}

/// The client of the player `who` of `w`, on the Mods screen's Browse tab, having searched
/// for `query`.
#[cfg(feature = "client")]
fn browse(
    w: &World,
    who: &str,
    query: &str,
) -> egui_kittest::Harness<'static, tokensmith::app::App> {
    use egui_kittest::kittest::Queryable as _;
    use tokensmith::app::mods::Packs;
    use tokensmith::app::{App, Library};
    use tokensmith::packs::{PackSet, set::Folders};

    let profile_dir = w.path(who);
    let packs = Packs {
        folders: Folders {
            content: crate::support::root().join("content"),
            mods: w.path("empty"),
            installed: Some(profile_dir.join("packs")),
        },
        set: PackSet::open(&profile_dir),
        profile: Some(profile_dir.clone()),
    };
    let app = App::new(Library::load(packs.options())).with_packs(packs);
    let mut h = crate::client::harness_for(app);
    h.run();
    h.get_by_label("Mods").click();
    h.run();
    h.get_by_label("Browse").click();
    h.run();
    h.get_by_label("index search").type_text(query);
    h.run();
    h.get_by_label("Search").click();
    h
}
