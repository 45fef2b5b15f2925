//! The sandbox: one person plays both seats with any card of the loaded content, with
//! unlimited undo and redo, an AI hint drawn on the board, and an event log that says
//! what caused every change (card, ability, token type, script and line).
//!
//! [`Sandbox`] is the model (no drawing): the content and a [`Timeline`] of moves.
//! Everything is kept as moves, so the same game can be re-played on new content.

use std::sync::Arc;

use egui::{Color32, Key, Modifiers, RichText, Ui};

use crate::ai::{self, Rated};
use crate::rules::{
    CardId, Catalog, Cause, Cell, DeckId, Engine, Event, GameState, IdMap, Move, Play, Seat,
    describe,
};
use crate::timeline::{Action, Edit, Moment, Step, Timeline};

use super::anim;
use super::board::{self, Overlay};
use super::cards::{self, CardLook};
use super::preview::{self, Preview};
use super::session::{Session, Table};
use super::theme;

/// What re-playing the sandbox's moves under new content gave.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReplayReport {
    /// The first move whose events differ, with its events before and now.
    pub first_difference: Option<crate::replay::Difference>,
    /// The first step the new content refuses (1-based, with why): the replay stops there.
    pub refused: Option<(usize, String)>,
    /// Final scores before and after.
    pub scores: [[i64; 2]; 2],
    /// Cells whose final token differs.
    pub cells: Vec<Cell>,
}

/// The sandbox's game: the content it is played with and its [`Timeline`].
pub struct Sandbox {
    table: Table,
    timeline: Timeline,
    seed: u64,
}

impl Sandbox {
    /// A sandbox game with `deck` for both seats.
    pub fn new(catalog: Arc<Catalog>, deck: DeckId, seed: u64) -> Result<Sandbox, String> {
        let table = Table::new(Arc::clone(&catalog));
        let stacks = &catalog
            .decks()
            .get(deck.index())
            .ok_or_else(|| "the sandbox's deck is not in the loaded content".to_string())?
            .stacks;
        let (start, opening) = table.deal([stacks, stacks], seed)?;
        Ok(Sandbox {
            table,
            timeline: Timeline::new(start, opening, catalog),
            seed,
        })
    }

    /// A saved game to step through: dealt and played under `catalog`, then taken back
    /// to the start (Redo steps forward). Fails when the content lacks one of its cards
    /// or cannot deal its decks; a move the content refuses ends the game there, and the
    /// second value says which.
    pub fn from_replay(
        catalog: Arc<Catalog>,
        replay: &crate::replay::Replay,
    ) -> Result<(Sandbox, Option<String>), String> {
        let table = Table::new(Arc::clone(&catalog));
        let played = crate::replay::timeline(replay, &table.engine(), &catalog)
            .map_err(|e| e.to_string())?;
        let refused = played
            .refused
            .map(|(n, why)| format!("move {n} is refused by the content now loaded: {why}"));
        let mut sandbox = Sandbox {
            table,
            timeline: played.timeline,
            seed: replay.seed,
        };
        while sandbox.undo() {}
        Ok((sandbox, refused))
    }

    /// The content.
    #[must_use]
    pub fn catalog(&self) -> &Arc<Catalog> {
        self.table.catalog()
    }

    /// The engine.
    #[must_use]
    pub fn engine(&self) -> Engine<'_> {
        self.table.engine()
    }

    /// The game's moves, with undo and redo.
    #[must_use]
    pub fn timeline(&self) -> &Timeline {
        &self.timeline
    }

    /// The current state.
    #[must_use]
    pub fn state(&self) -> &GameState {
        self.timeline.state()
    }

    /// The applied moves, oldest first.
    #[must_use]
    pub fn steps(&self) -> &[Step] {
        self.timeline.steps()
    }

    /// The opening token's events.
    #[must_use]
    pub fn opening(&self) -> &[Event] {
        self.timeline.opening()
    }

    /// The content the events of `at` were made with.
    #[must_use]
    pub fn catalog_of(&self, at: Moment) -> &Arc<Catalog> {
        self.timeline
            .catalog_of(at)
            .unwrap_or_else(|| self.table.catalog())
    }

    /// The move that plays `card` for `seat` on `cell`.
    #[must_use]
    pub fn move_for(seat: Seat, card: CardId, cell: Cell) -> Move {
        Move {
            seat,
            play: Play::Card(card),
            cell,
        }
    }

    /// The state `mv` is played on: the current one with `mv`'s seat to move.
    fn base_for(&self, seat: Seat) -> GameState {
        let mut state = self.state().clone();
        Engine::any_seat_to_move(&mut state, seat);
        state
    }

    /// What `mv` would do.
    pub fn preview(&self, mv: Move) -> Result<Preview, String> {
        preview::preview(&self.engine(), &self.base_for(mv.seat), mv)
    }

    /// Play `mv` (any seat, any card); moves undone before are dropped.
    pub fn play(&mut self, mv: Move) -> Result<&Step, String> {
        let base = self.base_for(mv.seat);
        let engine = self.table.engine();
        self.timeline
            .play(&engine, self.table.catalog(), base, mv)
            .map_err(|e| e.to_string())
    }

    /// Take back the last move; false when there is none.
    pub fn undo(&mut self) -> bool {
        self.timeline.undo()
    }

    /// Play again the last move taken back; false when there is none.
    pub fn redo(&mut self) -> bool {
        self.timeline.redo()
    }

    /// Whether there is something to undo.
    #[must_use]
    pub fn can_undo(&self) -> bool {
        self.timeline.can_undo()
    }

    /// Whether there is something to redo.
    #[must_use]
    pub fn can_redo(&self) -> bool {
        self.timeline.can_redo()
    }

    /// Carry the whole sandbox (start, every move, undo and redo) over to `catalog`
    /// through `map` (the current content's ids to `catalog`'s, matched by `pack:id`).
    /// When something the game uses is gone, nothing changes and the list says what
    /// ([`Timeline::carry_over`]).
    pub fn adopt(&mut self, catalog: Arc<Catalog>, map: &IdMap) -> Result<(), Vec<String>> {
        let old = Arc::clone(self.table.catalog());
        self.timeline.carry_over(&old, &catalog, map)?;
        self.table = Table::new(catalog);
        Ok(())
    }

    /// The applied steps played again from the start under the content now loaded.
    fn played_again(&self) -> crate::replay::PlayedAgain {
        crate::replay::play_again(
            &self.engine(),
            self.catalog(),
            self.timeline.start().clone(),
            self.timeline.opening().to_vec(),
            self.steps().iter().map(|s| s.action.clone()),
        )
    }

    /// Play the applied moves again from the start under the content now loaded, and
    /// say where the outcome differs from what was played. Nothing changes.
    #[must_use]
    pub fn replay(&self) -> ReplayReport {
        let again = self.played_again();
        let recorded = crate::replay::step_lines(&self.timeline);
        let first_difference =
            crate::replay::first_difference(&again.timeline, recorded.iter().map(|r| r.as_deref()));
        let (last, now) = (self.state(), again.timeline.state());
        let mut cells: Vec<Cell> = Vec::new();
        for c in last
            .board()
            .tokens()
            .chain(now.board().tokens())
            .map(|(c, _)| c)
        {
            let differs = match (last.board().get(c), now.board().get(c)) {
                (Some(a), Some(b)) => a.value != b.value || a.seat != b.seat || a.kind != b.kind,
                (None, None) => false,
                _ => true,
            };
            if differs && !cells.contains(&c) {
                cells.push(c);
            }
        }
        ReplayReport {
            first_difference,
            refused: again.refused,
            scores: [
                [last.score(Seat::One), last.score(Seat::Two)],
                [now.score(Seat::One), now.score(Seat::Two)],
            ],
            cells,
        }
    }

    /// Replace the game with its replay under the content now loaded (after
    /// [`Sandbox::replay`]): the steps the new content accepts, played again.
    pub fn adopt_replay(&mut self) {
        self.timeline = self.played_again().timeline;
    }

    /// Change the position by hand (the position editor): an undoable step.
    pub fn edit(&mut self, edit: Edit) -> Result<&Step, crate::timeline::EditError> {
        let catalog = Arc::clone(self.table.catalog());
        self.timeline.edit(&catalog, edit)
    }

    /// The applied moves as a scenario file named `name`, with `expect:` filled from the
    /// present position (see [`crate::scenario::write`]).
    pub fn scenario(&self, name: &str, pack_dirs: &[String]) -> Result<String, String> {
        // A scenario starts from a position and plays moves: the position after the last
        // edit by hand is its start, and the moves after it are its moves.
        let steps = self.steps();
        let last_edit = steps
            .iter()
            .rposition(|s| matches!(s.action, Action::Edit(_)));
        let (start, rest) = match last_edit {
            Some(i) => (&steps[i].after, &steps[i + 1..]),
            None => (self.timeline.start(), steps),
        };
        let moves: Vec<Move> = rest
            .iter()
            .filter_map(|s| s.played().map(|p| p.0))
            .collect();
        crate::scenario::write::scenario_text(
            &self.engine(),
            &crate::scenario::write::Recording {
                name,
                pack_dirs,
                seed: self.seed,
                start,
                moves: &moves,
            },
        )
    }

    /// Back to the start, forgetting every move.
    pub fn reset(&mut self) {
        self.timeline.reset();
    }

    /// The evaluator's best moves for `seat` with `cards` (each card on each empty cell),
    /// best first: the change in the generic evaluation the move makes.
    #[must_use]
    pub fn hint(&self, seat: Seat, cards: &[CardId], k: usize) -> Vec<Rated> {
        let engine = self.table.brain();
        let base = self.base_for(seat);
        let now = ai::evaluate(&engine, &base, seat);
        let mut scratch = base.clone();
        let mut rated: Vec<Rated> = Vec::new();
        let cells: Vec<Cell> = base.board().empty_cells().collect();
        for &card in cards {
            for &cell in &cells {
                scratch.clone_from(&base);
                let mv = Sandbox::move_for(seat, card, cell);
                if engine.play_lookahead(&mut scratch, mv).is_ok() {
                    rated.push(Rated {
                        mv,
                        value: ai::evaluate(&engine, &scratch, seat) - now,
                        visits: 0,
                    });
                }
            }
        }
        rated.sort_by(|a, b| b.value.total_cmp(&a.value));
        rated.truncate(k);
        rated
    }
}

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
    hint: Option<(usize, Option<CardId>, Seat, Vec<Rated>)>,
    show_hint: bool,
    preview: Option<((Move, usize), Result<Preview, String>)>,
    selected_event: Option<(Moment, usize)>,
    message: Option<String>,
    /// The last "Replay with new rules", with the reload it was made after.
    replay: Option<(u64, ReplayReport)>,
    saving: SaveTo,
    save: Option<SaveForm>,
    /// The saved game being stepped through (its name, and a move refused now).
    watching: Option<(String, Option<String>)>,
    /// The position editor's tool and inputs.
    editor: Editor,
}

/// What a click on the board does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Tool {
    /// Play the picked card.
    Play,
    /// Put a token of the editor's type and value for the seat placing.
    Put,
    /// Take a token off.
    Remove,
}

/// The position editor's inputs.
#[derive(Clone, Debug)]
struct Editor {
    tool: Tool,
    kind: crate::rules::TokenTypeId,
    value: i32,
    scores: [i64; 2],
    banked: [u8; 2],
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
struct SaveForm {
    name: String,
    folder: String,
    /// The last save: the file and its check, or why it failed.
    outcome: Option<Result<(std::path::PathBuf, String), String>>,
}

impl SandboxScreen {
    /// A screen for `sandbox`.
    #[must_use]
    pub fn new(sandbox: Sandbox) -> SandboxScreen {
        let seat = sandbox.state().turn();
        SandboxScreen {
            sandbox,
            card: None,
            seat,
            search: String::new(),
            hint: None,
            show_hint: false,
            preview: None,
            selected_event: None,
            message: None,
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
        self.card = self.card.and_then(|c| map.card(c));
        self.hint = None;
        self.preview = None;
        self.replay = None;
        self.selected_event = None;
        Ok(())
    }

    /// Draw the screen, with the last live reload's outcome.
    pub fn show(&mut self, ui: &mut Ui, reload: &mut Option<super::ReloadStatus>) -> SandboxAction {
        let mut leave = false;
        let mut action = SandboxAction::Stay;
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
                let incomes = self.sandbox.engine().incomes(state).unwrap_or([0, 0]);
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

    /// The last reload: what it did, its errors (selectable, with a Copy button), what
    /// changed, and the replay under the new rules. The buttons sit on top, the rest
    /// scrolls with a visible bar.
    fn reload_panel(&mut self, ui: &mut Ui, status: &super::ReloadStatus) -> Option<SandboxAction> {
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

    fn open_save_form(&mut self) {
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

    fn save_window(&mut self, ui: &mut Ui) {
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
    fn save_scenario(
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

    /// The position editor: tools for the board, scores, banked turns and stacks; every
    /// change is a step of the timeline (undo takes it back).
    fn editor_panel(&mut self, ui: &mut Ui) {
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
        let stacks: Vec<Vec<CardId>> = state
            .seat(self.seat)
            .stacks()
            .iter()
            .map(|s| s.cards().collect())
            .collect();
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
    fn apply_edit(&mut self, edit: Edit) {
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
                self.hint = None;
            }
            Err(e) => self.message = Some(format!("refused: {e}")),
        }
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
                let text = format!("{} · {} · {}", def.meta.name, def.value, ability);
                let r = ui.selectable_label(self.card == Some(id), text);
                let r = r.on_hover_ui(|ui| cards::card_tooltip(ui, &catalog, id));
                if r.clicked() {
                    self.card = Some(id);
                }
            }
        });
    }

    fn board(&mut self, ui: &mut Ui) {
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
        let preview = self
            .preview
            .as_ref()
            .and_then(|(_, p)| p.as_ref().ok())
            .filter(|_| self.card.is_some());
        let overlay = Overlay {
            preview,
            hint: &hint_labels,
            highlight: if preview.is_some() { &[] } else { &highlight },
            targets: self.card.is_some(),
            every_cell: self.editor.tool != Tool::Play,
            refused: self.refused_preview(),
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
        } else if let Some((_, why)) = self.refused_preview() {
            ui.colored_label(theme::DANGER, format!("This move will be refused: {why}"));
        }
        if self.editor.tool != Tool::Play {
            self.preview = None;
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
            self.preview = None;
            return;
        };
        if let Some(cell) = input.hovered.filter(|c| board_state.get(*c).is_none()) {
            let mv = Sandbox::move_for(self.seat, card, cell);
            let key = (mv, self.sandbox.steps().len());
            if self.preview.as_ref().is_none_or(|(k, _)| *k != key) {
                self.preview = Some((key, self.sandbox.preview(mv)));
            }
        } else {
            self.preview = None;
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
    fn refused_preview(&self) -> Option<(Cell, &str)> {
        match &self.preview {
            Some(((mv, _), Err(why))) if self.card.is_some() => Some((mv.cell, why.as_str())),
            _ => None,
        }
    }

    fn current_hint(&mut self) -> Vec<Rated> {
        if !self.show_hint {
            return Vec::new();
        }
        let key_steps = self.sandbox.steps().len();
        let fresh = self
            .hint
            .as_ref()
            .is_some_and(|(n, c, s, _)| *n == key_steps && *c == self.card && *s == self.seat);
        if !fresh {
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
            let rated = self.sandbox.hint(self.seat, &cards, 5);
            self.hint = Some((key_steps, self.card, self.seat, rated));
        }
        self.hint.as_ref().map(|h| h.3.clone()).unwrap_or_default()
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
            for (rank, r) in self.current_hint().iter().enumerate() {
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

fn action_dismisses(action: &SandboxAction) -> bool {
    matches!(action, SandboxAction::Restart(_))
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
                        ui.small(e);
                    }
                });
                ui.vertical(|ui| {
                    ui.strong("now");
                    for e in &d.after {
                        ui.small(e);
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
