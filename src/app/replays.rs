//! The replays screen: the games saved in the profile's `replays` folder, each with its
//! packs, moves and result; watch one step by step (in the sandbox, rewound to the
//! start), or check it against the content loaded now (as `tokensmith replay` does).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use egui::{RichText, Ui};

use crate::content::PackFolder;
use crate::replay::{Replay, Rerun};
use crate::rules::Catalog;

use super::sandbox::Sandbox;
use super::session::Table;
use super::theme;

/// The most replay files listed (newest first).
const MAX_LISTED: usize = 500;

/// One saved game.
struct Entry {
    path: PathBuf,
    name: String,
    replay: Result<Replay, String>,
    check: Option<Result<Rerun, String>>,
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
        };
        screen.refresh();
        screen
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
        let mut action = ReplaysAction::Stay;
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
                    if let Some(a) = entry_row(ui, entry, catalog, folders) {
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
    });
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
