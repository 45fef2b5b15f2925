//! The desktop client (eframe/egui): main menu, new game, the game screen against the AI
//! or hotseat, the sandbox, the deck editor and the content browser. An edge layer: it only calls inwards
//! (rules, content, script, ai) and holds no rule of its own. What a move does is always
//! the engine's answer, read from its events.
//!
//! [`App::show`] draws one frame into any `Ui`, which is how the tests drive it.
//!
//! `App` holds the screens and `ClientSettings` (kept in the profile's `Settings`);
//! `Library` is the loaded catalog, its diagnostics and packs — what a reload replaces.
//! A changed pack set's content is loaded on a worker thread (`App::apply_pack_set`), then
//! applied through `apply_reload`, the same path as a file change.
//! Without a profile folder nothing is saved, and the deck editor says why.

mod anim;
mod balance;
pub mod board;
pub mod browse;
mod browser;
pub mod cards;
pub mod decks;
mod game;
pub mod hover;
pub mod lan;
mod menu;
pub mod mods;
mod new_game;
pub mod preview;
mod replays;
pub mod sandbox;
pub mod session;
mod shared_set;
pub mod theme;

use std::path::PathBuf;
use std::sync::Arc;

use egui::Ui;

use crate::content::{Diagnostic, LoadOptions};
use crate::profile::Profile;
use crate::rules::{Catalog, PackInfo};

pub use decks::DeckEditor;
pub use game::{GameAction, GameScreen};
pub use new_game::{DeckPick, NewGame};
pub use sandbox::{Sandbox, SandboxScreen};
pub use session::{AiSettings, Controller, SeatDeck, Session, SessionError, Setup};

/// The loaded content and everything its load reported. A reload replaces it whole.
pub struct Library {
    /// What was loaded, to load it again.
    pub options: LoadOptions,
    /// The catalog, when the packs loaded without errors.
    pub catalog: Option<Arc<Catalog>>,
    /// Every diagnostic of the load.
    pub diagnostics: Vec<Diagnostic>,
    /// The packs found, in load order.
    pub packs: Vec<PackInfo>,
    /// What the last live reload did, when one happened.
    pub reload: Option<ReloadStatus>,
}

/// The outcome of the last live reload, as the sandbox shows it.
#[derive(Clone, Debug, Default)]
pub struct ReloadStatus {
    /// Whether the new content loaded cleanly (and is now in use).
    pub ok: bool,
    /// The one-line summary with the time the load took.
    pub summary: String,
    /// From the save to the new content being used.
    pub latency: std::time::Duration,
    /// What changed, entry by entry.
    pub changes: Vec<crate::reload::Change>,
    /// What the sandbox's game uses that the new content lacks (the game then stays on
    /// the old content until reset).
    pub lost: Vec<String>,
    /// The new content the sandbox could not take, for "reset with the new content".
    pub waiting: Option<Arc<Catalog>>,
    /// The files whose change caused it (every file of the saves merged).
    pub paths: Vec<PathBuf>,
    /// The load's diagnostics, errors first.
    pub diagnostics: Vec<Diagnostic>,
    /// How many reloads this status tells of: saves less than [`MERGE_WINDOW`] apart
    /// are merged, and `changes` is counted from the content before the first.
    pub saves: usize,
    /// Counts the reloads of this run, so a screen can tell a new status from the one
    /// it has seen (and drop results computed for the old one).
    pub generation: u64,
    /// The content before the first of the merged saves.
    pub base: Option<Arc<Catalog>>,
    /// When it was applied.
    pub at: Option<std::time::Instant>,
}

/// Reloads less than this apart are told as one: two files saved in a row show both
/// files' changes.
pub const MERGE_WINDOW: std::time::Duration = std::time::Duration::from_secs(3);

impl Library {
    /// Load the packs `options` names (scripts compiled too).
    #[must_use]
    pub fn load(options: LoadOptions) -> Library {
        let loaded = crate::script::load(&options);
        Library {
            options,
            catalog: loaded.catalog.map(Arc::new),
            diagnostics: loaded.diagnostics,
            packs: loaded.packs,
            reload: None,
        }
    }

    /// Number of errors.
    #[must_use]
    pub fn errors(&self) -> usize {
        self.diagnostics.iter().filter(|d| d.is_error()).count()
    }
}

/// The client's settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ClientSettings {
    /// How the AI plays.
    pub ai: AiSettings,
    /// Whether moves animate.
    pub animations: bool,
    /// The length of one animation step, in ms.
    pub animation_step_ms: u64,
}

impl Default for ClientSettings {
    fn default() -> Self {
        ClientSettings::from_profile(&crate::profile::Settings::default())
    }
}

impl ClientSettings {
    /// The client's settings as the profile keeps them.
    #[must_use]
    pub fn from_profile(saved: &crate::profile::Settings) -> ClientSettings {
        ClientSettings {
            ai: AiSettings {
                delay: std::time::Duration::from_millis(saved.ai_delay_ms),
                think: std::time::Duration::from_millis(saved.ai_think_ms),
            },
            animations: saved.animations,
            animation_step_ms: saved.animation_step_ms,
        }
    }

    /// Write these settings into the profile's (keeping what the client does not own).
    pub fn to_profile(&self, saved: &mut crate::profile::Settings) {
        let ms = |d: std::time::Duration| u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
        saved.animations = self.animations;
        saved.animation_step_ms = self.animation_step_ms;
        saved.ai_delay_ms = ms(self.ai.delay);
        saved.ai_think_ms = ms(self.ai.think);
    }
}

/// The user's profile as the client holds it: saved decks and settings on disk.
struct Prefs {
    /// The profile folder, or why there is none.
    profile: Result<Profile, String>,
    /// The settings as last read or saved.
    saved: crate::profile::Settings,
    /// Settings whose save failed (not tried again until they change).
    failed: Option<crate::profile::Settings>,
}

/// Live reload: off, asked for (it starts with the first frame, which knows the
/// context to wake), or running.
enum Live {
    Off,
    Wanted(std::time::Duration),
    On(crate::reload::Watcher),
    Failed(String),
}

/// The screen shown.
enum Screen {
    Menu,
    NewGame(NewGame),
    Game(Box<GameScreen>),
    Sandbox(Box<SandboxScreen>),
    Decks(Box<DeckEditor>),
    Browser(browser::Browser),
    Mods(Box<mods::ModsScreen>),
    Lan(Box<lan::LanScreen>),
    Replays(Box<replays::ReplaysScreen>),
    Balance(Box<balance::BalanceScreen>),
}

/// The client.
pub struct App {
    library: Library,
    screen: Screen,
    /// The settings (the settings window edits them).
    pub settings: ClientSettings,
    settings_open: bool,
    fonts_ready: bool,
    live: Live,
    /// The debounce live reload was asked with, to start it again over new options.
    debounce: Option<std::time::Duration>,
    quit: bool,
    error: Option<String>,
    prefs: Prefs,
    /// The pack folders and the enabled set (the Mods screen), when known.
    packs: Option<mods::Packs>,
    /// The sandbox left for the menu: Sandbox resumes it (its Reset starts over).
    parked: Option<Box<SandboxScreen>>,
    /// The content of a changed pack set, loaded on a worker thread (the newest change
    /// only).
    applying: Option<Applying>,
}

/// A changed pack set's content being loaded on a worker thread ([`App::apply_pack_set`]):
/// the frame polls for it and applies it as a reload.
struct Applying {
    rx: std::sync::mpsc::Receiver<crate::reload::Reload>,
    since: std::time::Instant,
}

impl App {
    /// A client over `library` with no profile: nothing is saved, and the deck editor
    /// says so.
    #[must_use]
    pub fn new(library: Library) -> App {
        App::with_profile(
            library,
            Err("No profile folder: decks and settings are not saved in this session.".into()),
        )
    }

    /// A client over `library` keeping decks and settings in `profile` (or, when it could
    /// not be opened, saying why on the main menu). The settings are read from it.
    #[must_use]
    pub fn with_profile(library: Library, profile: Result<Profile, String>) -> App {
        let mut profile = profile;
        let saved = match &mut profile {
            Ok(p) => p.settings(),
            Err(_) => crate::profile::Settings::default(),
        };
        App {
            library,
            screen: Screen::Menu,
            settings: ClientSettings::from_profile(&saved),
            settings_open: false,
            fonts_ready: false,
            live: Live::Off,
            debounce: None,
            quit: false,
            error: None,
            prefs: Prefs {
                profile,
                saved,
                failed: None,
            },
            packs: None,
            parked: None,
            applying: None,
        }
    }

    /// This client with pack folders and an enabled set: the Mods screen can turn packs
    /// on and off, reorder and install them.
    #[must_use]
    pub fn with_packs(mut self, packs: mods::Packs) -> App {
        self.packs = Some(packs);
        self
    }

    /// The Mods screen, when it is shown.
    #[must_use]
    pub fn mods(&self) -> Option<&mods::ModsScreen> {
        match &self.screen {
            Screen::Mods(m) => Some(m),
            _ => None,
        }
    }

    /// The enabled set, when the client has one.
    #[must_use]
    pub fn pack_set(&self) -> Option<&crate::packs::PackSet> {
        self.packs.as_ref().map(|p| &p.set)
    }

    /// Load the content the current pack set selects, now, through the live-reload
    /// path (so the sandbox carries over as it does for edits), and watch with the new
    /// options from now on.
    /// Load the content of the changed pack set on a worker thread; the frame applies it
    /// as a reload when it is loaded ([`App::poll_applying`]). A newer change replaces
    /// one still loading, whose content is then dropped.
    fn apply_pack_set(&mut self, ctx: &egui::Context) {
        let Some(packs) = &self.packs else { return };
        let options = packs.options();
        self.library.options = options.clone();
        let (tx, rx) = std::sync::mpsc::channel();
        let ctx = ctx.clone();
        let since = std::time::Instant::now();
        let spawned = crate::script::threads::spawn("tokensmith-pack-set", move || {
            let loaded = crate::script::load(&options);
            let _ = tx.send(crate::reload::Reload {
                loaded,
                paths: Vec::new(),
                seen: since,
                took: since.elapsed(),
            });
            ctx.request_repaint();
        });
        match spawned {
            Ok(_) => self.applying = Some(Applying { rx, since }),
            Err(e) => self.error = Some(format!("The packs could not be loaded again: {e}")),
        }
        if let Some(debounce) = self.debounce {
            // The old watcher stops when dropped; the new one watches the new folders.
            self.live = Live::Wanted(debounce);
        }
    }

    /// Apply the changed pack set's content once its worker has loaded it.
    fn poll_applying(&mut self, ui: &Ui) {
        let Some(applying) = &self.applying else {
            return;
        };
        match applying.rx.try_recv() {
            Ok(reload) => {
                self.applying = None;
                self.apply_reload(reload);
            }
            Err(std::sync::mpsc::TryRecvError::Empty) => {
                ui.ctx()
                    .request_repaint_after(std::time::Duration::from_millis(50));
            }
            Err(std::sync::mpsc::TryRecvError::Disconnected) => {
                self.applying = None;
                self.error = Some("Loading the packs again stopped before it was done.".into());
            }
        }
    }

    /// Whether a changed pack set's content is still loading (since how long).
    #[must_use]
    pub fn applying_for(&self) -> Option<std::time::Duration> {
        self.applying.as_ref().map(|a| a.since.elapsed())
    }

    /// Save the pack set (saying so when that fails) and apply it.
    fn pack_set_changed(&mut self, ctx: &egui::Context) -> Option<String> {
        let saved = self.packs.as_ref().map(|p| p.set.save());
        self.apply_pack_set(ctx);
        match saved {
            Some(Err(e)) => Some(format!("Applied for this session, but not saved: {e}")),
            _ => None,
        }
    }

    /// Install dropped files (pack archives or folders) and show the Mods screen with
    /// what happened.
    fn take_dropped(&mut self, ui: &Ui) {
        let dropped: Vec<PathBuf> = ui.input(|i| {
            i.raw
                .dropped_files
                .iter()
                .map(|f| f.path().to_path_buf())
                .filter(|p| !p.as_os_str().is_empty())
                .collect()
        });
        if dropped.is_empty() {
            return;
        }
        let Some(packs) = &self.packs else {
            self.error =
                Some("Packs cannot be installed: this session has no pack folders.".into());
            return;
        };
        let mut screen = match std::mem::replace(&mut self.screen, Screen::Menu) {
            Screen::Mods(m) => m,
            _ => Box::new(mods::ModsScreen::new(packs)),
        };
        // Installed on a worker; the Mods screen says what happened when it is done.
        screen.install(packs, dropped, false);
        self.screen = Screen::Mods(screen);
    }

    /// The profile's settings as last read or saved.
    #[must_use]
    pub fn saved_settings(&self) -> &crate::profile::Settings {
        &self.prefs.saved
    }

    /// The deck editor, when it is shown.
    #[must_use]
    pub fn deck_editor(&self) -> Option<&DeckEditor> {
        match &self.screen {
            Screen::Decks(d) => Some(d),
            _ => None,
        }
    }

    /// The new-game screen, when it is shown.
    #[must_use]
    pub fn new_game(&self) -> Option<&NewGame> {
        match &self.screen {
            Screen::NewGame(n) => Some(n),
            _ => None,
        }
    }

    /// The loaded content.
    #[must_use]
    pub fn library(&self) -> &Library {
        &self.library
    }

    /// Watch the pack folders and apply changes while running, debouncing saves by
    /// `debounce`. The watch starts with the next frame.
    pub fn enable_live_reload(&mut self, debounce: std::time::Duration) {
        self.debounce = Some(debounce);
        self.live = Live::Wanted(debounce);
    }

    /// Whether the pack folders are being watched.
    #[must_use]
    pub fn watching(&self) -> bool {
        matches!(self.live, Live::On(_))
    }

    fn poll_reload(&mut self, ui: &Ui) {
        if let Live::Wanted(debounce) = self.live {
            let ctx = ui.ctx().clone();
            self.live = match crate::reload::Watcher::start(
                self.library.options.clone(),
                debounce,
                move || ctx.request_repaint(),
            ) {
                Ok(w) => Live::On(w),
                Err(e) => Live::Failed(e.to_string()),
            };
        }
        let Live::On(watcher) = &self.live else {
            return;
        };
        let Some(reload) = watcher.latest() else {
            return;
        };
        self.apply_reload(reload);
    }

    fn apply_reload(&mut self, reload: crate::reload::Reload) {
        let summary = reload.summary();
        // Saves close together are one edit to the reader: what changed is told since
        // the content before the first of them, for every file saved.
        let previous = self.library.reload.take();
        let generation = previous.as_ref().map_or(1, |p| p.generation + 1);
        let merged = previous.filter(|p| p.at.is_some_and(|t| t.elapsed() < MERGE_WINDOW));
        let mut paths = merged.as_ref().map(|p| p.paths.clone()).unwrap_or_default();
        paths.extend(reload.paths);
        paths.sort();
        paths.dedup();
        let base = merged
            .as_ref()
            .and_then(|p| p.base.clone())
            .or_else(|| self.library.catalog.clone());
        let mut status = ReloadStatus {
            ok: reload.loaded.catalog.is_some(),
            summary,
            paths,
            saves: merged.as_ref().map_or(1, |p| p.saves + 1),
            generation,
            ..ReloadStatus::default()
        };
        self.library.diagnostics = reload.loaded.diagnostics;
        status.diagnostics = self
            .library
            .diagnostics
            .iter()
            .filter(|d| d.is_error())
            .chain(self.library.diagnostics.iter().filter(|d| !d.is_error()))
            .cloned()
            .collect();
        if let Some(new) = reload.loaded.catalog {
            let new = Arc::new(new);
            if let Some(old) = &base {
                status.changes = crate::reload::diff(old, &new);
            }
            self.library.catalog = Some(Arc::clone(&new));
            self.library.packs = reload.loaded.packs;
            let sandbox = match &mut self.screen {
                Screen::Sandbox(s) => Some(s),
                _ => self.parked.as_mut(),
            };
            if let Some(s) = sandbox
                && let Err(lost) = s.adopt(Arc::clone(&new))
            {
                status.lost = lost;
                status.waiting = Some(new);
            }
        }
        status.base = base;
        status.latency = reload.seen.elapsed();
        status.at = Some(std::time::Instant::now());
        self.library.reload = Some(status);
    }

    /// Whether Quit was chosen.
    #[must_use]
    pub fn quit_requested(&self) -> bool {
        self.quit
    }

    /// The game screen, when a game is shown.
    #[must_use]
    pub fn game(&self) -> Option<&GameScreen> {
        match &self.screen {
            Screen::Game(g) => Some(g),
            _ => None,
        }
    }

    /// The sandbox, when it is shown.
    #[must_use]
    pub fn sandbox(&self) -> Option<&SandboxScreen> {
        match &self.screen {
            Screen::Sandbox(s) => Some(s),
            _ => None,
        }
    }

    /// Draw one frame.
    pub fn show(&mut self, ui: &mut Ui) {
        if !self.fonts_ready {
            theme::install_fonts(ui.ctx());
            self.fonts_ready = true;
        }
        self.poll_reload(ui);
        self.poll_applying(ui);
        self.take_dropped(ui);
        let settings = self.settings;
        let mut mods_changed = false;
        let mut park = false;
        let next = match &mut self.screen {
            Screen::Menu => self.menu_frame(ui),
            Screen::NewGame(setup) => match setup.show(ui, &self.library) {
                new_game::NewGameAction::Stay => None,
                new_game::NewGameAction::Back => Some(Screen::Menu),
                new_game::NewGameAction::Start(setup) => self.start_game(setup),
            },
            Screen::Decks(editor) => match (&self.library.catalog, &mut self.prefs.profile) {
                (Some(catalog), Ok(profile)) => {
                    match editor.show(ui, catalog, profile, &mut self.prefs.saved) {
                        decks::DeckEditorAction::Stay => None,
                        decks::DeckEditorAction::Menu => Some(Screen::Menu),
                    }
                }
                _ => Some(Screen::Menu),
            },
            Screen::Lan(screen) => match screen.show(ui, &self.library) {
                lan::LanAction::Stay => None,
                lan::LanAction::Back => Some(Screen::Menu),
                lan::LanAction::Start(session) => {
                    Some(Screen::Game(Box::new(GameScreen::new(*session))))
                }
            },
            Screen::Game(game) => match game.show(ui, &settings) {
                GameAction::None => None,
                GameAction::SaveReplay => {
                    let saved = match &self.prefs.profile {
                        Ok(profile) => {
                            let session = &game.session;
                            let catalog = session.catalog();
                            let replay = crate::replay::record(
                                session.timeline(),
                                catalog,
                                session.setup.seed,
                                crate::replay::stamps(catalog, &self.library.options.folders),
                                session.conceded(),
                            );
                            crate::replay::save(
                                &replays::folder(profile.dir()),
                                &replay_stem(),
                                &replay,
                            )
                            .map_err(|e| e.to_string())
                        }
                        Err(why) => Err(format!("there is no profile to save to: {why}")),
                    };
                    game.replay_saved = Some(saved);
                    None
                }
                GameAction::MainMenu => Some(Screen::Menu),
                GameAction::PlayAgain => {
                    // The same decks need the content they were resolved in.
                    let mut setup = game.session.setup.clone();
                    setup.seed = setup.seed.wrapping_add(1);
                    let catalog = Arc::clone(game.session.catalog());
                    self.start_game_with(catalog, setup)
                }
            },
            Screen::Sandbox(sandbox) => match sandbox.show(ui, &mut self.library.reload) {
                sandbox::SandboxAction::Stay => None,
                sandbox::SandboxAction::Menu => {
                    park = !sandbox.is_watching();
                    Some(Screen::Menu)
                }
                sandbox::SandboxAction::Restart(catalog) => {
                    match Sandbox::new(catalog, crate::rules::DeckId(0), menu::fresh_seed()) {
                        Ok(s) => Some(self.sandbox_screen(s)),
                        Err(e) => {
                            self.error = Some(e.to_string());
                            Some(Screen::Menu)
                        }
                    }
                }
            },
            Screen::Replays(screen) => match screen.show(
                ui,
                self.library.catalog.as_ref(),
                &self.library.options.folders,
            ) {
                replays::ReplaysAction::Stay => None,
                replays::ReplaysAction::Back => Some(Screen::Menu),
                replays::ReplaysAction::Watch(sandbox, name, refused) => {
                    match self.sandbox_screen(*sandbox) {
                        Screen::Sandbox(s) => {
                            Some(Screen::Sandbox(Box::new(s.watching(name, refused))))
                        }
                        other => Some(other),
                    }
                }
            },
            Screen::Balance(screen) => match &self.library.catalog {
                Some(catalog) => match screen.show(ui, catalog, &self.library.options) {
                    balance::BalanceAction::Stay => None,
                    balance::BalanceAction::Menu => Some(Screen::Menu),
                    balance::BalanceAction::Sandbox(catalog, note) => {
                        match Sandbox::new(catalog, crate::rules::DeckId(0), menu::fresh_seed()) {
                            Ok(s) => match self.sandbox_screen(s) {
                                Screen::Sandbox(s) => {
                                    Some(Screen::Sandbox(Box::new(s.with_note(note))))
                                }
                                other => Some(other),
                            },
                            Err(e) => {
                                self.error = Some(e.to_string());
                                None
                            }
                        }
                    }
                },
                None => Some(Screen::Menu),
            },
            Screen::Browser(browser) => match &self.library.catalog {
                Some(catalog) => browser.show(ui, catalog).then_some(Screen::Menu),
                None => Some(Screen::Menu),
            },
            Screen::Mods(screen) => match &mut self.packs {
                Some(packs) => match screen.show(ui, packs) {
                    mods::ModsAction::Stay => None,
                    mods::ModsAction::Menu => Some(Screen::Menu),
                    mods::ModsAction::Refused(why) => {
                        screen.status = Some((false, why));
                        // The status line sits above what was just drawn: lay the
                        // screen out again with it, rather than clipped until the next
                        // input.
                        ui.ctx()
                            .request_discard("the Mods screen's status line changed");
                        None
                    }
                    mods::ModsAction::IndexInstalled(ok, line) => {
                        screen.status = Some((ok, line));
                        ui.ctx()
                            .request_discard("the Mods screen's status line changed");
                        mods_changed = true;
                        None
                    }
                    mods::ModsAction::Install(path, replace) => {
                        screen.install(packs, vec![path], replace);
                        None
                    }
                    mods::ModsAction::Remove(id) => {
                        let removed = match &packs.profile {
                            Some(dir) => crate::packs::Store::new(dir).remove(&id),
                            None => Err(crate::packs::PackError::Refused("no profile".into())),
                        };
                        screen.status = Some(match removed {
                            Ok(to) => {
                                let _ = crate::packs::set::disable(
                                    &mut packs.set,
                                    &packs.folders,
                                    &id,
                                    true,
                                );
                                packs.set.forget(&id);
                                (
                                    true,
                                    format!("Removed {id}: moved to {}", crate::fsutil::shown(&to)),
                                )
                            }
                            Err(e) => (false, format!("Not removed: {e}")),
                        });
                        mods_changed = true;
                        None
                    }
                    mods::ModsAction::SetChanged => {
                        screen.status = None;
                        mods_changed = true;
                        None
                    }
                },
                None => Some(Screen::Menu),
            },
        };
        if mods_changed {
            if let Some(why) = self.pack_set_changed(ui.ctx()) {
                self.error = Some(why);
            }
            if let (Screen::Mods(screen), Some(packs)) = (&mut self.screen, &self.packs) {
                screen.refresh(packs);
                if let Some(e) = self.error.take() {
                    screen.status = Some((false, e));
                }
            }
        }
        if let Some(screen) = next {
            let old = std::mem::replace(&mut self.screen, screen);
            if park && let Screen::Sandbox(s) = old {
                self.parked = Some(s);
            }
        } else if let Some(e) = self.error.take() {
            // A start that failed says so where it was asked for.
            match &mut self.screen {
                Screen::NewGame(setup) => setup.set_problem(e),
                Screen::Game(game) => game.set_message(e),
                _ => self.error = Some(e),
            }
        }
        if self.settings_open {
            self.settings_window(ui);
        }
        self.keep_settings(ui);
    }

    /// Save the settings when they changed (once the pointer is let go, so dragging a
    /// slider writes the file once). A failed save is said once and tried again with the
    /// next change.
    fn keep_settings(&mut self, ui: &Ui) {
        let mut wanted = self.prefs.saved.clone();
        self.settings.to_profile(&mut wanted);
        if wanted == self.prefs.saved {
            self.prefs.failed = None;
            return;
        }
        if self.prefs.failed.as_ref() == Some(&wanted) || ui.input(|i| i.pointer.any_down()) {
            return;
        }
        match &self.prefs.profile {
            Ok(profile) => match profile.save_settings(&wanted) {
                Ok(_) => {
                    self.prefs.saved = wanted;
                    self.prefs.failed = None;
                }
                Err(e) => {
                    self.error = Some(format!("Settings not saved: {e}"));
                    self.prefs.failed = Some(wanted);
                }
            },
            Err(_) => self.prefs.saved = wanted,
        }
    }

    /// The saved decks and the default deck, read afresh for a new game.
    fn saved_decks(&mut self) -> (Vec<crate::profile::SavedDeck>, Option<String>) {
        match &mut self.prefs.profile {
            Ok(p) => (p.decks(), self.prefs.saved.default_deck.clone()),
            Err(_) => (Vec::new(), None),
        }
    }

    fn new_game_screen(&mut self, vs_ai: bool) -> Screen {
        let (saved, default) = self.saved_decks();
        Screen::NewGame(NewGame::new(
            &self.library,
            vs_ai,
            saved,
            default.as_deref(),
        ))
    }

    /// The pack folders: the packs' own, or the first two load folders.
    fn folders(&self) -> crate::packs::Folders {
        self.packs.as_ref().map_or_else(
            || {
                let f = &self.library.options.folders;
                crate::packs::Folders {
                    content: f.first().map(|f| f.path.clone()).unwrap_or_default(),
                    mods: f.get(1).map(|f| f.path.clone()).unwrap_or_default(),
                    installed: None,
                }
            },
            |p| p.folders.clone(),
        )
    }

    /// The sandbox screen for `sandbox`, saving scenarios to `tests/scenarios` when run
    /// from a project that has one, else to the profile's `scenarios` folder.
    fn sandbox_screen(&self, sandbox: Sandbox) -> Screen {
        let folders = self.folders();
        let tests = PathBuf::from("tests").join("scenarios");
        let folder = if tests.is_dir() {
            tests
        } else {
            match &self.prefs.profile {
                Ok(p) => p.dir().join("scenarios"),
                Err(_) => PathBuf::from("scenarios"),
            }
        };
        // Installed packs are not where `tokensmith scenario` looks: name their folder.
        let pack_dirs = folders
            .installed
            .iter()
            .filter(|dir| {
                sandbox.catalog().packs().iter().any(|p| {
                    dir.join(&p.id).is_dir()
                        && !folders.content.join(&p.id).is_dir()
                        && !folders.mods.join(&p.id).is_dir()
                })
            })
            .map(|d| d.display().to_string())
            .collect();
        let saving = sandbox::SaveTo {
            folder,
            packs: crate::scenario::PackPaths {
                content: folders.content.clone(),
                mods: folders.mods.clone(),
            },
            pack_dirs,
        };
        Screen::Sandbox(Box::new(SandboxScreen::new(sandbox).saving_to(saving)))
    }

    fn lan_screen(&mut self) -> Screen {
        let (saved, _) = self.saved_decks();
        let folders = self.folders();
        let cache = match &self.prefs.profile {
            Ok(p) => p.dir().to_path_buf(),
            Err(_) => std::env::temp_dir().join("tokensmith-lan"),
        };
        let name = std::env::var("USER")
            .or_else(|_| std::env::var("USERNAME"))
            .unwrap_or_else(|_| "Player".into());
        Screen::Lan(Box::new(lan::LanScreen::new(
            lan::LanContext {
                folders,
                cache,
                saved,
                name,
            },
            &self.library,
        )))
    }

    fn start_game(&mut self, setup: Setup) -> Option<Screen> {
        let catalog = self.library.catalog.clone()?;
        self.start_game_with(catalog, setup)
    }

    fn start_game_with(&mut self, catalog: Arc<Catalog>, setup: Setup) -> Option<Screen> {
        match Session::start(catalog, setup) {
            Ok(session) => Some(Screen::Game(Box::new(GameScreen::new(session)))),
            Err(e) => {
                self.error = Some(e.to_string());
                None
            }
        }
    }

    /// The live-reload state in words, for the main menu.
    fn live_status(&self) -> Option<String> {
        match &self.live {
            Live::Off | Live::Wanted(_) => None,
            Live::On(w) => {
                let folders: Vec<String> =
                    w.folders.iter().map(|f| f.display().to_string()).collect();
                Some(format!("Live reload: watching {}", folders.join(", ")))
            }
            Live::Failed(e) => Some(format!("Live reload is off: {e}")),
        }
    }

    fn menu_frame(&mut self, ui: &mut Ui) -> Option<Screen> {
        let live = self.live_status();
        let (no_profile, notes) = match &self.prefs.profile {
            Ok(p) => (None, p.notes.as_slice()),
            Err(e) => (Some(e.as_str()), &[][..]),
        };
        let info = menu::MenuInfo {
            error: self.error.as_deref(),
            live: live.as_deref(),
            no_profile,
            profile_notes: notes,
            sandbox_kept: self.parked.as_ref().map(|s| s.sandbox.steps().len()),
        };
        let choice = menu::main_menu(ui, &self.library, &info);
        let catalog = self.library.catalog.clone();
        match choice? {
            menu::MenuChoice::PlayAi => Some(self.new_game_screen(true)),
            menu::MenuChoice::Hotseat => Some(self.new_game_screen(false)),
            menu::MenuChoice::Lan => Some(self.lan_screen()),
            menu::MenuChoice::Replays => match &self.prefs.profile {
                Ok(profile) => Some(Screen::Replays(Box::new(
                    replays::ReplaysScreen::new(replays::folder(profile.dir()))
                        .with_packs(profile.dir().to_path_buf(), self.folders()),
                ))),
                Err(_) => None,
            },
            menu::MenuChoice::Decks => match &mut self.prefs.profile {
                Ok(profile) => Some(Screen::Decks(Box::new(DeckEditor::new(
                    profile,
                    &self.prefs.saved,
                )))),
                Err(_) => None,
            },
            menu::MenuChoice::Sandbox => {
                if let Some(kept) = self.parked.take() {
                    return Some(Screen::Sandbox(kept));
                }
                let catalog = catalog?;
                let deck = catalog.decks().first().map(|_| crate::rules::DeckId(0))?;
                match Sandbox::new(catalog, deck, menu::fresh_seed()) {
                    Ok(s) => Some(self.sandbox_screen(s)),
                    Err(e) => {
                        self.error = Some(e.to_string());
                        None
                    }
                }
            }
            menu::MenuChoice::Cards => Some(Screen::Browser(browser::Browser::default())),
            menu::MenuChoice::Balance => Some(Screen::Balance(Box::default())),
            menu::MenuChoice::Mods => self
                .packs
                .as_ref()
                .map(|p| Screen::Mods(Box::new(mods::ModsScreen::new(p)))),
            menu::MenuChoice::Settings => {
                self.settings_open = true;
                None
            }
            menu::MenuChoice::Quit => {
                self.quit = true;
                ui.ctx().send_viewport_cmd(egui::ViewportCommand::Close);
                None
            }
        }
    }

    fn settings_window(&mut self, ui: &mut Ui) {
        let mut open = self.settings_open;
        egui::Window::new("Settings")
            .open(&mut open)
            .resizable(false)
            .show(ui.ctx(), |ui| {
                ui.checkbox(&mut self.settings.animations, "Animate moves");
                ui.add(
                    egui::Slider::new(
                        &mut self.settings.animation_step_ms,
                        crate::profile::Settings::ANIMATION_STEP_MS,
                    )
                    .text("animation step (ms)"),
                );
                let mut delay = u64::try_from(self.settings.ai.delay.as_millis()).unwrap_or(0);
                ui.add(
                    egui::Slider::new(&mut delay, crate::profile::Settings::AI_DELAY_MS)
                        .text("AI move delay (ms)"),
                );
                self.settings.ai.delay = std::time::Duration::from_millis(delay);
                let mut think = u64::try_from(self.settings.ai.think.as_millis()).unwrap_or(0);
                ui.add(
                    egui::Slider::new(&mut think, crate::profile::Settings::AI_THINK_MS)
                        .text("hard AI thinking time (ms)"),
                );
                self.settings.ai.think = std::time::Duration::from_millis(think);
                ui.separator();
                match &self.prefs.profile {
                    Ok(p) => ui.weak(format!(
                        "Saved in {}",
                        p.dir().join("settings.yaml").display()
                    )),
                    Err(e) => ui.colored_label(theme::PREVIEW, e),
                };
            });
        self.settings_open = open;
    }
}

impl eframe::App for App {
    fn ui(&mut self, ui: &mut Ui, _frame: &mut eframe::Frame) {
        self.show(ui);
    }
}

/// Open the client window over the packs `options` selects (the profile's enabled set,
/// or what the command line's flags chose for this run), with `packs` for the Mods
/// screen, keeping decks and settings in `profile` (default: the platform's data folder).
pub fn run(
    options: LoadOptions,
    packs: mods::Packs,
    profile: Option<PathBuf>,
) -> anyhow::Result<()> {
    if let Some(why) = no_display() {
        anyhow::bail!(why);
    }
    let library = Library::load(options);
    let profile = profile
        .or_else(Profile::default_dir)
        .ok_or_else(|| "No profile folder: this system names no data folder; start with --profile DIR to keep decks and settings.".to_string())
        .and_then(|dir| Profile::open(&dir).map_err(|e| e.to_string()));
    let mut app = App::with_profile(library, profile).with_packs(packs);
    app.enable_live_reload(crate::reload::DEBOUNCE);
    let options = eframe::NativeOptions {
        viewport: egui::ViewportBuilder::default()
            .with_title("Tokensmith")
            .with_inner_size([1280.0, 800.0])
            .with_min_inner_size([960.0, 640.0]),
        ..Default::default()
    };
    eframe::run_native(
        "Tokensmith",
        options,
        Box::new(move |cc| {
            cc.egui_ctx.set_theme(egui::Theme::Dark);
            Ok(Box::new(app))
        }),
    )
    .map_err(|e| anyhow::anyhow!("cannot open the window: {}", plain(&e.to_string())))
}

/// A replay file's name from the clock: `game-2026-11-25-0142` (UTC).
fn replay_stem() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let (y, m, d) = crate::fsutil::civil_date(i64::try_from(secs / 86_400).unwrap_or(0));
    let minutes = secs % 86_400 / 60;
    format!(
        "game-{y:04}-{m:02}-{d:02}-{:02}{:02}",
        minutes / 60,
        minutes % 60
    )
}

/// Why there is no display to open a window on, when that can be told beforehand (X11
/// and Wayland systems with neither variable set).
fn no_display() -> Option<String> {
    if cfg!(any(target_os = "windows", target_os = "macos")) {
        return None;
    }
    let set = |v: &str| std::env::var_os(v).is_some_and(|x| !x.is_empty());
    if set("DISPLAY") || set("WAYLAND_DISPLAY") || set("WAYLAND_SOCKET") {
        return None;
    }
    Some(
        "there is no display to open the window on (neither DISPLAY nor WAYLAND_DISPLAY is set): \
         start Tokensmith from a desktop session, or use the command line (`tokensmith --help`)"
            .into(),
    )
}

/// A windowing error without the source location the library puts in it:
/// "os error at /path/to/file.rs:765: message" becomes "message".
fn plain(text: &str) -> String {
    let Some(at) = text.find(" at ") else {
        return text.to_string();
    };
    let rest = &text[at + 4..];
    match rest.find(".rs:").and_then(|rs| rest[rs..].split_once(": ")) {
        Some((_, message)) => message.trim().to_string(),
        None => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::plain;

    #[test]
    fn window_errors_lose_their_source_path() {
        assert_eq!(
            plain(
                "os error at /home/b/.cargo/registry/src/winit-0.30/src/x11/mod.rs:765: failed to open display"
            ),
            "failed to open display"
        );
        assert_eq!(plain("no adapter found"), "no adapter found");
        assert_eq!(plain("seen at noon"), "seen at noon");
    }
}
