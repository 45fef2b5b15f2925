//! The Mods screen's Browse tab: search the profile's pack indexes (`tokensmith index
//! add`), see a pack's description, versions and requirements, check what it would change
//! against the enabled packs before installing (the conflict report, from its archives
//! checked as an install checks them), and install or update it with what it requires.
//!
//! Every index read, fetch and install runs on a worker thread (an index on the web may
//! take until its deadline): the tab shows what it is doing, and its buttons wait.
//!
//! "Check against my packs" is `index::player::preview`; install and update go through
//! `index::player`.

use std::path::PathBuf;
use std::sync::mpsc;

use egui::{RichText, Ui};

use crate::index::player::{self, Fetched, Found, InstallPlan};
use crate::index::{Entry, PackFile};
use crate::packs::Store;

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
    /// An install (or update) ended: whether it worked, and a line saying what happened.
    Installed(bool, String),
}

/// What the tab works with, owned, for a worker thread.
#[derive(Clone)]
struct Owned {
    profile: Option<PathBuf>,
    folders: crate::packs::Folders,
    set: crate::packs::PackSet,
}

impl Owned {
    fn of(packs: &Packs<'_>) -> Owned {
        Owned {
            profile: packs.profile.map(std::path::Path::to_path_buf),
            folders: packs.folders.clone(),
            set: packs.set.clone(),
        }
    }

    fn view(&self) -> Packs<'_> {
        Packs {
            profile: self.profile.as_deref(),
            folders: &self.folders,
            set: &self.set,
        }
    }
}

/// Work for a worker thread.
type Job = Box<dyn FnOnce() -> Done + Send>;

/// Search the indexes of `owned` for `words`.
fn search(owned: &Owned, words: &[String]) -> Done {
    let Some(profile) = &owned.profile else {
        return Done::Search(
            Vec::new(),
            vec!["No profile folder: there are no indexes in this session.".into()],
        );
    };
    match player::open_all(profile) {
        Ok((indexes, notes)) => {
            let summaries: Vec<(&str, &crate::index::SummaryFile)> = indexes
                .iter()
                .map(|i| (i.name.as_str(), i.summary()))
                .collect();
            Done::Search(player::search(&summaries, words), notes)
        }
        Err(e) => Done::Search(Vec::new(), vec![e.to_string()]),
    }
}

/// Read `found`'s versions from its index.
fn select(owned: &Owned, found: Found) -> Done {
    let file = owned
        .profile
        .as_deref()
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
    Done::Select(Box::new(Selected {
        installed: installed_version(&owned.view(), &found.pack.id),
        found,
        file,
        preview: None,
    }))
}

/// What a worker found.
enum Done {
    Search(Vec<Found>, Vec<String>),
    Select(Box<Selected>),
    Check(Result<Vec<String>, String>),
    Install(bool, String),
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
    /// The work under way: what it is, in words, and where its result comes.
    busy: Option<(&'static str, mpsc::Receiver<Done>)>,
}

/// The version of `id` installed in the profile, if any.
fn installed_version(packs: &Packs<'_>, id: &str) -> Option<String> {
    player::installed(packs.folders, id).map(|v| v.to_string())
}

/// Plan and fetch `spec` (`ID` or `ID@VERSION`; checked: signatures, pins, sizes,
/// hashes, the packs the archives declare) into a temporary folder.
fn fetch(
    packs: &Packs<'_>,
    spec: &str,
    update: bool,
) -> Result<(InstallPlan, Vec<Fetched>, tempfile::TempDir), String> {
    let profile = packs
        .profile
        .ok_or("No profile folder: packs cannot be installed in this session.")?;
    let (indexes, _) = player::open_all(profile).map_err(|e| e.to_string())?;
    let want = player::want(spec).map_err(|e| e.to_string())?;
    let plan = player::plan(&indexes, packs.folders, &[want], update).map_err(|e| e.to_string())?;
    let pins = crate::index::keys::Pins::open(profile).map_err(|e| e.to_string())?;
    let temp = tempfile::tempdir().map_err(|e| format!("no temporary folder: {e}"))?;
    let fetched = player::fetch(&plan, &pins, false, temp.path()).map_err(|e| e.to_string())?;
    Ok((plan, fetched, temp))
}

/// Install `spec` (`ID`, or `ID@VERSION` for exactly that version, older or newer) from
/// the indexes (with `update`, replacing the installed version by the newest) with what
/// it requires; a line saying what happened, and whether it worked.
pub fn install(packs: &Packs<'_>, spec: &str, update: bool) -> (bool, String) {
    let result = fetch(packs, spec, update).and_then(|(plan, fetched, _temp)| {
        if plan.steps.is_empty() {
            return Ok(plan.notes.join("; "));
        }
        let profile = packs.profile.ok_or("no profile")?;
        let done = player::install(
            profile,
            &Store::new(profile),
            &fetched,
            packs.folders,
            false,
        )
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

/// When the installed version of the selected pack is yanked: the warning, and the
/// version to go to (the newest that is not yanked, older or newer), if there is one.
fn yanked_way_out(sel: &Selected) -> Option<(String, Option<String>)> {
    let installed = semver::Version::parse(sel.installed.as_deref()?).ok()?;
    let file = sel.file.as_ref().ok()?;
    file.versions
        .iter()
        .any(|e| e.yanked && e.semver() == installed)
        .then(|| {
            let to = file
                .versions
                .iter()
                .filter(|e| !e.yanked)
                .max_by_key(|e| e.semver())
                .map(|e| e.version.clone());
            let text = match &to {
                Some(v) if semver::Version::parse(v).is_ok_and(|v| v > installed) => format!(
                    "{installed} is yanked by its author: it should not be played. Update to {v}, its newest version that is not."
                ),
                Some(v) => format!(
                    "{installed} is yanked by its author: it should not be played. Go back to {v}, its newest version that is not."
                ),
                None => format!(
                    "{installed} is yanked by its author, and so is every version: turn it off or remove it in the Installed tab."
                ),
            };
            (text, to)
        })
}

impl Browse {
    /// Read the selected pack's installed version again (after an install).
    pub fn refresh(&mut self, packs: &Packs<'_>) {
        if let Some(sel) = &mut self.selected {
            sel.installed = installed_version(packs, &sel.found.pack.id);
            sel.preview = None;
        }
    }

    /// Run `job` on a worker thread; its result is taken up by [`Browse::poll`].
    fn start(&mut self, ui: &Ui, what: &'static str, job: impl FnOnce() -> Done + Send + 'static) {
        let (tx, rx) = mpsc::channel();
        let ctx = ui.ctx().clone();
        let spawned = crate::script::threads::spawn("index", move || {
            let _ = tx.send(job());
            ctx.request_repaint();
        });
        match spawned {
            Ok(_) => self.busy = Some((what, rx)),
            Err(e) => self.notes = vec![format!("cannot start the work: {e}")],
        }
    }

    /// Take up a worker's result, if it came; an install that ended.
    fn poll(&mut self, ui: &Ui) -> Option<BrowseAction> {
        let (_, rx) = self.busy.as_ref()?;
        let done = match rx.try_recv() {
            Ok(done) => done,
            Err(mpsc::TryRecvError::Empty) => {
                ui.ctx()
                    .request_repaint_after(std::time::Duration::from_millis(50));
                return None;
            }
            Err(mpsc::TryRecvError::Disconnected) => {
                self.busy = None;
                self.notes = vec!["the work stopped without a result".into()];
                return None;
            }
        };
        self.busy = None;
        match done {
            Done::Search(results, notes) => {
                self.searched = true;
                self.results = results;
                self.notes = notes;
                self.selected = None;
            }
            Done::Select(sel) => self.selected = Some(*sel),
            Done::Check(preview) => {
                if let Some(sel) = &mut self.selected {
                    sel.preview = Some(preview);
                }
            }
            Done::Install(ok, line) => return Some(BrowseAction::Installed(ok, line)),
        }
        None
    }

    /// Draw the tab; what the user asked for.
    pub fn show(&mut self, ui: &mut Ui, packs: &Packs<'_>) -> BrowseAction {
        let action = self.poll(ui).unwrap_or(BrowseAction::Stay);
        egui::Panel::right("browse-details")
            .resizable(true)
            .default_size(520.0)
            .show(ui, |ui| {
                egui::ScrollArea::vertical()
                    .id_salt("browse-details")
                    .show(ui, |ui| self.details(ui, packs));
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
                let idle = self.busy.is_none();
                if (ui.add_enabled(idle, egui::Button::new("Search")).clicked() || enter) && idle {
                    let owned = Owned::of(packs);
                    let words: Vec<String> =
                        self.query.split_whitespace().map(str::to_string).collect();
                    self.start(ui, "Searching the indexes…", move || {
                        search(&owned, &words)
                    });
                }
                if let Some((what, _)) = &self.busy {
                    ui.spinner();
                    ui.weak(*what);
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
            if let Some(f) = pick
                && self.busy.is_none()
            {
                let owned = Owned::of(packs);
                self.start(ui, "Reading the pack's versions…", move || {
                    select(&owned, f)
                });
            }
        });
        action
    }

    /// The selected pack's details, with its Install (or Update) and Check buttons.
    fn details(&mut self, ui: &mut Ui, packs: &Packs<'_>) {
        let idle = self.busy.is_none();
        let mut start: Option<(&'static str, Job)> = None;
        let Some(sel) = &mut self.selected else {
            ui.weak("Search, then pick a pack to see its versions and what it would change.");
            return;
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
        if let Some(way_out) = yanked_way_out(sel) {
            ui.colored_label(theme::DANGER, &way_out.0);
            // A newer way out is the Update button's; an older one gets its own.
            if let Some(to) = way_out.1.filter(|to| {
                semver::Version::parse(to).ok()
                    < sel
                        .installed
                        .as_deref()
                        .and_then(|v| semver::Version::parse(v).ok())
            }) && ui
                .add_enabled(idle, egui::Button::new(format!("Go back to {to}")))
                .clicked()
            {
                let (owned, spec) = (Owned::of(packs), format!("{id}@{to}"));
                start = Some((
                    "Fetching, checking and installing…",
                    Box::new(move || {
                        let (ok, line) = install(&owned.view(), &spec, false);
                        Done::Install(ok, line)
                    }),
                ));
            }
        }
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
            let label = if update && !newer {
                // The newest is installed (or newer than the index's): nothing to offer.
                "Up to date".to_string()
            } else if update {
                format!("Update to {}", newest.as_deref().unwrap_or("?"))
            } else {
                format!("Install {}", newest.as_deref().unwrap_or(""))
            };
            if ui.add_enabled(newer && idle, egui::Button::new(label)).clicked() {
                let (owned, id) = (Owned::of(packs), id.clone());
                start = Some((
                    "Fetching, checking and installing…",
                    Box::new(move || {
                        let (ok, line) = install(&owned.view(), &id, update);
                        Done::Install(ok, line)
                    }),
                ));
            }
            if ui
                .add_enabled(newer && idle, egui::Button::new("Check against my packs"))
                .on_hover_text(
                    "Fetch and check its archives, then list what it would change against the packs you play with. Nothing is installed.",
                )
                .clicked()
            {
                let (owned, id) = (Owned::of(packs), id.clone());
                start = Some((
                    "Fetching and checking…",
                    Box::new(move || {
                        let packs = owned.view();
                        Done::Check(fetch(&packs, &id, update).and_then(|(_, fetched, temp)| {
                            player::preview(packs.folders, packs.set, &fetched, temp.path())
                                .map_err(|e| e.to_string())
                        }))
                    }),
                ));
            }
        });
        if let Some((what, job)) = start {
            self.start(ui, what, job);
        }
        let Some(sel) = &mut self.selected else {
            return;
        };
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
