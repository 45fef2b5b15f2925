//! Packs that travel: the files that make a pack and its content hash, archives
//! (`pack build`), safe installs into a profile, the enabled set and load order a profile
//! keeps, and the conflict report.
//!
//! Every archive and folder given here is treated as hostile: names, kinds and sizes are
//! checked against [`Caps`] before anything is unpacked, and nothing is written outside a
//! staging folder until the whole pack has passed.
//!
//! Must not: touch the UI, or write into the repository's `content/` or `mods/` folders.

pub mod archive;
pub mod conflicts;
pub mod deps;
pub mod set;
pub mod store;
mod zipcheck;

use std::fmt;
use std::path::{Path, PathBuf};

use sha2::{Digest as _, Sha256};

pub use crate::content::{Conflict, Setter};
pub use archive::{build, build_to};
pub use conflicts::{ConflictReport, Duplicate};
pub use set::{Folders, Listed, PackSet, PackSource, Selection};
pub use store::{Expected, Installed, Store};

/// The limits a pack must stay within to be built, hashed or installed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Caps {
    /// Most files in a pack.
    pub files: usize,
    /// Most bytes in one file.
    pub file_bytes: u64,
    /// Most bytes in all files together.
    pub total_bytes: u64,
    /// Most bytes an archive file may have.
    pub archive_bytes: u64,
    /// Highest ratio of a file's size to its compressed size in an archive (for files
    /// over [`Caps::ratio_from`] bytes).
    pub ratio: u64,
    /// Files at least this large are held to [`Caps::ratio`].
    pub ratio_from: u64,
    /// Deepest folder nesting.
    pub depth: usize,
    /// Longest relative path, in bytes.
    pub path_bytes: usize,
}

/// The caps every pack is held to (docs/packs.md "Caps").
pub const CAPS: Caps = Caps {
    files: 2_000,
    file_bytes: crate::fsutil::MAX_CONTENT_FILE,
    total_bytes: 64 * 1024 * 1024,
    archive_bytes: 64 * 1024 * 1024,
    ratio: 200,
    ratio_from: 64 * 1024,
    depth: crate::content::MAX_PACK_DEPTH,
    path_bytes: 240,
};

/// The longest id an installed pack may have, in bytes: its folder (`ID`), its backup
/// while it is replaced (`.old-ID`) and its removed copy (`ID.9999`) must all fit the
/// 255 bytes of a file name.
pub const MAX_ID_BYTES: usize = 64;

/// Why a pack cannot be built, hashed, installed or changed.
#[derive(Debug)]
pub enum PackError {
    /// An entry's name is unsafe or unportable; `name` is it, shown safely.
    BadName {
        /// The entry, as written (escaped).
        name: String,
        /// What is wrong with it.
        reason: String,
    },
    /// An entry is a link, a device or something else that is not a file or folder.
    NotAFile {
        /// The entry.
        name: String,
        /// What it is.
        kind: String,
    },
    /// A cap is exceeded.
    TooBig {
        /// What is too big.
        what: String,
    },
    /// The archive cannot be read as a zip: what is wrong with it.
    BadArchive(String),
    /// The zip reader refused the archive, or one entry of it (`entry`, shown safely).
    Unzip {
        /// The entry, when it is one entry's.
        entry: Option<String>,
        /// What the zip reader said.
        source: zip::result::ZipError,
    },
    /// An entry could not be inflated.
    Inflate {
        /// The entry, shown safely.
        entry: String,
        /// What went wrong.
        source: std::io::Error,
    },
    /// The pack's manifest is missing or has errors (`path:line:col: message` each).
    Manifest(Vec<String>),
    /// The pack has errors and is not built.
    Invalid(Vec<String>),
    /// A pack with this id is installed already.
    Exists {
        /// The id.
        id: String,
        /// Its folder.
        dir: PathBuf,
    },
    /// No pack with this id.
    Unknown {
        /// The id asked for.
        id: String,
        /// A near id, if one is known.
        hint: Option<String>,
    },
    /// The change is refused for a reason stated in full.
    Refused(String),
    /// A file system operation failed.
    Io {
        /// What was being done.
        doing: String,
        /// What the system said.
        source: std::io::Error,
    },
    /// A pack file could not be read.
    Read {
        /// The file, relative to the pack folder.
        rel: String,
        /// Why.
        source: crate::fsutil::ReadError,
    },
    /// Writing the archive failed.
    Zip {
        /// What was being done.
        doing: String,
        /// What the zip writer said.
        source: zip::result::ZipError,
    },
    /// A folder of the profile is a link or not a folder, or could not be made.
    Folder(crate::fsutil::DirError),
}

impl PackError {
    /// A failed file system operation, keeping the error.
    pub(crate) fn from_io(doing: impl Into<String>, source: std::io::Error) -> PackError {
        PackError::Io {
            doing: doing.into(),
            source,
        }
    }
}

impl From<crate::fsutil::DirError> for PackError {
    fn from(e: crate::fsutil::DirError) -> PackError {
        PackError::Folder(e)
    }
}

impl fmt::Display for PackError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PackError::BadName { name, reason } => write!(f, "entry {name}: {reason}"),
            PackError::NotAFile { name, kind } => write!(
                f,
                "entry {name} is {kind}; a pack holds only plain files and folders"
            ),
            PackError::TooBig { what } => write!(f, "{what}"),
            PackError::BadArchive(e) => write!(f, "not a readable zip archive: {e}"),
            PackError::Unzip {
                entry: None,
                source,
            } => write!(f, "not a readable zip archive: {source}"),
            PackError::Unzip {
                entry: Some(entry),
                source,
            } => write!(f, "not a readable zip archive: entry {entry}: {source}"),
            PackError::Inflate { entry, source } => {
                write!(f, "not a readable zip archive: entry {entry}: {source}")
            }
            PackError::Manifest(lines) => {
                write!(f, "the pack's manifest does not validate:")?;
                for l in lines {
                    write!(f, "\n  {l}")?;
                }
                Ok(())
            }
            PackError::Invalid(lines) => {
                write!(f, "the pack has errors:")?;
                for l in lines {
                    write!(f, "\n  {l}")?;
                }
                Ok(())
            }
            PackError::Exists { id, dir } => write!(
                f,
                "pack '{id}' is installed already ({}); give --replace to replace it",
                crate::fsutil::shown(dir)
            ),
            PackError::Unknown { id, hint } => {
                write!(f, "no pack '{}'", crate::rules::echo(id))?;
                if let Some(h) = hint {
                    write!(f, " (did you mean '{h}'?)")?;
                }
                Ok(())
            }
            PackError::Refused(why) => write!(f, "{why}"),
            PackError::Io { doing, source } => write!(f, "cannot {doing}: {source}"),
            PackError::Read { rel, source } => write!(f, "cannot read {rel}: {source}"),
            PackError::Zip { doing, source } => write!(f, "cannot {doing}: {source}"),
            PackError::Folder(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for PackError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            PackError::Io { source, .. } => Some(source),
            PackError::Read { source, .. } => Some(source),
            PackError::Zip { source, .. } | PackError::Unzip { source, .. } => Some(source),
            PackError::Inflate { source, .. } => Some(source),
            PackError::Folder(e) => e.source(),
            _ => None,
        }
    }
}

/// A file of a pack: its path relative to the pack folder (`/`-separated, UTF-8) and
/// where it is now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PackFile {
    /// The relative path, `/`-separated.
    pub rel: String,
    /// Its full path.
    pub path: PathBuf,
    /// Its size in bytes.
    pub size: u64,
}

/// Whether a file or folder name is left out of archives and hashes: hidden files
/// (`.git`, `.DS_Store`), editor leftovers (`name~`, `#name#`, `.swp`), and the backups,
/// set-aside and temporary files Tokensmith and editors write (`.bak`, `.orig`, `.tmp`,
/// `.corrupt`, and numbered forms such as `.v1.bak2`).
#[must_use]
pub fn is_left_out(name: &str) -> bool {
    if name.starts_with('.') || name.ends_with('~') || name.starts_with('#') {
        return true;
    }
    let Some((_, ext)) = name.rsplit_once('.') else {
        return false;
    };
    let stem = ext.trim_end_matches(|c: char| c.is_ascii_digit());
    matches!(
        stem.to_ascii_lowercase().as_str(),
        "bak" | "orig" | "tmp" | "temp" | "swp" | "swo" | "corrupt" | "old" | "rej"
    )
}

/// The characters Windows refuses in a file name (besides `/`, `\\` and control
/// characters, refused on their own).
const WINDOWS_REFUSES: [char; 7] = ['<', '>', ':', '"', '|', '?', '*'];

/// Whether `name` is a device name on Windows: `CON`, `PRN`, `AUX`, `NUL`, `CONIN$`,
/// `CONOUT$`, `CLOCK$`, `COM0`–`COM9` and `LPT0`–`LPT9` (with the superscript digits
/// `¹²³` too), in any case, with or without an extension, with spaces before the dot.
#[must_use]
pub fn is_device_name(name: &str) -> bool {
    let stem = name
        .split('.')
        .next()
        .unwrap_or_default()
        .trim_end_matches(' ');
    let upper = stem.to_uppercase();
    if matches!(
        upper.as_str(),
        "CON" | "PRN" | "AUX" | "NUL" | "CONIN$" | "CONOUT$" | "CLOCK$"
    ) {
        return true;
    }
    let mut chars = upper.chars();
    let head: String = chars.by_ref().take(3).collect();
    let digit = chars.next();
    (head == "COM" || head == "LPT")
        && chars.next().is_none()
        && digit.is_some_and(|d| d.is_ascii_digit() || matches!(d, '\u{b9}' | '\u{b2}' | '\u{b3}'))
}

/// Why `name` (one path component) cannot be in a pack, or `None` when it can: a name
/// every system can write as it is (Windows is the strictest).
#[must_use]
pub fn bad_component(name: &str) -> Option<&'static str> {
    if name.is_empty() {
        return Some("has an empty path component");
    }
    if name == "." || name == ".." {
        return Some("climbs out of its folder with '..' or uses '.'");
    }
    if name.contains('\\') {
        return Some("has a backslash; paths in packs use '/'");
    }
    if name.contains(':') {
        return Some("has a ':' (a drive or stream name on Windows)");
    }
    if name.chars().any(|c| c.is_control()) {
        return Some("has a control character");
    }
    if name.contains(WINDOWS_REFUSES) {
        return Some("has a character Windows refuses in file names (< > : \" | ? *)");
    }
    if name.ends_with(' ') || name.ends_with('.') {
        return Some("ends with a space or a dot, which Windows drops");
    }
    if is_device_name(name) {
        return Some(
            "is a device name on Windows (CON, PRN, AUX, NUL, CONIN$, CONOUT$, CLOCK$, COM0-9, LPT0-9, COM\u{b9}\u{b2}\u{b3}, LPT\u{b9}\u{b2}\u{b3}, with any extension)",
        );
    }
    None
}

/// Every file of the pack in `dir` that goes into its archive and hash, sorted by
/// relative path (byte order). Left out: see [`is_left_out`]. Refused: links, devices and
/// other non-files, names that are not UTF-8 or not portable, and anything over [`CAPS`].
pub fn files(dir: &Path) -> Result<Vec<PackFile>, PackError> {
    let caps = CAPS;
    let mut out: Vec<PackFile> = Vec::new();
    let mut total = 0u64;
    let mut stack = vec![(dir.to_path_buf(), String::new(), 0usize)];
    let mut seen = 0usize;
    while let Some((folder, prefix, depth)) = stack.pop() {
        let entries = std::fs::read_dir(&folder).map_err(|e| {
            PackError::from_io(format!("read {}", crate::fsutil::shown(&folder)), e)
        })?;
        for entry in entries {
            let entry = entry.map_err(|e| {
                PackError::from_io(format!("read {}", crate::fsutil::shown(&folder)), e)
            })?;
            seen += 1;
            if seen > caps.files * 4 {
                return Err(PackError::TooBig {
                    what: format!("the pack folder has more than {} entries", caps.files * 4),
                });
            }
            let raw = entry.file_name();
            let Some(name) = raw.to_str() else {
                return Err(PackError::BadName {
                    name: crate::fsutil::shown(&entry.path()),
                    reason: "is not valid UTF-8".into(),
                });
            };
            if is_left_out(name) {
                continue;
            }
            let rel = format!("{prefix}{name}");
            if let Some(reason) = bad_component(name) {
                return Err(PackError::BadName {
                    name: crate::rules::echo(&rel),
                    reason: reason.into(),
                });
            }
            if rel.len() > caps.path_bytes {
                return Err(PackError::BadName {
                    name: crate::rules::echo(&rel),
                    reason: format!("is longer than {} bytes", caps.path_bytes),
                });
            }
            let kind = entry.file_type().map_err(|e| {
                PackError::from_io(format!("read {}", crate::fsutil::shown(&entry.path())), e)
            })?;
            if kind.is_dir() {
                if depth + 1 > caps.depth {
                    return Err(PackError::TooBig {
                        what: format!("folders nest more than {} deep at {rel}", caps.depth),
                    });
                }
                stack.push((entry.path(), format!("{rel}/"), depth + 1));
            } else if kind.is_file() {
                let size = entry
                    .metadata()
                    .map_err(|e| PackError::from_io(format!("read {rel}"), e))?
                    .len();
                if size > caps.file_bytes {
                    return Err(PackError::TooBig {
                        what: format!(
                            "{rel} has {size} bytes; a file in a pack may have at most {}",
                            caps.file_bytes
                        ),
                    });
                }
                total += size;
                if total > caps.total_bytes {
                    return Err(PackError::TooBig {
                        what: format!(
                            "the pack's files have more than {} bytes together",
                            caps.total_bytes
                        ),
                    });
                }
                out.push(PackFile {
                    rel,
                    path: entry.path(),
                    size,
                });
                if out.len() > caps.files {
                    return Err(PackError::TooBig {
                        what: format!("the pack has more than {} files", caps.files),
                    });
                }
            } else {
                return Err(PackError::NotAFile {
                    name: crate::rules::echo(&rel),
                    kind: kind_name(&kind).into(),
                });
            }
        }
    }
    out.sort_by(|a, b| a.rel.as_bytes().cmp(b.rel.as_bytes()));
    check_case_clashes(out.iter().map(|f| f.rel.as_str()))?;
    Ok(out)
}

/// The form two names share when some file system takes them for one: canonical
/// decomposition (NFD, as macOS compares), then every letter through lowercase,
/// uppercase and lowercase again (full Unicode mappings: `ß`/`ss`, `ı`/`I`/`i`, `ſ`/`s`,
/// the Kelvin sign/`k`, as Windows' upcase table and case folding compare), decomposed
/// again.
#[must_use]
pub fn clash_key(name: &str) -> String {
    use unicode_normalization::UnicodeNormalization as _;
    let folded: String = name
        .nfd()
        .flat_map(char::to_lowercase)
        .flat_map(char::to_uppercase)
        .flat_map(char::to_lowercase)
        .collect();
    folded.nfd().collect()
}

/// Refuse two paths that differ only in letter case or Unicode normalisation (see
/// [`clash_key`]): they are one file on Windows or macOS, so the pack would not be the
/// same pack there.
pub(crate) fn check_case_clashes<'a>(
    paths: impl Iterator<Item = &'a str>,
) -> Result<(), PackError> {
    let mut seen: std::collections::HashMap<String, &str> = std::collections::HashMap::new();
    for p in paths {
        // Folders clash too: check the path and every folder above it.
        let ends = p
            .char_indices()
            .filter(|&(_, c)| c == '/')
            .map(|(i, _)| i)
            .chain(std::iter::once(p.len()));
        for end in ends {
            let prefix = &p[..end];
            let folded = clash_key(prefix);
            match seen.get(&folded) {
                Some(other) if *other != prefix => {
                    return Err(PackError::BadName {
                        name: crate::rules::echo(prefix),
                        reason: format!(
                            "differs from {} only in letter case or Unicode normalisation; they would be one file on Windows or macOS",
                            crate::rules::echo(other)
                        ),
                    });
                }
                Some(_) => {}
                None => {
                    seen.insert(folded, prefix);
                }
            }
        }
    }
    Ok(())
}

fn kind_name(kind: &std::fs::FileType) -> &'static str {
    if kind.is_symlink() {
        return "a symbolic link";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt as _;
        if kind.is_block_device() || kind.is_char_device() {
            return "a device";
        }
        if kind.is_fifo() {
            return "a pipe";
        }
        if kind.is_socket() {
            return "a socket";
        }
    }
    "not a plain file"
}

/// A pack's content hash, as lowercase hex: SHA-256 over its files in byte order of
/// their relative paths, each as the path's UTF-8 bytes, a zero byte, the file's size as
/// 8 bytes little-endian, then its bytes (docs/packs.md "The content hash").
pub fn hash(dir: &Path) -> Result<String, PackError> {
    walk(dir, |_, _| Ok(())).map(|(hash, _)| hash)
}

/// Read every file of the pack in `dir` ([`files`]) in order, handing each to `each`;
/// the content hash and the number of files.
pub(crate) fn walk(
    dir: &Path,
    mut each: impl FnMut(&PackFile, &[u8]) -> Result<(), PackError>,
) -> Result<(String, usize), PackError> {
    let list = files(dir)?;
    let mut hasher = Sha256::new();
    for f in &list {
        let bytes =
            crate::fsutil::read_capped(&f.path, CAPS.file_bytes, "a pack file").map_err(|e| {
                PackError::Read {
                    rel: f.rel.clone(),
                    source: e,
                }
            })?;
        feed(&mut hasher, &f.rel, &bytes);
        each(f, &bytes)?;
    }
    Ok((hex::encode(hasher.finalize()), list.len()))
}

/// Add one file to a content hash.
pub(crate) fn feed(hasher: &mut Sha256, rel: &str, bytes: &[u8]) {
    hasher.update(rel.as_bytes());
    hasher.update([0u8]);
    hasher.update((bytes.len() as u64).to_le_bytes());
    hasher.update(bytes);
}

/// The short form of a hash shown in lists (its first 12 hex digits).
#[must_use]
pub fn short(hash: &str) -> &str {
    hash.get(..12).unwrap_or(hash)
}

/// Check the manifest of the pack in `dir` alone: its diagnostics as
/// `path:line:col: message` lines when it does not validate, else the pack.
pub(crate) fn manifest(dir: &Path) -> Result<crate::content::discover::Pack, PackError> {
    let mut diags = crate::content::diagnostic::Diagnostics::default();
    let found = crate::content::discover::discover(
        &[crate::content::PackFolder {
            path: dir.to_path_buf(),
            required: true,
        }],
        &mut diags,
    );
    let lines: Vec<String> = diags
        .into_sorted()
        .iter()
        .filter(|d| d.severity == crate::content::diagnostic::Severity::Error)
        .map(ToString::to_string)
        .collect();
    match found.packs.into_iter().next() {
        Some(pack) if lines.is_empty() => Ok(pack),
        _ if lines.is_empty() => Err(PackError::Manifest(vec![format!(
            "{}: no pack.yaml: a pack is a folder with a pack.yaml",
            crate::fsutil::shown(dir)
        )])),
        _ => Err(PackError::Manifest(lines)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn left_out_names_are_hidden_temporary_and_backup_files() {
        for name in [
            ".git",
            ".DS_Store",
            "cards.yaml~",
            "#cards.yaml#",
            "cards.yaml.bak",
            "cards.v1.bak2",
            "deck.orig",
            "x.tmp",
            "a.swp",
            "b.corrupt",
        ] {
            assert!(is_left_out(name), "{name}");
        }
        for name in ["cards.yaml", "ai.lua", "README.md", "bakery.yaml", "v1"] {
            assert!(!is_left_out(name), "{name}");
        }
    }

    #[test]
    fn unportable_components_are_named() {
        for name in [
            "..", ".", "a\\b", "c:d", "CON", "com1.txt", "x.", "y ", "a\u{1}",
        ] {
            assert!(bad_component(name).is_some(), "{name}");
        }
        for name in ["cards.yaml", "console.yaml", "com10", "ai.lua"] {
            assert!(bad_component(name).is_none(), "{name}");
        }
    }

    #[test]
    fn case_clashes_are_found_in_files_and_folders() {
        assert!(check_case_clashes(["a/b.yaml", "A/c.yaml"].into_iter()).is_err());
        assert!(check_case_clashes(["cards.yaml", "Cards.yaml"].into_iter()).is_err());
        assert!(check_case_clashes(["a/b.yaml", "a/c.yaml", "b"].into_iter()).is_ok());
    }
}
