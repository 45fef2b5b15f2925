//! The Mods screen: every pack found with its details, an on/off toggle, its problems
//! and hash; reorder by drag (or the arrows); install from a path (or by dropping a
//! `.zip` on the window, handled by the app); remove installed packs; and the conflict
//! report, and which packs that play require each; a Browse tab for the packs of the
//! profile's indexes (`browse.rs`); a Set tab with the dependency tree, "Share this
//! set" and "Use a shared set" (`shared_set.rs`). Changes to
//! the set are applied by the app through the live-reload path.

use std::path::PathBuf;

use egui::{Id, RichText, Sense, Stroke, Ui};

use crate::packs::set::{self, Folders};
use crate::packs::{ConflictReport, Listed, PackSet, PackSource, Selection, Store};

use super::theme;

/// The packs the client plays with and where they are found.
pub struct Packs {
    /// The pack folders.
    pub folders: Folders,
    /// The enabled set and load order.
    pub set: PackSet,
    /// The profile folder installs go to (none: installing is not possible).
    pub profile: Option<PathBuf>,
}

impl Packs {
    /// What the Browse tab reads of them.
    #[must_use]
    pub fn places(&self) -> super::browse::Packs<'_> {
        super::browse::Packs {
            profile: self.profile.as_deref(),
            folders: &self.folders,
            set: &self.set,
        }
    }

    /// The load options for the current set.
    #[must_use]
    pub fn options(&self) -> crate::content::LoadOptions {
        set::load_options(&self.folders, &Selection::Set(self.set.clone()))
    }

    /// Install `sources` (archives or folders) on a worker thread: unpacking and checking
    /// a pack can take a while, and the window keeps drawing meanwhile. The result comes
    /// through [`Installing::poll`].
    ///
    /// # Errors
    /// Without a profile folder, or when the thread cannot start.
    pub fn start_install(
        &self,
        sources: Vec<PathBuf>,
        replace: bool,
    ) -> Result<Installing, String> {
        let Some(profile) = self.profile.clone() else {
            return Err(NO_PROFILE.into());
        };
        let elsewhere = set::outside_store(&self.folders);
        let (tx, rx) = std::sync::mpsc::channel();
        crate::script::threads::spawn("pack-install", move || {
            let store = Store::new(&profile);
            let done: Vec<Result<crate::packs::Installed, String>> = sources
                .iter()
                .map(|s| {
                    store
                        .install(s, replace, &elsewhere)
                        .map_err(|e| e.to_string())
                })
                .collect();
            let _ = tx.send(done);
        })
        .map_err(|e| format!("Not installed: cannot start installing: {e}"))?;
        Ok(Installing { rx })
    }

    /// What an install did, in words (whether it worked, and the line to show).
    fn installed(&self, done: Result<crate::packs::Installed, String>) -> (bool, String) {
        match done {
            Ok(done) => {
                let what = match &done.replaced {
                    Some(old) => format!("Replaced {} {old} with {}", done.id, done.version),
                    None => format!("Installed {} {}", done.id, done.version),
                };
                let on = if self.set.is_enabled(&done.id) {
                    "it is on"
                } else {
                    "turn it on below to play with it"
                };
                (
                    true,
                    format!("{what} (hash {}): {on}.", crate::packs::short(&done.hash)),
                )
            }
            Err(e) => (false, format!("Not installed: {e}")),
        }
    }
}

/// How long a read of the packs may take before the screen says it is under way (a
/// quicker one shows without a flicker).
const READING_SHOWN_AFTER: std::time::Duration = std::time::Duration::from_millis(150);

const NO_PROFILE: &str = "No profile folder: packs cannot be installed in this session.";

/// Packs being installed on a worker thread ([`Packs::start_install`]).
pub struct Installing {
    rx: std::sync::mpsc::Receiver<Vec<Result<crate::packs::Installed, String>>>,
}

impl Installing {
    /// Once the installs have ended: whether all worked, and what each did, in words.
    pub fn poll(&self, packs: &Packs) -> Option<(bool, String)> {
        let done = match self.rx.try_recv() {
            Ok(done) => done,
            Err(std::sync::mpsc::TryRecvError::Empty) => return None,
            Err(std::sync::mpsc::TryRecvError::Disconnected) => {
                return Some((
                    false,
                    "Not installed: the install ended without a word".into(),
                ));
            }
        };
        let said: Vec<(bool, String)> = done.into_iter().map(|d| packs.installed(d)).collect();
        Some((
            said.iter().all(|(ok, _)| *ok),
            said.into_iter()
                .map(|(_, l)| l)
                .collect::<Vec<_>>()
                .join(" "),
        ))
    }
}

/// What the Mods screen asks of the app.
#[derive(Debug, PartialEq, Eq)]
pub enum ModsAction {
    /// Nothing.
    Stay,
    /// Back to the main menu.
    Menu,
    /// The enabled set or order changed: save it and load the new content.
    SetChanged,
    /// Install this file or folder.
    Install(PathBuf, bool),
    /// Remove this installed pack.
    Remove(String),
    /// A change was refused; say why.
    Refused(String),
    /// An install ended (a file, a drop, the indexes or a shared set): whether it worked,
    /// and what happened.
    IndexInstalled(bool, String),
}

/// The Mods screen's tabs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Tab {
    /// The packs found: toggles, order, install from a path, remove, conflicts.
    Installed,
    /// The packs of the indexes: search, details, install.
    Browse,
    /// The tree of the packs that play; share the set, or use a shared one.
    Set,
}

/// The Mods screen's state: the list as last read, the report, the install field.
pub struct ModsScreen {
    listed: Vec<Listed>,
    report: ConflictReport,
    path: String,
    replace: bool,
    /// What the last action did (ok, text).
    pub status: Option<(bool, String)>,
    /// Whether the next refresh lists the rows in load order again (after a reorder);
    /// otherwise rows stay where they are, so a toggle does not move the row under the
    /// pointer.
    resort: bool,
    tab: Tab,
    browse: super::browse::Browse,
    set_tab: super::shared_set::SetTab,
    /// For each pack, the packs that play and require it directly.
    required_by: std::collections::BTreeMap<String, Vec<String>>,
    /// Packs being installed from a file or a drop.
    installing: Option<Installing>,
    /// The packs being read again after a change (on a worker), and since when.
    reading: Option<(std::sync::mpsc::Receiver<Reading>, std::time::Instant)>,
}

/// What the screen shows of the packs, read on a worker thread ([`ModsScreen::refresh`]).
struct Reading {
    /// Every pack found, in load order then the others.
    listed: Vec<Listed>,
    report: ConflictReport,
    required_by: std::collections::BTreeMap<String, Vec<String>>,
    /// The Set tab's tree.
    tree: Vec<String>,
}

impl Reading {
    /// Read the packs of `folders` with `set` enabled: each one's details and problems
    /// (every pack found is loaded, scripts and all), the conflicts, what requires what.
    fn of(folders: &Folders, set: &PackSet) -> Reading {
        let all = crate::script::load(&set::list_options(folders, set));
        let mut listed = set::list(folders, set, &all);
        // Shown in the order the enabled packs load, then the others.
        let selection = Selection::Set(set.clone());
        let order = crate::content::load(&set::load_options(folders, &selection)).packs;
        let rank = |id: &str| order.iter().position(|p| p.id == id).unwrap_or(usize::MAX);
        listed.sort_by_key(|l| (rank(&l.id), l.id.clone()));
        let report = crate::packs::conflicts::report(folders, &selection);
        let graph = crate::packs::deps::Graph::of(folders);
        let roots = graph.roots(set);
        let required_by = listed
            .iter()
            .map(|l| (l.id.clone(), graph.required_by(&roots, &l.id)))
            .filter(|(_, by)| !by.is_empty())
            .collect();
        let tree = graph.tree(&graph.tops(&roots));
        Reading {
            listed,
            report,
            required_by,
            tree,
        }
    }
}

/// A pack row being dragged (its id).
#[derive(Clone, Debug)]
struct Dragged(String);

impl ModsScreen {
    /// The screen over `packs`, read now.
    #[must_use]
    pub fn new(packs: &Packs) -> ModsScreen {
        let mut s = ModsScreen {
            listed: Vec::new(),
            report: ConflictReport::default(),
            path: String::new(),
            replace: false,
            status: None,
            resort: true,
            tab: Tab::Installed,
            browse: super::browse::Browse::default(),
            set_tab: super::shared_set::SetTab::default(),
            required_by: std::collections::BTreeMap::new(),
            installing: None,
            reading: None,
        };
        // The first reading is the screen: it is made before the screen shows.
        s.show_reading(Reading::of(&packs.folders, &packs.set));
        s.browse.refresh(&packs.places());
        s
    }

    /// Read the packs, their problems and the conflicts again, on a worker thread (a
    /// read loads every pack found, scripts and all); the screen says so meanwhile and
    /// shows the new reading once it has come ([`ModsScreen::show`]). A read under way
    /// is dropped for the new one.
    pub fn refresh(&mut self, packs: &Packs) {
        // The toggles say at once what the set is now; the rest follows with the read.
        for l in &mut self.listed {
            l.enabled = l.source == PackSource::Base || packs.set.is_enabled(&l.id);
        }
        self.browse.refresh(&packs.places());
        let folders = packs.folders.clone();
        let set = packs.set.clone();
        let (tx, rx) = std::sync::mpsc::channel();
        let started = crate::script::threads::spawn("mods-read", move || {
            // The receiver may be gone (the screen left, a newer read): nothing to do then.
            let _ = tx.send(Reading::of(&folders, &set));
        });
        match started {
            Ok(_) => self.reading = Some((rx, std::time::Instant::now())),
            Err(e) => {
                self.reading = None;
                self.status = Some((false, format!("The packs cannot be read again: {e}")));
            }
        }
    }

    /// Whether the packs are being read again (since when).
    #[must_use]
    pub fn reading(&self) -> Option<std::time::Duration> {
        self.reading.as_ref().map(|(_, since)| since.elapsed())
    }

    /// Take up a finished read, if one came; never waits.
    fn take_reading(&mut self) {
        let Some((rx, _)) = &self.reading else {
            return;
        };
        let read = match rx.try_recv() {
            Ok(read) => read,
            Err(std::sync::mpsc::TryRecvError::Empty) => return,
            Err(std::sync::mpsc::TryRecvError::Disconnected) => {
                self.reading = None;
                self.status = Some((false, "The packs could not be read again.".into()));
                return;
            }
        };
        self.reading = None;
        self.show_reading(read);
    }

    /// Show `read` (rows keep their places unless a reorder asked otherwise).
    fn show_reading(&mut self, read: Reading) {
        let mut listed = read.listed;
        if !std::mem::take(&mut self.resort) {
            // Rows keep their places; packs new to the list come after them.
            let was = |id: &str| self.listed.iter().position(|l| l.id == id);
            listed.sort_by_key(|l| was(&l.id).unwrap_or(usize::MAX));
        }
        self.listed = listed;
        self.report = read.report;
        self.required_by = read.required_by;
        self.set_tab.show_tree(read.tree);
    }

    /// The packs as listed.
    #[must_use]
    pub fn listed(&self) -> &[Listed] {
        &self.listed
    }

    /// The conflict report as shown.
    #[must_use]
    pub fn report(&self) -> &ConflictReport {
        &self.report
    }

    /// Install `sources` on a worker thread ([`Packs::start_install`]); the screen says
    /// so until they are in.
    pub fn install(&mut self, packs: &Packs, sources: Vec<PathBuf>, replace: bool) {
        match packs.start_install(sources, replace) {
            Ok(job) => {
                self.installing = Some(job);
                self.status = Some((true, "Installing…".into()));
            }
            Err(e) => self.status = Some((false, e)),
        }
    }

    /// Draw the screen; what the user asked for.
    pub fn show(&mut self, ui: &mut Ui, packs: &mut Packs) -> ModsAction {
        let mut action = ModsAction::Stay;
        self.take_reading();
        if self.reading.is_some() {
            // The window goes on while the worker reads; its reading shows once it came.
            ui.ctx()
                .request_repaint_after(std::time::Duration::from_millis(50));
        }
        if let Some(job) = &self.installing {
            match job.poll(packs) {
                Some((ok, line)) => {
                    self.installing = None;
                    action = ModsAction::IndexInstalled(ok, line);
                }
                None => ui
                    .ctx()
                    .request_repaint_after(std::time::Duration::from_millis(50)),
            }
        }
        egui::Panel::top("mods-bar").show(ui, |ui| {
            ui.add_space(4.0);
            ui.horizontal(|ui| {
                if ui.button("◀ Menu").clicked() {
                    action = ModsAction::Menu;
                }
                ui.separator();
                ui.heading("Mods");
                ui.separator();
                ui.selectable_value(&mut self.tab, Tab::Installed, "Installed");
                ui.selectable_value(&mut self.tab, Tab::Browse, "Browse");
                ui.selectable_value(&mut self.tab, Tab::Set, "Set");
                ui.separator();
                ui.weak(match self.tab {
                    Tab::Set => "Share the packs you play with exactly, or use a set someone shared.",
                    Tab::Installed => "Packs turned on play in new games and the sandbox at once. Drop a .zip on the window to install it.",
                    Tab::Browse => "Packs of your indexes: every version signed by its author, checked before it is installed.",
                });
            });
            if self.tab != Tab::Installed
                && let Some((ok, text)) = &self.status
            {
                let colour = if *ok { theme::HINT } else { theme::DANGER };
                ui.colored_label(colour, text);
            }
            ui.add_space(4.0);
        });
        if self.tab == Tab::Set {
            egui::CentralPanel::default_margins().show(ui, |ui| {
                let places = super::shared_set::Places {
                    folders: &packs.folders,
                    set: &mut packs.set,
                    profile: packs.profile.as_deref(),
                };
                if let Some((ok, line)) = self.set_tab.show(ui, places) {
                    action = ModsAction::IndexInstalled(ok, line);
                }
            });
            return action;
        }
        if self.tab == Tab::Browse {
            return match self.browse.show(ui, &packs.places()) {
                super::browse::BrowseAction::Stay => action,
                super::browse::BrowseAction::Installed(ok, line) => {
                    ModsAction::IndexInstalled(ok, line)
                }
            };
        }
        egui::Panel::bottom("mods-install").show(ui, |ui| {
            ui.add_space(4.0);
            ui.horizontal(|ui| {
                ui.label("Install a pack archive or folder:");
                let field = ui.add(
                    egui::TextEdit::singleline(&mut self.path)
                        .hint_text("~/Downloads/pack.zip")
                        .desired_width(420.0),
                );
                field.widget_info(|| {
                    egui::WidgetInfo::labeled(egui::Role::TextInput, true, "pack path")
                });
                ui.checkbox(
                    &mut self.replace,
                    "replace an installed pack with the same id",
                );
                let ready = !self.path.trim().is_empty()
                    && packs.profile.is_some()
                    && self.installing.is_none();
                if ui
                    .add_enabled(ready, egui::Button::new("Install"))
                    .clicked()
                {
                    action = ModsAction::Install(expand_home(self.path.trim()), self.replace);
                }
            });
            if let Some((ok, text)) = &self.status {
                let colour = if *ok { theme::HINT } else { theme::DANGER };
                ui.colored_label(colour, text);
            }
            if self.reading().is_some_and(|t| t >= READING_SHOWN_AFTER) {
                ui.weak("Reading the packs again…");
            }
            for note in &packs.set.notes {
                ui.colored_label(theme::PREVIEW, note);
            }
            ui.add_space(4.0);
        });
        egui::Panel::right("mods-conflicts")
            .resizable(true)
            .default_size(460.0)
            .show(ui, |ui| {
                ui.heading("Conflicts");
                // One line per entry and setter: long lines scroll sideways, not wrap.
                ui.style_mut().wrap_mode = Some(egui::TextWrapMode::Extend);
                egui::ScrollArea::both()
                    .id_salt("conflicts")
                    .show(ui, |ui| conflicts(ui, &self.report));
            });
        egui::CentralPanel::default_margins().show(ui, |ui| {
            egui::ScrollArea::vertical()
                .id_salt("packs")
                .show(ui, |ui| {
                    let ids: Vec<String> = self.listed.iter().map(|l| l.id.clone()).collect();
                    let movable: Vec<bool> = self
                        .listed
                        .iter()
                        .map(|l| l.enabled && l.source != PackSource::Base)
                        .collect();
                    for (i, l) in self.listed.iter().enumerate() {
                        let near = Near {
                            up: i > 0 && movable[i - 1],
                            down: movable.get(i + 1).copied().unwrap_or(false),
                        };
                        let by = self.required_by.get(&l.id).map_or(&[][..], Vec::as_slice);
                        if let Some(a) = row(ui, l, i, &ids, near, packs, &mut self.resort, by) {
                            action = a;
                        }
                        ui.separator();
                    }
                });
        });
        action
    }
}

/// Whether the rows above and below can trade places with this one.
#[derive(Clone, Copy)]
struct Near {
    up: bool,
    down: bool,
}

/// One pack's row; what it asks for.
#[allow(clippy::too_many_arguments)] // The row's own facts, each used once.
fn row(
    ui: &mut Ui,
    l: &Listed,
    index: usize,
    ids: &[String],
    near: Near,
    packs: &mut Packs,
    resort: &mut bool,
    required_by: &[String],
) -> Option<ModsAction> {
    let mut action = None;
    let frame = egui::Frame::new().inner_margin(6.0);
    let inner = frame.show(ui, |ui| {
        ui.horizontal(|ui| {
            let base = l.source == PackSource::Base;
            // The handle drags the row, to reorder the packs that play.
            let movable = l.enabled && !base;
            let handle = ui.add_enabled(
                movable,
                egui::Label::new(RichText::new("↕").size(16.0)).sense(Sense::drag()),
            );
            handle.widget_info(|| {
                egui::WidgetInfo::labeled(egui::Role::Button, movable, format!("drag {}", l.id))
            });
            if movable {
                handle.dnd_set_drag_payload(Dragged(l.id.clone()));
                handle.on_hover_text("Drag to change the load order");
            }
            let mut on = l.enabled;
            let toggle = ui
                .add_enabled(!base, egui::Checkbox::new(&mut on, ""))
                .on_disabled_hover_text("The base content is always on.");
            toggle.widget_info(|| {
                egui::WidgetInfo::selected(
                    egui::Role::CheckBox,
                    !base,
                    l.enabled,
                    format!("{} on", l.id),
                )
            });
            if toggle.changed() {
                let result = if on {
                    set::enable(&mut packs.set, &packs.folders, &l.id).map(|_| ())
                } else {
                    set::disable(&mut packs.set, &packs.folders, &l.id, false).map(|_| ())
                };
                action = Some(match result {
                    Ok(()) => ModsAction::SetChanged,
                    Err(e) => ModsAction::Refused(e.to_string()),
                });
            }
            ui.label(RichText::new(&l.name).strong().size(16.0));
            ui.weak(format!("{} {}", l.id, l.version));
            ui.weak(format!("· {}", l.source.label()));
            let hash = match &l.hash {
                Ok(h) => crate::packs::short(h).to_string(),
                Err(_) => "no hash".into(),
            };
            ui.weak(format!("· {hash}")).on_hover_text(match &l.hash {
                Ok(h) => format!("content hash {h}"),
                Err(e) => e.clone(),
            });
            if !required_by.is_empty() {
                ui.weak(format!("· required by {}", required_by.join(", ")))
                    .on_hover_text("Packs that play and need this one: it cannot be turned off while they are on");
            }
            ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
                if l.source == PackSource::Installed {
                    let remove = ui
                        .button("Remove")
                        .on_hover_text("Move it to packs-removed in the profile");
                    remove.widget_info(|| {
                        egui::WidgetInfo::labeled(
                            egui::Role::Button,
                            true,
                            format!("remove {}", l.id),
                        )
                    });
                    if remove.clicked() {
                        action = Some(ModsAction::Remove(l.id.clone()));
                    }
                }
                if !base && l.enabled {
                    let down = ui
                        .add_enabled(near.down, egui::Button::new("▼").small())
                        .on_hover_text("Load later");
                    let up = ui
                        .add_enabled(near.up, egui::Button::new("▲").small())
                        .on_hover_text("Load earlier");
                    down.widget_info(|| {
                        egui::WidgetInfo::labeled(
                            egui::Role::Button,
                            near.down,
                            format!("load {} later", l.id),
                        )
                    });
                    up.widget_info(|| {
                        egui::WidgetInfo::labeled(
                            egui::Role::Button,
                            near.up,
                            format!("load {} earlier", l.id),
                        )
                    });
                    let moved = if up.clicked() {
                        Some(index - 1)
                    } else if down.clicked() {
                        Some(index + 1)
                    } else {
                        None
                    };
                    if let Some(to) = moved {
                        reorder(packs, ids, &l.id, to);
                        *resort = true;
                        action = Some(ModsAction::SetChanged);
                    }
                }
            });
        });
        if !l.authors.is_empty() {
            ui.weak(format!("by {}", l.authors.join(", ")));
        }
        if !l.description.is_empty() {
            ui.label(&l.description);
        }
        if !l.requires.is_empty() {
            ui.weak(format!("requires {}", l.requires.join(", ")));
        }
        ui.weak(crate::fsutil::shown(&l.dir));
        for e in &l.errors {
            ui.colored_label(theme::DANGER, e);
        }
        for w in &l.warnings {
            ui.colored_label(theme::PREVIEW, w);
        }
    });
    // The whole row takes a dropped handle (hover only: its buttons keep their clicks).
    let rect = inner.response.rect;
    let response = ui.interact(rect, Id::unique(("mods-row", &l.id)), Sense::hover());
    if response.dnd_hover_payload::<Dragged>().is_some() {
        ui.painter().hline(
            rect.x_range(),
            rect.top() - 1.0,
            Stroke::new(3.0, theme::PREVIEW),
        );
    }
    if let Some(dragged) = response.dnd_release_payload::<Dragged>()
        && dragged.0 != l.id
    {
        reorder(packs, ids, &dragged.0, index);
        *resort = true;
        action = Some(ModsAction::SetChanged);
    }
    action
}

/// A typed path with a leading `~` (alone or before a separator) read as the home folder,
/// as a shell would; anything else, or no known home, as typed.
fn expand_home(typed: &str) -> PathBuf {
    let rest = match typed.strip_prefix('~') {
        Some(rest) if rest.is_empty() || rest.starts_with(['/', std::path::MAIN_SEPARATOR]) => {
            rest.trim_start_matches(['/', std::path::MAIN_SEPARATOR])
        }
        _ => return PathBuf::from(typed),
    };
    match directories::BaseDirs::new() {
        Some(dirs) if rest.is_empty() => dirs.home_dir().to_path_buf(),
        Some(dirs) => dirs.home_dir().join(rest),
        None => PathBuf::from(typed),
    }
}

/// Move `id` to position `to` of the listed order, and keep that as the user's order.
fn reorder(packs: &mut Packs, ids: &[String], id: &str, to: usize) {
    let mut order: Vec<String> = ids.iter().filter(|i| *i != id).cloned().collect();
    order.insert(to.min(order.len()), id.to_string());
    packs.set.set_order(order);
}

fn conflicts(ui: &mut Ui, report: &ConflictReport) {
    if report.is_empty() {
        ui.weak("No conflicts among the packs that play.");
        return;
    }
    for c in &report.fields {
        let what = crate::packs::conflicts::what(c);
        ui.label(RichText::new(what).strong());
        if c.order_decides {
            ui.colored_label(
                theme::PREVIEW,
                "The load order decides: these packs do not require each other.",
            );
        } else {
            ui.weak("An override: the last pack requires the others, so every order plays it.");
        }
        let last = c.setters.len().saturating_sub(1);
        for (i, s) in c.setters.iter().enumerate() {
            let text = format!("{} sets {}", s.pack, s.value);
            let place = format!("{}:{}:{}", crate::fsutil::shown(&s.path), s.line, s.column);
            if i == last {
                ui.colored_label(theme::HINT, format!("wins: {text}"))
                    .on_hover_text(place);
            } else {
                ui.weak(text).on_hover_text(place);
            }
        }
        ui.add_space(4.0);
    }
    for r in &report.requirements {
        ui.colored_label(theme::DANGER, r);
    }
    for d in &report.duplicates {
        ui.colored_label(
            theme::DANGER,
            format!("id '{}' found twice: {}", d.id, d.dirs.join(", ")),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::expand_home;

    #[test]
    fn a_leading_tilde_is_the_home_folder() {
        let Some(dirs) = directories::BaseDirs::new() else {
            return;
        };
        let home = dirs.home_dir();
        assert_eq!(expand_home("~/packs/a.zip"), home.join("packs/a.zip"));
        assert_eq!(expand_home("~"), home.to_path_buf());
        assert_eq!(
            expand_home("~bob/a.zip"),
            std::path::PathBuf::from("~bob/a.zip")
        );
        assert_eq!(
            expand_home("/tmp/~/a.zip"),
            std::path::PathBuf::from("/tmp/~/a.zip")
        );
    }
}
