//! The main menu (with the loaded packs and their diagnostics) and the new-game screen.

use egui::{Align, Color32, Layout, RichText, Ui, vec2};

use crate::ai::Level;
use crate::rules::{DeckId, Seat};

use super::session::{Controller, Setup};
use super::{Library, theme};

/// A main-menu choice.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MenuChoice {
    /// A game against the AI.
    PlayAi,
    /// Two people at one screen.
    Hotseat,
    /// The sandbox.
    Sandbox,
    /// The content browser.
    Cards,
    /// The settings window.
    Settings,
    /// Leave.
    Quit,
}

/// A seed from the clock, for games without one.
#[must_use]
pub fn fresh_seed() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(1, |d| d.as_nanos() as u64)
}

/// Draw the main menu; the choice made this frame.
pub fn main_menu(
    ui: &mut Ui,
    library: &Library,
    error: Option<&str>,
    live: Option<&str>,
) -> Option<MenuChoice> {
    let mut choice = None;
    egui::CentralPanel::default_margins().show(ui, |ui| {
        ui.with_layout(Layout::top_down(Align::Center), |ui| {
            ui.add_space(40.0);
            ui.label(RichText::new("Tokensmith").size(44.0).strong());
            ui.label(RichText::new("a token-placement duel").size(16.0).weak());
            ui.add_space(24.0);
            let ready = library.catalog.is_some();
            let why = "The packs have errors: fix them (listed below); with live reload on, saving the fix is enough.";
            let big = |text: &str| {
                egui::Button::new(RichText::new(text).size(20.0)).min_size(vec2(240.0, 40.0))
            };
            for (text, c, needs) in [
                ("Play vs AI", MenuChoice::PlayAi, true),
                ("Hotseat", MenuChoice::Hotseat, true),
                ("Sandbox", MenuChoice::Sandbox, true),
                ("Cards", MenuChoice::Cards, true),
                ("Settings", MenuChoice::Settings, false),
                ("Quit", MenuChoice::Quit, false),
            ] {
                let enabled = ready || !needs;
                let r = ui.add_enabled(enabled, big(text));
                let r = if enabled {
                    r
                } else {
                    r.on_disabled_hover_text(why)
                };
                if r.clicked() {
                    choice = Some(c);
                }
                ui.add_space(6.0);
            }
            if let Some(e) = error {
                ui.colored_label(theme::DANGER, e);
            }
            ui.add_space(16.0);
            packs(ui, library);
            if let Some(live) = live {
                ui.add_space(6.0);
                ui.weak(live);
            }
        });
    });
    choice
}

/// The loaded packs and the diagnostics of the load.
fn packs(ui: &mut Ui, library: &Library) {
    let errors = library.errors();
    let warnings = library.diagnostics.len() - errors;
    let summary = format!(
        "{} pack(s) · {} error(s) · {} warning(s)",
        library.packs.len(),
        errors,
        warnings
    );
    let colour = if errors > 0 {
        theme::DANGER
    } else if warnings > 0 {
        theme::PREVIEW
    } else {
        Color32::from_rgb(120, 220, 120)
    };
    ui.label(RichText::new(summary).color(colour).strong());
    egui::Frame::new()
        .fill(Color32::from_gray(30))
        .corner_radius(6.0)
        .inner_margin(10.0)
        .show(ui, |ui| {
            ui.set_max_width(720.0);
            for p in &library.packs {
                ui.label(format!("{} {} — {}", p.id, p.version, p.name));
            }
            if !library.diagnostics.is_empty() {
                ui.separator();
                egui::ScrollArea::vertical()
                    .max_height(180.0)
                    .show(ui, |ui| {
                        for d in &library.diagnostics {
                            let c = if d.is_error() {
                                theme::DANGER
                            } else {
                                theme::PREVIEW
                            };
                            ui.label(RichText::new(d.to_string()).monospace().color(c));
                        }
                    });
            }
        });
}

/// What the new-game screen asks for.
pub enum NewGameAction {
    /// Stay on it.
    Stay,
    /// Back to the menu.
    Back,
    /// Start this game.
    Start(Setup),
}

/// The new-game screen's choices.
pub struct NewGame {
    vs_ai: bool,
    decks: [usize; 2],
    level: Level,
    human_seat: Seat,
    seed: String,
    problem: Option<String>,
}

impl NewGame {
    /// Choices for a game against the AI (`vs_ai`) or hotseat.
    #[must_use]
    pub fn new(library: &Library, vs_ai: bool) -> NewGame {
        let n = library.catalog.as_ref().map_or(0, |c| c.decks.len());
        NewGame {
            vs_ai,
            decks: [0, usize::from(n > 1)],
            level: Level::Normal,
            human_seat: Seat::One,
            seed: String::new(),
            problem: None,
        }
    }

    /// Show why the game could not start.
    pub fn set_problem(&mut self, problem: String) {
        self.problem = Some(problem);
    }

    /// Draw the screen.
    pub fn show(&mut self, ui: &mut Ui, library: &Library) -> NewGameAction {
        let mut action = NewGameAction::Stay;
        let Some(catalog) = library.catalog.as_ref() else {
            return NewGameAction::Back;
        };
        egui::CentralPanel::default_margins().show(ui, |ui| {
            ui.with_layout(Layout::top_down(Align::Center), |ui| {
                ui.add_space(30.0);
                let title = if self.vs_ai { "Play vs AI" } else { "Hotseat" };
                ui.label(RichText::new(title).size(30.0).strong());
                ui.add_space(16.0);
                ui.horizontal(|ui| {
                    ui.add_space(((ui.available_width() - 420.0) / 2.0).max(0.0));
                    egui::Grid::new("new-game")
                        .num_columns(2)
                        .spacing([16.0, 10.0])
                        .show(ui, |ui| {
                            for seat in Seat::BOTH {
                                let who = if self.vs_ai {
                                    if seat == self.human_seat {
                                        " (you)"
                                    } else {
                                        " (AI)"
                                    }
                                } else {
                                    ""
                                };
                                let label = ui.label(
                                    RichText::new(format!(
                                        "{}'s deck{who}",
                                        theme::seat_name(seat)
                                    ))
                                    .color(theme::seat_color(seat)),
                                );
                                let current = &mut self.decks[seat.index()];
                                egui::ComboBox::from_id_salt(("deck", seat.index()))
                                    .width(260.0)
                                    .selected_text(
                                        catalog
                                            .decks
                                            .get(*current)
                                            .map_or("—", |d| d.meta.name.as_str()),
                                    )
                                    .show_ui(ui, |ui| {
                                        for (i, d) in catalog.decks.iter().enumerate() {
                                            ui.selectable_value(current, i, &d.meta.name)
                                                .on_hover_text(format!(
                                                    "{}\n{}",
                                                    d.meta.description,
                                                    d.meta.key()
                                                ));
                                        }
                                    })
                                    .response
                                    .labelled_by(label.id);
                                ui.end_row();
                            }
                            if self.vs_ai {
                                ui.label("You play");
                                ui.horizontal(|ui| {
                                    for seat in Seat::BOTH {
                                        let text = if seat == Seat::One {
                                            format!("{} (moves first)", theme::seat_name(seat))
                                        } else {
                                            theme::seat_name(seat).to_string()
                                        };
                                        ui.selectable_value(&mut self.human_seat, seat, text);
                                    }
                                });
                                ui.end_row();
                                let label = ui.label("AI level");
                                egui::ComboBox::from_id_salt("level")
                                    .selected_text(self.level.name())
                                    .show_ui(ui, |ui| {
                                        for level in Level::ALL {
                                            ui.selectable_value(
                                                &mut self.level,
                                                level,
                                                level.name(),
                                            );
                                        }
                                    })
                                    .response
                                    .labelled_by(label.id);
                                ui.end_row();
                            }
                            let label = ui.label("Seed (optional)");
                            ui.add(
                                egui::TextEdit::singleline(&mut self.seed)
                                    .hint_text("random")
                                    .desired_width(260.0),
                            )
                            .labelled_by(label.id);
                            ui.end_row();
                        });
                });
                ui.add_space(16.0);
                if let Some(p) = &self.problem {
                    ui.colored_label(theme::DANGER, p);
                }
                ui.horizontal(|ui| {
                    ui.add_space(((ui.available_width() - 140.0) / 2.0).max(0.0));
                    if ui.button(RichText::new("Back").size(18.0)).clicked() {
                        action = NewGameAction::Back;
                    }
                    if ui.button(RichText::new("Start").size(18.0)).clicked() {
                        match self.setup() {
                            Ok(s) => action = NewGameAction::Start(s),
                            Err(e) => self.problem = Some(e),
                        }
                    }
                });
            });
        });
        action
    }

    fn setup(&self) -> Result<Setup, String> {
        let seed = match self.seed.trim() {
            "" => fresh_seed(),
            s => s.parse::<u64>().map_err(|_| {
                format!(
                    "the seed '{s}' is not a whole number from 0 to {}",
                    u64::MAX
                )
            })?,
        };
        let controllers = Seat::BOTH.map(|seat| {
            if self.vs_ai && seat != self.human_seat {
                Controller::Ai(self.level)
            } else {
                Controller::Human
            }
        });
        Ok(Setup {
            decks: self.decks.map(|d| DeckId(u16::try_from(d).unwrap_or(0))),
            controllers,
            seed,
        })
    }
}
