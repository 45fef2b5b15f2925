//! Pack sync: which of the host's packs the joiner has (same id, version and content
//! hash), and a cache in the profile for the ones it gets from the host.
//!
//! The cache (`PROFILE/lan-packs/HASH/ID/`) never mixes with the user's own packs: it is
//! not a pack folder the loader or the enabled set looks in, and a network game loads
//! exactly the host's list, each pack from the user's own copy when its hash matches and
//! from the cache otherwise.

use std::path::{Path, PathBuf};

use crate::content::{LoadOptions, PackFolder};
use crate::packs::{self, Folders, PackError};

use super::protocol::PackRef;

/// The joiner's cache of packs received from hosts.
#[derive(Clone, Debug)]
pub struct Cache {
    root: PathBuf,
}

/// The cache's folder in a profile.
pub const CACHE_FOLDER: &str = "lan-packs";

/// How one of the host's packs differs from what the joiner has.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Difference {
    /// The joiner has no pack with this id.
    Missing,
    /// The joiner has another version.
    OtherVersion {
        /// The joiner's version.
        local: String,
    },
    /// The same version with other content.
    OtherContent,
}

impl std::fmt::Display for Difference {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Difference::Missing => write!(f, "you do not have it"),
            Difference::OtherVersion { local } => write!(f, "you have version {local}"),
            Difference::OtherContent => {
                write!(f, "you have the same version with other content")
            }
        }
    }
}

/// One pack of the host's list, as the joiner stands with it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Standing {
    /// The host's pack.
    pub pack: PackRef,
    /// How the joiner's own copy differs (`None`: the same).
    pub difference: Option<Difference>,
    /// The folder the game would load it from: the joiner's own copy, or one received
    /// from a host earlier (`None`: it must be fetched).
    pub dir: Option<PathBuf>,
}

/// The joiner's standing with each of the host's packs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    /// In the host's load order.
    pub packs: Vec<Standing>,
}

impl Plan {
    /// The packs that differ from the joiner's own.
    pub fn differences(&self) -> impl Iterator<Item = &Standing> {
        self.packs.iter().filter(|s| s.difference.is_some())
    }

    /// The ids to fetch from the host.
    #[must_use]
    pub fn to_fetch(&self) -> Vec<String> {
        self.packs
            .iter()
            .filter(|s| s.dir.is_none())
            .map(|s| s.pack.id.clone())
            .collect()
    }

    /// A line per differing pack, for people.
    #[must_use]
    pub fn describe(&self) -> Vec<String> {
        self.differences()
            .map(|s| {
                let d = s
                    .difference
                    .as_ref()
                    .map(ToString::to_string)
                    .unwrap_or_default();
                let cached = if s.dir.is_some() {
                    " (a copy from an earlier game is ready)"
                } else {
                    ""
                };
                format!(
                    "{} {} ({}): {d}{cached}",
                    s.pack.id,
                    s.pack.version,
                    packs::short(&s.pack.hash)
                )
            })
            .collect()
    }

    /// The load options of the game: exactly the host's packs in the host's order, each
    /// from its folder. `None` while a pack is still to fetch.
    #[must_use]
    pub fn load_options(&self) -> Option<LoadOptions> {
        let mut folders = Vec::with_capacity(self.packs.len());
        for s in &self.packs {
            folders.push(PackFolder {
                path: s.dir.clone()?,
                required: true,
            });
        }
        Some(LoadOptions {
            folders,
            only: None,
            rules_patch: None,
            order: self.packs.iter().map(|s| s.pack.id.clone()).collect(),
        })
    }
}

/// Why a pack reference from a host is unusable, or `None`.
#[must_use]
pub fn bad_ref(r: &PackRef) -> Option<String> {
    if !crate::content::discover::valid_id(&r.id) {
        return Some(format!("'{}' is not a pack id", crate::rules::echo(&r.id)));
    }
    if semver::Version::parse(&r.version).is_err() {
        return Some(format!(
            "pack {}: '{}' is not a version",
            r.id,
            crate::rules::echo(&r.version)
        ));
    }
    if r.hash.len() != 64
        || !r
            .hash
            .bytes()
            .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    {
        return Some(format!("pack {}: the hash is not a SHA-256 in hex", r.id));
    }
    None
}

/// How the joiner stands with the host's `packs`: its own packs in `folders` first, then
/// the cache.
#[must_use]
pub fn plan(host: &[PackRef], folders: &Folders, cache: &Cache) -> Plan {
    let (found, _) = packs::set::find(folders);
    let packs = host
        .iter()
        .map(|r| {
            let mine: Vec<_> = found.iter().filter(|f| f.pack.id() == r.id).collect();
            let same = mine
                .iter()
                .find(|f| packs::hash(&f.pack.dir).is_ok_and(|h| h == r.hash));
            if let Some(f) = same {
                return Standing {
                    pack: r.clone(),
                    difference: None,
                    dir: Some(f.pack.dir.clone()),
                };
            }
            let difference = match mine.first() {
                None => Difference::Missing,
                Some(f) if f.pack.version.to_string() != r.version => Difference::OtherVersion {
                    local: f.pack.version.to_string(),
                },
                Some(_) => Difference::OtherContent,
            };
            Standing {
                pack: r.clone(),
                difference: Some(difference),
                dir: cache.get(r),
            }
        })
        .collect();
    Plan { packs }
}

impl Cache {
    /// The cache of the profile in `profile_dir`.
    #[must_use]
    pub fn new(profile_dir: &Path) -> Cache {
        Cache {
            root: profile_dir.join(CACHE_FOLDER),
        }
    }

    /// Its folder.
    #[must_use]
    pub fn root(&self) -> &Path {
        &self.root
    }

    fn dir(&self, r: &PackRef) -> Option<PathBuf> {
        bad_ref(r)
            .is_none()
            .then(|| self.root.join(&r.hash).join(&r.id))
    }

    /// The cached copy of `r`, if one is there and its content still has `r`'s hash.
    #[must_use]
    pub fn get(&self, r: &PackRef) -> Option<PathBuf> {
        let dir = self.dir(r)?;
        (dir.is_dir() && packs::hash(&dir).is_ok_and(|h| h == r.hash)).then_some(dir)
    }

    /// Check the archive `bytes` received for `r` under the install caps, unpack it
    /// beside the cache and move it in only when its content hash, id and version are
    /// the ones announced. Where it is.
    pub fn store(&self, r: &PackRef, bytes: Vec<u8>) -> Result<PathBuf, PackError> {
        if let Some(why) = bad_ref(r) {
            return Err(PackError::Refused(why));
        }
        let target = self
            .dir(r)
            .ok_or_else(|| PackError::Refused("bad pack".into()))?;
        let checked = packs::archive::check_bytes(bytes)?;
        std::fs::create_dir_all(&self.root)
            .map_err(|e| PackError::io(format!("make {}", crate::fsutil::shown(&self.root)), &e))?;
        let staging = tempfile::Builder::new()
            .prefix(".staging-")
            .tempdir_in(&self.root)
            .map_err(|e| PackError::io("make a staging folder", &e))?;
        let unpacked = staging.path().join("pack");
        std::fs::create_dir(&unpacked).map_err(|e| PackError::io("make a staging folder", &e))?;
        let hash = checked.unpack(&unpacked)?;
        if hash != r.hash {
            return Err(PackError::Refused(format!(
                "the host's archive of '{}' has content hash {}, not the {} it announced",
                r.id,
                packs::short(&hash),
                packs::short(&r.hash)
            )));
        }
        let pack = packs::manifest(&unpacked)?;
        if pack.id() != r.id || pack.version.to_string() != r.version {
            return Err(PackError::Refused(format!(
                "the host's archive holds {} {}, not the announced {} {}",
                pack.id(),
                pack.version,
                r.id,
                r.version
            )));
        }
        if self.get(r).is_some() {
            return Ok(target);
        }
        let parent = self.root.join(&r.hash);
        std::fs::create_dir_all(&parent)
            .map_err(|e| PackError::io(format!("make {}", crate::fsutil::shown(&parent)), &e))?;
        // A stale or damaged copy is replaced.
        if target.exists() {
            let _ = std::fs::remove_dir_all(&target);
        }
        std::fs::rename(&unpacked, &target)
            .map_err(|e| PackError::io(format!("move '{}' into the cache", r.id), &e))?;
        Ok(target)
    }
}
