//! The content browser: every card, ability, area and token type of the loaded packs,
//! filterable, each with where it is defined.

use egui::{RichText, Ui, vec2};

use crate::rules::describe::{self, Naming};
use crate::rules::{CardId, Catalog, Meta};

use super::cards::{self, CardLook};
use super::theme;

/// The kinds of entries the browser lists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Cards.
    Card,
    /// Abilities.
    Ability,
    /// Areas.
    Area,
    /// Token types.
    TokenType,
}

impl Kind {
    const ALL: [Kind; 4] = [Kind::Card, Kind::Ability, Kind::Area, Kind::TokenType];

    fn name(self) -> &'static str {
        match self {
            Kind::Card => "Cards",
            Kind::Ability => "Abilities",
            Kind::Area => "Areas",
            Kind::TokenType => "Token types",
        }
    }
}

/// The browser's filters and selection.
pub struct Browser {
    kind: Kind,
    pack: Option<String>,
    search: String,
    selected: Option<(Kind, usize)>,
}

impl Default for Browser {
    fn default() -> Self {
        Browser {
            kind: Kind::Card,
            pack: None,
            search: String::new(),
            selected: None,
        }
    }
}

fn metas(catalog: &Catalog, kind: Kind) -> Vec<&Meta> {
    match kind {
        Kind::Card => catalog.cards().iter().map(|d| &d.meta).collect(),
        Kind::Ability => catalog.abilities().iter().map(|d| &d.meta).collect(),
        Kind::Area => catalog.areas().iter().map(|d| &d.meta).collect(),
        Kind::TokenType => catalog.token_types().iter().map(|d| &d.meta).collect(),
    }
}

impl Browser {
    /// Draw the browser; returns true when the user asks for the main menu.
    pub fn show(&mut self, ui: &mut Ui, catalog: &Catalog) -> bool {
        let mut leave = false;
        egui::Panel::top("browser-bar").show(ui, |ui| {
            ui.add_space(4.0);
            ui.horizontal(|ui| {
                if ui.button("◀ Menu").clicked() {
                    leave = true;
                }
                ui.separator();
                ui.heading("Cards");
                ui.separator();
                for kind in Kind::ALL {
                    let n = metas(catalog, kind).len();
                    ui.selectable_value(&mut self.kind, kind, format!("{} ({n})", kind.name()));
                }
                ui.separator();
                let label = ui.label("Pack");
                egui::ComboBox::from_id_salt("pack-filter")
                    .selected_text(self.pack.as_deref().unwrap_or("every pack"))
                    .show_ui(ui, |ui| {
                        ui.selectable_value(&mut self.pack, None, "every pack");
                        for p in catalog.packs() {
                            ui.selectable_value(&mut self.pack, Some(p.id.clone()), &p.id);
                        }
                    })
                    .response
                    .labelled_by(label.id);
                ui.add(
                    egui::TextEdit::singleline(&mut self.search)
                        .hint_text("filter by name, id or text")
                        .desired_width(220.0),
                )
                .accessible_name("Filter entries");
            });
            ui.add_space(4.0);
        });
        egui::Panel::left("browser-list")
            .resizable(true)
            .default_size(330.0)
            .show(ui, |ui| self.list(ui, catalog));
        egui::CentralPanel::default_margins().show(ui, |ui| self.details(ui, catalog));
        leave
    }

    fn list(&mut self, ui: &mut Ui, catalog: &Catalog) {
        let needle = self.search.to_lowercase();
        egui::ScrollArea::vertical().show(ui, |ui| {
            let mut shown = 0;
            for (i, meta) in metas(catalog, self.kind).into_iter().enumerate() {
                if self.pack.as_ref().is_some_and(|p| *p != meta.origin.pack) {
                    continue;
                }
                let hay =
                    format!("{} {} {}", meta.name, meta.key(), meta.description).to_lowercase();
                if !needle.is_empty() && !hay.contains(&needle) {
                    continue;
                }
                shown += 1;
                let sel = self.selected == Some((self.kind, i));
                let r = ui.selectable_label(
                    sel,
                    RichText::new(format!("{}  ·  {}", meta.name, meta.key())),
                );
                if r.clicked() {
                    self.selected = Some((self.kind, i));
                }
            }
            if shown == 0 {
                ui.weak("Nothing matches the filters.");
            }
        });
    }

    fn details(&self, ui: &mut Ui, catalog: &Catalog) {
        let Some((kind, i)) = self.selected else {
            ui.weak("Select an entry to see it and where it is defined.");
            return;
        };
        let Some(meta) = metas(catalog, kind).get(i).copied() else {
            return;
        };
        ui.heading(&meta.name);
        ui.label(&meta.description);
        ui.add_space(4.0);
        ui.label(
            RichText::new(format!(
                "{} · defined in pack '{}', {}:{}:{}",
                meta.key(),
                meta.origin.pack,
                theme::short_path(&meta.origin.file),
                meta.origin.line,
                meta.origin.column
            ))
            .color(theme::HINT),
        );
        ui.separator();
        match kind {
            Kind::Card => {
                let id = CardId::from_index(i);
                let def = catalog.card(id);
                ui.horizontal_top(|ui| {
                    let look = CardLook {
                        key: None,
                        stack_len: None,
                        selected: false,
                        enabled: true,
                        label: format!("card {}", def.meta.name),
                        seat: crate::rules::Seat::One,
                    };
                    cards::card(ui, catalog, id, &look);
                    ui.vertical(|ui| {
                        ui.label(format!("Value {}", def.value));
                        ui.label(format!(
                            "Token type: {}",
                            catalog.token_type(def.token).meta.name
                        ));
                        match def.ability {
                            Some(a) => {
                                ui.label(format!("Ability: {}", catalog.ability(a).meta.name))
                            }
                            None => ui.label("No ability"),
                        };
                        let used: Vec<&str> = catalog
                            .decks()
                            .iter()
                            .filter(|d| d.stacks.iter().flatten().any(|&c| c == id))
                            .map(|d| d.meta.name.as_str())
                            .collect();
                        if !used.is_empty() {
                            ui.label(format!("In decks: {}", used.join(", ")));
                        }
                    });
                });
            }
            Kind::Ability => {
                let def = &catalog.abilities()[i];
                ui.label(format!("Effect: {}", def.effect.name()));
                let users: Vec<&str> = catalog
                    .cards()
                    .iter()
                    .filter(|c| c.ability.is_some_and(|a| a.index() == i))
                    .map(|c| c.meta.name.as_str())
                    .collect();
                ui.label(format!("Cards with it: {}", users.join(", ")));
            }
            Kind::Area => {
                let def = &catalog.areas()[i];
                let size = theme::area_size(&def.offsets, 22.0);
                let (rect, _) = ui.allocate_exact_size(size + vec2(8.0, 8.0), egui::Sense::hover());
                theme::paint_area(ui.painter(), &def.offsets, rect.center(), 22.0);
                let offsets: Vec<String> = def.offsets.iter().map(ToString::to_string).collect();
                ui.label(format!(
                    "Offsets, in the order effects visit them: {}",
                    offsets.join(" ")
                ));
            }
            Kind::TokenType => {
                let def = &catalog.token_types()[i];
                let (rect, _) = ui.allocate_exact_size(vec2(80.0, 80.0), egui::Sense::hover());
                let token = crate::rules::Token {
                    value: 3,
                    kind: crate::rules::TokenTypeId::from_index(i),
                    card: None,
                    seat: crate::rules::Seat::One,
                };
                theme::paint_token(ui.painter(), catalog, rect, &token, 1.0);
                let words = describe::token_type(catalog, def, Naming::Name);
                let lines = [
                    ("Income", words.income_multiplier),
                    ("Aura:", words.aura),
                    ("Between turns:", words.between_turns),
                    ("When destroyed:", words.on_destroyed),
                    ("Script:", words.script),
                ];
                for (label, text) in lines {
                    if let Some(text) = text {
                        ui.label(format!("{label} {text}"));
                    }
                }
            }
        }
    }
}
