//! Freshness: what stops whoever hosts an index from serving an old listing, freezing it,
//! or mixing files of different times (The Update Framework's snapshot and timestamp
//! roles, sized for a static folder).
//!
//! An index of format 2 has an owner: the key `index.json` names, pinned by the player at
//! `index add`. The owner signs
//! - `snapshot.json`: a version number that only grows, the SHA-256 of `summary.json` and
//!   of every `packs/ID.json`, and the author keys the owner revoked;
//! - `timestamp.json`: its own growing version, the snapshot's version and SHA-256, and an
//!   expiry. `pack publish`, `pack yank` and `index sign` renew both; `index
//!   refresh-timestamp` renews the timestamp alone (cheap enough for cron).
//!
//! A player keeps, per index, the owner's key and the newest versions it has seen
//! (`PROFILE/index-state/NAME.json`, changed under its own file lock and only upwards).
//! It refuses a snapshot or timestamp older than those (rollback), one past its expiry by
//! more than [`GRACE`] (freeze; a warning before that), and any listing file whose hash
//! the snapshot does not list (mix-and-match).
//!
//! Must not: trust a listing file of a format-2 index without its snapshot hash, or lower
//! a seen version.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use ed25519_dalek::{SigningKey, VerifyingKey};
use serde::{Deserialize, Serialize};

use super::{IndexError, keys};

/// How long past its expiry a timestamp is still used, with a warning, before the index
/// is refused as frozen.
pub const GRACE: Duration = Duration::from_secs(7 * 24 * 3600);
/// A timestamp's life when the author does not say (`--expires-days`).
pub const DEFAULT_EXPIRY_DAYS: u64 = 14;
/// The longest life a timestamp may be given.
pub const MAX_EXPIRY_DAYS: u64 = 366;
/// Bytes of `snapshot.json`.
pub const SNAPSHOT_BYTES: u64 = 8 * 1024 * 1024;
/// Bytes of `timestamp.json`.
pub const TIMESTAMP_BYTES: u64 = 4 * 1024;
/// Keys a snapshot may list as revoked.
pub const MAX_REVOKED: usize = 10_000;

/// `snapshot.json`: the owner's signed list of the index's listing files.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Snapshot {
    /// Grows by one at every change.
    pub version: u64,
    /// The owner's key id.
    pub owner: String,
    /// The SHA-256 of `summary.json`.
    pub summary: String,
    /// Pack id → the SHA-256 of `packs/ID.json`.
    pub packs: BTreeMap<String, String>,
    /// Author keys the owner revoked: nothing signed by them is installed.
    #[serde(default)]
    pub revoked: Vec<String>,
    /// The owner's ed25519 signature of [`Snapshot::message`], in hex.
    pub signature: String,
}

impl Snapshot {
    /// What the owner signs.
    #[must_use]
    pub fn message(&self) -> Vec<u8> {
        let mut text = format!(
            "tokensmith-index-snapshot 1\nversion {}\nowner {}\nsummary {}\n",
            self.version, self.owner, self.summary
        );
        for (id, hash) in &self.packs {
            text.push_str(&format!("pack {id} {hash}\n"));
        }
        for key in &self.revoked {
            text.push_str(&format!("revoked {key}\n"));
        }
        text.into_bytes()
    }
}

/// `timestamp.json`: the owner's signed word that a snapshot is the newest, until a time.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Timestamp {
    /// Grows by one at every renewal.
    pub version: u64,
    /// The snapshot's version.
    pub snapshot: u64,
    /// The SHA-256 of `snapshot.json`.
    pub snapshot_sha256: String,
    /// When it expires, in seconds since 1970 (UTC).
    pub expires: u64,
    /// The owner's key id.
    pub owner: String,
    /// The owner's ed25519 signature of [`Timestamp::message`], in hex.
    pub signature: String,
}

impl Timestamp {
    /// What the owner signs.
    #[must_use]
    pub fn message(&self) -> Vec<u8> {
        format!(
            "tokensmith-index-timestamp 1\nversion {}\nsnapshot {}\nsnapshot_sha256 {}\nexpires {}\nowner {}\n",
            self.version, self.snapshot, self.snapshot_sha256, self.expires, self.owner
        )
        .into_bytes()
    }
}

/// Seconds since 1970 now.
#[must_use]
pub fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// A time in seconds since 1970 as a UTC date and time.
#[must_use]
pub fn date(secs: u64) -> String {
    let (y, m, d) = crate::fsutil::civil_date(i64::try_from(secs / 86_400).unwrap_or(i64::MAX / 2));
    let rem = secs % 86_400;
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02} UTC",
        rem / 3600,
        (rem % 3600) / 60
    )
}

/// What a player keeps of one index: the owner's key and the newest versions seen.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Seen {
    /// The owner's public key, in hex (pinned at `index add`, or at the first read of a
    /// format-2 index listed before).
    #[serde(default)]
    pub owner: Option<String>,
    /// The newest snapshot version seen.
    #[serde(default)]
    pub snapshot: u64,
    /// The newest timestamp version seen.
    #[serde(default)]
    pub timestamp: u64,
}

fn state_dir(profile: &Path) -> PathBuf {
    profile.join("index-state")
}

fn state_path(profile: &Path, name: &str) -> PathBuf {
    state_dir(profile).join(format!("{name}.json"))
}

impl Seen {
    /// What `profile` has seen of the index `name` (nothing when it is new).
    pub fn open(profile: &Path, name: &str) -> Result<Seen, IndexError> {
        super::read_profile_json(
            &state_path(profile, name),
            64 * 1024,
            "what was seen of an index",
            "remove the index and add it again",
        )
    }

    /// Record `seen` for the index `name`: under the state's own file lock, each number
    /// only raised and the owner set only when none was, then written atomically; so two
    /// commands at once, or a kill, never lower what was seen; with `owner_moved`, the
    /// owner is replaced (its move was checked). Returns the record kept.
    pub fn record(
        profile: &Path,
        name: &str,
        seen: &Seen,
        owner_moved: bool,
    ) -> Result<Seen, IndexError> {
        let dir = state_dir(profile);
        crate::fsutil::make_profile_dir(profile)?;
        crate::fsutil::make_profile_dir(&dir)?;
        let lock_path = dir.join(".lock");
        let lock = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(|e| IndexError::io(format!("open {}", crate::fsutil::shown(&lock_path)), e))?;
        lock.lock()
            .map_err(|e| IndexError::io(format!("lock {}", crate::fsutil::shown(&lock_path)), e))?;
        let mut kept = Seen::open(profile, name)?;
        let before = kept.clone();
        if kept.owner.is_none() || owner_moved {
            kept.owner.clone_from(&seen.owner);
        }
        kept.snapshot = kept.snapshot.max(seen.snapshot);
        kept.timestamp = kept.timestamp.max(seen.timestamp);
        if kept != before {
            super::write_profile_json(&state_path(profile, name), &kept)?;
        }
        Ok(kept)
    }

    /// Forget the index `name` (when it is removed from the profile).
    pub fn forget(profile: &Path, name: &str) {
        let _ = std::fs::remove_file(state_path(profile, name));
    }
}

/// A snapshot checked against its timestamp, its owner and what was seen before.
#[derive(Clone, Debug)]
pub struct Verified {
    /// The snapshot.
    pub snapshot: Snapshot,
    /// The timestamp.
    pub timestamp: Timestamp,
    /// The owner's key.
    pub owner: VerifyingKey,
    /// Warnings (an expired timestamp still in its grace, an owner's key move).
    pub notes: Vec<String>,
    /// Whether the owner moved from the pinned key to another (by a move the pinned key
    /// signed, through no revoked key).
    pub owner_moved: bool,
}

/// Check the owner's timestamp and snapshot of the index at `loc` (named `name`), whose
/// `index.json` names `owner_id`: the owner's key against the pinned one, both
/// signatures, the snapshot's hash and version against the timestamp, both versions
/// against those `seen` before, and the expiry against `now`.
pub fn verify(
    loc: &super::Location,
    name: &str,
    owner_id: &str,
    seen: &Seen,
    now: u64,
) -> Result<Verified, IndexError> {
    let refused = |why: String| IndexError::Refused(format!("index '{name}': {why}"));
    // The pinned owner's key is used as it is when the index still names it.
    let pinned_key = seen
        .owner
        .as_deref()
        .and_then(super::from_hex::<32>)
        .and_then(|b| VerifyingKey::from_bytes(&b).ok())
        .filter(|k| keys::key_id(k) == owner_id);
    let owner = match pinned_key {
        Some(k) => k,
        None => keys::read_public(loc, owner_id)?,
    };
    let owner_hex = keys::public_hex(&owner);
    let mut notes = Vec::new();
    let mut owner_moved = false;
    if let Some(pinned) = &seen.owner
        && *pinned != owner_hex
    {
        let pinned_id = super::from_hex::<32>(pinned)
            .and_then(|b| VerifyingKey::from_bytes(&b).ok())
            .map(|k| keys::key_id(&k))
            .unwrap_or_default();
        let chain = keys::rotation_chain(loc, &pinned_id, owner_id)?;
        let mut through_revoked = false;
        if let Some(chain) = &chain {
            for k in std::iter::once(&pinned_id).chain(chain.iter()) {
                through_revoked |= keys::revoked(loc, k)?;
            }
        }
        match chain {
            Some(chain) if !through_revoked => {
                owner_moved = true;
                notes.push(format!(
                    "index '{name}': its owner moved from the key {pinned_id} to {} (the move signed by the old key); the new key is pinned",
                    chain.join(" to ")
                ));
            }
            _ => {
                return Err(refused(format!(
                    "its owner's key is now {owner_id}, not the one pinned when it was added ({pinned_id}), and no move signed by the pinned key (through keys that are not revoked) leads to it; if its owner really changed keys, `tokensmith index remove {name}` and add it again"
                )));
            }
        }
    }
    let ts_bytes = loc.need("timestamp.json", TIMESTAMP_BYTES, "an index timestamp")?;
    let timestamp: Timestamp = super::parse_json(&ts_bytes, &loc.shown("timestamp.json"))?;
    if timestamp.owner != owner_id {
        return Err(refused(format!(
            "timestamp.json is by the key {}, not the owner's {owner_id}",
            super::clean(&timestamp.owner)
        )));
    }
    keys::verify(&owner, &timestamp.message(), &timestamp.signature).map_err(|e| {
        refused(format!(
            "timestamp.json is not signed by the owner's key ({e})"
        ))
    })?;
    if timestamp.version < seen.timestamp {
        return Err(refused(format!(
            "its timestamp is version {}, older than the version {} seen before: the server sends an old copy (a rollback); nothing from it is used",
            timestamp.version, seen.timestamp
        )));
    }
    if now > timestamp.expires {
        let past = now - timestamp.expires;
        if past > GRACE.as_secs() {
            return Err(refused(format!(
                "its timestamp expired on {}, more than {} days ago: the index is frozen or its owner stopped renewing it (the owner runs `tokensmith index refresh-timestamp FOLDER`); nothing from it is used",
                date(timestamp.expires),
                GRACE.as_secs() / 86_400
            )));
        }
        notes.push(format!(
            "index '{name}': its timestamp expired on {}; it is refused from {} unless its owner renews it (`tokensmith index refresh-timestamp FOLDER`): until then it may hide newer versions",
            date(timestamp.expires),
            date(timestamp.expires.saturating_add(GRACE.as_secs()))
        ));
    }
    let snap_bytes = loc.need_known(
        "snapshot.json",
        SNAPSHOT_BYTES,
        "an index snapshot",
        &timestamp.snapshot_sha256,
    )?;
    let sha = super::sha256(&snap_bytes);
    if sha != timestamp.snapshot_sha256 {
        return Err(refused(format!(
            "snapshot.json is not the one its timestamp names (SHA-256 {}, not {}): the files are from different times; nothing from it is used",
            &sha[..16],
            super::clean(&timestamp.snapshot_sha256)
        )));
    }
    let snapshot: Snapshot = super::parse_json(&snap_bytes, &loc.shown("snapshot.json"))?;
    if snapshot.owner != owner_id {
        return Err(refused(format!(
            "snapshot.json is by the key {}, not the owner's {owner_id}",
            super::clean(&snapshot.owner)
        )));
    }
    keys::verify(&owner, &snapshot.message(), &snapshot.signature).map_err(|e| {
        refused(format!(
            "snapshot.json is not signed by the owner's key ({e})"
        ))
    })?;
    if snapshot.version != timestamp.snapshot {
        return Err(refused(format!(
            "snapshot.json is version {}, but its timestamp names version {}",
            snapshot.version, timestamp.snapshot
        )));
    }
    if snapshot.version < seen.snapshot {
        return Err(refused(format!(
            "its snapshot is version {}, older than the version {} seen before: the server sends an old listing (a rollback); nothing from it is used",
            snapshot.version, seen.snapshot
        )));
    }
    if snapshot.packs.len() > super::CAPS.packs || snapshot.revoked.len() > MAX_REVOKED {
        return Err(refused(format!(
            "snapshot.json lists more than {} packs or {MAX_REVOKED} revoked keys",
            super::CAPS.packs
        )));
    }
    Ok(Verified {
        snapshot,
        timestamp,
        owner,
        notes,
        owner_moved,
    })
}

/// Check that `bytes`, read as `rel` (`summary.json` or `packs/ID.json`) of index
/// `name`, are what `snapshot` lists: a file it does not list, or lists with another
/// hash, is refused (files of different times mixed).
pub fn check_listed(
    snapshot: &Snapshot,
    name: &str,
    rel: &str,
    bytes: &[u8],
) -> Result<(), IndexError> {
    let want = if rel == "summary.json" {
        Some(&snapshot.summary)
    } else {
        rel.strip_prefix("packs/")
            .and_then(|r| r.strip_suffix(".json"))
            .and_then(|id| snapshot.packs.get(id))
    };
    let Some(want) = want else {
        return Err(IndexError::Refused(format!(
            "index '{name}': {rel} is not in the owner's signed snapshot (version {}): it was added after the owner signed, or by someone else; nothing from it is used",
            snapshot.version
        )));
    };
    let sha = super::sha256(bytes);
    if sha != *want {
        return Err(IndexError::Refused(format!(
            "index '{name}': {rel} is not the one the owner's signed snapshot (version {}) lists: it changed after the owner signed, or is from another time; nothing from it is used",
            snapshot.version
        )));
    }
    Ok(())
}

/// The owner's side: write a new snapshot of the index folder `root` (one version past
/// the one there) and a timestamp for it expiring in `days`, signed with `key`.
pub fn sign(root: &Path, key: &SigningKey, days: u64) -> Result<(Snapshot, Timestamp), IndexError> {
    sign_revoking(root, key, days, None)
}

/// [`sign`], adding `revoke` to the snapshot's revoked keys.
fn sign_revoking(
    root: &Path,
    key: &SigningKey,
    days: u64,
    revoke: Option<&str>,
) -> Result<(Snapshot, Timestamp), IndexError> {
    let owner = keys::key_id(&key.verifying_key());
    let folder = super::Location::folder(root);
    let old: Option<Snapshot> = folder
        .read("snapshot.json", SNAPSHOT_BYTES, "an index snapshot")?
        .and_then(|b| serde_json::from_slice(&b).ok());
    let summary = folder.need(
        "summary.json",
        super::CAPS.summary_bytes,
        "an index summary",
    )?;
    let summary_file: super::SummaryFile =
        super::parse_json(&summary, &folder.shown("summary.json"))?;
    let mut packs = BTreeMap::new();
    for s in &summary_file.packs {
        let rel = format!("packs/{}.json", s.id);
        if let Some(bytes) = folder.read(&rel, super::CAPS.entry_bytes, "an index entry")? {
            packs.insert(s.id.clone(), super::sha256(&bytes));
        }
    }
    let mut snapshot = Snapshot {
        version: old.as_ref().map_or(0, |s| s.version) + 1,
        owner: owner.clone(),
        summary: super::sha256(&summary),
        packs,
        revoked: old.map(|s| s.revoked).unwrap_or_default(),
        signature: String::new(),
    };
    if let Some(k) = revoke
        && !snapshot.revoked.iter().any(|r| r == k)
    {
        snapshot.revoked.push(k.to_string());
    }
    snapshot.signature = keys::sign(key, &snapshot.message());
    super::write_file(root, "snapshot.json", &super::index_json(&snapshot)?)?;
    let timestamp = renew(root, key, days)?;
    Ok((snapshot, timestamp))
}

/// The owner's side: a new timestamp for the snapshot in `root`, expiring in `days`.
pub fn renew(root: &Path, key: &SigningKey, days: u64) -> Result<Timestamp, IndexError> {
    let owner = keys::key_id(&key.verifying_key());
    let folder = super::Location::folder(root);
    let snap = folder.need("snapshot.json", SNAPSHOT_BYTES, "an index snapshot")?;
    let snapshot: Snapshot = super::parse_json(&snap, &folder.shown("snapshot.json"))?;
    if snapshot.owner != owner {
        return Err(IndexError::Refused(format!(
            "{} is signed by the index's owner, key {}, not by yours ({owner}): only the owner renews it",
            folder.shown("snapshot.json"),
            super::clean(&snapshot.owner)
        )));
    }
    let old: Option<Timestamp> = folder
        .read("timestamp.json", TIMESTAMP_BYTES, "an index timestamp")?
        .and_then(|b| serde_json::from_slice(&b).ok());
    let days = days.clamp(1, MAX_EXPIRY_DAYS);
    let mut timestamp = Timestamp {
        version: old.map_or(0, |t| t.version) + 1,
        snapshot: snapshot.version,
        snapshot_sha256: super::sha256(&snap),
        expires: now().saturating_add(days * 86_400),
        owner,
        signature: String::new(),
    };
    timestamp.signature = keys::sign(key, &timestamp.message());
    super::write_file(root, "timestamp.json", &super::index_json(&timestamp)?)?;
    Ok(timestamp)
}

/// The owner's side: list `key_id` as revoked in a new snapshot of `root`. Whether it
/// was not listed before.
pub fn revoke(
    root: &Path,
    owner: &SigningKey,
    key_id: &str,
    days: u64,
) -> Result<bool, IndexError> {
    let folder = super::Location::folder(root);
    let listed = folder
        .read("snapshot.json", SNAPSHOT_BYTES, "an index snapshot")?
        .and_then(|b| serde_json::from_slice::<Snapshot>(&b).ok())
        .is_some_and(|s| s.revoked.iter().any(|k| k == key_id));
    if listed {
        return Ok(false);
    }
    sign_revoking(root, owner, days, Some(key_id))?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_civil_utc() {
        assert_eq!(date(0), "1970-01-01 00:00 UTC");
        assert_eq!(date(951_782_400), "2000-02-29 00:00 UTC");
        assert_eq!(date(1_795_000_000), "2026-11-18 11:06 UTC");
    }

    #[test]
    fn every_field_is_in_what_is_signed() {
        let base = Snapshot {
            version: 3,
            owner: "a".repeat(16),
            summary: "b".repeat(64),
            packs: [("alpha".to_string(), "c".repeat(64))].into(),
            revoked: vec!["d".repeat(16)],
            signature: String::new(),
        };
        let mut changed = base.clone();
        changed.version = 2;
        assert_ne!(base.message(), changed.message());
        let mut changed = base.clone();
        changed.packs.insert("beta".into(), "e".repeat(64));
        assert_ne!(base.message(), changed.message());
        let mut changed = base.clone();
        changed.revoked.clear();
        assert_ne!(base.message(), changed.message());
        let t = Timestamp {
            version: 1,
            snapshot: 3,
            snapshot_sha256: "f".repeat(64),
            expires: 10,
            owner: "a".repeat(16),
            signature: String::new(),
        };
        let mut later = t.clone();
        later.expires = 11;
        assert_ne!(t.message(), later.message());
    }
}
