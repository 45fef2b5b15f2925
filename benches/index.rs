//! Pack indexes: `pack search` over an index of 10,000 packs (the binary, end to end,
//! with the index read from a folder), installing a pack with 3 dependencies from a
//! loopback web server (plan, fetch and check, install), and the body bytes an update
//! check fetches when nothing changed (Python's `http.server` answers `If-Modified-Since`
//! with 304).
//!
//! Run with `cargo bench --bench index` (release). Prints a table; no assertion.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use tokensmith::index::{SummaryFile, keys, player, publish};
use tokensmith::packs::{Folders, Store};

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A pack folder `id` requiring base and `requires`.
fn pack(dir: &Path, id: &str, requires: &[&str]) -> PathBuf {
    let d = dir.join("src").join(id);
    let _ = std::fs::create_dir_all(&d);
    let mut manifest = format!(
        "id: {id}\nname: {id}\nversion: 1.0.0\nrequires:\n  - {{ id: base, version: \"^1\" }}\n"
    );
    for r in requires {
        manifest.push_str(&format!("  - {{ id: {r}, version: \"^1\" }}\n"));
    }
    let _ = std::fs::write(d.join("pack.yaml"), manifest);
    let _ = std::fs::write(
        d.join("content.yaml"),
        format!(
            "token_types:\n  - {{ id: {id}_t, name: T, description: A token. }}\ncards:\n  - {{ id: {id}_c, name: C, value: 1, token: {id}_t, description: Places one. }}\n"
        ),
    );
    d
}

fn main() {
    let Ok(tmp) = tempfile::tempdir() else {
        return;
    };
    let dir = tmp.path();
    search(dir, false);
    search(dir, true);
    install(dir);
}

/// `tokensmith pack search` over 10,000 packs, end to end.
/// `pack search` over 10,000 packs, end to end: with `signed`, a format-2 index whose
/// owner signed a snapshot and timestamp (the summary's hash checked at every read);
/// without, format 1 (no snapshot), the baseline in the same run.
fn search(dir: &Path, signed: bool) {
    let name = if signed { "big_signed" } else { "big" };
    let index = dir.join(name);
    let _ = std::fs::create_dir_all(&index);
    let owner = dir.join(format!("{name}-owner"));
    let _ = std::fs::create_dir_all(&owner);
    let Ok(key) = keys::new_key(&owner).and_then(|_| keys::author_key(&owner)) else {
        return;
    };
    let key_id = keys::key_id(&key.verifying_key());
    let _ = std::fs::write(
        index.join("index.json"),
        if signed {
            format!(r#"{{"format": "tokensmith-index", "version": 2, "owner": "{key_id}"}}"#)
        } else {
            r#"{"format": "tokensmith-index", "version": 1}"#.to_string()
        },
    );
    let _ = std::fs::create_dir_all(index.join("keys"));
    let _ = std::fs::write(
        index.join("keys").join(format!("{key_id}.pub")),
        format!("{}\n", keys::public_hex(&key.verifying_key())),
    );
    let words = [
        "lantern", "tower", "river", "storm", "garden", "forge", "ember", "tide",
    ];
    let summary = SummaryFile {
        packs: (0..10_000)
            .map(|i| tokensmith::index::Summary {
                id: format!("pack_{i:05}"),
                name: format!("Pack {i}"),
                description: format!(
                    "{} and {} tokens for the {} deck, number {i}",
                    words[i % 8],
                    words[(i / 8) % 8],
                    words[(i / 64) % 8]
                ),
                latest: Some("1.2.3".into()),
                versions: vec!["1.0.0".into(), "1.2.3".into()],
            })
            .collect(),
    };
    let _ = std::fs::write(
        index.join("summary.json"),
        serde_json::to_vec(&summary).unwrap_or_default(),
    );
    if signed && let Err(e) = tokensmith::index::fresh::sign(&index, &key, 14) {
        println!("cannot sign the index: {e}");
        return;
    }
    let bin = root().join("target/release/tokensmith");
    let bin = std::env::var_os("CARGO_TARGET_DIR")
        .map_or(bin, |t| PathBuf::from(t).join("release/tokensmith"));
    let profile = dir.join(format!("{name}-searcher"));
    let run = |args: &[&str]| {
        std::process::Command::new(&bin)
            .arg("--profile")
            .arg(&profile)
            .args(args)
            .output()
    };
    if run(&["index", "add", name, &index.to_string_lossy()]).is_err() {
        println!("pack search: the release binary is not built (cargo build --release)");
        return;
    }
    let mut times = Vec::new();
    let mut found = 0;
    for _ in 0..7 {
        let started = Instant::now();
        let out = run(&["pack", "search", "lantern", "storm"]);
        times.push(started.elapsed());
        found = out.map_or(0, |o| {
            String::from_utf8_lossy(&o.stdout).lines().count() / 2
        });
    }
    println!(
        "pack search over 10,000 packs, {} (the binary, end to end, median of 7): {:.1} ms ({found} found)",
        if signed {
            "signed snapshot and timestamp"
        } else {
            "format 1, no snapshot"
        },
        ms(median(times))
    );
}

/// Install a pack with 3 dependencies from a loopback web server; an update check.
fn install(dir: &Path) {
    let profile = dir.join("author");
    let _ = std::fs::create_dir_all(&profile);
    let Ok(key) = keys::new_key(&profile).and_then(|_| keys::author_key(&profile)) else {
        return;
    };
    let index = dir.join("web");
    for (id, requires) in [
        ("dep_one", vec![]),
        ("dep_two", vec![]),
        ("dep_three", vec![]),
        ("top", vec!["dep_one", "dep_two", "dep_three"]),
    ] {
        let src = pack(dir, id, &requires);
        let Ok(built) = tokensmith::packs::build(&src, |_| Vec::new()) else {
            println!("cannot build {id}");
            return;
        };
        let release = publish::Release {
            built: &built,
            name: id.into(),
            description: String::new(),
            // What the entry says must be what the archive's pack.yaml says.
            requires: std::iter::once("base")
                .chain(requires.iter().copied())
                .map(|r| tokensmith::index::Requires {
                    id: r.to_string(),
                    version: "^1".into(),
                })
                .collect(),
        };
        if publish::publish(&index, &release, &key, &[], 14).is_err() {
            println!("cannot publish {id}");
            return;
        }
    }
    let Ok(listener) = std::net::TcpListener::bind("127.0.0.1:0") else {
        return;
    };
    let port = listener.local_addr().map(|a| a.port()).unwrap_or(0);
    drop(listener);
    let server = std::process::Command::new("python3")
        .args([
            "-m",
            "http.server",
            "--bind",
            "127.0.0.1",
            &port.to_string(),
            "--directory",
        ])
        .arg(&index)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
    let Ok(mut server) = server else {
        println!("install from loopback: python3 is needed for the server");
        return;
    };
    std::thread::sleep(Duration::from_millis(800));
    let url = format!("http://127.0.0.1:{port}/");
    let folders = |p: &Path| Folders {
        content: root().join("content"),
        mods: dir.join("no-mods"),
        installed: Some(Store::new(p).root().to_path_buf()),
    };
    let mut times = Vec::new();
    for n in 0..5 {
        let player = dir.join(format!("player{n}"));
        let _ = std::fs::create_dir_all(&player);
        if let Err(e) = player::Sources::add(&player, "web", Path::new(&url), None) {
            println!("index add: {e}");
            break;
        }
        let started = Instant::now();
        let done = player::open_all(&player).and_then(|(indexes, _)| {
            let plan = player::plan(
                &indexes,
                &folders(&player),
                &[("top".into(), semver::VersionReq::STAR)],
                false,
            )?;
            let temp = tempfile::tempdir()
                .map_err(|e| tokensmith::index::IndexError::Refused(e.to_string()))?;
            let fetched = player::fetch(&plan, &keys::Pins::default(), false, temp.path())?;
            let store = Store::new(&player);
            player::install(&player, &store, &fetched, &folders(&player), false)
        });
        times.push(started.elapsed());
        if let Err(e) = done {
            println!("install failed: {e}");
            break;
        }
    }
    if !times.is_empty() {
        println!(
            "pack install of a pack with 3 dependencies from loopback (plan, fetch, check, install; median of {}): {:.1} ms",
            times.len(),
            ms(median(times))
        );
    }
    // An update check twice: the second finds nothing changed.
    let player = dir.join("player0");
    let check = || {
        player::open_all(&player)
            .and_then(|(indexes, _)| player::outdated(&indexes, &folders(&player)))
    };
    let _ = check();
    let before = tokensmith::index::web::BODY_BYTES.load(std::sync::atomic::Ordering::Relaxed);
    let started = Instant::now();
    let outdated = check().map(|o| o.len()).unwrap_or(usize::MAX);
    let took = started.elapsed();
    let after = tokensmith::index::web::BODY_BYTES.load(std::sync::atomic::Ordering::Relaxed);
    println!(
        "update check with nothing changed: {} body bytes fetched (headers only), {outdated} outdated, {:.1} ms",
        after - before,
        ms(took)
    );
    let _ = server.kill();
    let _ = server.wait();
}
