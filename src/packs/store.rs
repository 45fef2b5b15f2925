//! Installed packs: the profile's own `packs/` folder. Installs unpack into a hidden
//! staging folder beside it, check the pack there, and only then move it into place, so
//! a refused or interrupted install leaves nothing behind.
//!
//! Replacing a pack is two renames: the old folder to `.old-ID`, the new one to `ID`.
//! Whatever point a crash or kill stops at, [`Store::recover`] (run before every
//! operation) finishes the change or takes it back: the old pack or the new one, never
//! neither or a mix.
//!
//! [`Store::install_expecting`] also holds the unpacked pack to an expected id, version and
//! content hash before it is placed. A replaced version is kept in `packs-previous/` for
//! [`Store::rollback`]; [`Store::remove`] moves a pack to `packs-removed/`, deleting nothing.
//! Every change holds the profile's exclusive lock.

use std::path::{Path, PathBuf};

use super::{PackError, archive};
use crate::fsutil::lock::{Access, ProfileLock};

/// The installed packs of one profile.
#[derive(Clone, Debug)]
pub struct Store {
    root: PathBuf,
}

/// What an install did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Installed {
    /// The pack's id.
    pub id: String,
    /// Its version.
    pub version: String,
    /// Where it is now.
    pub dir: PathBuf,
    /// Its content hash.
    pub hash: String,
    /// The version it replaced, if it replaced one.
    pub replaced: Option<String>,
}

/// What an install must turn out to be, checked in the staging folder before anything is
/// moved into place: an index install passes its signed entry's id, version and content
/// hash, so no archive can install a pack other than the one that was signed.
#[derive(Clone, Debug)]
pub struct Expected<'a> {
    /// The pack id.
    pub id: &'a str,
    /// The version.
    pub version: &'a semver::Version,
    /// The content hash.
    pub hash: &'a str,
}

const STAGING: &str = ".staging-";
const OLD: &str = ".old-";

/// Refuse a folder of packs (such as `mods/`) given to install as if it were one pack,
/// naming the packs it holds and how to install one. A folder with a `pack.yaml` (or
/// with no pack in it at all, which the manifest check reports) passes.
fn refuse_folder_of_packs(source: &Path) -> Result<(), PackError> {
    if source.join("pack.yaml").exists() {
        return Ok(());
    }
    let mut diags = crate::content::diagnostic::Diagnostics::default();
    let found = crate::content::discover::discover(
        &[crate::content::PackFolder {
            path: source.to_path_buf(),
            required: true,
        }],
        &mut diags,
    );
    let Some(first) = found.packs.first() else {
        return Ok(());
    };
    let names: Vec<String> = found
        .packs
        .iter()
        .map(|p| format!("{} ({})", p.id(), crate::fsutil::shown(&p.dir)))
        .collect();
    Err(PackError::Refused(format!(
        "{} is a folder of packs, not a pack (it has no pack.yaml); it holds {}: install them one at a time, e.g. `tokensmith pack install {}`",
        crate::fsutil::shown(source),
        names.join(", "),
        crate::fsutil::shown(&first.dir)
    )))
}

impl Store {
    /// The store of the profile in `profile_dir` (`PROFILE/packs`).
    #[must_use]
    pub fn new(profile_dir: &Path) -> Store {
        Store {
            root: profile_dir.join("packs"),
        }
    }

    /// The folder installed packs live in.
    #[must_use]
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Where removed packs are moved (`PROFILE/packs-removed`).
    #[must_use]
    pub fn removed_root(&self) -> PathBuf {
        self.root.with_file_name("packs-removed")
    }

    /// Where the version an update or a replace took out is kept, one per pack
    /// (`PROFILE/packs-previous/ID`), for [`Store::rollback`].
    #[must_use]
    pub fn previous_root(&self) -> PathBuf {
        self.root.with_file_name("packs-previous")
    }

    /// The profile folder this store belongs to.
    fn profile(&self) -> &Path {
        self.root.parent().unwrap_or(Path::new("."))
    }

    /// Lock the profile for a change, and check that `packs/` (and `packs-removed/`) are
    /// real folders, not links out of the profile.
    fn lock_for_change(&self) -> Result<ProfileLock, PackError> {
        let lock = ProfileLock::acquire(self.profile(), Access::Write)
            .map_err(|e| PackError::Refused(e.to_string()))?;
        crate::fsutil::check_profile_dir(&self.root)?;
        crate::fsutil::check_profile_dir(&self.removed_root())?;
        crate::fsutil::check_profile_dir(&self.previous_root())?;
        Ok(lock)
    }

    /// Finish or take back an install that a crash interrupted, and clear staging
    /// folders left behind. What it did, one line each. Done only when no other process
    /// holds the profile (its staging folder may be in use): then nothing is done.
    pub fn recover(&self) -> Vec<String> {
        if !self.root.exists() {
            return Vec::new();
        }
        match ProfileLock::try_write(self.profile()) {
            Ok(Some(_lock)) => self.recover_locked(),
            _ => Vec::new(),
        }
    }

    /// [`Store::recover`], the profile locked for writing by the caller.
    fn recover_locked(&self) -> Vec<String> {
        let mut done = Vec::new();
        if crate::fsutil::check_profile_dir(&self.root).is_err() {
            return done;
        }
        let Ok(entries) = std::fs::read_dir(&self.root) else {
            return done;
        };
        for entry in entries.filter_map(Result::ok) {
            let Some(name) = entry.file_name().to_str().map(str::to_string) else {
                continue;
            };
            let path = entry.path();
            if name.starts_with(STAGING) && crate::fsutil::is_real_dir(&path) {
                if std::fs::remove_dir_all(&path).is_ok() {
                    done.push("cleared an unfinished install".to_string());
                }
            } else if let Some(id) = name.strip_prefix(OLD) {
                let live = self.root.join(id);
                if live.exists() || crate::fsutil::is_link(&live) {
                    // The new pack was in place: the change was complete.
                    if self.keep_previous(id, &path).is_ok() {
                        done.push(format!("finished replacing pack '{id}'"));
                    }
                } else if std::fs::rename(&path, &live).is_ok() {
                    done.push(format!(
                        "an interrupted replace of pack '{id}' was taken back; the old version is kept"
                    ));
                }
            }
        }
        done
    }

    /// The ids of the installed packs (folders with a `pack.yaml`), sorted.
    #[must_use]
    pub fn ids(&self) -> Vec<String> {
        let Ok(entries) = std::fs::read_dir(&self.root) else {
            return Vec::new();
        };
        let mut ids: Vec<String> = entries
            .filter_map(Result::ok)
            .filter_map(|e| e.file_name().to_str().map(str::to_string))
            .filter(|n| !n.starts_with('.') && crate::content::discover::valid_id(n))
            .filter(|n| self.root.join(n).join("pack.yaml").is_file())
            .collect();
        ids.sort();
        ids
    }

    /// Install the pack archive or pack folder at `source`. Refused (nothing changed)
    /// when it fails a check, its manifest does not validate, a pack with its id is
    /// installed and `replace` is false, or `elsewhere` says a pack outside the store has
    /// its id (base content or `mods/`: the id would be found twice).
    pub fn install(
        &self,
        source: &Path,
        replace: bool,
        elsewhere: impl Fn(&str) -> Option<PathBuf>,
    ) -> Result<Installed, PackError> {
        self.install_expecting(source, replace, elsewhere, None)
    }

    /// [`Store::install`], refused (nothing changed) unless the unpacked pack is
    /// `expected`'s id, version and content hash, checked before it is moved into place.
    pub fn install_expecting(
        &self,
        source: &Path,
        replace: bool,
        elsewhere: impl Fn(&str) -> Option<PathBuf>,
        expected: Option<&Expected<'_>>,
    ) -> Result<Installed, PackError> {
        let source_shown = crate::fsutil::shown(source);
        let _lock = self.lock_for_change()?;
        self.recover_locked();
        crate::fsutil::make_profile_dir(&self.root)?;
        let staging = tempfile::Builder::new()
            .prefix(STAGING)
            .tempdir_in(&self.root)
            .map_err(|e| PackError::from_io("make a staging folder", e))?;
        let unpacked = staging.path().join("pack");
        std::fs::create_dir(&unpacked)
            .map_err(|e| PackError::from_io("make a staging folder", e))?;
        // Messages name the archive's entries, never the random staging folder.
        let unstage = |e: PackError| unstaged(e, &unpacked, &source_shown);
        let meta = std::fs::symlink_metadata(source)
            .map_err(|e| PackError::from_io(format!("read {source_shown}"), e))?;
        let hash = if meta.is_dir() {
            refuse_folder_of_packs(source)?;
            copy_folder(source, &unpacked).map_err(unstage)?
        } else if meta.is_file() {
            archive::check(source)?.unpack(&unpacked).map_err(unstage)?
        } else {
            return Err(PackError::NotAFile {
                name: source_shown,
                kind: "neither a pack archive nor a pack folder".into(),
            });
        };
        let pack = super::manifest(&unpacked).map_err(unstage)?;
        let id = pack.id().to_string();
        if id.len() > super::MAX_ID_BYTES {
            return Err(PackError::Refused(format!(
                "the pack's id '{id}' is {} bytes; an installed pack's id may have at most {} (its folder, its backup while replaced and its removed copy must all fit a file name)",
                id.len(),
                super::MAX_ID_BYTES
            )));
        }
        if let Some(want) = expected
            && (id != want.id || pack.version != *want.version || hash != want.hash)
        {
            return Err(PackError::Refused(format!(
                "the archive holds {id} {} (content hash {}), not the {} {} (content hash {}) it was checked as; nothing was installed",
                pack.version,
                super::short(&hash),
                want.id,
                want.version,
                super::short(want.hash)
            )));
        }
        if let Some(dir) = elsewhere(&id) {
            return Err(PackError::Refused(format!(
                "a pack '{id}' is in {} already, and pack ids must be unique: install it under another id",
                crate::fsutil::shown(&dir)
            )));
        }
        let target = self.root.join(&id);
        let old = self.root.join(format!("{OLD}{id}"));
        let present = target.exists() || crate::fsutil::is_link(&target);
        let replaced = if present {
            if !replace {
                return Err(PackError::Exists { id, dir: target });
            }
            let previous = super::manifest(&target)
                .map(|p| p.version.to_string())
                .unwrap_or_else(|_| "an unreadable version".into());
            std::fs::rename(&target, &old)
                .map_err(|e| PackError::from_io(format!("move the old '{id}' aside"), e))?;
            Some(previous)
        } else {
            None
        };
        let placed = std::fs::rename(&unpacked, &target)
            .map_err(|e| PackError::from_io(format!("move '{id}' into place"), e))
            .and_then(|()| {
                crate::fsutil::sync_dir(&self.root).map_err(|e| {
                    PackError::from_io(format!("flush {}", crate::fsutil::shown(&self.root)), e)
                })
            })
            .and_then(|()| {
                // A success is reported only when every file is in place, as unpacked.
                match super::hash(&target) {
                    Ok(h) if h == hash => Ok(()),
                    Ok(_) => Err(PackError::Refused(format!(
                        "'{id}' changed while it was moved into place; the install is taken back"
                    ))),
                    Err(e) => Err(e),
                }
            });
        if let Err(e) = placed {
            // Take the new copy out and put the old version back.
            if target.exists() && !crate::fsutil::is_link(&target) {
                let _ = std::fs::rename(&target, &unpacked);
            }
            if replaced.is_some() {
                let _ = std::fs::rename(&old, &target);
            }
            let _ = crate::fsutil::sync_dir(&self.root);
            return Err(e);
        }
        if replaced.is_some() {
            // Kept for `pack rollback`; when that fails the old copy stays as `.old-ID`,
            // which the next recovery finishes.
            let _ = self.keep_previous(&id, &old);
        }
        Ok(Installed {
            id,
            version: pack.version.to_string(),
            dir: target,
            hash,
            replaced,
        })
    }

    /// Keep the pack folder `old` (the version a replace took out) as the previous
    /// version of `id`, in place of any kept before. The caller holds the lock.
    fn keep_previous(&self, id: &str, old: &Path) -> std::io::Result<()> {
        let root = self.previous_root();
        crate::fsutil::make_profile_dir(&root).map_err(std::io::Error::other)?;
        let to = root.join(id);
        if to.exists() || crate::fsutil::is_link(&to) {
            // The older one goes first; a crash here leaves `.old-ID` for recovery.
            if crate::fsutil::is_link(&to) {
                std::fs::remove_file(&to)?;
            } else {
                std::fs::remove_dir_all(&to)?;
            }
        }
        std::fs::rename(old, &to)?;
        crate::fsutil::sync_dir(&root)
    }

    /// The version of `id` kept by its last update or replace, if one is kept.
    #[must_use]
    pub fn previous(&self, id: &str) -> Option<semver::Version> {
        if !crate::content::discover::valid_id(id) {
            return None;
        }
        let dir = self.previous_root().join(id);
        if !crate::fsutil::is_real_dir(&dir) {
            return None;
        }
        super::manifest(&dir).ok().map(|p| p.version)
    }

    /// Put the version of `id` kept by its last update back in place, keeping the one it
    /// replaces as the previous version in turn (a second rollback undoes the first).
    /// Three renames under the profile lock; a crash between them is finished or taken
    /// back by [`Store::recover`]. The versions (from, to).
    pub fn rollback(&self, id: &str) -> Result<(String, String), PackError> {
        let _lock = self.lock_for_change()?;
        self.recover_locked();
        let live = self.root.join(id);
        if !crate::content::discover::valid_id(id) || !live.join("pack.yaml").is_file() {
            return Err(PackError::Unknown {
                id: id.to_string(),
                hint: crate::rules::nearest(id, self.ids().iter().map(String::as_str)),
            });
        }
        let kept = self.previous_root().join(id);
        if !crate::fsutil::is_real_dir(&kept) || !kept.join("pack.yaml").is_file() {
            return Err(PackError::Refused(format!(
                "no earlier version of '{id}' is kept: one is kept when an update or `pack install --replace` replaces a version (`tokensmith pack install {id}@=VERSION` installs any version an index has)"
            )));
        }
        let back = super::manifest(&kept)?;
        if back.id() != id {
            return Err(PackError::Refused(format!(
                "{} holds the pack '{}', not '{id}'; nothing was changed",
                crate::fsutil::shown(&kept),
                back.id()
            )));
        }
        let now = super::manifest(&live)
            .map(|p| p.version.to_string())
            .unwrap_or_else(|_| "an unreadable version".into());
        let old = self.root.join(format!("{OLD}{id}"));
        std::fs::rename(&live, &old)
            .map_err(|e| PackError::from_io(format!("move '{id}' aside"), e))?;
        if let Err(e) = std::fs::rename(&kept, &live) {
            let _ = std::fs::rename(&old, &live);
            return Err(PackError::from_io(
                format!("move the kept version of '{id}' into place"),
                e,
            ));
        }
        crate::fsutil::sync_dir(&self.root).map_err(|e| {
            PackError::from_io(format!("flush {}", crate::fsutil::shown(&self.root)), e)
        })?;
        self.keep_previous(id, &old).map_err(|e| {
            PackError::from_io(format!("keep {id} {now} as the previous version"), e)
        })?;
        Ok((now, back.version.to_string()))
    }

    /// Move the installed pack `id` aside to `packs-removed/ID` (or `ID.2`, …): it stops
    /// loading, and nothing is deleted. Where it went.
    pub fn remove(&self, id: &str) -> Result<PathBuf, PackError> {
        let _lock = self.lock_for_change()?;
        self.recover_locked();
        let dir = self.root.join(id);
        if !crate::content::discover::valid_id(id) || !dir.join("pack.yaml").is_file() {
            return Err(PackError::Unknown {
                id: id.to_string(),
                hint: crate::rules::nearest(id, self.ids().iter().map(String::as_str)),
            });
        }
        let removed = self.removed_root();
        crate::fsutil::make_profile_dir(&removed)?;
        for n in 1..10_000 {
            let to = if n == 1 {
                removed.join(id)
            } else {
                removed.join(format!("{id}.{n}"))
            };
            if to.exists() || crate::fsutil::is_link(&to) {
                continue;
            }
            std::fs::rename(&dir, &to).map_err(|e| {
                PackError::from_io(format!("move '{id}' to {}", crate::fsutil::shown(&to)), e)
            })?;
            return Ok(to);
        }
        Err(PackError::Refused(format!(
            "no free name in {} to move '{id}' to",
            crate::fsutil::shown(&removed)
        )))
    }
}

/// Copy the pack folder `from` into the empty folder `to`, file by file under the same
/// checks as an archive, all flushed to disk at once; the content hash.
fn copy_folder(from: &Path, to: &Path) -> Result<String, PackError> {
    let mut written = Vec::new();
    let (hash, _) = super::walk(from, |f, bytes| {
        let path = to.join(&f.rel);
        archive::write_new(&path, &f.rel, bytes)?;
        written.push(path);
        Ok(())
    })?;
    crate::fsutil::sync_tree(to, &written)
        .map_err(|e| PackError::from_io("flush the copied files to disk", e))?;
    Ok(hash)
}

/// `e` with the staging folder `unpacked` in its text replaced by the source's name, so
/// the message is the same on every run and names the archive's entries.
fn unstaged(e: PackError, unpacked: &Path, source: &str) -> PackError {
    let staged = crate::fsutil::shown(unpacked);
    let fix = |t: &str| t.replace(&staged, source);
    match e {
        PackError::Manifest(lines) => PackError::Manifest(lines.iter().map(|l| fix(l)).collect()),
        PackError::Invalid(lines) => PackError::Invalid(lines.iter().map(|l| fix(l)).collect()),
        PackError::Refused(t) => PackError::Refused(fix(&t)),
        PackError::BadArchive(t) => PackError::BadArchive(fix(&t)),
        PackError::TooBig { what } => PackError::TooBig { what: fix(&what) },
        PackError::Io { doing, source } => PackError::Io {
            doing: fix(&doing),
            source,
        },
        PackError::Zip { doing, source } => PackError::Zip {
            doing: fix(&doing),
            source,
        },
        PackError::BadName { name, reason } => PackError::BadName {
            name: fix(&name),
            reason: fix(&reason),
        },
        PackError::NotAFile { name, kind } => PackError::NotAFile {
            name: fix(&name),
            kind: fix(&kind),
        },
        other => other,
    }
}
