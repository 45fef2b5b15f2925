//! "Get what this needs": the packs a saved game (or a scenario) names with their content
//! hashes, found here or in the indexes *by content hash*, so a replay shared by another
//! player runs in a profile that lacks its packs (`replay FILE --sync`, `scenario FILE
//! --sync`, the client's Replays screen).
//!
//! What [`plan`] returns is fetched and installed with the same steps as `pack install`
//! ([`player::fetch`], [`player::install`]): each entry's signature is checked as it is
//! chosen, the key against the one pinned for the pack, the archive's size, SHA-256 and
//! manifest against the signed entry, and the unpacked pack's content hash against the
//! one named. Where they go (a temporary profile, or the player's own) is the caller's.
//!
//! The list of packs comes from a file someone sent: it is capped in count, every id,
//! version and hash is checked, an id named twice is refused, and a hash no index has is
//! refused (never replaced by "the nearest version").
//!
//! Must not: pick a pack by id or version alone when a hash is named, or change anything.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use super::{IndexError, keys, player};
use crate::content::{LoadOptions, PackFolder};
use crate::fsutil::lock::{Access, ProfileLock};
use crate::packs::{Folders, PackSet, PackSource, Store};

/// The most packs one file may name for a sync.
pub const MAX_NEEDED: usize = player::MAX_PLAN_PACKS;

/// A pack a file names: its id, and the version and content hash it was played with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Needed {
    /// Its id.
    pub id: String,
    /// Its version, when the file names one.
    pub version: Option<String>,
    /// Its content hash (64 hex digits), when the file names one.
    pub hash: Option<String>,
}

impl Needed {
    /// The packs a replay was played with, each at its version and content hash.
    #[must_use]
    pub fn of_replay(replay: &crate::replay::Replay) -> Vec<Needed> {
        replay
            .packs
            .iter()
            .map(|p| Needed {
                id: p.id.clone(),
                version: Some(p.version.clone()),
                hash: p.hash.clone(),
            })
            .collect()
    }
}

/// What getting a file's packs takes.
#[derive(Debug, Default)]
pub struct NeedsPlan {
    /// The packs to fetch from the indexes, in the file's order (requirements first).
    pub install: player::InstallPlan,
    /// The installed packs of the profile that are there already at the hash named
    /// (their folders): a temporary set plays them where they are.
    pub here: Vec<(String, PathBuf)>,
    /// What the plan noticed, in words (a base pack at another hash, a yanked version).
    pub notes: Vec<String>,
}

impl NeedsPlan {
    /// The plan in words, a line a step.
    #[must_use]
    pub fn lines(&self) -> Vec<String> {
        let mut out = self.install.lines();
        out.extend(
            self.here
                .iter()
                .map(|(id, _)| format!("{id}: installed already, at the content hash named")),
        );
        out.extend(self.notes.iter().map(|n| format!("note: {n}")));
        out
    }

    /// The ids to fetch.
    #[must_use]
    pub fn fetched_ids(&self) -> Vec<String> {
        self.install.steps.iter().map(|s| s.id.clone()).collect()
    }
}

fn refused(why: String) -> IndexError {
    IndexError::Refused(why)
}

/// Check the packs a file names (`what` names the file): at most [`MAX_NEEDED`], each id
/// a pack id, each version a version, each hash 64 hex digits, no id twice.
pub fn check(needed: &[Needed], what: &str) -> Result<(), IndexError> {
    let bad = |reason: String| IndexError::Bad {
        what: what.to_string(),
        reason,
    };
    if needed.len() > MAX_NEEDED {
        return Err(bad(format!(
            "it names {} packs; at most {MAX_NEEDED} are fetched for one file",
            needed.len()
        )));
    }
    let mut ids = BTreeSet::new();
    for n in needed {
        super::check_id(&n.id).map_err(|e| bad(e.to_string()))?;
        if !ids.insert(n.id.as_str()) {
            return Err(bad(format!("it names the pack '{}' twice", n.id)));
        }
        if let Some(v) = &n.version {
            semver::Version::parse(v)
                .map_err(|e| bad(format!("'{}': version '{}': {e}", n.id, super::clean(v))))?;
        }
        if let Some(h) = &n.hash
            && super::from_hex::<32>(h).is_none()
        {
            return Err(bad(format!(
                "'{}': its content hash '{}' is not 64 hex digits",
                n.id,
                super::clean(h.get(..h.len().min(80)).unwrap_or_default())
            )));
        }
    }
    Ok(())
}

/// Plan getting the packs of `needed` that `folders` lack at their hash: each from the
/// first index (of `indexes`, in the profile's order) with an entry of that id and
/// content hash, its signature checked. A pack whose hash no index has, or that the file
/// names without a hash, is refused; a base or `mods/` pack at another hash is played as
/// it is, with a note. With `replace`, a fetched pack replaces the installed one of its id
/// (the player keeps what is fetched); without, it goes beside it in a temporary set.
/// A fetched pack's requirements must be among `needed` or here. Nothing is changed.
pub fn plan(
    indexes: &[player::Opened],
    folders: &Folders,
    needed: &[Needed],
    replace: bool,
) -> Result<NeedsPlan, IndexError> {
    check(needed, "the file")?;
    let (found, _) = crate::packs::set::find(folders);
    let mut here: BTreeMap<&str, &crate::packs::set::Found> = BTreeMap::new();
    for f in &found {
        here.entry(f.pack.id()).or_insert(f);
    }
    let mut out = NeedsPlan::default();
    let mut reads = 0usize;
    for n in needed {
        let present = here.get(n.id.as_str()).copied();
        let version_ok = |f: &crate::packs::set::Found| {
            n.version
                .as_deref()
                .is_none_or(|v| f.pack.version.to_string() == v)
        };
        let same = present.is_some_and(|f| {
            version_ok(f)
                && n.hash
                    .as_deref()
                    .is_none_or(|h| crate::packs::hash(&f.pack.dir).is_ok_and(|got| got == h))
        });
        match present {
            Some(f) if same => {
                if f.source == PackSource::Installed {
                    out.here.push((n.id.clone(), f.pack.dir.clone()));
                }
                continue;
            }
            Some(f) if f.source != PackSource::Installed => {
                out.notes.push(format!(
                    "{} is in {} at version {} with other content than the file names ({}): it plays as it is (packs there are not fetched from indexes)",
                    n.id,
                    if f.source == PackSource::Base {
                        "the base content"
                    } else {
                        "the mods folder"
                    },
                    f.pack.version,
                    n.version.as_deref().unwrap_or("no version named")
                ));
                continue;
            }
            _ => {}
        }
        let Some(hash) = &n.hash else {
            return Err(refused(format!(
                "the file names '{}' {} without a content hash, so it cannot be fetched by hash: install it yourself (`tokensmith pack install {}`)",
                n.id,
                n.version.as_deref().unwrap_or(""),
                n.id
            )));
        };
        let mut seen = Vec::new();
        let mut chosen = None;
        for index in indexes {
            reads += 1;
            if reads > player::MAX_PLAN_READS {
                return Err(refused(format!(
                    "looking up the packs read more than {} pack files (at '{}')",
                    player::MAX_PLAN_READS,
                    n.id
                )));
            }
            let Some(file) = index.pack(&n.id)? else {
                continue;
            };
            match file.versions.iter().find(|e| e.hash == *hash) {
                Some(e) => {
                    chosen = Some((index, e.clone()));
                    break;
                }
                None => seen.push(format!(
                    "'{}' has {}",
                    index.name,
                    file.versions
                        .iter()
                        .map(|e| format!("{} ({})", e.version, crate::packs::short(&e.hash)))
                        .collect::<Vec<_>>()
                        .join(", ")
                )),
            }
        }
        let Some((index, entry)) = chosen else {
            return Err(refused(if seen.is_empty() {
                format!(
                    "no index lists the pack '{}' (the file needs content hash {})",
                    n.id,
                    crate::packs::short(hash)
                )
            } else {
                format!(
                    "no index has '{}' with content hash {} (the version the file was played with): {}",
                    n.id,
                    crate::packs::short(hash),
                    seen.join("; ")
                )
            }));
        };
        if let Some(v) = &n.version
            && entry.version != *v
        {
            return Err(refused(format!(
                "the index '{}' lists the content hash {} of '{}' as version {}, not the {v} the file names",
                index.name,
                crate::packs::short(hash),
                n.id,
                entry.version
            )));
        }
        let key = index.check_entry(&n.id, &entry)?;
        if entry.yanked {
            out.notes.push(format!(
                "{} {} is yanked in '{}': fetched anyway, because the file was played with it",
                n.id, entry.version, index.name
            ));
        }
        let replaces = if replace {
            present.map(|f| f.pack.version.clone())
        } else {
            None
        };
        out.install.steps.push(player::PlannedPack {
            id: n.id.clone(),
            entry,
            index: index.clone(),
            required_by: None,
            replaces,
            key,
        });
    }
    // What a fetched pack requires must come with it, or be here.
    let mut extra: Vec<(String, PathBuf)> = Vec::new();
    for step in &out.install.steps {
        for r in &step.entry.requires {
            let want = semver::VersionReq::parse(&r.version).map_err(|e| {
                refused(format!(
                    "{} {}: requirement of '{}': {e}",
                    step.id, step.entry.version, r.id
                ))
            })?;
            let fetched = out
                .install
                .steps
                .iter()
                .find(|s| s.id == r.id)
                .map(|s| s.entry.semver());
            let present = here
                .get(r.id.as_str())
                .filter(|f| want.matches(&f.pack.version));
            let met = match (fetched, present) {
                (Some(v), _) => want.matches(&v),
                (None, Some(f)) => {
                    // An installed requirement the file does not name plays from where
                    // it is (the base content and `mods/` always do).
                    let named = needed.iter().any(|n| n.id == r.id);
                    if f.source == PackSource::Installed
                        && !named
                        && !out.here.iter().any(|(id, _)| *id == r.id)
                    {
                        extra.push((r.id.clone(), f.pack.dir.clone()));
                    }
                    true
                }
                (None, None) => false,
            };
            if !met {
                return Err(refused(format!(
                    "{} {} requires {} {}, which the file does not name at a matching version and this profile does not have",
                    step.id, step.entry.version, r.id, r.version
                )));
            }
        }
    }
    extra.sort();
    extra.dedup();
    out.here.extend(extra);
    Ok(out)
}

/// The packs a file needs, got: the folders to play them from. Holds the temporary set
/// (if one was made) for as long as it is kept.
#[derive(Debug)]
pub struct Gotten {
    /// Folders besides the base content and `mods/` that hold the file's packs: the
    /// temporary set's, and the profile's installed packs that were there already (or,
    /// when kept, the profile's installed-packs folder).
    pub folders: Vec<PackFolder>,
    /// The ids the file names.
    pub ids: Vec<String>,
    _temp: Option<tempfile::TempDir>,
}

impl Gotten {
    /// The load options of the base content and the file's packs (with what they
    /// require): from the base content and `mods/` of `folders`, and the sets got.
    #[must_use]
    pub fn load_options(&self, folders: &Folders) -> LoadOptions {
        let outside = Folders {
            installed: None,
            ..folders.clone()
        };
        let probe = crate::packs::set::load_options(
            &outside,
            &crate::packs::Selection::Set(PackSet::only(&self.ids)),
        );
        let mut options = probe;
        let mut only = options.only.take().unwrap_or_default();
        only.extend(self.ids.iter().cloned());
        only.sort();
        only.dedup();
        options.folders.extend(self.folders.iter().cloned());
        options.only = Some(only);
        options.order = Vec::new();
        options
    }
}

fn refusal(e: impl std::fmt::Display) -> IndexError {
    IndexError::Refused(e.to_string())
}

/// Get the packs `needed` that the profile at `profile` (its pack folders `folders`)
/// lacks at their content hash, from its indexes, checked as `pack install` checks
/// them. `say` is told the plan before anything is fetched, then what was installed; a
/// refusal at any step before the installs changes nothing. Without `keep` they go into
/// a temporary set that lives as long as the [`Gotten`] (the player's packs, enabled set
/// and pins are untouched); with it, into the profile, and the file's packs are enabled.
pub fn get(
    profile: &Path,
    folders: &Folders,
    needed: &[Needed],
    keep: bool,
    say: &mut dyn FnMut(String),
) -> Result<Gotten, IndexError> {
    check(needed, "the file")?;
    let store = Store::new(profile);
    for line in store.recover() {
        say(format!("note: {line}"));
    }
    let (indexes, notes) = player::open_all(profile).unwrap_or_default();
    for n in notes {
        say(format!("note: {n}"));
    }
    let plan = plan(&indexes, folders, needed, keep)?;
    if plan.install.steps.is_empty() {
        say("every pack it names is here".into());
    }
    for line in plan.lines() {
        say(line);
    }
    let pins = keys::Pins::open(profile)?;
    let archives = tempfile::tempdir()
        .map_err(|e| IndexError::io("make a temporary folder for the archives", e))?;
    let fetched = player::fetch(&plan.install, &pins, false, archives.path())?;
    let ids: Vec<String> = needed.iter().map(|n| n.id.clone()).collect();
    if keep {
        for line in player::install(profile, &store, &fetched, folders, false)? {
            say(line);
        }
        let _lock = ProfileLock::acquire(profile, Access::Write).map_err(refusal)?;
        let mut set = PackSet::open(profile);
        let (found, _) = crate::packs::set::find(folders);
        let mut enabled = Vec::new();
        for id in &ids {
            let outside_base = found
                .iter()
                .find(|f| f.pack.id() == id)
                .is_some_and(|f| f.source != PackSource::Base);
            if outside_base && !set.is_enabled(id) {
                crate::packs::set::enable(&mut set, folders, id).map_err(refusal)?;
                enabled.push(id.clone());
            }
        }
        set.save().map_err(refusal)?;
        say(format!(
            "kept: the packs fetched stay installed{}",
            if enabled.is_empty() {
                String::new()
            } else {
                format!(", and {} are enabled in your set", enabled.join(", "))
            }
        ));
        return Ok(Gotten {
            folders: folders
                .installed
                .iter()
                .map(|p| PackFolder {
                    path: p.clone(),
                    required: false,
                })
                .collect(),
            ids,
            _temp: None,
        });
    }
    let temp = tempfile::tempdir()
        .map_err(|e| IndexError::io("make a temporary folder for the packs", e))?;
    let temp_store = Store::new(temp.path());
    let temp_folders = Folders {
        installed: Some(temp_store.root().to_path_buf()),
        ..folders.clone()
    };
    if !fetched.is_empty() {
        for line in player::install(temp.path(), &temp_store, &fetched, &temp_folders, false)? {
            say(format!("{line} (for this run)"));
        }
        say(
            "your own packs and enabled set are unchanged (--keep would keep what was fetched)"
                .into(),
        );
    }
    let mut extra = vec![PackFolder {
        path: temp_store.root().to_path_buf(),
        required: false,
    }];
    extra.extend(plan.here.iter().map(|(_, d)| PackFolder {
        path: d.clone(),
        required: true,
    }));
    Ok(Gotten {
        folders: extra,
        ids,
        _temp: Some(temp),
    })
}
