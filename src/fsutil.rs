//! Small file-system helpers for the edges (command line, profile).

use std::io::Write as _;
use std::path::Path;

/// Write `bytes` to `path` atomically: a temporary file in the same folder, flushed to
/// disk, then renamed over the target. A crash leaves the old file or the new one.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write_via_temp(path, bytes, true)
}

/// Like [`write_atomic`], but never replaces a file: fails with `AlreadyExists` when
/// `path` is there (checked at the rename, so a file made meanwhile is safe too).
pub fn write_atomic_new(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write_via_temp(path, bytes, false)
}

fn write_via_temp(path: &Path, bytes: &[u8], replace: bool) -> std::io::Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    tmp.write_all(bytes)?;
    tmp.as_file().sync_all()?;
    if replace {
        tmp.persist(path).map_err(|e| e.error)?;
    } else {
        tmp.persist_noclobber(path).map_err(|e| e.error)?;
    }
    Ok(())
}
