//! The author's side of an index: publishing a version (its archive, its signed entry,
//! the author's public key, the summary) and yanking one.

use std::path::Path;

use ed25519_dalek::SigningKey;

use super::{CAPS, Entry, IndexError, IndexFile, PackFile, Requires, Summary, SummaryFile, keys};

/// What [`publish`] did.
#[derive(Debug)]
pub struct Published {
    /// The pack's id.
    pub id: String,
    /// The version.
    pub version: String,
    /// Whether that version was there already with the same content (nothing written).
    pub already: bool,
    /// The entry as it stands in the index.
    pub entry: Entry,
}

/// What a pack brings to [`publish`]: its built archive and its manifest's words.
pub struct Release<'a> {
    /// The archive [`crate::packs::build`] made.
    pub built: &'a crate::packs::archive::Built,
    /// The pack's name.
    pub name: String,
    /// Its description.
    pub description: String,
    /// What it requires.
    pub requires: Vec<Requires>,
}

fn write(root: &Path, rel: &str, bytes: &[u8]) -> Result<(), IndexError> {
    let path = root.join(rel);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .map_err(|e| IndexError::io(format!("make {}", crate::fsutil::shown(parent)), e))?;
    }
    crate::fsutil::write_atomic(&path, bytes)
        .map_err(|e| IndexError::io(format!("write {}", crate::fsutil::shown(&path)), e))
}

fn json(value: &impl serde::Serialize) -> Result<Vec<u8>, IndexError> {
    serde_json::to_vec_pretty(value)
        .map_err(|e| IndexError::io("write the index", std::io::Error::other(e)))
}

/// Make `root` an index when it is a new or empty folder; check it is one otherwise.
fn open_or_make(root: &Path) -> Result<(), IndexError> {
    let empty = match std::fs::read_dir(root) {
        Ok(mut entries) => entries.next().is_none(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => true,
        Err(e) => {
            return Err(IndexError::io(
                format!("read {}", crate::fsutil::shown(root)),
                e,
            ));
        }
    };
    if empty {
        let index = IndexFile {
            format: super::FORMAT.into(),
            version: super::VERSION,
        };
        write(root, "index.json", &json(&index)?)?;
        write(root, "summary.json", &json(&SummaryFile::default())?)?;
        return Ok(());
    }
    if !root.join("index.json").exists() {
        return Err(IndexError::Refused(format!(
            "{} is not an index (it has no index.json) and is not empty: give an index folder, or a new one",
            crate::fsutil::shown(root)
        )));
    }
    super::read_index(&folder(root)).map(|_| ())
}

/// Publish `release`, signed with `key`, into the index folder `root` (made when new):
/// its archive, its entry, the key's public half and the summary. A version that is
/// published already with the same archive is left as it is; with other content it is
/// refused (publish a new version). A pack id whose versions another key signed is
/// refused too.
pub fn publish(
    root: &Path,
    release: &Release<'_>,
    key: &SigningKey,
) -> Result<Published, IndexError> {
    let built = release.built;
    open_or_make(root)?;
    let public = key.verifying_key();
    let key_id = keys::key_id(&public);
    let mut file = super::read_pack(&folder(root), &built.id)?.unwrap_or_else(|| PackFile {
        id: built.id.clone(),
        name: String::new(),
        description: String::new(),
        versions: Vec::new(),
    });
    let sha256 = super::sha256(&built.bytes);
    if let Some(other) = file.versions.iter().find(|e| e.key != key_id) {
        return Err(IndexError::Refused(format!(
            "'{}' in this index is signed by the key {} (version {}), not by yours ({key_id}): only its author publishes it",
            built.id, other.key, other.version
        )));
    }
    if let Some(existing) = file.versions.iter().find(|e| e.version == built.version) {
        if existing.sha256 == sha256 && existing.hash == built.hash {
            return Ok(Published {
                id: built.id.clone(),
                version: built.version.clone(),
                already: true,
                entry: existing.clone(),
            });
        }
        return Err(IndexError::Refused(format!(
            "{} {} is published already with other content (hash {}): raise the version in pack.yaml",
            built.id,
            built.version,
            crate::packs::short(&existing.hash)
        )));
    }
    if file.versions.len() >= CAPS.versions {
        return Err(IndexError::Refused(format!(
            "'{}' has {} versions in this index, the most one may hold",
            built.id, CAPS.versions
        )));
    }
    let mut entry = Entry {
        version: built.version.clone(),
        requires: release.requires.clone(),
        hash: built.hash.clone(),
        sha256,
        size: built.bytes.len() as u64,
        archive: super::archive_path(&built.id, &built.version),
        key: key_id.clone(),
        signature: String::new(),
        yanked: false,
    };
    entry.signature = keys::sign(key, &entry.message(&built.id));
    // The archive and the key before the entry that points at them.
    write(root, &entry.archive, &built.bytes)?;
    let key_rel = format!("keys/{key_id}.pub");
    if !root.join(&key_rel).exists() {
        write(
            root,
            &key_rel,
            format!("{}\n", keys::public_hex(&public)).as_bytes(),
        )?;
    }
    file.name = truncate(&release.name, CAPS.name_chars);
    file.description = truncate(&release.description, CAPS.description_chars);
    file.versions.push(entry.clone());
    file.versions.sort_by_key(Entry::semver);
    write(root, &format!("packs/{}.json", built.id), &json(&file)?)?;
    write_summary(root)?;
    Ok(Published {
        id: built.id.clone(),
        version: built.version.clone(),
        already: false,
        entry,
    })
}

/// Mark `id` at `version` in the index folder `root` as yanked (or, with `undo`, not):
/// only the holder of the key that signed it may. Whether it changed.
pub fn yank(
    root: &Path,
    id: &str,
    version: &str,
    undo: bool,
    key: &SigningKey,
) -> Result<bool, IndexError> {
    super::read_index(&folder(root))?;
    let mut file = super::read_pack(&folder(root), id)?.ok_or_else(|| {
        IndexError::Refused(format!("this index has no pack '{}'", super::clean(id)))
    })?;
    let key_id = keys::key_id(&key.verifying_key());
    let listed: Vec<String> = file.versions.iter().map(|e| e.version.clone()).collect();
    let entry = file
        .versions
        .iter_mut()
        .find(|e| e.version == version)
        .ok_or_else(|| {
            IndexError::Refused(format!(
                "'{id}' has no version {} in this index (it has {})",
                super::clean(version),
                listed.join(", ")
            ))
        })?;
    if entry.key != key_id {
        return Err(IndexError::Refused(format!(
            "{id} {version} is signed by the key {}, not by yours ({key_id}): only its author yanks it",
            entry.key
        )));
    }
    if entry.yanked != undo {
        return Ok(false);
    }
    entry.yanked = !undo;
    write(root, &format!("packs/{id}.json"), &json(&file)?)?;
    write_summary(root)?;
    Ok(true)
}

/// Write `summary.json` and the web page again from every `packs/*.json` of the index.
fn write_summary(root: &Path) -> Result<(), IndexError> {
    let dir = root.join("packs");
    let mut ids: Vec<String> = std::fs::read_dir(&dir)
        .map_err(|e| IndexError::io(format!("read {}", crate::fsutil::shown(&dir)), e))?
        .filter_map(Result::ok)
        .filter_map(|e| {
            e.file_name()
                .to_str()
                .and_then(|n| n.strip_suffix(".json"))
                .map(str::to_string)
        })
        .filter(|id| crate::content::discover::valid_id(id))
        .take(CAPS.packs + 1)
        .collect();
    if ids.len() > CAPS.packs {
        return Err(IndexError::Refused(format!(
            "the index holds more than {} packs, the most one may list",
            CAPS.packs
        )));
    }
    ids.sort();
    let mut summary = SummaryFile::default();
    let mut files = Vec::new();
    for id in ids {
        let Some(file) = super::read_pack(&folder(root), &id)? else {
            continue;
        };
        files.push(file.clone());
        summary.packs.push(Summary {
            latest: file
                .versions
                .iter()
                .filter(|e| !e.yanked)
                .max_by_key(|e| e.semver())
                .map(|e| e.version.clone()),
            versions: file.versions.iter().map(|e| e.version.clone()).collect(),
            id: file.id,
            name: file.name,
            description: file.description,
        });
    }
    write(root, "summary.json", &json(&summary)?)?;
    write(root, "index.html", super::html::page(&files).as_bytes())
}

fn folder(root: &Path) -> super::Location {
    super::Location::folder(root)
}

/// `text` cut to `chars` characters.
fn truncate(text: &str, chars: usize) -> String {
    text.chars().take(chars).collect()
}
