//! Installed packs: the profile's own `packs/` folder. Installs unpack into a hidden
//! staging folder beside it, check the pack there, and only then move it into place, so
//! a refused or interrupted install leaves nothing behind.
//!
//! Replacing a pack is two renames: the old folder to `.old-ID`, the new one to `ID`.
//! Whatever point a crash or kill stops at, [`Store::recover`] (run before every
//! operation) finishes the change or takes it back: the old pack or the new one, never
//! neither or a mix.

use std::path::{Path, PathBuf};

use super::{PackError, archive};

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

const STAGING: &str = ".staging-";
const OLD: &str = ".old-";

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

    /// Finish or take back an install that a crash interrupted, and clear staging
    /// folders left behind. What it did, one line each.
    pub fn recover(&self) -> Vec<String> {
        let mut done = Vec::new();
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
                    done.push(format!("cleared an unfinished install ({name})"));
                }
            } else if let Some(id) = name.strip_prefix(OLD) {
                let live = self.root.join(id);
                if live.exists() {
                    // The new pack was in place: the change was complete.
                    if std::fs::remove_dir_all(&path).is_ok() {
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
        self.recover();
        std::fs::create_dir_all(&self.root)
            .map_err(|e| PackError::io(format!("make {}", crate::fsutil::shown(&self.root)), &e))?;
        let staging = tempfile::Builder::new()
            .prefix(STAGING)
            .tempdir_in(&self.root)
            .map_err(|e| PackError::io("make a staging folder", &e))?;
        let unpacked = staging.path().join("pack");
        std::fs::create_dir(&unpacked).map_err(|e| PackError::io("make a staging folder", &e))?;
        let meta = std::fs::symlink_metadata(source)
            .map_err(|e| PackError::io(format!("read {}", crate::fsutil::shown(source)), &e))?;
        let hash = if meta.is_dir() {
            copy_folder(source, &unpacked)?
        } else if meta.is_file() {
            archive::check(source)?.unpack(&unpacked)?
        } else {
            return Err(PackError::NotAFile {
                name: crate::fsutil::shown(source),
                kind: "neither a pack archive nor a pack folder".into(),
            });
        };
        let pack = super::manifest(&unpacked)?;
        let id = pack.id().to_string();
        if let Some(dir) = elsewhere(&id) {
            return Err(PackError::Refused(format!(
                "a pack '{id}' is in {} already, and pack ids must be unique: install it under another id",
                crate::fsutil::shown(&dir)
            )));
        }
        let target = self.root.join(&id);
        let old = self.root.join(format!("{OLD}{id}"));
        let replaced = if target.exists() {
            if !replace {
                return Err(PackError::Exists { id, dir: target });
            }
            let previous = super::manifest(&target)
                .map(|p| p.version.to_string())
                .unwrap_or_else(|_| "an unreadable version".into());
            std::fs::rename(&target, &old)
                .map_err(|e| PackError::io(format!("move the old '{id}' aside"), &e))?;
            Some(previous)
        } else {
            None
        };
        if let Err(e) = std::fs::rename(&unpacked, &target) {
            // Put the old version back; the staging folder goes with `staging`.
            if replaced.is_some() {
                let _ = std::fs::rename(&old, &target);
            }
            return Err(PackError::io(format!("move '{id}' into place"), &e));
        }
        if replaced.is_some() {
            let _ = std::fs::remove_dir_all(&old);
        }
        Ok(Installed {
            id,
            version: pack.version.to_string(),
            dir: target,
            hash,
            replaced,
        })
    }

    /// Move the installed pack `id` aside to `packs-removed/ID` (or `ID.2`, …): it stops
    /// loading, and nothing is deleted. Where it went.
    pub fn remove(&self, id: &str) -> Result<PathBuf, PackError> {
        self.recover();
        let dir = self.root.join(id);
        if !crate::content::discover::valid_id(id) || !dir.join("pack.yaml").is_file() {
            return Err(PackError::Unknown {
                id: id.to_string(),
                hint: crate::rules::nearest(id, self.ids().iter().map(String::as_str)),
            });
        }
        let removed = self.removed_root();
        std::fs::create_dir_all(&removed)
            .map_err(|e| PackError::io(format!("make {}", crate::fsutil::shown(&removed)), &e))?;
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
                PackError::io(format!("move '{id}' to {}", crate::fsutil::shown(&to)), &e)
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
/// checks as an archive; the content hash.
fn copy_folder(from: &Path, to: &Path) -> Result<String, PackError> {
    super::walk(from, |f, bytes| archive::write_new(&to.join(&f.rel), bytes)).map(|(hash, _)| hash)
}
