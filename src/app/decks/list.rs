//! The saved decks of the deck editor: the list (default and not-ready marks, what is
//! wrong in the tooltip) and what is done to whole decks: new, new from a ready deck,
//! new random deck, duplicate, set as default, delete. A new deck never takes the file
//! of another.

use egui::Ui;

use crate::profile::{self, Profile, SavedDeck};

use super::draft::{self, Cards};
use super::{DeckEditor, Status};
use crate::app::theme;

impl DeckEditor {
    pub(super) fn deck_list(
        &mut self,
        ui: &mut Ui,
        catalog: &Cards<'_>,
        profile: &mut Profile,
        settings: &mut profile::Settings,
    ) {
        ui.add_space(6.0);
        ui.strong("My decks");
        ui.add_space(4.0);
        let mut open = None;
        egui::ScrollArea::vertical()
            .max_height((ui.available_height() - 250.0).max(80.0))
            .show(ui, |ui| {
                if self.decks.is_empty() {
                    ui.weak("No saved decks yet: make one below.");
                }
                for deck in &self.decks {
                    let selected = self.draft.as_ref().is_some_and(|d| d.id == deck.id);
                    let default = settings.default_deck.as_deref() == Some(deck.id.as_str());
                    let problems = draft::problems(deck, catalog);
                    let mut text = deck.name.clone();
                    if default {
                        text.push_str(" (default)");
                    }
                    if !problems.is_empty() {
                        text.push_str(" · not ready");
                    }
                    let r = ui
                        .selectable_label(selected, text)
                        .on_hover_text(deck_summary(deck, default, &problems));
                    if r.clicked() {
                        open = Some(deck.clone());
                    }
                }
            });
        if let Some(deck) = open
            && self.may_leave(profile)
        {
            self.open(Some(deck));
            self.status = None;
        }
        ui.separator();
        let wide = |text: &str| egui::Button::new(text).min_size(egui::vec2(200.0, 24.0));
        if ui.add(wide("New deck")).clicked() {
            let deck = self.blank("New deck", catalog, profile);
            self.create(profile, deck, "made a new deck");
        }
        ui.menu_button("New from a ready deck ▸", |ui| {
            for d in catalog.decks() {
                if ui.button(&d.meta.name).clicked() {
                    let mut deck = self.blank(&d.meta.name, catalog, profile);
                    deck.stacks = draft::written(catalog, &d.stacks);
                    self.create(
                        profile,
                        deck,
                        &format!("copied the ready deck {}", d.meta.name),
                    );
                    ui.close();
                }
            }
        });
        if ui
            .add(wide("New random deck"))
            .on_hover_text("Random content, as the rules draw it")
            .clicked()
        {
            self.random(catalog, profile);
        }
        for note in &profile.notes {
            ui.add_space(6.0);
            ui.colored_label(theme::PREVIEW, note);
        }
        let Some(current) = self.draft.clone() else {
            return;
        };
        ui.separator();
        if ui.add(wide("Duplicate")).clicked() {
            let mut copy = self.blank(&format!("{} (copy)", current.name), catalog, profile);
            copy.stacks = current.stacks.clone();
            self.create(profile, copy, &format!("duplicated {}", current.name));
        }
        let is_default = settings.default_deck.as_deref() == Some(current.id.as_str());
        let default_text = if is_default {
            "The default deck"
        } else {
            "Set as default"
        };
        let r = ui
            .add_enabled(!is_default, wide(default_text))
            .on_hover_text("The new-game screen offers the default deck first");
        if r.clicked() {
            settings.default_deck = Some(current.id.clone());
            self.save_settings(
                profile,
                settings,
                format!("{} is the default deck", current.name),
            );
        }
        if self.confirm_delete {
            ui.colored_label(theme::DANGER, format!("Delete {}?", current.name));
            ui.horizontal(|ui| {
                if ui.button("Delete it").clicked() {
                    self.delete(profile, settings, &current);
                }
                if ui.button("Keep it").clicked() {
                    self.confirm_delete = false;
                }
            });
        } else if ui.add(wide("Delete")).clicked() {
            self.confirm_delete = true;
        }
        ui.separator();
        ui.horizontal(|ui| {
            let undo = ui.add_enabled(!self.undo.is_empty(), egui::Button::new("Undo"));
            if undo.on_hover_text("Ctrl+Z").clicked() {
                self.step_history(profile, true);
            }
            let redo = ui.add_enabled(!self.redo.is_empty(), egui::Button::new("Redo"));
            if redo.on_hover_text("Ctrl+Y").clicked() {
                self.step_history(profile, false);
            }
        });
    }

    fn save_settings(&mut self, profile: &Profile, settings: &profile::Settings, what: String) {
        self.status = Some(match profile.save_settings(settings) {
            Ok(_) => Status {
                ok: true,
                text: format!("Saved: {what}."),
            },
            Err(e) => Status {
                ok: false,
                text: format!("Not saved: {e}."),
            },
        });
    }

    /// An empty deck named `name` with an id no deck has, here or on disk.
    fn blank(&self, name: &str, catalog: &Cards<'_>, profile: &Profile) -> SavedDeck {
        let id = profile::id_for(name, |id| {
            self.decks.iter().any(|d| d.id.eq_ignore_ascii_case(id)) || profile.is_taken(id)
        });
        SavedDeck {
            format_version: profile::FORMAT_VERSION,
            id,
            name: name.to_string(),
            stacks: vec![Vec::new(); usize::from(catalog.rules().stacks)],
        }
    }

    /// Save a new deck (never over another file) and open it.
    fn create(&mut self, profile: &Profile, deck: SavedDeck, what: &str) {
        if !self.may_leave(profile) {
            return;
        }
        match profile.create(&deck) {
            Ok(_) => {
                self.decks.push(deck.clone());
                self.decks.sort_by(|a, b| a.id.cmp(&b.id));
                self.open(Some(deck));
                self.status = Some(Status {
                    ok: true,
                    text: format!("Saved: {what}."),
                });
            }
            Err(e) => {
                self.status = Some(Status {
                    ok: false,
                    text: format!("Not made: {e}."),
                });
            }
        }
    }

    fn random(&mut self, catalog: &Cards<'_>, profile: &Profile) {
        let seed = crate::app::menu::fresh_seed();
        let scripts = crate::ai::hooks_for(catalog);
        let engine = scripts.brain(catalog);
        match crate::ai::decks::random_content(&engine, seed) {
            Ok(stacks) => {
                let mut deck = self.blank("Random deck", catalog, profile);
                deck.stacks = draft::written(catalog, &stacks);
                self.create(profile, deck, "drew a random deck");
            }
            Err(e) => {
                self.status = Some(Status {
                    ok: false,
                    text: format!("No random deck: {e}."),
                });
            }
        }
    }

    fn delete(&mut self, profile: &Profile, settings: &mut profile::Settings, deck: &SavedDeck) {
        self.confirm_delete = false;
        match profile.delete(&deck.id) {
            Ok(_) => {
                self.decks.retain(|d| d.id != deck.id);
                self.open(self.decks.first().cloned());
                self.status = Some(Status {
                    ok: true,
                    text: format!("Deleted {}.", deck.name),
                });
                if settings.default_deck.as_deref() == Some(deck.id.as_str()) {
                    settings.default_deck = None;
                    self.save_settings(
                        profile,
                        settings,
                        format!("deleted {}; there is no default deck now", deck.name),
                    );
                }
            }
            Err(e) => {
                self.status = Some(Status {
                    ok: false,
                    text: format!("Not deleted: {e}."),
                });
            }
        }
    }
}

/// A saved deck's tooltip: its size, whether it is the default, what is wrong with it.
fn deck_summary(deck: &SavedDeck, default: bool, problems: &[String]) -> String {
    let sizes: Vec<String> = deck.stacks.iter().map(|s| s.len().to_string()).collect();
    let mut out = format!(
        "{} · id {} · stacks {}",
        deck.name,
        deck.id,
        sizes.join("/")
    );
    if default {
        out.push_str("\nThe default deck.");
    }
    if problems.is_empty() {
        out.push_str("\nReady to play.");
    } else {
        for p in problems {
            out.push_str(&format!("\n• {p}"));
        }
    }
    out
}
