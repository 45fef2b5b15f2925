//! Hostile archives and profiles, round two: archives crafted byte by byte (ZIP64 end
//! records, local headers that disagree with the directory, names twice), names that
//! clash after Unicode normalisation or case folding, Windows device names and
//! characters, folders nested past the cap, ids too long to replace; profile folders
//! that are links out of the profile; commands that run at the same time. Every refusal
//! names what is wrong, and nothing outside the profile changes.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::{Duration, Instant};

use tokensmith::packs::{PackError, PackSet, Store};
use tokensmith::profile::{Access, ProfileLock};

use crate::support;

const MANIFEST: &str =
    "id: tiny\nname: Tiny\nversion: 1.0.0\nrequires:\n  - { id: base, version: \"^1\" }\n";

fn tmp() -> tempfile::TempDir {
    tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"))
}

fn tokensmith(args: &[&str], envs: &[(&str, &str)]) -> Output {
    support::tokensmith(args)
        .envs(envs.iter().copied())
        .output()
        .unwrap_or_else(|e| panic!("the binary runs: {e}"))
}

/// `pack install SOURCE` into the profile `profile`, with `envs` set.
fn install(profile: &str, source: &Path, envs: &[(&str, &str)]) -> Output {
    tokensmith(
        &[
            "--profile",
            profile,
            "pack",
            "install",
            &source.to_string_lossy(),
        ],
        envs,
    )
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Every file and folder under `dir` (links not followed) with its bytes: what must not
/// change.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.filter_map(Result::ok) {
            let p = e.path();
            let kind = e.file_type().unwrap_or_else(|e| panic!("{e}"));
            if kind.is_dir() {
                stack.push(p.clone());
                out.insert(p, Vec::new());
            } else if kind.is_symlink() {
                out.insert(p.clone(), b"->".to_vec());
            } else {
                out.insert(p.clone(), std::fs::read(&p).unwrap_or_default());
            }
        }
    }
    out
}

// ---------------------------------------------------------------------------------
// A zip writer for crafted archives: stored entries, every field under the test's
// control.

fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in bytes {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// One entry; the `local_*` fields, when set, go into the local header instead.
#[derive(Clone, Default)]
struct Entry {
    name: String,
    data: Vec<u8>,
    local_name: Option<String>,
    local_method: Option<u16>,
    local_flags: Option<u16>,
    local_size: Option<u32>,
    /// ZIP64 extra fields with the sizes (and 0xFFFFFFFF in the 32-bit fields).
    zip64: bool,
}

fn entry(name: &str, data: &[u8]) -> Entry {
    Entry {
        name: name.into(),
        data: data.to_vec(),
        ..Entry::default()
    }
}

fn u16le(v: &mut Vec<u8>, x: u16) {
    v.extend_from_slice(&x.to_le_bytes());
}
fn u32le(v: &mut Vec<u8>, x: u32) {
    v.extend_from_slice(&x.to_le_bytes());
}
fn u64le(v: &mut Vec<u8>, x: u64) {
    v.extend_from_slice(&x.to_le_bytes());
}

fn len16(n: usize) -> u16 {
    u16::try_from(n).unwrap_or_else(|e| panic!("{e}"))
}
fn len32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or_else(|e| panic!("{e}"))
}

/// The archive of `entries`; with `zip64_end`, the end record defers to ZIP64 records
/// (0xFFFF entries, 0xFFFFFFFF offsets), as large archives have.
fn craft(entries: &[Entry], zip64_end: bool) -> Vec<u8> {
    let mut out = Vec::new();
    let mut central = Vec::new();
    for e in entries {
        let offset = out.len();
        let crc = crc32(&e.data);
        let size = len32(e.data.len());
        let extra = |v: &mut Vec<u8>, size: u64| {
            if e.zip64 {
                u16le(v, 1);
                u16le(v, 16);
                u64le(v, size);
                u64le(v, size);
            }
        };
        let mut extra_bytes = Vec::new();
        extra(&mut extra_bytes, e.data.len() as u64);
        let mut local_extra = Vec::new();
        extra(
            &mut local_extra,
            e.local_size.map_or(e.data.len() as u64, u64::from),
        );
        let field = |x: u32| if e.zip64 { u32::MAX } else { x };
        // Local header.
        let local_name = e.local_name.as_deref().unwrap_or(&e.name);
        u32le(&mut out, 0x0403_4b50);
        u16le(&mut out, 45);
        u16le(&mut out, e.local_flags.unwrap_or(0x0800));
        u16le(&mut out, e.local_method.unwrap_or(0));
        u16le(&mut out, 0);
        u16le(&mut out, 0x21);
        u32le(&mut out, crc);
        u32le(&mut out, field(e.local_size.unwrap_or(size)));
        u32le(&mut out, field(e.local_size.unwrap_or(size)));
        u16le(&mut out, len16(local_name.len()));
        u16le(&mut out, len16(local_extra.len()));
        out.extend_from_slice(local_name.as_bytes());
        out.extend_from_slice(&local_extra);
        out.extend_from_slice(&e.data);
        // Central record.
        u32le(&mut central, 0x0201_4b50);
        u16le(&mut central, 0x031e);
        u16le(&mut central, 45);
        u16le(&mut central, 0x0800);
        u16le(&mut central, 0);
        u16le(&mut central, 0);
        u16le(&mut central, 0x21);
        u32le(&mut central, crc);
        u32le(&mut central, field(size));
        u32le(&mut central, field(size));
        u16le(&mut central, len16(e.name.len()));
        u16le(&mut central, len16(extra_bytes.len()));
        u16le(&mut central, 0);
        u16le(&mut central, 0);
        u16le(&mut central, 0);
        u32le(&mut central, 0o100_644 << 16);
        u32le(&mut central, len32(offset));
        central.extend_from_slice(e.name.as_bytes());
        central.extend_from_slice(&extra_bytes);
    }
    let cd_at = out.len();
    out.extend_from_slice(&central);
    let count = entries.len();
    if zip64_end {
        let z = out.len();
        u32le(&mut out, 0x0606_4b50);
        u64le(&mut out, 44);
        u16le(&mut out, 45);
        u16le(&mut out, 45);
        u32le(&mut out, 0);
        u32le(&mut out, 0);
        u64le(&mut out, count as u64);
        u64le(&mut out, count as u64);
        u64le(&mut out, central.len() as u64);
        u64le(&mut out, cd_at as u64);
        u32le(&mut out, 0x0706_4b50);
        u32le(&mut out, 0);
        u64le(&mut out, z as u64);
        u32le(&mut out, 1);
    }
    u32le(&mut out, 0x0605_4b50);
    u16le(&mut out, 0);
    u16le(&mut out, 0);
    let (n, size, at) = if zip64_end {
        (u16::MAX, u32::MAX, u32::MAX)
    } else {
        (len16(count), len32(central.len()), len32(cd_at))
    };
    u16le(&mut out, n);
    u16le(&mut out, n);
    u32le(&mut out, size);
    u32le(&mut out, at);
    u16le(&mut out, 0);
    out
}

/// A valid pack's entries in `tiny/`, plus `more`.
fn pack_with(more: &[Entry]) -> Vec<Entry> {
    let mut v = vec![
        entry("tiny/pack.yaml", MANIFEST.as_bytes()),
        entry("tiny/cards.yaml", b"cards: []\n"),
    ];
    v.extend(more.iter().cloned());
    v
}

/// Install `bytes` as an archive into a fresh profile; the outcome, and whether
/// anything outside the profile (the temporary folder holding the archive) changed.
fn install_bytes(bytes: &[u8]) -> Result<String, String> {
    let dir = tmp();
    let file = dir.path().join("in.zip");
    std::fs::write(&file, bytes).unwrap_or_else(|e| panic!("{e}"));
    let profile = dir.path().join("profile");
    std::fs::create_dir(&profile).unwrap_or_else(|e| panic!("{e}"));
    let outside = |s: &BTreeMap<PathBuf, Vec<u8>>| {
        s.iter()
            .filter(|(p, _)| !p.starts_with(&profile))
            .map(|(p, b)| (p.clone(), b.clone()))
            .collect::<BTreeMap<_, _>>()
    };
    let before = outside(&snapshot(dir.path()));
    let store = Store::new(&profile);
    let done = store.install(&file, false, |_| None);
    assert_eq!(
        outside(&snapshot(dir.path())),
        before,
        "nothing outside the profile changes"
    );
    match done {
        Ok(i) => Ok(i.id),
        Err(e) => {
            let left: Vec<_> = std::fs::read_dir(store.root())
                .map(|d| d.filter_map(Result::ok).map(|e| e.file_name()).collect())
                .unwrap_or_default();
            assert!(
                left.is_empty(),
                "a refused install leaves nothing: {left:?}"
            );
            Err(e.to_string())
        }
    }
}

fn refused(bytes: &[u8], what: &str, wants: &[&str]) {
    match install_bytes(bytes) {
        Ok(id) => panic!("{what}: installed {id}"),
        Err(message) => {
            for w in wants {
                assert!(message.contains(w), "{what}: {message:?} lacks {w:?}");
            }
            assert!(!message.contains(".staging"), "{what}: {message}");
        }
    }
}

#[test]
fn the_crafted_writer_makes_archives_that_install() {
    // The control: what the attacks below change, untouched, installs.
    for zip64 in [false, true] {
        let mut entries = pack_with(&[]);
        for e in &mut entries {
            e.zip64 = zip64;
        }
        let got = install_bytes(&craft(&entries, zip64));
        assert_eq!(got, Ok("tiny".to_string()), "zip64 {zip64}");
    }
}

#[test]
fn a_name_twice_is_refused_in_zip64_archives_too() {
    for zip64 in [false, true] {
        let mut entries = pack_with(&[entry("tiny/cards.yaml", b"cards: [evil]\n")]);
        for e in &mut entries {
            e.zip64 = zip64;
        }
        refused(
            &craft(&entries, zip64),
            &format!("twice, zip64 {zip64}"),
            &["tiny/cards.yaml", "appears twice"],
        );
    }
    // The pack's manifest twice: which one installs would depend on the tool.
    let entries = pack_with(&[entry("tiny/pack.yaml", b"id: other\nversion: 9.9.9\n")]);
    refused(
        &craft(&entries, true),
        "manifest twice",
        &["tiny/pack.yaml", "twice"],
    );
}

#[test]
fn local_headers_that_disagree_with_the_directory_are_refused() {
    let cases: Vec<(&str, Entry, &str)> = vec![
        (
            "name",
            Entry {
                local_name: Some("tiny/evil.yaml".into()),
                ..entry("tiny/good.yaml", b"x: 1\n")
            },
            "name",
        ),
        (
            "name with a climb",
            Entry {
                local_name: Some("../../evil.ya".into()),
                ..entry("tiny/good.yaml", b"x: 1\n")
            },
            "name",
        ),
        (
            "method",
            Entry {
                local_method: Some(8),
                ..entry("tiny/good.yaml", b"x: 1\n")
            },
            "compression method",
        ),
        (
            "flags",
            Entry {
                local_flags: Some(0x0801),
                ..entry("tiny/good.yaml", b"x: 1\n")
            },
            "flags",
        ),
        (
            "size",
            Entry {
                local_size: Some(2),
                ..entry("tiny/good.yaml", b"x: 1\n")
            },
            "size",
        ),
    ];
    for (what, e, says) in cases {
        for zip64 in [false, true] {
            let mut entries = pack_with(std::slice::from_ref(&e));
            for x in &mut entries {
                x.zip64 = zip64;
            }
            refused(
                &craft(&entries, zip64),
                &format!("{what}, zip64 {zip64}"),
                &["tiny/good.yaml", says, "local header"],
            );
        }
    }
    // Two directory records pointing at one local header: the second's name differs.
    let mut bytes = craft(
        &pack_with(&[
            entry("tiny/aaaa.yaml", b"a: 1\n"),
            entry("tiny/bbbb.yaml", b"b: 1\n"),
        ]),
        false,
    );
    // Point the last record at the one before it (offsets are the last 4 bytes before
    // each name in the directory; found by searching the name).
    let find = |hay: &[u8], needle: &[u8]| hay.windows(needle.len()).rposition(|w| w == needle);
    let a_local = bytes
        .windows(14)
        .position(|w| w == b"tiny/aaaa.yaml")
        .map(|i| i - 30);
    let b_central = find(&bytes, b"tiny/bbbb.yaml");
    if let (Some(a), Some(b)) = (a_local, b_central) {
        let a = u32::try_from(a).unwrap_or_else(|e| panic!("{e}"));
        bytes[b - 4..b].copy_from_slice(&a.to_le_bytes());
    }
    refused(&bytes, "shared local header", &["tiny/bbbb.yaml"]);
}

#[test]
fn names_that_clash_after_normalisation_or_case_folding_are_refused() {
    let pairs = [
        ("tiny/caf\u{e9}.yaml", "tiny/cafe\u{301}.yaml"),
        ("tiny/\u{131}.yaml", "tiny/i.yaml"),
        ("tiny/\u{131}.yaml", "tiny/I.yaml"),
        ("tiny/stra\u{df}e.yaml", "tiny/STRASSE.yaml"),
        ("tiny/\u{212a}.yaml", "tiny/k.yaml"),
        ("tiny/\u{17f}.yaml", "tiny/S.yaml"),
        ("tiny/\u{c4}/a.yaml", "tiny/a\u{308}/b.yaml"),
        ("tiny/\u{3a3}.yaml", "tiny/\u{3c2}.yaml"),
    ];
    for (a, b) in pairs {
        refused(
            &craft(
                &pack_with(&[entry(a, b"x: 1\n"), entry(b, b"y: 1\n")]),
                false,
            ),
            &format!("{a} / {b}"),
            &["letter case or Unicode normalisation"],
        );
    }
    // The same names alone install.
    assert_eq!(
        install_bytes(&craft(
            &pack_with(&[entry("tiny/caf\u{e9}.yaml", b"x: 1\n")]),
            false
        )),
        Ok("tiny".to_string())
    );
}

#[test]
fn windows_device_names_and_characters_are_refused() {
    for name in [
        "COM\u{b9}.yaml",
        "lpt\u{b2}",
        "CONIN$",
        "conout$.yaml",
        "CLOCK$.txt",
        "nul .txt",
        "aux.tar.gz",
        "Com0.yaml",
        "prn.yaml",
    ] {
        refused(
            &craft(&pack_with(&[entry(&format!("tiny/{name}"), b"x")]), false),
            name,
            &["device name"],
        );
    }
    for name in [
        "a?.yaml", "b*.yaml", "c<.yaml", "d>.yaml", "e|.yaml", "f\".yaml",
    ] {
        refused(
            &craft(&pack_with(&[entry(&format!("tiny/{name}"), b"x")]), false),
            name,
            &["Windows refuses"],
        );
    }
    for name in ["g\u{7}.yaml", "h\u{1f}", "dots...", "space "] {
        refused(
            &craft(&pack_with(&[entry(&format!("tiny/{name}"), b"x")]), false),
            name,
            &["entry"],
        );
    }
    // Near misses install.
    for name in ["console.yaml", "com10.yaml", "auxiliary.yaml", "conin.yaml"] {
        assert_eq!(
            install_bytes(&craft(
                &pack_with(&[entry(&format!("tiny/{name}"), b"x")]),
                false
            )),
            Ok("tiny".to_string()),
            "{name}"
        );
    }
}

#[test]
fn folders_nested_past_the_cap_are_refused_at_install() {
    let cap = tokensmith::packs::CAPS.depth;
    let deep = |n: usize| {
        let mut p = "tiny".to_string();
        for i in 0..n {
            p.push_str(&format!("/d{i}"));
        }
        p.push_str("/x.yaml");
        p
    };
    // At the cap: installs.
    assert_eq!(
        install_bytes(&craft(&pack_with(&[entry(&deep(cap), b"x: 1\n")]), false)),
        Ok("tiny".to_string())
    );
    // One past it: refused with the entry's name (the loader would refuse it at every
    // command that plays).
    let past = deep(cap + 1);
    refused(
        &craft(&pack_with(&[entry(&past, b"x: 1\n")]), false),
        "too deep",
        &[past.as_str(), "nest more than 16"],
    );
}

fn pack_folder(dir: &Path, id: &str, version: &str, files: usize) -> PathBuf {
    let pack = dir.join(format!("src-{}-{}-{version}", &id[..1], id.len()));
    std::fs::create_dir_all(&pack).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(
        pack.join("pack.yaml"),
        format!("id: {id}\nname: X\nversion: {version}\nrequires:\n  - {{ id: base, version: \"^1\" }}\n"),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    for i in 0..files {
        std::fs::write(pack.join(format!("f{i:04}.txt")), format!("{version} {i}"))
            .unwrap_or_else(|e| panic!("{e}"));
    }
    pack
}

#[test]
fn ids_too_long_to_replace_are_refused_and_the_longest_allowed_replaces() {
    let dir = tmp();
    let store = Store::new(&dir.path().join("profile"));
    let max = tokensmith::packs::MAX_ID_BYTES;
    for len in [max + 1, 255] {
        let id = "a".repeat(len);
        let pack = pack_folder(dir.path(), &id, "1.0.0", 1);
        let got = store.install(&pack, false, |_| None);
        let message = got.map(|i| i.id).unwrap_err_or_panic();
        assert!(message.contains(&format!("at most {max}")), "{message}");
        assert!(store.ids().is_empty());
    }
    let id = "a".repeat(max);
    let v1 = pack_folder(dir.path(), &id, "1.0.0", 1);
    let v2 = pack_folder(dir.path(), &id, "2.0.0", 1);
    store
        .install(&v1, false, |_| None)
        .unwrap_or_else(|e| panic!("{e}"));
    let again = store
        .install(&v2, true, |_| None)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(again.replaced.as_deref(), Some("1.0.0"));
    let moved = store.remove(&id).unwrap_or_else(|e| panic!("{e}"));
    assert!(moved.join("pack.yaml").is_file());
}

trait UnwrapErr {
    fn unwrap_err_or_panic(self) -> String;
}
impl UnwrapErr for Result<String, PackError> {
    fn unwrap_err_or_panic(self) -> String {
        match self {
            Ok(id) => panic!("installed {id}"),
            Err(e) => e.to_string(),
        }
    }
}

#[test]
fn refusals_name_the_archive_and_are_the_same_on_every_run() {
    let dir = tmp();
    let bytes = craft(
        &[
            entry("tiny/pack.yaml", b"id: tiny\nversion: one\n"),
            entry("tiny/cards.yaml", b"cards: []\n"),
        ],
        false,
    );
    let file = dir.path().join("broken.zip");
    std::fs::write(&file, bytes).unwrap_or_else(|e| panic!("{e}"));
    let file = file.to_string_lossy().to_string();
    let mut outputs = Vec::new();
    for _ in 0..2 {
        let profile = dir.path().join("profile");
        let out = tokensmith(
            &[
                "--profile",
                &profile.to_string_lossy(),
                "pack",
                "install",
                &file,
            ],
            &[],
        );
        assert!(!out.status.success());
        let t = text(&out);
        assert!(!t.contains(".staging"), "{t}");
        assert!(t.contains("broken.zip/pack.yaml"), "{t}");
        outputs.push(t);
    }
    assert_eq!(outputs[0], outputs[1]);
}

// ---------------------------------------------------------------------------------
// The profile.

#[cfg(unix)]
fn link(to: &Path, at: &Path) {
    std::os::unix::fs::symlink(to, at).unwrap_or_else(|e| panic!("{e}"));
}

#[cfg(unix)]
#[test]
fn profile_folders_that_are_links_are_refused_and_nothing_outside_changes() {
    let dir = tmp();
    let outside = dir.path().join("outside");
    std::fs::create_dir_all(outside.join("tiny")).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(outside.join("note.yaml"), "not a deck: [").unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(
        outside.join("My Deck.yaml"),
        "format_version: 2\nid: x\nname: X\nstacks: []\n",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(outside.join("tiny/pack.yaml"), MANIFEST).unwrap_or_else(|e| panic!("{e}"));
    let before = snapshot(&outside);
    let source = pack_folder(dir.path(), "tiny", "1.0.0", 2);
    let profile = dir.path().join("profile");
    let p = profile.to_string_lossy().to_string();
    std::fs::create_dir_all(&profile).unwrap_or_else(|e| panic!("{e}"));

    // packs/ as a link: install refused, naming the path.
    link(&outside, &profile.join("packs"));
    let out = install(&p, &source, &[]);
    let t = text(&out);
    assert!(!out.status.success(), "{t}");
    assert!(
        t.contains("packs is a symbolic link") && t.contains("real folder"),
        "{t}"
    );
    let out = tokensmith(&["--profile", &p, "pack", "remove", "tiny"], &[]);
    assert!(!out.status.success(), "{}", text(&out));
    std::fs::remove_file(profile.join("packs")).unwrap_or_else(|e| panic!("{e}"));

    // decks/ as a link: listing renames nothing out there.
    link(&outside, &profile.join("decks"));
    let out = tokensmith(&["--profile", &p, "deck", "list"], &[]);
    let t = text(&out);
    assert!(!out.status.success(), "{t}");
    assert!(t.contains("decks is a symbolic link"), "{t}");
    std::fs::remove_file(profile.join("decks")).unwrap_or_else(|e| panic!("{e}"));

    // packs-removed/ as a link: remove refused, the pack stays installed.
    let out = install(&p, &source, &[]);
    assert!(out.status.success(), "{}", text(&out));
    link(&outside, &profile.join("packs-removed"));
    let out = tokensmith(&["--profile", &p, "pack", "remove", "tiny"], &[]);
    let t = text(&out);
    assert!(!out.status.success(), "{t}");
    assert!(t.contains("packs-removed is a symbolic link"), "{t}");
    assert!(profile.join("packs/tiny/pack.yaml").is_file());

    assert_eq!(
        snapshot(&outside),
        before,
        "nothing outside the profile changed"
    );
}

#[test]
fn a_command_waits_a_bounded_time_for_a_profile_in_use_and_says_so() {
    let dir = tmp();
    let profile = dir.path().join("profile");
    let p = profile.to_string_lossy().to_string();
    let source = pack_folder(dir.path(), "tiny", "1.0.0", 2);
    let held = ProfileLock::acquire(&profile, Access::Write).unwrap_or_else(|e| panic!("{e}"));
    let started = Instant::now();
    let out = install(&p, &source, &[("TOKENSMITH_LOCK_WAIT_MS", "300")]);
    let t = text(&out);
    assert!(!out.status.success(), "{t}");
    assert!(t.contains("in use by another Tokensmith"), "{t}");
    assert!(started.elapsed() < Duration::from_secs(30));
    assert!(!profile.join("packs/tiny").exists());
    drop(held);
    // Readers share: a reader holding the profile (the client, say) does not stop a list.
    let reader = ProfileLock::acquire(&profile, Access::Read).unwrap_or_else(|e| panic!("{e}"));
    let out = tokensmith(
        &["--profile", &p, "pack", "list"],
        &[("TOKENSMITH_LOCK_WAIT_MS", "300")],
    );
    assert!(out.status.success(), "{}", text(&out));
    // ...but a change waits for it.
    let out = install(&p, &source, &[("TOKENSMITH_LOCK_WAIT_MS", "300")]);
    assert!(!out.status.success(), "{}", text(&out));
    drop(reader);
    let out = install(&p, &source, &[]);
    assert!(out.status.success(), "{}", text(&out));
}

#[test]
fn recovery_never_touches_an_install_in_progress() {
    let dir = tmp();
    let profile = dir.path().join("profile");
    let store = Store::new(&profile);
    std::fs::create_dir_all(store.root().join(".staging-busy/pack"))
        .unwrap_or_else(|e| panic!("{e}"));
    // Another process holds the profile for a change: its staging folder stays.
    let held = ProfileLock::acquire(&profile, Access::Write).unwrap_or_else(|e| panic!("{e}"));
    let out = tokensmith(
        &["--profile", &profile.to_string_lossy(), "pack", "list"],
        &[],
    );
    assert!(
        store.root().join(".staging-busy").is_dir(),
        "{}",
        text(&out)
    );
    assert!(store.recover().is_empty());
    assert!(store.root().join(".staging-busy").is_dir());
    drop(held);
    // Once no one holds it, it is an unfinished install and is cleared.
    assert_eq!(store.recover().len(), 1);
    assert!(!store.root().join(".staging-busy").exists());
}

#[test]
fn replaces_racing_recoveries_never_lose_the_pack_and_report_success_only_when_whole() {
    let dir = tmp();
    let profile = dir.path().join("profile");
    let v1 = pack_folder(dir.path(), "tiny", "1.0.0", 250);
    let v2 = pack_folder(dir.path(), "tiny", "2.0.0", 250);
    let store = Store::new(&profile);
    store
        .install(&v1, false, |_| None)
        .unwrap_or_else(|e| panic!("{e}"));
    let stop = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|s| {
        let recoverer = s.spawn(|| {
            let store = Store::new(&profile);
            let mut rounds = 0;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                store.recover();
                // The pack is always there, whole (in one version or the other).
                let _reader =
                    ProfileLock::acquire(&profile, Access::Read).unwrap_or_else(|e| panic!("{e}"));
                let files = std::fs::read_dir(store.root().join("tiny"))
                    .map(Iterator::count)
                    .unwrap_or(0);
                assert_eq!(files, 251, "the installed pack is whole");
                rounds += 1;
            }
            rounds
        });
        for i in 0..6 {
            let from = if i % 2 == 0 { &v2 } else { &v1 };
            let done = store
                .install(from, true, |_| None)
                .unwrap_or_else(|e| panic!("{e}"));
            let files = std::fs::read_dir(&done.dir)
                .map(Iterator::count)
                .unwrap_or(0);
            assert_eq!(files, 251, "a reported success has every file");
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        let rounds = recoverer
            .join()
            .unwrap_or_else(|_| panic!("the recoverer panicked"));
        assert!(rounds > 0);
    });
}

#[test]
fn long_order_lists_are_bounded_and_ordering_is_linear() {
    let dir = tmp();
    let profile = dir.path().join("profile");
    std::fs::create_dir_all(&profile).unwrap_or_else(|e| panic!("{e}"));
    let max = tokensmith::packs::set::MAX_SET_IDS;
    let ids: String = (0..=max).map(|i| format!("  - \"p{i}\"\n")).collect();
    std::fs::write(
        profile.join("packs.yaml"),
        format!("format_version: 1\nenabled: []\norder:\n{ids}"),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let set = PackSet::open(&profile);
    assert!(set.order().is_empty());
    assert!(
        set.notes
            .iter()
            .any(|n| n.contains(&format!("at most {max}"))),
        "{:?}",
        set.notes
    );
    // put_first and ranked on long lists: linear (100,000 ids each; quadratic would
    // take minutes).
    let mut set = PackSet::default();
    let many: Vec<String> = (0..100_000).map(|i| format!("p{i}")).collect();
    set.set_order(many.clone());
    let started = Instant::now();
    set.put_first(&many[50_000..]);
    let ranked = set.ranked(&many);
    assert_eq!(ranked.len(), many.len());
    assert_eq!(ranked[0], "p50000");
    assert!(started.elapsed() < Duration::from_secs(20));
}

#[test]
fn deck_files_whose_names_slug_alike_are_listed_in_linear_time() {
    let dir = tmp();
    let profile = dir.path().join("profile");
    let decks = profile.join("decks");
    std::fs::create_dir_all(&decks).unwrap_or_else(|e| panic!("{e}"));
    let n = 300;
    let marks = ['!', '@', '#', '%', '^', '&', '(', ')'];
    for i in 0..n {
        // `Deck!!!`, `Deck!!@`, … all slug to `deck`.
        let suffix: String = [i / 64, (i / 8) % 8, i % 8]
            .iter()
            .map(|&d| marks[d])
            .collect();
        std::fs::write(
            decks.join(format!("Deck{suffix}.yaml")),
            "format_version: 2\nid: x\nname: Deck\nstacks: []\n",
        )
        .unwrap_or_else(|e| panic!("{e}"));
    }
    let started = Instant::now();
    let mut p = tokensmith::profile::Profile::open(&profile).unwrap_or_else(|e| panic!("{e}"));
    let listed = p.decks();
    assert_eq!(listed.len(), n);
    assert!(listed.iter().any(|d| d.id == "deck"));
    assert!(listed.iter().any(|d| d.id == format!("deck-{n}")));
    assert!(started.elapsed() < Duration::from_secs(30));
}

/// Write `n` packs `p0000`, `p0001`, … into `dir`, each a `pack.yaml` alone whose
/// `requires:` section (or nothing) `requires(i)` gives.
fn write_packs(dir: &Path, n: usize, requires: impl Fn(usize) -> String) {
    for i in 0..n {
        let folder = dir.join(format!("p{i:04}"));
        std::fs::create_dir_all(&folder).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(
            folder.join("pack.yaml"),
            format!("id: p{i:04}\nname: P{i}\nversion: 1.0.0\n{}", requires(i)),
        )
        .unwrap_or_else(|e| panic!("{e}"));
    }
}

#[test]
fn four_thousand_packs_in_a_chain_of_requirements_are_ordered_in_linear_time() {
    // Each pack requires the one before it: ordering them once took seconds (each pack's
    // dependencies were gathered by searching the ones gathered so far).
    let dir = tmp();
    let n = 4000;
    write_packs(dir.path(), n, |i| {
        if i == 0 {
            "requires:\n  - { id: base, version: \"^1\" }\n".to_string()
        } else {
            format!("requires:\n  - {{ id: p{:04}, version: \"^1\" }}\n", i - 1)
        }
    });
    let started = Instant::now();
    let loaded = support::load_folders(
        &[support::root().join("content"), dir.path().to_path_buf()],
        None,
    );
    let took = started.elapsed();
    let errors: Vec<_> = loaded
        .diagnostics
        .iter()
        .filter(|d| d.severity == tokensmith::content::Severity::Error)
        .take(3)
        .collect();
    assert!(errors.is_empty(), "{errors:?}");
    let catalog = loaded.catalog.expect("the chain loads");
    let ids: Vec<&str> = catalog.packs().iter().map(|p| p.id.as_str()).collect();
    assert_eq!(ids.len(), n + 1, "base and the chain");
    assert!(
        ids.windows(2).all(|w| w[0] < w[1]),
        "each after what it requires"
    );
    eprintln!("{n} packs in a chain loaded in {took:?}");
    assert!(took < Duration::from_secs(4), "took {took:?}");
}

// ---------------------------------------------------------------------------------
// Load totals: the YAML parse work of a load is bounded per pack and for all packs
// together, and entries are counted as they are read; a load that goes over stops there
// and names the pack and file.

/// A 460-byte file whose `*alias` repeats expand to 10^10 values.
fn alias_bomb() -> String {
    let mut text = String::from("a: &a [x, x, x, x, x, x, x, x, x, x]\n");
    let mut prev = 'a';
    for name in "bcdefghij".chars() {
        let refs = vec![format!("*{prev}"); 10].join(", ");
        text.push_str(&format!("{name}: &{name} [{refs}]\n"));
        prev = name;
    }
    text
}

/// A pack `id` (requiring `requires`, if any) with `files` files of `text` each.
fn pack_of(
    dir: &Path,
    id: &str,
    requires: Option<&str>,
    files: usize,
    text: &dyn Fn(usize) -> String,
) {
    let pack = dir.join(id);
    std::fs::create_dir_all(&pack).unwrap_or_else(|e| panic!("{e}"));
    let requires = requires.map_or_else(String::new, |r| {
        format!("requires:\n  - {{ id: {r}, version: \"^1\" }}\n")
    });
    std::fs::write(
        pack.join("pack.yaml"),
        format!("id: {id}\nname: X\nversion: 1.0.0\n{requires}"),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    for i in 0..files {
        std::fs::write(pack.join(format!("f{i:04}.yaml")), text(i))
            .unwrap_or_else(|e| panic!("{e}"));
    }
}

fn errors(loaded: &tokensmith::content::Loaded) -> Vec<String> {
    loaded
        .diagnostics
        .iter()
        .filter(|d| d.severity == tokensmith::content::Severity::Error)
        .map(|d| format!("{}:{}: {}", d.path.display(), d.line, d.message))
        .collect()
}

#[test]
fn alias_bombs_in_every_file_of_a_pack_stop_at_the_packs_total() {
    // 100 copies of a bomb in one pack once cost 100 times one file's limit (29 s).
    let dir = tmp();
    let bomb = alias_bomb();
    pack_of(dir.path(), "bomb", None, 100, &|_| bomb.clone());
    pack_of(dir.path(), "calm", None, 1, &|_| "cards: []\n".to_string());
    let started = Instant::now();
    let loaded = support::load_folders(&[dir.path().to_path_buf()], None);
    let took = started.elapsed();
    let errors = errors(&loaded);
    let total = tokensmith::content::totals::PACK_PARSE_WORK;
    let over: Vec<&String> = errors
        .iter()
        .filter(|e| e.contains("pack 'bomb' holds more YAML than one pack may read"))
        .collect();
    assert_eq!(over.len(), 1, "{errors:#?}");
    assert!(over[0].contains("/bomb/f0"), "names the file: {}", over[0]);
    assert!(
        over[0].contains("remaining files are not read"),
        "{}",
        over[0]
    );
    // A file or two reach their own limit before the pack's total runs out; the rest
    // are never parsed.
    let parsed = errors.iter().filter(|e| e.contains("/bomb/f0")).count();
    assert!(
        parsed <= 1 + usize::try_from(total / 400_000).unwrap_or(0),
        "{errors:#?}"
    );
    assert!(!errors.iter().any(|e| e.contains("/calm/")), "{errors:#?}");
    eprintln!("100 alias bombs in one pack: {took:?}");
    // A bound against a runaway load (an unmetered one runs for minutes), with room for
    // a loaded machine: the figure itself is printed above.
    assert!(took < Duration::from_secs(30), "took {took:?}");
}

#[test]
fn alias_bombs_spread_over_packs_stop_at_the_loads_total() {
    // Packs that each stay within their own total still share the load's.
    let dir = tmp();
    let bomb = alias_bomb();
    for p in 1..=6 {
        pack_of(dir.path(), &format!("bomb{p}"), None, 100, &|_| {
            bomb.clone()
        });
    }
    let started = Instant::now();
    let loaded = support::load_folders(&[dir.path().to_path_buf()], None);
    let took = started.elapsed();
    let errors = errors(&loaded);
    let over: Vec<&String> = errors
        .iter()
        .filter(|e| e.contains("the packs loaded together hold more YAML than one load may read"))
        .collect();
    assert_eq!(over.len(), 1, "{errors:#?}");
    // Two packs' totals make the load's: the second or third pack runs it out, in a
    // file of its own, and nothing after is read.
    let blamed = (2..=3)
        .find(|p| {
            over[0].contains(&format!("/bomb{p}/f0"))
                && over[0].contains(&format!("pack 'bomb{p}'"))
        })
        .unwrap_or_else(|| panic!("{}", over[0]));
    for later in blamed + 1..=6 {
        assert!(
            !errors
                .iter()
                .any(|e| e.contains(&format!("/bomb{later}/f0"))),
            "{errors:#?}"
        );
    }
    eprintln!("100 alias bombs in each of 6 packs: {took:?}");
    assert!(took < Duration::from_secs(10), "took {took:?}");
}

#[test]
fn entries_past_the_sections_cap_are_refused_where_they_are_read() {
    // 1,980 files of 200 cards: once all were read (550 MB, seconds) before the cap was
    // checked, and the error named the base pack.
    let dir = tmp();
    pack_of(dir.path(), "many", Some("base"), 1_980, &|f| {
        let mut text = String::from("cards:\n");
        for i in 0..200 {
            text.push_str(&format!("  - {{ id: c{f}_{i}, value: 1, area: cross }}\n"));
        }
        text
    });
    let started = Instant::now();
    let loaded = support::load_folders(
        &[support::root().join("content"), dir.path().to_path_buf()],
        None,
    );
    let took = started.elapsed();
    let errors = errors(&loaded);
    assert_eq!(errors.len(), 1, "{errors:#?}");
    let e = &errors[0];
    assert!(e.contains("more than 65,534 card entries"), "{e}");
    assert!(e.contains("pack 'many'") && e.contains("/many/f0"), "{e}");
    assert!(loaded.catalog.is_none());
    eprintln!("1,980 files of 200 cards: {took:?}");
    // A bound against a runaway load (an unmetered one runs for minutes), with room for
    // a loaded machine: the figure itself is printed above.
    assert!(took < Duration::from_secs(30), "took {took:?}");
}

#[test]
fn a_long_chain_of_requirements_is_checked_without_deep_recursion() {
    // Checking requirements once recursed once per pack in the chain: thousands of packs
    // overflowed a small thread stack (the reload thread's, say) and aborted.
    let dir = tmp();
    let n = 4_000;
    write_packs(dir.path(), n, |i| {
        if i + 1 < n {
            format!("requires:\n  - {{ id: p{:04} }}\n", i + 1)
        } else {
            String::new()
        }
    });
    let folder = dir.path().to_path_buf();
    let order = std::thread::Builder::new()
        .stack_size(256 * 1024)
        .spawn(move || {
            let loaded = support::load_folders(&[folder], None);
            loaded
                .packs
                .iter()
                .map(|p| p.id.clone())
                .collect::<Vec<_>>()
        })
        .unwrap_or_else(|e| panic!("{e}"))
        .join()
        .unwrap_or_else(|_| panic!("the load panicked"));
    assert_eq!(order.len(), n);
    assert_eq!(order[0], format!("p{:04}", n - 1), "dependencies first");
    assert_eq!(order[n - 1], "p0000");
}

#[test]
fn thousands_of_missing_requirements_are_reported_in_linear_time() {
    // Each "not found" once searched every pack id for a near name and listed them all:
    // 4,000 packs each requiring a missing one took seconds and megabytes of messages.
    let dir = tmp();
    let n = 4_000;
    write_packs(dir.path(), n, |i| {
        format!("requires:\n  - {{ id: q{i:04} }}\n")
    });
    let started = Instant::now();
    let loaded = support::load_folders(&[dir.path().to_path_buf()], None);
    let took = started.elapsed();
    let errors = errors(&loaded);
    assert_eq!(errors.len(), n, "one error per pack");
    let first = errors
        .iter()
        .find(|e| e.contains("/p0000/"))
        .unwrap_or_else(|| panic!("{:?}", &errors[..3]));
    assert!(
        first.contains("requires 'q0000', which was not found (did you mean 'p0000'?)"),
        "{first}"
    );
    assert!(first.contains("… (4000 in all)"), "{first}");
    assert!(
        errors.iter().all(|e| e.len() < 1_000),
        "messages stay short"
    );
    eprintln!("{n} missing requirements: {took:?}");
    // A bound against a runaway load (an unmetered one runs for minutes), with room for
    // a loaded machine: the figure itself is printed above.
    assert!(took < Duration::from_secs(30), "took {took:?}");
}
