//! Lock files: a pack set written down exactly (each pack's id, version, content hash,
//! where it comes from and the key that signed it, and the load order), small enough to
//! paste in a chat, and `pack sync`, which makes a profile match one: installs the exact
//! versions from the indexes (every check of `pack install`, and each pack's content
//! hash held to the lock's), then enables, disables and orders.
//!
//! A lock file is read as hostile input: capped in size and count, every id, version and
//! hash checked, duplicates refused, and an index it names that the profile does not list
//! refused (a lock never adds an index).
//!
//! Must not: change anything before every step of a sync is planned, fetched and checked.
//!
//! [`apply`] carries a planned sync out; `pack sync` and the Mods screen's Set tab share it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::{IndexError, keys, player};
use crate::fsutil::lock::{Access, ProfileLock};
use crate::packs::{Folders, PackSet, PackSource, Store};

/// The `format` field of a lock file.
pub const FORMAT: &str = "tokensmith-lock";
/// The lock format this build writes and reads.
pub const VERSION: u32 = 1;
/// Bytes of a lock file.
pub const MAX_BYTES: u64 = 1024 * 1024;
/// Packs in a lock file.
pub const MAX_PACKS: usize = 4_096;

/// A lock file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LockFile {
    /// Always [`FORMAT`].
    pub format: String,
    /// [`VERSION`].
    pub version: u32,
    /// The packs that play, in their load order.
    pub order: Vec<String>,
    /// Each pack that plays.
    pub packs: Vec<Locked>,
}

/// One pack of a lock file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Locked {
    /// Its id.
    pub id: String,
    /// Its version.
    pub version: String,
    /// Its content hash.
    pub hash: String,
    /// Where it was: `base`, `mods` or `installed`.
    pub source: String,
    /// The index it was installed from (its folder or web address), for installed packs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index: Option<String>,
    /// The id of the key that signed it, for installed packs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
}

fn refused(why: String) -> IndexError {
    IndexError::Refused(why)
}

/// The lock file of the packs `set` plays with: the load order of a load of them, and
/// for each its version, content hash and, when installed from an index, where from.
pub fn lock(profile: &Path, folders: &Folders, set: &PackSet) -> Result<LockFile, IndexError> {
    let options =
        crate::packs::set::load_options(folders, &crate::packs::Selection::Set(set.clone()));
    let loaded = crate::content::load(&options);
    let (found, _) = crate::packs::set::find(folders);
    let pins = keys::Pins::open(profile)?;
    let mut packs = Vec::new();
    let mut order = Vec::new();
    for p in &loaded.packs {
        let Some(f) = found.iter().find(|f| f.pack.id() == p.id) else {
            continue;
        };
        let hash = crate::packs::hash(&f.pack.dir).map_err(|e| {
            refused(format!(
                "{}: its content hash cannot be worked out: {e}",
                p.id
            ))
        })?;
        let origin = (f.source == PackSource::Installed)
            .then(|| pins.origins.get(p.id.as_str()))
            .flatten();
        order.push(p.id.clone());
        packs.push(Locked {
            id: p.id.clone(),
            version: f.pack.version.to_string(),
            hash,
            source: f.source.label().to_string(),
            index: origin.map(|o| o.location.clone()),
            key: origin.map(|o| o.key.clone()),
        });
    }
    Ok(LockFile {
        format: FORMAT.into(),
        version: VERSION,
        order,
        packs,
    })
}

/// Read and check the lock file at `path`.
pub fn read(path: &Path) -> Result<LockFile, IndexError> {
    let what = crate::fsutil::shown(path);
    let bytes = crate::fsutil::read_capped(path, MAX_BYTES, "a lock file").map_err(|e| {
        IndexError::Read {
            what: what.clone(),
            error: e.into(),
        }
    })?;
    parse(&bytes, &what)
}

/// Check a lock file's bytes (`what` names it in messages).
pub fn parse(bytes: &[u8], what: &str) -> Result<LockFile, IndexError> {
    let bad = |reason: String| IndexError::Bad {
        what: what.to_string(),
        reason,
    };
    let lock: LockFile = serde_json::from_slice(bytes)
        .map_err(|e| bad(format!("not a lock file of this format: {e}")))?;
    if lock.format != FORMAT {
        return Err(bad(format!(
            "its format is '{}', not '{FORMAT}'",
            super::clean(&lock.format)
        )));
    }
    if lock.version != VERSION {
        return Err(bad(format!(
            "format version {} is not {VERSION}, the one this build reads",
            lock.version
        )));
    }
    if lock.packs.len() > MAX_PACKS || lock.order.len() > MAX_PACKS {
        return Err(bad(format!("it lists more than {MAX_PACKS} packs")));
    }
    let mut ids = BTreeSet::new();
    for p in &lock.packs {
        super::check_id(&p.id).map_err(|e| bad(e.to_string()))?;
        if !ids.insert(p.id.as_str()) {
            return Err(bad(format!("it lists '{}' twice", p.id)));
        }
        semver::Version::parse(&p.version).map_err(|e| {
            bad(format!(
                "'{}': version '{}': {e}",
                p.id,
                super::clean(&p.version)
            ))
        })?;
        if super::from_hex::<32>(&p.hash).is_none() {
            return Err(bad(format!("'{}': its hash is not 64 hex digits", p.id)));
        }
        if !matches!(p.source.as_str(), "base" | "mods" | "installed") {
            return Err(bad(format!(
                "'{}': its source '{}' is not base, mods or installed",
                p.id,
                super::clean(&p.source)
            )));
        }
        if p.key.as_deref().is_some_and(|k| !keys::valid_key_id(k)) {
            return Err(bad(format!("'{}': its key is not a key id", p.id)));
        }
        if p.index.as_deref().is_some_and(|l| l.len() > 4096) {
            return Err(bad(format!(
                "'{}': its index is longer than 4096 bytes",
                p.id
            )));
        }
    }
    let mut seen = BTreeSet::new();
    for id in &lock.order {
        if !ids.contains(id.as_str()) {
            return Err(bad(format!(
                "its order names '{}', which it does not list",
                super::clean(id)
            )));
        }
        if !seen.insert(id.as_str()) {
            return Err(bad(format!("its order names '{id}' twice")));
        }
    }
    if seen.len() != ids.len() {
        return Err(bad("its order does not name every pack it lists".into()));
    }
    Ok(lock)
}

/// What a sync will do.
#[derive(Debug, Default)]
pub struct SyncPlan {
    /// The packs to install (exact versions, checked against the lock).
    pub install: player::InstallPlan,
    /// Packs to turn on.
    pub enable: Vec<String>,
    /// Packs to turn off.
    pub disable: Vec<String>,
    /// The load order to set.
    pub order: Vec<String>,
}

impl SyncPlan {
    /// The plan in words, a line a step.
    #[must_use]
    pub fn lines(&self) -> Vec<String> {
        let mut out = self.install.lines();
        out.extend(self.enable.iter().map(|id| format!("enable {id}")));
        out.extend(self.disable.iter().map(|id| format!("disable {id}")));
        out.push(format!("order {}", self.order.join(" ")));
        out
    }
}

/// Plan making the profile's packs match `lock`: every base and mods pack it names must
/// be here already with its hash; every installed pack must be, or be installable at its
/// exact version and hash from an index the profile lists at the location the lock names.
/// Nothing is changed.
pub fn plan(
    indexes: &[player::Opened],
    folders: &Folders,
    set: &PackSet,
    lock: &LockFile,
) -> Result<SyncPlan, IndexError> {
    let (found, _) = crate::packs::set::find(folders);
    let mut here: BTreeMap<&str, &crate::packs::set::Found> = BTreeMap::new();
    for f in &found {
        here.entry(f.pack.id()).or_insert(f);
    }
    let mut wants: Vec<(String, semver::VersionReq)> = Vec::new();
    for p in &lock.packs {
        let present = here.get(p.id.as_str());
        let same = present.is_some_and(|f| {
            f.pack.version.to_string() == p.version
                && crate::packs::hash(&f.pack.dir).is_ok_and(|h| h == p.hash)
        });
        match p.source.as_str() {
            "installed" => {
                if present.is_some_and(|f| f.source != PackSource::Installed) {
                    return Err(refused(format!(
                        "the lock has '{}' installed from an index, but this profile has it in its base content or mods folder",
                        p.id
                    )));
                }
                if same {
                    continue;
                }
                let Some(location) = &p.index else {
                    return Err(refused(format!(
                        "the lock names no index for '{}' {}: it was not installed from one, so it cannot be fetched",
                        p.id, p.version
                    )));
                };
                if !indexes.iter().any(|i| i.location == *location) {
                    return Err(refused(format!(
                        "the lock takes '{}' from the index at {}, which this profile does not list (or cannot read): `tokensmith index add NAME {}` first, if you trust it",
                        p.id,
                        super::clean(location),
                        super::clean(location)
                    )));
                }
                let req = semver::VersionReq::parse(&format!("={}", p.version))
                    .map_err(|e| refused(format!("'{}': {e}", p.id)))?;
                wants.push((p.id.clone(), req));
            }
            source if !same => {
                return Err(refused(format!(
                    "the lock needs '{}' {} (hash {}) from the {source} folder, and this profile has {}: such packs are not installed from indexes",
                    p.id,
                    p.version,
                    crate::packs::short(&p.hash),
                    present.map_or_else(
                        || "none".to_string(),
                        |f| format!("version {}", f.pack.version)
                    )
                )));
            }
            _ => {}
        }
    }
    // One plan for them all, in the lock's load order (requirements first), so each
    // requirement is planned at its locked version before what needs it.
    let rank = |id: &str| {
        lock.order
            .iter()
            .position(|o| o == id)
            .unwrap_or(usize::MAX)
    };
    wants.sort_by_key(|(id, _)| rank(id));
    let install = player::plan(indexes, folders, &wants, false)?;
    for step in &install.steps {
        let Some(l) = lock.packs.iter().find(|p| p.id == step.id) else {
            return Err(refused(format!(
                "{} is required by {}, and the lock does not list it",
                step.id,
                step.required_by.as_deref().unwrap_or("a pack")
            )));
        };
        if step.entry.hash != l.hash || step.entry.version != l.version {
            return Err(refused(format!(
                "the index '{}' has {} {} with content hash {}, not the {} the lock names: the lock and the index disagree",
                step.index.name,
                step.id,
                step.entry.version,
                crate::packs::short(&step.entry.hash),
                crate::packs::short(&l.hash)
            )));
        }
        if l.key.as_deref().is_some_and(|k| *k != step.entry.key) {
            return Err(refused(format!(
                "{} {} is signed by the key {}, not the {} the lock names",
                step.id,
                step.entry.version,
                step.entry.key,
                l.key.as_deref().unwrap_or_default()
            )));
        }
    }
    let want: BTreeSet<&str> = lock
        .packs
        .iter()
        .filter(|p| p.source != "base")
        .map(|p| p.id.as_str())
        .collect();
    let enabled: BTreeSet<String> = set.enabled().into_iter().collect();
    Ok(SyncPlan {
        install,
        enable: want
            .iter()
            .filter(|id| !enabled.contains(**id))
            .map(|id| (*id).to_string())
            .collect(),
        disable: enabled
            .iter()
            .filter(|id| !want.contains(id.as_str()))
            .cloned()
            .collect(),
        order: lock.order.clone(),
    })
}

/// The plan of making the profile at `profile` (its pack folders `folders`) match `lock`,
/// with the indexes' notes told to `say`. Nothing is changed.
pub fn preview(
    profile: &Path,
    folders: &Folders,
    lock: &LockFile,
    say: &mut dyn FnMut(String),
) -> Result<SyncPlan, IndexError> {
    let needs_index = lock.packs.iter().any(|p| p.source == "installed");
    let indexes = if needs_index {
        let (indexes, notes) = player::open_all(profile).unwrap_or_default();
        for n in notes {
            say(format!("note: {n}"));
        }
        indexes
    } else {
        Vec::new()
    };
    let set = PackSet::open(profile);
    plan(&indexes, folders, &set, lock)
        .map_err(|e| IndexError::Refused(format!("{e}; nothing was changed")))
}

/// Make the profile at `profile` match `lock` (`pack sync`, the Mods screen's "Use a
/// shared set"): plan (each line told to `say`), fetch and check every archive, then
/// install, then set the enabled packs and the load order. A refusal at any step before
/// the installs changes nothing.
pub fn apply(
    profile: &Path,
    folders: &Folders,
    lock: &LockFile,
    say: &mut dyn FnMut(String),
) -> Result<SyncPlan, IndexError> {
    let store = Store::new(profile);
    for line in store.recover() {
        say(format!("note: {line}"));
    }
    let plan = preview(profile, folders, lock, say)?;
    say("plan:".into());
    for line in plan.lines() {
        say(format!("  {line}"));
    }
    let pins = keys::Pins::open(profile)?;
    let temp = tempfile::tempdir()
        .map_err(|e| IndexError::io("make a temporary folder for the archives", e))?;
    let fetched = player::fetch(&plan.install, &pins, false, temp.path())
        .map_err(|e| IndexError::Refused(format!("{e}; nothing was changed")))?;
    let _lock = ProfileLock::acquire(profile, Access::Write)
        .map_err(|e| IndexError::Refused(format!("{e}; nothing was changed")))?;
    for line in player::install(profile, &store, &fetched, folders, false)? {
        say(line);
    }
    let mut set = PackSet::open(profile);
    set.set_enabled(
        lock.packs
            .iter()
            .filter(|p| p.source != "base")
            .map(|p| p.id.clone()),
    );
    set.set_order(plan.order.clone());
    set.save().map_err(|e| IndexError::Refused(e.to_string()))?;
    Ok(plan)
}

/// The lock file of the profile at `profile`'s set, as the text `pack lock` writes.
pub fn text(profile: &Path, folders: &Folders, set: &PackSet) -> Result<String, IndexError> {
    let file = self::lock(profile, folders, set)?;
    let mut text = serde_json::to_string_pretty(&file)
        .map_err(|e| IndexError::Refused(format!("write the lock file: {e}")))?;
    text.push('\n');
    Ok(text)
}
