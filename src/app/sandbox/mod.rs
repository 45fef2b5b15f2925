//! The sandbox: one person plays both seats with any card of the loaded content, with
//! unlimited undo and redo, an AI hint drawn on the board, and an event log that says
//! what caused every change (card, ability, token type, script and line).
//!
//! [`Sandbox`] (`model.rs`) is the game without drawing: the content and a
//! [`Timeline`](crate::timeline::Timeline) of moves and edits, so the same game can be
//! played again on new content. This file is the screen (picker, board, event log); the
//! position editor, the reload panel and "Save as scenario" have rooms of their own.

mod editor;
mod model;
mod reload;
mod save;

use std::sync::Arc;

use egui::{Color32, Key, Modifiers, RichText, Ui};

use crate::ai::Rated;
use crate::rules::{CardId, Catalog, Cause, Cell, Event, IdMap, Play, Seat, describe};
use crate::timeline::{Action, Edit, Moment};

use super::anim;
use super::board::{self, Overlay};
use super::cards::{self, CardLook};
use super::hover::Previews;
use super::session::Session;
use super::theme;
use editor::{Editor, Tool};
use save::SaveForm;

pub use model::{ReplayReport, Sandbox};
pub use save::SaveTo;

/// What the sandbox screen asks of the app.
pub enum SandboxAction {
    /// Stay.
    Stay,
    /// Back to the main menu.
    Menu,
    /// Start a fresh sandbox with this content (after a reload it could not adopt).
    Restart(Arc<Catalog>),
}

/// The sandbox screen.
pub struct SandboxScreen {
    /// The game.
    pub sandbox: Sandbox,
    card: Option<CardId>,
    seat: Seat,
    search: String,
    show_hint: bool,
    /// The hovered move's preview, worked out on a worker.
    previews: Previews,
    selected_event: Option<(Moment, usize)>,
    message: Option<String>,
    /// What the content is, when it is not the loaded packs as they are (a patch from the
    /// Balance screen); until the content changes.
    note: Option<String>,
    /// The last "Replay with new rules", with the reload it was made after.
    replay: Option<(u64, ReplayReport)>,
    saving: SaveTo,
    save: Option<SaveForm>,
    /// The saved game being stepped through (its name, and a move refused now).
    watching: Option<(String, Option<String>)>,
    /// The position editor's tool and inputs.
    editor: Editor,
}

impl SandboxScreen {
    /// A screen for `sandbox`.
    #[must_use]
    pub fn new(sandbox: Sandbox) -> SandboxScreen {
        let seat = sandbox.state().turn();
        let mut previews = Previews::default();
        previews.warm(sandbox.catalog());
        SandboxScreen {
            sandbox,
            card: None,
            seat,
            search: String::new(),
            show_hint: false,
            previews,
            selected_event: None,
            message: None,
            note: None,
            replay: None,
            saving: SaveTo::default(),
            save: None,
            watching: None,
            editor: Editor::default(),
        }
    }

    /// Step through a saved game called `name` (see [`Sandbox::from_replay`]).
    #[must_use]
    pub fn watching(mut self, name: String, refused: Option<String>) -> SandboxScreen {
        self.watching = Some((name, refused));
        self
    }

    /// The screen with `note` shown above the board (what the content is, when it is not
    /// the loaded packs as they are).
    #[must_use]
    pub fn with_note(mut self, note: String) -> SandboxScreen {
        self.note = Some(note);
        self
    }

    /// Whether this screen steps through a saved game (it is not kept on leaving).
    #[must_use]
    pub fn is_watching(&self) -> bool {
        self.watching.is_some()
    }

    /// Where "Save as scenario" writes and checks its files.
    #[must_use]
    pub fn saving_to(mut self, saving: SaveTo) -> SandboxScreen {
        self.saving = saving;
        self
    }

    /// The card picked to play.
    #[must_use]
    pub fn card(&self) -> Option<CardId> {
        self.card
    }

    /// Move the sandbox to new content (see [`Sandbox::adopt`]); the picked card follows
    /// by `pack:id` (or is dropped when gone) and cached previews and hints are cleared.
    pub fn adopt(&mut self, catalog: Arc<Catalog>) -> Result<(), Vec<String>> {
        let map = IdMap::new(self.sandbox.catalog(), &catalog);
        self.sandbox.adopt(catalog, &map)?;
        // The packs as they are now: a patch the sandbox was opened with is gone.
        self.note = None;
        self.card = self.card.and_then(|c| map.card(c));
        self.previews.clear();
        self.previews.clear_hint();
        self.previews.warm(self.sandbox.catalog());
        self.replay = None;
        self.selected_event = None;
        Ok(())
    }

    /// Draw the screen, with the last live reload's outcome.
    pub fn show(&mut self, ui: &mut Ui, reload: &mut Option<super::ReloadStatus>) -> SandboxAction {
        let mut leave = false;
        let mut action = SandboxAction::Stay;
        self.previews.poll();
        // Frames go on while the worker answers; the answer shows in the first after.
        self.previews.keep_frames_coming(ui.ctx());
        self.keys(ui);
        egui::Panel::top("sandbox-bar").show(ui, |ui| {
            ui.add_space(4.0);
            ui.horizontal(|ui| {
                let back = ui
                    .button("◀ Menu")
                    .on_hover_text(if self.watching.is_some() {
                        "Back to the main menu"
                    } else {
                        "Back to the main menu: this game is kept, Sandbox resumes it"
                    });
                if back.clicked() {
                    leave = true;
                }
                ui.separator();
                ui.heading("Sandbox");
                ui.separator();
                if ui
                    .add_enabled(self.sandbox.can_undo(), egui::Button::new("Undo"))
                    .on_hover_text("Ctrl+Z")
                    .clicked()
                {
                    self.undo();
                }
                if ui
                    .add_enabled(self.sandbox.can_redo(), egui::Button::new("Redo"))
                    .on_hover_text("Ctrl+Y or Ctrl+Shift+Z")
                    .clicked()
                {
                    self.redo();
                }
                if ui.button("Reset").clicked() {
                    self.sandbox.reset();
                    self.selected_event = None;
                    self.seat = self.sandbox.state().turn();
                }
                if ui
                    .button("Save as scenario…")
                    .on_hover_text(
                        "Write the start, the moves and the present outcome as a scenario file \
                         for `tokensmith scenario` and the test suite",
                    )
                    .clicked()
                {
                    self.open_save_form();
                }
                ui.separator();
                ui.label("Placing for");
                for seat in Seat::BOTH {
                    ui.selectable_value(
                        &mut self.seat,
                        seat,
                        RichText::new(theme::seat_name(seat)).color(theme::seat_color(seat)),
                    );
                }
                ui.separator();
                ui.toggle_value(&mut self.show_hint, "AI hint");
                ui.separator();
                let state = self.sandbox.state();
                // Read on the worker (income hooks may take a move's time limit).
                let incomes = self
                    .previews
                    .incomes(self.sandbox.catalog(), state)
                    .unwrap_or([0, 0]);
                for seat in Seat::BOTH {
                    ui.label(
                        RichText::new(format!(
                            "{} {} (income {})",
                            theme::seat_name(seat),
                            state.score(seat),
                            incomes[seat.index()]
                        ))
                        .color(theme::seat_color(seat)),
                    );
                }
            });
            ui.add_space(4.0);
        });
        if let Some((name, refused)) = &self.watching {
            egui::Panel::top("replay-bar").show(ui, |ui| {
                ui.horizontal(|ui| {
                    ui.label(RichText::new(format!("Replay: {name}")).strong());
                    let (at, of) = self.sandbox.timeline().position();
                    ui.label(format!("move {at} of {of}"));
                    ui.weak(
                        "Redo or → steps forward, Undo or ← back; a move of your own branches off.",
                    );
                });
                if let Some(why) = refused {
                    ui.colored_label(theme::DANGER, why);
                }
            });
        }
        egui::Panel::left("picker")
            .resizable(true)
            .default_size(250.0)
            .show(ui, |ui| self.picker(ui));
        egui::Panel::right("log")
            .resizable(true)
            .default_size(330.0)
            .show(ui, |ui| self.log(ui));
        if let Some(status) = reload.as_ref() {
            // A replay made after an earlier reload says nothing about this one.
            if self
                .replay
                .as_ref()
                .is_some_and(|(g, _)| *g != status.generation)
            {
                self.replay = None;
            }
            let most = (ui.available_height() * 0.6).max(120.0);
            egui::Panel::bottom("reload")
                .resizable(true)
                .default_size(240.0_f32.min(most))
                .min_size(80.0)
                .max_size(most)
                .show(ui, |ui| {
                    if let Some(a) = self.reload_panel(ui, status) {
                        action = a;
                    }
                });
            if action_dismisses(&action) {
                *reload = None;
            }
        }
        self.save_window(ui);
        egui::CentralPanel::default_margins().show(ui, |ui| self.board(ui));
        if leave {
            return SandboxAction::Menu;
        }
        action
    }

    fn keys(&mut self, ui: &Ui) {
        if ui.ctx().egui_wants_keyboard_input() {
            // Typing in the search field: its own undo, not the game's.
            return;
        }
        let (undo, redo) = ui.input_mut(|i| {
            // Ctrl+Shift+Z first: Ctrl+Z alone would also match it.
            let redo = i.consume_key(Modifiers::COMMAND | Modifiers::SHIFT, Key::Z)
                || i.consume_key(Modifiers::COMMAND, Key::Y);
            let redo = redo || i.consume_key(Modifiers::NONE, Key::ArrowRight);
            let undo = i.consume_key(Modifiers::COMMAND, Key::Z)
                || i.consume_key(Modifiers::NONE, Key::ArrowLeft);
            (undo, redo)
        });
        if undo {
            self.undo();
        }
        if redo {
            self.redo();
        }
    }

    fn undo(&mut self) {
        if self.sandbox.undo() {
            self.seat = self.sandbox.state().turn();
            self.selected_event = None;
        }
    }

    fn redo(&mut self) {
        if self.sandbox.redo() {
            self.seat = self.sandbox.state().turn();
            self.selected_event = None;
        }
    }

    fn picker(&mut self, ui: &mut Ui) {
        ui.add_space(6.0);
        egui::CollapsingHeader::new("Position editor")
            .default_open(false)
            .show(ui, |ui| self.editor_panel(ui));
        ui.separator();
        ui.strong("Card to play");
        let catalog = self.sandbox.catalog().clone();
        if let Some(card) = self.card {
            let look = CardLook {
                key: None,
                stack_len: None,
                selected: true,
                enabled: true,
                label: format!("picked card {}", catalog.card(card).meta.name),
                seat: self.seat,
            };
            cards::card(ui, &catalog, card, &look);
        } else {
            ui.weak("Pick a card below, then click an empty cell.");
        }
        ui.add(
            egui::TextEdit::singleline(&mut self.search)
                .hint_text("search cards")
                .desired_width(f32::INFINITY),
        )
        .accessible_name("Search cards");
        let needle = self.search.to_lowercase();
        // Cards of two packs with one id or name are told apart by their pack.
        let mut seen: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
        for def in catalog.cards() {
            *seen.entry(def.meta.id.as_str()).or_default() += 1;
            if def.meta.name != def.meta.id {
                *seen.entry(def.meta.name.as_str()).or_default() += 1;
            }
        }
        egui::ScrollArea::vertical().show(ui, |ui| {
            for (i, def) in catalog.cards().iter().enumerate() {
                let ability = def
                    .ability
                    .map_or("", |a| catalog.ability(a).meta.name.as_str());
                let kind = &catalog.token_type(def.token).meta.name;
                let hay =
                    format!("{} {} {ability} {kind}", def.meta.name, def.meta.key()).to_lowercase();
                if !needle.is_empty() && !hay.contains(&needle) {
                    continue;
                }
                let id = CardId::from_index(i);
                let clash = seen.get(def.meta.id.as_str()).copied().unwrap_or(0) > 1
                    || seen.get(def.meta.name.as_str()).copied().unwrap_or(0) > 1;
                let text = if clash {
                    format!(
                        "{} ({}) · {} · {}",
                        def.meta.name, def.meta.origin.pack, def.value, ability
                    )
                } else {
                    format!("{} · {} · {}", def.meta.name, def.value, ability)
                };
                let r = ui.selectable_label(self.card == Some(id), text);
                let r = r.on_hover_ui(|ui| cards::card_tooltip(ui, &catalog, id));
                if r.clicked() {
                    self.card = Some(id);
                }
            }
        });
    }

    fn board(&mut self, ui: &mut Ui) {
        if let Some(n) = &self.note {
            ui.colored_label(theme::HINT, n);
        }
        if let Some(m) = &self.message {
            ui.colored_label(theme::DANGER, m);
        }
        let catalog = self.sandbox.catalog().clone();
        let board_state = self.sandbox.state().board().clone();
        let pieces = anim::pieces(&board_state);
        let hint = self.current_hint();
        let hint_labels: Vec<(Rated, String)> = hint
            .iter()
            .map(|r| (*r, format!("{:+.0}", r.value)))
            .collect();
        let highlight: Vec<Cell> = match self.selected_event {
            Some((s, e)) => self
                .event(s, e)
                .map(Session::event_cells)
                .unwrap_or_default(),
            None => self
                .sandbox
                .steps()
                .last()
                .map(|s| s.events.iter().flat_map(Session::event_cells).collect())
                .unwrap_or_default(),
        };
        let refused = self.refused_preview();
        let preview = self
            .previews
            .shown()
            .and_then(|(_, p)| p.as_ref().ok())
            .filter(|_| self.card.is_some());
        let overlay = Overlay {
            preview,
            hint: &hint_labels,
            highlight: if preview.is_some() { &[] } else { &highlight },
            targets: self.card.is_some(),
            every_cell: self.editor.tool != Tool::Play,
            refused: refused.as_ref().map(|(c, why)| (*c, why.as_str())),
        };
        // The board leaves a line below it for the preview or the refusal.
        let room = egui::vec2(
            ui.available_width(),
            (ui.available_height() - 2.0 * ui.text_style_height(&egui::TextStyle::Body)).max(0.0),
        );
        let input = ui
            .allocate_ui_with_layout(room, egui::Layout::top_down(egui::Align::Center), |ui| {
                board::show(ui, &catalog, &board_state, &pieces, &overlay)
            })
            .inner;
        if let Some(p) = preview {
            let d = p.income_delta();
            ui.label(format!(
                "Preview: income {} {:+}, {} {:+}",
                theme::seat_name(Seat::One),
                d[0],
                theme::seat_name(Seat::Two),
                d[1]
            ));
        } else if let Some((_, why)) = &refused {
            ui.colored_label(theme::DANGER, format!("This move will be refused: {why}"));
        } else if self.card.is_some() {
            super::game::working_line(ui, self.previews.pending());
        }
        if self.editor.tool != Tool::Play {
            self.previews.clear();
            if let Some(cell) = input.clicked {
                let edit = match self.editor.tool {
                    Tool::Put => Edit::Put {
                        cell,
                        token: crate::rules::Token {
                            value: self.editor.value,
                            kind: self.editor.kind,
                            card: None,
                            seat: self.seat,
                        },
                    },
                    _ => Edit::Remove { cell },
                };
                self.apply_edit(edit);
            }
            return;
        }
        let Some(card) = self.card else {
            self.previews.clear();
            return;
        };
        if let Some(cell) = input.hovered.filter(|c| board_state.get(*c).is_none()) {
            let mv = Sandbox::move_for(self.seat, card, cell);
            let base = self.sandbox.base_for(mv.seat);
            self.previews.ask(self.sandbox.catalog(), &base, mv);
        } else {
            self.previews.clear();
        }
        if let Some(cell) = input.clicked {
            let mv = Sandbox::move_for(self.seat, card, cell);
            match self.sandbox.play(mv) {
                Ok(_) => {
                    self.message = None;
                    self.seat = self.sandbox.state().turn();
                    self.selected_event = None;
                }
                Err(e) => self.message = Some(format!("refused: {e}")),
            }
        }
    }

    /// The hovered move when the engine refuses it, and why.
    fn refused_preview(&self) -> Option<(Cell, String)> {
        match self.previews.shown() {
            Some((mv, Err(why))) if self.card.is_some() => Some((mv.cell, why.to_string())),
            _ => None,
        }
    }

    /// The AI hint for the board shown, from the preview worker: empty while it is
    /// worked out (or when hidden).
    fn current_hint(&mut self) -> Vec<Rated> {
        if !self.show_hint {
            self.previews.clear_hint();
            return Vec::new();
        }
        let cards: Vec<CardId> = match self.card {
            Some(c) => vec![c],
            None => self
                .sandbox
                .state()
                .seat(self.seat)
                .hand()
                .map(|(_, c)| c)
                .collect(),
        };
        let base = self.sandbox.base_for(self.seat);
        self.previews
            .hint(self.sandbox.catalog(), &base, self.seat, &cards, 5)
            .map(<[Rated]>::to_vec)
            .unwrap_or_default()
    }

    fn event(&self, at: Moment, index: usize) -> Option<&Event> {
        self.sandbox.timeline().events(at).get(index)
    }

    fn log(&mut self, ui: &mut Ui) {
        ui.add_space(6.0);
        if self.show_hint {
            let catalog = self.sandbox.catalog().clone();
            ui.heading("AI hint");
            ui.weak(format!(
                "The evaluator's best moves for {}: the change in its evaluation.",
                theme::seat_name(self.seat)
            ));
            let hint = self.current_hint();
            if self
                .previews
                .hint_pending()
                .is_some_and(|p| p >= super::game::WORKING_AFTER)
            {
                ui.weak("Working out the hint…");
            }
            for (rank, r) in hint.iter().enumerate() {
                let name = match r.mv.play {
                    Play::Card(c) => catalog.card(c).meta.name.clone(),
                    Play::Stack(s) => format!("stack {}", s + 1),
                };
                ui.label(
                    RichText::new(format!(
                        "#{} {name} at {}: {:+.0}",
                        rank + 1,
                        r.mv.cell,
                        r.value
                    ))
                    .color(theme::HINT),
                );
            }
            ui.separator();
        }
        ui.heading("Event log");
        ui.weak("Click an event to see what caused it.");
        let catalog = self.sandbox.catalog().clone();
        let mut clicked = None;
        egui::ScrollArea::vertical()
            .max_height(ui.available_height() * 0.62)
            .stick_to_bottom(true)
            .show(ui, |ui| {
                let opening = self.sandbox.opening();
                if !opening.is_empty() {
                    ui.strong("Opening");
                    let made_with = self.sandbox.catalog_of(Moment::Opening);
                    for (i, e) in opening.iter().enumerate() {
                        let text = describe::event(made_with, e);
                        let sel = self.selected_event == Some((Moment::Opening, i));
                        if ui.selectable_label(sel, text).clicked() {
                            clicked = Some((Moment::Opening, i));
                        }
                    }
                }
                for (n, step) in self.sandbox.steps().iter().enumerate() {
                    let (mv, card) = match &step.action {
                        Action::Move { mv, card } => (*mv, *card),
                        Action::Edit(edit) => {
                            ui.label(
                                RichText::new(format!(
                                    "Step {}: edit: {}",
                                    n + 1,
                                    edit.describe(&step.catalog)
                                ))
                                .strong()
                                .color(theme::HINT),
                            );
                            continue;
                        }
                    };
                    let name = match mv.play {
                        Play::Card(c) => catalog.card(c).meta.name.clone(),
                        Play::Stack(s) => {
                            format!("{} (stack {})", step.catalog.card(card).meta.name, s + 1)
                        }
                    };
                    ui.label(
                        RichText::new(format!(
                            "Move {}: {} plays {} at {}",
                            n + 1,
                            theme::seat_name(mv.seat),
                            name,
                            mv.cell
                        ))
                        .strong()
                        .color(theme::seat_color(mv.seat)),
                    );
                    for (i, e) in step.events.iter().enumerate() {
                        let text = describe::event(&step.catalog, e);
                        let sel = self.selected_event == Some((Moment::Move(n), i));
                        if ui.selectable_label(sel, text).clicked() {
                            clicked = Some((Moment::Move(n), i));
                        }
                    }
                }
            });
        if let Some(c) = clicked {
            self.selected_event = if self.selected_event == Some(c) {
                None
            } else {
                Some(c)
            };
        }
        ui.separator();
        if let Some((s, i)) = self.selected_event
            && let Some(e) = self.event(s, i)
        {
            cause_details(ui, self.sandbox.catalog_of(s), e);
        }
    }
}

fn action_dismisses(action: &SandboxAction) -> bool {
    matches!(action, SandboxAction::Restart(_))
}

/// Everything known about why `event` happened.
fn cause_details(ui: &mut Ui, catalog: &Catalog, event: &Event) {
    ui.strong("Why");
    ui.label(describe::event(catalog, event));
    match event.cause {
        Cause::Rules => {
            ui.label("The rules themselves (the opening token, scoring, turn order).");
        }
        Cause::Card(card) => {
            ui.label(format!("Card: {}", catalog.card(card).meta.name));
            cards::origin(ui, "card", &catalog.card(card).meta);
        }
        Cause::Ability { card, ability } => {
            let a = catalog.ability(ability);
            ui.label(format!(
                "Ability {} of card {}",
                a.meta.name,
                catalog.card(card).meta.name
            ));
            ui.weak(&a.meta.description);
            cards::origin(ui, "ability", &a.meta);
            cards::origin(ui, "card", &catalog.card(card).meta);
        }
        Cause::TokenType { kind, cell } => {
            let t = catalog.token_type(kind);
            ui.label(format!("Token type {} of the token at {cell}", t.meta.name));
            ui.weak(&t.meta.description);
            cards::origin(ui, "token type", &t.meta);
        }
        Cause::Script { script, line } => match catalog.scripts().get(script.index()) {
            Some(s) => {
                ui.label(
                    RichText::new(format!("Script {}, line {line}", s.name())).color(theme::HINT),
                );
                if let Some(text) = s.source.lines().nth(line.saturating_sub(1) as usize) {
                    ui.code(text.trim());
                }
            }
            None => {
                ui.colored_label(Color32::GRAY, format!("script #{} line {line}", script.0));
            }
        },
    }
}
