//! "Save as scenario": the form, the file written (never over another) and its check by
//! the scenario runner.

use egui::{RichText, Ui};

use super::super::theme;
use super::SandboxScreen;

/// Where "Save as scenario" writes and how the saved file is checked.
#[derive(Clone, Debug)]
pub struct SaveTo {
    /// The folder offered first.
    pub folder: std::path::PathBuf,
    /// The folders `tokensmith scenario` looks for packs in.
    pub packs: crate::scenario::PackPaths,
    /// More pack folders the scenario must name (`pack_dirs:`), e.g. installed packs.
    pub pack_dirs: Vec<String>,
}

impl Default for SaveTo {
    fn default() -> SaveTo {
        SaveTo {
            folder: std::path::PathBuf::from("scenarios"),
            packs: crate::scenario::PackPaths {
                content: "content".into(),
                mods: "mods".into(),
            },
            pack_dirs: Vec::new(),
        }
    }
}

/// The "Save as scenario" form and what the last save did.
#[derive(Clone, Debug, Default)]
pub(super) struct SaveForm {
    pub(super) name: String,
    pub(super) folder: String,
    /// The last save: the file and its check, or why it failed.
    pub(super) outcome: Option<Result<(std::path::PathBuf, String), String>>,
}

impl SandboxScreen {
    pub(super) fn open_save_form(&mut self) {
        let moves = self.sandbox.steps().len();
        self.save = Some(SaveForm {
            name: format!(
                "sandbox game of {moves} move{}",
                if moves == 1 { "" } else { "s" }
            ),
            folder: self.saving.folder.display().to_string(),
            outcome: None,
        });
    }

    pub(super) fn save_window(&mut self, ui: &mut Ui) {
        let Some(mut form) = self.save.take() else {
            return;
        };
        let mut open = true;
        let mut save = false;
        egui::Window::new("Save as scenario")
            .open(&mut open)
            .collapsible(false)
            .resizable(false)
            .anchor(egui::Align2::CENTER_TOP, [0.0, 48.0])
            .show(ui.ctx(), |ui| {
                let moves = self.sandbox.steps().len();
                ui.label(format!(
                    "The start, {moves} move{} and the present board, scores, income and \
                     next seat as `expect:`.",
                    if moves == 1 { "" } else { "s" }
                ));
                egui::Grid::new("save-form").num_columns(2).show(ui, |ui| {
                    ui.label("Name");
                    ui.add(egui::TextEdit::singleline(&mut form.name).desired_width(320.0))
                        .accessible_name("Scenario name");
                    ui.end_row();
                    ui.label("Folder");
                    ui.add(egui::TextEdit::singleline(&mut form.folder).desired_width(320.0))
                        .accessible_name("Scenario folder");
                    ui.end_row();
                });
                if ui.button("Save").clicked() {
                    save = true;
                }
                match &form.outcome {
                    Some(Ok((path, check))) => {
                        ui.label(
                            RichText::new(format!("Saved {}", crate::fsutil::shown(path)))
                                .color(theme::GOOD),
                        );
                        ui.label(check);
                        ui.code(format!(
                            "tokensmith scenario {}",
                            crate::fsutil::shown(path)
                        ));
                    }
                    Some(Err(e)) => {
                        ui.colored_label(theme::DANGER, e);
                    }
                    None => {}
                }
            });
        if save {
            form.outcome = Some(self.save_scenario(&form.name, &form.folder));
        }
        if open {
            self.save = Some(form);
        }
    }

    /// Write the sandbox's game to a new file in `folder` and run it as a scenario.
    pub(super) fn save_scenario(
        &self,
        name: &str,
        folder: &str,
    ) -> Result<(std::path::PathBuf, String), String> {
        let name = if name.trim().is_empty() {
            "sandbox game"
        } else {
            name.trim()
        };
        let text = self.sandbox.scenario(name, &self.saving.pack_dirs)?;
        let folder = std::path::PathBuf::from(folder.trim());
        std::fs::create_dir_all(&folder).map_err(|e| {
            format!(
                "cannot make the folder {}: {e}",
                crate::fsutil::shown(&folder)
            )
        })?;
        let path =
            crate::fsutil::write_new_numbered(&folder, &file_stem(name), "yaml", text.as_bytes())
                .map_err(|e| format!("cannot write in {}: {e}", crate::fsutil::shown(&folder)))?;
        let check = match crate::scenario::run_file(&path, &self.saving.packs) {
            Ok(run) => match run.outcome {
                crate::scenario::ScenarioOutcome::Pass => "It runs and passes.".to_string(),
                crate::scenario::ScenarioOutcome::Fail(report) => {
                    format!(
                        "It runs but does not pass (the content plays it differently):\n{report}"
                    )
                }
            },
            Err(e) => {
                let lines: Vec<String> = e.diagnostics.iter().map(ToString::to_string).collect();
                format!("It cannot run as saved:\n{}", lines.join("\n"))
            }
        };
        Ok((path, check))
    }
}

/// A file name from a scenario's name: lower case, words joined by `_`.
fn file_stem(name: &str) -> String {
    let stem: String = crate::profile::slug(name, '_').chars().take(60).collect();
    let stem = stem.trim_end_matches('_');
    if stem.is_empty() {
        "sandbox".to_string()
    } else {
        stem.to_string()
    }
}
