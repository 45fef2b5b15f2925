//! The sandbox's position editor: put and remove tokens, set scores, banked extra turns
//! and stacks, each an undoable step of the timeline.

use std::sync::Arc;

use egui::{RichText, Ui};

use crate::rules::Seat;
use crate::timeline::Edit;

use super::super::theme;
use super::SandboxScreen;

/// What a click on the board does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Tool {
    /// Play the picked card.
    Play,
    /// Put a token of the editor's type and value for the seat placing.
    Put,
    /// Take a token off.
    Remove,
}

/// The position editor's inputs.
#[derive(Clone, Debug)]
pub(super) struct Editor {
    pub(super) tool: Tool,
    pub(super) kind: crate::rules::TokenTypeId,
    pub(super) value: i32,
    pub(super) scores: [i64; 2],
    pub(super) banked: [u8; 2],
}

impl Default for Editor {
    fn default() -> Editor {
        Editor {
            tool: Tool::Play,
            kind: crate::rules::TokenTypeId(0),
            value: 1,
            scores: [0, 0],
            banked: [0, 0],
        }
    }
}

impl SandboxScreen {
    /// The position editor: tools for the board, scores, banked turns and stacks; every
    /// change is a step of the timeline (undo takes it back).
    pub(super) fn editor_panel(&mut self, ui: &mut Ui) {
        let catalog = Arc::clone(self.sandbox.catalog());
        ui.horizontal(|ui| {
            ui.selectable_value(&mut self.editor.tool, Tool::Play, "Play cards");
            ui.selectable_value(&mut self.editor.tool, Tool::Put, "Put token");
            ui.selectable_value(&mut self.editor.tool, Tool::Remove, "Remove token");
        });
        match self.editor.tool {
            Tool::Play => {
                ui.weak("Clicks on the board play the picked card.");
            }
            Tool::Put => {
                if self.editor.kind.index() >= catalog.token_types().len() {
                    self.editor.kind = crate::rules::TokenTypeId(0);
                }
                egui::ComboBox::from_label("Token type")
                    .selected_text(catalog.token_type(self.editor.kind).meta.name.clone())
                    .show_ui(ui, |ui| {
                        for (i, t) in catalog.token_types().iter().enumerate() {
                            let id = crate::rules::TokenTypeId::from_index(i);
                            ui.selectable_value(&mut self.editor.kind, id, &t.meta.name);
                        }
                    });
                ui.horizontal(|ui| {
                    ui.label("Value");
                    ui.add(egui::DragValue::new(&mut self.editor.value).range(1..=1_000_000))
                        .accessible_name("Token value");
                });
                ui.weak(format!(
                    "Click a cell to put it there for {} (Placing for); it replaces what is there.",
                    theme::seat_name(self.seat)
                ));
            }
            Tool::Remove => {
                ui.weak("Click a token to take it off the board.");
            }
        }
        ui.separator();
        let state = self.sandbox.state().clone();
        let mut edits = Vec::new();
        egui::Grid::new("editor-numbers")
            .num_columns(3)
            .show(ui, |ui| {
                ui.label("");
                ui.label("Score");
                ui.label("Extra turns");
                ui.end_row();
                for seat in Seat::BOTH {
                    let i = seat.index();
                    ui.label(RichText::new(theme::seat_name(seat)).color(theme::seat_color(seat)));
                    ui.add(egui::DragValue::new(&mut self.editor.scores[i]))
                        .accessible_name(format!("{} score", theme::seat_name(seat)));
                    ui.add(egui::DragValue::new(&mut self.editor.banked[i]).range(0..=9))
                        .accessible_name(format!("{} extra turns", theme::seat_name(seat)));
                    ui.end_row();
                }
            });
        ui.horizontal(|ui| {
            if ui.button("Set scores and turns").clicked() {
                for seat in Seat::BOTH {
                    let i = seat.index();
                    if self.editor.scores[i] != state.score(seat) {
                        edits.push(Edit::Score {
                            seat,
                            score: self.editor.scores[i],
                        });
                    }
                    if self.editor.banked[i] != state.seat(seat).extra_turns {
                        edits.push(Edit::ExtraTurns {
                            seat,
                            banked: self.editor.banked[i],
                        });
                    }
                }
            }
            if ui.button("Read from the board").clicked() {
                for seat in Seat::BOTH {
                    self.editor.scores[seat.index()] = state.score(seat);
                    self.editor.banked[seat.index()] = state.seat(seat).extra_turns;
                }
            }
        });
        ui.separator();
        ui.label(format!(
            "{}'s stacks (top first)",
            theme::seat_name(self.seat)
        ));
        let stacks = state.seat(self.seat).stack_cards();
        for (n, stack) in stacks.iter().enumerate() {
            ui.horizontal_wrapped(|ui| {
                let names: Vec<&str> = stack
                    .iter()
                    .map(|&c| catalog.card(c).meta.name.as_str())
                    .collect();
                ui.label(format!("{}: {}", n + 1, names.join(", ")));
                if let Some(card) = self.card
                    && ui
                        .small_button(format!("+ top {}", n + 1))
                        .on_hover_text("Put the picked card on top of this stack")
                        .clicked()
                {
                    let mut new = stacks.clone();
                    new[n].insert(0, card);
                    edits.push(Edit::Stacks {
                        seat: self.seat,
                        stacks: new,
                    });
                }
                if !stack.is_empty()
                    && ui
                        .small_button(format!("− top {}", n + 1))
                        .on_hover_text("Take the top card off this stack")
                        .clicked()
                {
                    let mut new = stacks.clone();
                    new[n].remove(0);
                    edits.push(Edit::Stacks {
                        seat: self.seat,
                        stacks: new,
                    });
                }
            });
        }
        for edit in edits {
            self.apply_edit(edit);
        }
    }

    /// Make an edit a step of the game, or say why it cannot be.
    pub(super) fn apply_edit(&mut self, edit: Edit) {
        if let Edit::Stacks { seat, stacks } = &edit
            && let Err(e) = self.sandbox.engine().check_deck(*seat, stacks)
        {
            self.message = Some(format!("refused: {e}"));
            return;
        }
        match self.sandbox.edit(edit) {
            Ok(_) => {
                self.message = None;
                self.selected_event = None;
            }
            Err(e) => self.message = Some(format!("refused: {e}")),
        }
    }
}
