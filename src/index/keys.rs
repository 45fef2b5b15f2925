//! Authors' keys: an ed25519 signing key kept in the author's profile
//! (`PROFILE/keys/author.key`), the public keys an index carries (`keys/ID.pub`), and the
//! key each installed pack id was first signed with (`PROFILE/index-pins.json`).
//!
//! The author key is never replaced: `key rotate` makes a new one and keeps the move, signed
//! by the old key, for `pack publish` to put into indexes. Signatures are verified strictly
//! ([`verify`]); key moves and revocations are read from an index, and a pin follows a
//! pack's key only along a signed move.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use ed25519_dalek::{Signature, Signer as _, SigningKey, VerifyingKey};
use serde::{Deserialize, Serialize};

use super::{CAPS, IndexError, from_hex};

/// The author key's file in a profile.
#[must_use]
pub fn key_file(profile: &Path) -> PathBuf {
    profile.join("keys").join("author.key")
}

/// A public key's id: the first 16 hex digits of its SHA-256.
#[must_use]
pub fn key_id(public: &VerifyingKey) -> String {
    super::sha256(public.as_bytes())[..16].to_string()
}

/// Whether `id` has the shape of a key id.
#[must_use]
pub fn valid_key_id(id: &str) -> bool {
    id.len() == 16
        && id
            .bytes()
            .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
}

/// Make a new author key in `profile`; refused when one exists (it would orphan every
/// pack signed with it). The public key.
pub fn new_key(profile: &Path) -> Result<VerifyingKey, IndexError> {
    let path = key_file(profile);
    if path.exists() {
        return Err(IndexError::Refused(format!(
            "{} exists already: packs signed with it are tied to it, so it is never replaced (move it away first if you mean to)",
            crate::fsutil::shown(&path)
        )));
    }
    let mut seed = [0u8; 32];
    getrandom::fill(&mut seed).map_err(|e| {
        IndexError::Refused(format!("the system gives no randomness for a key: {e}"))
    })?;
    let key = SigningKey::from_bytes(&seed);
    seed.fill(0);
    let dir = profile.join("keys");
    crate::fsutil::make_profile_dir(&dir)?;
    let text = format!("{}\n", hex::encode(key.as_bytes()));
    crate::fsutil::write_atomic_new(&path, text.as_bytes())
        .map_err(|e| IndexError::io(format!("write {}", crate::fsutil::shown(&path)), e))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let _ = std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600));
    }
    Ok(key.verifying_key())
}

/// The author key of `profile`.
pub fn author_key(profile: &Path) -> Result<SigningKey, IndexError> {
    let path = key_file(profile);
    let bytes = crate::fsutil::read_capped(&path, CAPS.key_bytes, "a key file").map_err(|e| {
        if e.is_not_found() {
            IndexError::Refused(format!(
                "no author key in {}: `tokensmith key new` makes one",
                crate::fsutil::shown(&profile.join("keys"))
            ))
        } else {
            IndexError::Read {
                what: crate::fsutil::shown(&path),
                error: e.into(),
            }
        }
    })?;
    let seed = std::str::from_utf8(&bytes)
        .ok()
        .and_then(from_hex::<32>)
        .ok_or_else(|| IndexError::Bad {
            what: crate::fsutil::shown(&path),
            reason: "not a key written by `tokensmith key new` (64 hex digits)".into(),
        })?;
    Ok(SigningKey::from_bytes(&seed))
}

/// Sign `message` with `key`, in hex.
#[must_use]
pub fn sign(key: &SigningKey, message: &[u8]) -> String {
    hex::encode(key.sign(message).to_bytes())
}

/// A public key written as hex.
#[must_use]
pub fn public_hex(key: &VerifyingKey) -> String {
    hex::encode(key.as_bytes())
}

/// Read the public key `id` from the index at `loc`: it must hash to its id.
pub fn read_public(loc: &super::Location, id: &str) -> Result<VerifyingKey, IndexError> {
    if !valid_key_id(id) {
        return Err(IndexError::Refused(format!(
            "'{}' is not a key id",
            super::clean(id)
        )));
    }
    let rel = format!("keys/{id}.pub");
    let bytes = loc.need(&rel, CAPS.key_bytes, "a public key")?;
    let key = std::str::from_utf8(&bytes)
        .ok()
        .and_then(from_hex::<32>)
        .and_then(|b| VerifyingKey::from_bytes(&b).ok())
        .ok_or_else(|| IndexError::Bad {
            what: loc.shown(&rel),
            reason: "not an ed25519 public key in hex".into(),
        })?;
    if key_id(&key) != id {
        return Err(IndexError::Refused(format!(
            "{}: the key in it is not the key '{id}' (its id would be {})",
            loc.shown(&rel),
            key_id(&key)
        )));
    }
    Ok(key)
}

/// Why a signature is refused.
#[derive(Debug, thiserror::Error)]
pub enum SignatureError {
    /// It is not 64 bytes in hex.
    #[error("the signature is not 128 hex digits")]
    NotHex,
    /// It is not the key's signature of the message.
    #[error("the signature does not match the entry and its author's key")]
    Mismatch(#[source] ed25519_dalek::SignatureError),
}

/// Check `signature` (hex) of `message` by `key`.
pub fn verify(key: &VerifyingKey, message: &[u8], signature: &str) -> Result<(), SignatureError> {
    let bytes = from_hex::<64>(signature).ok_or(SignatureError::NotHex)?;
    key.verify_strict(message, &Signature::from_bytes(&bytes))
        .map_err(SignatureError::Mismatch)
}

/// The key each installed pack id was first signed with (`PROFILE/index-pins.json`),
/// and where each pack installed from an index came from.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Pins {
    /// Pack id → public key in hex.
    pub packs: BTreeMap<String, String>,
    /// Pack id → the index it was last installed from (written with its pin).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub origins: BTreeMap<String, Origin>,
}

/// Where an installed pack came from: what a lock file records, and what `pack orphans`
/// reads.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Origin {
    /// The index's name in this profile.
    pub index: String,
    /// Its folder or web address.
    pub location: String,
    /// The id of the key that signed the installed version.
    pub key: String,
    /// Whether it was installed only because another pack required it.
    #[serde(default)]
    pub requirement: bool,
}

/// The most pins a profile keeps.
const MAX_PINS: usize = 100_000;

impl Pins {
    fn path(profile: &Path) -> PathBuf {
        profile.join("index-pins.json")
    }

    /// The pins of `profile` (none when the file is missing).
    pub fn open(profile: &Path) -> Result<Pins, IndexError> {
        let path = Pins::path(profile);
        let pins: Pins = super::read_profile_json(
            &path,
            16 * 1024 * 1024,
            "the pinned keys",
            "fix or delete the file; every pack's key is then pinned again at its next install",
        )?;
        if pins.packs.len() > MAX_PINS {
            return Err(IndexError::Bad {
                what: crate::fsutil::shown(&path),
                reason: format!("more than {MAX_PINS} pins"),
            });
        }
        Ok(pins)
    }

    /// Save the pins to `profile` (atomically).
    pub fn save(&self, profile: &Path) -> Result<(), IndexError> {
        super::write_profile_json(&Pins::path(profile), self)
    }
}

/// An author's move from one key to the next (`key rotate`), signed by the old key:
/// `keys/OLD.rotation.json` in an index, `keys/rotations/OLD.json` in the author's
/// profile. A player whose pin is the old key follows it to the new one.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rotation {
    /// The old key's id.
    pub old: String,
    /// The new key's id.
    pub new: String,
    /// The new key's public half, in hex.
    pub new_public: String,
    /// The old key's signature of [`Rotation::message`], in hex.
    pub signature: String,
}

/// The most key moves a player follows from a pinned key.
pub const MAX_ROTATIONS: usize = 16;

impl Rotation {
    /// What the old key signs.
    #[must_use]
    pub fn message(&self) -> Vec<u8> {
        format!(
            "tokensmith-key-rotation 1\nold {}\nnew {}\nnew_public {}\n",
            self.old, self.new, self.new_public
        )
        .into_bytes()
    }

    /// Where an index keeps the move from `old`.
    #[must_use]
    pub fn rel(old: &str) -> String {
        format!("keys/{old}.rotation.json")
    }
}

/// A key withdrawn by its author (`key revoke`): `keys/KEY.revoked.json` in an index,
/// signed by the key itself or by a key it moved to. Nothing it signed is installed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Revocation {
    /// The revoked key's id.
    pub key: String,
    /// The id of the key that signed this (the revoked key, or one it moved to).
    pub by: String,
    /// The signature of [`Revocation::message`] by `by`, in hex.
    pub signature: String,
}

impl Revocation {
    /// What `by` signs.
    #[must_use]
    pub fn message(&self) -> Vec<u8> {
        format!(
            "tokensmith-key-revocation 1\nkey {}\nby {}\n",
            self.key, self.by
        )
        .into_bytes()
    }

    /// Where an index keeps the revocation of `key`.
    #[must_use]
    pub fn rel(key: &str) -> String {
        format!("keys/{key}.revoked.json")
    }
}

/// A key statement (a move or a revocation) of the index at `loc`, capped and parsed;
/// `None` when the index has none.
fn read_statement<T: serde::de::DeserializeOwned>(
    loc: &super::Location,
    rel: &str,
    what: &'static str,
) -> Result<Option<T>, IndexError> {
    let Some(bytes) = loc.read(rel, CAPS.key_bytes * 2, what)? else {
        return Ok(None);
    };
    super::parse_json(&bytes, &loc.shown(rel)).map(Some)
}

/// The key move from `old` in the index at `loc`, checked: signed by `old` (read from
/// the index, or `old_public` when given), naming a new key whose public half hashes to
/// its id. `None` when the index has none.
fn read_rotation(
    loc: &super::Location,
    old: &str,
) -> Result<Option<(Rotation, VerifyingKey)>, IndexError> {
    if !valid_key_id(old) {
        return Ok(None);
    }
    let rel = Rotation::rel(old);
    let Some(rotation) = read_statement::<Rotation>(loc, &rel, "a key move")? else {
        return Ok(None);
    };
    let what = loc.shown(&rel);
    let bad = |reason: &str| IndexError::Refused(format!("{what}: {reason}"));
    if rotation.old != old || !valid_key_id(&rotation.new) {
        return Err(bad("it is not the move of the key it is named after"));
    }
    let old_key = read_public(loc, old)?;
    verify(&old_key, &rotation.message(), &rotation.signature)
        .map_err(|_| bad("it is not signed by the old key"))?;
    let new_key = from_hex::<32>(&rotation.new_public)
        .and_then(|b| VerifyingKey::from_bytes(&b).ok())
        .filter(|k| key_id(k) == rotation.new)
        .ok_or_else(|| bad("its new key does not hash to the id it names"))?;
    Ok(Some((rotation, new_key)))
}

/// The chain of key moves in the index at `loc` from the key `from` to the key `to`
/// (the ids passed through, `to` last), at most [`MAX_ROTATIONS`] long; `None` when none
/// leads there.
pub fn rotation_chain(
    loc: &super::Location,
    from: &str,
    to: &str,
) -> Result<Option<Vec<String>>, IndexError> {
    let mut at = from.to_string();
    let mut chain = Vec::new();
    for _ in 0..MAX_ROTATIONS {
        let Some((rotation, _)) = read_rotation(loc, &at)? else {
            return Ok(None);
        };
        if chain.contains(&rotation.new) || rotation.new == from {
            return Ok(None);
        }
        chain.push(rotation.new.clone());
        if rotation.new == to {
            return Ok(Some(chain));
        }
        at = rotation.new;
    }
    Ok(None)
}

/// Whether the key `id` is revoked in the index at `loc` by a revocation its own key, or
/// a key it moved to, signed.
pub fn revoked(loc: &super::Location, id: &str) -> Result<bool, IndexError> {
    if !valid_key_id(id) {
        return Ok(false);
    }
    let Some(r) = read_statement::<Revocation>(loc, &Revocation::rel(id), "a key revocation")?
    else {
        return Ok(false);
    };
    if r.key != id || !valid_key_id(&r.by) {
        return Ok(false);
    }
    if r.by != id && rotation_chain(loc, id, &r.by)?.is_none() {
        return Ok(false);
    }
    let by = read_public(loc, &r.by)?;
    Ok(verify(&by, &r.message(), &r.signature).is_ok())
}

/// The key moves kept in `profile` (`keys/rotations/*.json`), oldest key first as they
/// chain.
pub fn profile_rotations(profile: &Path) -> Result<Vec<Rotation>, IndexError> {
    let dir = profile.join("keys").join("rotations");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for e in entries.filter_map(Result::ok).take(1024) {
        let path = e.path();
        if path.extension().is_none_or(|x| x != "json") {
            continue;
        }
        let bytes =
            crate::fsutil::read_capped(&path, CAPS.key_bytes * 2, "a key move").map_err(|err| {
                IndexError::Read {
                    what: crate::fsutil::shown(&path),
                    error: err.into(),
                }
            })?;
        out.push(super::parse_json::<Rotation>(
            &bytes,
            &crate::fsutil::shown(&path),
        )?);
    }
    out.sort_by(|a, b| a.old.cmp(&b.old));
    Ok(out)
}

/// `key rotate`: a new author key in `profile`; the old one is kept as
/// `keys/retired/ID.key`, and the move, signed by the old key, is kept in
/// `keys/rotations/` for `pack publish` to put into indexes. The old and new public keys.
pub fn rotate(profile: &Path) -> Result<(VerifyingKey, VerifyingKey), IndexError> {
    let old = author_key(profile)?;
    let old_public = old.verifying_key();
    let old_id = key_id(&old_public);
    let keys_dir = profile.join("keys");
    let retired = keys_dir.join("retired");
    let rotations = keys_dir.join("rotations");
    crate::fsutil::make_profile_dir(&retired)?;
    crate::fsutil::make_profile_dir(&rotations)?;
    let mut seed = [0u8; 32];
    getrandom::fill(&mut seed).map_err(|e| {
        IndexError::Refused(format!("the system gives no randomness for a key: {e}"))
    })?;
    let new = SigningKey::from_bytes(&seed);
    seed.fill(0);
    let new_public = new.verifying_key();
    let mut rotation = Rotation {
        old: old_id.clone(),
        new: key_id(&new_public),
        new_public: public_hex(&new_public),
        signature: String::new(),
    };
    rotation.signature = sign(&old, &rotation.message());
    // Step by step, each leaving a usable profile: the old key kept aside, the move
    // signed, then the new key in place.
    let kept = retired.join(format!("{old_id}.key"));
    let old_text = format!("{}\n", hex::encode(old.as_bytes()));
    match crate::fsutil::write_atomic_new(&kept, old_text.as_bytes()) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => {
            return Err(IndexError::io(
                format!("write {}", crate::fsutil::shown(&kept)),
                e,
            ));
        }
    }
    restrict(&kept);
    let moved = rotations.join(format!("{old_id}.json"));
    let text = serde_json::to_vec_pretty(&rotation)
        .map_err(|e| IndexError::io("write the key move", std::io::Error::other(e)))?;
    crate::fsutil::write_atomic(&moved, &text)
        .map_err(|e| IndexError::io(format!("write {}", crate::fsutil::shown(&moved)), e))?;
    let path = key_file(profile);
    let new_text = format!("{}\n", hex::encode(new.as_bytes()));
    crate::fsutil::write_atomic(&path, new_text.as_bytes())
        .map_err(|e| IndexError::io(format!("write {}", crate::fsutil::shown(&path)), e))?;
    restrict(&path);
    Ok((old_public, new_public))
}

/// `key revoke KEY`: a revocation of `key` (the author's current key, or one it moved
/// from), signed by the current key.
pub fn revocation(profile: &Path, key: &str) -> Result<Revocation, IndexError> {
    let current = author_key(profile)?;
    let current_id = key_id(&current.verifying_key());
    if key != current_id {
        let rotations = profile_rotations(profile)?;
        let mut at = key.to_string();
        let mut found = false;
        for _ in 0..MAX_ROTATIONS {
            match rotations.iter().find(|r| r.old == at) {
                Some(r) if r.new == current_id => {
                    found = true;
                    break;
                }
                Some(r) => at.clone_from(&r.new),
                None => break,
            }
        }
        if !found {
            return Err(IndexError::Refused(format!(
                "'{}' is neither your key ({current_id}) nor one you moved from (`tokensmith key rotate`); a key you lost without moving from it is revoked by the index's owner: `tokensmith index revoke-key KEY FOLDER`",
                super::clean(key)
            )));
        }
    }
    let mut r = Revocation {
        key: key.to_string(),
        by: current_id,
        signature: String::new(),
    };
    r.signature = sign(&current, &r.message());
    Ok(r)
}

fn restrict(path: &Path) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let _ = std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600));
    }
    #[cfg(not(unix))]
    let _ = path;
}
