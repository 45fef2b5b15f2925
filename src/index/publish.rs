//! The author's side of an index: publishing a version (its archive, its signed entry,
//! the author's public key, the summary) and yanking one.
//!
//! `publish` refuses a version that exists with other content, a pack id another key signed
//! unless a key move leads to the publisher's key, links in the index folder and web
//! addresses (publish into a folder, then copy it to the server); [`yank`] is signed by the
//! key that signed the entry. After each change by the owner the snapshot and timestamp
//! are signed anew.

use std::path::Path;

use ed25519_dalek::SigningKey;

use super::{CAPS, Entry, IndexError, IndexFile, PackFile, Requires, Summary, SummaryFile, keys};
use super::{index_json as json, write_file as write};

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
    /// Whether the index's snapshot was signed again.
    pub signing: Signing,
}

/// What became of the index's snapshot and timestamp after a change.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Signing {
    /// The publisher owns the index: a new snapshot (its version) and timestamp (its
    /// expiry, seconds since 1970) were signed.
    Signed {
        /// The new snapshot's version.
        snapshot: u64,
        /// When the new timestamp expires.
        expires: u64,
    },
    /// Another key owns the index: players refuse the change until it signs
    /// (`tokensmith index sign FOLDER`).
    OwnerMustSign {
        /// The owner's key id.
        owner: String,
    },
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

/// Refuse an index folder whose listing folders or files are links, before anything is
/// written.
fn refuse_links(root: &Path) -> Result<(), IndexError> {
    for folder in super::INDEX_FOLDERS {
        crate::fsutil::check_profile_dir(&root.join(folder)).map_err(|e| {
            IndexError::Refused(format!(
                "{e}; an index folder's packs/, archives/ and keys/ must be real folders inside it (nothing was written)"
            ))
        })?;
    }
    for file in [
        "index.json",
        "summary.json",
        "snapshot.json",
        "timestamp.json",
        "index.html",
    ] {
        let path = root.join(file);
        if crate::fsutil::is_link(&path) {
            return Err(IndexError::Refused(format!(
                "{} is a link; an index's files must be real files inside it (nothing was written)",
                crate::fsutil::shown(&path)
            )));
        }
    }
    Ok(())
}

/// Make `root` an index owned by `key` when it is a new or empty folder; check it is
/// one otherwise (a format-1 index becomes format 2, owned by `key`). The owner's key id.
fn open_or_make(
    root: &Path,
    key: &SigningKey,
    rotations: &[keys::Rotation],
) -> Result<String, IndexError> {
    if crate::index::is_web(&root.to_string_lossy()) {
        return Err(IndexError::Refused(format!(
            "'{}' is a web address: publish into a folder, then copy or sync that folder to the web server (every file is static)",
            crate::index::clean(&root.to_string_lossy())
        )));
    }
    let owner = keys::key_id(&key.verifying_key());
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
        std::fs::create_dir_all(root)
            .map_err(|e| IndexError::io(format!("make {}", crate::fsutil::shown(root)), e))?;
        refuse_links(root)?;
        write_key(root, key)?;
        write(root, "summary.json", &json(&SummaryFile::default())?)?;
        let index = IndexFile {
            format: super::FORMAT.into(),
            version: super::VERSION,
            owner: Some(owner.clone()),
        };
        write(root, "index.json", &json(&index)?)?;
        return Ok(owner);
    }
    if !root.join("index.json").exists() {
        return Err(IndexError::Refused(format!(
            "{} is not an index (it has no index.json) and is not empty: give an index folder, or a new one",
            crate::fsutil::shown(root)
        )));
    }
    refuse_links(root)?;
    let index = super::read_index(&folder(root))?;
    // The author's key moves (`key rotate`) go in first, so players can follow them.
    for r in rotations {
        let rel = keys::Rotation::rel(&r.old);
        if !root.join(&rel).is_file() {
            write(root, &rel, &json(r)?)?;
        }
    }
    write_key(root, key)?;
    if let Some(owner) = index.owner {
        // An owner who moved keys owns the index with the new one.
        if owner != keys::key_id(&key.verifying_key())
            && keys::rotation_chain(&folder(root), &owner, &keys::key_id(&key.verifying_key()))?
                .is_some()
        {
            let moved = IndexFile {
                format: super::FORMAT.into(),
                version: super::VERSION,
                owner: Some(keys::key_id(&key.verifying_key())),
            };
            write(root, "index.json", &json(&moved)?)?;
            return Ok(keys::key_id(&key.verifying_key()));
        }
        return Ok(owner);
    }
    // A format-1 index: whoever publishes into it next becomes its owner.
    write_key(root, key)?;
    let upgraded = IndexFile {
        format: super::FORMAT.into(),
        version: super::VERSION,
        owner: Some(owner.clone()),
    };
    write(root, "index.json", &json(&upgraded)?)?;
    Ok(owner)
}

/// Write the public half of `key` into the index (once).
fn write_key(root: &Path, key: &SigningKey) -> Result<(), IndexError> {
    let public = key.verifying_key();
    let rel = format!("keys/{}.pub", keys::key_id(&public));
    if root.join(&rel).is_file() {
        return Ok(());
    }
    write(
        root,
        &rel,
        format!("{}\n", keys::public_hex(&public)).as_bytes(),
    )
}

/// After a change by `key` to the index `root` owned by `owner`: a new snapshot and
/// timestamp when `key` is the owner's; else a note that the owner must sign.
fn resign(root: &Path, key: &SigningKey, owner: &str, days: u64) -> Result<Signing, IndexError> {
    if keys::key_id(&key.verifying_key()) == owner {
        let (snapshot, timestamp) = super::fresh::sign(root, key, days)?;
        Ok(Signing::Signed {
            snapshot: snapshot.version,
            expires: timestamp.expires,
        })
    } else {
        Ok(Signing::OwnerMustSign {
            owner: owner.to_string(),
        })
    }
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
    rotations: &[keys::Rotation],
    days: u64,
) -> Result<Published, IndexError> {
    let built = release.built;
    let owner = open_or_make(root, key, rotations)?;
    let public = key.verifying_key();
    let key_id = keys::key_id(&public);
    let mut file = super::read_pack(&folder(root), &built.id)?.unwrap_or_else(|| PackFile {
        id: built.id.clone(),
        name: String::new(),
        description: String::new(),
        versions: Vec::new(),
    });
    let sha256 = super::sha256(&built.bytes);
    if let Some(other) = file.versions.last().filter(|e| e.key != key_id)
        && keys::rotation_chain(&folder(root), &other.key, &key_id)?.is_none()
    {
        return Err(IndexError::Refused(format!(
            "'{}' in this index is signed by the key {} (version {}), not by yours ({key_id}), and no key move signed by it leads to yours: only its author publishes it",
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
                signing: resign(root, key, &owner, days)?,
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
        yank_signature: None,
    };
    entry.signature = keys::sign(key, &entry.message(&built.id));
    // The archive and the key before the entry that points at them.
    write(root, &entry.archive, &built.bytes)?;
    write_key(root, key)?;
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
        signing: resign(root, key, &owner, days)?,
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
    days: u64,
) -> Result<(bool, Signing), IndexError> {
    let owner = open_or_make(root, key, &[])?;
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
    if entry.key != key_id && keys::rotation_chain(&folder(root), &entry.key, &key_id)?.is_none() {
        return Err(IndexError::Refused(format!(
            "{id} {version} is signed by the key {}, not by yours ({key_id}): only its author yanks it",
            entry.key
        )));
    }
    if entry.yanked != undo {
        return Ok((false, resign(root, key, &owner, days)?));
    }
    entry.yanked = !undo;
    entry.yank_signature = (!undo).then(|| keys::sign(key, &entry.yank_message(id)));
    write(root, &format!("packs/{id}.json"), &json(&file)?)?;
    write_summary(root)?;
    Ok((true, resign(root, key, &owner, days)?))
}

/// Put the author's revocation `r` into the index folder `root` (its signature is
/// checked by players against the index's keys).
pub fn revoke_key(root: &Path, r: &keys::Revocation) -> Result<(), IndexError> {
    let index = super::read_index(&folder(root))?;
    refuse_links(root)?;
    write(root, &keys::Revocation::rel(&r.key), &json(r)?)?;
    if index.owner.is_some() && keys::revoked(&folder(root), &r.key)? {
        return Ok(());
    }
    Err(IndexError::Refused(format!(
        "the revocation of {} does not check against this index's keys (publish into it with your current key first, so its move and public key are there)",
        r.key
    )))
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
