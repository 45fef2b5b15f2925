//! The player's side of indexes: the indexes a profile lists, in order
//! (`PROFILE/indexes.json`), the last copy read of each (`PROFILE/index-cache/NAME`, so a
//! search works while an index cannot be reached), search, install plans with what the
//! packs require, and updates.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{Entry, IndexError, Summary, keys};
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
    pub fn add(profile: &Path, name: &str, location: &Path) -> Result<Source, IndexError> {
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
        let loc = super::Location::parse(&stored, &cache_dir(profile, name));
        super::read_index(&loc)?;
        super::read_summary(&loc)?;
        let source = Source {
            name: name.to_string(),
            location: stored,
        };
        sources.indexes.push(source.clone());
        sources.save(profile)?;
        Ok(source)
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
        Ok(true)
    }
}

/// Where the last copy read of index `name` is kept.
fn cache_dir(profile: &Path, name: &str) -> PathBuf {
    profile.join("index-cache").join(name)
}

/// An index as it can be read now: its folder, or its last copy when the folder cannot
/// be read.
#[derive(Clone, Debug)]
pub struct Opened {
    /// Its name.
    pub name: String,
    /// Where its files are read from (the listing files read are copied into the
    /// profile as they are read).
    loc: super::Location,
    /// Whether `loc` is the profile's copy (the index could not be read).
    pub offline: bool,
}

impl Opened {
    /// Open `source`: its folder when it can be read (refreshing the copy), else the copy.
    /// The second value says why the copy is used.
    pub fn open(profile: &Path, source: &Source) -> Result<(Opened, Option<String>), IndexError> {
        let cache = cache_dir(profile, &source.name);
        let loc = super::Location::parse(&source.location, &cache);
        match super::read_index(&loc).and_then(|_| super::read_summary(&loc)) {
            Ok(_) => Ok((
                Opened {
                    name: source.name.clone(),
                    loc,
                    offline: false,
                },
                None,
            )),
            Err(e) => {
                let copy = super::Location::folder(&cache);
                if super::read_index(&copy).is_ok() {
                    let note = format!(
                        "index '{}' cannot be read ({e}); its last copy is used",
                        source.name
                    );
                    Ok((
                        Opened {
                            name: source.name.clone(),
                            loc: copy,
                            offline: true,
                        },
                        Some(note),
                    ))
                } else {
                    Err(e)
                }
            }
        }
    }

    /// The index's summary.
    pub fn summary(&self) -> Result<super::SummaryFile, IndexError> {
        super::read_summary(&self.loc)
    }

    /// The versions of `id` in this index, if it lists it.
    pub fn pack(&self, id: &str) -> Result<Option<super::PackFile>, IndexError> {
        super::read_pack(&self.loc, id)
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
            Ok((o, note)) => {
                opened.push(o);
                notes.extend(note);
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
pub fn search(indexes: &[(String, super::SummaryFile)], words: &[String]) -> Vec<Found> {
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
                        index: name.clone(),
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
    pub replaces: Option<String>,
}

/// What to install, requirements before the packs that need them.
#[derive(Clone, Debug, Default)]
pub struct InstallPlan {
    /// The packs, in install order.
    pub steps: Vec<PlannedPack>,
    /// Packs asked for that are there already, in words.
    pub notes: Vec<String>,
}

impl InstallPlan {
    /// The plan in words, a line a pack.
    #[must_use]
    pub fn lines(&self) -> Vec<String> {
        self.steps
            .iter()
            .map(|s| {
                let mut line = match &s.replaces {
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

/// Work out what installing `wants` (`(id, requirement)`) takes: the newest version of
/// each that matches and is not yanked, from the first index with one, and the same for
/// what they require that is not there already. With `update`, packs installed already
/// are replaced by their newest version.
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
    };
    for (id, req) in wants {
        match present.get(id) {
            Some(p) if p.source != PackSource::Installed => {
                return Err(IndexError::Refused(format!(
                    "'{id}' is in {} already (version {}): packs there are not installed from an index",
                    place(p.source),
                    p.version
                )));
            }
            Some(p) if !update => {
                resolver.plan.notes.push(format!(
                    "{id} {} is installed already (`tokensmith pack update {id}` takes a newer version)",
                    p.version
                ));
            }
            Some(p) => {
                let newest = resolver.choose(id, req, None)?;
                if newest.1.semver() > p.version {
                    resolver.add(id, req, None, Some(p.version.to_string()))?;
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
}

impl Resolver<'_> {
    /// The newest version of `id` matching `req` that is not yanked, from the first index
    /// with one.
    fn choose(
        &self,
        id: &str,
        req: &semver::VersionReq,
        by: Option<&str>,
    ) -> Result<(Opened, Entry), IndexError> {
        let mut seen = Vec::new();
        for index in self.indexes {
            let Some(file) = index.pack(id)? else {
                continue;
            };
            let best = file
                .versions
                .iter()
                .filter(|e| !e.yanked && req.matches(&e.semver()))
                .max_by_key(|e| e.semver());
            if let Some(e) = best {
                return Ok((index.clone(), e.clone()));
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
                "no index has a version of '{id}' matching {req}{needed}: {}",
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
        replaces: Option<String>,
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
        let (index, entry) = self.choose(id, req, by)?;
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
                    self.add(&r.id, &need, Some(id), Some(p.version.to_string()))?;
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
}

/// Fetch every archive of `plan` into `temp` and check it before anything is installed:
/// the entry's signature by its author's key, that key against the one pinned for the
/// pack id (a different key is refused unless `accept_new_key`), the archive's size
/// (read no further than the entry says) and its SHA-256.
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
                "{name}: index '{}' cannot be read now, and archives are not kept in its copy",
                step.index.name
            )));
        }
        let key = keys::read_public(&step.index.loc, &e.key)?;
        keys::verify(&key, &e.message(id), &e.signature)
            .map_err(|why| IndexError::Refused(format!("{name}: {why}; nothing was installed")))?;
        let public = keys::public_hex(&key);
        if let Some(pinned) = pins.packs.get(id)
            && *pinned != public
            && !accept_new_key
        {
            return Err(IndexError::Refused(format!(
                "{name} is signed by another key than the one '{id}' was first installed with (pinned {}…, now {}…): if its author really changed keys, run again with --accept-new-key; nothing was installed",
                &pinned[..pinned.len().min(16)],
                &public[..16]
            )));
        }
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
        let file = temp.join(format!("{id}-{}.zip", e.version));
        crate::fsutil::write_atomic(&file, &bytes)
            .map_err(|err| IndexError::io("keep a fetched archive", err))?;
        out.push(Fetched {
            step: step.clone(),
            archive: file,
            key: public,
        });
    }
    Ok(out)
}

/// What [`install`] did, a line a pack.
pub type Installed = Vec<String>;

/// Install `fetched` (in order) into `store`, pinning each pack's key in `profile` (a pack
/// whose id is in the base content or `mods/` of `folders` is refused). A
/// pack whose installed content hash is not its entry's is taken out again; when one
/// fails, the packs this call installed new are taken out too (moved to
/// `packs-removed`).
pub fn install(
    profile: &Path,
    store: &Store,
    fetched: &[Fetched],
    folders: &Folders,
) -> Result<Installed, IndexError> {
    let elsewhere = crate::packs::set::outside_store(folders);
    let mut pins = keys::Pins::open(profile)?;
    let mut done: Vec<String> = Vec::new();
    let mut new_ids: Vec<String> = Vec::new();
    let undo = |new_ids: &[String]| {
        for id in new_ids.iter().rev() {
            let _ = store.remove(id);
        }
    };
    for f in fetched {
        let step = &f.step;
        let result = store
            .install(&f.archive, step.replaces.is_some(), &elsewhere)
            .map_err(|e| IndexError::Refused(format!("{} {}: {e}", step.id, step.entry.version)));
        let installed = match result {
            Ok(i) => i,
            Err(e) => {
                undo(&new_ids);
                return Err(e);
            }
        };
        if step.replaces.is_none() {
            new_ids.push(installed.id.clone());
        }
        if installed.hash != step.entry.hash {
            undo(&new_ids);
            return Err(IndexError::Refused(format!(
                "{} {}: its content hash is {}, not the {} its signed entry says; it was taken out again",
                step.id, step.entry.version, installed.hash, step.entry.hash
            )));
        }
        pins.packs.insert(step.id.clone(), f.key.clone());
        done.push(match &step.replaces {
            Some(old) => format!("updated {} {} -> {}", step.id, old, step.entry.version),
            None => format!("installed {} {}", step.id, step.entry.version),
        });
    }
    pins.save(profile)?;
    Ok(done)
}

/// An installed pack an index has a newer version of.
#[derive(Clone, Debug, Serialize)]
pub struct Outdated {
    /// The pack's id.
    pub id: String,
    /// The installed version.
    pub installed: String,
    /// The newest version not yanked.
    pub newest: String,
    /// The index it is in.
    pub index: String,
}

/// The installed packs of `folders` that an index of `indexes` has a newer version of.
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
            if let Some(newest) = file
                .versions
                .iter()
                .filter(|e| !e.yanked)
                .max_by_key(|e| e.semver())
                && newest.semver() > p.version
            {
                out.push(Outdated {
                    id: id.clone(),
                    installed: p.version.to_string(),
                    newest: newest.version.clone(),
                    index: index.name.clone(),
                });
            }
            break;
        }
    }
    Ok(out)
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
