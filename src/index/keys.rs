//! Authors' keys: an ed25519 signing key kept in the author's profile
//! (`PROFILE/keys/author.key`), the public keys an index carries (`keys/ID.pub`), and the
//! key each installed pack id was first signed with (`PROFILE/index-pins.json`).

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

/// The key each installed pack id was first signed with (`PROFILE/index-pins.json`).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Pins {
    /// Pack id → public key in hex.
    pub packs: BTreeMap<String, String>,
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
