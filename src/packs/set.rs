//! The enabled set and load order a profile keeps (`PROFILE/packs.yaml`), the packs a
//! run can find (base content, example packs in `mods/`, installed packs), and the load
//! options every command that plays builds from them.
//!
//! A fresh profile plays the classic game: the base content is always on, and example
//! and installed packs start off until enabled.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::PackError;
use crate::content::discover::{self, Pack};
use crate::content::{Diagnostics, LoadOptions, PackFolder, Severity};

/// The most ids `enabled` and `order` may each list in `packs.yaml`; a longer list
/// makes the file invalid (it is set aside).
pub const MAX_SET_IDS: usize = 4_096;

/// The pack-set format written today.
pub const SET_VERSION: u32 = 1;

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct SetFile {
    format_version: Option<u32>,
    #[serde(default)]
    enabled: Vec<String>,
    #[serde(default)]
    order: Vec<String>,
}

/// The enabled packs and the user's load order, as kept in the profile.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PackSet {
    path: Option<PathBuf>,
    enabled: BTreeSet<String>,
    order: Vec<String>,
    blocked: Option<String>,
    /// What happened when the file was read (set aside, newer version…).
    pub notes: Vec<String>,
}

impl PackSet {
    /// The set kept in the profile folder `profile_dir` (nothing enabled when there is no
    /// file yet). A file that is not a valid pack set is set aside as `.corrupt` and an
    /// empty set used; one from a newer Tokensmith, or one that cannot be read, is left
    /// alone and not written over.
    #[must_use]
    pub fn open(profile_dir: &Path) -> PackSet {
        let path = profile_dir.join("packs.yaml");
        let mut set = PackSet {
            path: Some(path.clone()),
            ..PackSet::default()
        };
        let shown = crate::fsutil::shown(&path);
        let text = match crate::fsutil::read_text(
            &path,
            crate::fsutil::MAX_PROFILE_FILE,
            "the pack set",
        ) {
            Ok(t) => t,
            Err(e) if e.is_not_found() => return set,
            Err(e) => {
                let why = format!(
                    "{shown}: cannot read it ({e}); no pack is enabled, and changes are not saved until it can be read"
                );
                set.notes.push(why.clone());
                set.blocked = Some(why);
                return set;
            }
        };
        match parse(&text) {
            Ok((enabled, order)) => {
                set.enabled = enabled;
                set.order = order;
            }
            Err(Parse::Newer(v)) => {
                let why = format!(
                    "{shown}: format_version {v} is newer than this Tokensmith reads ({SET_VERSION}); no pack is enabled, and the file is left as it is"
                );
                set.notes.push(why.clone());
                set.blocked = Some(why);
            }
            Err(Parse::Bad(e)) => {
                let aside = match crate::fsutil::move_aside(&path, "corrupt") {
                    Ok(p) => format!("set aside as {}", crate::fsutil::shown(&p)),
                    Err(e) => format!("left in place ({e})"),
                };
                set.notes
                    .push(format!("{shown}: {e}; {aside}; no pack is enabled"));
            }
        }
        set
    }

    /// A set that enables exactly `ids` and is never saved (the `--packs` flag).
    #[must_use]
    pub fn only(ids: &[String]) -> PackSet {
        PackSet {
            enabled: ids.iter().cloned().collect(),
            ..PackSet::default()
        }
    }

    /// Save the set (atomically) to the profile it came from.
    pub fn save(&self) -> Result<(), PackError> {
        if let Some(why) = &self.blocked {
            return Err(PackError::Refused(why.clone()));
        }
        let Some(path) = &self.path else {
            return Err(PackError::Refused(
                "this pack set belongs to no profile and is not saved".into(),
            ));
        };
        // Whoever saves (a command holding the profile already, or the client), no other
        // Tokensmith changes the profile meanwhile.
        let dir = path.parent().unwrap_or(Path::new("."));
        let _lock =
            crate::fsutil::lock::ProfileLock::acquire(dir, crate::fsutil::lock::Access::Write)
                .map_err(|e| PackError::Refused(e.to_string()))?;
        std::fs::create_dir_all(dir)
            .map_err(|e| PackError::from_io(format!("make {}", crate::fsutil::shown(dir)), e))?;
        crate::fsutil::write_atomic(path, self.to_yaml().as_bytes())
            .map_err(|e| PackError::from_io(format!("save {}", crate::fsutil::shown(path)), e))
    }

    /// The file's text.
    #[must_use]
    pub fn to_yaml(&self) -> String {
        let list = |ids: &mut dyn Iterator<Item = &String>| {
            // Ids are `[a-z0-9_]+`; quoted, YAML never reads one as a number or `null`.
            ids.map(|id| format!("  - \"{id}\"\n")).collect::<String>()
        };
        let mut out = format!("format_version: {SET_VERSION}\n");
        out.push_str(
            "# Packs that load besides the base content (their requirements are listed too).\n",
        );
        if self.enabled.is_empty() {
            out.push_str("enabled: []\n");
        } else {
            out.push_str("enabled:\n");
            out.push_str(&list(&mut self.enabled.iter()));
        }
        out.push_str("# Load order among packs that do not require each other: these first, in this order.\n");
        if self.order.is_empty() {
            out.push_str("order: []\n");
        } else {
            out.push_str("order:\n");
            out.push_str(&list(&mut self.order.iter()));
        }
        out
    }

    /// Whether `id` is enabled (base packs are always on; this is the profile's choice).
    #[must_use]
    pub fn is_enabled(&self, id: &str) -> bool {
        self.enabled.contains(id)
    }

    /// The enabled ids, sorted.
    #[must_use]
    pub fn enabled(&self) -> Vec<String> {
        self.enabled.iter().cloned().collect()
    }

    /// The user's load order (ids first in this order; the rest by id).
    #[must_use]
    pub fn order(&self) -> &[String] {
        &self.order
    }

    /// Put `ids` first in the load order, in this order, the others after them as
    /// they were.
    pub fn put_first(&mut self, ids: &[String]) {
        let mut seen: HashSet<&str> = HashSet::new();
        let order: Vec<String> = ids
            .iter()
            .chain(&self.order)
            .filter(|id| seen.insert(id.as_str()))
            .cloned()
            .collect();
        self.order = order;
    }

    /// The user's load order as a full list of `ids`: ranked ones first, the rest by id.
    #[must_use]
    pub fn ranked(&self, ids: &[String]) -> Vec<String> {
        let wanted: HashSet<&str> = ids.iter().map(String::as_str).collect();
        let mut placed: HashSet<&str> = HashSet::new();
        let mut out: Vec<String> = self
            .order
            .iter()
            .filter(|id| wanted.contains(id.as_str()) && placed.insert(id.as_str()))
            .cloned()
            .collect();
        let mut rest: Vec<String> = ids
            .iter()
            .filter(|id| !placed.contains(id.as_str()))
            .cloned()
            .collect();
        rest.sort();
        out.extend(rest);
        out
    }

    /// Forget a removed pack: it leaves the enabled set and the load order. Packs that
    /// required it stay enabled (the load reports them). Whether anything changed.
    pub fn forget(&mut self, id: &str) -> bool {
        let before = self.order.len();
        self.order.retain(|o| o != id);
        self.enabled.remove(id) | (self.order.len() != before)
    }

    /// Set the whole user order (the Mods screen's drag).
    pub fn set_order(&mut self, ids: Vec<String>) {
        self.order = ids;
    }

    /// Set the whole enabled set (a lock file's `pack sync`).
    pub fn set_enabled(&mut self, ids: impl IntoIterator<Item = String>) {
        self.enabled = ids.into_iter().collect();
    }
}

enum Parse {
    Newer(u32),
    Bad(String),
}

fn parse(text: &str) -> Result<(BTreeSet<String>, Vec<String>), Parse> {
    if text.trim().is_empty() {
        return Ok((BTreeSet::new(), Vec::new()));
    }
    let file: SetFile = serde_saphyr::from_str(text).map_err(|e| Parse::Bad(e.to_string()))?;
    match file.format_version {
        None => Err(Parse::Bad(format!(
            "format_version is missing: the first line should be `format_version: {SET_VERSION}`"
        ))),
        Some(SET_VERSION) => {
            let bad = file
                .enabled
                .iter()
                .chain(&file.order)
                .find(|id| !discover::valid_id(id));
            if let Some(id) = bad {
                return Err(Parse::Bad(format!(
                    "'{}' is not a pack id (lowercase letters, digits and '_')",
                    crate::rules::echo(id)
                )));
            }
            for (what, list) in [("enabled", &file.enabled), ("order", &file.order)] {
                if list.len() > MAX_SET_IDS {
                    return Err(Parse::Bad(format!(
                        "`{what}` lists {} ids; a pack set lists at most {MAX_SET_IDS}",
                        list.len()
                    )));
                }
            }
            Ok((file.enabled.into_iter().collect(), file.order))
        }
        Some(v) if v > SET_VERSION => Err(Parse::Newer(v)),
        Some(v) => Err(Parse::Bad(format!(
            "format_version {v} is not a known pack-set format"
        ))),
    }
}

/// Where a pack was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PackSource {
    /// The base content (`content/`): always on.
    Base,
    /// An example or local pack in `mods/`.
    Mods,
    /// Installed into the profile.
    Installed,
}

impl PackSource {
    /// How lists name it.
    #[must_use]
    pub fn label(self) -> &'static str {
        match self {
            PackSource::Base => "base",
            PackSource::Mods => "mods",
            PackSource::Installed => "installed",
        }
    }
}

/// The pack folders of a run: base content, `mods/`, and the profile's installed packs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Folders {
    /// The base content folder (must exist).
    pub content: PathBuf,
    /// The mods folder (may be missing).
    pub mods: PathBuf,
    /// The profile's installed-packs folder, if there is a profile.
    pub installed: Option<PathBuf>,
}

impl Folders {
    fn with_source(&self) -> Vec<(PackFolder, PackSource)> {
        let mut out = vec![
            (
                PackFolder {
                    path: self.content.clone(),
                    required: true,
                },
                PackSource::Base,
            ),
            (
                PackFolder {
                    path: self.mods.clone(),
                    required: false,
                },
                PackSource::Mods,
            ),
        ];
        if let Some(dir) = &self.installed {
            out.push((
                PackFolder {
                    path: dir.clone(),
                    required: false,
                },
                PackSource::Installed,
            ));
        }
        out
    }

    /// Every folder, in search order.
    #[must_use]
    pub fn all(&self) -> Vec<PackFolder> {
        self.with_source().into_iter().map(|(f, _)| f).collect()
    }
}

/// A pack found in the folders, with where it came from.
#[derive(Clone, Debug)]
pub struct Found {
    /// The pack.
    pub pack: Pack,
    /// Where it was found.
    pub source: PackSource,
}

/// Every pack with a valid manifest in `folders`, folder by folder (base first), and the
/// manifest diagnostics. Two packs may share an id here: [`super::conflicts`] reports it.
#[must_use]
pub fn find(folders: &Folders) -> (Vec<Found>, Vec<crate::content::Diagnostic>) {
    let mut diags = Diagnostics::default();
    let mut out = Vec::new();
    for (folder, source) in folders.with_source() {
        let found = discover::discover(std::slice::from_ref(&folder), &mut diags);
        out.extend(found.packs.into_iter().map(|pack| Found { pack, source }));
    }
    (out, diags.into_sorted())
}

/// Where a pack with this id is outside the profile's store (the base content or
/// `mods/`), by the packs in `folders` now: an install under such an id is refused, since
/// the id would be found twice. What [`super::Store::install`] is given as `elsewhere`.
pub fn outside_store(folders: &Folders) -> impl Fn(&str) -> Option<PathBuf> + use<> {
    let (found, _) = find(folders);
    let outside: Vec<(String, PathBuf)> = found
        .into_iter()
        .filter(|f| f.source != PackSource::Installed)
        .map(|f| (f.pack.id().to_string(), f.pack.dir))
        .collect();
    move |id: &str| {
        outside
            .iter()
            .find(|(i, _)| i == id)
            .map(|(_, dir)| dir.clone())
    }
}

/// Which packs a run plays with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Selection {
    /// The base content and the profile's enabled set, in its order.
    Set(PackSet),
    /// Every pack found (what `validate` checks, and `--all-packs`).
    All,
}

/// The load options for `selection`: the base packs and the selected ones (their
/// requirements come with them), in the user's order. Enabled packs that are no longer
/// found are left out (listed by [`list`]).
#[must_use]
pub fn load_options(folders: &Folders, selection: &Selection) -> LoadOptions {
    let mut options = LoadOptions {
        folders: folders.all(),
        ..LoadOptions::default()
    };
    if let Selection::Set(set) = selection {
        let (found, _) = find(folders);
        let mut only: Vec<String> = found
            .iter()
            .filter(|f| f.source == PackSource::Base || set.is_enabled(f.pack.id()))
            .map(|f| f.pack.id().to_string())
            .collect();
        only.sort();
        only.dedup();
        options.only = Some(only);
        options.order = set.order().to_vec();
    }
    options
}

/// The load options of every pack found (what `pack list` and the Mods screen check),
/// in `set`'s load order: the diagnostics that say which patch wins ("this patch, later
/// in load order, wins") then follow the order the enabled packs play in.
#[must_use]
pub fn list_options(folders: &Folders, set: &PackSet) -> LoadOptions {
    let mut options = load_options(folders, &Selection::All);
    options.order = set.order().to_vec();
    options
}

/// What `pack enable` did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Enabled {
    /// Packs newly enabled because the pack requires them.
    pub requirements: Vec<String>,
    /// Whether the pack itself was off before.
    pub changed: bool,
}

fn by_id(found: &[Found]) -> HashMap<&str, &Found> {
    let mut map = HashMap::new();
    for f in found {
        // The first found wins, as the loader reports the second as a duplicate.
        map.entry(f.pack.id()).or_insert(f);
    }
    map
}

fn unknown(id: &str, found: &[Found]) -> PackError {
    PackError::Unknown {
        id: id.to_string(),
        hint: crate::rules::nearest(id, found.iter().map(|f| f.pack.id())),
    }
}

/// Enable `id` and every pack it requires (transitively). Refused when a requirement is
/// not found or its version does not match. Base packs are always on.
pub fn enable(set: &mut PackSet, folders: &Folders, id: &str) -> Result<Enabled, PackError> {
    let (found, _) = find(folders);
    let packs = by_id(&found);
    let Some(first) = packs.get(id) else {
        return Err(unknown(id, &found));
    };
    if first.source == PackSource::Base {
        return Err(PackError::Refused(format!(
            "'{id}' is base content, which is always on"
        )));
    }
    let mut closure: Vec<String> = Vec::new();
    let mut queue = vec![id.to_string()];
    while let Some(next) = queue.pop() {
        if closure.contains(&next) {
            continue;
        }
        let Some(f) = packs.get(next.as_str()) else {
            continue;
        };
        for req in &f.pack.manifest.requires {
            let rid = req.id.value.as_str();
            let Some(r) = packs.get(rid) else {
                return Err(PackError::Refused(format!(
                    "'{next}' requires pack '{rid}', which is not found: install it first"
                )));
            };
            if let Some(v) = &req.version
                && let Ok(want) = semver::VersionReq::parse(&v.value)
                && !want.matches(&r.pack.version)
            {
                return Err(PackError::Refused(format!(
                    "'{next}' requires '{rid}' {}, but {} is found",
                    v.value, r.pack.version
                )));
            }
            queue.push(rid.to_string());
        }
        closure.push(next);
    }
    let changed = set.enabled.insert(id.to_string());
    let mut requirements = Vec::new();
    for dep in closure.iter().filter(|d| *d != id) {
        let base = packs
            .get(dep.as_str())
            .is_some_and(|f| f.source == PackSource::Base);
        if !base && set.enabled.insert(dep.clone()) {
            requirements.push(dep.clone());
        }
    }
    requirements.sort();
    Ok(Enabled {
        requirements,
        changed,
    })
}

/// Disable `id`. Refused when enabled packs require it, naming them, unless
/// `with_dependants` (they are disabled too). The ids disabled.
pub fn disable(
    set: &mut PackSet,
    folders: &Folders,
    id: &str,
    with_dependants: bool,
) -> Result<Vec<String>, PackError> {
    let (found, _) = find(folders);
    let packs = by_id(&found);
    if packs.get(id).is_some_and(|f| f.source == PackSource::Base) {
        return Err(PackError::Refused(format!(
            "'{id}' is base content, which is always on"
        )));
    }
    if !set.enabled.contains(id) {
        if packs.contains_key(id) {
            return Ok(Vec::new());
        }
        return Err(unknown(id, &found));
    }
    // Enabled packs that require `id`, directly or through others.
    let mut gone = vec![id.to_string()];
    loop {
        let more: Vec<String> = set
            .enabled
            .iter()
            .filter(|e| !gone.contains(e))
            .filter(|e| {
                packs.get(e.as_str()).is_some_and(|f| {
                    f.pack
                        .manifest
                        .requires
                        .iter()
                        .any(|r| gone.contains(&r.id.value))
                })
            })
            .cloned()
            .collect();
        if more.is_empty() {
            break;
        }
        gone.extend(more);
    }
    let dependants: Vec<&String> = gone.iter().skip(1).collect();
    if !dependants.is_empty() && !with_dependants {
        let names: Vec<String> = dependants.iter().map(|d| format!("'{d}'")).collect();
        return Err(PackError::Refused(format!(
            "enabled packs require '{id}': {}; disable them first, or disable them together with --with-dependants",
            names.join(", ")
        )));
    }
    for g in &gone {
        set.enabled.remove(g);
    }
    Ok(gone)
}

/// A pack as `pack list` shows it.
#[derive(Clone, Debug, Serialize)]
pub struct Listed {
    /// Its id.
    pub id: String,
    /// Its display name.
    pub name: String,
    /// Its version.
    pub version: String,
    /// Its authors.
    pub authors: Vec<String>,
    /// Its description.
    pub description: String,
    /// Where it was found.
    pub source: PackSource,
    /// Its folder.
    #[serde(serialize_with = "lossy")]
    pub dir: PathBuf,
    /// Whether it loads in games (base packs always do).
    pub enabled: bool,
    /// Its content hash, or why it cannot be worked out.
    pub hash: Result<String, String>,
    /// The packs it requires, with their version requirements.
    pub requires: Vec<String>,
    /// Its errors, as `path:line:col: error: message`.
    pub errors: Vec<String>,
    /// Its warnings.
    pub warnings: Vec<String>,
}

fn lossy<S: serde::Serializer>(p: &Path, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&crate::fsutil::shown(p))
}

/// Every pack found, in the order they load when all are on (`set`'s order), with what
/// `pack list` shows. Diagnostics come from loading every pack found (as `validate`
/// does) and go to the pack whose folder holds the file.
#[must_use]
pub fn list(folders: &Folders, set: &PackSet, loaded: &crate::content::Loaded) -> Vec<Listed> {
    let (found, manifest_diags) = find(folders);
    let mut out: Vec<Listed> = found
        .iter()
        .map(|f| {
            let info = f.pack.info();
            let dir = f.pack.dir.clone();
            let mine = |sev: Severity| -> Vec<String> {
                loaded
                    .diagnostics
                    .iter()
                    .chain(&manifest_diags)
                    .filter(|d| d.severity == sev && d.path.starts_with(&dir))
                    .map(ToString::to_string)
                    .collect::<BTreeSet<String>>()
                    .into_iter()
                    .collect()
            };
            Listed {
                id: info.id.clone(),
                name: info.name,
                version: info.version,
                authors: info.authors,
                description: info.description,
                source: f.source,
                dir: dir.clone(),
                enabled: f.source == PackSource::Base || set.is_enabled(&info.id),
                hash: super::hash(&dir).map_err(|e| e.to_string()),
                requires: f
                    .pack
                    .manifest
                    .requires
                    .iter()
                    .map(|r| match &r.version {
                        Some(v) => format!("{} {}", r.id.value, v.value),
                        None => r.id.value.clone(),
                    })
                    .collect(),
                errors: mine(Severity::Error),
                warnings: mine(Severity::Warning),
            }
        })
        .collect();
    let rank: HashMap<&str, usize> = loaded
        .packs
        .iter()
        .enumerate()
        .map(|(i, p)| (p.id.as_str(), i))
        .collect();
    out.sort_by_key(|l| {
        (
            rank.get(l.id.as_str()).copied().unwrap_or(usize::MAX),
            l.id.clone(),
        )
    });
    out
}
