//! Pack sync: which of the host's packs the joiner has (same id, version and content
//! hash), and a cache in the profile for the ones it gets from the host.
//!
//! The cache (`PROFILE/lan-packs/HASH/ID/`) never mixes with the user's own packs: it is
//! not a pack folder the loader or the enabled set looks in, and a network game loads
//! exactly the host's list, each pack from the user's own copy when its hash matches and
//! from the cache otherwise.
//!
//! The cache is held to a [`Quota`] (bytes and entries, [`Quota::DEFAULT`]): after each
//! fetch the least recently used entries that the game does not need are removed until
//! it fits, a game whose packs alone exceed it is refused, and packs that fail to load
//! are removed (`tokensmith pack cache` lists and clears it). Each entry's
//! `HASH/used` file holds its size; its modification time is the entry's last use.

use std::path::{Path, PathBuf};

use crate::content::{LoadOptions, PackFolder};
use crate::packs::{self, Folders, PackError};

use super::protocol::PackRef;

/// The joiner's cache of packs received from hosts.
#[derive(Clone, Debug)]
pub struct Cache {
    root: PathBuf,
    quota: Quota,
}

/// How much the pack cache may hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Quota {
    /// Most bytes of unpacked pack files.
    pub bytes: u64,
    /// Most packs.
    pub entries: usize,
}

impl Quota {
    /// 256 MiB and 64 packs.
    pub const DEFAULT: Quota = Quota {
        bytes: 256 * 1024 * 1024,
        entries: 64,
    };
}

/// One pack in the cache.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// Its content hash (the entry's folder name).
    pub hash: String,
    /// Its id.
    pub id: String,
    /// Its version, from its manifest (`None` when the manifest cannot be read).
    pub version: Option<String>,
    /// Bytes of its files.
    pub bytes: u64,
    /// When a game last used it (or it arrived).
    pub used: std::time::SystemTime,
    /// Its pack folder.
    pub dir: PathBuf,
}

/// The file in each entry's folder that holds its size and, as its modification time,
/// its last use.
const USED: &str = "used";

/// A staging folder older than this is left from a process that stopped half-way.
const STALE_STAGING: std::time::Duration = std::time::Duration::from_secs(3600);

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

    /// The packs the game loads from `cache` (not the joiner's own).
    #[must_use]
    pub fn cached<'a>(&'a self, cache: &Cache) -> Vec<&'a PackRef> {
        self.packs
            .iter()
            .filter(|s| s.dir.as_ref().is_some_and(|d| d.starts_with(cache.root())))
            .map(|s| &s.pack)
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
            let dir = cache.get(r);
            if dir.is_some() {
                cache.touch(r);
            }
            Standing {
                pack: r.clone(),
                difference: Some(difference),
                dir,
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
            quota: Quota::DEFAULT,
        }
    }

    /// This cache held to `quota` instead.
    #[must_use]
    pub fn with_quota(mut self, quota: Quota) -> Cache {
        self.quota = quota;
        self
    }

    /// Its quota.
    #[must_use]
    pub fn quota(&self) -> Quota {
        self.quota
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
        std::fs::create_dir_all(&self.root).map_err(|e| {
            PackError::from_io(format!("make {}", crate::fsutil::shown(&self.root)), e)
        })?;
        let staging = tempfile::Builder::new()
            .prefix(".staging-")
            .tempdir_in(&self.root)
            .map_err(|e| PackError::from_io("make a staging folder", e))?;
        let unpacked = staging.path().join("pack");
        std::fs::create_dir(&unpacked)
            .map_err(|e| PackError::from_io("make a staging folder", e))?;
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
        std::fs::create_dir_all(&parent).map_err(|e| {
            PackError::from_io(format!("make {}", crate::fsutil::shown(&parent)), e)
        })?;
        // A stale or damaged copy is replaced.
        if target.exists() {
            let _ = std::fs::remove_dir_all(&target);
        }
        std::fs::rename(&unpacked, &target)
            .map_err(|e| PackError::from_io(format!("move '{}' into the cache", r.id), e))?;
        let bytes = folder_bytes(&target);
        // The size is what the quota counts; a failed write leaves the entry to be
        // measured again when listed.
        let _ = std::fs::write(parent.join(USED), bytes.to_string());
        Ok(target)
    }

    /// Mark `r`'s entry as used now.
    pub fn touch(&self, r: &PackRef) {
        if bad_ref(r).is_some() {
            return;
        }
        let used = self.root.join(&r.hash).join(USED);
        if let Ok(file) = std::fs::OpenOptions::new().write(true).open(&used) {
            let _ = file.set_modified(std::time::SystemTime::now());
        }
    }

    /// Every pack in the cache, least recently used first.
    #[must_use]
    pub fn entries(&self) -> Vec<Entry> {
        let Ok(read) = std::fs::read_dir(&self.root) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for item in read.flatten() {
            let Some(hash) = item.file_name().to_str().map(str::to_string) else {
                continue;
            };
            if !is_hash(&hash) || !item.path().is_dir() {
                continue;
            }
            let folder = item.path();
            let Some((id, dir)) = std::fs::read_dir(&folder).ok().and_then(|mut r| {
                r.find_map(|e| {
                    let e = e.ok()?;
                    let id = e.file_name().to_str()?.to_string();
                    (id != USED && e.path().is_dir()).then(|| (id, e.path()))
                })
            }) else {
                // Nothing but the marker: a half-removed entry.
                let _ = std::fs::remove_dir_all(&folder);
                continue;
            };
            let used_file = folder.join(USED);
            let recorded = std::fs::read_to_string(&used_file)
                .ok()
                .and_then(|t| t.trim().parse::<u64>().ok());
            let bytes = match recorded {
                Some(b) => b,
                None => {
                    let b = folder_bytes(&dir);
                    let _ = std::fs::write(&used_file, b.to_string());
                    b
                }
            };
            let used = std::fs::metadata(&used_file)
                .and_then(|m| m.modified())
                .unwrap_or(std::time::UNIX_EPOCH);
            let version = packs::manifest(&dir).ok().map(|p| p.version.to_string());
            out.push(Entry {
                hash,
                id,
                version,
                bytes,
                used,
                dir,
            });
        }
        out.sort_by(|a, b| a.used.cmp(&b.used).then_with(|| a.hash.cmp(&b.hash)));
        out
    }

    /// Remove the entry whose hash is `hash`. Whether one was there.
    pub fn remove(&self, hash: &str) -> Result<bool, PackError> {
        if !is_hash(hash) {
            return Ok(false);
        }
        let folder = self.root.join(hash);
        if !folder.exists() {
            return Ok(false);
        }
        std::fs::remove_dir_all(&folder).map_err(|e| {
            PackError::from_io(format!("remove {}", crate::fsutil::shown(&folder)), e)
        })?;
        Ok(true)
    }

    /// Remove every entry, and staging folders left by stopped processes. How many
    /// packs were removed.
    pub fn clear(&self) -> Result<usize, PackError> {
        let entries = self.entries();
        for e in &entries {
            self.remove(&e.hash)?;
        }
        self.remove_stale_staging(std::time::Duration::ZERO);
        Ok(entries.len())
    }

    fn remove_stale_staging(&self, older_than: std::time::Duration) {
        let Ok(read) = std::fs::read_dir(&self.root) else {
            return;
        };
        for item in read.flatten() {
            let stale = item
                .metadata()
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| t.elapsed().ok())
                .is_some_and(|age| age >= older_than);
            if stale && item.file_name().to_string_lossy().starts_with(".staging-") {
                let _ = std::fs::remove_dir_all(item.path());
            }
        }
    }

    /// Bring the cache within its quota: remove the least recently used entries whose
    /// hash is not in `keep` (the game's packs) until it fits. The entries removed.
    pub fn trim(&self, keep: &[&str]) -> Vec<Entry> {
        self.remove_stale_staging(STALE_STAGING);
        let entries = self.entries();
        let mut bytes: u64 = entries.iter().map(|e| e.bytes).sum();
        let mut count = entries.len();
        let mut removed = Vec::new();
        for e in entries {
            if bytes <= self.quota.bytes && count <= self.quota.entries {
                break;
            }
            if keep.contains(&e.hash.as_str()) {
                continue;
            }
            if self.remove(&e.hash).is_ok() {
                bytes = bytes.saturating_sub(e.bytes);
                count -= 1;
                removed.push(e);
            }
        }
        removed
    }

    /// Check that the game's packs `needed` (hashes) fit the quota on their own, with
    /// `extra` bytes more on their way in.
    pub fn check_fits(&self, needed: &[&str], extra: u64) -> Result<(), PackError> {
        if needed.len() > self.quota.entries {
            return Err(PackError::TooBig {
                what: format!(
                    "the game needs {} packs from the host, over the pack cache's quota of {}",
                    needed.len(),
                    self.quota.entries
                ),
            });
        }
        let held: u64 = self
            .entries()
            .iter()
            .filter(|e| needed.contains(&e.hash.as_str()))
            .map(|e| e.bytes)
            .sum();
        let total = held.saturating_add(extra);
        if total > self.quota.bytes {
            return Err(PackError::TooBig {
                what: format!(
                    "the host's packs take {} bytes unpacked, over the pack cache's quota of {} bytes",
                    total, self.quota.bytes
                ),
            });
        }
        Ok(())
    }
}

fn is_hash(text: &str) -> bool {
    text.len() == 64 && text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// Bytes of the files under `dir` (links not followed; at most a pack's worth of
/// entries are looked at).
fn folder_bytes(dir: &Path) -> u64 {
    let mut total = 0u64;
    let mut stack = vec![dir.to_path_buf()];
    let mut seen = 0usize;
    while let Some(folder) = stack.pop() {
        let Ok(read) = std::fs::read_dir(&folder) else {
            continue;
        };
        for item in read.flatten() {
            seen += 1;
            if seen > packs::CAPS.files * 4 {
                return total;
            }
            let Ok(meta) = item.path().symlink_metadata() else {
                continue;
            };
            if meta.is_dir() {
                stack.push(item.path());
            } else {
                total = total.saturating_add(meta.len());
            }
        }
    }
    total
}
