//! The replays screen: the games saved in the profile's `replays` folder, each with its
//! packs, moves and result; watch one step by step (in the sandbox, rewound to the
//! start), or check it against the content loaded now (as `tokensmith replay` does), or
//! get the packs it was played with that are missing here (by content hash, from the
//! profile's indexes, into a temporary set, as `tokensmith replay --sync` does) and watch
//! it with exactly those. Getting runs on a worker thread, never the frame's.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use egui::{RichText, Ui};

use crate::content::PackFolder;
use crate::index::needs::Needed;
use crate::packs::Folders;
use crate::replay::{Replay, Rerun};
use crate::rules::Catalog;

use super::sandbox::Sandbox;
use super::session::Table;
use super::theme;

/// The most replay files listed (newest first).
const MAX_LISTED: usize = 500;

/// A replay's packs being got on a worker thread: the content they load, or why not;
/// with what was said meanwhile.
type Getting = std::thread::JoinHandle<(Result<Arc<Catalog>, String>, Vec<String>)>;

/// One saved game.
struct Entry {
    path: PathBuf,
    name: String,
    replay: Result<Replay, String>,
    check: Option<Result<Rerun, String>>,
    /// Its packs being got.
    getting: Option<Getting>,
    /// What getting its packs said (the plan, what was fetched).
    got: Vec<String>,
}

/// What the replays screen asks of the app.
pub enum ReplaysAction {
    /// Stay.
    Stay,
    /// Back to the main menu.
    Back,
    /// Step through a saved game: the sandbox, its name, and a move refused now.
    Watch(Box<Sandbox>, String, Option<String>),
}

/// The replays screen.
pub struct ReplaysScreen {
    dir: PathBuf,
    entries: Vec<Entry>,
    /// Why the folder could not be listed.
    problem: Option<String>,
    /// The profile and its pack folders, to get a replay's packs into.
    packs: Option<(PathBuf, Folders)>,
}

/// The profile's replay folder.
#[must_use]
pub fn folder(profile: &Path) -> PathBuf {
    profile.join("replays")
}

impl ReplaysScreen {
    /// The saved games in `dir`.
    #[must_use]
    pub fn new(dir: PathBuf) -> ReplaysScreen {
        let mut screen = ReplaysScreen {
            dir,
            entries: Vec::new(),
            problem: None,
            packs: None,
        };
        screen.refresh();
        screen
    }

    /// The screen offering to get a replay's missing packs for the profile at
    /// `profile`, whose packs are in `folders`.
    #[must_use]
    pub fn with_packs(mut self, profile: PathBuf, folders: Folders) -> ReplaysScreen {
        self.packs = Some((profile, folders));
        self
    }

    /// A replay whose packs were got: watch it with them.
    fn poll(&mut self) -> Option<ReplaysAction> {
        let mut action = None;
        for entry in &mut self.entries {
            if !entry.getting.as_ref().is_some_and(|g| g.is_finished()) {
                continue;
            }
            let Some(job) = entry.getting.take() else {
                continue;
            };
            let (result, said) = job
                .join()
                .unwrap_or_else(|_| (Err("getting the packs failed".into()), Vec::new()));
            entry.got = said;
            let watched = result.and_then(|catalog| match &entry.replay {
                Ok(replay) => Sandbox::from_replay(catalog, replay),
                Err(e) => Err(e.clone()),
            });
            match watched {
                Ok((sandbox, refused)) => {
                    action = Some(ReplaysAction::Watch(
                        Box::new(sandbox),
                        entry.name.clone(),
                        refused,
                    ));
                }
                Err(e) => entry.check = Some(Err(e)),
            }
        }
        action
    }

    fn refresh(&mut self) {
        self.entries.clear();
        self.problem = None;
        let read = match std::fs::read_dir(&self.dir) {
            Ok(r) => r,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return,
            Err(e) => {
                self.problem = Some(format!(
                    "cannot list {}: {e}",
                    crate::fsutil::shown(&self.dir)
                ));
                return;
            }
        };
        let mut paths: Vec<PathBuf> = read
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect();
        paths.sort();
        paths.reverse();
        paths.truncate(MAX_LISTED);
        self.entries = paths
            .into_iter()
            .map(|path| Entry {
                name: path
                    .file_stem()
                    .map_or_else(String::new, |s| s.to_string_lossy().into_owned()),
                replay: crate::replay::read(&path).map_err(|e| e.to_string()),
                check: None,
                getting: None,
                got: Vec::new(),
                path,
            })
            .collect();
    }

    /// Draw the screen.
    pub fn show(
        &mut self,
        ui: &mut Ui,
        catalog: Option<&Arc<Catalog>>,
        folders: &[PackFolder],
    ) -> ReplaysAction {
        let mut action = self.poll().unwrap_or(ReplaysAction::Stay);
        if self.entries.iter().any(|e| e.getting.is_some()) {
            ui.ctx()
                .request_repaint_after(std::time::Duration::from_millis(50));
        }
        egui::Panel::top("replays-bar").show(ui, |ui| {
            ui.add_space(4.0);
            ui.horizontal(|ui| {
                if ui.button("◀ Menu").clicked() {
                    action = ReplaysAction::Back;
                }
                ui.separator();
                ui.heading("Replays");
                ui.separator();
                if ui.button("Refresh").clicked() {
                    self.refresh();
                }
                ui.weak(crate::fsutil::shown(&self.dir));
            });
            ui.add_space(4.0);
        });
        egui::CentralPanel::default_margins().show(ui, |ui| {
            if let Some(p) = &self.problem {
                ui.colored_label(theme::DANGER, p);
            }
            if self.entries.is_empty() {
                ui.weak("No saved games yet: at the end of a game, click Save replay.");
            }
            egui::ScrollArea::vertical().show(ui, |ui| {
                for entry in &mut self.entries {
                    if let Some(a) = entry_row(ui, entry, catalog, folders, self.packs.as_ref()) {
                        action = a;
                    }
                    ui.separator();
                }
            });
        });
        action
    }
}

fn entry_row(
    ui: &mut Ui,
    entry: &mut Entry,
    catalog: Option<&Arc<Catalog>>,
    folders: &[PackFolder],
    packs: Option<&(PathBuf, Folders)>,
) -> Option<ReplaysAction> {
    let mut action = None;
    ui.horizontal(|ui| {
        ui.label(RichText::new(&entry.name).strong());
        match &entry.replay {
            Err(e) => {
                ui.colored_label(theme::DANGER, e);
            }
            Ok(replay) => {
                let packs: Vec<String> = replay
                    .packs
                    .iter()
                    .map(|p| format!("{} {}", p.id, p.version))
                    .collect();
                let conceded = replay
                    .conceded
                    .map_or_else(String::new, |s| format!(" (seat {s} conceded)"));
                ui.label(format!(
                    "{} moves · {}{conceded} · {}",
                    replay.moves.len(),
                    replay.result.text(),
                    packs.join(", ")
                ));
                let Some(catalog) = catalog else {
                    return;
                };
                if ui
                    .button(format!("Watch {}", entry.name))
                    .on_hover_text("Step through it in the sandbox, from the start")
                    .clicked()
                {
                    match Sandbox::from_replay(Arc::clone(catalog), replay) {
                        Ok((sandbox, refused)) => {
                            action = Some(ReplaysAction::Watch(
                                Box::new(sandbox),
                                entry.name.clone(),
                                refused,
                            ));
                        }
                        Err(e) => entry.check = Some(Err(e)),
                    }
                }
                if ui
                    .button(format!("Check {}", entry.name))
                    .on_hover_text("Play it again under the content loaded now and compare")
                    .clicked()
                {
                    entry.check = Some(check(replay, catalog, folders, &entry.path));
                }
            }
        }
        if let (Ok(replay), Some((profile, folders))) = (&entry.replay, packs) {
            if entry.getting.is_some() {
                ui.spinner();
                ui.label("getting the packs…");
            } else if ui
                .button(format!("Get packs and play {}", entry.name))
                .on_hover_text(
                    "Fetch the packs this game was played with that are missing here, by content hash from your indexes, into a set for this game only (your own packs stay as they are), then watch it",
                )
                .clicked()
            {
                entry.got.clear();
                entry.check = None;
                match get_packs(replay, profile.clone(), folders.clone()) {
                    Ok(job) => entry.getting = Some(job),
                    Err(e) => entry.check = Some(Err(e)),
                }
            }
        }
    });
    for line in &entry.got {
        ui.label(RichText::new(line).monospace().weak());
    }
    match &entry.check {
        None => {}
        Some(Err(e)) => {
            ui.colored_label(theme::DANGER, e);
        }
        Some(Ok(rerun)) => {
            let colour = if rerun.same() {
                theme::GOOD
            } else {
                theme::PREVIEW
            };
            if let Ok(replay) = &entry.replay {
                for line in crate::replay::report_text(replay, rerun).lines() {
                    ui.label(RichText::new(line).monospace().color(colour));
                }
            }
        }
    }
    action
}

/// Start getting `replay`'s packs for the profile at `profile` on a worker thread, and
/// loading the content they make.
fn get_packs(replay: &Replay, profile: PathBuf, folders: Folders) -> Result<Getting, String> {
    let needed = Needed::of_replay(replay);
    crate::script::threads::spawn("replay-packs", move || {
        let mut said = Vec::new();
        let got = crate::index::needs::get(&profile, &folders, &needed, false, &mut |l| {
            said.push(l);
        });
        let gotten = match got {
            Ok(g) => g,
            Err(e) => return (Err(format!("{e}; nothing was changed")), said),
        };
        let loaded = crate::script::load(&gotten.load_options(&folders));
        let result = loaded.catalog.map(Arc::new).ok_or_else(|| {
            let first = loaded
                .diagnostics
                .iter()
                .find(|d| d.severity == crate::content::Severity::Error)
                .map(ToString::to_string)
                .unwrap_or_default();
            format!("the replay's packs do not load: {first}")
        });
        (result, said)
    })
    .map_err(|e| format!("cannot start getting the packs: {e}"))
}

/// Re-run `replay` under `catalog`, whose packs are found in `folders`.
fn check(
    replay: &Replay,
    catalog: &Arc<Catalog>,
    folders: &[PackFolder],
    path: &Path,
) -> Result<Rerun, String> {
    let table = Table::new(Arc::clone(catalog));
    let now = crate::replay::stamps(catalog, folders);
    crate::replay::rerun(replay, &table.engine(), catalog, &now)
        .map_err(|e| format!("{}: {e}", crate::fsutil::shown(path)))
}
