//! The base content shipped inside the binary (embedded at build time from
//! `content/base` by `build.rs`), so an installed `tokensmith` plays the classic game from
//! any folder.
//!
//! The loader reads packs from folders (for its diagnostics and live reload), so the
//! shipped files are unpacked once into a folder of their own, named by their hash, in
//! the platform's cache folder (`unpack`); a folder that is there already with the same
//! hash is used as it is. `--content DIR` (a designer's own base content) and a
//! `content/` folder in the working folder (a checkout of the source) take precedence,
//! as the command line's `content_folder` decides.
//!
//! Must not: write anywhere but its own hash-named folder, or use a folder whose files
//! differ from the shipped ones.

use std::path::{Path, PathBuf};

include!(concat!(env!("OUT_DIR"), "/shipped_content.rs"));

/// The hash of the shipped files (their paths and bytes), in hex: names their folder.
#[must_use]
pub fn hash() -> String {
    use sha2::Digest as _;
    let mut h = sha2::Sha256::new();
    for (rel, bytes) in FILES {
        h.update(rel.as_bytes());
        h.update([0]);
        h.update((bytes.len() as u64).to_le_bytes());
        h.update(bytes);
    }
    hex::encode(h.finalize())
}

/// The folder the shipped content is unpacked into under `cache`.
#[must_use]
pub fn folder_in(cache: &Path) -> PathBuf {
    cache.join(format!("content-{}", &hash()[..16]))
}

/// Whether `dir` holds exactly the shipped files.
fn matches(dir: &Path) -> bool {
    FILES.iter().all(|(rel, bytes)| {
        crate::fsutil::read_capped(&dir.join(rel), 16 * 1024 * 1024, "a shipped content file")
            .is_ok_and(|b| b == *bytes)
    })
}

/// The shipped content unpacked under `cache` (made when missing or different): the
/// folder to pass as the content folder. Written into a temporary sibling first and
/// renamed into place, so a crash or a second process never leaves a half folder in use.
pub fn unpack(cache: &Path) -> std::io::Result<PathBuf> {
    let dir = folder_in(cache);
    if matches(&dir) {
        return Ok(dir);
    }
    std::fs::create_dir_all(cache)?;
    let staging = tempfile::Builder::new()
        .prefix(".content-")
        .tempdir_in(cache)?;
    for (rel, bytes) in FILES {
        let path = staging.path().join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(&path, bytes)?;
    }
    if dir.exists() {
        // Different from what this build ships (changed by hand, or half written by an
        // old build): replaced.
        std::fs::remove_dir_all(&dir)?;
    }
    match std::fs::rename(staging.path(), &dir) {
        Ok(()) => {
            let _ = staging.keep();
            Ok(dir)
        }
        // Another process put the same files in place first.
        Err(_) if matches(&dir) => Ok(dir),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_files_are_the_base_pack_and_unpack_once() {
        assert!(FILES.iter().any(|(rel, _)| *rel == "base/pack.yaml"));
        let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let dir = unpack(tmp.path()).unwrap_or_else(|e| panic!("{e}"));
        assert!(dir.join("base/pack.yaml").is_file());
        // A changed file is put back.
        std::fs::write(dir.join("base/pack.yaml"), "changed").unwrap_or_else(|e| panic!("{e}"));
        let again = unpack(tmp.path()).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(again, dir);
        assert!(matches(&dir));
    }
}
