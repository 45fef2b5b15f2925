//! The Mods screen's Set tab: the tree of the packs that play and what each requires;
//! "Share this set" (the set's lock file, as `pack lock` writes it, copied to the
//! clipboard); and "Use a shared set" (paste a lock file, see the plan, apply it as
//! `pack sync` does). Reading the indexes, fetching and installing run on a worker
//! thread, never the frame's.
//!
//! Must not: change the profile before the plan was shown and Apply clicked, or apply a
//! set other than the one whose plan is shown.
//!
//! "Share this set" is `index::lock::text`; "Use a shared set" plans, then
//! `index::lock::apply`, on a worker thread.

use std::path::PathBuf;
use std::thread::JoinHandle;

use egui::{RichText, Ui};

use super::theme;
use crate::index::lock;
use crate::packs::Folders;
use crate::packs::PackSet;

/// The most bytes of pasted text read as a lock file.
const MAX_PASTE: u64 = lock::MAX_BYTES;

/// A worker's result: whether it worked (with its one-line outcome) and what it said.
type Outcome = (Result<String, String>, Vec<String>);

/// What the worker is doing.
enum Job {
    /// Planning the pasted set (its text is kept, to apply exactly that).
    Plan(String, JoinHandle<Outcome>),
    /// Applying the set whose plan was shown.
    Apply(JoinHandle<Outcome>),
}

/// Where the tab reads and changes the packs: the folders, the set, the profile.
pub struct Places<'a> {
    /// The pack folders.
    pub folders: &'a Folders,
    /// The enabled set (read again after a set is applied).
    pub set: &'a mut PackSet,
    /// The profile folder, if there is one.
    pub profile: Option<&'a std::path::Path>,
}

/// The Set tab's state.
#[derive(Default)]
pub struct SetTab {
    tree: Vec<String>,
    /// The text last shared, shown as copied.
    shared: Option<String>,
    /// The text pasted in.
    pasted: String,
    /// The pasted text whose plan is shown, and the plan (or why there is none).
    plan: Option<(String, Result<Vec<String>, String>)>,
    /// What the last share or apply did (ok, text), and what applying said.
    said: Option<(bool, String)>,
    log: Vec<String>,
    job: Option<Job>,
}

impl SetTab {
    /// Show `tree`, read elsewhere (the Mods screen's worker).
    pub fn show_tree(&mut self, tree: Vec<String>) {
        self.tree = tree;
    }

    /// A finished job's result; an applied set is read again into `packs`.
    fn poll(&mut self, packs: &mut Places<'_>) -> Option<(bool, String)> {
        if !self.job.as_ref().is_some_and(|j| match j {
            Job::Plan(_, h) | Job::Apply(h) => h.is_finished(),
        }) {
            return None;
        }
        let failed = || (Err("the worker stopped".to_string()), Vec::new());
        match self.job.take()? {
            Job::Plan(text, h) => {
                let (result, said) = h.join().unwrap_or_else(|_| failed());
                self.plan = Some((text, result.map(|_| said)));
                None
            }
            Job::Apply(h) => {
                let (result, said) = h.join().unwrap_or_else(|_| failed());
                self.log = said;
                self.plan = None;
                if let Some(profile) = packs.profile {
                    *packs.set = PackSet::open(profile);
                }
                let (ok, line) = match result {
                    Ok(line) => (true, line),
                    Err(e) => (false, e),
                };
                // The screen's status line says it.
                Some((ok, line))
            }
        }
    }

    /// Draw the tab; what the user asked for.
    pub fn show(&mut self, ui: &mut Ui, mut packs: Places<'_>) -> Option<(bool, String)> {
        let action = self.poll(&mut packs);
        if self.job.is_some() {
            ui.ctx()
                .request_repaint_after(std::time::Duration::from_millis(50));
        }
        let Some(profile) = packs.profile.map(std::path::Path::to_path_buf) else {
            ui.weak("No profile folder: a set cannot be shared or used in this session.");
            return action;
        };
        egui::ScrollArea::vertical().show(ui, |ui| {
            ui.heading("The packs that play");
            ui.weak("Each pack with the packs it requires under it.");
            for line in &self.tree {
                ui.label(RichText::new(line).monospace());
            }
            ui.separator();
            self.share(ui, &packs, &profile);
            ui.separator();
            self.use_shared(ui, &packs, profile);
        });
        action
    }

    fn share(&mut self, ui: &mut Ui, packs: &Places<'_>, profile: &std::path::Path) {
        ui.heading("Share the set you play with");
        ui.horizontal(|ui| {
            if ui
                .button("Share this set")
                .on_hover_text("Copy the set's lock file to the clipboard: each pack's id, version, content hash and index, and the load order")
                .clicked()
            {
                match lock::text(profile, packs.folders, packs.set) {
                    Ok(text) => {
                        ui.ctx().copy_text(text.clone());
                        self.said = Some((
                            true,
                            format!(
                                "Copied the set to the clipboard ({} bytes): paste it in a chat; \"Use a shared set\" or `tokensmith pack sync FILE` reproduces it",
                                text.len()
                            ),
                        ));
                        self.shared = Some(text);
                    }
                    Err(e) => self.said = Some((false, format!("Not shared: {e}"))),
                }
            }
            if let Some((ok, text)) = &self.said {
                ui.colored_label(if *ok { theme::HINT } else { theme::DANGER }, text);
            }
        });
        if let Some(text) = &self.shared {
            let mut shown = text.as_str();
            ui.add(
                egui::TextEdit::multiline(&mut shown)
                    .code_editor()
                    .desired_rows(4)
                    .desired_width(f32::INFINITY),
            )
            .widget_info(|| {
                egui::WidgetInfo::labeled(egui::Role::TextInput, true, "the shared set")
            });
        }
    }

    fn use_shared(&mut self, ui: &mut Ui, packs: &Places<'_>, profile: PathBuf) {
        ui.heading("Play with a set someone shared");
        ui.weak("Paste a set someone shared: its plan is shown first, and nothing changes until you apply it.");
        let field = ui.add(
            egui::TextEdit::multiline(&mut self.pasted)
                .code_editor()
                .hint_text("{ \"format\": \"tokensmith-lock\", … }")
                .desired_rows(4)
                .desired_width(f32::INFINITY),
        );
        field.widget_info(|| {
            egui::WidgetInfo::labeled(egui::Role::TextInput, true, "paste a shared set")
        });
        let busy = self.job.is_some();
        let pasted = self.pasted.trim().to_string();
        ui.horizontal(|ui| {
            if ui
                .add_enabled(!busy && !pasted.is_empty(), egui::Button::new("Show plan"))
                .on_hover_text("Read the set and work out what using it takes, from your indexes")
                .clicked()
            {
                self.start_plan(pasted.clone(), profile.clone(), packs);
            }
            let planned = self
                .plan
                .as_ref()
                .is_some_and(|(text, plan)| *text == pasted && plan.is_ok());
            if ui
                .add_enabled(!busy && planned, egui::Button::new("Apply"))
                .on_hover_text(
                    "Install what the plan says, then turn on exactly the set's packs in its order",
                )
                .clicked()
            {
                self.start_apply(pasted.clone(), profile, packs);
            }
            if busy {
                ui.spinner();
            }
        });
        match &self.plan {
            Some((text, Ok(lines))) if *text == pasted => {
                ui.label(RichText::new("Plan:").strong());
                for line in lines {
                    ui.label(RichText::new(line).monospace());
                }
            }
            Some((text, Err(e))) if *text == pasted => {
                ui.colored_label(theme::DANGER, e);
            }
            _ => {}
        }
        for line in &self.log {
            ui.label(RichText::new(line).monospace().weak());
        }
    }

    fn start_plan(&mut self, text: String, profile: PathBuf, packs: &Places<'_>) {
        if u64::try_from(text.len()).map_or(true, |n| n > MAX_PASTE) {
            self.plan = Some((
                text,
                Err(format!(
                    "the pasted text is longer than a lock file may be ({MAX_PASTE} bytes)"
                )),
            ));
            return;
        }
        let folders = packs.folders.clone();
        let kept = text.clone();
        let spawned = crate::script::threads::spawn("set-plan", move || {
            let mut said = Vec::new();
            let result = lock::parse(text.as_bytes(), "the pasted set")
                .and_then(|l| lock::preview(&profile, &folders, &l, &mut |s| said.push(s)))
                .map(|plan| {
                    said.extend(plan.lines());
                    String::new()
                })
                .map_err(|e| e.to_string());
            (result, said)
        });
        match spawned {
            Ok(h) => self.job = Some(Job::Plan(kept, h)),
            Err(e) => self.plan = Some((kept, Err(format!("cannot start planning: {e}")))),
        }
    }

    fn start_apply(&mut self, text: String, profile: PathBuf, packs: &Places<'_>) {
        let folders = packs.folders.clone();
        let spawned = crate::script::threads::spawn("set-apply", move || {
            let mut said = Vec::new();
            let result = lock::parse(text.as_bytes(), "the pasted set")
                .and_then(|l| {
                    lock::apply(&profile, &folders, &l, &mut |s| said.push(s))
                        .map(|_| l.packs.len())
                })
                .map(|n| format!("Applied the shared set: {n} packs play, in its order."))
                .map_err(|e| format!("Not applied: {e}"));
            (result, said)
        });
        match spawned {
            Ok(h) => self.job = Some(Job::Apply(h)),
            Err(e) => self.said = Some((false, format!("cannot start applying: {e}"))),
        }
    }
}
