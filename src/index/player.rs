//! The player's side of indexes: the indexes a profile lists, in order
//! (`PROFILE/indexes.json`), the last copy read of each (`PROFILE/index-cache/NAME`, so a
//! search works while an index cannot be reached), search, install plans with what the
//! packs require, and updates.
//!
//! An install goes: plan (each entry's signature checked as it is read, the plan bounded
//! in breadth and total), fetch (each archive's size, hash, pinned key and the pack it
//! declares against its signed entry, before anything is unpacked), then install under
//! the profile lock, pack by pack, each pack's pin written before the pack is put in
//! place: a kill at any step leaves no pack without its pin.
//!
//! Packs are placed through `packs::Store::install_expecting`; when one fails, the packs
//! the install placed new are taken out again, and then their pins.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use ed25519_dalek::VerifyingKey;
use serde::{Deserialize, Serialize};

use super::{Entry, IndexError, Summary, fresh, keys};
use crate::fsutil::lock::{Access, ProfileLock};
use crate::packs::{Folders, PackSource, Store};

/// One index a profile lists.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Source {
    /// Its name in this profile.
    pub name: String,
    /// Its folder, or its web address.
    pub location: String,
}

/// The indexes of a profile, first asked first.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Sources {
    /// The indexes.
    pub indexes: Vec<Source>,
}

/// The most indexes a profile lists.
const MAX_SOURCES: usize = 64;

impl Sources {
    fn path(profile: &Path) -> PathBuf {
        profile.join("indexes.json")
    }

    /// The indexes of `profile` (none when the file is missing).
    pub fn open(profile: &Path) -> Result<Sources, IndexError> {
        let path = Sources::path(profile);
        let sources: Sources = super::read_profile_json(
            &path,
            256 * 1024,
            "the list of indexes",
            "fix it, or delete it and add the indexes again",
        )?;
        if sources.indexes.len() > MAX_SOURCES {
            return Err(IndexError::Bad {
                what: crate::fsutil::shown(&path),
                reason: format!("more than {MAX_SOURCES} indexes"),
            });
        }
        Ok(sources)
    }

    fn save(&self, profile: &Path) -> Result<(), IndexError> {
        crate::fsutil::make_profile_dir(profile)?;
        super::write_profile_json(&Sources::path(profile), self)
    }

    /// Add the index at `location` (a folder or a web address) as `name`, last in the
    /// order, after checking it is an index.
    pub fn add(
        profile: &Path,
        name: &str,
        location: &Path,
        owner: Option<&str>,
    ) -> Result<(Source, Vec<String>), IndexError> {
        if !crate::content::discover::valid_id(name) || name.len() > 64 {
            return Err(IndexError::Refused(format!(
                "'{}' cannot name an index: use lowercase letters, digits and '_' (at most 64)",
                super::clean(name)
            )));
        }
        let mut sources = Sources::open(profile)?;
        if sources.indexes.iter().any(|s| s.name == name) {
            return Err(IndexError::Refused(format!(
                "an index named '{name}' is listed already (`tokensmith index remove {name}` first)"
            )));
        }
        if sources.indexes.len() >= MAX_SOURCES {
            return Err(IndexError::Refused(format!(
                "a profile lists at most {MAX_SOURCES} indexes"
            )));
        }
        let text = location.to_string_lossy();
        let stored = if super::is_web(&text) {
            text.trim().to_string()
        } else {
            std::path::absolute(location)
                .map_err(|e| IndexError::io(format!("find {}", crate::fsutil::shown(location)), e))?
                .to_string_lossy()
                .into_owned()
        };
        let source = Source {
            name: name.to_string(),
            location: stored,
        };
        // What was seen of an index listed before under this name is forgotten.
        fresh::Seen::forget(profile, name);
        let loc = super::Location::parse(&source.location, &cache_dir(profile, name));
        let index = super::read_index(&loc)?;
        match (&index.owner, owner) {
            (Some(found), Some(want)) if found != want => {
                return Err(IndexError::Refused(format!(
                    "the index is owned by the key {found}, not the {} you named; nothing was added",
                    super::clean(want)
                )));
            }
            (None, Some(_)) => {
                return Err(IndexError::Refused(
                    "the index has no owner key (format 1), so it cannot be checked against the one you named; nothing was added".into(),
                ));
            }
            _ => {}
        }
        let (_, notes) = Opened::open_at(profile, &source, loc, false)?;
        sources.indexes.push(source.clone());
        sources.save(profile)?;
        Ok((source, notes))
    }

    /// Take the index `name` out of the list (and its cached copy). Whether it was there.
    pub fn remove(profile: &Path, name: &str) -> Result<bool, IndexError> {
        let mut sources = Sources::open(profile)?;
        let before = sources.indexes.len();
        sources.indexes.retain(|s| s.name != name);
        if sources.indexes.len() == before {
            return Ok(false);
        }
        sources.save(profile)?;
        let cache = cache_dir(profile, name);
        if cache.exists() {
            let _ = std::fs::remove_dir_all(&cache);
        }
        fresh::Seen::forget(profile, name);
        Ok(true)
    }
}

/// Where the last copy read of index `name` is kept.
fn cache_dir(profile: &Path, name: &str) -> PathBuf {
    profile.join("index-cache").join(name)
}

/// An index as it can be read now: its folder, or its last copy when the folder cannot
/// be read; for a format-2 index, with its owner's snapshot checked.
#[derive(Clone, Debug)]
pub struct Opened {
    /// Its name.
    pub name: String,
    /// Its folder or web address, as the profile lists it.
    pub location: String,
    /// Where its files are read from (the listing files read are copied into the
    /// profile as they are read).
    loc: super::Location,
    /// Whether `loc` is the profile's copy (the index could not be read).
    pub offline: bool,
    /// The owner's checked snapshot (none for a format-1 index).
    snapshot: Option<Arc<fresh::Snapshot>>,
    /// Its summary, read and checked when it was opened.
    summary: Arc<super::SummaryFile>,
    /// What was read of it: pack files and authors' keys (each read once).
    read: Arc<Mutex<Reads>>,
}

/// What an [`Opened`] index has read, so a plan reads each file once.
#[derive(Debug, Default)]
struct Reads {
    packs: HashMap<String, Option<super::PackFile>>,
    keys: HashMap<String, VerifyingKey>,
    revoked: HashMap<String, bool>,
}

impl Opened {
    /// Open `source`: its folder when it can be read (refreshing the copy), else the copy.
    /// The notes say why the copy is used, and warn of an expiring timestamp or an index
    /// without an owner's signature.
    pub fn open(profile: &Path, source: &Source) -> Result<(Opened, Vec<String>), IndexError> {
        let cache = cache_dir(profile, &source.name);
        let loc = super::Location::parse(&source.location, &cache);
        match Opened::open_at(profile, source, loc, false) {
            Ok(o) => Ok(o),
            // What the owner signed refused (rollback, freeze, mix): never fall back to
            // the copy, which the same check would have to refuse anyway.
            Err(e @ IndexError::Refused(_)) => Err(e),
            Err(e) => {
                let copy = super::Location::folder(&cache);
                match Opened::open_at(profile, source, copy, true) {
                    Ok((o, mut notes)) => {
                        notes.insert(
                            0,
                            format!(
                                "index '{}' cannot be read ({e}); its last copy is used",
                                source.name
                            ),
                        );
                        Ok((o, notes))
                    }
                    Err(_) => Err(e),
                }
            }
        }
    }

    /// Open `source` read at `loc`: its `index.json`, for a format-2 index its owner's
    /// timestamp and snapshot (checked against what was seen, which is then raised), and
    /// its summary (against the snapshot).
    fn open_at(
        profile: &Path,
        source: &Source,
        loc: super::Location,
        offline: bool,
    ) -> Result<(Opened, Vec<String>), IndexError> {
        let name = &source.name;
        let index = super::read_index(&loc)?;
        let seen = fresh::Seen::open(profile, name)?;
        let mut notes = Vec::new();
        let snapshot = match &index.owner {
            Some(owner) => {
                let verified = fresh::verify(&loc, name, owner, &seen, fresh::now())?;
                notes.extend(verified.notes.iter().cloned());
                fresh::Seen::record(
                    profile,
                    name,
                    &fresh::Seen {
                        owner: Some(keys::public_hex(&verified.owner)),
                        snapshot: verified.snapshot.version,
                        timestamp: verified.timestamp.version,
                    },
                    verified.owner_moved,
                )?;
                Some(Arc::new(verified.snapshot))
            }
            None if seen.owner.is_some() => {
                return Err(IndexError::Refused(format!(
                    "index '{name}' was signed by its owner before, and now has no owner: an unsigned copy is refused (if its owner really went back to format 1, `tokensmith index remove {name}` and add it again)"
                )));
            }
            None => {
                notes.push(format!(
                    "index '{name}' is of format 1, with no owner's signature: nothing stops whoever hosts it from serving an old listing (its owner upgrades it by publishing with this version)"
                ));
                None
            }
        };
        let bytes = match &snapshot {
            Some(s) => loc.need_known(
                "summary.json",
                super::CAPS.summary_bytes,
                "an index summary",
                &s.summary,
            )?,
            None => loc.need(
                "summary.json",
                super::CAPS.summary_bytes,
                "an index summary",
            )?,
        };
        if let Some(snapshot) = &snapshot {
            fresh::check_listed(snapshot, name, "summary.json", &bytes)?;
        }
        let what = loc.shown("summary.json");
        let summary: super::SummaryFile = super::parse_json(&bytes, &what)?;
        super::check_summary(&summary, &what)?;
        Ok((
            Opened {
                name: name.clone(),
                location: source.location.clone(),
                loc,
                offline,
                snapshot,
                summary: Arc::new(summary),
                read: Arc::default(),
            },
            notes,
        ))
    }

    /// The index's summary.
    #[must_use]
    pub fn summary(&self) -> &super::SummaryFile {
        &self.summary
    }

    fn reads(&self) -> std::sync::MutexGuard<'_, Reads> {
        self.read.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The versions of `id` in this index, if it lists it: in a format-2 index, the file
    /// must be the one the owner's snapshot lists, and each yank must be signed by the
    /// key that signed its version.
    pub fn pack(&self, id: &str) -> Result<Option<super::PackFile>, IndexError> {
        if let Some(file) = self.reads().packs.get(id) {
            return Ok(file.clone());
        }
        let file = self.read_pack(id)?;
        self.reads().packs.insert(id.to_string(), file.clone());
        Ok(file)
    }

    fn read_pack(&self, id: &str) -> Result<Option<super::PackFile>, IndexError> {
        super::check_id(id).map_err(|e| IndexError::Bad {
            what: "the pack asked for".into(),
            reason: e.to_string(),
        })?;
        let rel = format!("packs/{id}.json");
        let Some(snapshot) = &self.snapshot else {
            return super::read_pack(&self.loc, id);
        };
        let Some(listed) = snapshot.packs.get(id) else {
            return Ok(None);
        };
        let bytes = self
            .loc
            .need_known(&rel, super::CAPS.entry_bytes, "an index entry", listed)?;
        fresh::check_listed(snapshot, &self.name, &rel, &bytes)?;
        let what = self.loc.shown(&rel);
        let file: super::PackFile = super::parse_json(&bytes, &what)?;
        super::check_pack_file(&file, id, &what)?;
        for e in file.versions.iter().filter(|e| e.yanked) {
            let signed = e.yank_signature.as_deref().is_some_and(|sig| {
                self.key(&e.key)
                    .is_ok_and(|k| keys::verify(&k, &e.yank_message(id), sig).is_ok())
            });
            if !signed {
                return Err(IndexError::Refused(format!(
                    "index '{}': {what}: the yank of {id} {} is not signed by its author's key; nothing from it is used",
                    self.name, e.version
                )));
            }
        }
        Ok(Some(file))
    }

    /// The author key `id` of this index (read once).
    fn key(&self, id: &str) -> Result<VerifyingKey, IndexError> {
        if let Some(k) = self.reads().keys.get(id) {
            return Ok(*k);
        }
        let key = keys::read_public(&self.loc, id)?;
        self.reads().keys.insert(id.to_string(), key);
        Ok(key)
    }

    /// Whether the author key `id` is revoked: by the owner's snapshot, or by a
    /// revocation its author signed.
    fn revoked(&self, id: &str) -> Result<bool, IndexError> {
        if self
            .snapshot
            .as_ref()
            .is_some_and(|s| s.revoked.iter().any(|k| k == id))
        {
            return Ok(true);
        }
        if let Some(r) = self.reads().revoked.get(id) {
            return Ok(*r);
        }
        let r = keys::revoked(&self.loc, id)?;
        self.reads().revoked.insert(id.to_string(), r);
        Ok(r)
    }

    /// Check the signature of `entry` (version of `id`) by the key it names, which must
    /// not be revoked. The key.
    pub(crate) fn check_entry(&self, id: &str, entry: &Entry) -> Result<VerifyingKey, IndexError> {
        let name = format!("{id} {}", entry.version);
        let key = self.key(&entry.key).map_err(|e| {
            IndexError::Refused(format!(
                "{name}: its author's key {}: {e}; nothing was installed",
                entry.key
            ))
        })?;
        keys::verify(&key, &entry.message(id), &entry.signature)
            .map_err(|why| IndexError::Refused(format!("{name}: {why}; nothing was installed")))?;
        if self.revoked(&entry.key)? {
            return Err(IndexError::Refused(format!(
                "{name} is signed by the key {}, which is revoked (by its author or the index's owner): nothing it signed is installed; nothing was installed",
                entry.key
            )));
        }
        Ok(key)
    }
}

/// Open every index of `profile`, in order; notes for those read from their last copy.
pub fn open_all(profile: &Path) -> Result<(Vec<Opened>, Vec<String>), IndexError> {
    let sources = Sources::open(profile)?;
    if sources.indexes.is_empty() {
        return Err(IndexError::Refused(
            "no index is listed: `tokensmith index add NAME FOLDER` adds one".into(),
        ));
    }
    let mut opened = Vec::new();
    let mut notes = Vec::new();
    for source in &sources.indexes {
        match Opened::open(profile, source) {
            Ok((o, n)) => {
                opened.push(o);
                notes.extend(n);
            }
            Err(e) => notes.push(format!("index '{}' is left out: {e}", source.name)),
        }
    }
    Ok((opened, notes))
}

/// A search result.
#[derive(Clone, Debug, Serialize)]
pub struct Found {
    /// The index it is in.
    pub index: String,
    /// The pack.
    #[serde(flatten)]
    pub pack: Summary,
}

/// The packs of `indexes` whose id, name or description hold every one of `words`
/// (case-insensitive; no words: every pack), by id, each id once (the first index's).
#[must_use]
pub fn search(indexes: &[(&str, &super::SummaryFile)], words: &[String]) -> Vec<Found> {
    let words: Vec<String> = words.iter().map(|w| w.to_lowercase()).collect();
    let mut found: BTreeMap<String, Found> = BTreeMap::new();
    for (name, summary) in indexes {
        for pack in &summary.packs {
            if found.contains_key(&pack.id) {
                continue;
            }
            let text = format!("{} {} {}", pack.id, pack.name, pack.description).to_lowercase();
            if words.iter().all(|w| text.contains(w.as_str())) {
                found.insert(
                    pack.id.clone(),
                    Found {
                        index: (*name).to_string(),
                        pack: pack.clone(),
                    },
                );
            }
        }
    }
    found.into_values().collect()
}

/// One pack of an install plan.
#[derive(Clone, Debug)]
pub struct PlannedPack {
    /// The pack's id.
    pub id: String,
    /// The version chosen.
    pub entry: Entry,
    /// The index it comes from.
    pub index: Opened,
    /// The pack that requires it (none for a pack asked for).
    pub required_by: Option<String>,
    /// The installed version it replaces.
    pub replaces: Option<semver::Version>,
    /// The key that signed the entry (its signature checked when it was planned).
    pub key: VerifyingKey,
}

impl PlannedPack {
    /// Whether it replaces a newer version.
    #[must_use]
    pub fn is_downgrade(&self) -> bool {
        self.replaces
            .as_ref()
            .is_some_and(|old| *old > self.entry.semver())
    }
}

/// What to install, requirements before the packs that need them.
#[derive(Clone, Debug, Default)]
pub struct InstallPlan {
    /// The packs, in install order.
    pub steps: Vec<PlannedPack>,
    /// Packs asked for that are there already, in words.
    pub notes: Vec<String>,
}

/// The most packs one plan installs.
pub const MAX_PLAN_PACKS: usize = 256;
/// The most pack files one plan reads (each index asked for each pack counts).
pub const MAX_PLAN_READS: usize = 2_048;

impl InstallPlan {
    /// The plan in words, a line a pack.
    #[must_use]
    pub fn lines(&self) -> Vec<String> {
        self.steps
            .iter()
            .map(|s| {
                let mut line = match &s.replaces {
                    Some(old) if s.is_downgrade() => {
                        format!("downgrade {} {} -> {}", s.id, old, s.entry.version)
                    }
                    Some(old) => format!("update {} {} -> {}", s.id, old, s.entry.version),
                    None => format!("install {} {}", s.id, s.entry.version),
                };
                line.push_str(&format!(" (from index '{}'", s.index.name));
                if let Some(by) = &s.required_by {
                    line.push_str(&format!(", required by {by}"));
                }
                line.push(')');
                line
            })
            .collect()
    }
}

/// A pack present in the pack folders: its version and where it is.
#[derive(Clone, Debug)]
struct Present {
    version: semver::Version,
    source: PackSource,
}

fn present(folders: &Folders) -> BTreeMap<String, Present> {
    let (found, _) = crate::packs::set::find(folders);
    let mut out = BTreeMap::new();
    for f in found {
        out.entry(f.pack.id().to_string()).or_insert(Present {
            version: f.pack.version.clone(),
            source: f.source,
        });
    }
    out
}

/// The version of `id` installed in the profile's store, as [`plan`] sees the packs of
/// `folders` (none when it is not installed, or only in the base content or `mods/`).
#[must_use]
pub fn installed(folders: &Folders, id: &str) -> Option<semver::Version> {
    present(folders)
        .remove(id)
        .filter(|p| p.source == PackSource::Installed)
        .map(|p| p.version)
}

/// `ID`, `ID@REQ` or `ID@VERSION` as what to ask [`plan`] for: a bare version means
/// exactly that version (`1.0.0` is `=1.0.0`), a requirement (`^1`, `>=0.3`) the newest
/// that meets it.
pub fn want(spec: &str) -> Result<(String, semver::VersionReq), IndexError> {
    let (id, req) = match spec.split_once('@') {
        Some((id, v)) => (id, Some(v.trim())),
        None => (spec, None),
    };
    let req = match req {
        None => semver::VersionReq::STAR,
        Some(v) if semver::Version::parse(v).is_ok() => semver::VersionReq::parse(&format!("={v}"))
            .map_err(|e| IndexError::Refused(format!("'{}': {e}", super::clean(v))))?,
        Some(v) => semver::VersionReq::parse(v).map_err(|e| {
            IndexError::Refused(format!(
                "'{}' is not a version or a version requirement (e.g. 1.2.0, ^1, >=0.3): {e}",
                super::clean(v)
            ))
        })?,
    };
    Ok((id.to_string(), req))
}

/// Work out what installing `wants` (`(id, requirement)`) takes: the newest version of
/// each that matches and is not yanked, from the first index with one, and the same for
/// what they require that is not there already. An installed pack whose version does
/// not meet what is asked is replaced (a downgrade when the version asked is older);
/// with `update`, installed packs are replaced by their newest version. Each entry's
/// signature is checked as it is chosen; a plan of more than [`MAX_PLAN_PACKS`] packs or
/// [`MAX_PLAN_READS`] reads is refused.
pub fn plan(
    indexes: &[Opened],
    folders: &Folders,
    wants: &[(String, semver::VersionReq)],
    update: bool,
) -> Result<InstallPlan, IndexError> {
    let present = present(folders);
    let mut resolver = Resolver {
        indexes,
        present: &present,
        plan: InstallPlan::default(),
        path: Vec::new(),
        reads: 0,
    };
    for (id, req) in wants {
        match present.get(id) {
            Some(p) if p.source != PackSource::Installed => {
                return Err(IndexError::Refused(format!(
                    "'{id}' is in {} already (version {}): packs there are loaded as they are, not installed from an index (to try the index's version, install it into a profile without that folder: `tokensmith --mods EMPTY_FOLDER pack install {id}`)",
                    place(p.source),
                    p.version
                )));
            }
            Some(p) if !update && req.matches(&p.version) => {
                resolver.plan.notes.push(format!(
                    "{id} {} is installed already (`tokensmith pack update {id}` takes a newer version; `tokensmith pack install {id}@VERSION` another one)",
                    p.version
                ));
            }
            Some(p) if !update => {
                resolver.add(id, req, None, Some(p.version.clone()))?;
            }
            Some(p) => {
                let newest = resolver.choose(id, req, None)?;
                if newest.1.semver() > p.version {
                    resolver.add(id, req, None, Some(p.version.clone()))?;
                } else {
                    resolver
                        .plan
                        .notes
                        .push(format!("{id} {} is the newest version", p.version));
                }
            }
            None => resolver.add(id, req, None, None)?,
        }
    }
    Ok(resolver.plan)
}

struct Resolver<'a> {
    indexes: &'a [Opened],
    present: &'a BTreeMap<String, Present>,
    plan: InstallPlan,
    /// The packs being resolved, outermost first (a requirement cycle comes back here).
    path: Vec<String>,
    /// Pack files asked of the indexes so far.
    reads: usize,
}

impl Resolver<'_> {
    /// The newest version of `id` matching `req` that is not yanked, from the first index
    /// with one, its signature checked.
    fn choose(
        &mut self,
        id: &str,
        req: &semver::VersionReq,
        by: Option<&str>,
    ) -> Result<(Opened, Entry, VerifyingKey), IndexError> {
        let mut seen = Vec::new();
        for index in self.indexes {
            self.reads += 1;
            if self.reads > MAX_PLAN_READS {
                return Err(IndexError::Refused(format!(
                    "planning read more than {MAX_PLAN_READS} pack files (at '{id}'): the packs' requirements are too many to resolve; nothing was installed"
                )));
            }
            let Some(file) = index.pack(id)? else {
                continue;
            };
            let best = file
                .versions
                .iter()
                .filter(|e| !e.yanked && req.matches(&e.semver()))
                .max_by_key(|e| e.semver());
            if let Some(e) = best {
                let key = index.check_entry(id, e)?;
                return Ok((index.clone(), e.clone(), key));
            }
            let listed: Vec<String> = file
                .versions
                .iter()
                .map(|e| {
                    if e.yanked {
                        format!("{} (yanked)", e.version)
                    } else {
                        e.version.clone()
                    }
                })
                .collect();
            seen.push(format!("'{}' has {}", index.name, listed.join(", ")));
        }
        let needed = by
            .map(|b| format!(" (required by {b})"))
            .unwrap_or_default();
        Err(IndexError::Refused(if seen.is_empty() {
            format!("no index lists the pack '{id}'{needed}")
        } else {
            format!(
                "no index has a version of '{id}' matching {req} that is not yanked{needed}: {}",
                seen.join("; ")
            )
        }))
    }

    /// Plan `id` at the newest version matching `req`, after what it requires.
    fn add(
        &mut self,
        id: &str,
        req: &semver::VersionReq,
        by: Option<&str>,
        replaces: Option<semver::Version>,
    ) -> Result<(), IndexError> {
        if self.path.iter().any(|p| p == id) {
            let mut cycle = self.path.clone();
            cycle.push(id.to_string());
            return Err(IndexError::Refused(format!(
                "the packs' requirements form a cycle: {}",
                cycle.join(" requires ")
            )));
        }
        if let Some(planned) = self.plan.steps.iter().find(|s| s.id == id) {
            if req.matches(&planned.entry.semver()) {
                return Ok(());
            }
            return Err(IndexError::Refused(format!(
                "'{id}' is needed at {req} by {} but at {} by {}",
                by.unwrap_or("the command"),
                planned.entry.version,
                planned.required_by.as_deref().unwrap_or("the command")
            )));
        }
        if self.path.len() > 64 {
            return Err(IndexError::Refused(format!(
                "the chain of requirements past '{id}' is more than 64 packs deep"
            )));
        }
        // Counting the packs being resolved too, so a wide tree stops before it is read.
        if self.plan.steps.len() + self.path.len() >= MAX_PLAN_PACKS {
            return Err(IndexError::Refused(format!(
                "the plan would install more than {MAX_PLAN_PACKS} packs (at '{id}'{}): install fewer at a time; nothing was installed",
                by.map(|b| format!(", required by {b}")).unwrap_or_default()
            )));
        }
        let (index, entry, key) = self.choose(id, req, by)?;
        self.path.push(id.to_string());
        for r in &entry.requires {
            let need = semver::VersionReq::parse(&r.version).map_err(|e| {
                IndexError::Refused(format!(
                    "{id} {}: requirement of '{}': {e}",
                    entry.version, r.id
                ))
            })?;
            match self.present.get(&r.id) {
                Some(p) if need.matches(&p.version) => {}
                Some(p) if p.source == PackSource::Installed => {
                    self.add(&r.id, &need, Some(id), Some(p.version.clone()))?;
                }
                Some(p) => {
                    return Err(IndexError::Refused(format!(
                        "{id} {} requires {} {need}, but {} has {} {}",
                        entry.version,
                        r.id,
                        place(p.source),
                        r.id,
                        p.version
                    )));
                }
                None => self.add(&r.id, &need, Some(id), None)?,
            }
        }
        self.path.pop();
        self.plan.steps.push(PlannedPack {
            id: id.to_string(),
            entry,
            index,
            required_by: by.map(str::to_string),
            replaces,
            key,
        });
        Ok(())
    }
}

/// A planned pack fetched and checked, ready to install.
pub struct Fetched {
    /// Its step of the plan.
    pub step: PlannedPack,
    /// The archive, checked, in a temporary folder.
    pub archive: PathBuf,
    /// Its author's public key, in hex.
    pub key: String,
    /// How the key was accepted when it is not the pinned one, in words.
    pub key_note: Option<String>,
}

/// How the key `public` (id `id`) that signed `step` stands against the key pinned for
/// its pack: `Ok(None)` when it is the pinned one or none is pinned, `Ok(Some(note))` when
/// a move signed by the pinned key (through keys none of which is revoked) leads to it, or
/// `accept_new_key` says so; refused otherwise.
fn check_pin(
    step: &PlannedPack,
    pins: &keys::Pins,
    accept_new_key: bool,
) -> Result<Option<String>, IndexError> {
    let id = &step.id;
    let name = format!("{id} {}", step.entry.version);
    let public = keys::public_hex(&step.key);
    let Some(pinned) = pins.packs.get(id).filter(|p| **p != public) else {
        return Ok(None);
    };
    let pinned_id = super::from_hex::<32>(pinned)
        .and_then(|b| VerifyingKey::from_bytes(&b).ok())
        .map(|k| keys::key_id(&k));
    if let Some(pinned_id) = &pinned_id
        && let Some(chain) = keys::rotation_chain(&step.index.loc, pinned_id, &step.entry.key)?
    {
        let mut revoked = None;
        for k in std::iter::once(pinned_id).chain(chain.iter()) {
            if step.index.revoked(k)? {
                revoked = Some(k.clone());
            }
        }
        match revoked {
            None => {
                return Ok(Some(format!(
                    "{id}: its author moved from the key {pinned_id} to {} (the move signed by the old key); the new key is pinned",
                    chain.join(" to ")
                )));
            }
            Some(k) if !accept_new_key => {
                return Err(IndexError::Refused(format!(
                    "{name} is signed by the key {}, reached from the pinned key {pinned_id} through the revoked key {k}: a stolen key can sign such a move; if you trust the new key, run again with --accept-new-key; nothing was installed",
                    step.entry.key
                )));
            }
            Some(_) => {}
        }
    }
    if accept_new_key {
        return Ok(Some(format!(
            "{id}: the key {} is accepted in place of the pinned one (--accept-new-key)",
            step.entry.key
        )));
    }
    Err(IndexError::Refused(format!(
        "{name} is signed by another key than the one '{id}' was first installed with (pinned {}…, now {}…), and no key move signed by the pinned key leads to it: if its author really changed keys, run again with --accept-new-key; nothing was installed",
        &pinned[..pinned.len().min(16)],
        &public[..16]
    )))
}

/// Fetch every archive of `plan` into `temp` and check it before anything is installed:
/// the key that signed the entry against the one pinned for the pack id (a different key
/// is refused unless a move signed by the pinned key leads to it, or `accept_new_key`),
/// the archive's size (read no further than the entry says), its SHA-256, and the pack
/// its `pack.yaml` declares — id, version and requirements must be the signed entry's.
pub fn fetch(
    plan: &InstallPlan,
    pins: &keys::Pins,
    accept_new_key: bool,
    temp: &Path,
) -> Result<Vec<Fetched>, IndexError> {
    let mut out = Vec::new();
    for step in &plan.steps {
        let id = &step.id;
        let e = &step.entry;
        let name = format!("{id} {}", e.version);
        if step.index.offline {
            return Err(IndexError::Refused(format!(
                "{name}: index '{}' cannot be read now, and archives are not kept in its copy; nothing was installed",
                step.index.name
            )));
        }
        let key_note = check_pin(step, pins, accept_new_key)?;
        let cap = crate::packs::CAPS.archive_bytes;
        if e.size > cap {
            return Err(IndexError::Refused(format!(
                "{name}: its entry says the archive is {} bytes; a pack archive may have at most {cap}; nothing was installed",
                e.size
            )));
        }
        let rel = super::archive_path(id, &e.version);
        let bytes = match step.index.loc.read(&rel, e.size, "a pack archive") {
            Ok(Some(bytes)) => bytes,
            Ok(None) => {
                return Err(IndexError::Refused(format!(
                    "{name}: the index has no archive {}; nothing was installed",
                    step.index.loc.shown(&rel)
                )));
            }
            Err(IndexError::TooLarge { size, .. }) => {
                let size = size.map(|s| format!("{s} bytes, ")).unwrap_or_default();
                return Err(IndexError::Refused(format!(
                    "{name}: the archive is {size}longer than the {} its entry says; nothing was installed",
                    e.size
                )));
            }
            Err(err) => {
                return Err(IndexError::Refused(format!(
                    "{name}: {err}; nothing was installed"
                )));
            }
        };
        if bytes.len() as u64 != e.size {
            return Err(IndexError::Refused(format!(
                "{name}: the archive is {} bytes, not the {} its entry says; nothing was installed",
                bytes.len(),
                e.size
            )));
        }
        let sha = super::sha256(&bytes);
        if sha != e.sha256 {
            return Err(IndexError::Refused(format!(
                "{name}: the archive's SHA-256 is {sha}, not the {} its signed entry says (it was changed after it was published); nothing was installed",
                e.sha256
            )));
        }
        check_identity(step, bytes.clone(), temp)?;
        let file = temp.join(format!("{id}-{}.zip", e.version));
        crate::fsutil::write_atomic(&file, &bytes)
            .map_err(|err| IndexError::io("keep a fetched archive", err))?;
        out.push(Fetched {
            step: step.clone(),
            archive: file,
            key: keys::public_hex(&step.key),
            key_note,
        });
    }
    Ok(out)
}

/// The pack the archive `bytes` of `step` declares must be its signed entry's: the same
/// id, version and requirements. Only its `pack.yaml` is read (into a folder of `temp`).
fn check_identity(step: &PlannedPack, bytes: Vec<u8>, temp: &Path) -> Result<(), IndexError> {
    let id = &step.id;
    let e = &step.entry;
    let name = format!("{id} {}", e.version);
    let refuse = |why: String| IndexError::Refused(format!("{name}: {why}; nothing was installed"));
    let scratch = tempfile::Builder::new()
        .prefix(".manifest-")
        .tempdir_in(temp)
        .map_err(|err| IndexError::io("make a folder to read a manifest in", err))?;
    let pack = crate::packs::archive::check_bytes(bytes)
        .and_then(|mut c| c.manifest(scratch.path()))
        .map_err(|err| refuse(format!("its archive is refused: {err}")))?;
    let declared = super::Requires::of(&pack);
    let mut want = e.requires.clone();
    want.sort_by(|a, b| a.id.cmp(&b.id));
    let mut got = declared;
    got.sort_by(|a, b| a.id.cmp(&b.id));
    if pack.id() != id || pack.version != e.semver() {
        return Err(refuse(format!(
            "its archive holds the pack '{}' {}, not the {name} its signed entry names",
            super::clean(pack.id()),
            pack.version
        )));
    }
    if got != want {
        let show = |r: &[super::Requires]| {
            if r.is_empty() {
                "nothing".to_string()
            } else {
                r.iter()
                    .map(|r| format!("{} {}", super::clean(&r.id), super::clean(&r.version)))
                    .collect::<Vec<_>>()
                    .join(", ")
            }
        };
        return Err(refuse(format!(
            "its archive's pack.yaml requires {}, but its signed entry says {}",
            show(&got),
            show(&want)
        )));
    }
    Ok(())
}

/// What [`install`] did, a line a pack.
pub type Installed = Vec<String>;

/// Install `fetched` (in order) into `store` under the profile lock (a pack whose id is
/// in the base content or `mods/` of `folders` is refused). The pins are read again
/// under the lock and every key checked against them (another install may have pinned a
/// pack meanwhile); then for each pack, its pin is written (atomically) before the pack
/// is put in place, and the pack must unpack to its signed entry's id, version and
/// content hash. When one fails, the packs this call installed new are taken out again
/// (moved to `packs-removed`), and then their pins.
pub fn install(
    profile: &Path,
    store: &Store,
    fetched: &[Fetched],
    folders: &Folders,
    accept_new_key: bool,
) -> Result<Installed, IndexError> {
    let _lock = ProfileLock::acquire(profile, Access::Write)
        .map_err(|e| IndexError::Refused(format!("{e}; nothing was installed")))?;
    let elsewhere = crate::packs::set::outside_store(folders);
    let mut pins = keys::Pins::open(profile)?;
    let mut done: Vec<String> = Vec::new();
    for f in fetched {
        if let Some(note) = check_pin(&f.step, &pins, accept_new_key)? {
            done.push(format!("note: {note}"));
        }
    }
    let before = pins.clone();
    // Packs this call installed new, in order.
    let mut new_ids: Vec<String> = Vec::new();
    // On a failure: take the new packs out again, then put back as they were the pins of
    // those and of the pack that failed.
    let undo = |new_ids: &[String], failed: &str, pins: &mut keys::Pins| {
        for id in new_ids.iter().rev() {
            let _ = store.remove(id);
        }
        for id in new_ids.iter().map(String::as_str).chain([failed]) {
            match before.packs.get(id) {
                Some(k) => pins.packs.insert(id.to_string(), k.clone()),
                None => pins.packs.remove(id),
            };
            match before.origins.get(id) {
                Some(o) => pins.origins.insert(id.to_string(), o.clone()),
                None => pins.origins.remove(id),
            };
        }
        let _ = pins.save(profile);
    };
    for f in fetched {
        let step = &f.step;
        let origin = keys::Origin {
            index: step.index.name.clone(),
            location: step.index.location.clone(),
            key: step.entry.key.clone(),
            // Asked for by name now, or before: never an orphan.
            requirement: step.required_by.is_some()
                && pins.origins.get(&step.id).is_none_or(|o| o.requirement),
        };
        if pins.packs.get(&step.id) != Some(&f.key) || pins.origins.get(&step.id) != Some(&origin) {
            pins.packs.insert(step.id.clone(), f.key.clone());
            pins.origins.insert(step.id.clone(), origin);
            if let Err(e) = pins.save(profile) {
                undo(&new_ids, &step.id, &mut pins);
                return Err(e);
            }
        }
        let version = step.entry.semver();
        let expected = crate::packs::Expected {
            id: &step.id,
            version: &version,
            hash: &step.entry.hash,
        };
        let result = store
            .install_expecting(
                &f.archive,
                step.replaces.is_some(),
                &elsewhere,
                Some(&expected),
            )
            .map_err(|e| IndexError::Refused(format!("{} {}: {e}", step.id, step.entry.version)));
        if let Err(e) = result {
            undo(&new_ids, &step.id, &mut pins);
            return Err(e);
        }
        if step.replaces.is_none() {
            new_ids.push(step.id.clone());
        }
        done.push(match &step.replaces {
            Some(old) if step.is_downgrade() => format!(
                "downgraded {} {} -> {} (`tokensmith pack rollback {}` goes back)",
                step.id, old, step.entry.version, step.id
            ),
            Some(old) => format!("updated {} {} -> {}", step.id, old, step.entry.version),
            None => format!("installed {} {}", step.id, step.entry.version),
        });
    }
    Ok(done)
}

/// An installed pack an index has a newer version of, or whose version is yanked.
#[derive(Clone, Debug, Serialize)]
pub struct Outdated {
    /// The pack's id.
    pub id: String,
    /// The installed version.
    pub installed: String,
    /// The newest version not yanked (none when every version is).
    pub newest: Option<String>,
    /// Whether the installed version is yanked by its author.
    pub yanked: bool,
    /// The index it is in.
    pub index: String,
}

impl Outdated {
    /// The line `pack outdated` prints, with the way out of a yanked version.
    #[must_use]
    pub fn line(&self) -> String {
        let id = &self.id;
        match (&self.newest, self.yanked) {
            (Some(n), false) => format!("{id} {} -> {n} (index '{}')", self.installed, self.index),
            (Some(n), true) => format!(
                "{id} {} is yanked by its author (index '{}'): `tokensmith pack install {id}@{n}` takes {n}, its newest version that is not",
                self.installed, self.index
            ),
            (None, _) => format!(
                "{id} {} is yanked by its author, and so is every version (index '{}'): `tokensmith pack disable {id}` or `tokensmith pack remove {id}`",
                self.installed, self.index
            ),
        }
    }
}

/// The installed packs of `folders` that an index of `indexes` has a newer version of,
/// or whose installed version it lists as yanked (with the newest version that is not,
/// older or newer).
pub fn outdated(indexes: &[Opened], folders: &Folders) -> Result<Vec<Outdated>, IndexError> {
    let mut out = Vec::new();
    for (id, p) in present(folders) {
        if p.source != PackSource::Installed {
            continue;
        }
        for index in indexes {
            let Some(file) = index.pack(&id)? else {
                continue;
            };
            let newest = file
                .versions
                .iter()
                .filter(|e| !e.yanked)
                .max_by_key(|e| e.semver());
            let yanked = file
                .versions
                .iter()
                .any(|e| e.yanked && e.semver() == p.version);
            if yanked || newest.is_some_and(|n| n.semver() > p.version) {
                out.push(Outdated {
                    id: id.clone(),
                    installed: p.version.to_string(),
                    newest: newest.map(|n| n.version.clone()),
                    yanked,
                    index: index.name.clone(),
                });
            }
            break;
        }
    }
    Ok(out)
}

/// The installed packs (`(id, version)`) whose version an index's last copy read lists
/// as yanked: id → a line saying so and how to get off it. Reads only the copies the
/// profile keeps (no index is asked), so it is cheap and works offline.
#[must_use]
pub fn yank_marks(
    profile: &Path,
    installed: &[(String, semver::Version)],
) -> BTreeMap<String, String> {
    let mut marks = BTreeMap::new();
    let Ok(sources) = Sources::open(profile) else {
        return marks;
    };
    for source in &sources.indexes {
        let copy = super::Location::folder(&cache_dir(profile, &source.name));
        for (id, version) in installed {
            if marks.contains_key(id) {
                continue;
            }
            let Ok(Some(file)) = super::read_pack(&copy, id) else {
                continue;
            };
            if !file
                .versions
                .iter()
                .any(|e| e.yanked && e.semver() == *version)
            {
                continue;
            }
            let line = Outdated {
                id: id.clone(),
                installed: version.to_string(),
                newest: file
                    .versions
                    .iter()
                    .filter(|e| !e.yanked)
                    .max_by_key(|e| e.semver())
                    .map(|e| e.version.clone()),
                yanked: true,
                index: source.name.clone(),
            }
            .line();
            marks.insert(id.clone(), line);
        }
    }
    marks
}

/// Where a pack found outside the store is, in words.
fn place(source: PackSource) -> &'static str {
    match source {
        PackSource::Base => "the base content",
        PackSource::Mods => "the mods folder",
        PackSource::Installed => "the profile",
    }
}

/// What installing `fetched` would change against the packs `set` plays with: each field
/// a new pack sets that another enabled pack sets too, and the problems loading them
/// together gives, as lines. The archives are unpacked into `temp` (checked as `pack
/// install` checks them); nothing is installed.
pub fn preview(
    folders: &Folders,
    set: &crate::packs::PackSet,
    fetched: &[Fetched],
    temp: &Path,
) -> Result<Vec<String>, IndexError> {
    let extra = temp.join("preview");
    std::fs::create_dir_all(&extra)
        .map_err(|e| IndexError::io("make a folder to look at the packs in", e))?;
    let mut ids = set.enabled();
    for f in fetched {
        let dir = extra.join(&f.step.id);
        crate::packs::archive::check(&f.archive)
            .and_then(|c| c.unpack(&dir))
            .map_err(|e| {
                IndexError::Refused(format!("{} {}: {e}", f.step.id, f.step.entry.version))
            })?;
        if !ids.contains(&f.step.id) {
            ids.push(f.step.id.clone());
        }
    }
    let new: Vec<&str> = fetched.iter().map(|f| f.step.id.as_str()).collect();
    let mut options = crate::packs::set::load_options(
        folders,
        &crate::packs::Selection::Set(crate::packs::PackSet::only(&ids)),
    );
    // The installed copies of the packs looked at (an older version, or one switched
    // off) would be found twice: the installed folder is given pack by pack without them.
    if let Some(installed) = &folders.installed {
        options.folders.retain(|f| f.path != *installed);
        if let Ok(entries) = std::fs::read_dir(installed) {
            let mut dirs: Vec<PathBuf> = entries
                .filter_map(Result::ok)
                .filter(|e| {
                    e.file_name()
                        .to_str()
                        .is_some_and(|n| !n.starts_with('.') && !new.contains(&n))
                })
                .map(|e| e.path())
                .filter(|p| crate::fsutil::is_real_dir(p) && p.join("pack.yaml").is_file())
                .collect();
            dirs.sort();
            options
                .folders
                .extend(dirs.into_iter().map(|path| crate::content::PackFolder {
                    path,
                    required: false,
                }));
        }
    }
    options.folders.insert(
        0,
        crate::content::PackFolder {
            path: extra,
            required: true,
        },
    );
    let loaded = crate::content::load(&options);
    let mut lines: Vec<String> = loaded
        .conflicts
        .iter()
        .filter(|c| c.setters.iter().any(|s| new.contains(&s.pack.as_str())))
        .map(|c| {
            let who: Vec<String> = c
                .setters
                .iter()
                .map(|s| format!("{} sets {}", s.pack, s.value))
                .collect();
            let entry = if c.entry.is_empty() {
                c.kind.clone()
            } else {
                format!("{} {}", c.kind, c.entry)
            };
            let how = if c.order_decides {
                "the load order decides"
            } else {
                "an override"
            };
            format!("{entry} {}: {} ({how})", c.field, who.join(", "))
        })
        .collect();
    lines.extend(
        loaded
            .diagnostics
            .iter()
            .filter(|d| d.severity == crate::content::Severity::Error)
            .map(|d| format!("error: {}", d.message)),
    );
    Ok(lines)
}
