//! Pack indexes end to end through the command line: an author publishes into an index
//! folder, a player lists it, searches, installs a pack with what it requires, updates,
//! and yanked versions are passed over. Then the attacks on what an index holds: a
//! tampered archive or entry, a wrong signature, a changed author key, a huge claimed
//! size, an archive longer than its entry, an index listing 100,000 packs, requirements
//! in a cycle or that cannot be met. Each is refused with a clear message and nothing is
//! installed.

use std::path::{Path, PathBuf};
use std::process::Output;

use crate::support::{root, tokensmith};

/// A world of folders: pack sources, an index, an author's and a player's profiles.
pub(crate) struct World {
    dir: tempfile::TempDir,
}

pub(crate) fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

impl World {
    pub(crate) fn new() -> World {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        std::fs::create_dir_all(dir.path().join("empty")).unwrap_or_else(|e| panic!("{e}"));
        World { dir }
    }

    pub(crate) fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    /// Run the binary with base content, `mods` as the mods folder and `profile`.
    pub(crate) fn run(&self, mods: &str, profile: &str, args: &[&str]) -> Output {
        self.run_in(mods, profile, args, &[])
    }

    /// Run the binary with base content, `mods`, `profile` and `envs` set.
    pub(crate) fn run_in(
        &self,
        mods: &str,
        profile: &str,
        args: &[&str],
        envs: &[(&str, &str)],
    ) -> Output {
        let content = root().join("content");
        let mut all: Vec<String> = vec![
            "--content".into(),
            content.to_string_lossy().into_owned(),
            "--mods".into(),
            self.path(mods).to_string_lossy().into_owned(),
            "--profile".into(),
            self.path(profile).to_string_lossy().into_owned(),
        ];
        all.extend(args.iter().map(|a| (*a).to_string()));
        tokensmith(&all)
            .envs(envs.iter().copied())
            .output()
            .unwrap_or_else(|e| panic!("the binary runs: {e}"))
    }

    /// Start the binary as the player `who` (no mods) without waiting for it.
    pub(crate) fn player_spawn(&self, who: &str, args: &[&str]) -> std::process::Child {
        let mut all: Vec<String> = vec![
            "--content".into(),
            root().join("content").to_string_lossy().into_owned(),
            "--mods".into(),
            self.path("empty").to_string_lossy().into_owned(),
            "--profile".into(),
            self.path(who).to_string_lossy().into_owned(),
        ];
        all.extend(args.iter().map(|a| (*a).to_string()));
        tokensmith(&all)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("the binary runs: {e}"))
    }

    /// Run as the author (who has the packs' sources as mods), expecting success.
    pub(crate) fn author(&self, args: &[&str]) -> String {
        let out = self.run("src", "author", args);
        let t = text(&out);
        assert!(out.status.success(), "{args:?}: {t}");
        t
    }

    /// Run as the player `who` (no mods).
    pub(crate) fn player(&self, who: &str, args: &[&str]) -> Output {
        self.run("empty", who, args)
    }

    /// Write a pack source `id` at `version` requiring base and `requires`.
    pub(crate) fn pack(&self, id: &str, version: &str, requires: &[(&str, &str)], card_value: u32) {
        let mut manifest = format!(
            "id: {id}\nname: {id} pack\nversion: {version}\ndescription: Tokens of {id}, for searching.\nrequires:\n  - {{ id: base, version: \"^1\" }}\n"
        );
        for (rid, req) in requires {
            manifest.push_str(&format!("  - {{ id: {rid}, version: \"{req}\" }}\n"));
        }
        let content = format!(
            "token_types:\n  - {{ id: {id}_token, name: {id} token, description: A token. }}\ncards:\n  - {{ id: {id}_card, name: {id} card, value: {card_value}, token: {id}_token, description: Places a token. }}\n"
        );
        let dir = self.path(&format!("src/{id}"));
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(dir.join("pack.yaml"), manifest).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(dir.join("content.yaml"), content).unwrap_or_else(|e| panic!("{e}"));
    }

    /// `pack publish` of the source of `id` into `index`, signed by `profile`'s key.
    pub(crate) fn publish_as(&self, profile: &str, id: &str, index: &str) -> Output {
        let dir = self.path(&format!("src/{id}"));
        let index = self.path(index);
        self.run(
            "src",
            profile,
            &[
                "pack",
                "publish",
                &dir.to_string_lossy(),
                "--index",
                &index.to_string_lossy(),
            ],
        )
    }

    /// The author publishes `id` into `index`, expecting success.
    pub(crate) fn publish(&self, id: &str, index: &str) -> String {
        let out = self.publish_as("author", id, index);
        let t = text(&out);
        assert!(out.status.success(), "publishing {id}: {t}");
        t
    }

    pub(crate) fn installed(&self, who: &str) -> Vec<String> {
        let dir = self.path(&format!("{who}/packs"));
        let mut ids: Vec<String> = std::fs::read_dir(dir)
            .map(|d| {
                d.filter_map(Result::ok)
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .filter(|n| !n.starts_with('.'))
                    .collect()
            })
            .unwrap_or_default();
        ids.sort();
        ids
    }

    /// A player `who` with `index` listed as `main`.
    pub(crate) fn player_with(&self, who: &str, index: &str) {
        let out = self.player(
            who,
            &["index", "add", "main", &self.path(index).to_string_lossy()],
        );
        assert!(out.status.success(), "{}", text(&out));
    }

    /// `pack install ARGS` by `who`, expected refused with `needle`; nothing installed.
    pub(crate) fn refused(&self, who: &str, args: &[&str], needle: &str) {
        let mut all = vec!["pack", "install"];
        all.extend(args);
        let out = self.player(who, &all);
        let t = text(&out);
        assert!(!out.status.success(), "{args:?} should be refused: {t}");
        assert!(t.contains(needle), "{args:?}: expected '{needle}' in: {t}");
        assert!(
            self.installed(who).is_empty(),
            "{args:?}: nothing may be installed: {t}"
        );
    }

    /// A copy of the index folder `from` as `to`, changed by `change`, and signed again
    /// by its owner (the author): what a host who also owns the index could serve, so
    /// what is left to refuse it is the authors' own signatures.
    pub(crate) fn copy_index(&self, from: &str, to: &str, change: impl FnOnce(&Path)) {
        self.copy_index_unsigned(from, to, change);
        self.sign_index(to);
    }

    /// A copy of the index folder `from` as `to`, changed by `change`, not signed again.
    pub(crate) fn copy_index_unsigned(&self, from: &str, to: &str, change: impl FnOnce(&Path)) {
        crate::support::copy_tree(&self.path(from), &self.path(to));
        change(&self.path(to));
    }

    /// The index owner (the author) signs a new snapshot and timestamp of `index`.
    pub(crate) fn sign_index(&self, index: &str) {
        let key = self.author_key();
        tokensmith::index::fresh::sign(&self.path(index), &key, 14)
            .unwrap_or_else(|e| panic!("signing {index}: {e}"));
    }

    /// The author's signing key.
    pub(crate) fn author_key(&self) -> ed25519_dalek::SigningKey {
        tokensmith::index::keys::author_key(&self.path("author")).unwrap_or_else(|e| panic!("{e}"))
    }
}

pub(crate) fn edit_json(path: &Path, change: impl FnOnce(&mut serde_json::Value)) {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{e}"));
    let mut value: serde_json::Value =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}"));
    change(&mut value);
    std::fs::write(
        path,
        serde_json::to_string_pretty(&value).unwrap_or_default(),
    )
    .unwrap_or_else(|e| panic!("{e}"));
}

/// An author with a key who published `alpha 1.0.0` and `beta 1.0.0` (requiring alpha ^1)
/// into `index`.
pub(crate) fn published() -> World {
    let w = World::new();
    w.author(&["key", "new"]);
    w.pack("alpha", "1.0.0", &[], 1);
    w.pack("beta", "1.0.0", &[("alpha", "^1")], 2);
    w.publish("alpha", "index");
    w.publish("beta", "index");
    w
}

#[test]
fn publish_search_install_with_a_dependency_update_and_yank() {
    let w = published();
    // Publishing the same version again with the same content changes nothing; with
    // other content it is refused.
    let again = w.publish("beta", "index");
    assert!(again.contains("published already"), "{again}");
    w.pack("beta", "1.0.0", &[("alpha", "^1")], 3);
    let out = w.publish_as("author", "beta", "index");
    assert!(!out.status.success());
    assert!(text(&out).contains("raise the version"), "{}", text(&out));
    w.pack("beta", "1.0.0", &[("alpha", "^1")], 2);

    w.player_with("player", "index");
    let out = w.player("player", &["pack", "search", "beta"]);
    let t = text(&out);
    assert!(
        t.contains("beta 1.0.0") && !t.contains("alpha 1.0.0"),
        "{t}"
    );
    let out = w.player("player", &["pack", "search", "--json"]);
    let found: serde_json::Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&out)));
    assert_eq!(found.as_array().map(Vec::len), Some(2), "{found}");

    let out = w.player("player", &["pack", "install", "beta"]);
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    assert!(
        t.contains("install alpha 1.0.0 (from index 'main', required by beta)"),
        "{t}"
    );
    assert_eq!(w.installed("player"), ["alpha", "beta"]);
    // The installed pack is the published one, and it plays.
    let out = w.player("player", &["--packs", "beta", "validate"]);
    assert!(out.status.success(), "{}", text(&out));

    // A new version: outdated, then updated; a yanked one is passed over.
    w.pack("alpha", "1.1.0", &[], 1);
    w.publish("alpha", "index");
    let out = w.player("player", &["pack", "outdated"]);
    assert!(
        text(&out).contains("alpha 1.0.0 -> 1.1.0"),
        "{}",
        text(&out)
    );
    w.pack("alpha", "1.2.0", &[], 1);
    w.publish("alpha", "index");
    w.author(&[
        "pack",
        "yank",
        "alpha@1.2.0",
        "--index",
        &w.path("index").to_string_lossy(),
    ]);
    let out = w.player("player", &["pack", "update"]);
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    assert!(t.contains("updated alpha 1.0.0 -> 1.1.0"), "{t}");
    let manifest = std::fs::read_to_string(w.path("player/packs/alpha/pack.yaml"))
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(manifest.contains("version: 1.1.0"), "{manifest}");
    let out = w.player("player", &["pack", "outdated"]);
    assert!(text(&out).contains("up to date"), "{}", text(&out));
    // A version requirement picks an older version.
    w.player_with("older", "index");
    let out = w.player("older", &["pack", "install", "alpha@=1.0.0"]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        text(&out).contains("installed alpha 1.0.0"),
        "{}",
        text(&out)
    );
}

#[test]
fn tampered_archives_and_entries_are_refused_before_anything_is_installed() {
    let w = published();
    // Same size, other bytes.
    w.copy_index("index", "flipped", |dir| {
        let path = dir.join("archives/alpha-1.0.0.zip");
        let mut bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{e}"));
        let last = bytes.len() - 30;
        bytes[last] ^= 0xff;
        std::fs::write(&path, bytes).unwrap_or_else(|e| panic!("{e}"));
    });
    w.player_with("p1", "flipped");
    w.refused("p1", &["beta"], "SHA-256");

    // An archive longer than its entry says.
    w.copy_index("index", "longer", |dir| {
        let path = dir.join("archives/beta-1.0.0.zip");
        let mut bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{e}"));
        bytes.extend_from_slice(&[0u8; 100]);
        std::fs::write(&path, bytes).unwrap_or_else(|e| panic!("{e}"));
    });
    w.player_with("p2", "longer");
    w.refused("p2", &["beta"], "longer than the");

    // An entry changed after signing: its requirement dropped.
    w.copy_index("index", "entry", |dir| {
        edit_json(&dir.join("packs/beta.json"), |v| {
            v["versions"][0]["requires"] = serde_json::json!([]);
        });
    });
    w.player_with("p3", "entry");
    w.refused("p3", &["beta"], "signature does not match");

    // A claimed size of 10 GB (re-signing is not possible without the key: the claim is
    // refused before anything is read).
    w.copy_index("index", "huge", |dir| {
        edit_json(&dir.join("packs/alpha.json"), |v| {
            v["versions"][0]["size"] = serde_json::json!(10_000_000_000u64);
        });
    });
    w.player_with("p4", "huge");
    w.refused("p4", &["alpha"], "signature does not match");

    // A claim of 10 GB signed by the author: refused by the cap before anything is
    // read.
    let key =
        tokensmith::index::keys::author_key(&w.path("author")).unwrap_or_else(|e| panic!("{e}"));
    w.copy_index("index", "signed_huge", |dir| {
        let path = dir.join("packs/alpha.json");
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        let mut file: tokensmith::index::PackFile =
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}"));
        let entry = &mut file.versions[0];
        entry.size = 10_000_000_000;
        entry.signature = tokensmith::index::keys::sign(&key, &entry.message("alpha"));
        std::fs::write(&path, serde_json::to_vec(&file).unwrap_or_default())
            .unwrap_or_else(|e| panic!("{e}"));
    });
    w.player_with("p7", "signed_huge");
    w.refused(
        "p7",
        &["alpha"],
        "its entry says the archive is 10000000000 bytes",
    );

    // A wrong signature: another valid signature, of the other pack's entry.
    w.copy_index("index", "swapped", |dir| {
        let beta: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(dir.join("packs/beta.json")).unwrap_or_default(),
        )
        .unwrap_or_default();
        edit_json(&dir.join("packs/alpha.json"), |v| {
            v["versions"][0]["signature"] = beta["versions"][0]["signature"].clone();
        });
    });
    w.player_with("p5", "swapped");
    w.refused("p5", &["alpha"], "signature does not match");

    // A key file swapped for another key under the same id.
    w.copy_index("index", "rekeyed", |dir| {
        let keys = dir.join("keys");
        for e in std::fs::read_dir(&keys)
            .unwrap_or_else(|e| panic!("{e}"))
            .flatten()
        {
            std::fs::write(e.path(), format!("{}\n", "11".repeat(32)))
                .unwrap_or_else(|e| panic!("{e}"));
        }
    });
    // The owner's key is among them: the index is refused as it is added.
    let out = w.player(
        "p6",
        &["index", "add", "main", &w.path("rekeyed").to_string_lossy()],
    );
    assert!(!out.status.success());
    assert!(text(&out).contains("is not the key"), "{}", text(&out));
}

#[test]
fn a_pack_signed_by_another_key_than_at_its_first_install_is_refused_unless_accepted() {
    let w = published();
    w.player_with("player", "index");
    let out = w.player("player", &["pack", "install", "alpha"]);
    assert!(out.status.success(), "{}", text(&out));
    // Someone else publishes "alpha 1.1.0" under their own key, in their own index.
    let other = w.path("other-author");
    let out = w.run("src", "other-author", &["key", "new"]);
    assert!(out.status.success(), "{}", text(&out));
    w.pack("alpha", "1.1.0", &[], 9);
    let out = w.publish_as("other-author", "alpha", "evil");
    assert!(out.status.success(), "{}", text(&out));
    assert!(other.join("keys/author.key").is_file());
    // The player's index now serves it (its host swapped the pack, say).
    let out = w.player("player", &["index", "remove", "main"]);
    assert!(out.status.success(), "{}", text(&out));
    let out = w.player(
        "player",
        &["index", "add", "evil", &w.path("evil").to_string_lossy()],
    );
    assert!(out.status.success(), "{}", text(&out));
    let out = w.player("player", &["pack", "update", "alpha"]);
    let t = text(&out);
    assert!(!out.status.success(), "{t}");
    assert!(t.contains("--accept-new-key"), "{t}");
    let manifest = std::fs::read_to_string(w.path("player/packs/alpha/pack.yaml"))
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(manifest.contains("version: 1.0.0"), "unchanged: {manifest}");
    let out = w.player("player", &["pack", "update", "alpha", "--accept-new-key"]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        text(&out).contains("updated alpha 1.0.0 -> 1.1.0"),
        "{}",
        text(&out)
    );
}

#[test]
fn hostile_indexes_and_impossible_requirements_are_refused() {
    let w = published();
    // An index listing 100,000 packs: refused when it is added, and when searched.
    w.copy_index("index", "flood", |dir| {
        let packs: Vec<serde_json::Value> = (0..100_000)
            .map(|i| serde_json::json!({ "id": format!("p{i}"), "name": "p", "versions": ["1.0.0"] }))
            .collect();
        std::fs::write(
            dir.join("summary.json"),
            serde_json::to_string(&serde_json::json!({ "packs": packs })).unwrap_or_default(),
        )
        .unwrap_or_else(|e| panic!("{e}"));
    });
    let out = w.player(
        "p1",
        &["index", "add", "flood", &w.path("flood").to_string_lossy()],
    );
    assert!(!out.status.success());
    assert!(
        text(&out).contains("lists 100000 packs; an index may list at most 20000"),
        "{}",
        text(&out)
    );

    // A path in an entry that leaves the index.
    w.copy_index("index", "escape", |dir| {
        edit_json(&dir.join("packs/alpha.json"), |v| {
            v["versions"][0]["archive"] = serde_json::json!("../../outside.zip");
        });
    });
    w.player_with("p2", "escape");
    w.refused("p2", &["alpha"], "must be 'archives/alpha-1.0.0.zip'");

    // Requirements in a cycle (written by hand and signed: `pack publish` validates, and
    // a cycle never loads), and ones no version meets. The plan refuses them before any
    // archive is read.
    let key = w.author_key();
    let sign = |v: &mut serde_json::Value, id: &str, i: usize| {
        let entry: tokensmith::index::Entry =
            serde_json::from_value(v["versions"][i].clone()).unwrap_or_else(|e| panic!("{e}"));
        v["versions"][i]["signature"] =
            serde_json::json!(tokensmith::index::keys::sign(&key, &entry.message(id)));
    };
    w.copy_index("index", "cycle", |dir| {
        edit_json(&dir.join("packs/alpha.json"), |v| {
            let mut two = v["versions"][0].clone();
            two["version"] = serde_json::json!("2.0.0");
            two["archive"] = serde_json::json!("archives/alpha-2.0.0.zip");
            two["requires"] = serde_json::json!([{ "id": "beta", "version": "^1" }]);
            if let Some(list) = v["versions"].as_array_mut() {
                list.push(two);
            }
            sign(v, "alpha", 1);
        });
        edit_json(&dir.join("packs/beta.json"), |v| {
            v["versions"][0]["requires"] = serde_json::json!([{ "id": "alpha", "version": "*" }]);
            sign(v, "beta", 0);
        });
    });
    w.player_with("p3", "cycle");
    w.refused(
        "p3",
        &["alpha@^2"],
        "the packs' requirements form a cycle: alpha requires beta requires alpha",
    );
    w.refused(
        "p3",
        &["missing_pack"],
        "no index lists the pack 'missing_pack'",
    );
    w.refused(
        "p3",
        &["alpha@^3"],
        "no index has a version of 'alpha' matching ^3 that is not yanked: 'main' has 1.0.0, 2.0.0",
    );
}

/// A loopback HTTP server over an index folder, for the tests only: files by path (with
/// an ETag; `If-None-Match` answered 304), `/slow/…` sends a byte a second, `/loop/…`
/// redirects to itself. It counts the body bytes it sent and stops when dropped.
pub(crate) struct Server {
    port: u16,
    sent: std::sync::Arc<std::sync::atomic::AtomicU64>,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl Server {
    pub(crate) fn new(dir: &Path) -> Server {
        use std::sync::Arc;
        use std::sync::atomic::{AtomicBool, AtomicU64};
        let listener =
            std::net::TcpListener::bind("127.0.0.1:0").unwrap_or_else(|e| panic!("bind: {e}"));
        listener
            .set_nonblocking(true)
            .unwrap_or_else(|e| panic!("{e}"));
        let port = listener.local_addr().map(|a| a.port()).unwrap_or(0);
        let sent = Arc::new(AtomicU64::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let (dir, s, st) = (dir.to_path_buf(), Arc::clone(&sent), Arc::clone(&stop));
        std::thread::spawn(move || {
            // Bounded: at most 500 connections, and it ends when the test drops it.
            for _ in 0..20_000 {
                if st.load(std::sync::atomic::Ordering::Relaxed) {
                    return;
                }
                match listener.accept() {
                    Ok((conn, _)) => {
                        let (dir, s, st) = (dir.clone(), Arc::clone(&s), Arc::clone(&st));
                        std::thread::spawn(move || serve(conn, &dir, &s, &st));
                    }
                    Err(_) => std::thread::sleep(std::time::Duration::from_millis(5)),
                }
            }
        });
        Server { port, sent, stop }
    }

    pub(crate) fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}/{path}", self.port)
    }

    fn sent(&self) -> u64 {
        self.sent.load(std::sync::atomic::Ordering::Relaxed)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
    }
}

fn serve(
    mut conn: std::net::TcpStream,
    dir: &Path,
    sent: &std::sync::atomic::AtomicU64,
    stop: &std::sync::atomic::AtomicBool,
) {
    use std::io::{Read as _, Write as _};
    let _ = conn.set_nonblocking(false);
    let _ = conn.set_read_timeout(Some(std::time::Duration::from_secs(5)));
    let mut request = Vec::new();
    let mut buf = [0u8; 1024];
    while !request.windows(4).any(|w| w == b"\r\n\r\n") && request.len() < 16 * 1024 {
        match conn.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => request.extend_from_slice(&buf[..n]),
        }
    }
    let text = String::from_utf8_lossy(&request).to_string();
    let path = text.split_whitespace().nth(1).unwrap_or("/").to_string();
    let if_none = text
        .lines()
        .find_map(|l| {
            l.strip_prefix("If-None-Match: ")
                .or_else(|| l.strip_prefix("if-none-match: "))
        })
        .map(str::trim)
        .map(str::to_string);
    if path.starts_with("/loop/") {
        let _ = write!(
            conn,
            "HTTP/1.1 302 Found\r\nLocation: {path}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        );
        return;
    }
    if path.starts_with("/slow/") {
        let _ = write!(
            conn,
            "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\nConnection: close\r\n\r\n"
        );
        for _ in 0..30 {
            if stop.load(std::sync::atomic::Ordering::Relaxed) || conn.write_all(b"{").is_err() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_secs(1));
        }
        return;
    }
    let rel = path.trim_start_matches('/');
    let Ok(body) = std::fs::read(dir.join(rel)) else {
        let _ = write!(
            conn,
            "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        );
        return;
    };
    let etag = format!(
        "\"{}\"",
        body.len() * 31 + body.iter().map(|&b| usize::from(b)).sum::<usize>()
    );
    if if_none.as_deref() == Some(etag.as_str()) {
        let _ = write!(
            conn,
            "HTTP/1.1 304 Not Modified\r\nETag: {etag}\r\nConnection: close\r\n\r\n"
        );
        return;
    }
    let _ = write!(
        conn,
        "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nETag: {etag}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    if conn.write_all(&body).is_ok() {
        sent.fetch_add(body.len() as u64, std::sync::atomic::Ordering::Relaxed);
    }
}

#[test]
fn an_index_over_http_installs_revalidates_with_headers_only_and_refuses_slow_or_looping_servers() {
    let w = published();
    let server = Server::new(&w.path("index"));
    let out = w.player("player", &["index", "add", "web", &server.url("")]);
    assert!(out.status.success(), "{}", text(&out));
    let out = w.player("player", &["pack", "install", "beta"]);
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    assert!(
        t.contains("installed alpha 1.0.0") && t.contains("installed beta 1.0.0"),
        "{t}"
    );
    // An update check when nothing changed: every listing file answered 304.
    let out = w.player("player", &["pack", "outdated"]);
    assert!(out.status.success(), "{}", text(&out));
    let before = server.sent();
    let out = w.player("player", &["pack", "outdated"]);
    assert!(text(&out).contains("up to date"), "{}", text(&out));
    assert_eq!(
        server.sent(),
        before,
        "an unchanged index costs headers only"
    );
    // A new version published into the served folder: update over HTTP; then yanked,
    // and a player asking for it by version is told so.
    w.pack("alpha", "1.1.0", &[], 1);
    w.publish("alpha", "index");
    let out = w.player("player", &["pack", "update"]);
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    assert!(t.contains("updated alpha 1.0.0 -> 1.1.0"), "{t}");
    w.author(&[
        "pack",
        "yank",
        "alpha@1.1.0",
        "--index",
        &w.path("index").to_string_lossy(),
    ]);
    w.player_with("late", "index");
    let out = w.player("late", &["pack", "install", "alpha@=1.1.0"]);
    let t = text(&out);
    assert!(!out.status.success(), "{t}");
    assert!(t.contains("1.1.0 (yanked)"), "{t}");
    // With the server gone, search uses the last copy this player read (from before the
    // yank).
    drop(server);
    let out = w.player("player", &["pack", "search", "alpha"]);
    let t = text(&out);
    assert!(
        t.contains("its last copy is used") && t.contains("alpha 1.1.0"),
        "{t}"
    );

    // A server that sends a byte a second, and one that redirects to itself.
    let hostile = Server::new(&w.path("index"));
    let started = std::time::Instant::now();
    let out = w.run_in(
        "empty",
        "p2",
        &["index", "add", "slow", &hostile.url("slow/")],
        &[("TOKENSMITH_INDEX_TIMEOUT_MS", "1000")],
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(20));
    let t = text(&out);
    assert!(!out.status.success(), "{t}");
    assert!(
        t.contains("slower than the 4 KiB/s a transfer must keep; given up"),
        "{t}"
    );
    // The command's overall deadline, whatever each transfer's own.
    let started = std::time::Instant::now();
    let out = w.run_in(
        "empty",
        "p4",
        &["index", "add", "slow", &hostile.url("slow/")],
        &[("TOKENSMITH_INDEX_DEADLINE_MS", "1500")],
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
    let t = text(&out);
    assert!(!out.status.success(), "{t}");
    assert!(
        t.contains("the command's reads of indexes took longer than its 1 s in all"),
        "{t}"
    );
    let out = w.player("p3", &["index", "add", "loop", &hostile.url("loop/")]);
    let t = text(&out);
    assert!(!out.status.success(), "{t}");
    assert!(t.contains("redirected more than 5 times"), "{t}");
}

/// Chromium (or Chrome) for the page test: `TOKENSMITH_BROWSER`, else the usual names.
pub fn browser() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("TOKENSMITH_BROWSER") {
        return Some(PathBuf::from(path));
    }
    ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .flat_map(|name| {
            std::env::var_os("PATH")
                .map(|p| {
                    std::env::split_paths(&p)
                        .map(|d| d.join(name))
                        .collect::<Vec<_>>()
                })
                .unwrap_or_default()
        })
        .find(|p| p.is_file())
}

/// Run the headless browser on `url` with `extra` arguments; its standard output.
pub fn headless(browser: &Path, data: &Path, url: &str, extra: &[&str]) -> String {
    let mut command = std::process::Command::new(browser);
    command.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--window-size=1100,900",
    ]);
    command.arg(format!("--user-data-dir={}", data.display()));
    // Chromium keeps crash reports and settings under the home folder: its own.
    crate::support::private_home(&mut command, &data.join("home"));
    command.args(extra).arg(url);
    let out = command
        .output()
        .unwrap_or_else(|e| panic!("{} runs: {e}", browser.display()));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn publish_writes_a_web_page_whose_search_works_in_a_real_browser() {
    let w = published();
    // A pack whose description tries to end the page's script.
    w.pack("gamma", "1.0.0", &[], 1);
    let manifest = w.path("src/gamma/pack.yaml");
    let text = std::fs::read_to_string(&manifest)
        .unwrap_or_default()
        .replace(
            "description: Tokens of gamma, for searching.",
            "description: \"</script><img src=x onerror=document.title='owned'> lanterns\"",
        );
    std::fs::write(&manifest, text).unwrap_or_else(|e| panic!("{e}"));
    w.publish("gamma", "index");
    let page = w.path("index/index.html");
    let html = std::fs::read_to_string(&page).unwrap_or_else(|e| panic!("{e}"));
    assert!(html.contains("\"id\":\"beta\""), "the data is in the page");
    assert!(
        !html.contains("</script><img"),
        "index text never becomes markup"
    );

    let Some(browser) = browser() else {
        assert!(
            std::env::var_os("TOKENSMITH_REQUIRE_BROWSER").is_none(),
            "TOKENSMITH_REQUIRE_BROWSER is set but no chromium was found"
        );
        eprintln!("no chromium on this machine: the page was checked without a browser");
        return;
    };
    let url = format!("file://{}", page.display());
    // Search by a word of one pack's id, and by a word only a description holds.
    let dom = headless(
        &browser,
        &w.path("chrome1"),
        &format!("{url}?q=beta"),
        &["--dump-dom"],
    );
    assert!(dom.contains("1 of 3 packs"), "{dom}");
    assert!(
        dom.contains("data-id=\"beta\"") && !dom.contains("data-id=\"alpha\""),
        "{dom}"
    );
    assert!(dom.contains("tokensmith pack install beta"), "{dom}");
    let dom = headless(
        &browser,
        &w.path("chrome2"),
        &format!("{url}?q=lanterns"),
        &["--dump-dom"],
    );
    assert!(
        dom.contains("1 of 3 packs") && dom.contains("data-id=\"gamma\""),
        "{dom}"
    );
    // The hostile description is shown as text, and ran nothing.
    assert!(dom.contains("&lt;/script&gt;&lt;img"), "{dom}");
    assert!(!dom.contains("<title>owned"), "{dom}");
    let dom = headless(&browser, &w.path("chrome3"), &url, &["--dump-dom"]);
    assert!(dom.contains("3 of 3 packs"), "{dom}");
    // A screenshot of the page, kept for a look.
    let shot = root().join("target").join("index-page.png");
    let _ = std::fs::create_dir_all(root().join("target"));
    headless(
        &browser,
        &w.path("chrome4"),
        &format!("{url}?q=beta"),
        &[&format!("--screenshot={}", shot.display())],
    );
    assert!(shot.is_file(), "the screenshot was written");
    eprintln!("screenshot of the index page: {}", shot.display());
}

#[cfg(feature = "client")]
#[test]
fn the_mods_screen_browses_an_index_checks_a_pack_and_installs_it() {
    use egui_kittest::kittest::Queryable as _;

    use tokensmith::app::App;

    let w = published();
    w.player_with("player", "index");
    let profile_dir = w.path("player");
    let app = super::client::app_in_profile(&profile_dir, w.path("empty"));
    let mut h = super::client::harness_for(app);
    h.run();
    h.get_by_label("Mods").click();
    h.run();
    h.get_by_label("Browse").click();
    h.run();
    h.get_by_label("index search").type_text("beta");
    h.run();
    h.get_by_label("Search").click();
    let ready = |label: &'static str| {
        move |h: &egui_kittest::Harness<'_, App>| h.query_by_label_contains(label).is_some()
    };
    super::client::run_until(&mut h, "the search", ready("beta  1.0.0"));
    h.get_by_label_contains("beta  1.0.0").click();
    super::client::run_until(&mut h, "the pack's versions", ready("Not installed."));
    h.get_by_label("Check against my packs").click();
    super::client::run_until(
        &mut h,
        "the check",
        ready("Checked: signatures and hashes match"),
    );
    assert!(
        w.installed("player").is_empty(),
        "checking installs nothing"
    );
    h.get_by_label("Install 1.0.0").click();
    super::client::run_until(&mut h, "the install", ready("Installed: 1.0.0"));
    assert_eq!(w.installed("player"), ["alpha", "beta"]);
    assert!(
        h.query_by_label("Installed: 1.0.0").is_some(),
        "the details follow the install"
    );
    assert!(
        h.query_by_label_contains("Update to").is_none()
            && h.query_by_label("Up to date").is_some(),
        "the version just installed is not offered again"
    );
    assert!(
        h.query_by_label_contains("installed alpha 1.0.0").is_some(),
        "the status says what was installed"
    );
}

/// An author trying the index's version of a pack that is in their own mods folder is
/// refused with the way round, and that way works.
#[test]
fn installing_a_pack_the_mods_folder_holds_says_how_to_try_the_index_s_version() {
    let w = published();
    let index = w.path("index").to_string_lossy().into_owned();
    let added = w.run("src", "author", &["index", "add", "main", &index]);
    assert!(added.status.success(), "{}", text(&added));
    let out = w.run("src", "author", &["pack", "install", "alpha"]);
    let t = text(&out);
    assert!(!out.status.success(), "{t}");
    assert!(
        t.contains("packs there are loaded as they are")
            && t.contains("tokensmith --mods EMPTY_FOLDER pack install alpha"),
        "{t}"
    );
    // The way round: a mods folder without the pack, same profile.
    let out = w.run("empty", "author", &["pack", "install", "alpha"]);
    assert!(out.status.success(), "{}", text(&out));
    let out = w.run("empty", "author", &["pack", "list", "--json"]);
    assert!(text(&out).contains("\"alpha\""), "{}", text(&out));
}
