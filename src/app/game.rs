//! The game screen: seat panels, the board with the exact preview, the hand, the
//! history, the in-game menu, the deck viewer and the game-over panel.

use std::time::Duration;

use egui::{Align, Color32, Key, Layout, RichText, Sense, Stroke, StrokeKind, Ui, vec2};

use crate::rules::{Board, Cell, Move, Play, Seat};

use super::anim::{self, Animation};
use super::board::{self, Overlay};
use super::cards::{self, CardLook};
use super::hover::Previews;
use super::preview::Preview;
use super::session::{Connection, Controller, Session};
use super::{ClientSettings, theme};
use crate::rules::never;
use crate::timeline::Step;

/// What the game screen asks of the app.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GameAction {
    /// Stay.
    None,
    /// Back to the main menu.
    MainMenu,
    /// A new game with the same setup and a new seed.
    PlayAgain,
    /// Save the finished game as a replay (the app answers in `replay_saved`).
    SaveReplay,
}

/// The game screen's state.
pub struct GameScreen {
    /// The game.
    pub session: Session,
    selected: Option<u8>,
    /// The hovered move's preview, worked out on a worker.
    previews: Previews,
    animation: Option<Animation>,
    last_changed: Vec<Cell>,
    menu_open: bool,
    deck_open: bool,
    message: Option<String>,
    /// This frame's click skipped an animation: it plays nothing.
    click_spent: bool,
    /// Where the game's replay was saved, or why it was not.
    pub replay_saved: Option<Result<std::path::PathBuf, String>>,
}

impl GameScreen {
    /// A screen for `session`.
    #[must_use]
    pub fn new(session: Session) -> GameScreen {
        let last_changed = session
            .opening()
            .iter()
            .flat_map(Session::event_cells)
            .collect();
        let mut previews = Previews::default();
        previews.warm(session.catalog());
        GameScreen {
            session,
            selected: None,
            previews,
            animation: None,
            last_changed,
            menu_open: false,
            deck_open: false,
            message: None,
            click_spent: false,
            replay_saved: None,
        }
    }

    /// Show a problem above the board.
    pub fn set_message(&mut self, message: String) {
        self.message = Some(message);
    }

    /// The stack selected in the hand.
    #[must_use]
    pub fn selected(&self) -> Option<u8> {
        self.selected
    }

    /// The seat whose hand is shown: the one person in a game against the AI, the seat
    /// to move in hotseat.
    fn hand_seat(&self) -> Seat {
        let humans: Vec<Seat> = Seat::BOTH
            .into_iter()
            .filter(|&s| self.session.controller(s) == Controller::Human)
            .collect();
        match humans.as_slice() {
            [one] => *one,
            _ => self.session.state().turn(),
        }
    }

    /// Draw the screen and handle its input.
    pub fn show(&mut self, ui: &mut Ui, settings: &ClientSettings) -> GameAction {
        let mut action = GameAction::None;
        self.previews.poll();
        // Frames go on while the worker answers; the answer shows in the first after.
        self.previews.keep_frames_coming(ui.ctx());
        self.drive_ai(ui, settings);
        self.keys(ui);
        if self.animation.as_ref().is_some_and(Animation::done) {
            self.animation = None;
        }
        if self.animation.is_some() {
            ui.ctx().request_repaint();
        }
        egui::Panel::top("seats").show(ui, |ui| {
            if self.top_bar(ui) {
                self.menu_open = true;
            }
        });
        egui::Panel::bottom("hand")
            .resizable(false)
            .show(ui, |ui| self.hand(ui));
        egui::Panel::right("history")
            .resizable(false)
            .exact_size(260.0)
            .show(ui, |ui| self.history(ui));
        egui::CentralPanel::default_margins().show(ui, |ui| self.board(ui, settings));
        if self.deck_open {
            self.deck_window(ui);
        }
        if self.menu_open {
            action = self.menu_window(ui);
        }
        if self.session.is_over() && self.animation.is_none() && !self.menu_open {
            action = self.game_over_window(ui);
        }
        action
    }

    fn drive_ai(&mut self, ui: &Ui, settings: &ClientSettings) {
        if self.session.is_remote() && !self.session.is_over() {
            // The host may speak at any moment.
            ui.ctx().request_repaint_after(Duration::from_millis(50));
        }
        if self.animation.is_some() {
            return;
        }
        let before: Board = self.session.state().board().clone();
        match self.session.poll_ai(settings.ai) {
            Ok(Some(played)) => {
                let played = played.clone();
                self.after_move(&before, &played, settings);
            }
            Ok(None) => {}
            Err(e) => self.message = Some(e.to_string()),
        }
        if let Some(wait) = self.session.ai_wait(settings.ai) {
            ui.ctx().request_repaint_after(
                wait.clamp(Duration::from_millis(16), Duration::from_millis(100)),
            );
        }
    }

    fn after_move(&mut self, before: &Board, played: &Step, settings: &ClientSettings) {
        self.last_changed = played
            .events
            .iter()
            .flat_map(Session::event_cells)
            .collect();
        self.previews.clear();
        if settings.animations {
            self.animation = Some(Animation::new(
                before,
                &played.events,
                Duration::from_millis(settings.animation_step_ms),
            ));
        }
        // Each move starts with a fresh choice (in hotseat the hand changes hands).
        self.selected = None;
    }

    fn keys(&mut self, ui: &Ui) {
        let (digits, esc, space) = ui.input(|i| {
            let digits = [
                Key::Num1,
                Key::Num2,
                Key::Num3,
                Key::Num4,
                Key::Num5,
                Key::Num6,
            ]
            .iter()
            .position(|&k| i.key_pressed(k));
            (
                digits,
                i.key_pressed(Key::Escape),
                i.key_pressed(Key::Space),
            )
        });
        if let Some(d) = digits
            && self.session.human_to_move()
        {
            let stacks = self.session.state().seat(self.hand_seat()).stacks();
            if stacks.get(d).is_some_and(|s| !s.is_empty()) {
                self.selected = u8::try_from(d).ok();
            }
        }
        let click = ui.input(|i| i.pointer.any_click());
        self.click_spent = false;
        if self.animation.is_some() && (space || click) {
            self.animation = None;
            self.click_spent = click;
        }
        if esc {
            if self.animation.is_some() {
                self.animation = None;
            } else {
                self.menu_open = !self.menu_open;
            }
        }
    }

    /// The seat panels; returns whether the menu was asked for.
    fn top_bar(&mut self, ui: &mut Ui) -> bool {
        let mut menu = false;
        // Read on the worker (income hooks may take a move's time limit).
        let incomes = self
            .previews
            .incomes(self.session.catalog(), self.session.state())
            .unwrap_or([0, 0]);
        let delta = self
            .previews
            .shown()
            .and_then(|(_, p)| p.as_ref().ok())
            .map(Preview::income_delta);
        ui.add_space(4.0);
        ui.horizontal(|ui| {
            for seat in Seat::BOTH {
                self.seat_panel(
                    ui,
                    seat,
                    incomes[seat.index()],
                    delta.map(|d| d[seat.index()]),
                );
                ui.add_space(8.0);
            }
            ui.with_layout(Layout::right_to_left(Align::Center), |ui| {
                if ui.button("Menu (Esc)").clicked() {
                    menu = true;
                }
                if ui
                    .button("Deck")
                    .on_hover_text("Your stacks, in their current order")
                    .clicked()
                {
                    self.deck_open = !self.deck_open;
                }
                let connection = self.session.connection().cloned();
                let status = if self.session.is_over() {
                    "Game over".to_string()
                } else if let Some(c) = connection.as_ref().filter(|c| **c != Connection::Connected)
                {
                    match c {
                        Connection::OpponentAway => {
                            "Opponent disconnected: waiting for them".to_string()
                        }
                        Connection::Reconnecting(_) => "Connection lost: reconnecting…".to_string(),
                        Connection::Closed(why) => format!("Disconnected: {why}"),
                        Connection::Connected => String::new(),
                    }
                } else if self.session.ai_thinking() {
                    format!(
                        "{} is thinking…",
                        theme::seat_name(self.session.state().turn())
                    )
                } else {
                    format!("{} to move", theme::seat_name(self.session.state().turn()))
                };
                ui.label(RichText::new(status).size(16.0));
                if let Some(c) = &connection {
                    let (dot, colour, tip) = match c {
                        Connection::Connected => ("●", theme::GOOD, "Connected to the host"),
                        Connection::OpponentAway => ("●", Color32::YELLOW, "The opponent dropped"),
                        Connection::Reconnecting(_) => ("●", Color32::YELLOW, "Reconnecting"),
                        Connection::Closed(_) => ("●", theme::DANGER, "Disconnected"),
                    };
                    ui.label(RichText::new(dot).color(colour).size(16.0))
                        .on_hover_text(tip);
                }
            });
        });
        ui.add_space(4.0);
        menu
    }

    fn seat_panel(&self, ui: &mut Ui, seat: Seat, income: i64, delta: Option<i64>) {
        let state = self.session.state();
        let to_move = state.turn() == seat && !self.session.is_over();
        let colour = theme::seat_color(seat);
        let frame = egui::Frame::new()
            .fill(if to_move {
                colour.gamma_multiply(0.35)
            } else {
                Color32::from_gray(32)
            })
            .stroke(Stroke::new(if to_move { 2.5 } else { 1.0 }, colour))
            .corner_radius(8.0)
            .inner_margin(egui::Margin::symmetric(12, if to_move { 10 } else { 5 }));
        let who = match self.session.controller(seat) {
            Controller::Human => "Player".to_string(),
            Controller::Ai(level) => format!("AI ({})", level.name()),
            Controller::Remote => "Remote player".to_string(),
        };
        let limit = self.session.catalog().rules().score_limit;
        let seat_state = state.seat(seat);
        let response = frame.show(ui, |ui| {
            ui.set_min_width(230.0);
            ui.horizontal(|ui| {
                ui.label(
                    RichText::new(theme::seat_name(seat))
                        .strong()
                        .color(colour)
                        .size(17.0),
                );
                ui.label(RichText::new(who).weak());
                if to_move {
                    ui.label(RichText::new("▶ to move").color(theme::PREVIEW));
                }
            });
            ui.horizontal(|ui| {
                ui.label(
                    RichText::new(format!("{}", state.score(seat)))
                        .size(24.0)
                        .strong(),
                );
                ui.label(RichText::new(format!("/ {limit}")).weak());
                let income_text = match delta {
                    Some(d) if d != 0 => format!("income {income} → {} ({d:+})", income + d),
                    _ => format!("income {income}"),
                };
                let col = match delta {
                    Some(d) if d > 0 => Color32::from_rgb(120, 220, 120),
                    Some(d) if d < 0 => theme::DANGER,
                    _ => Color32::from_gray(200),
                };
                ui.label(RichText::new(income_text).color(col));
            });
            if seat_state.extra_turns > 0 || seat_state.bonus != 0 {
                ui.horizontal(|ui| {
                    if seat_state.extra_turns > 0 {
                        ui.label(
                            RichText::new(format!(
                                "{} extra turn(s) banked",
                                seat_state.extra_turns
                            ))
                            .color(theme::PREVIEW),
                        );
                    }
                    if seat_state.bonus != 0 {
                        ui.label(format!("next token {:+}", seat_state.bonus));
                    }
                });
            }
        });
        response.response.widget_info(|| {
            egui::WidgetInfo::labeled(
                egui::Role::Label,
                true,
                format!(
                    "{} score {} income {}{}",
                    theme::seat_name(seat),
                    state.score(seat),
                    income,
                    if to_move { " to move" } else { "" }
                ),
            )
        });
    }

    fn hand(&mut self, ui: &mut Ui) {
        let seat = self.hand_seat();
        let state = self.session.state();
        let can_play = self.session.human_to_move() && state.turn() == seat;
        ui.add_space(6.0);
        ui.horizontal(|ui| {
            ui.vertical(|ui| {
                ui.label(RichText::new(format!("{}'s hand", theme::seat_name(seat))).strong());
                ui.label(RichText::new("Keys 1–4 or click a card,\nthen an empty cell.").weak());
            });
            let catalog = self.session.catalog().clone();
            let mut clicked = None;
            for (i, stack) in state.seat(seat).stacks().iter().enumerate() {
                let Some(top) = stack.top() else {
                    continue;
                };
                let key = (i + 1).to_string();
                let stack_index = u8::try_from(i)
                    .unwrap_or_else(|_| never!(u8::MAX, "stack {i}, past MAX_STACKS"));
                let look = CardLook {
                    key: Some(&key),
                    stack_len: Some(stack.len()),
                    selected: self.selected == Some(stack_index),
                    enabled: can_play,
                    label: format!(
                        "{} ({} token)",
                        cards::hand_label(&catalog, i, top, stack.len()),
                        theme::seat_name(seat)
                    ),
                    seat,
                };
                if cards::card(ui, &catalog, top, &look).clicked() && can_play {
                    clicked = Some(stack_index);
                }
            }
            if let Some(c) = clicked {
                self.selected = if self.selected == Some(c) {
                    None
                } else {
                    Some(c)
                };
            }
            let other = seat.other();
            if self.session.controller(other) != Controller::Human {
                ui.separator();
                ui.vertical(|ui| {
                    ui.label(RichText::new(format!("{}'s stacks", theme::seat_name(other))).weak());
                    for (i, s) in state.seat(other).stacks().iter().enumerate() {
                        ui.label(
                            RichText::new(format!("stack {}: {} cards", i + 1, s.len())).weak(),
                        );
                    }
                });
            }
        });
        ui.add_space(6.0);
    }

    fn board(&mut self, ui: &mut Ui, settings: &ClientSettings) {
        if let Some(m) = &self.message {
            ui.colored_label(theme::DANGER, m);
        }
        let catalog = self.session.catalog().clone();
        let state_board = self.session.state().board().clone();
        let pieces = match &self.animation {
            Some(a) => a.pieces(),
            None => anim::pieces(&state_board),
        };
        let can_play = self.session.human_to_move() && self.animation.is_none();
        let shown = self.previews.shown();
        let preview = if can_play {
            shown
                .and_then(|(_, p)| p.as_ref().ok())
                .filter(|_| self.selected.is_some())
        } else {
            None
        };
        let refused = match shown {
            Some((mv, Err(why))) if can_play && self.selected.is_some() => {
                Some((mv.cell, why.to_string()))
            }
            _ => None,
        };
        let highlight: Vec<Cell> = match &self.animation {
            Some(a) => a.focus(),
            None if preview.is_none() => self.last_changed.clone(),
            None => Vec::new(),
        };
        let overlay = Overlay {
            preview,
            hint: &[],
            highlight: &highlight,
            targets: can_play && self.selected.is_some(),
            every_cell: false,
            refused: refused.as_ref().map(|(c, why)| (*c, why.as_str())),
        };
        // The board leaves a line below it to say why a hovered move would be refused.
        let line = ui.text_style_height(&egui::TextStyle::Body);
        let room = egui::vec2(
            ui.available_width(),
            (ui.available_height() - 1.5 * line).max(0.0),
        );
        let input = ui
            .allocate_ui_with_layout(room, Layout::top_down(Align::Center), |ui| {
                board::show(ui, &catalog, &state_board, &pieces, &overlay)
            })
            .inner;
        if let Some((_, why)) = &refused {
            ui.vertical_centered(|ui| {
                ui.colored_label(theme::DANGER, format!("This move will be refused: {why}"));
            });
        } else if can_play && self.selected.is_some() {
            working_line(ui, self.previews.pending());
        }
        if !can_play {
            return;
        }
        let Some(stack) = self.selected else {
            self.previews.clear();
            return;
        };
        if let Some(cell) = input.hovered.filter(|c| state_board.get(*c).is_none()) {
            let mv = self.session.move_of(stack, cell);
            self.previews
                .ask(self.session.catalog(), self.session.state(), mv);
        } else {
            self.previews.clear();
        }
        if let Some(cell) = input.clicked.filter(|_| !self.click_spent) {
            let mv = Move {
                seat: self.session.state().turn(),
                play: Play::Stack(stack),
                cell,
            };
            let before = state_board;
            match self.session.submit(mv) {
                Ok(Some(played)) => {
                    self.message = None;
                    self.after_move(&before, &played, settings);
                }
                // Sent to the host: the move shows when it has played it.
                Ok(None) => self.message = None,
                Err(e) => self.message = Some(e.to_string()),
            }
        }
    }

    fn history(&mut self, ui: &mut Ui) {
        ui.add_space(6.0);
        ui.heading("History");
        let catalog = self.session.catalog().clone();
        let played = self.session.played();
        if played.is_empty() {
            ui.weak("No moves yet.");
        }
        let mut hovered = None;
        egui::ScrollArea::vertical()
            .stick_to_bottom(true)
            .show(ui, |ui| {
                for (i, p) in played.iter().enumerate().rev().take(12).rev() {
                    // A game's steps are all moves (only the sandbox edits).
                    let Some((mv, card)) = p.played() else {
                        continue;
                    };
                    let def = catalog.card(card);
                    let text = format!(
                        "{}. {} · {} · {}",
                        i + 1,
                        theme::seat_name(mv.seat),
                        def.meta.name,
                        mv.cell
                    );
                    let r = ui.add(
                        egui::Label::new(RichText::new(text).color(theme::seat_color(mv.seat)))
                            .sense(Sense::hover()),
                    );
                    let r = r.on_hover_ui(|ui| {
                        cards::card_tooltip(ui, &catalog, card);
                        ui.separator();
                        for e in &p.events {
                            ui.small(crate::rules::describe::event(&catalog, e));
                        }
                    });
                    if r.hovered() {
                        hovered = Some(i);
                    }
                }
            });
        if let Some(i) = hovered {
            self.last_changed = played[i]
                .events
                .iter()
                .flat_map(Session::event_cells)
                .collect();
        } else if let Some(p) = played.last() {
            self.last_changed = p.events.iter().flat_map(Session::event_cells).collect();
        }
        ui.separator();
        score_graph(ui, &self.session.score_trail(), 90.0);
    }

    fn deck_window(&mut self, ui: &mut Ui) {
        let seat = self.hand_seat();
        let catalog = self.session.catalog().clone();
        let mut open = self.deck_open;
        let name = &self.session.setup.decks[seat.index()].name;
        egui::Window::new(format!("{}'s deck: {name}", theme::seat_name(seat)))
            .open(&mut open)
            .resizable(false)
            .show(ui.ctx(), |ui| {
                ui.weak("Top card first: the top is in your hand, played cards go to the bottom.");
                ui.horizontal_top(|ui| {
                    for (i, stack) in self.session.state().seat(seat).stacks().iter().enumerate() {
                        ui.vertical(|ui| {
                            ui.strong(format!("Stack {}", i + 1));
                            for (k, card) in stack.cards().enumerate() {
                                let def = catalog.card(card);
                                let text = if k == 0 {
                                    RichText::new(&def.meta.name).strong()
                                } else {
                                    RichText::new(&def.meta.name)
                                };
                                ui.label(text)
                                    .on_hover_ui(|ui| cards::card_tooltip(ui, &catalog, card));
                            }
                        });
                        ui.add_space(10.0);
                    }
                });
            });
        self.deck_open = open;
    }

    fn menu_window(&mut self, ui: &mut Ui) -> GameAction {
        let mut action = GameAction::None;
        egui::Modal::new(egui::Id::unique("game-menu")).show(ui.ctx(), |ui| {
            ui.set_width(240.0);
            ui.heading("Paused");
            ui.add_space(8.0);
            if ui.button("Resume").clicked() {
                self.menu_open = false;
            }
            let human = self.hand_seat();
            if !self.session.is_over()
                && self.session.controller(human) == Controller::Human
                && ui.button("Concede").clicked()
            {
                self.session.concede(human);
                self.menu_open = false;
            }
            if ui.button("Main menu").clicked() {
                action = GameAction::MainMenu;
            }
        });
        action
    }

    fn game_over_window(&mut self, ui: &mut Ui) -> GameAction {
        let mut action = GameAction::None;
        let state = self.session.state();
        let title = match (self.session.winner(), self.session.conceded()) {
            (Some(w), Some(_)) => format!(
                "{} wins: {} conceded",
                theme::seat_name(w),
                theme::seat_name(w.other())
            ),
            (Some(w), None) => format!("{} wins", theme::seat_name(w)),
            (None, _) => "A draw".to_string(),
        };
        egui::Window::new("Game over")
            .collapsible(false)
            .resizable(false)
            .anchor(egui::Align2::CENTER_CENTER, vec2(0.0, 0.0))
            .show(ui.ctx(), |ui| {
                ui.set_width(360.0);
                ui.heading(RichText::new(&title).size(22.0));
                ui.label(format!(
                    "{} {} – {} {} after {} moves",
                    theme::seat_name(Seat::One),
                    state.score(Seat::One),
                    state.score(Seat::Two),
                    theme::seat_name(Seat::Two),
                    self.session.played().len()
                ));
                ui.add_space(6.0);
                score_graph(ui, &self.session.score_trail(), 140.0);
                ui.add_space(6.0);
                ui.horizontal(|ui| {
                    if !self.session.is_remote() && ui.button("Play again").clicked() {
                        action = GameAction::PlayAgain;
                    }
                    // The button stays where it is once the replay is saved (the
                    // buttons beside it do not move under the pointer).
                    let saved = matches!(self.replay_saved, Some(Ok(_)));
                    if !self.session.is_remote()
                        && ui
                            .add_enabled(
                                !saved,
                                egui::Button::new(if saved { "Saved" } else { "Save replay" }),
                            )
                            .on_hover_text(
                                "Keep this game in the profile to watch it again or check it \
                                 against changed content (tokensmith replay FILE)",
                            )
                            .clicked()
                    {
                        action = GameAction::SaveReplay;
                    }
                    if ui.button("Main menu").clicked() {
                        action = GameAction::MainMenu;
                    }
                });
                match &self.replay_saved {
                    Some(Ok(path)) => {
                        ui.label(
                            RichText::new(format!("Replay saved: {}", crate::fsutil::shown(path)))
                                .color(theme::GOOD),
                        );
                    }
                    Some(Err(e)) => {
                        ui.colored_label(theme::DANGER, e);
                    }
                    // The line is kept, empty, so the panel does not grow when it fills.
                    None => {
                        ui.label(" ");
                    }
                }
            });
        action
    }
}

/// How long a preview may take before the line under the board says it is being worked
/// out (quicker ones show without a word, and without a flicker).
pub const WORKING_AFTER: Duration = Duration::from_millis(150);

/// The line under the board while the hovered move's preview is worked out for longer
/// than [`WORKING_AFTER`].
pub fn working_line(ui: &mut Ui, pending: Option<Duration>) {
    if pending.is_some_and(|p| p >= WORKING_AFTER) {
        ui.vertical_centered(|ui| ui.weak("Working out this move…"));
    }
}

/// Both seats' scores over the game, as two lines.
pub fn score_graph(ui: &mut Ui, trail: &[[i64; 2]], height: f32) {
    let width = ui.available_width().max(120.0);
    let (rect, response) = ui.allocate_exact_size(vec2(width, height), Sense::hover());
    response.widget_info(|| {
        let last = trail.last().copied().unwrap_or([0, 0]);
        egui::WidgetInfo::labeled(
            egui::Role::Image,
            true,
            format!(
                "score graph: {} moves, {} to {}",
                trail.len() - 1,
                last[0],
                last[1]
            ),
        )
    });
    let painter = ui.painter_at(rect);
    painter.rect_filled(rect, 4.0, Color32::from_gray(24));
    painter.rect_stroke(
        rect,
        4.0,
        Stroke::new(1.0, Color32::from_gray(60)),
        StrokeKind::Inside,
    );
    let top = trail
        .iter()
        .flat_map(|s| s.iter().copied())
        .max()
        .unwrap_or(0)
        .max(1);
    let top = theme::px(top);
    let n = theme::px_len(trail.len().max(2) - 1);
    let inner = rect.shrink(6.0);
    for seat in Seat::BOTH {
        let points: Vec<egui::Pos2> = trail
            .iter()
            .enumerate()
            .map(|(i, s)| {
                egui::pos2(
                    inner.left() + inner.width() * theme::px_len(i) / n,
                    inner.bottom() - inner.height() * theme::px(s[seat.index()]) / top,
                )
            })
            .collect();
        painter.add(egui::Shape::line(
            points,
            Stroke::new(2.0, theme::seat_color(seat)),
        ));
    }
}
