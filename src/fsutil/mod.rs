//! Small file-system helpers for the edges (content loading, profile, command line):
//! reading files as data (never a door), atomic writes, and keeping a file aside under a
//! name that is free at the moment it is written.
//!
//! Reading: a file is read only when it is a regular file (not a link, a folder, a named
//! pipe or a device), without ever blocking on one, and only up to a cap given by the
//! caller; links are never followed inside packs and profiles. Must not: follow a link,
//! wait on a special file, or read past its cap.
//!
//! Keeping: [`move_aside`] and [`copy_aside`] keep a file under a free name and never replace
//! another. A profile folder that is a link is refused. [`sync_tree`] and [`sync_dir`] flush
//! what was written to disk ([`sync_dir`]'s one `syncfs` call is the crate's one `unsafe`
//! outside `src/script/raw`: no safe binding exists).

pub mod lock;

use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};

/// The largest content file (`*.yaml` in a pack, `pack.yaml` included) read, in bytes.
pub const MAX_CONTENT_FILE: u64 = 4 * 1024 * 1024;
/// The largest Lua script read, in bytes.
pub const MAX_SCRIPT_FILE: u64 = 1024 * 1024;
/// The most Lua source one pack's scripts may hold together, in bytes.
pub const MAX_PACK_SCRIPTS: u64 = 4 * 1024 * 1024;
/// The most Lua source the scripts of all packs loaded together may hold, in bytes.
pub const MAX_SET_SCRIPTS: u64 = 32 * 1024 * 1024;
/// The largest scenario file read, in bytes.
pub const MAX_SCENARIO_FILE: u64 = 4 * 1024 * 1024;
/// The largest profile file (a deck, the settings) read, in bytes.
pub const MAX_PROFILE_FILE: u64 = 4 * 1024 * 1024;

/// Why a file was not read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// It is a symbolic link.
    #[error(
        "it is a symbolic link, and links are not followed here (a pack from another machine could use one to read your files); copy the file in its place"
    )]
    Link,
    /// It is a folder, a named pipe, a device or a socket.
    #[error("it is {0}, not a regular file")]
    NotAFile(&'static str),
    /// It is larger than the cap.
    #[error("it is {size} bytes; the most read for {what} is {cap} bytes")]
    TooLarge {
        /// Its size (at least; it may still be growing).
        size: u64,
        /// The cap.
        cap: u64,
        /// What kind of file it is (`a content file`…).
        what: &'static str,
    },
    /// It is not UTF-8 text.
    #[error("it is not UTF-8 text")]
    NotText,
    /// The system refused.
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

impl ReadError {
    /// Whether the file is not there.
    #[must_use]
    pub fn is_not_found(&self) -> bool {
        matches!(self, ReadError::Io(e) if e.kind() == std::io::ErrorKind::NotFound)
    }
}

/// What kind of non-regular file `kind` is, in words.
fn kind_name(kind: std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt as _;
        if kind.is_fifo() {
            return "a named pipe";
        }
        if kind.is_char_device() || kind.is_block_device() {
            return "a device";
        }
        if kind.is_socket() {
            return "a socket";
        }
    }
    if kind.is_dir() {
        "a folder"
    } else {
        "not a plain file"
    }
}

/// Read `path` as bytes: a regular file, not a link, at most `cap` bytes (`what` names
/// the kind of file in the message). Never blocks on a special file.
pub fn read_capped(path: &Path, cap: u64, what: &'static str) -> Result<Vec<u8>, ReadError> {
    let meta = std::fs::symlink_metadata(path)?;
    if meta.file_type().is_symlink() {
        return Err(ReadError::Link);
    }
    if !meta.is_file() {
        return Err(ReadError::NotAFile(kind_name(meta.file_type())));
    }
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        // Swapped for a link or a pipe since the look above: refused, never waited on.
        options.custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW);
    }
    let file = options.open(path).map_err(|e| {
        #[cfg(unix)]
        if e.raw_os_error() == Some(libc::ELOOP) {
            return ReadError::Link;
        }
        ReadError::Io(e)
    })?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(ReadError::NotAFile(kind_name(meta.file_type())));
    }
    if meta.len() > cap {
        return Err(ReadError::TooLarge {
            size: meta.len(),
            cap,
            what,
        });
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    file.take(cap + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > cap {
        return Err(ReadError::TooLarge {
            size: bytes.len() as u64,
            cap,
            what,
        });
    }
    Ok(bytes)
}

/// [`read_capped`] as UTF-8 text.
pub fn read_text(path: &Path, cap: u64, what: &'static str) -> Result<String, ReadError> {
    String::from_utf8(read_capped(path, cap, what)?).map_err(|_| ReadError::NotText)
}

/// Whether `path` is a symbolic link (not followed).
#[must_use]
pub fn is_link(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink())
}

/// Whether `path` is a real folder (not a link to one).
#[must_use]
pub fn is_real_dir(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.is_dir())
}

/// Write `bytes` to `path` atomically: a temporary file in the same folder, flushed to
/// disk, then renamed over the target. A crash leaves the old file or the new one. The
/// file keeps the permissions it had (a new file gets the usual `rw-r--r--`).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write_via_temp(path, bytes, true)
}

/// Like [`write_atomic`], but never replaces a file: fails with `AlreadyExists` when
/// `path` is there (checked at the rename, so a file made meanwhile is safe too).
pub fn write_atomic_new(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write_via_temp(path, bytes, false)
}

/// [`write_atomic_new`] to `DIR/STEM.EXT`, or when that is taken `STEM-2.EXT`,
/// `STEM-3.EXT`… (up to 999): never over a file. Returns the path written.
pub fn write_new_numbered(
    dir: &Path,
    stem: &str,
    ext: &str,
    bytes: &[u8],
) -> std::io::Result<PathBuf> {
    for n in 1..1000 {
        let path = if n == 1 {
            dir.join(format!("{stem}.{ext}"))
        } else {
            dir.join(format!("{stem}-{n}.{ext}"))
        };
        match write_atomic_new(&path, bytes) {
            Ok(()) => return Ok(path),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e),
        }
    }
    Err(std::io::Error::new(
        std::io::ErrorKind::AlreadyExists,
        format!("{stem}.{ext} and 998 numbered names are taken"),
    ))
}

fn write_via_temp(path: &Path, bytes: &[u8], replace: bool) -> std::io::Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    tmp.write_all(bytes)?;
    let permissions = match std::fs::metadata(path) {
        Ok(meta) => Some(meta.permissions()),
        Err(_) => default_permissions(),
    };
    if let Some(permissions) = permissions {
        tmp.as_file().set_permissions(permissions)?;
    }
    tmp.as_file().sync_all()?;
    if replace {
        tmp.persist(path).map_err(|e| e.error)?;
    } else {
        tmp.persist_noclobber(path).map_err(|e| e.error)?;
    }
    Ok(())
}

/// The permissions of a new file the user saves: readable by all, writable by its owner
/// (elsewhere than Unix, what the system gives a new file).
fn default_permissions() -> Option<std::fs::Permissions> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        Some(std::fs::Permissions::from_mode(0o644))
    }
    #[cfg(not(unix))]
    {
        None
    }
}

/// `FILE.EXT`, then `FILE.EXT2`, `FILE.EXT3`…: the names a kept file may take.
fn kept_names(path: &Path, ext: &str) -> impl Iterator<Item = PathBuf> {
    let first = path.with_extension(ext);
    let rest = (2..10_000).map(move |n| path.with_extension(format!("{ext}{n}")));
    std::iter::once(first).chain(rest)
}

/// Move `path` aside to `FILE.EXT` (or `FILE.EXT2`, …), to a name that is free when the
/// move happens: never over another file, even one made meanwhile. Returns the name the
/// file really has now.
pub fn move_aside(path: &Path, ext: &str) -> std::io::Result<PathBuf> {
    for target in kept_names(path, ext) {
        match rename_new(path, &target) {
            Ok(()) => return Ok(target),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e),
        }
    }
    Err(std::io::Error::other("no free name to keep the file under"))
}

/// Copy `path` to `FILE.EXT` (or `FILE.EXT2`, …), a name free when the copy is made, with
/// the original's permissions. Returns the name of the copy.
pub fn copy_aside(path: &Path, ext: &str) -> std::io::Result<PathBuf> {
    let bytes = std::fs::read(path)?;
    let permissions = std::fs::metadata(path)?.permissions();
    for target in kept_names(path, ext) {
        match write_atomic_new(&target, &bytes) {
            Ok(()) => {
                std::fs::set_permissions(&target, permissions)?;
                return Ok(target);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e),
        }
    }
    Err(std::io::Error::other("no free name to keep the file under"))
}

/// Rename `from` to `to`, failing with `AlreadyExists` instead of replacing `to`: a hard
/// link (which never replaces) then removing `from`; where links are not supported, a
/// check just before the rename.
pub fn rename_new(from: &Path, to: &Path) -> std::io::Result<()> {
    match std::fs::hard_link(from, to) {
        Ok(()) => std::fs::remove_file(from),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Err(e),
        Err(_) if to.exists() || is_link(to) => Err(std::io::Error::new(
            std::io::ErrorKind::AlreadyExists,
            "the target exists",
        )),
        Err(_) => std::fs::rename(from, to),
    }
}

/// A path for messages: lossy where it is not UTF-8, control characters escaped.
#[must_use]
pub fn shown(path: &Path) -> String {
    let text = path.to_string_lossy();
    if text.chars().any(char::is_control) {
        text.chars()
            .flat_map(|c| {
                if c.is_control() {
                    c.escape_default().collect::<Vec<_>>()
                } else {
                    vec![c]
                }
            })
            .collect()
    } else {
        text.into_owned()
    }
}

/// A folder inside a profile that may not be used, or could not be read or made.
#[derive(Debug, thiserror::Error)]
pub enum DirError {
    /// What is at the path could not be read.
    #[error("cannot read {}: {source}", shown(path))]
    Read {
        /// The folder.
        path: PathBuf,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// A symbolic link stands in its place (links inside a profile are never followed).
    #[error(
        "{} is a symbolic link, and links inside the profile are not followed (Tokensmith would write, rename or move files wherever it points); replace it with a real folder: move the link away and its files into a new folder of that name",
        shown(path)
    )]
    Link {
        /// The folder.
        path: PathBuf,
    },
    /// Something else than a folder stands in its place.
    #[error(
        "{} is {kind}, not a folder; move it away so Tokensmith can make the folder",
        shown(path)
    )]
    NotAFolder {
        /// The folder.
        path: PathBuf,
        /// What is there (`a file`, `a named pipe`, …).
        kind: &'static str,
    },
    /// The folder could not be made.
    #[error("cannot make {}: {source}", shown(path))]
    Make {
        /// The folder.
        path: PathBuf,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
}

/// Whether the folder `path` inside a profile may be used: a real folder, or not there
/// yet. A link (or a file) in its place is refused with what to do: links inside the
/// profile are never followed, so nothing is written, renamed or moved outside it.
pub fn check_profile_dir(path: &Path) -> Result<(), DirError> {
    let path_buf = || path.to_path_buf();
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(source) => Err(DirError::Read {
            path: path_buf(),
            source,
        }),
        Ok(meta) if meta.file_type().is_symlink() => Err(DirError::Link { path: path_buf() }),
        Ok(meta) if !meta.is_dir() => Err(DirError::NotAFolder {
            path: path_buf(),
            kind: kind_name(meta.file_type()),
        }),
        Ok(_) => Ok(()),
    }
}

/// [`check_profile_dir`], then make the folder (one level: its parent must be there).
pub fn make_profile_dir(path: &Path) -> Result<(), DirError> {
    check_profile_dir(path)?;
    match std::fs::create_dir(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => check_profile_dir(path),
        Err(source) => Err(DirError::Make {
            path: path.to_path_buf(),
            source,
        }),
    }
}

/// Flush the folder `dir` itself (its entries: names made, renamed or removed) to disk.
/// A no-op where folders cannot be opened as files.
pub fn sync_dir(dir: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        std::fs::File::open(dir)?.sync_all()
    }
    #[cfg(not(unix))]
    {
        let _ = dir;
        Ok(())
    }
}

/// Flush everything written under `dir` (the files `files` and the folders that hold
/// them) to disk at once: on Linux one `syncfs` of the file system `dir` is on, elsewhere
/// each file then each folder. Cheaper than a flush per file as it is written: the disk
/// sees one barrier, not one per file.
pub fn sync_tree(dir: &Path, files: &[PathBuf]) -> std::io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd as _;
        let _ = files;
        let handle = std::fs::File::open(dir)?;
        // The crate's one `unsafe` outside src/script/raw: no safe binding of `syncfs`
        // exists in the standard library or a dependency, and the call is one line.
        #[allow(unsafe_code)]
        // SAFETY: `syncfs` takes an open descriptor, which `handle` keeps open for the call.
        let failed = unsafe { libc::syncfs(handle.as_raw_fd()) } != 0;
        if failed {
            return Err(std::io::Error::last_os_error());
        }
        Ok(())
    }
    #[cfg(not(target_os = "linux"))]
    {
        let mut folders = std::collections::BTreeSet::new();
        for f in files {
            std::fs::File::open(f)?.sync_all()?;
            if let Some(p) = f.parent() {
                folders.insert(p.to_path_buf());
            }
        }
        for d in folders.iter().rev() {
            sync_dir(d)?;
        }
        sync_dir(dir)
    }
}

/// The calendar date of a day counted from 1970-01-01 (the proleptic Gregorian
/// calendar, H. Hinnant's days-to-civil): file names and expiry dates in UTC.
#[must_use]
pub fn civil_date(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (
        year,
        u32::try_from(month).unwrap_or(1),
        u32::try_from(day).unwrap_or(1),
    )
}

#[cfg(test)]
mod civil_tests {
    #[test]
    fn civil_dates_match_the_calendar() {
        assert_eq!(super::civil_date(0), (1970, 1, 1));
        assert_eq!(super::civil_date(11_016), (2000, 2, 29));
        assert_eq!(super::civil_date(20_782), (2026, 11, 25));
    }
}
