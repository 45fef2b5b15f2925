//! The collection: every card of the loaded packs, filtered by ability, token type and
//! pack and searched by name, id or description. A card is a drag source and can be
//! picked up with a click; the whole panel takes a deck's card dropped on it out of the
//! deck.

use egui::{Align2, Color32, FontId, Id, Sense, Ui, vec2};

use crate::profile::SavedDeck;
use crate::rules::{AbilityId, CardDef, CardId, TokenTypeId};

use super::draft::{Cards, Slot, Source};
use super::{Edit, small};
use crate::app::{cards, theme};

/// The collection's filters.
#[derive(Default)]
pub(super) struct Filter {
    search: String,
    /// `None`: any; `Some(None)`: cards without an ability.
    ability: Option<Option<AbilityId>>,
    token: Option<TokenTypeId>,
    pack: Option<String>,
}

impl Filter {
    fn keeps(&self, catalog: &Cards<'_>, def: &CardDef) -> bool {
        if self.ability.is_some_and(|a| a != def.ability)
            || self.token.is_some_and(|t| t != def.token)
            || self
                .pack
                .as_ref()
                .is_some_and(|p| *p != def.meta.origin.pack)
        {
            return false;
        }
        let needle = self.search.trim().to_lowercase();
        needle.is_empty() || {
            let ability = cards::ability_name(catalog, def);
            let kind = &catalog.token_type(def.token).meta.name;
            format!(
                "{} {} {} {ability} {kind}",
                def.meta.name,
                def.meta.key(),
                def.meta.description
            )
            .to_lowercase()
            .contains(&needle)
        }
    }
}

/// A row's height.
const ROW_HEIGHT: f32 = 44.0;

/// Draw the collection; the edit asked for this frame.
pub(super) fn show(
    ui: &mut Ui,
    catalog: &Cards<'_>,
    filter: &mut Filter,
    deck: Option<&SavedDeck>,
    picked: &mut Option<Source>,
) -> Option<Edit> {
    let mut edit = None;
    let panel = ui.max_rect();
    ui.add_space(6.0);
    let shown: Vec<CardId> = catalog
        .card_ids()
        .filter(|&c| filter.keeps(catalog, catalog.card(c)))
        .collect();
    ui.horizontal(|ui| {
        ui.strong("Collection");
        ui.weak(format!(
            "{} of {} cards",
            shown.len(),
            catalog.cards().len()
        ));
    });
    filters(ui, catalog, filter);
    if let (Some(Source::Slot(at)), Some(deck)) = (picked.as_ref(), deck)
        && let Some(written) = deck.stacks.get(at.stack).and_then(|s| s.get(at.index))
    {
        let name = catalog.name(written);
        if ui.button(format!("Take {name} out of the deck")).clicked() {
            edit = Some(Edit::Take(*at));
        }
    }
    ui.separator();
    // Where each card of the open deck is, looked up once; only the rows in view are
    // laid out.
    let mut places = std::collections::HashMap::new();
    for (stack, cards) in deck.iter().flat_map(|d| d.stacks.iter()).enumerate() {
        for (index, written) in cards.iter().enumerate() {
            if let Some(card) = catalog.get(written) {
                places.entry(card).or_insert(Slot { stack, index });
            }
        }
    }
    if shown.is_empty() {
        ui.weak("No card matches the filters.");
    }
    let spacing = ui.spacing().item_spacing.y;
    egui::ScrollArea::vertical().show_rows(ui, ROW_HEIGHT, shown.len(), |ui, rows| {
        ui.spacing_mut().item_spacing.y = spacing;
        for &card in &shown[rows] {
            row(ui, catalog, card, places.get(&card).copied(), picked);
        }
    });
    // The whole panel takes a deck's card back.
    let back = ui.interact(panel, Id::unique("collection-drop"), Sense::hover());
    if let Some(from) = back.dnd_hover_payload::<Source>()
        && matches!(*from, Source::Slot(_))
    {
        super::stacks::outline(ui.painter(), panel.shrink(2.0));
    }
    if let Some(from) = back.dnd_release_payload::<Source>()
        && let Source::Slot(at) = *from
    {
        edit = Some(Edit::Take(at));
    }
    edit
}

fn filters(ui: &mut Ui, catalog: &Cards<'_>, filter: &mut Filter) {
    ui.add(
        egui::TextEdit::singleline(&mut filter.search)
            .hint_text("search by name, id or text")
            .desired_width(f32::INFINITY),
    )
    .accessible_name("Search the collection");
    egui::Grid::new("collection-filters")
        .num_columns(2)
        .spacing([8.0, 4.0])
        .show(ui, |ui| {
            let label = ui.label("Ability");
            let text = match filter.ability {
                None => "any".to_string(),
                Some(None) => "no ability".to_string(),
                Some(Some(a)) => catalog.ability(a).meta.name.clone(),
            };
            egui::ComboBox::from_id_salt("ability-filter")
                .selected_text(text)
                .width(220.0)
                .show_ui(ui, |ui| {
                    ui.selectable_value(&mut filter.ability, None, "any");
                    ui.selectable_value(&mut filter.ability, Some(None), "no ability");
                    for (i, a) in catalog.abilities().iter().enumerate() {
                        let id = AbilityId::from_index(i);
                        ui.selectable_value(&mut filter.ability, Some(Some(id)), &a.meta.name);
                    }
                })
                .response
                .labelled_by(label.id);
            ui.end_row();
            let label = ui.label("Token type");
            let text = filter
                .token
                .map_or("any", |t| catalog.token_type(t).meta.name.as_str());
            egui::ComboBox::from_id_salt("token-filter")
                .selected_text(text)
                .width(220.0)
                .show_ui(ui, |ui| {
                    ui.selectable_value(&mut filter.token, None, "any");
                    for (i, t) in catalog.token_types().iter().enumerate() {
                        let id = TokenTypeId::from_index(i);
                        ui.selectable_value(&mut filter.token, Some(id), &t.meta.name);
                    }
                })
                .response
                .labelled_by(label.id);
            ui.end_row();
            let label = ui.label("Pack");
            egui::ComboBox::from_id_salt("pack-filter")
                .selected_text(filter.pack.as_deref().unwrap_or("any"))
                .width(220.0)
                .show_ui(ui, |ui| {
                    ui.selectable_value(&mut filter.pack, None, "any");
                    for p in catalog.packs() {
                        ui.selectable_value(&mut filter.pack, Some(p.id.clone()), &p.id);
                    }
                })
                .response
                .labelled_by(label.id);
            ui.end_row();
        });
    let any = filter.ability.is_some()
        || filter.token.is_some()
        || filter.pack.is_some()
        || !filter.search.is_empty();
    if ui
        .add_enabled(any, egui::Button::new("Clear filters"))
        .clicked()
    {
        *filter = Filter::default();
    }
}

/// One card of the collection: drag it to a slot, or click it and then a slot.
fn row(
    ui: &mut Ui,
    catalog: &Cards<'_>,
    card: CardId,
    in_deck: Option<Slot>,
    picked: &mut Option<Source>,
) {
    let def = catalog.card(card);
    let key = def.meta.key();
    let (rect, _) = ui.allocate_exact_size(vec2(ui.available_width(), ROW_HEIGHT), Sense::hover());
    let response = ui.interact(
        rect,
        Id::unique(("collection", &key)),
        Sense::click_and_drag(),
    );
    let label = match in_deck {
        Some(at) => format!("{} (in stack {})", def.meta.name, at.stack + 1),
        None => def.meta.name.clone(),
    };
    response.widget_info(|| egui::WidgetInfo::labeled(egui::Role::Button, true, &label));
    response.dnd_set_drag_payload(Source::Collection(key.clone()));
    let is_picked = picked.as_ref() == Some(&Source::Collection(key.clone()));
    let painter = ui.painter();
    let fill = if is_picked {
        Color32::from_rgb(70, 64, 40)
    } else if response.hovered() {
        Color32::from_rgb(52, 57, 66)
    } else {
        Color32::from_rgb(38, 41, 48)
    };
    let alpha = if in_deck.is_some() { 0.45 } else { 1.0 };
    painter.rect_filled(rect.shrink2(vec2(0.0, 1.0)), 6.0, fill);
    if is_picked {
        super::stacks::outline(painter, rect);
    }
    super::stacks::card_face(painter, catalog, rect, card, alpha, true);
    if let Some(at) = in_deck {
        painter.text(
            rect.right_center() - vec2(8.0, 0.0),
            Align2::RIGHT_CENTER,
            format!("stack {}", at.stack + 1),
            FontId::proportional(11.0),
            theme::PREVIEW.gamma_multiply(0.8),
        );
    }
    if response.clicked() {
        let mine = Source::Collection(key);
        // A click picks this card up (a card picked before is put back where it was);
        // a second click puts it back.
        if picked.take().as_ref() != Some(&mine) {
            *picked = Some(mine);
        }
    }
    response.on_hover_ui(|ui| {
        ui.label(small("Drag to a stack, or click and then click a slot."));
        cards::card_tooltip(ui, catalog, card);
    });
}
