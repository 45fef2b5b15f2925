//! Pack archives: a reproducible `.zip` of a pack's folder (`pack build`), and the
//! checked reading of any archive before a byte of it is unpacked (`pack install`).
//!
//! Built archives hold one folder named after the pack id, its files in byte order of
//! their paths, no folder entries, every timestamp 1980-01-01 00:00, permissions
//! `rw-r--r--` and deflate compression: the same files give the same bytes.
//!
//! `check` reads every entry before anything is unpacked (after `zipcheck` has held the
//! central directory to the local headers, the reader must see the same entries), and
//! [`Checked::unpack`] creates each file new, holds it to its declared size and returns the
//! content hash of what was written.

use std::io::{Cursor, Read as _, Write as _};
use std::path::{Path, PathBuf};

use sha2::{Digest as _, Sha256};
use zip::write::SimpleFileOptions;
use zip::{CompressionMethod, DateTime, ZipArchive, ZipWriter};

use super::{CAPS, PackError, bad_component, check_case_clashes, feed, is_left_out, walk};

/// A built archive.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Built {
    /// The pack's id.
    pub id: String,
    /// Its version.
    pub version: String,
    /// The archive's bytes.
    pub bytes: Vec<u8>,
    /// The pack's content hash.
    pub hash: String,
    /// How many files it holds.
    pub files: usize,
    /// The warnings the pack's validation gave (errors refuse the build).
    pub warnings: Vec<String>,
}

/// Build the archive of the pack in `dir`. `validate` loads the pack (with whatever it
/// needs) and returns its diagnostics as `(is_error, line)`; any error refuses the build.
pub fn build(
    dir: &Path,
    validate: impl FnOnce(&str) -> Vec<(bool, String)>,
) -> Result<Built, PackError> {
    let pack = super::manifest(dir)?;
    let id = pack.id().to_string();
    let diagnostics = validate(&id);
    let errors: Vec<String> = diagnostics
        .iter()
        .filter(|(e, _)| *e)
        .map(|(_, l)| l.clone())
        .collect();
    if !errors.is_empty() {
        return Err(PackError::Invalid(errors));
    }
    let warnings = diagnostics
        .into_iter()
        .filter(|(e, _)| !*e)
        .map(|(_, l)| l)
        .collect();
    let options = SimpleFileOptions::default()
        .compression_method(CompressionMethod::Deflated)
        .compression_level(Some(6))
        .last_modified_time(DateTime::default())
        .unix_permissions(0o644);
    let mut zip = ZipWriter::new(Cursor::new(Vec::new()));
    let zip_err = |source: zip::result::ZipError| PackError::Zip {
        doing: "write the archive".into(),
        source,
    };
    let (hash, count) = walk(dir, |f, bytes| {
        zip.start_file(format!("{id}/{}", f.rel), options)
            .map_err(zip_err)?;
        zip.write_all(bytes)
            .map_err(|e| PackError::from_io("write the archive", e))
    })?;
    let bytes = zip.finish().map_err(zip_err)?.into_inner();
    Ok(Built {
        id,
        version: pack.version.to_string(),
        bytes,
        hash,
        files: count,
        warnings,
    })
}

/// Build the archive of `dir` and write it atomically to `out` (default:
/// `ID-VERSION.zip` in the current folder); the archive and where it went.
pub fn build_to(
    dir: &Path,
    out: Option<&Path>,
    validate: impl FnOnce(&str) -> Vec<(bool, String)>,
) -> Result<(Built, PathBuf), PackError> {
    let built = build(dir, validate)?;
    let out = out.map_or_else(
        || PathBuf::from(format!("{}-{}.zip", built.id, built.version)),
        Path::to_path_buf,
    );
    crate::fsutil::write_atomic(&out, &built.bytes)
        .map_err(|e| PackError::from_io(format!("write {}", crate::fsutil::shown(&out)), e))?;
    Ok((built, out))
}

/// An archive that passed every check, ready to unpack.
pub struct Checked {
    zip: ZipArchive<Cursor<Vec<u8>>>,
    /// The entries to unpack: index in the archive, path within the pack, declared size.
    entries: Vec<(usize, String, u64)>,
}

/// The kind of a zip entry from its Unix mode, when it is not a file or folder.
fn special_kind(mode: u32) -> Option<&'static str> {
    match mode & 0o170_000 {
        0 | 0o100_000 | 0o040_000 => None,
        0o120_000 => Some("a symbolic link"),
        0o020_000 | 0o060_000 => Some("a device"),
        0o010_000 => Some("a pipe"),
        0o140_000 => Some("a socket"),
        _ => Some("of an unknown kind"),
    }
}

/// Why an entry name (already UTF-8) is unsafe, or `None`.
fn bad_name(name: &str) -> Option<String> {
    if name.starts_with('/') || name.starts_with('\\') {
        return Some("is an absolute path".into());
    }
    let b = name.as_bytes();
    if b.len() >= 2 && b[0].is_ascii_alphabetic() && b[1] == b':' {
        return Some("starts with a drive letter".into());
    }
    if name.contains('\\') {
        return Some("has a backslash; paths in archives use '/'".into());
    }
    if name.split('/').any(|c| c == "..") {
        return Some("climbs out of the pack with '..'".into());
    }
    if name.len() > CAPS.path_bytes + 64 {
        return Some(format!("is longer than {} bytes", CAPS.path_bytes + 64));
    }
    None
}

/// Open the archive at `path` and check every entry, without unpacking anything: the
/// archive's size, names (`..`, absolute and drive paths, backslashes, not UTF-8, case
/// clashes, duplicates), kinds (links, devices), encryption, compression methods, and the
/// caps on files, sizes and compression ratio. The pack is the archive's root when it
/// has a `pack.yaml`, else its one top folder.
pub fn check(path: &Path) -> Result<Checked, PackError> {
    let bytes =
        crate::fsutil::read_capped(path, CAPS.archive_bytes, "a pack archive").map_err(|e| {
            PackError::TooBig {
                what: format!("cannot read {}: {e}", crate::fsutil::shown(path)),
            }
        })?;
    check_bytes(bytes)
}

/// [`check`] for an archive already in memory (one received over the network).
pub fn check_bytes(bytes: Vec<u8>) -> Result<Checked, PackError> {
    let caps = CAPS;
    if bytes.len() as u64 > caps.archive_bytes {
        return Err(PackError::TooBig {
            what: format!(
                "the archive is {} bytes, over the {}-byte cap",
                bytes.len(),
                caps.archive_bytes
            ),
        });
    }
    // The directory read byte by byte first: names twice (ZIP64 or not), local headers
    // that disagree, overlapping entries. The zip reader must then see the same entries.
    let records = super::zipcheck::records(&bytes, caps.files * 2)?;
    let mut raw_names = std::collections::HashSet::new();
    for r in &records {
        if !raw_names.insert(r.name.as_slice()) {
            return Err(PackError::BadName {
                name: crate::rules::echo(&String::from_utf8_lossy(&r.name)),
                reason: "appears twice in the archive; which copy unpacks would depend on the tool"
                    .into(),
            });
        }
    }
    drop(raw_names);
    let mut zip = ZipArchive::new(Cursor::new(bytes)).map_err(|source| PackError::Unzip {
        entry: None,
        source,
    })?;
    if zip.len() != records.len() {
        return Err(PackError::BadArchive(format!(
            "the archive's directory has {} entries but reads as {}",
            records.len(),
            zip.len()
        )));
    }
    let mut names: Vec<(usize, String, u64, bool)> = Vec::new();
    let mut total = 0u64;
    for i in 0..zip.len() {
        let entry = zip.by_index_raw(i).map_err(|source| PackError::Unzip {
            entry: None,
            source,
        })?;
        if records.get(i).is_none_or(|r| {
            r.name != entry.name_raw()
                || r.offset != entry.header_start()
                || r.size != entry.size()
                || r.packed != entry.compressed_size()
        }) {
            return Err(PackError::BadArchive(
                "the archive's directory reads differently to different tools".into(),
            ));
        }
        let Ok(name) = std::str::from_utf8(entry.name_raw()) else {
            return Err(PackError::BadName {
                name: String::from_utf8_lossy(entry.name_raw())
                    .escape_debug()
                    .to_string(),
                reason: "is not valid UTF-8".into(),
            });
        };
        let name = name.to_string();
        let shown = crate::rules::echo(&name);
        if let Some(reason) = bad_name(&name) {
            return Err(PackError::BadName {
                name: shown,
                reason,
            });
        }
        if let Some(kind) = entry.unix_mode().and_then(special_kind) {
            return Err(PackError::NotAFile {
                name: shown,
                kind: kind.into(),
            });
        }
        if entry.encrypted() {
            return Err(PackError::Refused(format!(
                "entry {shown} is encrypted; pack archives are not"
            )));
        }
        let is_dir = entry.is_dir();
        if !is_dir
            && !matches!(
                entry.compression(),
                CompressionMethod::Stored | CompressionMethod::Deflated
            )
        {
            return Err(PackError::Refused(format!(
                "entry {shown} uses a compression method other than stored or deflate"
            )));
        }
        let size = entry.size();
        if !is_dir {
            if size > caps.file_bytes {
                return Err(PackError::TooBig {
                    what: format!(
                        "entry {shown} unpacks to {size} bytes; a file in a pack may have at most {}",
                        caps.file_bytes
                    ),
                });
            }
            total = total.saturating_add(size);
            if total > caps.total_bytes {
                return Err(PackError::TooBig {
                    what: format!(
                        "the archive unpacks to more than {} bytes",
                        caps.total_bytes
                    ),
                });
            }
            let packed = entry.compressed_size().max(1);
            if size >= caps.ratio_from && size / packed > caps.ratio {
                return Err(PackError::TooBig {
                    what: format!(
                        "entry {shown} is compressed {}:1; more than {}:1 is refused as a zip bomb",
                        size / packed,
                        caps.ratio
                    ),
                });
            }
        }
        names.push((i, name.trim_end_matches('/').to_string(), size, is_dir));
    }
    // macOS adds `__MACOSX/` resource forks to archives it makes: never part of a pack.
    names.retain(|(_, n, _, _)| n != "__MACOSX" && !n.starts_with("__MACOSX/"));
    let root_manifest = names.iter().any(|(_, n, _, d)| !d && n == "pack.yaml");
    let prefix = if root_manifest {
        String::new()
    } else {
        let tops: std::collections::BTreeSet<&str> = names
            .iter()
            .map(|(_, n, _, _)| n.split('/').next().unwrap_or_default())
            .collect();
        match tops.into_iter().collect::<Vec<_>>()[..] {
            [top]
                if names
                    .iter()
                    .any(|(_, n, _, d)| !d && *n == format!("{top}/pack.yaml")) =>
            {
                format!("{top}/")
            }
            _ => {
                return Err(PackError::Refused(
                    "the archive holds no pack: it needs a pack.yaml at its root or in its one top folder".into(),
                ));
            }
        }
    };
    let mut entries = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for (i, name, size, is_dir) in names {
        let Some(rel) = name.strip_prefix(&prefix) else {
            continue;
        };
        if rel.is_empty() {
            continue;
        }
        let shown = crate::rules::echo(&name);
        for part in rel.split('/') {
            if let Some(reason) = bad_component(part) {
                return Err(PackError::BadName {
                    name: shown,
                    reason: reason.into(),
                });
            }
        }
        if !seen.insert(rel.to_string()) {
            return Err(PackError::BadName {
                name: shown,
                reason: "appears twice in the archive".into(),
            });
        }
        if is_dir || rel.split('/').any(is_left_out) {
            continue;
        }
        if rel.len() > caps.path_bytes {
            return Err(PackError::BadName {
                name: shown,
                reason: format!("is longer than {} bytes within the pack", caps.path_bytes),
            });
        }
        // The loader refuses folders nested deeper than this: such a pack would install
        // and then fail every command that plays.
        if rel.matches('/').count() > caps.depth {
            return Err(PackError::TooBig {
                what: format!(
                    "entry {shown}: folders nest more than {} deep; a pack's folders may nest at most {} deep",
                    caps.depth, caps.depth
                ),
            });
        }
        entries.push((i, rel.to_string(), size));
    }
    if entries.len() > caps.files {
        return Err(PackError::TooBig {
            what: format!("the pack has more than {} files", caps.files),
        });
    }
    entries.sort_by(|a, b| a.1.as_bytes().cmp(b.1.as_bytes()));
    check_case_clashes(entries.iter().map(|(_, r, _)| r.as_str()))?;
    // A file and a folder of the same name cannot both be unpacked.
    for w in entries.windows(2) {
        if w[1].1.starts_with(&format!("{}/", w[0].1)) {
            return Err(PackError::BadName {
                name: crate::rules::echo(&w[0].1),
                reason: "is both a file and a folder".into(),
            });
        }
    }
    Ok(Checked { zip, entries })
}

impl Checked {
    /// The pack the archive declares: its `pack.yaml` alone is read (nothing else is
    /// unpacked), written into the empty folder `scratch` and checked as an installed
    /// pack's manifest is. What an index's signed entry says of a pack is compared with
    /// this before the archive is unpacked.
    pub fn manifest(
        &mut self,
        scratch: &Path,
    ) -> Result<crate::content::discover::Pack, PackError> {
        let Some(&(i, _, size)) = self.entries.iter().find(|(_, rel, _)| rel == "pack.yaml") else {
            return Err(PackError::Refused(
                "the archive holds no pack: it has no pack.yaml".into(),
            ));
        };
        let bytes = self.read_entry(i, "pack.yaml", size)?;
        write_new(&scratch.join("pack.yaml"), "pack.yaml", &bytes)?;
        super::manifest(scratch)
    }

    /// Entry `i` (`shown` in messages) inflated, no more than its declared `size`, which
    /// it must hold exactly.
    fn read_entry(&mut self, i: usize, shown: &str, size: u64) -> Result<Vec<u8>, PackError> {
        let mut entry = self.zip.by_index(i).map_err(|source| PackError::Unzip {
            entry: Some(shown.to_string()),
            source,
        })?;
        let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
        (&mut entry)
            .take(size.saturating_add(1))
            .read_to_end(&mut bytes)
            .map_err(|source| PackError::Inflate {
                entry: shown.to_string(),
                source,
            })?;
        if bytes.len() as u64 != size {
            return Err(PackError::BadArchive(format!(
                "entry {shown} holds another size than the archive declares"
            )));
        }
        Ok(bytes)
    }

    /// Unpack into `dir` (an empty folder): every file created new, its size held to
    /// what the archive declared, all flushed to disk at once when written. Returns the
    /// pack's content hash.
    pub fn unpack(mut self, dir: &Path) -> Result<String, PackError> {
        let mut hasher = Sha256::new();
        let mut written = Vec::with_capacity(self.entries.len());
        for (i, rel, size) in std::mem::take(&mut self.entries) {
            let shown = crate::rules::echo(&rel);
            let bytes = self.read_entry(i, &shown, size)?;
            feed(&mut hasher, &rel, &bytes);
            let path = dir.join(&rel);
            write_new(&path, &rel, &bytes)?;
            written.push(path);
        }
        crate::fsutil::sync_tree(dir, &written)
            .map_err(|e| PackError::from_io("flush the unpacked files to disk", e))?;
        Ok(hex::encode(hasher.finalize()))
    }
}

/// Write a new file (never over one), its folders made first; `rel` names it in
/// messages. Not flushed: see [`crate::fsutil::sync_tree`].
pub(crate) fn write_new(path: &Path, rel: &str, bytes: &[u8]) -> Result<(), PackError> {
    let shown = crate::rules::echo(rel);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .map_err(|e| PackError::from_io(format!("make the folder of {shown}"), e))?;
    }
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .map_err(|e| PackError::from_io(format!("write {shown}"), e))?;
    file.write_all(bytes)
        .map_err(|e| PackError::from_io(format!("write {shown}"), e))
}
