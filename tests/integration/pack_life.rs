//! The pack life cycle: reproducible archives and their content hash, installs that
//! refuse hostile archives with nothing written, an atomic `--replace` under kills, the
//! enabled set across runs with the requires closure, and the conflict report.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Output;

use tokensmith::packs::{self, PackError, PackSet, Selection, Store, set::Folders};
use zip::write::SimpleFileOptions;

use crate::support::{self, root};

fn tokensmith(args: &[&str]) -> Output {
    support::tokensmith(args)
        .output()
        .unwrap_or_else(|e| panic!("the binary runs: {e}"))
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn tmp() -> tempfile::TempDir {
    tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"))
}

const MANIFEST: &str =
    "id: tiny\nname: Tiny\nversion: 1.0.0\nrequires:\n  - { id: base, version: \"^1\" }\n";
const CARDS: &str = "cards:\n  - id: spark\n    name: Spark\n    value: 2\n    token: base:basic\n    ability: base:weaken\n    area: base:row\n";

/// A small valid pack in `dir/NAME`, returning its folder.
fn write_pack(dir: &Path, name: &str, files: &[(&str, &str)]) -> PathBuf {
    let pack = dir.join(name);
    for (rel, body) in files {
        let path = pack.join(rel);
        std::fs::create_dir_all(path.parent().unwrap_or(&pack)).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(&path, body).unwrap_or_else(|e| panic!("{e}"));
    }
    pack
}

/// A zip with these entries (name, bytes), deflated.
fn zip_of(entries: &[(&str, &[u8])]) -> Vec<u8> {
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options = SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
    for (name, bytes) in entries {
        zip.start_file(*name, options)
            .unwrap_or_else(|e| panic!("{e}"));
        zip.write_all(bytes).unwrap_or_else(|e| panic!("{e}"));
    }
    zip.finish().unwrap_or_else(|e| panic!("{e}")).into_inner()
}

fn no_validation(_: &str) -> Vec<(bool, String)> {
    Vec::new()
}

/// What is in the store folder besides nothing: every entry's name.
fn store_entries(store: &Store) -> Vec<String> {
    std::fs::read_dir(store.root())
        .map(|d| {
            d.filter_map(Result::ok)
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default()
}

fn install_zip(store: &Store, dir: &Path, bytes: &[u8]) -> Result<packs::Installed, PackError> {
    let file = dir.join("in.zip");
    std::fs::write(&file, bytes).unwrap_or_else(|e| panic!("{e}"));
    store.install(&file, false, |_| None)
}

#[test]
fn a_build_is_byte_identical_and_its_hash_survives_install() {
    let dir = tmp();
    let pack = write_pack(
        dir.path(),
        "tiny",
        &[
            ("pack.yaml", MANIFEST),
            ("cards.yaml", CARDS),
            ("notes/README.md", "A tiny pack.\n"),
            // Left out of archives and hashes.
            (".hidden", "x"),
            ("cards.yaml~", "x"),
            ("cards.yaml.bak", "x"),
        ],
    );
    let a = packs::build(&pack, no_validation).unwrap_or_else(|e| panic!("{e}"));
    // Touching the files (new times) changes nothing in the archive.
    std::fs::write(pack.join("cards.yaml"), CARDS).unwrap_or_else(|e| panic!("{e}"));
    for file in ["pack.yaml", "cards.yaml", "notes/README.md"] {
        std::fs::File::options()
            .write(true)
            .open(pack.join(file))
            .and_then(|f| {
                f.set_modified(std::time::SystemTime::now() + std::time::Duration::from_secs(3600))
            })
            .unwrap_or_else(|e| panic!("{file}: {e}"));
    }
    let b = packs::build(&pack, no_validation).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(a.bytes, b.bytes, "two builds, same bytes");
    assert_eq!(a.hash, b.hash);
    assert_eq!(a.files, 3, "hidden, editor and backup files are left out");
    assert_eq!(packs::hash(&pack).ok(), Some(a.hash.clone()));
    let store = Store::new(&dir.path().join("profile"));
    let done = install_zip(&store, dir.path(), &a.bytes).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(done.hash, a.hash, "unpacked files hash the same");
    assert_eq!(packs::hash(&done.dir).ok(), Some(a.hash.clone()));
    assert_eq!(done.dir, store.root().join("tiny"));
    // A change to one byte changes the hash.
    std::fs::write(pack.join("cards.yaml"), CARDS.replace("2", "3"))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_ne!(packs::hash(&pack).ok(), Some(a.hash));
}

#[test]
fn a_pack_with_errors_is_not_built() {
    let dir = tmp();
    let pack = write_pack(dir.path(), "tiny", &[("pack.yaml", MANIFEST)]);
    let out = tmp();
    let file = out.path().join("tiny.zip");
    let refused = packs::build_to(&pack, Some(&file), |_| {
        vec![(true, "cards.yaml:1:1: error: broken".to_string())]
    });
    assert!(
        matches!(refused, Err(PackError::Invalid(ref l)) if l.len() == 1),
        "{refused:?}"
    );
    assert!(!file.exists(), "nothing written");
    // The command line validates for real.
    write_pack(
        dir.path(),
        "tiny",
        &[("cards.yaml", "cards:\n  - id: x\n    value: many\n")],
    );
    let f = file.to_string_lossy().into_owned();
    let o = tokensmith(&["pack", "build", &pack.to_string_lossy(), "--out", &f]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("cards.yaml:3:"), "{}", text(&o));
    assert!(!file.exists());
}

/// Every hostile archive is refused with its reason, and the store holds nothing after.
#[test]
fn hostile_archives_are_refused_and_change_nothing() {
    let manifest = MANIFEST.as_bytes();
    let zeros = vec![0u8; 4 * 1024 * 1024];
    let many: Vec<(String, Vec<u8>)> = (0..2_001)
        .map(|i| (format!("tiny/f{i}.txt"), b"x".to_vec()))
        .collect();
    let mut many_refs: Vec<(&str, &[u8])> = vec![("tiny/pack.yaml", manifest)];
    many_refs.extend(many.iter().map(|(n, b)| (n.as_str(), b.as_slice())));
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        (
            "zip-slip",
            zip_of(&[("tiny/pack.yaml", manifest), ("tiny/../../evil.txt", b"x")]),
            "'..'",
        ),
        (
            "absolute path",
            zip_of(&[("tiny/pack.yaml", manifest), ("/etc/evil", b"x")]),
            "absolute",
        ),
        (
            "drive path",
            zip_of(&[("tiny/pack.yaml", manifest), ("C:/evil", b"x")]),
            "drive",
        ),
        (
            "backslash",
            zip_of(&[("tiny/pack.yaml", manifest), ("tiny\\..\\evil", b"x")]),
            "backslash",
        ),
        (
            "case clash",
            zip_of(&[
                ("tiny/pack.yaml", manifest),
                ("tiny/Cards.yaml", b"cards: []\n"),
                ("tiny/cards.yaml", b"cards: []\n"),
            ]),
            "letter case",
        ),
        (
            "zip bomb",
            zip_of(&[("tiny/pack.yaml", manifest), ("tiny/zeros.txt", &zeros)]),
            "zip bomb",
        ),
        (
            "oversize file",
            zip_of(&[
                ("tiny/pack.yaml", manifest),
                ("tiny/big.txt", &[zeros.as_slice(), b"x"].concat()),
            ]),
            "at most",
        ),
        ("too many files", zip_of(&many_refs), "more than 2000"),
        (
            "bad manifest",
            zip_of(&[("tiny/pack.yaml", b"id: Not An Id\nversion: one\n")]),
            "manifest does not validate",
        ),
        (
            "no pack",
            zip_of(&[("a/cards.yaml", b"cards: []\n"), ("b/pack.yaml", manifest)]),
            "no pack",
        ),
        (
            "not a zip",
            b"PK\x03\x04 this is not a zip".to_vec(),
            "not a readable zip",
        ),
        (
            "duplicate entry",
            {
                // The writer refuses duplicates, so rename one entry in the bytes.
                let z = zip_of(&[
                    ("tiny/pack.yaml", manifest),
                    ("tiny/a.yaml", b"x"),
                    ("tiny/b.yaml", b"y"),
                ]);
                replace_all(&z, b"tiny/b.yaml", b"tiny/a.yaml")
            },
            "twice",
        ),
        (
            "name not UTF-8",
            {
                let z = zip_of(&[("tiny/pack.yaml", manifest), ("tiny/ab.yaml", b"x")]);
                replace_all(&z, b"tiny/ab.yaml", b"tiny/\xff\xfe.yaml")
            },
            "UTF-8",
        ),
        ("symlink", symlink_zip(), "symbolic link"),
    ];
    for (what, bytes, reason) in cases {
        let dir = tmp();
        let store = Store::new(&dir.path().join("profile"));
        let refused = install_zip(&store, dir.path(), &bytes);
        let message = match &refused {
            Ok(done) => panic!("{what}: installed {done:?}"),
            Err(e) => e.to_string(),
        };
        assert!(message.contains(reason), "{what}: {message}");
        assert_eq!(
            store_entries(&store),
            Vec::<String>::new(),
            "{what}: nothing left"
        );
        assert!(
            !dir.path().join("evil.txt").exists(),
            "{what}: written outside"
        );
        assert!(!Path::new("/etc/evil").exists(), "{what}: written outside");
    }
}

/// The same bytes with every `from` replaced by `to` (same length): names appear in the
/// local header and the central directory, and no checksum covers them.
fn replace_all(bytes: &[u8], from: &[u8], to: &[u8]) -> Vec<u8> {
    assert_eq!(from.len(), to.len());
    let mut out = bytes.to_vec();
    let mut i = 0;
    while i + from.len() <= out.len() {
        if &out[i..i + from.len()] == from {
            out[i..i + from.len()].copy_from_slice(to);
            i += from.len();
        } else {
            i += 1;
        }
    }
    out
}

fn symlink_zip() -> Vec<u8> {
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options = SimpleFileOptions::default();
    zip.start_file("tiny/pack.yaml", options)
        .unwrap_or_else(|e| panic!("{e}"));
    zip.write_all(MANIFEST.as_bytes())
        .unwrap_or_else(|e| panic!("{e}"));
    zip.add_symlink("tiny/cards.yaml", "/etc/passwd", options)
        .unwrap_or_else(|e| panic!("{e}"));
    zip.finish().unwrap_or_else(|e| panic!("{e}")).into_inner()
}

#[test]
fn folders_with_links_or_taken_ids_are_refused() {
    let dir = tmp();
    let pack = write_pack(
        dir.path(),
        "tiny",
        &[("pack.yaml", MANIFEST), ("cards.yaml", CARDS)],
    );
    let store = Store::new(&dir.path().join("profile"));
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink("/etc/passwd", pack.join("secret.yaml"))
            .unwrap_or_else(|e| panic!("{e}"));
        let refused = store.install(&pack, false, |_| None);
        assert!(
            refused
                .as_ref()
                .is_err_and(|e| e.to_string().contains("symbolic link")),
            "{refused:?}"
        );
        assert_eq!(store_entries(&store), Vec::<String>::new());
        std::fs::remove_file(pack.join("secret.yaml")).unwrap_or_else(|e| panic!("{e}"));
    }
    // An id that base content or mods has already.
    let taken = store.install(&pack, false, |id| {
        (id == "tiny").then(|| PathBuf::from("mods/tiny"))
    });
    assert!(
        taken
            .as_ref()
            .is_err_and(|e| e.to_string().contains("mods/tiny")),
        "{taken:?}"
    );
    assert_eq!(store_entries(&store), Vec::<String>::new());
    // Installed once; again is refused without --replace, and the first stays.
    let first = store
        .install(&pack, false, |_| None)
        .unwrap_or_else(|e| panic!("{e}"));
    let again = store.install(&pack, false, |_| None);
    assert!(matches!(again, Err(PackError::Exists { .. })), "{again:?}");
    assert_eq!(packs::hash(&first.dir).ok(), Some(first.hash.clone()));
    assert_eq!(store_entries(&store), vec!["tiny".to_string()]);
    // Removed: moved aside, not deleted.
    let moved = store.remove("tiny").unwrap_or_else(|e| panic!("{e}"));
    assert!(moved.join("pack.yaml").is_file());
    assert!(store.ids().is_empty());
}

/// `pack install --replace`, killed at many moments: afterwards (once recovered) the
/// store holds exactly the old pack or exactly the new one.
#[test]
fn a_replace_killed_at_any_moment_leaves_the_old_pack_or_the_new_one() {
    let dir = tmp();
    let profile = dir.path().join("profile");
    let profile_arg = profile.to_string_lossy().into_owned();
    // Many files, so an install takes long enough to be cut in the middle.
    let mut files: Vec<(String, String)> = vec![("pack.yaml".into(), MANIFEST.into())];
    files.extend((0..600).map(|i| (format!("notes/n{i:03}.md"), format!("note {i}\n"))));
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    let v1 = write_pack(&dir.path().join("v1"), "tiny", &refs);
    let v2_files: Vec<(&str, String)> = refs
        .iter()
        .map(|(a, b)| (*a, b.replace("1.0.0", "2.0.0").replace("note", "v2")))
        .collect();
    let v2_refs: Vec<(&str, &str)> = v2_files.iter().map(|(a, b)| (*a, b.as_str())).collect();
    let v2 = write_pack(&dir.path().join("v2"), "tiny", &v2_refs);
    let hashes = [
        packs::hash(&v1).unwrap_or_else(|e| panic!("{e}")),
        packs::hash(&v2).unwrap_or_else(|e| panic!("{e}")),
    ];
    let store = Store::new(&profile);
    store
        .install(&v1, false, |_| None)
        .unwrap_or_else(|e| panic!("{e}"));
    let install = |source: &Path| {
        support::tokensmith(["--profile", &profile_arg, "pack", "install", "--replace"])
            .arg(source)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("{e}"))
    };
    // How long one whole replace takes here: kills are spread from its start to past
    // its end, so some land in staging, some between the renames, some after.
    let started = std::time::Instant::now();
    let status = install(&v2).wait().unwrap_or_else(|e| panic!("{e}"));
    assert!(status.success());
    let whole = started.elapsed();
    let mut current = 1usize;
    let (mut kept, mut changed) = (0u32, 0u32);
    let rounds = 24u32;
    // From 0 to 1.5 times a whole replace.
    let mut delays: std::collections::VecDeque<std::time::Duration> = (0..rounds)
        .map(|round| whole * (round * 3) / (rounds * 2))
        .collect();
    let mut extra = 0u32;
    let mut round = 0u32;
    while let Some(delay) = delays.pop_front() {
        let (source, target) = if current == 0 { (&v2, 1) } else { (&v1, 0) };
        let mut child = install(source);
        std::thread::sleep(delay);
        let _ = child.kill();
        let _ = child.wait();
        store.recover();
        let now = packs::hash(&store.root().join("tiny"))
            .unwrap_or_else(|e| panic!("round {round}: {e}"));
        match hashes.iter().position(|h| *h == now) {
            Some(w) if w == current => kept += 1,
            Some(w) if w == target => {
                changed += 1;
                current = target;
            }
            _ => panic!("round {round}: the installed pack is neither version"),
        }
        let left: Vec<String> = store_entries(&store)
            .into_iter()
            .filter(|n| n != "tiny")
            .collect();
        assert!(left.is_empty(), "round {round}: left behind {left:?}");
        round += 1;
        // A machine busy with other tests may take longer over a replace than it did
        // over the first: until one kill lands late (and one at once), more rounds,
        // each waiting twice as long as the last.
        if delays.is_empty() && extra < 6 {
            if changed == 0 {
                delays.push_back(whole * (2 << extra));
                extra += 1;
            } else if kept == 0 {
                delays.push_back(std::time::Duration::ZERO);
                extra += 1;
            }
        }
    }
    // Killed at once, the old pack stays; killed late, the new one is in place.
    assert!(kept > 0 && changed > 0, "kept {kept}, changed {changed}");
}

fn folders(dir: &Path, mods: &Path) -> Folders {
    Folders {
        content: root().join("content"),
        mods: mods.to_path_buf(),
        installed: Some(Store::new(dir).root().to_path_buf()),
    }
}

#[test]
fn a_fresh_profile_plays_the_classic_game() {
    let dir = tmp();
    let f = folders(dir.path(), &root().join("mods"));
    let set = PackSet::open(dir.path());
    assert!(set.enabled().is_empty());
    let loaded = tokensmith::script::load(&packs::set::load_options(&f, &Selection::Set(set)));
    let catalog = loaded
        .catalog
        .unwrap_or_else(|| panic!("{:?}", loaded.diagnostics));
    assert_eq!(catalog.rules().score_limit, 1000);
    assert_eq!(
        catalog
            .packs()
            .iter()
            .map(|p| p.id.as_str())
            .collect::<Vec<_>>(),
        ["base"]
    );
    // Enabled, the example patch plays; the choice is kept for the next run.
    let p = dir.path().to_string_lossy().into_owned();
    let o = tokensmith(&["--profile", &p, "pack", "enable", "classic_rebalance"]);
    assert!(o.status.success(), "{}", text(&o));
    let set = PackSet::open(dir.path());
    assert_eq!(set.enabled(), ["classic_rebalance"]);
    let loaded = tokensmith::script::load(&packs::set::load_options(&f, &Selection::Set(set)));
    assert_eq!(loaded.catalog.map(|c| c.rules().score_limit), Some(800));
    let list = tokensmith(&["--profile", &p, "pack", "list", "--json"]);
    let v: serde_json::Value =
        serde_json::from_slice(&list.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&list)));
    let by_id = |id: &str| {
        v["packs"]
            .as_array()
            .and_then(|a| a.iter().find(|p| p["id"] == id))
            .cloned()
            .unwrap_or_default()
    };
    assert_eq!(by_id("base")["enabled"], true);
    assert_eq!(by_id("classic_rebalance")["enabled"], true);
    assert_eq!(by_id("frost")["enabled"], false);
    assert_eq!(by_id("frost")["source"], "mods");
    assert_eq!(by_id("base")["hash"].as_str().map(str::len), Some(64));
}

#[test]
fn enabling_brings_requirements_and_disabling_a_requirement_is_refused() {
    let dir = tmp();
    let mods = dir.path().join("mods");
    write_pack(
        &mods,
        "lower",
        &[(
            "pack.yaml",
            "id: lower\nversion: 1.2.0\nrequires: [{ id: base }]\n",
        )],
    );
    write_pack(
        &mods,
        "upper",
        &[(
            "pack.yaml",
            "id: upper\nversion: 1.0.0\nrequires: [{ id: lower, version: \"^1.1\" }]\n",
        )],
    );
    write_pack(
        &mods,
        "picky",
        &[(
            "pack.yaml",
            "id: picky\nversion: 1.0.0\nrequires: [{ id: lower, version: \"^2\" }]\n",
        )],
    );
    let p = dir.path().join("profile").to_string_lossy().into_owned();
    let m = mods.to_string_lossy().into_owned();
    let run = |args: &[&str]| tokensmith(&[&["--profile", &p, "--mods", &m], args].concat());
    let o = run(&["pack", "enable", "upper"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("enabled lower (required by upper)"),
        "{}",
        text(&o)
    );
    let o = run(&["pack", "enable", "picky"]);
    assert!(!o.status.success());
    assert!(
        text(&o).contains("requires 'lower' ^2, but 1.2.0 is found"),
        "{}",
        text(&o)
    );
    let o = run(&["pack", "disable", "lower"]);
    assert!(!o.status.success());
    assert!(text(&o).contains("'upper'"), "{}", text(&o));
    let o = run(&["pack", "disable", "lower", "--with-dependants"]);
    assert!(o.status.success(), "{}", text(&o));
    let set = PackSet::open(&dir.path().join("profile"));
    assert!(set.enabled().is_empty(), "{:?}", set.enabled());
    let o = run(&["pack", "enable", "uper"]);
    assert!(text(&o).contains("did you mean 'upper'"), "{}", text(&o));
    let o = run(&["pack", "disable", "base"]);
    assert!(text(&o).contains("always on"), "{}", text(&o));
}

#[test]
fn the_conflict_report_names_every_setter_and_follows_the_order() {
    let dir = tmp();
    let mods = dir.path().join("mods");
    let patch = |id: &str, value: u32, limit: u32| {
        write_pack(
            &mods,
            id,
            &[
                (
                    "pack.yaml",
                    &format!("id: {id}\nversion: 1.0.0\nrequires: [{{ id: base }}]\n"),
                ),
                (
                    "patch.yaml",
                    &format!(
                        "rules:\n  score_limit: {limit}\ncards:\n  - id: base:gift\n    value: {value}\n"
                    ),
                ),
            ],
        );
    };
    patch("alpha", 3, 700);
    patch("beta", 7, 900);
    let p = dir.path().join("profile").to_string_lossy().into_owned();
    let m = mods.to_string_lossy().into_owned();
    let run = |args: &[&str]| tokensmith(&[&["--profile", &p, "--mods", &m], args].concat());
    let o = run(&["pack", "conflicts"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(text(&o).contains("no conflicts"), "{}", text(&o));
    assert!(run(&["pack", "enable", "alpha"]).status.success());
    assert!(run(&["pack", "enable", "beta"]).status.success());
    let report = |o: &Output| -> serde_json::Value {
        serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(o)))
    };
    let o = run(&["pack", "conflicts", "--json"]);
    assert_eq!(o.status.code(), Some(1));
    let v = report(&o);
    let gift = v["fields"]
        .as_array()
        .and_then(|a| {
            a.iter()
                .find(|c| c["entry"] == "base:gift" && c["field"] == "value")
        })
        .cloned()
        .unwrap_or_default();
    let setters: Vec<(String, String)> = gift["setters"]
        .as_array()
        .map(|s| {
            s.iter()
                .map(|x| {
                    (
                        x["pack"].as_str().unwrap_or_default().to_string(),
                        x["value"].as_str().unwrap_or_default().to_string(),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    // Base defines it; by id, alpha loads before beta, so beta's value is played.
    assert_eq!(
        setters,
        [
            ("base".into(), "5".into()),
            ("alpha".into(), "3".into()),
            ("beta".into(), "7".into())
        ]
    );
    assert!(
        gift["setters"][1]["path"]
            .as_str()
            .is_some_and(|p| p.ends_with("alpha/patch.yaml"))
    );
    assert!(
        v["fields"]
            .as_array()
            .is_some_and(|a| a.iter().any(|c| c["field"] == "score_limit"))
    );
    // beta first in the user's order: alpha now wins, and the game agrees.
    assert!(run(&["pack", "order", "beta"]).status.success());
    let v = report(&run(&["pack", "conflicts", "--json"]));
    let winner = v["fields"]
        .as_array()
        .and_then(|a| a.iter().find(|c| c["field"] == "score_limit"))
        .and_then(|c| c["setters"].as_array().and_then(|s| s.last().cloned()))
        .unwrap_or_default();
    assert_eq!(winner["pack"], "alpha");
    let f = folders(&dir.path().join("profile"), &mods);
    let set = PackSet::open(&dir.path().join("profile"));
    let loaded = tokensmith::content::load(&packs::set::load_options(&f, &Selection::Set(set)));
    assert_eq!(loaded.catalog.map(|c| c.rules().score_limit), Some(700));
    // Text names the winner.
    let t = text(&run(&["pack", "conflicts"]));
    assert!(t.contains("wins alpha sets 700"), "{t}");
}

#[test]
fn a_pack_set_from_a_newer_version_is_left_alone_and_a_broken_one_set_aside() {
    let dir = tmp();
    let path = dir.path().join("packs.yaml");
    std::fs::write(&path, "format_version: 9\nenabled: [frost]\n")
        .unwrap_or_else(|e| panic!("{e}"));
    let set = PackSet::open(dir.path());
    assert!(set.enabled().is_empty());
    assert!(
        set.notes.iter().any(|n| n.contains("newer")),
        "{:?}",
        set.notes
    );
    assert!(set.save().is_err(), "not written over");
    std::fs::write(&path, "format_version: 1\nenabled: [\"../x\"]\n")
        .unwrap_or_else(|e| panic!("{e}"));
    let set = PackSet::open(dir.path());
    assert!(set.enabled().is_empty());
    assert!(dir.path().join("packs.corrupt").is_file(), "set aside");
    assert!(
        set.notes.iter().any(|n| n.contains("not a pack id")),
        "{:?}",
        set.notes
    );
}

/// Two packs that patch `base:gift`'s value without requiring each other.
fn two_patches(mods: &Path) {
    for (id, value) in [("alpha", 3), ("beta", 7)] {
        write_pack(
            mods,
            id,
            &[
                (
                    "pack.yaml",
                    &format!("id: {id}\nversion: 1.0.0\nrequires: [{{ id: base }}]\n"),
                ),
                (
                    "patch.yaml",
                    &format!("cards:\n  - id: base:gift\n    value: {value}\n"),
                ),
            ],
        );
    }
}

#[test]
fn pack_list_says_which_patch_wins_under_the_current_order() {
    let dir = tmp();
    let mods = dir.path().join("mods");
    two_patches(&mods);
    let p = dir.path().join("profile").to_string_lossy().into_owned();
    let m = mods.to_string_lossy().into_owned();
    let run = |args: &[&str]| tokensmith(&[&["--profile", &p, "--mods", &m], args].concat());
    assert!(run(&["pack", "enable", "alpha"]).status.success());
    assert!(run(&["pack", "enable", "beta"]).status.success());
    let warnings = |id: &str| -> String {
        let o = run(&["pack", "list", "--json"]);
        let v: serde_json::Value =
            serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&o)));
        v["packs"]
            .as_array()
            .and_then(|a| a.iter().find(|p| p["id"] == id))
            .map(|p| p["warnings"].to_string())
            .unwrap_or_default()
    };
    // By id, alpha loads first: beta's patch is the later one and wins.
    assert!(
        warnings("beta").contains("also patched by pack 'alpha'"),
        "{}",
        warnings("beta")
    );
    assert!(!warnings("alpha").contains("later in load order"));
    // beta first: now alpha's patch is the one played, and the list says so.
    assert!(run(&["pack", "order", "beta"]).status.success());
    let (a, b) = (warnings("alpha"), warnings("beta"));
    assert!(
        a.contains("also patched by pack 'beta'")
            && a.contains("this patch, later in load order, wins"),
        "{a}"
    );
    assert!(!b.contains("later in load order"), "{b}");
    // The conflict report and the game agree.
    let t = text(&run(&["pack", "conflicts"]));
    assert!(t.contains("wins alpha sets 3"), "{t}");
    assert!(t.contains("the load order decides"), "{t}");
}

#[test]
fn an_override_of_a_required_pack_is_not_a_conflict() {
    let dir = tmp();
    let p = dir.path().join("profile").to_string_lossy().into_owned();
    let run = |args: &[&str]| tokensmith(&[&["--profile", &p], args].concat());
    assert!(
        run(&["pack", "enable", "classic_rebalance"])
            .status
            .success()
    );
    // classic_rebalance requires base: its score limit is played in every order.
    let o = run(&["pack", "conflicts"]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    assert!(
        t.starts_with("no conflicts among the enabled packs\n"),
        "{t}"
    );
    assert!(t.contains("overrides (intended"), "{t}");
    assert!(t.contains("wins classic_rebalance sets 800"), "{t}");
    assert!(!t.contains("the load order decides"), "{t}");
    let o = run(&["pack", "conflicts", "--json"]);
    let v: serde_json::Value =
        serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&o)));
    assert_eq!(o.status.code(), Some(0));
    assert!(
        v["fields"]
            .as_array()
            .is_some_and(|a| !a.is_empty() && a.iter().all(|c| c["order_decides"] == false)),
        "{v}"
    );
    // Two packs that do not require each other: the order decides, exit 1.
    let mods = dir.path().join("mods");
    two_patches(&mods);
    let m = mods.to_string_lossy().into_owned();
    let run = |args: &[&str]| tokensmith(&[&["--profile", &p, "--mods", &m], args].concat());
    assert!(run(&["pack", "enable", "alpha"]).status.success());
    assert!(run(&["pack", "enable", "beta"]).status.success());
    let o = run(&["pack", "conflicts"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        text(&o).contains("card base:gift: value: the load order decides"),
        "{}",
        text(&o)
    );
}

#[test]
fn a_removed_pack_leaves_the_enabled_set_and_the_order() {
    let dir = tmp();
    let profile = dir.path().join("profile");
    let pack = write_pack(
        dir.path(),
        "tiny",
        &[("pack.yaml", MANIFEST), ("cards.yaml", CARDS)],
    );
    let p = profile.to_string_lossy().into_owned();
    let run = |args: &[&str]| tokensmith(&[&["--profile", &p], args].concat());
    let o = run(&["pack", "install", &pack.to_string_lossy()]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(run(&["pack", "enable", "tiny"]).status.success());
    assert!(run(&["pack", "order", "tiny"]).status.success());
    assert_eq!(PackSet::open(&profile).order(), ["tiny"]);
    let o = run(&["pack", "remove", "tiny"]);
    assert!(o.status.success(), "{}", text(&o));
    let set = PackSet::open(&profile);
    assert!(set.order().is_empty(), "{:?}", set.order());
    assert!(set.enabled().is_empty(), "{:?}", set.enabled());
    let yaml = std::fs::read_to_string(profile.join("packs.yaml")).unwrap_or_default();
    assert!(!yaml.contains("tiny"), "{yaml}");
}

#[test]
fn installing_a_folder_of_packs_names_the_packs() {
    let dir = tmp();
    let p = dir.path().join("profile").to_string_lossy().into_owned();
    let o = tokensmith(&["--profile", &p, "pack", "install", "mods"]);
    let t = text(&o);
    assert!(!o.status.success(), "{t}");
    assert!(t.contains("mods is a folder of packs"), "{t}");
    for id in ["classic_rebalance", "example_scripted", "frost"] {
        assert!(t.contains(id), "{t}");
    }
    assert!(t.contains("tokensmith pack install mods/"), "{t}");
    assert!(!t.contains("already"), "{t}");
    assert!(!dir.path().join("profile/packs/classic_rebalance").exists());
}
