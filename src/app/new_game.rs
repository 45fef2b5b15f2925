//! The new-game screen: each seat's deck (a ready deck of the loaded packs, a saved deck,
//! random from the saved decks, or random content, as docs/rules.md's "Random decks" says),
//! which seat the person plays, the AI's level and an optional seed.

use std::sync::Arc;

use egui::{Align, Layout, RichText, Ui};

use crate::ai::Level;
use crate::profile::SavedDeck;
use crate::rules::{Catalog, DeckId, Seat};

use super::decks::draft::{self, Cards};
use super::menu::fresh_seed;
use super::session::{Controller, SeatDeck, Setup};
use super::{Library, theme};

/// Where a seat's deck comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DeckPick {
    /// A ready deck of the loaded packs, by index.
    Shipped(usize),
    /// A saved deck, by id.
    Saved(String),
    /// One of the saved decks that can be played, uniformly, drawn when the game starts.
    RandomSaved,
    /// Random content, drawn when the game starts.
    RandomContent,
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

/// A saved deck as the screen offers it: playable, or why not.
struct Offer<'a> {
    deck: &'a SavedDeck,
    problem: Option<String>,
}

/// The new-game screen's choices.
pub struct NewGame {
    vs_ai: bool,
    picks: [DeckPick; 2],
    level: Level,
    human_seat: Seat,
    seed: String,
    problem: Option<String>,
    /// The saved decks, as read when the screen opened.
    saved: Vec<SavedDeck>,
    /// The loaded cards by the names decks use.
    index: draft::IndexCache,
}

impl NewGame {
    /// Choices for a game against the AI (`vs_ai`) or hotseat. Seat 1 (where the person
    /// starts) gets the default deck when it is saved and can be played; choosing the
    /// other seat takes the deck along.
    #[must_use]
    pub fn new(
        library: &Library,
        vs_ai: bool,
        saved: Vec<SavedDeck>,
        default_deck: Option<&str>,
    ) -> NewGame {
        let n = library.catalog.as_ref().map_or(0, |c| c.decks().len());
        let mut index = draft::IndexCache::default();
        let default = library.catalog.as_ref().and_then(|catalog| {
            let id = default_deck?;
            let deck = saved.iter().find(|d| d.id == id)?;
            draft::problems(deck, &Cards::new(catalog, index.get(catalog)))
                .is_empty()
                .then(|| DeckPick::Saved(id.to_string()))
        });
        NewGame {
            vs_ai,
            picks: [
                default.unwrap_or(DeckPick::Shipped(0)),
                DeckPick::Shipped(usize::from(n > 1)),
            ],
            level: Level::Normal,
            human_seat: Seat::One,
            seed: String::new(),
            problem: None,
            saved,
            index,
        }
    }

    /// Show why the game could not start.
    pub fn set_problem(&mut self, problem: String) {
        self.problem = Some(problem);
    }

    /// What a seat's deck is now.
    #[must_use]
    pub fn pick(&self, seat: Seat) -> &DeckPick {
        &self.picks[seat.index()]
    }

    /// Draw the screen.
    pub fn show(&mut self, ui: &mut Ui, library: &Library) -> NewGameAction {
        let mut action = NewGameAction::Stay;
        let Some(catalog) = library.catalog.as_ref() else {
            return NewGameAction::Back;
        };
        let saved = std::mem::take(&mut self.saved);
        let cards = Cards::new(catalog, self.index.get(catalog));
        let offers: Vec<Offer<'_>> = saved
            .iter()
            .map(|deck| Offer {
                deck,
                problem: draft::problems(deck, &cards).into_iter().next(),
            })
            .collect();
        egui::CentralPanel::default_margins().show(ui, |ui| {
            ui.with_layout(Layout::top_down(Align::Center), |ui| {
                ui.add_space(30.0);
                let title = if self.vs_ai { "Play vs AI" } else { "Hotseat" };
                ui.label(RichText::new(title).size(30.0).strong());
                ui.add_space(16.0);
                ui.horizontal(|ui| {
                    ui.add_space(((ui.available_width() - 460.0) / 2.0).max(0.0));
                    egui::Grid::new("new-game")
                        .num_columns(2)
                        .spacing([16.0, 10.0])
                        .show(ui, |ui| self.form(ui, catalog, &offers));
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
                        match self.setup(catalog, &offers) {
                            Ok(s) => action = NewGameAction::Start(s),
                            Err(e) => self.problem = Some(e),
                        }
                    }
                });
            });
        });
        drop(offers);
        self.saved = saved;
        action
    }

    fn form(&mut self, ui: &mut Ui, catalog: &Catalog, offers: &[Offer<'_>]) {
        for seat in Seat::BOTH {
            let who = match (self.vs_ai, seat == self.human_seat) {
                (false, _) => "",
                (true, true) => " (you)",
                (true, false) => " (AI)",
            };
            let label = ui.label(
                RichText::new(format!("{}'s deck{who}", theme::seat_name(seat)))
                    .color(theme::seat_color(seat)),
            );
            let current = &mut self.picks[seat.index()];
            egui::ComboBox::from_id_salt(("deck", seat.index()))
                .width(300.0)
                .height(560.0)
                .selected_text(pick_name(current, catalog, offers))
                .show_ui(ui, |ui| deck_menu(ui, current, catalog, offers))
                .response
                .labelled_by(label.id);
            ui.end_row();
        }
        if self.vs_ai {
            let was = self.human_seat;
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
            if self.human_seat != was {
                // Your deck goes with you to the other seat.
                self.picks.swap(0, 1);
            }
            ui.end_row();
            let label = ui.label("AI level");
            egui::ComboBox::from_id_salt("level")
                .selected_text(self.level.name())
                .show_ui(ui, |ui| {
                    for level in Level::ALL {
                        ui.selectable_value(&mut self.level, level, level.name());
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
                .desired_width(300.0),
        )
        .labelled_by(label.id);
        ui.end_row();
    }

    fn setup(&self, catalog: &Arc<Catalog>, offers: &[Offer<'_>]) -> Result<Setup, String> {
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
        let one = seat_deck(&self.picks[0], catalog, offers, draw_seed(seed, Seat::One))?;
        let two = seat_deck(&self.picks[1], catalog, offers, draw_seed(seed, Seat::Two))?;
        Ok(Setup {
            decks: [one, two],
            controllers,
            seed,
        })
    }
}

/// The seed a seat's random deck is drawn with: the game's seed decides both decks.
fn draw_seed(seed: u64, seat: Seat) -> u64 {
    seed.wrapping_mul(0x9E37_79B9_7F4A_7C15)
        .wrapping_add(seat.index() as u64 + 1)
}

/// What a pick is called in the deck list.
fn pick_name(pick: &DeckPick, catalog: &Catalog, offers: &[Offer<'_>]) -> String {
    match pick {
        DeckPick::Shipped(i) => catalog
            .decks()
            .get(*i)
            .map_or_else(|| "—".to_string(), |d| d.meta.name.clone()),
        DeckPick::Saved(id) => offers.iter().find(|o| o.deck.id == *id).map_or_else(
            || format!("{id} (no longer saved)"),
            |o| format!("{} (my deck)", o.deck.name),
        ),
        DeckPick::RandomSaved => "Random from my decks".into(),
        DeckPick::RandomContent => "Random content".into(),
    }
}

/// The deck list: ready decks, saved decks (those that cannot be played greyed, with the
/// reason), then the two random choices.
fn deck_menu(ui: &mut Ui, current: &mut DeckPick, catalog: &Catalog, offers: &[Offer<'_>]) {
    ui.weak("Ready decks");
    for (i, d) in catalog.decks().iter().enumerate() {
        ui.selectable_value(current, DeckPick::Shipped(i), &d.meta.name)
            .on_hover_text(format!("{}\n{}", d.meta.description, d.meta.key()));
    }
    ui.separator();
    ui.weak("My decks");
    if offers.is_empty() {
        ui.weak("none saved yet: build one in Decks");
    }
    for offer in offers {
        let pick = DeckPick::Saved(offer.deck.id.clone());
        let selected = *current == pick;
        let r = ui.add_enabled(
            offer.problem.is_none(),
            egui::Button::selectable(selected, &offer.deck.name),
        );
        if let Some(p) = &offer.problem {
            r.on_disabled_hover_text(format!("cannot be played: {p}"));
        } else if r.clicked() {
            *current = pick;
        }
    }
    ui.separator();
    let playable = offers.iter().filter(|o| o.problem.is_none()).count();
    let r = ui.add_enabled(
        playable > 0,
        egui::Button::selectable(*current == DeckPick::RandomSaved, "Random from my decks"),
    );
    let r = r
        .on_hover_text(format!(
            "one of your {playable} playable saved decks, drawn at the start"
        ))
        .on_disabled_hover_text("no saved deck can be played yet");
    if r.clicked() {
        *current = DeckPick::RandomSaved;
    }
    ui.selectable_value(current, DeckPick::RandomContent, "Random content")
        .on_hover_text(
            "2 cards a stack, a third with probability 1/2, a fourth 1/3, a fifth 1/4; \
             a first stack that is not a loss on the opening move",
        );
}

/// The deck a pick gives for one game (`seed` draws the random ones).
fn seat_deck(
    pick: &DeckPick,
    catalog: &Arc<Catalog>,
    offers: &[Offer<'_>],
    seed: u64,
) -> Result<SeatDeck, String> {
    let saved = |offer: &Offer<'_>| -> Result<SeatDeck, String> {
        if let Some(p) = &offer.problem {
            return Err(format!(
                "the deck '{}' cannot be played: {p}",
                offer.deck.name
            ));
        }
        Ok(SeatDeck {
            name: offer.deck.name.clone(),
            stacks: offer.deck.resolve(catalog).stacks,
        })
    };
    match pick {
        DeckPick::Shipped(i) => u16::try_from(*i)
            .ok()
            .and_then(|i| SeatDeck::shipped(catalog, DeckId(i)))
            .ok_or_else(|| "that ready deck is no longer in the loaded content".to_string()),
        DeckPick::Saved(id) => offers
            .iter()
            .find(|o| o.deck.id == *id)
            .ok_or_else(|| format!("the saved deck '{id}' is gone; pick another"))
            .and_then(saved),
        DeckPick::RandomSaved => {
            let playable: Vec<&Offer<'_>> = offers.iter().filter(|o| o.problem.is_none()).collect();
            let i = crate::ai::decks::random_saved(playable.len(), seed)
                .ok_or("no saved deck can be played: build one in Decks")?;
            saved(playable[i])
        }
        DeckPick::RandomContent => {
            let scripts = crate::ai::hooks_for(catalog);
            let engine = scripts.brain(catalog);
            let stacks =
                crate::ai::decks::random_content(&engine, seed).map_err(|e| e.to_string())?;
            Ok(SeatDeck {
                name: "Random content".into(),
                stacks,
            })
        }
    }
}
