//! The deck editor: the saved decks of the profile on the left (new, copy of a ready
//! deck, random, duplicate, delete, set as default), the deck being edited in the middle
//! (its name, what keeps it from being played, its stacks), and the collection of every
//! loaded card on the right, filtered by ability, token type and pack and searched by
//! name. Cards move by drag and drop (collection → slot, slot → slot, slot → collection
//! to take one out) or by click-to-place (click a card, then a slot).
//!
//! Every edit is saved at once, atomically, through [`Profile`], and can be undone
//! (Ctrl+Z, Ctrl+Y) while the deck stays open; a deck that names cards of packs that are
//! not loaded keeps them, marked, so nothing is lost.

mod collection;
pub mod draft;
mod list;
mod stacks;

use std::sync::Arc;

use egui::{Color32, RichText, Ui};

use crate::profile::{self, Profile, SavedDeck};
use crate::rules::Catalog;

use self::draft::{Cards, IndexCache, Source};
use super::theme;

/// What the deck editor asks of the app.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeckEditorAction {
    /// Stay.
    Stay,
    /// Back to the main menu.
    Menu,
}

/// A message under the deck's name: what the last action did, or why it was refused.
struct Status {
    ok: bool,
    text: String,
}

/// The deck editor's state.
pub struct DeckEditor {
    decks: Vec<SavedDeck>,
    /// The deck being edited (a copy of its saved form, saved after every edit).
    draft: Option<SavedDeck>,
    /// A card picked up by a click, to put down with the next click on a slot.
    picked: Option<Source>,
    filter: collection::Filter,
    status: Option<Status>,
    confirm_delete: bool,
    /// The open deck before each edit, newest last, and the edits undone.
    undo: Vec<SavedDeck>,
    redo: Vec<SavedDeck>,
    /// Typing in the name field: one undo step for the whole run.
    renaming: bool,
    /// Why the open deck's last edits are not saved, when they are not.
    unsaved: Option<String>,
    /// Leaving with unsaved edits was asked once: the next try leaves them.
    leave_armed: bool,
    /// The loaded cards by the names decks use.
    index: IndexCache,
}

impl DeckEditor {
    /// The editor over the decks saved in `profile`; the default deck (or the first) is
    /// opened.
    #[must_use]
    pub fn new(profile: &mut Profile, settings: &profile::Settings) -> DeckEditor {
        let decks = profile.decks();
        let open = settings
            .default_deck
            .as_ref()
            .and_then(|id| decks.iter().find(|d| d.id == *id))
            .or(decks.first())
            .cloned();
        DeckEditor {
            decks,
            draft: open,
            picked: None,
            filter: collection::Filter::default(),
            status: None,
            confirm_delete: false,
            undo: Vec::new(),
            redo: Vec::new(),
            renaming: false,
            unsaved: None,
            leave_armed: false,
            index: IndexCache::default(),
        }
    }

    /// Open `deck` (or none): nothing picked, no question pending, a fresh history.
    fn open(&mut self, deck: Option<SavedDeck>) {
        self.draft = deck;
        self.picked = None;
        self.confirm_delete = false;
        self.undo.clear();
        self.redo.clear();
        self.renaming = false;
        self.unsaved = None;
        self.leave_armed = false;
    }

    /// Whether the open deck may be left: its edits are saved (a failed save is tried
    /// again first), or the user asked twice to leave them.
    fn may_leave(&mut self, profile: &Profile) -> bool {
        if self.unsaved.is_none() || self.leave_armed {
            return true;
        }
        self.save(profile, "your last edits".into());
        match &self.unsaved {
            None => true,
            Some(e) => {
                self.status = Some(Status {
                    ok: false,
                    text: format!(
                        "Your last edits are not saved ({e}). Do that again to leave them."
                    ),
                });
                self.leave_armed = true;
                false
            }
        }
    }

    /// The saved decks, sorted by id.
    #[must_use]
    pub fn decks(&self) -> &[SavedDeck] {
        &self.decks
    }

    /// The deck being edited.
    #[must_use]
    pub fn draft(&self) -> Option<&SavedDeck> {
        self.draft.as_ref()
    }

    /// Draw the editor over the loaded content.
    pub fn show(
        &mut self,
        ui: &mut Ui,
        catalog: &Arc<Catalog>,
        profile: &mut Profile,
        settings: &mut profile::Settings,
    ) -> DeckEditorAction {
        let mut cache = std::mem::take(&mut self.index);
        let cards = Cards::new(catalog, cache.get(catalog));
        let action = self.frame(ui, &cards, profile, settings);
        self.index = cache;
        action
    }

    fn frame(
        &mut self,
        ui: &mut Ui,
        catalog: &Cards<'_>,
        profile: &mut Profile,
        settings: &mut profile::Settings,
    ) -> DeckEditorAction {
        if ui.input(|i| i.key_pressed(egui::Key::Escape)) {
            self.picked = None;
        }
        self.history_keys(ui, profile);
        let mut action = DeckEditorAction::Stay;
        egui::Panel::top("decks-bar").show(ui, |ui| {
            ui.add_space(4.0);
            ui.horizontal(|ui| {
                if ui.button("◀ Menu").clicked() && self.may_leave(profile) {
                    action = DeckEditorAction::Menu;
                }
                ui.separator();
                ui.heading("Decks");
                ui.separator();
                ui.weak(format!(
                    "Saved in {}. Drag cards from the collection into a stack, or click a card and then a slot; drag a card back to the collection to take it out.",
                    theme::short_path(&profile.dir().join("decks").display().to_string())
                ));
            });
            ui.add_space(4.0);
        });
        egui::Panel::left("decks-list")
            .resizable(false)
            .default_size(230.0)
            .show(ui, |ui| self.deck_list(ui, catalog, profile, settings));
        egui::Panel::right("decks-collection")
            .resizable(true)
            .default_size(380.0)
            .show(ui, |ui| {
                let edit = collection::show(
                    ui,
                    catalog,
                    &mut self.filter,
                    self.draft.as_ref(),
                    &mut self.picked,
                );
                if let Some(edit) = edit {
                    self.edit(catalog, profile, edit);
                }
            });
        egui::CentralPanel::default_margins().show(ui, |ui| self.deck_view(ui, catalog, profile));
        stacks::paint_dragged(ui, catalog, self.draft.as_ref());
        action
    }

    /// Ctrl+Z and Ctrl+Y (or Ctrl+Shift+Z), unless a text field has the keys.
    fn history_keys(&mut self, ui: &Ui, profile: &Profile) {
        use egui::{Key, Modifiers};
        if ui.ctx().egui_wants_keyboard_input() {
            return;
        }
        let (undo, redo) = ui.input_mut(|i| {
            let redo = i.consume_key(Modifiers::COMMAND | Modifiers::SHIFT, Key::Z)
                || i.consume_key(Modifiers::COMMAND, Key::Y);
            (i.consume_key(Modifiers::COMMAND, Key::Z), redo)
        });
        if undo || redo {
            self.step_history(profile, undo);
        }
    }

    /// Undo (or redo) the last edit of the open deck, and save.
    fn step_history(&mut self, profile: &Profile, undo: bool) {
        let (from, to) = if undo {
            (&mut self.undo, &mut self.redo)
        } else {
            (&mut self.redo, &mut self.undo)
        };
        let (Some(deck), Some(current)) = (from.pop(), self.draft.take()) else {
            return;
        };
        to.push(current);
        self.draft = Some(deck);
        self.picked = None;
        self.renaming = false;
        self.save(profile, if undo { "undone" } else { "redone" }.into());
    }

    /// Remember the open deck as it is, before an edit.
    fn remember(&mut self, before: SavedDeck) {
        self.undo.push(before);
        self.redo.clear();
    }

    fn deck_view(&mut self, ui: &mut Ui, catalog: &Cards<'_>, profile: &Profile) {
        let Some(deck) = &mut self.draft else {
            ui.add_space(40.0);
            ui.vertical_centered(|ui| {
                ui.heading("No deck open");
                ui.weak("Make a new deck, or pick one of your decks on the left.");
            });
            return;
        };
        ui.add_space(4.0);
        let old_name = deck.name.clone();
        let mut renamed = false;
        ui.horizontal(|ui| {
            let label = ui.label("Deck name");
            renamed = ui
                .add(egui::TextEdit::singleline(&mut deck.name).desired_width(280.0))
                .labelled_by(label.id)
                .changed();
            ui.weak(format!("id {}", deck.id));
        });
        if renamed {
            let name = deck.name.trim().to_string();
            // A run of typing is one edit for undo.
            if self.renaming {
                self.redo.clear();
            } else {
                let before = SavedDeck {
                    name: old_name,
                    ..deck.clone()
                };
                self.remember(before);
                self.renaming = true;
            }
            self.save(profile, format!("renamed to {name}"));
        }
        // Always one line, so the stacks do not jump when a message appears.
        match &self.status {
            Some(s) if !s.ok => ui.colored_label(theme::DANGER, &s.text),
            Some(s) => ui.colored_label(Color32::from_gray(170), &s.text),
            None => ui.weak("Every change is saved at once."),
        };
        let Some(deck) = &self.draft else {
            return;
        };
        let problems = draft::problems(deck, catalog);
        let wanted = usize::from(catalog.rules().stacks);
        let fit = deck.stacks.len() != wanted;
        egui::Frame::new()
            .fill(Color32::from_gray(30))
            .corner_radius(6.0)
            .inner_margin(8.0)
            .show(ui, |ui| {
                ui.set_width(ui.available_width());
                if problems.is_empty() {
                    ui.colored_label(Color32::from_rgb(120, 220, 120), "Ready to play");
                } else {
                    ui.colored_label(theme::PREVIEW, "Not ready to play:");
                    for p in &problems {
                        ui.colored_label(theme::DANGER, format!("• {p}"));
                    }
                }
            });
        if fit
            && ui
                .button(format!("Fit to {wanted} stacks"))
                .on_hover_text("Adds empty stacks, or moves the cards of the extra stacks to the last one kept; no card is lost")
                .clicked()
        {
            self.edit(catalog, profile, Edit::Fit);
            return;
        }
        let Some(deck) = &self.draft else {
            return;
        };
        ui.add_space(8.0);
        ui.label(small(summary(deck, catalog)));
        ui.add_space(4.0);
        let edit = stacks::show(ui, catalog, deck, &mut self.picked);
        if let Some(edit) = edit {
            self.edit(catalog, profile, edit);
        }
    }

    /// Apply an edit to the open deck and save it, or say why it was refused.
    fn edit(&mut self, catalog: &Cards<'_>, profile: &Profile, edit: Edit) {
        let Some(deck) = &mut self.draft else {
            return;
        };
        self.picked = None;
        let before = deck.clone();
        let name = |deck: &SavedDeck, at: draft::Slot| {
            deck.stacks
                .get(at.stack)
                .and_then(|s| s.get(at.index))
                .map_or_else(String::new, |c| catalog.name(c))
        };
        let done = match edit {
            Edit::Put(from, to) => {
                draft::put(deck, catalog, &from, to).map(|placed| match placed {
                    draft::Placed::At(at) => {
                        format!("put {} in stack {}", name(deck, at), at.stack + 1)
                    }
                    draft::Placed::Swapped(at) => {
                        format!(
                            "{} moved to stack {} in exchange",
                            name(deck, at),
                            at.stack + 1
                        )
                    }
                    draft::Placed::Replaced(at, old) => format!(
                        "{} took the place of {} in stack {}",
                        name(deck, at),
                        catalog.name(&old),
                        at.stack + 1
                    ),
                })
            }
            Edit::Take(at) => draft::take(deck, at)
                .map(|c| format!("took {} out", catalog.name(&c)))
                .ok_or_else(|| "that card is no longer there".to_string()),
            Edit::Fit => {
                draft::fit_stacks(deck, catalog);
                Ok(format!("fitted to {} stacks", deck.stacks.len()))
            }
        };
        self.renaming = false;
        match done {
            Ok(_) if self.draft.as_ref() == Some(&before) => {}
            Ok(what) => {
                self.remember(before);
                self.save(profile, what);
            }
            Err(why) => {
                self.status = Some(Status {
                    ok: false,
                    text: format!("Cannot do that: {why}."),
                });
            }
        }
    }

    /// Save the open deck; tell the user what happened.
    fn save(&mut self, profile: &Profile, what: String) {
        let Some(deck) = &self.draft else {
            return;
        };
        if deck.name.trim().is_empty() {
            let why = "a deck needs a name".to_string();
            self.status = Some(Status {
                ok: false,
                text: format!("Not saved: {why}."),
            });
            self.unsaved = Some(why);
            return;
        }
        self.unsaved = None;
        self.status = Some(match profile.save(deck) {
            Ok(_) => {
                match self.decks.iter_mut().find(|d| d.id == deck.id) {
                    Some(d) => *d = deck.clone(),
                    None => {
                        self.decks.push(deck.clone());
                        self.decks.sort_by(|a, b| a.id.cmp(&b.id));
                    }
                }
                Status {
                    ok: true,
                    text: format!("Saved: {what}."),
                }
            }
            Err(e) => {
                self.unsaved = Some(e.to_string());
                Status {
                    ok: false,
                    text: format!(
                        "Not saved: {e}. Your edits stay here; the next edit tries again."
                    ),
                }
            }
        });
        self.leave_armed = false;
    }
}

/// An edit the stacks or the collection ask for.
pub(crate) enum Edit {
    /// Put a card (from the collection or a slot) at a slot.
    Put(Source, draft::Slot),
    /// Take the card at a slot out of the deck.
    Take(draft::Slot),
    /// Give the deck the rules' number of stacks.
    Fit,
}

/// The deck at a glance: its size and how many cards of each ability it has.
fn summary(deck: &SavedDeck, catalog: &Cards<'_>) -> String {
    let resolved = catalog.resolve(deck);
    let mut abilities: Vec<(String, usize)> = Vec::new();
    for &card in resolved.stacks.iter().flatten() {
        let name = super::cards::ability_name(catalog, catalog.card(card)).to_string();
        match abilities.iter_mut().find(|(n, _)| *n == name) {
            Some((_, count)) => *count += 1,
            None => abilities.push((name, 1)),
        }
    }
    let total: usize = deck.stacks.iter().map(Vec::len).sum();
    let mix: Vec<String> = abilities.iter().map(|(n, c)| format!("{n} ×{c}")).collect();
    let cards = if total == 1 { "card" } else { "cards" };
    let mut out = format!("{total} {cards}; the top card of each stack is the opening hand");
    if !mix.is_empty() {
        out.push_str(&format!(" · {}", mix.join(", ")));
    }
    out
}

/// A weak, small text.
fn small(text: impl Into<String>) -> RichText {
    RichText::new(text)
        .size(11.0)
        .color(Color32::from_gray(160))
}
