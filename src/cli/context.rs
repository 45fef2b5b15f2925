//! What the commands share: the run's [`Context`] (the profile folder, the pack folders,
//! which packs play, the saved decks), made once per run from the options every command
//! takes, and the few helpers every command's output and profile use.

use std::cell::OnceCell;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context as _;

use super::args::Globals;
use crate::content::LoadOptions;
use crate::packs::{Folders, PackSet, Selection, Store};
use crate::profile::{Access, Profile, ProfileLock, SavedDeck};

/// The base content folder: `--content` when given; else `content` in the working folder
/// when it holds the base pack (a checkout of the source, where designers edit it); else
/// the base content shipped with the program, unpacked once into the platform's cache
/// folder (or the system's temporary folder when there is none).
#[must_use]
pub fn content_folder(given: Option<&Path>) -> PathBuf {
    if let Some(dir) = given {
        return dir.to_path_buf();
    }
    let here = Path::new("content");
    if here.join("base").join("pack.yaml").is_file() {
        return here.to_path_buf();
    }
    let cache = directories::ProjectDirs::from("", "", "tokensmith").map_or_else(
        || std::env::temp_dir().join("tokensmith"),
        |d| d.cache_dir().to_path_buf(),
    );
    crate::content::shipped::unpack(&cache)
        .or_else(|_| crate::content::shipped::unpack(&std::env::temp_dir().join("tokensmith")))
        .unwrap_or_else(|e| {
            eprintln!(
                "note: the shipped base content cannot be unpacked into {} ({e}); give a content folder with --content DIR",
                crate::fsutil::shown(&cache)
            );
            here.to_path_buf()
        })
}

/// One run's context, made once from the options every command takes. What costs a look
/// at the disk is worked out on first use and kept: the profile's pack store is recovered
/// and its enabled set read at most once a run, whatever asks for the selection.
pub struct Context<'a> {
    globals: &'a Globals,
    /// `--profile`, else the platform's data folder (if there is one).
    profile_dir: Option<PathBuf>,
    /// Base content, mods, and the profile's installed packs.
    folders: Folders,
    /// Which packs the commands that play use (see [`Context::selection`]).
    selection: OnceCell<Selection>,
}

impl<'a> Context<'a> {
    /// The context of a run with these options; nothing is read yet.
    #[must_use]
    pub fn new(globals: &'a Globals) -> Context<'a> {
        let profile_dir = globals.profile.clone().or_else(Profile::default_dir);
        let folders = Folders {
            content: content_folder(globals.content.as_deref()),
            mods: globals.mods.clone(),
            installed: profile_dir
                .as_deref()
                .map(|d| Store::new(d).root().to_path_buf()),
        };
        Context {
            globals,
            profile_dir,
            folders,
            selection: OnceCell::new(),
        }
    }

    /// The options this run was given.
    #[must_use]
    pub fn globals(&self) -> &Globals {
        self.globals
    }

    /// The folder with the base content packs (`--content`, else see [`content_folder`]).
    #[must_use]
    pub fn content(&self) -> &Path {
        &self.folders.content
    }

    /// The folder with mod packs (`--mods`).
    #[must_use]
    pub fn mods(&self) -> &Path {
        &self.globals.mods
    }

    /// Whether this run names its packs itself (`--packs` or `--all-packs`).
    #[must_use]
    pub fn names_packs(&self) -> bool {
        self.globals.all_packs || self.globals.packs.is_some()
    }

    /// The profile folder `--profile` names, if it names one.
    #[must_use]
    pub fn given_profile(&self) -> Option<&Path> {
        self.globals.profile.as_deref()
    }

    /// The profile folder: `--profile`, else the platform's data folder (if there is one).
    #[must_use]
    pub fn profile_dir(&self) -> Option<&Path> {
        self.profile_dir.as_deref()
    }

    /// The profile folder, for a command that cannot do without one.
    pub fn profile(&self) -> anyhow::Result<&Path> {
        self.profile_dir()
            .context("no data folder on this system: give --profile DIR")
    }

    /// The pack folders: base content, mods, and the profile's installed packs.
    #[must_use]
    pub fn pack_folders(&self) -> &Folders {
        &self.folders
    }

    /// Which packs the commands that play use: `--packs`, `--all-packs`, or the profile's
    /// enabled set (base content only without one). The first call recovers the
    /// profile's pack store and reads its set, saying its notes on stderr; later calls
    /// give the same selection.
    pub fn selection(&self) -> &Selection {
        self.selection.get_or_init(|| {
            if self.globals.all_packs {
                return Selection::All;
            }
            if let Some(ids) = &self.globals.packs {
                return Selection::Set(PackSet::only(ids));
            }
            let set = self.profile_dir().map_or_else(PackSet::default, |d| {
                Store::new(d).recover();
                PackSet::open(d)
            });
            for note in &set.notes {
                eprintln!("note: {note}");
            }
            Selection::Set(set)
        })
    }

    /// The load options of a command that plays.
    #[must_use]
    pub fn play_options(&self) -> LoadOptions {
        crate::packs::set::load_options(&self.folders, self.selection())
    }

    /// The catalog of a command that plays; when the packs have errors, their
    /// diagnostics on stderr and an error that says so.
    pub fn play_catalog(&self) -> anyhow::Result<crate::rules::Catalog> {
        let loaded = crate::script::load(&self.play_options());
        let Some(catalog) = loaded.catalog else {
            for d in &loaded.diagnostics {
                eprintln!("{d}");
            }
            anyhow::bail!("the packs have errors; fix them first (see `tokensmith validate`)");
        };
        Ok(catalog)
    }

    /// The load options of `validate`: every pack found.
    #[must_use]
    pub fn every_pack(&self) -> LoadOptions {
        crate::packs::set::load_options(&self.folders, &Selection::All)
    }

    /// The profile the command line uses (`--profile`, else the platform's data folder),
    /// made if missing.
    pub fn open_profile(&self) -> anyhow::Result<Profile> {
        let dir = self.profile()?;
        Profile::open(dir).map_err(|e| anyhow::anyhow!(e))
    }

    /// The profile's saved decks: with `--profile`, that profile's (an error if it cannot
    /// be opened); without, the data folder's if there is one, else none.
    pub fn saved_decks(&self) -> anyhow::Result<Vec<SavedDeck>> {
        Ok(match self.given_profile() {
            Some(_) => {
                let mut p = self.open_profile()?;
                let _lock = lock_profile(p.dir(), Access::Write)?;
                p.decks()
            }
            None => self
                .profile_dir()
                .filter(|d| d.is_dir())
                .and_then(|d| Profile::open(d).ok())
                .and_then(|mut p| {
                    let _lock = lock_profile(p.dir(), Access::Write).ok()?;
                    Some(p.decks())
                })
                .unwrap_or_default(),
        })
    }

    /// The check `pack build` and `pack publish` run on the pack in `dir`: it loads with
    /// everything it could require (base, mods and installed), found first in its folder;
    /// its diagnostics as `(is_error, line)` (warnings of other packs left out).
    pub fn validator(&self, dir: &Path) -> impl FnOnce(&str) -> Vec<(bool, String)> + use<> {
        let folders = self.folders.clone();
        let dir = dir.to_path_buf();
        move |id: &str| {
            let mut options =
                crate::packs::set::load_options(&folders, &Selection::Set(PackSet::default()));
            if let Some(only) = &mut options.only {
                only.push(id.to_string());
            }
            options.folders.insert(
                0,
                crate::content::PackFolder {
                    path: dir.clone(),
                    required: true,
                },
            );
            let loaded = crate::script::load(&options);
            let canonical = dir.canonicalize().unwrap_or_else(|_| dir.clone());
            loaded
                .diagnostics
                .iter()
                .filter(|d| {
                    d.severity == crate::content::Severity::Error
                        || d.path
                            .canonicalize()
                            .is_ok_and(|p| p.starts_with(&canonical))
                })
                .map(|d| (d.severity == crate::content::Severity::Error, d.to_string()))
                .collect()
        }
    }
}

/// Lock the profile in `dir` (waiting a bounded time; see `profile::lock`).
pub fn lock_profile(dir: &Path, access: Access) -> anyhow::Result<ProfileLock> {
    ProfileLock::acquire(dir, access).map_err(|e| anyhow::anyhow!(e))
}

/// A closed pipe (`tokensmith ... | head`) ends the output quietly instead of failing.
pub fn quiet_pipe(result: std::io::Result<ExitCode>) -> anyhow::Result<ExitCode> {
    match result {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(ExitCode::SUCCESS),
        other => Ok(other?),
    }
}

/// The deck called `name`: a deck of the loaded packs, else a saved deck.
pub fn named_deck(
    catalog: &crate::rules::Catalog,
    saved: &[SavedDeck],
    name: &str,
) -> anyhow::Result<Vec<Vec<crate::rules::CardId>>> {
    if let Ok(id) = catalog.deck_named(name) {
        return Ok(catalog.deck(id).stacks.clone());
    }
    if let Some(d) = saved.iter().find(|d| d.id == name) {
        let r = d.resolve(catalog);
        anyhow::ensure!(
            r.missing.is_empty(),
            "saved deck '{name}' names cards the loaded packs lack: {}",
            r.missing.join(", ")
        );
        return Ok(r.stacks);
    }
    let known = catalog
        .decks()
        .iter()
        .map(|d| d.meta.id.as_str())
        .chain(saved.iter().map(|d| d.id.as_str()));
    let hint = crate::rules::nearest(name, known)
        .map(|n| format!(" (did you mean '{n}'?)"))
        .unwrap_or_default();
    anyhow::bail!("no deck '{name}' in the loaded packs or the saved decks{hint}")
}
