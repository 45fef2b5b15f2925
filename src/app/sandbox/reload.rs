//! The sandbox's reload panel: what the last reload changed, and the game played again
//! under the new rules ("Replay with new rules", "Keep the replayed game").

use std::sync::Arc;

use egui::{RichText, Ui};

use crate::rules::Seat;

use super::super::theme;
use super::{ReplayReport, SandboxAction, SandboxScreen};

impl SandboxScreen {
    /// The last reload: what it did, its errors (selectable, with a Copy button), what
    /// changed, and the replay under the new rules. The buttons sit on top, the rest
    /// scrolls with a visible bar.
    pub(super) fn reload_panel(
        &mut self,
        ui: &mut Ui,
        status: &super::super::ReloadStatus,
    ) -> Option<SandboxAction> {
        let mut action = None;
        ui.add_space(4.0);
        ui.horizontal_wrapped(|ui| {
            let (colour, head) = if !status.ok {
                (
                    theme::DANGER,
                    "Reload failed — the last good content is still running",
                )
            } else if status.lost.is_empty() {
                (theme::GOOD, "Reloaded")
            } else {
                (
                    theme::PREVIEW,
                    "New content loaded, but this game still uses the old",
                )
            };
            ui.label(RichText::new(head).strong().color(colour));
            let saves = if status.saves > 1 {
                format!(" · {} saves, changes since the first", status.saves)
            } else {
                String::new()
            };
            ui.label(format!(
                "{} · applied {} ms after the save{saves}",
                status.summary,
                status.latency.as_millis()
            ));
        });
        ui.horizontal(|ui| {
            if status.ok && status.lost.is_empty() && !self.sandbox.steps().is_empty() {
                if ui
                    .button("Replay with new rules")
                    .on_hover_text(
                        "Play this sandbox's moves again from the start under the new content",
                    )
                    .clicked()
                {
                    self.replay = Some((status.generation, self.sandbox.replay()));
                }
                if self.replay.is_some() && ui.button("Keep the replayed game").clicked() {
                    self.sandbox.adopt_replay();
                    self.replay = None;
                }
            }
            if let Some(new) = &status.waiting
                && ui
                    .button("Reset the sandbox with the new content")
                    .clicked()
            {
                action = Some(SandboxAction::Restart(Arc::clone(new)));
            }
            if !status.diagnostics.is_empty()
                && ui
                    .button("Copy errors")
                    .on_hover_text("Copy every message of the load, one a line")
                    .clicked()
            {
                let lines: Vec<String> =
                    status.diagnostics.iter().map(ToString::to_string).collect();
                ui.ctx().copy_text(lines.join("\n"));
            }
        });
        ui.separator();
        // A solid bar, always drawn: the panel's end is easy to miss otherwise.
        ui.spacing_mut().scroll = egui::style::ScrollStyle::solid();
        egui::ScrollArea::vertical()
            .id_salt("reload-scroll")
            .auto_shrink([false, false])
            .scroll_bar_visibility(egui::scroll_area::ScrollBarVisibility::AlwaysVisible)
            .show(ui, |ui| {
                if let Some((_, r)) = &self.replay {
                    replay_report(ui, r);
                    ui.separator();
                }
                if !status.ok {
                    ui.weak("Fix the file and save: this clears by itself.");
                }
                for d in &status.diagnostics {
                    let colour = if d.is_error() {
                        theme::DANGER
                    } else {
                        theme::PREVIEW
                    };
                    ui.add(
                        egui::Label::new(RichText::new(d.to_string()).monospace().color(colour))
                            .selectable(true),
                    );
                }
                if !status.paths.is_empty() {
                    let names: Vec<String> = status
                        .paths
                        .iter()
                        .map(|p| theme::short_path(&p.display().to_string()))
                        .collect();
                    ui.weak(format!("changed: {}", names.join(", ")));
                }
                for c in &status.changes {
                    ui.add(
                        egui::Label::new(RichText::new(c.to_string()).monospace()).selectable(true),
                    );
                }
                if status.ok && status.changes.is_empty() {
                    ui.weak("No entry changed.");
                }
                if !status.lost.is_empty() {
                    ui.label(
                        RichText::new("The new content no longer has what this game uses:")
                            .color(theme::PREVIEW),
                    );
                    for l in &status.lost {
                        ui.label(format!("• {l}"));
                    }
                }
            });
        action
    }
}

/// What a replay under new content found.
fn replay_report(ui: &mut Ui, r: &ReplayReport) {
    let names = |s: [i64; 2]| {
        format!(
            "{} {} – {} {}",
            theme::seat_name(Seat::One),
            s[0],
            s[1],
            theme::seat_name(Seat::Two)
        )
    };
    match &r.first_difference {
        None if r.refused.is_none() => {
            ui.label("Replayed: every move does exactly what it did.");
        }
        None => {}
        Some(d) => {
            ui.label(
                RichText::new(format!("Move {} now plays differently:", d.number))
                    .color(theme::PREVIEW),
            );
            ui.horizontal_top(|ui| {
                ui.vertical(|ui| {
                    ui.strong("before");
                    for e in &d.before {
                        ui.label(e);
                    }
                });
                ui.vertical(|ui| {
                    ui.strong("now");
                    for e in &d.after {
                        ui.label(e);
                    }
                });
            });
        }
    }
    if let Some((n, why)) = &r.refused {
        ui.colored_label(theme::DANGER, format!("Move {n} is refused now: {why}"));
    }
    ui.label(format!(
        "Final score: {} before, {} now",
        names(r.scores[0]),
        names(r.scores[1])
    ));
    if !r.cells.is_empty() {
        let cells: Vec<String> = r.cells.iter().map(ToString::to_string).collect();
        ui.label(format!("Cells that end differently: {}", cells.join(" ")));
    }
}
