//! The user's profile: saved decks, one YAML file each under `decks/`, in the platform's
//! data folder (or `--profile DIR`). An edge layer: it reads and writes files and knows
//! cards only by `pack:id` (or bare id) text, so a deck naming cards of a pack that is
//! not loaded stays as it is.
//!
//! - Every file carries a `format_version`; older versions are migrated when read and
//!   written back in the current format, after a backup of the original
//!   (`NAME.yaml.v1.bak`, never overwritten). Migrating is idempotent: a current file is
//!   left exactly as it is.
//! - Writes are atomic (temporary file, flush, rename): a crash mid-save leaves the old
//!   file or the new one, never a mix.
//! - A file that cannot be read is set aside (`NAME.yaml.corrupt`, numbered if taken)
//!   with a message saying where it went; it is never overwritten or deleted.
//! - `settings.yaml` holds the default deck and the client's preferences ([`Settings`]).
//!
//! A deck file of a newer format is left as it is and not listed. An invalid
//! `settings.yaml` is set aside and the defaults used; a newer or unreadable one is left
//! alone (settings are then not saved). [`SavedDeck::resolve`] looks cards up in a catalog
//! and lists the missing ones without dropping them. Failures are a [`ProfileError`]:
//! callers match on its kind. [`ProfileLock`] (from `fsutil::lock`, a layer below both the
//! profile and `packs::Store`) is taken by the command line and `packs::Store`.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::rules::{CardId, Catalog};

mod settings;

pub use crate::fsutil::lock::{self, Access, LockError, ProfileLock};
pub use settings::{SETTINGS_VERSION, Settings, parse_settings};

/// The most deck files `decks/` is read for (the rest are left as they are, with a
/// note): listing reads and parses every one.
pub const MAX_DECK_FILES: usize = 1_000;

/// The format written today.
pub const FORMAT_VERSION: u32 = 2;

/// A saved deck.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SavedDeck {
    /// The file format (always [`FORMAT_VERSION`] once loaded).
    pub format_version: u32,
    /// The id (also the file name).
    pub id: String,
    /// The display name.
    pub name: String,
    /// The stacks, top card first, each card as `pack:id` (or a bare id).
    pub stacks: Vec<Vec<String>>,
}

/// Version 1 decks (before `format_version`): `title` and `cards`, bare card ids.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DeckV1 {
    #[serde(default)]
    version: Option<u32>,
    title: String,
    cards: Vec<Vec<String>>,
}

/// Just the version, to pick the reader.
#[derive(Deserialize)]
struct Versioned {
    #[serde(default)]
    format_version: Option<u32>,
}

/// Why a deck file was not read.
enum Unread {
    /// Left exactly as it is: written by a newer Tokensmith, or a migration that could
    /// not be written.
    Kept(String),
    /// Not a deck: set aside.
    Bad(String),
}

/// The `format_version` a file's text declares, if any.
fn format_version(text: &str) -> Option<u32> {
    serde_saphyr::from_str::<Versioned>(text)
        .ok()
        .and_then(|v| v.format_version)
}

/// `path` with the extension `ext`, numbered (`ext2`, `ext3`, …) past the names taken.
/// A deck resolved against the loaded content.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Resolved {
    /// The stacks with every card found (cards not found are left out).
    pub stacks: Vec<Vec<CardId>>,
    /// The cards not in the loaded content, as written.
    pub missing: Vec<String>,
}

impl SavedDeck {
    /// Look its cards up in `catalog`.
    #[must_use]
    pub fn resolve(&self, catalog: &Catalog) -> Resolved {
        self.resolve_with(|name| catalog.card_named(name).ok())
    }

    /// Look its cards up with `find` (a faster index, say), keeping those it does not
    /// find as written.
    pub fn resolve_with(&self, find: impl Fn(&str) -> Option<CardId>) -> Resolved {
        let mut missing = Vec::new();
        let stacks = self
            .stacks
            .iter()
            .map(|s| {
                s.iter()
                    .filter_map(|name| {
                        let id = find(name);
                        if id.is_none() {
                            missing.push(name.clone());
                        }
                        id
                    })
                    .collect()
            })
            .collect();
        Resolved { stacks, missing }
    }

    /// The deck as it is written to its file.
    #[must_use]
    pub fn to_yaml(&self) -> String {
        let mut out = format!(
            "format_version: {}\nid: {}\nname: {}\nstacks:\n",
            self.format_version,
            scalar(&self.id),
            quote(&self.name)
        );
        for s in &self.stacks {
            let cards: Vec<String> = s.iter().map(|c| scalar(c)).collect();
            out.push_str(&format!("  - [{}]\n", cards.join(", ")));
        }
        out
    }
}

/// An id as written: plain when YAML reads it back as the same text, quoted otherwise
/// (so `null`, `true`, `no` or `2024` stay text).
pub(crate) fn scalar(name: &str) -> String {
    const KEYWORDS: [&str; 10] = [
        "null", "true", "false", "yes", "no", "on", "off", "y", "n", "~",
    ];
    let plain = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | ':' | '.'))
        && !KEYWORDS.contains(&name.to_ascii_lowercase().as_str());
    if plain { name.to_string() } else { quote(name) }
}

/// A YAML scalar for free text: quoted, with `"` and `\` escaped.
fn quote(text: &str) -> String {
    format!("\"{}\"", text.replace('\\', "\\\\").replace('"', "\\\""))
}

/// Whether `id` can name a deck file: lowercase letters, digits, `_` and `-`.
#[must_use]
pub fn valid_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 64
        && id
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-')
}

/// `name` as a file-safe word: its ASCII letters (lowercased) and digits, every run of
/// anything else one `sep`, none at either end (`My Deck!` → `my-deck`).
#[must_use]
pub fn slug(name: &str, sep: char) -> String {
    let mut out = String::new();
    for c in name.chars().flat_map(char::to_lowercase) {
        if c.is_ascii_alphanumeric() {
            out.push(c);
        } else if !out.is_empty() && !out.ends_with(sep) {
            out.push(sep);
        }
    }
    out.trim_end_matches(sep).to_string()
}

/// A deck id made from `name` (lowercase letters, digits and `-`) that `taken` does not
/// refuse: `my-deck`, then `my-deck-2`, `my-deck-3`, …
#[must_use]
pub fn id_for(name: &str, taken: impl Fn(&str) -> bool) -> String {
    let mut base: String = slug(name, '-').chars().take(48).collect();
    if base.is_empty() {
        base = "deck".into();
    }
    let mut id = base.clone();
    let mut n = 2;
    while taken(&id) {
        id = format!("{base}-{n}");
        n += 1;
    }
    id
}

/// Why a deck's or the settings' text cannot be read as one.
#[derive(Debug, thiserror::Error)]
pub enum FormatError {
    /// Not YAML of the expected shape.
    #[error(transparent)]
    Yaml(#[from] serde_saphyr::Error),
    /// The file's bytes are not UTF-8 text.
    #[error("it is not UTF-8 text")]
    NotText,
    /// Written by a newer Tokensmith.
    #[error(
        "format_version {found} is newer than this Tokensmith reads ({reads}); update Tokensmith"
    )]
    Newer {
        /// The version the file declares.
        found: u32,
        /// The newest this Tokensmith reads.
        reads: u32,
    },
    /// A version no Tokensmith wrote.
    #[error("format_version {found} is not a known {what} format")]
    Unknown {
        /// The version the file declares.
        found: u32,
        /// `deck` or `settings`.
        what: &'static str,
    },
    /// A deck of the first format with a `version` other than 1.
    #[error("an unknown deck format (no format_version)")]
    OldUnknown,
    /// A settings file without `format_version`.
    #[error("format_version is missing: the first line should be `format_version: {0}`")]
    Missing(u32),
}

/// Read a deck file's text (any known version) as a current deck named `id`; whether it
/// was migrated.
pub fn parse_deck(text: &str, id: &str) -> Result<(SavedDeck, bool), FormatError> {
    let version: Versioned = serde_saphyr::from_str(text)?;
    match version.format_version {
        Some(FORMAT_VERSION) => {
            let deck: SavedDeck = serde_saphyr::from_str(text)?;
            Ok((deck, false))
        }
        Some(v) if v > FORMAT_VERSION => Err(FormatError::Newer {
            found: v,
            reads: FORMAT_VERSION,
        }),
        Some(v) => Err(FormatError::Unknown {
            found: v,
            what: "deck",
        }),
        None => {
            let old: DeckV1 = serde_saphyr::from_str(text)?;
            if old.version.is_some_and(|v| v != 1) {
                return Err(FormatError::OldUnknown);
            }
            let deck = SavedDeck {
                format_version: FORMAT_VERSION,
                id: id.to_string(),
                name: old.title,
                stacks: old.cards,
            };
            Ok((deck, true))
        }
    }
}

/// Why the profile could not do what was asked. Callers match on the kind; `Display`
/// gives the text to show.
#[derive(Debug, thiserror::Error)]
pub enum ProfileError {
    /// The profile folder cannot be created.
    #[error(
        "cannot create the profile folder {}: {source}",
        crate::fsutil::shown(path)
    )]
    Folder {
        /// The folder.
        path: PathBuf,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// Not a valid deck id.
    #[error("'{id}' cannot be a deck id: use lowercase letters, digits, '_' and '-'")]
    BadId {
        /// The id asked for.
        id: String,
    },
    /// A new deck's id is taken (creating never replaces a file).
    #[error(
        "cannot save {}: a deck with this id is saved already",
        crate::fsutil::shown(path)
    )]
    Exists {
        /// The file that is there.
        path: PathBuf,
    },
    /// Writing or deleting a file failed.
    #[error("cannot {action} {}: {source}", crate::fsutil::shown(path))]
    Io {
        /// `save` or `delete`.
        action: &'static str,
        /// The file.
        path: PathBuf,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// The settings file on disk could not be read, so it is kept and not overwritten.
    #[error("{0}")]
    SettingsKept(String),
    /// A deck file whose name is not an id could not be moved aside to be given one.
    #[error(
        "cannot move it aside to give it an id ({source}); rename it to lowercase letters, digits, '-' and '_'"
    )]
    SetAside {
        /// The deck file.
        path: PathBuf,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// A deck file whose name is not an id could not be saved under a new one; the
    /// original is put back, or `stays` says where it is and why it could not be.
    #[error("{source}{}", stays.as_ref().map_or_else(String::new, |(kept, e)| format!("; it stays as {} ({e})", kept.display())))]
    Rename {
        /// Why saving it failed.
        #[source]
        source: Box<ProfileError>,
        /// Where the original stays, and why it could not be put back.
        stays: Option<(PathBuf, std::io::Error)>,
    },
    /// A folder of the profile is a link or not a folder: refused, nothing done.
    #[error(transparent)]
    Unsafe(#[from] crate::fsutil::DirError),
    /// Another Tokensmith held the profile for the whole wait: nothing was written.
    #[error(transparent)]
    Locked(#[from] LockError),
}

impl ProfileError {
    /// The mapping of a failed write or delete of `path` (`action`: `save` or `delete`)
    /// to [`ProfileError::Io`], the one place it is written.
    fn io(action: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> ProfileError {
        let path = path.to_path_buf();
        move |source| ProfileError::Io {
            action,
            path,
            source,
        }
    }
}

/// The profile folder and what reading it found.
#[derive(Debug)]
pub struct Profile {
    dir: PathBuf,
    /// Messages about files migrated or set aside, for the user.
    pub notes: Vec<String>,
    /// Why settings must not be written (a settings file that could not be read).
    settings_blocked: Option<String>,
}

impl Profile {
    /// The platform's data folder for Tokensmith.
    #[must_use]
    pub fn default_dir() -> Option<PathBuf> {
        directories::ProjectDirs::from("", "", "tokensmith").map(|d| d.data_dir().to_path_buf())
    }

    /// Open (and create if needed) the profile at `dir`.
    pub fn open(dir: &Path) -> Result<Profile, ProfileError> {
        std::fs::create_dir_all(dir).map_err(|source| ProfileError::Folder {
            path: dir.to_path_buf(),
            source,
        })?;
        // `decks/` as a link would let listing rename files, and saving write them,
        // wherever it points.
        crate::fsutil::make_profile_dir(&dir.join("decks"))?;
        Ok(Profile {
            dir: dir.to_path_buf(),
            notes: Vec::new(),
            settings_blocked: None,
        })
    }

    /// The folder.
    #[must_use]
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn deck_path(&self, id: &str) -> PathBuf {
        self.dir.join("decks").join(format!("{id}.yaml"))
    }

    /// Every saved deck, sorted by id. Older files are migrated (after a backup);
    /// unreadable ones are set aside; both are told in [`Profile::notes`].
    pub fn decks(&mut self) -> Vec<SavedDeck> {
        let mut decks = Vec::new();
        let folder = self.dir.join("decks");
        if let Err(e) = crate::fsutil::check_profile_dir(&folder) {
            self.notes.push(format!("{e}; no deck is listed"));
            return decks;
        }
        let Ok(entries) = std::fs::read_dir(&folder) else {
            return decks;
        };
        let mut paths: Vec<PathBuf> = Vec::new();
        let mut seen = 0usize;
        for e in entries.filter_map(Result::ok) {
            seen += 1;
            let p = e.path();
            if p.extension().is_some_and(|e| e == "yaml") {
                paths.push(p);
            }
            if paths.len() > MAX_DECK_FILES || seen > MAX_DECK_FILES * 8 {
                self.notes.push(format!(
                    "{}: more than {MAX_DECK_FILES} deck files (or {} entries); only {MAX_DECK_FILES} of them are read, the rest are left as they are",
                    crate::fsutil::shown(&folder),
                    MAX_DECK_FILES * 8
                ));
                break;
            }
        }
        paths.sort();
        paths.truncate(MAX_DECK_FILES);
        // The ids taken (case-insensitively), read once: giving ids to many files whose
        // names slug alike stays linear in the folder, not cubic.
        let mut taken = self.taken_ids();
        for path in paths {
            let id = path
                .file_stem()
                .map(|s| s.to_string_lossy().to_string())
                .unwrap_or_default();
            // Links, pipes and folders named like decks are never read nor moved.
            if crate::fsutil::is_link(&path) || !path.is_file() {
                let what = if crate::fsutil::is_link(&path) {
                    "it is a symbolic link, and links are not followed in the profile"
                } else {
                    "it is not a regular file"
                };
                self.notes.push(format!(
                    "{}: {what}; it is left as it is and not listed",
                    crate::fsutil::shown(&path)
                ));
                continue;
            }
            match self.read(&path, &id) {
                Ok(deck) if valid_id(&id) => decks.push(deck),
                Ok(deck) => match self.give_id(&path, deck, &mut taken) {
                    Ok(deck) => decks.push(deck),
                    Err(e) => self
                        .notes
                        .push(format!("{}: {e}", crate::fsutil::shown(&path))),
                },
                Err(Unread::Kept(e)) => self.notes.push(format!(
                    "{}: {e}; it is left as it is and not listed",
                    crate::fsutil::shown(&path)
                )),
                Err(Unread::Bad(e)) => {
                    let aside = self.set_aside(&path);
                    self.notes
                        .push(format!("{}: {e}; {aside}", crate::fsutil::shown(&path)));
                }
            }
        }
        decks.sort_by(|a, b| a.id.cmp(&b.id));
        decks
    }

    /// A deck read from a file whose name cannot be an id (`My Deck.yaml`): saved anew
    /// under a free id made from its name, the original kept as `NAME.yaml.orig`.
    fn give_id(
        &mut self,
        path: &Path,
        mut deck: SavedDeck,
        taken: &mut std::collections::HashSet<String>,
    ) -> Result<SavedDeck, ProfileError> {
        // The original goes aside first, so the new id may be its name in other case.
        let kept = crate::fsutil::move_aside(path, "yaml.orig").map_err(|source| {
            ProfileError::SetAside {
                path: path.to_path_buf(),
                source,
            }
        })?;
        if let Some(stem) = path.file_stem() {
            taken.remove(&stem.to_string_lossy().to_ascii_lowercase());
        }
        deck.id = id_for(&deck.id, |id| taken.contains(&id.to_ascii_lowercase()));
        taken.insert(deck.id.to_ascii_lowercase());
        let new = match self.create(&deck) {
            Ok(new) => new,
            Err(e) => {
                let stays = crate::fsutil::rename_new(&kept, path)
                    .err()
                    .map(|r| (kept.clone(), r));
                return Err(ProfileError::Rename {
                    source: Box::new(e),
                    stays,
                });
            }
        };
        self.notes.push(format!(
            "{}: deck ids are lowercase letters, digits, '-' and '_': saved as {}; the original is kept as {}",
            path.display(),
            new.display(),
            kept.display()
        ));
        Ok(deck)
    }

    /// The ids of the deck files there, lowercased.
    fn taken_ids(&self) -> std::collections::HashSet<String> {
        let Ok(entries) = std::fs::read_dir(self.dir.join("decks")) else {
            return std::collections::HashSet::new();
        };
        entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
            .filter_map(|p| {
                p.file_stem()
                    .map(|s| s.to_string_lossy().to_ascii_lowercase())
            })
            .collect()
    }

    /// Whether a deck file with this id exists, ignoring case (as the file system may).
    #[must_use]
    pub fn is_taken(&self, id: &str) -> bool {
        let Ok(entries) = std::fs::read_dir(self.dir.join("decks")) else {
            return false;
        };
        entries.filter_map(Result::ok).any(|e| {
            let p = e.path();
            p.extension().is_some_and(|x| x == "yaml")
                && p.file_stem()
                    .is_some_and(|s| s.to_string_lossy().eq_ignore_ascii_case(id))
        })
    }

    /// Save a new deck (atomically), refusing to replace a file that is there.
    pub fn create(&self, deck: &SavedDeck) -> Result<PathBuf, ProfileError> {
        self.write(deck, false)
    }

    /// Write `deck` to its file atomically, replacing one that is there or not.
    fn write(&self, deck: &SavedDeck, replace: bool) -> Result<PathBuf, ProfileError> {
        if !valid_id(&deck.id) {
            return Err(ProfileError::BadId {
                id: deck.id.clone(),
            });
        }
        let _lock = ProfileLock::acquire(&self.dir, Access::Write)?;
        crate::fsutil::check_profile_dir(&self.dir.join("decks"))?;
        let path = self.deck_path(&deck.id);
        let bytes = deck.to_yaml();
        let written = if replace {
            crate::fsutil::write_atomic(&path, bytes.as_bytes())
        } else {
            crate::fsutil::write_atomic_new(&path, bytes.as_bytes())
        };
        written.map_err(|e| {
            if e.kind() == std::io::ErrorKind::AlreadyExists {
                ProfileError::Exists { path: path.clone() }
            } else {
                ProfileError::io("save", &path)(e)
            }
        })?;
        Ok(path)
    }

    fn read(&mut self, path: &Path, id: &str) -> Result<SavedDeck, Unread> {
        let text = crate::fsutil::read_text(path, crate::fsutil::MAX_PROFILE_FILE, "a deck file")
            .map_err(|e| match e {
            // Too large to be a deck of ours: not ours to move either.
            e @ crate::fsutil::ReadError::TooLarge { .. } => Unread::Kept(e.to_string()),
            e => Unread::Bad(format!("cannot read it: {e}")),
        })?;
        if let Some(v) = format_version(&text).filter(|&v| v > FORMAT_VERSION) {
            return Err(Unread::Kept(format!(
                "format_version {v} is newer than this Tokensmith reads ({FORMAT_VERSION}); update Tokensmith"
            )));
        }
        let (mut deck, migrated) = parse_deck(&text, id).map_err(|e| Unread::Bad(e.to_string()))?;
        deck.id = id.to_string();
        // A file whose name cannot be an id is saved anew under another name by
        // `give_id`, which keeps this file as it is: nothing to migrate in place.
        if migrated && valid_id(id) {
            // The backup goes to a name free when it is written (never over an older
            // backup), and the message names the file that really holds the original.
            let backup = crate::fsutil::copy_aside(path, "yaml.v1.bak")
                .map_err(|e| Unread::Kept(format!("cannot back it up before migrating: {e}")))?;
            crate::fsutil::write_atomic(path, deck.to_yaml().as_bytes())
                .map_err(|e| Unread::Kept(format!("cannot write the migrated deck: {e}")))?;
            self.notes.push(format!(
                "{}: migrated to format_version {FORMAT_VERSION}; the original is kept as {}",
                crate::fsutil::shown(path),
                crate::fsutil::shown(&backup)
            ));
        }
        Ok(deck)
    }

    /// Move an unreadable file out of the way, never over another file.
    fn set_aside(&self, path: &Path) -> String {
        match crate::fsutil::move_aside(path, "yaml.corrupt") {
            Ok(target) => format!("set aside as {}", crate::fsutil::shown(&target)),
            Err(e) => format!("left in place ({e})"),
        }
    }

    fn settings_path(&self) -> PathBuf {
        self.dir.join("settings.yaml")
    }

    /// The settings (defaults when there is no file yet). A file that is not valid
    /// settings is set aside, told in [`Profile::notes`], and the defaults are used; one
    /// that cannot be read at all is left alone and not written over this session.
    pub fn settings(&mut self) -> Settings {
        let path = self.settings_path();
        let read =
            crate::fsutil::read_capped(&path, crate::fsutil::MAX_PROFILE_FILE, "the settings");
        let text = match read {
            Ok(bytes) => String::from_utf8(bytes).map_err(|_| FormatError::NotText),
            Err(e) if e.is_not_found() => return Settings::default(),
            Err(e) => {
                let why = format!(
                    "{}: cannot read it ({e}); using the defaults, and settings are not saved until it can be read",
                    path.display()
                );
                self.notes.push(why.clone());
                self.settings_blocked = Some(why);
                return Settings::default();
            }
        };
        if let Ok(t) = &text
            && let Some(v) = format_version(t).filter(|&v| v > SETTINGS_VERSION)
        {
            let why = format!(
                "{}: format_version {v} is newer than this Tokensmith reads ({SETTINGS_VERSION}); using the defaults and leaving the file as it is",
                path.display()
            );
            self.notes.push(why.clone());
            self.settings_blocked = Some(why);
            return Settings::default();
        }
        match text.and_then(|t| parse_settings(&t)) {
            Ok(settings) => settings,
            Err(e) => {
                let aside = self.set_aside(&path);
                self.notes.push(format!(
                    "{}: {e}; {aside}; using the defaults",
                    path.display()
                ));
                Settings::default()
            }
        }
    }

    /// Save the settings (atomically).
    pub fn save_settings(&self, settings: &Settings) -> Result<PathBuf, ProfileError> {
        if let Some(why) = &self.settings_blocked {
            return Err(ProfileError::SettingsKept(why.clone()));
        }
        let _lock = ProfileLock::acquire(&self.dir, Access::Write)?;
        let path = self.settings_path();
        crate::fsutil::write_atomic(&path, settings.to_yaml().as_bytes())
            .map_err(ProfileError::io("save", &path))?;
        Ok(path)
    }

    /// The deck `id`, if saved and readable.
    pub fn deck(&mut self, id: &str) -> Option<SavedDeck> {
        self.decks().into_iter().find(|d| d.id == id)
    }

    /// Save `deck` (atomically), replacing the deck with its id.
    pub fn save(&self, deck: &SavedDeck) -> Result<PathBuf, ProfileError> {
        self.write(deck, true)
    }

    /// Delete the deck `id`; false when there was none.
    pub fn delete(&self, id: &str) -> Result<bool, ProfileError> {
        let _lock = ProfileLock::acquire(&self.dir, Access::Write)?;
        crate::fsutil::check_profile_dir(&self.dir.join("decks"))?;
        let path = self.deck_path(id);
        match std::fs::remove_file(&path) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(ProfileError::io("delete", &path)(e)),
        }
    }
}
