//! The Mods screen's Browse tab: search the profile's pack indexes (`tokensmith index
//! add`), see a pack's description, versions and requirements, check what it would change
//! against the enabled packs before installing (the conflict report, from its archives
//! checked as an install checks them), and install or update it with what it requires.

use egui::{RichText, Ui};

use crate::index::player::{self, Fetched, Found, InstallPlan};
use crate::index::{Entry, PackFile};
use crate::packs::{PackSource, Store};

use super::theme;

/// Where the packs are: what the tab reads (the Mods screen's packs, borrowed).
#[derive(Clone, Copy)]
pub struct Packs<'a> {
    /// The profile folder (none: no indexes, no installs).
    pub profile: Option<&'a std::path::Path>,
    /// The pack folders.
    pub folders: &'a crate::packs::Folders,
    /// The enabled set.
    pub set: &'a crate::packs::PackSet,
}

/// What the Browse tab asks of the app.
#[derive(Debug, PartialEq, Eq)]
pub enum BrowseAction {
    /// Nothing.
    Stay,
    /// Install (or, with `update`, update) this pack from the indexes.
    Install {
        /// The pack's id.
        id: String,
        /// Replace the installed version.
        update: bool,
    },
}

/// The pack shown in detail.
struct Selected {
    found: Found,
    /// Its versions, newest first (none when its entry could not be read).
    file: Result<PackFile, String>,
    /// The version installed now, if any.
    installed: Option<String>,
    /// What installing it would change, once checked.
    preview: Option<Result<Vec<String>, String>>,
}

/// The Browse tab's state.
#[derive(Default)]
pub struct Browse {
    query: String,
    results: Vec<Found>,
    searched: bool,
    notes: Vec<String>,
    selected: Option<Selected>,
}

/// The version of `id` installed in the profile, if any.
fn installed_version(packs: &Packs<'_>, id: &str) -> Option<String> {
    let (found, _) = crate::packs::set::find(packs.folders);
    found
        .iter()
        .find(|f| f.pack.id() == id && f.source == PackSource::Installed)
        .map(|f| f.pack.version.to_string())
}

/// Plan and fetch `id` (checked: signatures, pins, sizes, hashes) into a temporary folder.
fn fetch(
    packs: &Packs<'_>,
    id: &str,
    update: bool,
) -> Result<(InstallPlan, Vec<Fetched>, tempfile::TempDir), String> {
    let profile = packs
        .profile
        .ok_or("No profile folder: packs cannot be installed in this session.")?;
    let (indexes, _) = player::open_all(profile).map_err(|e| e.to_string())?;
    let plan = player::plan(
        &indexes,
        packs.folders,
        &[(id.to_string(), semver::VersionReq::STAR)],
        update,
    )
    .map_err(|e| e.to_string())?;
    let pins = crate::index::keys::Pins::open(profile).map_err(|e| e.to_string())?;
    let temp = tempfile::tempdir().map_err(|e| format!("no temporary folder: {e}"))?;
    let fetched = player::fetch(&plan, &pins, false, temp.path()).map_err(|e| e.to_string())?;
    Ok((plan, fetched, temp))
}

/// Install `id` from the indexes (with `update`, replacing the installed version) with
/// what it requires; a line saying what happened, and whether it worked.
pub fn install(packs: &Packs<'_>, id: &str, update: bool) -> (bool, String) {
    let result = fetch(packs, id, update).and_then(|(plan, fetched, _temp)| {
        if plan.steps.is_empty() {
            return Ok(plan.notes.join("; "));
        }
        let profile = packs.profile.ok_or("no profile")?;
        let (found, _) = crate::packs::set::find(packs.folders);
        let elsewhere = |pack: &str| {
            found
                .iter()
                .find(|f| f.pack.id() == pack && f.source != PackSource::Installed)
                .map(|f| f.pack.dir.clone())
        };
        let done = player::install(profile, &Store::new(profile), &fetched, &elsewhere)
            .map_err(|e| e.to_string())?;
        Ok(format!(
            "{}. Turn new packs on in the Installed tab to play with them.",
            done.join(", ")
        ))
    });
    match result {
        Ok(line) => (true, line),
        Err(e) => (false, format!("Not installed: {e}")),
    }
}

impl Browse {
    /// Read the selected pack's installed version again (after an install).
    pub fn refresh(&mut self, packs: &Packs<'_>) {
        if let Some(sel) = &mut self.selected {
            sel.installed = installed_version(packs, &sel.found.pack.id);
            sel.preview = None;
        }
    }

    /// Search the indexes for the words typed.
    fn search(&mut self, packs: &Packs<'_>) {
        self.searched = true;
        self.notes.clear();
        self.results.clear();
        self.selected = None;
        let Some(profile) = packs.profile else {
            self.notes
                .push("No profile folder: there are no indexes in this session.".into());
            return;
        };
        match player::open_all(profile) {
            Ok((indexes, notes)) => {
                self.notes = notes;
                let mut summaries = Vec::new();
                for index in &indexes {
                    match index.summary() {
                        Ok(s) => summaries.push((index.name.clone(), s)),
                        Err(e) => self
                            .notes
                            .push(format!("index '{}' is left out: {e}", index.name)),
                    }
                }
                let words: Vec<String> =
                    self.query.split_whitespace().map(str::to_string).collect();
                self.results = player::search(&summaries, &words);
            }
            Err(e) => self.notes.push(e.to_string()),
        }
    }

    /// Show `found` in detail.
    fn select(&mut self, packs: &Packs<'_>, found: Found) {
        let file = packs
            .profile
            .ok_or_else(|| "no profile".to_string())
            .and_then(|profile| player::open_all(profile).map_err(|e| e.to_string()))
            .and_then(|(indexes, _)| {
                let index = indexes
                    .iter()
                    .find(|i| i.name == found.index)
                    .ok_or_else(|| format!("index '{}' cannot be read now", found.index))?;
                index
                    .pack(&found.pack.id)
                    .map_err(|e| e.to_string())?
                    .ok_or_else(|| "the index no longer lists it".to_string())
            })
            .map(|mut f| {
                f.versions.reverse();
                f
            });
        self.selected = Some(Selected {
            installed: installed_version(packs, &found.pack.id),
            found,
            file,
            preview: None,
        });
    }

    /// Draw the tab; what the user asked for.
    pub fn show(&mut self, ui: &mut Ui, packs: &Packs<'_>) -> BrowseAction {
        let mut action = BrowseAction::Stay;
        egui::Panel::right("browse-details")
            .resizable(true)
            .default_size(520.0)
            .show(ui, |ui| {
                egui::ScrollArea::vertical()
                    .id_salt("browse-details")
                    .show(ui, |ui| {
                        if let Some(a) = self.details(ui, packs) {
                            action = a;
                        }
                    });
            });
        egui::CentralPanel::default_margins().show(ui, |ui| {
            ui.horizontal(|ui| {
                let field = ui.add(
                    egui::TextEdit::singleline(&mut self.query)
                        .hint_text("words in a pack's id, name or description")
                        .desired_width(320.0),
                );
                field.widget_info(|| {
                    egui::WidgetInfo::labeled(egui::Role::SearchInput, true, "index search")
                });
                let enter = field.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter));
                if ui.button("Search").clicked() || enter {
                    self.search(packs);
                }
            });
            ui.weak("Searches the indexes listed with `tokensmith index add NAME FOLDER|URL`.");
            for note in &self.notes {
                ui.colored_label(theme::PREVIEW, note);
            }
            ui.separator();
            if self.searched && self.results.is_empty() && self.notes.is_empty() {
                ui.label("No pack found.");
            }
            let mut pick = None;
            egui::ScrollArea::vertical()
                .id_salt("browse-results")
                .show(ui, |ui| {
                    for f in &self.results {
                        let chosen = self
                            .selected
                            .as_ref()
                            .is_some_and(|s| s.found.pack.id == f.pack.id);
                        let latest = f.pack.latest.as_deref().unwrap_or("yanked");
                        let text = format!(
                            "{}  {}  —  {}   [{}]",
                            f.pack.id,
                            latest,
                            crate::index::clean(&f.pack.name),
                            f.index
                        );
                        if ui.selectable_label(chosen, text).clicked() {
                            pick = Some(f.clone());
                        }
                    }
                });
            if let Some(f) = pick {
                self.select(packs, f);
            }
        });
        action
    }

    /// The selected pack's details; an install or update asked for.
    fn details(&mut self, ui: &mut Ui, packs: &Packs<'_>) -> Option<BrowseAction> {
        let Some(sel) = &mut self.selected else {
            ui.weak("Search, then pick a pack to see its versions and what it would change.");
            return None;
        };
        let id = sel.found.pack.id.clone();
        ui.heading(RichText::new(crate::index::clean(&sel.found.pack.name)).strong());
        ui.weak(format!("{id} · from index '{}'", sel.found.index));
        if !sel.found.pack.description.is_empty() {
            ui.label(crate::index::clean(&sel.found.pack.description));
        }
        let newest = sel.found.pack.latest.clone();
        match &sel.installed {
            Some(v) => ui.label(format!("Installed: {v}")),
            None => ui.label("Not installed."),
        };
        let mut action = None;
        ui.horizontal(|ui| {
            let update = sel.installed.is_some();
            let newer = match (&sel.installed, &newest) {
                (Some(have), Some(new)) => semver::Version::parse(new)
                    .ok()
                    .zip(semver::Version::parse(have).ok())
                    .is_some_and(|(n, h)| n > h),
                (None, Some(_)) => true,
                _ => false,
            };
            let label = if update {
                format!("Update to {}", newest.as_deref().unwrap_or("?"))
            } else {
                format!("Install {}", newest.as_deref().unwrap_or(""))
            };
            if ui.add_enabled(newer, egui::Button::new(label)).clicked() {
                action = Some(BrowseAction::Install {
                    id: id.clone(),
                    update,
                });
            }
            if ui
                .add_enabled(newer, egui::Button::new("Check against my packs"))
                .on_hover_text(
                    "Fetch and check its archives, then list what it would change against the packs you play with. Nothing is installed.",
                )
                .clicked()
            {
                sel.preview = Some(fetch(packs, &id, update).and_then(|(_, fetched, temp)| {
                    player::preview(packs.folders, packs.set, &fetched, temp.path())
                        .map_err(|e| e.to_string())
                }));
            }
        });
        match &sel.preview {
            Some(Ok(lines)) if lines.is_empty() => {
                ui.colored_label(
                    theme::GOOD,
                    "Checked: signatures and hashes match, and it changes nothing your enabled packs set.",
                );
            }
            Some(Ok(lines)) => {
                ui.colored_label(
                    theme::PREVIEW,
                    "Checked: signatures and hashes match. With your enabled packs:",
                );
                for l in lines {
                    ui.label(l);
                }
            }
            Some(Err(e)) => {
                ui.colored_label(theme::DANGER, e);
            }
            None => {}
        }
        ui.separator();
        ui.strong("Versions");
        match &sel.file {
            Ok(file) => versions(ui, &file.versions),
            Err(e) => {
                ui.colored_label(theme::DANGER, e);
            }
        }
        action
    }
}

/// The versions table: version, requirements, content hash, yanked.
fn versions(ui: &mut Ui, list: &[Entry]) {
    egui::Grid::new("browse-versions")
        .striped(true)
        .show(ui, |ui| {
            ui.strong("version");
            ui.strong("requires");
            ui.strong("content hash");
            ui.end_row();
            for e in list {
                let version = if e.yanked {
                    format!("{} (yanked)", e.version)
                } else {
                    e.version.clone()
                };
                ui.label(version);
                let requires: Vec<String> = e
                    .requires
                    .iter()
                    .map(|r| format!("{} {}", r.id, r.version))
                    .collect();
                ui.label(if requires.is_empty() {
                    "—".to_string()
                } else {
                    requires.join(", ")
                });
                ui.monospace(crate::packs::short(&e.hash));
                ui.end_row();
            }
        });
}
