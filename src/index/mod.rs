//! Pack indexes: a folder of static files that lists packs, their versions and their
//! signed archives (docs/index.md). Authors publish into one with their key
//! ([`publish`]); players list indexes in their profile, search them and install packs
//! with what they require ([`player`]).
//!
//! Trust does not depend on whoever hosts the folder: every version's entry is signed by
//! its author's ed25519 key, the archive's SHA-256 and size are in what is signed, and the
//! key that first signed a pack id is pinned in the player's profile.
//!
//! Every file of an index is read as hostile input: its size is capped before it is
//! read, and its counts, names, versions and paths are checked before anything uses them.
//!
//! Must not: unpack an archive whose size, hash and signature were not checked first, or
//! trust a path, id or version from an index without checking it.
//!
//! [`Entry::message`] is the text an author signs; [`Location`] is where an index is read
//! from (a folder or a web address), hidden behind one type from the rest.

pub mod fresh;
pub mod html;
pub mod keys;
pub mod lock;
pub mod needs;
pub mod player;
pub mod publish;
pub mod web;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The `format` field of an index's `index.json`.
pub const FORMAT: &str = "tokensmith-index";
/// The index format this build writes: 2 has an owner who signs a snapshot and a
/// timestamp ([`fresh`]) and signed yanks. Format 1 is still read, with a warning.
pub const VERSION: u32 = 2;

/// The caps on what an index may hold.
#[derive(Clone, Copy, Debug)]
pub struct IndexCaps {
    /// Bytes of `index.json`.
    pub index_bytes: u64,
    /// Bytes of `summary.json`.
    pub summary_bytes: u64,
    /// Packs listed in `summary.json`.
    pub packs: usize,
    /// Bytes of one pack's `packs/ID.json`.
    pub entry_bytes: u64,
    /// Versions of one pack.
    pub versions: usize,
    /// Requirements of one version.
    pub requires: usize,
    /// Characters of a pack's name.
    pub name_chars: usize,
    /// Characters of a pack's description.
    pub description_chars: usize,
    /// Bytes of a key file.
    pub key_bytes: u64,
}

/// The caps every index is held to (docs/index.md "Caps").
pub const CAPS: IndexCaps = IndexCaps {
    index_bytes: 64 * 1024,
    summary_bytes: 16 * 1024 * 1024,
    packs: 20_000,
    entry_bytes: 1024 * 1024,
    versions: 1_000,
    requires: 64,
    name_chars: 200,
    description_chars: 2_000,
    key_bytes: 1024,
};

/// An index's `index.json`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IndexFile {
    /// Always [`FORMAT`].
    pub format: String,
    /// The format version ([`VERSION`]).
    pub version: u32,
    /// The owner's key id (format 2): the key that signs the snapshot and timestamp.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
}

/// One pack in `summary.json`: what a search reads.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Summary {
    /// The pack's id.
    pub id: String,
    /// Its name.
    pub name: String,
    /// Its description.
    #[serde(default)]
    pub description: String,
    /// Its newest version that is not yanked (none when every version is).
    #[serde(default)]
    pub latest: Option<String>,
    /// Every version listed, oldest first.
    pub versions: Vec<String>,
}

/// `summary.json`.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SummaryFile {
    /// The packs, by id.
    pub packs: Vec<Summary>,
}

/// A requirement of a version, as its `pack.yaml` states it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Requires {
    /// The required pack's id.
    pub id: String,
    /// The semver requirement (`*` for any version).
    pub version: String,
}

impl Requires {
    /// What the pack `pack` requires, as an index entry states it.
    #[must_use]
    pub fn of(pack: &crate::content::discover::Pack) -> Vec<Requires> {
        pack.manifest
            .requires
            .iter()
            .map(|r| Requires {
                id: r.value.id.value.clone(),
                version: r
                    .value
                    .version
                    .as_ref()
                    .map_or_else(|| "*".to_string(), |v| v.value.0.clone()),
            })
            .collect()
    }
}

/// One published version of a pack: `packs/ID.json` lists them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    /// The version.
    pub version: String,
    /// What it requires.
    #[serde(default)]
    pub requires: Vec<Requires>,
    /// The pack's content hash (docs/packs.md).
    pub hash: String,
    /// The archive's SHA-256, in hex.
    pub sha256: String,
    /// The archive's size in bytes.
    pub size: u64,
    /// The archive's path in the index: always `archives/ID-VERSION.zip`.
    pub archive: String,
    /// The signing key's id ([`keys::key_id`]).
    pub key: String,
    /// The ed25519 signature of [`Entry::message`], in hex.
    pub signature: String,
    /// Withdrawn by its author: never chosen by a new install or update.
    #[serde(default)]
    pub yanked: bool,
    /// The author's signature of the yank ([`Entry::yank_message`]), in hex: a yank
    /// mark without it is refused in a format-2 index.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub yank_signature: Option<String>,
}

/// `packs/ID.json`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PackFile {
    /// The pack's id.
    pub id: String,
    /// Its name, as its newest version's manifest gives it.
    #[serde(default)]
    pub name: String,
    /// Its description, likewise.
    #[serde(default)]
    pub description: String,
    /// Its versions, oldest first.
    pub versions: Vec<Entry>,
}

impl Entry {
    /// What the author signs for version `self` of pack `id`: every field a player
    /// relies on but the yank mark (which whoever hosts the index may set).
    #[must_use]
    pub fn message(&self, id: &str) -> Vec<u8> {
        let requires: Vec<String> = self
            .requires
            .iter()
            .map(|r| format!("{} {}", r.id, r.version))
            .collect();
        format!(
            "tokensmith-index-entry 1\nid {id}\nversion {}\nhash {}\nsha256 {}\nsize {}\narchive {}\nkey {}\nrequires {}\n",
            self.version,
            self.hash,
            self.sha256,
            self.size,
            self.archive,
            self.key,
            requires.join(", ")
        )
        .into_bytes()
    }

    /// What the author signs to yank version `self` of pack `id`.
    #[must_use]
    pub fn yank_message(&self, id: &str) -> Vec<u8> {
        format!(
            "tokensmith-index-yank 1\nid {id}\nversion {}\nsha256 {}\n",
            self.version, self.sha256
        )
        .into_bytes()
    }

    /// The parsed version (checked when the entry was read).
    #[must_use]
    pub fn semver(&self) -> semver::Version {
        semver::Version::parse(&self.version).unwrap_or_else(|_| semver::Version::new(0, 0, 0))
    }
}

/// Why an index or one of its files cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    /// A file of the index cannot be read.
    #[error("{what}: {error}")]
    Read {
        /// The file, in words.
        what: String,
        /// What went wrong (in the message, so not also a source: a chain printed
        /// with its sources would say it twice).
        error: ReadFailure,
    },
    /// A file of the index breaks the format or a cap.
    #[error("{what}: {reason}")]
    Bad {
        /// The file, in words.
        what: String,
        /// What is wrong.
        reason: String,
    },
    /// A file is larger than it may be: `size` when it was known before reading.
    #[error("{what}: {}", too_large(*size, *cap))]
    TooLarge {
        /// The file, in words.
        what: String,
        /// Its size, when known before reading.
        size: Option<u64>,
        /// What it may have.
        cap: u64,
    },
    /// A check of a version failed (signature, hash, size, key).
    #[error("{0}")]
    Refused(String),
    /// A folder of the profile is a link or not a folder, or could not be made.
    #[error(transparent)]
    Folder(#[from] crate::fsutil::DirError),
    /// Writing to the profile or the index failed.
    #[error("cannot {doing}: {error}")]
    Io {
        /// What was being done.
        doing: String,
        /// The error (in the message, so not also a source).
        error: std::io::Error,
    },
}

/// Why a file of an index (or of the profile's copy) could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ReadFailure {
    /// A file on disk could not be read.
    #[error(transparent)]
    File(#[from] crate::fsutil::ReadError),
    /// A file the format requires is missing.
    #[error("it is not there")]
    Missing,
    /// The server sent the request on too many times.
    #[error("the server redirected more than {0} times")]
    Redirects(u32),
    /// The server did not answer in time.
    #[error("the server took longer than {ms} ms")]
    Timeout {
        /// The time it was given, in milliseconds.
        ms: u128,
    },
    /// The transfer stopped making progress.
    #[error(
        "the server sent {bytes} bytes in {secs} s, slower than the {} KiB/s a transfer must keep; given up",
        web::MIN_BYTES_PER_SECOND / 1024
    )]
    TooSlow {
        /// Bytes received.
        bytes: u64,
        /// Seconds it took.
        secs: u64,
    },
    /// The command's overall deadline for reading indexes passed.
    #[error(
        "the command's reads of indexes took longer than its {secs} s in all (TOKENSMITH_INDEX_DEADLINE_MS sets it)"
    )]
    CommandDeadline {
        /// The deadline, in seconds.
        secs: u64,
    },
    /// The server answered with a status that is not the file.
    #[error("the server answered {0}")]
    Status(u16),
    /// The request failed.
    #[error(transparent)]
    Http(#[from] ureq::Error),
    /// The answer's body could not be read.
    #[error(transparent)]
    Body(std::io::Error),
    /// Every try failed: the last failure.
    #[error("{last} (tried {tries} times)")]
    Tries {
        /// Why the last try failed (in the message, so not also a source).
        last: Box<ReadFailure>,
        /// How many tries were made.
        tries: u32,
    },
}

impl IndexError {
    fn io(doing: impl Into<String>, error: std::io::Error) -> IndexError {
        IndexError::Io {
            doing: doing.into(),
            error,
        }
    }
}

fn too_large(size: Option<u64>, cap: u64) -> String {
    match size {
        Some(size) => format!("it is {size} bytes, more than the {cap} it may have"),
        None => format!("it is more than the {cap} bytes it may have"),
    }
}

/// Where an index is read from: a folder, or a web address (`http://`, `https://`).
#[derive(Clone, Debug)]
pub enum Location {
    /// An index folder, and where the listing files read from it are copied (for
    /// reading while the folder cannot be), if anywhere.
    Folder {
        /// The folder.
        root: PathBuf,
        /// The profile's copy of its listing.
        copy: Option<PathBuf>,
    },
    /// An index on a web server.
    Web(web::Web),
}

impl Location {
    /// `text` as a location: a web address, else a folder. Either keeps a copy of the
    /// listing files it reads in `cache`.
    #[must_use]
    pub fn parse(text: &str, cache: &Path) -> Location {
        if is_web(text) {
            Location::Web(web::Web::new(text, cache))
        } else {
            Location::Folder {
                root: PathBuf::from(text),
                copy: Some(cache.to_path_buf()),
            }
        }
    }

    /// The index folder `root`, read as it is (no copy kept).
    #[must_use]
    pub fn folder(root: &Path) -> Location {
        Location::Folder {
            root: root.to_path_buf(),
            copy: None,
        }
    }

    /// `rel` of this index, in words.
    #[must_use]
    pub fn shown(&self, rel: &str) -> String {
        match self {
            Location::Folder { root, .. } => crate::fsutil::shown(&root.join(rel)),
            Location::Web(w) => clean(&w.url(rel)),
        }
    }

    /// Read `rel` (a path the format fixes, never one from the index), at most `cap`
    /// bytes; `None` when the index has no such file.
    pub fn read(
        &self,
        rel: &str,
        cap: u64,
        what: &'static str,
    ) -> Result<Option<Vec<u8>>, IndexError> {
        match self {
            Location::Folder { root, copy } => {
                let path = root.join(rel);
                match crate::fsutil::read_capped(&path, cap, what) {
                    Ok(bytes) => {
                        // The listing is kept as read (archives are not); the copy is a
                        // convenience, so failing to write it is not an error.
                        if let Some(copy) = copy
                            && !rel.starts_with("archives/")
                        {
                            let to = copy.join(rel);
                            if to
                                .parent()
                                .is_some_and(|p| std::fs::create_dir_all(p).is_ok())
                                // Written only when it changed: a copy is flushed to
                                // disk, which costs more than comparing it.
                                && std::fs::read(&to).ok().as_deref() != Some(&bytes[..])
                            {
                                let _ = crate::fsutil::write_atomic(&to, &bytes);
                            }
                        }
                        Ok(Some(bytes))
                    }
                    Err(e) if e.is_not_found() => Ok(None),
                    Err(crate::fsutil::ReadError::TooLarge { size, cap, .. }) => {
                        Err(IndexError::TooLarge {
                            what: crate::fsutil::shown(&path),
                            size: Some(size),
                            cap,
                        })
                    }
                    Err(e) => Err(IndexError::Read {
                        what: crate::fsutil::shown(&path),
                        error: e.into(),
                    }),
                }
            }
            // Archives are fetched whole each time; the listing files are revalidated
            // against the profile's copy.
            Location::Web(w) => match w.get(rel, cap, !rel.starts_with("archives/"))? {
                web::Got::Body(b) => Ok(Some(b)),
                web::Got::Missing => Ok(None),
            },
        }
    }

    /// [`Location::need`] of a file whose SHA-256 (hex) is known from a signed listing:
    /// over the web, the profile's copy is used without asking the server when it has
    /// that hash (so an update check where nothing changed asks for the timestamp and
    /// little else); otherwise the file is read as usual. The caller still checks it.
    fn need_known(
        &self,
        rel: &str,
        cap: u64,
        what: &'static str,
        sha256_hex: &str,
    ) -> Result<Vec<u8>, IndexError> {
        if let Location::Web(w) = self
            && let Some(bytes) = w.kept(rel, cap)
            && sha256(&bytes) == sha256_hex
        {
            return Ok(bytes);
        }
        self.need(rel, cap, what)
    }

    /// [`Location::read`] of a file the format requires.
    fn need(&self, rel: &str, cap: u64, what: &'static str) -> Result<Vec<u8>, IndexError> {
        self.read(rel, cap, what)?.ok_or_else(|| IndexError::Read {
            what: self.shown(rel),
            error: ReadFailure::Missing,
        })
    }
}

/// The folders of an index that files are written into.
pub(crate) const INDEX_FOLDERS: [&str; 3] = ["packs", "archives", "keys"];

/// Write `rel` of the index folder `root` atomically. Its folder (one of [`INDEX_FOLDERS`],
/// or the root) must be a real folder, not a link, and so must be the file if it is
/// there: a link would make a publish write outside the index.
pub(crate) fn write_file(root: &Path, rel: &str, bytes: &[u8]) -> Result<(), IndexError> {
    let path = root.join(rel);
    if let Some((folder, _)) = rel.split_once('/') {
        crate::fsutil::make_profile_dir(&root.join(folder)).map_err(|e| {
            IndexError::Refused(format!(
                "{e}; an index folder's packs/, archives/ and keys/ must be real folders inside it (nothing was written)"
            ))
        })?;
    }
    if crate::fsutil::is_link(&path) {
        return Err(IndexError::Refused(format!(
            "{} is a link; an index's files must be real files inside it (nothing was written)",
            crate::fsutil::shown(&path)
        )));
    }
    crate::fsutil::write_atomic(&path, bytes)
        .map_err(|e| IndexError::io(format!("write {}", crate::fsutil::shown(&path)), e))
}

/// `value` as the pretty JSON an index file holds.
pub(crate) fn index_json(value: &impl Serialize) -> Result<Vec<u8>, IndexError> {
    serde_json::to_vec_pretty(value)
        .map_err(|e| IndexError::io("write the index", std::io::Error::other(e)))
}

/// Whether `text` is a web address.
#[must_use]
pub fn is_web(text: &str) -> bool {
    let lower = text.trim().to_ascii_lowercase();
    lower.starts_with("http://") || lower.starts_with("https://")
}

/// A JSON file the profile keeps (the indexes, the pinned keys): `T::default()` when it
/// is missing; at most `cap` bytes; `fix` tells the user what to do when it is broken.
pub(crate) fn read_profile_json<T: serde::de::DeserializeOwned + Default>(
    path: &Path,
    cap: u64,
    what: &'static str,
    fix: &str,
) -> Result<T, IndexError> {
    match crate::fsutil::read_capped(path, cap, what) {
        Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| IndexError::Bad {
            what: crate::fsutil::shown(path),
            reason: format!("{e} ({fix})"),
        }),
        Err(e) if e.is_not_found() => Ok(T::default()),
        Err(e) => Err(IndexError::Read {
            what: crate::fsutil::shown(path),
            error: e.into(),
        }),
    }
}

/// Write `value` as JSON to the profile file `path`, atomically.
pub(crate) fn write_profile_json(path: &Path, value: &impl Serialize) -> Result<(), IndexError> {
    serde_json::to_vec_pretty(value)
        .map_err(std::io::Error::other)
        .and_then(|b| crate::fsutil::write_atomic(path, &b))
        .map_err(|e| IndexError::io(format!("write {}", crate::fsutil::shown(path)), e))
}

/// The bytes of lowercase or uppercase hex `text` (spaces around it ignored) of exactly
/// `N` bytes.
#[must_use]
pub fn from_hex<const N: usize>(text: &str) -> Option<[u8; N]> {
    let mut out = [0u8; N];
    hex::decode_to_slice(text.trim(), &mut out).ok()?;
    Some(out)
}

/// SHA-256 of `bytes`, in hex.
#[must_use]
pub fn sha256(bytes: &[u8]) -> String {
    use sha2::Digest as _;
    hex::encode(sha2::Sha256::digest(bytes))
}

fn parse_json<T: serde::de::DeserializeOwned>(bytes: &[u8], what: &str) -> Result<T, IndexError> {
    serde_json::from_slice(bytes).map_err(|e| IndexError::Bad {
        what: what.to_string(),
        reason: format!("not an index file of this format: {e}"),
    })
}

/// The archive path of `id` at `version` inside an index.
#[must_use]
pub fn archive_path(id: &str, version: &str) -> String {
    format!("archives/{id}-{version}.zip")
}

/// Read and check `index.json` of the index at `loc`.
pub fn read_index(loc: &Location) -> Result<IndexFile, IndexError> {
    let bytes = loc.need("index.json", CAPS.index_bytes, "an index file")?;
    let what = loc.shown("index.json");
    let index: IndexFile = parse_json(&bytes, &what)?;
    if index.format != FORMAT {
        return Err(IndexError::Bad {
            what,
            reason: format!("format is '{}', not '{FORMAT}'", index.format),
        });
    }
    if !(1..=VERSION).contains(&index.version) {
        return Err(IndexError::Bad {
            what,
            reason: format!(
                "format version {} is newer than {VERSION}, the newest this build reads (update Tokensmith)",
                index.version
            ),
        });
    }
    match &index.owner {
        Some(owner) if !keys::valid_key_id(owner) => {
            return Err(IndexError::Bad {
                what,
                reason: format!("its owner '{}' is not a key id", clean(owner)),
            });
        }
        None if index.version >= 2 => {
            return Err(IndexError::Bad {
                what,
                reason: "format 2 names an owner key, and it names none".into(),
            });
        }
        _ => {}
    }
    Ok(index)
}

/// Check a summary read from an index (`what` names it in messages).
pub fn check_summary(summary: &SummaryFile, what: &str) -> Result<(), IndexError> {
    let bad = |reason: String| IndexError::Bad {
        what: what.to_string(),
        reason,
    };
    if summary.packs.len() > CAPS.packs {
        return Err(bad(format!(
            "it lists {} packs; an index may list at most {}",
            summary.packs.len(),
            CAPS.packs
        )));
    }
    for s in &summary.packs {
        check_id(&s.id).map_err(|e| bad(e.to_string()))?;
        if s.name.chars().count() > CAPS.name_chars
            || s.description.chars().count() > CAPS.description_chars
        {
            return Err(bad(format!(
                "pack '{}': its name or description is longer than {} or {} characters",
                s.id, CAPS.name_chars, CAPS.description_chars
            )));
        }
        if s.versions.len() > CAPS.versions {
            return Err(bad(format!(
                "pack '{}' lists more than {} versions",
                s.id, CAPS.versions
            )));
        }
        for v in s.versions.iter().chain(&s.latest) {
            semver::Version::parse(v)
                .map_err(|e| bad(format!("pack '{}': version '{}': {e}", s.id, clean(v))))?;
        }
    }
    Ok(())
}

/// Read and check `summary.json` of the index at `loc`.
pub fn read_summary(loc: &Location) -> Result<SummaryFile, IndexError> {
    let bytes = loc.need("summary.json", CAPS.summary_bytes, "an index summary")?;
    let what = loc.shown("summary.json");
    let summary: SummaryFile = parse_json(&bytes, &what)?;
    check_summary(&summary, &what)?;
    Ok(summary)
}

/// Check the pack file of `id` read from an index (`what` names it in messages).
pub fn check_pack_file(file: &PackFile, id: &str, what: &str) -> Result<(), IndexError> {
    let bad = |reason: String| IndexError::Bad {
        what: what.to_string(),
        reason,
    };
    if file.id != id {
        return Err(bad(format!(
            "it is the file of '{}', not of '{id}'",
            clean(&file.id)
        )));
    }
    if file.versions.len() > CAPS.versions {
        return Err(bad(format!(
            "it lists {} versions; a pack may list at most {}",
            file.versions.len(),
            CAPS.versions
        )));
    }
    if file.name.chars().count() > CAPS.name_chars
        || file.description.chars().count() > CAPS.description_chars
    {
        return Err(bad(format!(
            "its name or description is longer than {} or {} characters",
            CAPS.name_chars, CAPS.description_chars
        )));
    }
    let mut seen = std::collections::BTreeSet::new();
    for e in &file.versions {
        let v = semver::Version::parse(&e.version)
            .map_err(|err| bad(format!("version '{}': {err}", clean(&e.version))))?;
        if !seen.insert(v) {
            return Err(bad(format!("version {} is listed twice", e.version)));
        }
        if e.archive != archive_path(id, &e.version) {
            return Err(bad(format!(
                "version {}: its archive is '{}', but must be '{}'",
                e.version,
                clean(&e.archive),
                archive_path(id, &e.version)
            )));
        }
        if from_hex::<32>(&e.sha256).is_none() || from_hex::<32>(&e.hash).is_none() {
            return Err(bad(format!(
                "version {}: its hash or sha256 is not 64 hex digits",
                e.version
            )));
        }
        if from_hex::<64>(&e.signature).is_none()
            || e.yank_signature
                .as_deref()
                .is_some_and(|y| from_hex::<64>(y).is_none())
        {
            return Err(bad(format!(
                "version {}: its signature is not 128 hex digits",
                e.version
            )));
        }
        if !keys::valid_key_id(&e.key) {
            return Err(bad(format!(
                "version {}: its key id '{}' is not 16 hex digits",
                e.version,
                clean(&e.key)
            )));
        }
        if e.requires.len() > CAPS.requires {
            return Err(bad(format!(
                "version {} requires more than {} packs",
                e.version, CAPS.requires
            )));
        }
        for r in &e.requires {
            check_id(&r.id).map_err(|e| bad(e.to_string()))?;
            semver::VersionReq::parse(&r.version).map_err(|err| {
                bad(format!(
                    "version {}: the requirement '{}' of '{}': {err}",
                    e.version,
                    clean(&r.version),
                    r.id
                ))
            })?;
        }
    }
    Ok(())
}

/// Read and check `packs/ID.json` of the index at `loc`; `None` when the index does not
/// list `id`.
pub fn read_pack(loc: &Location, id: &str) -> Result<Option<PackFile>, IndexError> {
    check_id(id).map_err(|e| IndexError::Bad {
        what: "the pack asked for".into(),
        reason: e.to_string(),
    })?;
    let rel = format!("packs/{id}.json");
    let Some(bytes) = loc.read(&rel, CAPS.entry_bytes, "an index entry")? else {
        return Ok(None);
    };
    let what = loc.shown(&rel);
    let file: PackFile = parse_json(&bytes, &what)?;
    check_pack_file(&file, id, &what)?;
    Ok(Some(file))
}

/// A name from an index that cannot be a pack id (shown cleaned).
#[derive(Debug, thiserror::Error)]
#[error(
    "'{}' is not a pack id (lowercase letters, digits and '_', at most {} bytes)",
    clean(.0),
    crate::packs::MAX_ID_BYTES
)]
pub struct NotAnId(String);

/// A pack id from an index: a valid id, no longer than an installed pack's may be.
fn check_id(id: &str) -> Result<(), NotAnId> {
    if id.len() > crate::packs::MAX_ID_BYTES || !crate::content::discover::valid_id(id) {
        return Err(NotAnId(id.to_string()));
    }
    Ok(())
}

/// `text` from an index, safe to print: control characters escaped, at most 80
/// characters.
#[must_use]
pub fn clean(text: &str) -> String {
    let mut out: String = text
        .chars()
        .take(80)
        .flat_map(char::escape_default)
        .collect();
    if text.chars().count() > 80 {
        out.push('…');
    }
    out
}
