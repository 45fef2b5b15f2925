//! Finding packs, reading their manifests, and putting them in load order: dependencies
//! before dependants, then by id.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, HashSet};
use std::path::{Path, PathBuf};

use super::diagnostic::Diagnostics;
use super::doc::PackManifest;
use super::totals::{MANIFEST_PARSE_WORK, ParseMeter};
use super::yaml::Located;
use super::yaml::{self, Loc};
use crate::rules::never;
use crate::rules::{PackInfo, nearest};

/// A folder to look for packs in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PackFolder {
    /// The folder: a pack itself (it has a `pack.yaml`) or a folder of packs.
    pub path: PathBuf,
    /// Whether a missing folder is an error (it is not for the default `mods` folder).
    pub required: bool,
}

/// A pack found on disk with a readable manifest.
#[derive(Clone, Debug)]
pub struct Pack {
    /// Its folder, as found.
    pub dir: PathBuf,
    /// Its manifest.
    pub manifest: PackManifest,
    /// Its parsed version.
    pub version: semver::Version,
    /// Instructions per script hook call.
    pub script_instructions: u64,
    /// Bytes its scripts may use.
    pub script_memory: usize,
}

/// Default instructions per script hook call.
pub const DEFAULT_SCRIPT_INSTRUCTIONS: u64 = 1_000_000;
/// Default script memory per pack, in KiB.
pub const DEFAULT_SCRIPT_MEMORY_KB: i64 = 16 * 1024;
/// The values `scripts.instructions` in pack.yaml may take.
pub const SCRIPT_INSTRUCTIONS_RANGE: std::ops::RangeInclusive<i64> = 1_000..=50_000_000;
/// The values `scripts.memory_kb` in pack.yaml may take.
pub const SCRIPT_MEMORY_KB_RANGE: std::ops::RangeInclusive<i64> = 256..=64 * 1024;

impl Pack {
    /// Its id.
    #[must_use]
    pub fn id(&self) -> &str {
        &self.manifest.id.value
    }

    /// Its manifest file.
    #[must_use]
    pub fn manifest_path(&self) -> PathBuf {
        self.dir.join("pack.yaml")
    }

    /// What the catalog keeps of it.
    #[must_use]
    pub fn info(&self) -> PackInfo {
        PackInfo {
            id: self.id().to_string(),
            name: self
                .manifest
                .name
                .clone()
                .unwrap_or_else(|| self.id().to_string()),
            version: self.version.to_string(),
            description: self.manifest.description.clone().unwrap_or_default(),
            authors: self.manifest.authors.clone(),
            script_instructions: self.script_instructions,
            script_memory: self.script_memory,
            ai_script: None,
        }
    }
}

/// Whether `id` is a valid id: `[a-z0-9_]+`.
#[must_use]
pub fn valid_id(id: &str) -> bool {
    !id.is_empty()
        && id
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
}

/// The packs found in the pack folders.
#[derive(Debug, Default)]
pub struct Found {
    /// Packs with a readable, valid manifest.
    pub packs: Vec<Pack>,
    /// Ids of packs whose manifest has errors (already reported).
    pub broken: Vec<String>,
}

/// Every pack in `folders`, with their manifests read and checked.
pub fn discover(folders: &[PackFolder], diags: &mut Diagnostics) -> Found {
    discover_metered(folders, &mut ParseMeter::default(), diags)
}

/// [`discover`], the manifests' parse work charged to `meter` (the load's total): once
/// it runs out, no more manifests are read.
pub(crate) fn discover_metered(
    folders: &[PackFolder],
    meter: &mut ParseMeter,
    diags: &mut Diagnostics,
) -> Found {
    let mut found = Found::default();
    let packs = &mut found;
    let mut seen = std::collections::HashSet::new();
    for folder in folders {
        // The same folder named twice (say `mods` and a scenario's `../../mods`) is read once.
        if let Ok(canonical) = folder.path.canonicalize()
            && !seen.insert(canonical)
        {
            continue;
        }
        if !folder.path.is_dir() {
            if folder.required {
                diags.error(
                    &folder.path,
                    Loc::default(),
                    "this folder does not exist; give the folder that holds your packs (the base content's is `--content DIR`, default `content`, relative to the folder you run tokensmith from)",
                );
            }
            continue;
        }
        if meter.set_over() {
            break;
        }
        if has_manifest(&folder.path) {
            // (Its canonical path is in `seen`: found again in a folder of packs, it is
            // the same pack and read once.)
            read_manifest(&folder.path, packs, meter, diags);
            continue;
        }
        for dir in subfolders(&folder.path, diags) {
            if meter.set_over() {
                break;
            }
            if has_manifest(&dir) {
                if dir.canonicalize().is_ok_and(|c| !seen.insert(c)) {
                    continue;
                }
                read_manifest(&dir, packs, meter, diags);
            } else if let Some(name) = near_manifest(&dir) {
                diags.warning(
                    &dir.join(&name),
                    Loc::default(),
                    format!(
                        "a pack's manifest must be named `pack.yaml`, not `{name}`: rename it, \
                         and this folder loads as a pack"
                    ),
                );
            } else if has_yaml(&dir) {
                diags.warning(
                    &dir,
                    Loc::default(),
                    "this folder has YAML files but no pack.yaml, so it is not loaded as a pack",
                );
            }
        }
    }
    found
}

/// A semver parse error in a designer's words (the crate speaks of `u64::MAX`).
fn semver_words(e: &semver::Error) -> String {
    let text = e.to_string();
    match text.find(" exceeds u64::MAX") {
        Some(at) => format!(
            "the {} is larger than any version number can be (at most 18446744073709551615)",
            text[..at].trim_start_matches("value of ")
        ),
        None => text,
    }
}

/// A version written with one or two numbers (`1`, `1.0`), completed to three (`1.0.0`).
fn completed_version(written: &str) -> Option<String> {
    let parts: Vec<&str> = written.trim().split('.').collect();
    let numbers = parts
        .iter()
        .all(|p| !p.is_empty() && p.len() <= 20 && p.bytes().all(|b| b.is_ascii_digit()));
    if !numbers || parts.len() > 2 {
        return None;
    }
    let mut full: Vec<&str> = parts;
    full.resize(3, "0");
    Some(full.join("."))
}

/// A file in `dir` named like a manifest but not exactly `pack.yaml` (`pack.yml`,
/// `Pack.yaml`, `PACK.YML`): its name.
fn near_manifest(dir: &Path) -> Option<String> {
    std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .take(crate::content::MAX_PACK_ENTRIES)
        .filter_map(|e| e.file_name().into_string().ok())
        .find(|n| n != "pack.yaml" && matches!(n.to_lowercase().as_str(), "pack.yaml" | "pack.yml"))
}

/// Whether `dir` has a `pack.yaml` entry (a file, or something the reader will refuse
/// with a reason: a link, a pipe).
fn has_manifest(dir: &Path) -> bool {
    std::fs::symlink_metadata(dir.join("pack.yaml")).is_ok_and(|m| !m.is_dir())
}

/// The folders in a folder of packs. Links are not followed: a link to a pack folder is
/// reported and skipped (give its real folder with `--mods` instead).
fn subfolders(path: &Path, diags: &mut Diagnostics) -> Vec<PathBuf> {
    match std::fs::read_dir(path) {
        Ok(entries) => {
            let mut dirs = Vec::new();
            for entry in entries
                .filter_map(Result::ok)
                .take(crate::content::MAX_PACK_ENTRIES)
            {
                let p = entry.path();
                let Ok(kind) = entry.file_type() else {
                    continue;
                };
                if is_hidden(&p) {
                    continue;
                }
                if kind.is_symlink() {
                    if std::fs::metadata(&p).is_ok_and(|m| m.is_dir()) {
                        diags.warning(
                            &p,
                            Loc::default(),
                            "this pack folder is a symbolic link, and links are not followed (a pack from another machine could use one to read your files); it is skipped: give its real folder with --mods instead",
                        );
                    }
                } else if kind.is_dir() {
                    dirs.push(p);
                }
            }
            dirs.sort();
            dirs
        }
        Err(e) => {
            diags.error(
                path,
                Loc::default(),
                format!("cannot read this folder: {e}"),
            );
            Vec::new()
        }
    }
}

fn has_yaml(dir: &Path) -> bool {
    std::fs::read_dir(dir)
        .is_ok_and(|entries| entries.filter_map(Result::ok).any(|e| is_yaml(&e.path())))
}

/// Whether a file or folder name starts with a dot or ends with `~` (editor leftovers).
#[must_use]
pub fn is_hidden(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with('.') || n.ends_with('~') || n.starts_with('#'))
}

/// Whether `path` is a YAML file (`.yaml` or `.yml`) that is not an editor leftover.
#[must_use]
pub fn is_yaml(path: &Path) -> bool {
    !is_hidden(path)
        && path
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| e == "yaml" || e == "yml")
}

fn read_manifest(dir: &Path, found: &mut Found, meter: &mut ParseMeter, diags: &mut Diagnostics) {
    match check_manifest(dir, meter, diags) {
        Ok(pack) => found.packs.push(pack),
        Err(Some(id)) => found.broken.push(id),
        Err(None) => {}
    }
}

/// A pack from its manifest, or the id of a pack whose manifest has errors (when the id
/// could be read).
fn check_manifest(
    dir: &Path,
    meter: &mut ParseMeter,
    diags: &mut Diagnostics,
) -> Result<Pack, Option<String>> {
    let path = dir.join("pack.yaml");
    let text = match crate::fsutil::read_text(&path, crate::fsutil::MAX_CONTENT_FILE, "pack.yaml") {
        Ok(t) => t,
        Err(e) => {
            diags.error(
                &path,
                Loc::default(),
                format!("cannot read the manifest: {e}"),
            );
            return Err(None);
        }
    };
    let node = match meter.parse(&text, MANIFEST_PARSE_WORK, true) {
        Ok(n) => n,
        Err((e, None)) => {
            diags.error(&path, e.loc, e.message);
            return Err(None);
        }
        Err((e, Some(over))) => {
            let id = dir.file_name().map(|n| n.to_string_lossy().into_owned());
            diags.error(
                &path,
                e.loc,
                meter.message(over, id.as_deref().unwrap_or("?")),
            );
            return Err(None);
        }
    };
    let manifest: PackManifest = match yaml::from_node(&node) {
        Ok(m) => m,
        Err(e) => {
            diags.error(&path, e.loc.unwrap_or(node.loc), e.message);
            return Err(manifest_id(&node));
        }
    };
    let mut ok = true;
    if !valid_id(&manifest.id) {
        diags.error(
            &path,
            manifest.id.loc,
            format!(
                "pack id '{}' may only use lowercase letters, digits and '_'",
                manifest.id.value
            ),
        );
        ok = false;
    }
    let version = match semver::Version::parse(&manifest.version.value) {
        Ok(v) => Some(v),
        Err(e) => {
            let written = &manifest.version.value;
            let message = match completed_version(written) {
                Some(full) => format!(
                    "version '{}' needs three numbers, major.minor.patch: write {full}",
                    crate::rules::echo(written)
                ),
                None => format!(
                    "version '{}' is not a semantic version like 1.2.0: {}",
                    crate::rules::echo(written),
                    semver_words(&e)
                ),
            };
            diags.error(&path, manifest.version.loc, message);
            None
        }
    };
    for req in &manifest.requires {
        if let Some(v) = &req.version
            && let Err(e) = semver::VersionReq::parse(&v.value)
        {
            diags.error(
                &path,
                v.loc,
                format!(
                    "version requirement '{}' is not valid semver (e.g. ^1.2): {}",
                    crate::rules::echo(&v.value),
                    semver_words(&e)
                ),
            );
            ok = false;
        }
    }
    let limits = manifest.scripts.clone();
    let mut check = |value: Option<&Located<i64>>,
                     what: &str,
                     range: std::ops::RangeInclusive<i64>,
                     default: i64| match value {
        None => default,
        Some(v) if range.contains(&v.value) => v.value,
        Some(v) => {
            diags.error(
                &path,
                v.loc,
                format!(
                    "scripts.{what} must be from {} to {}, found {}",
                    range.start(),
                    range.end(),
                    v.value
                ),
            );
            ok = false;
            default
        }
    };
    let instructions = check(
        limits.as_ref().and_then(|l| l.instructions.as_ref()),
        "instructions",
        SCRIPT_INSTRUCTIONS_RANGE,
        i64::try_from(DEFAULT_SCRIPT_INSTRUCTIONS)
            .unwrap_or_else(|_| never!(i64::MAX, "`DEFAULT_SCRIPT_INSTRUCTIONS` does not fit i64")),
    );
    let memory_kb = check(
        limits.as_ref().and_then(|l| l.memory_kb.as_ref()),
        "memory_kb",
        SCRIPT_MEMORY_KB_RANGE,
        DEFAULT_SCRIPT_MEMORY_KB,
    );
    match version {
        Some(version) if ok => Ok(Pack {
            dir: dir.to_path_buf(),
            manifest,
            version,
            script_instructions: u64::try_from(instructions).unwrap_or_else(|_| {
                never!(
                    DEFAULT_SCRIPT_INSTRUCTIONS,
                    "`instructions` past its checked range"
                )
            }),
            script_memory: usize::try_from(memory_kb)
                .unwrap_or_else(|_| never!(16 * 1024, "`memory_kb` past its checked range"))
                * 1024,
        }),
        _ => Err(Some(manifest.id.value)),
    }
}

/// The `id:` of a manifest that did not deserialize, if it is there.
fn manifest_id(node: &yaml::Node) -> Option<String> {
    match &node.value {
        yaml::Value::Map(entries) => entries
            .iter()
            .find_map(|(k, v)| match (&k.value, &v.value) {
                (yaml::Value::Str(k), yaml::Value::Str(v)) if k == "id" => Some(v.clone()),
                _ => None,
            }),
        _ => None,
    }
}

/// The packs to load, in load order, each with its dependencies (transitively, nearest
/// first). `only` limits the load to those packs and what they require.
pub struct Ordered {
    /// The packs in load order.
    pub packs: Vec<Pack>,
    /// For each pack (by load index), the load indices of its dependencies: its direct
    /// requirements in the order listed, then theirs.
    pub deps: Vec<Vec<usize>>,
}

/// Check requirements and put the packs in load order: a pack after everything it
/// requires; among packs ready at the same time, those in `preferred` first in that
/// order, then the rest by id.
pub fn order(
    found: Found,
    only: Option<&[String]>,
    preferred: &[String],
    diags: &mut Diagnostics,
) -> Ordered {
    let broken = found.broken;
    let mut by_id: HashMap<String, Pack> = HashMap::new();
    for pack in found.packs {
        if let Some(first) = by_id.get(pack.id()) {
            diags.error(
                &pack.manifest_path(),
                pack.manifest.id.loc,
                format!(
                    "pack id '{}' is already used by {}; pack ids must be unique",
                    pack.id(),
                    first.manifest_path().display()
                ),
            );
            continue;
        }
        by_id.insert(pack.id().to_string(), pack);
    }
    let wanted: Vec<String> = match only {
        Some(ids) => ids.to_vec(),
        None => {
            let mut all: Vec<String> = by_id.keys().cloned().collect();
            all.sort();
            all
        }
    };
    // Packs whose requirements cannot be met are left out, with their dependants.
    let mut state: HashMap<String, Visit> = HashMap::new();
    for id in &broken {
        state.insert(id.clone(), Visit::Bad);
    }
    let mut missing = Missing::default();
    for id in &wanted {
        visit(id, &by_id, &mut state, &mut missing, diags);
    }
    let selected: Vec<String> = state
        .iter()
        .filter(|(_, v)| **v == Visit::Good)
        .map(|(id, _)| id.clone())
        .collect();
    // Kahn's algorithm, ready packs taken in the preferred order, then by id.
    let mut ranks: HashMap<&str, usize> = HashMap::new();
    for (i, p) in preferred.iter().enumerate() {
        ranks.entry(p.as_str()).or_insert(i);
    }
    let rank = |id: &str| ranks.get(id).copied().unwrap_or(usize::MAX);
    // How many selected packs each still waits for, and who waits for each: a pack
    // becomes ready when its count reaches zero (linear in packs and requirements).
    let chosen: HashSet<&str> = selected.iter().map(String::as_str).collect();
    let mut waiting: HashMap<&str, usize> = HashMap::new();
    let mut dependants: HashMap<&str, Vec<&str>> = HashMap::new();
    for id in &selected {
        let mut n = 0;
        for r in &by_id[id].manifest.requires {
            let req = r.id.value.as_str();
            if req != id.as_str() && chosen.contains(req) {
                n += 1;
                dependants.entry(req).or_default().push(id.as_str());
            }
        }
        waiting.insert(id.as_str(), n);
    }
    let mut ready: BinaryHeap<Reverse<(usize, &str)>> = waiting
        .iter()
        .filter(|(_, n)| **n == 0)
        .map(|(id, _)| Reverse((rank(id), *id)))
        .collect();
    let mut order: Vec<String> = Vec::new();
    while let Some(Reverse((_, id))) = ready.pop() {
        order.push(id.to_string());
        for d in dependants.get(id).map(Vec::as_slice).unwrap_or_default() {
            if let Some(n) = waiting.get_mut(d) {
                *n -= 1;
                if *n == 0 {
                    ready.push(Reverse((rank(d), *d)));
                }
            }
        }
    }
    let mut packs: Vec<Pack> = Vec::new();
    for id in order {
        if let Some(pack) = by_id.remove(&id) {
            packs.push(pack);
        }
    }
    let index: HashMap<String, usize> = packs
        .iter()
        .enumerate()
        .map(|(i, p)| (p.id().to_string(), i))
        .collect();
    // Each pack's dependencies, nearest first, each once: `seen[d] == p + 1` marks `d`
    // as taken for pack `p` (no search through what was taken).
    let mut seen = vec![0usize; packs.len()];
    let deps = packs
        .iter()
        .enumerate()
        .map(|(p, pack)| {
            let mut out: Vec<usize> = Vec::new();
            let mut queue: Vec<usize> = pack
                .manifest
                .requires
                .iter()
                .filter_map(|r| index.get(&r.id.value).copied())
                .collect();
            let mut i = 0;
            while i < queue.len() {
                let d = queue[i];
                i += 1;
                if seen[d] == p + 1 {
                    continue;
                }
                seen[d] = p + 1;
                out.push(d);
                queue.extend(
                    packs[d]
                        .manifest
                        .requires
                        .iter()
                        .filter_map(|r| index.get(&r.id.value).copied())
                        .filter(|d| seen[*d] != p + 1),
                );
            }
            out
        })
        .collect();
    Ordered { packs, deps }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Visit {
    InProgress,
    Good,
    Bad,
}

/// What "not found" messages share: the list of ids found (made once), and how many more
/// may look for a near name among all the packs (each look reads every id, so a load
/// full of missing requirements stops looking after the first ones).
#[derive(Default)]
struct Missing {
    found: Option<String>,
    looked: usize,
}

impl Missing {
    /// The most "did you mean" searches one load makes.
    const HINTS: usize = 64;

    /// ` (did you mean 'x'?)`, or nothing.
    fn hint(&mut self, id: &str, packs: &HashMap<String, Pack>) -> String {
        if self.looked >= Self::HINTS {
            return String::new();
        }
        self.looked += 1;
        nearest(id, packs.keys().map(String::as_str))
            .map(|n| format!(" (did you mean '{n}'?)"))
            .unwrap_or_default()
    }
}

/// A pack being checked: its requirements before `next` are done.
struct Frame<'a> {
    pack: &'a Pack,
    next: usize,
    good: bool,
}

/// Check `root` and everything it requires, depth first; whether it can be loaded. Each
/// pack is checked once; a cycle is reported on each of its members. The walk keeps its
/// own stack, so a chain of thousands of packs cannot exhaust the thread's.
fn visit(
    root: &str,
    packs: &HashMap<String, Pack>,
    state: &mut HashMap<String, Visit>,
    missing: &mut Missing,
    diags: &mut Diagnostics,
) -> bool {
    if let Some(known) = known(root, &[], state, diags) {
        return known;
    }
    let Some(pack) = packs.get(root) else {
        return false;
    };
    state.insert(root.to_string(), Visit::InProgress);
    let mut stack = vec![Frame {
        pack,
        next: 0,
        good: true,
    }];
    // What the requirement the top pack checked last came to, when it was a pack.
    let mut returned: Option<bool> = None;
    let mut result = false;
    while let Some(top) = stack.last_mut() {
        let pack = top.pack;
        if returned.take() == Some(false) {
            if state.get(pack.id()) == Some(&Visit::Bad) {
                // This pack is part of a reported cycle.
                stack.pop();
                returned = Some(false);
                result = false;
                continue;
            }
            if let Some(req) = top
                .next
                .checked_sub(1)
                .and_then(|i| pack.manifest.requires.get(i))
            {
                broken_dependency(pack, req, diags);
            }
            top.good = false;
        }
        let Some(req) = pack.manifest.requires.get(top.next) else {
            let good = top.good;
            state.insert(
                pack.id().to_string(),
                if good { Visit::Good } else { Visit::Bad },
            );
            stack.pop();
            returned = Some(good);
            result = good;
            continue;
        };
        top.next += 1;
        let rid = &req.id.value;
        let Some(dep) = packs.get(rid) else {
            if state.get(rid) == Some(&Visit::Bad) {
                broken_dependency(pack, req, diags);
            } else {
                let hint = missing.hint(rid, packs);
                let found = missing.found.get_or_insert_with(|| sorted_ids(packs));
                diags.error(
                    &pack.manifest_path(),
                    req.id.loc,
                    format!(
                        "pack '{}' requires '{rid}', which was not found{hint}; found: {found}",
                        pack.id(),
                    ),
                );
            }
            top.good = false;
            continue;
        };
        if let Some(v) = &req.version
            && let Ok(wanted) = semver::VersionReq::parse(&v.value)
            && !wanted.matches(&dep.version)
        {
            diags.error(
                &pack.manifest_path(),
                v.loc,
                format!(
                    "pack '{}' requires '{rid}' {}, but the loaded '{rid}' is version {}",
                    pack.id(),
                    v.value,
                    dep.version
                ),
            );
            top.good = false;
            continue;
        }
        match known(rid, &stack, state, diags) {
            Some(known) => returned = Some(known),
            None => {
                state.insert(rid.clone(), Visit::InProgress);
                stack.push(Frame {
                    pack: dep,
                    next: 0,
                    good: true,
                });
            }
        }
    }
    result
}

/// What is known of `id` already: `None` when it is still to be checked. One being
/// checked now (on `path`) closes a cycle, which is reported on each of its members.
fn known(
    id: &str,
    path: &[Frame<'_>],
    state: &mut HashMap<String, Visit>,
    diags: &mut Diagnostics,
) -> Option<bool> {
    match state.get(id)? {
        Visit::Good => Some(true),
        Visit::Bad => Some(false),
        Visit::InProgress => {
            let start = path.iter().position(|f| f.pack.id() == id).unwrap_or(0);
            let mut cycle: Vec<&str> = path[start..].iter().map(|f| f.pack.id()).collect();
            cycle.push(id);
            let text = cycle.join(" → ");
            for member in &path[start..] {
                let p = member.pack;
                diags.error(
                    &p.manifest_path(),
                    p.manifest.id.loc,
                    format!("dependency cycle: {text}; a pack cannot require itself, even through others"),
                );
                state.insert(p.id().to_string(), Visit::Bad);
            }
            Some(false)
        }
    }
}

fn broken_dependency(pack: &Pack, req: &Located<super::doc::Requirement>, diags: &mut Diagnostics) {
    diags.error(
        &pack.manifest_path(),
        req.id.loc,
        format!(
            "pack '{}' cannot be loaded because its dependency '{}' has errors",
            pack.id(),
            req.id.value
        ),
    );
}

/// The ids found, sorted: the first few, and how many in all when there are more.
fn sorted_ids(packs: &HashMap<String, Pack>) -> String {
    const SHOWN: usize = 20;
    let mut ids: Vec<&str> = packs.keys().map(String::as_str).collect();
    ids.sort_unstable();
    if ids.len() > SHOWN {
        format!("{}, … ({} in all)", ids[..SHOWN].join(", "), ids.len())
    } else {
        ids.join(", ")
    }
}
