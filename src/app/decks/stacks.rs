//! The open deck's stacks: one column a stack, a slot a card (top first), then a slot to
//! add one and the stack's remaining room. Every slot is a drop target (a card dropped
//! on a card goes before it; on an empty slot, to the bottom) and every card a drag
//! source; a click picks a card up and the next click on a slot puts it down.

use egui::{
    Align, Align2, Color32, FontId, Id, Layout, Order, Rect, Response, Sense, Stroke, StrokeKind,
    Ui, vec2,
};

use crate::profile::SavedDeck;
use crate::rules::{CardId, Seat, Token};

use super::Edit;
use super::draft::{Cards, Slot, Source};
use crate::app::{cards, theme};

/// A slot's height.
const SLOT_HEIGHT: f32 = 46.0;

/// Draw the stacks; the edit asked for this frame.
pub(super) fn show(
    ui: &mut Ui,
    catalog: &Cards<'_>,
    deck: &SavedDeck,
    picked: &mut Option<Source>,
) -> Option<Edit> {
    let mut edit = None;
    // The rules' stacks, and any extra ones the deck has (shown so nothing is hidden).
    let columns = deck
        .stacks
        .len()
        .max(usize::from(catalog.rules().stacks))
        .max(1);
    let count = crate::app::theme::px_len(columns);
    let gap = 10.0;
    let width = ((ui.available_width() - gap * (count - 1.0)) / count).clamp(120.0, 230.0);
    let (min, max) = (
        usize::from(catalog.rules().stack_min),
        usize::from(catalog.rules().stack_max),
    );
    egui::ScrollArea::vertical().show(ui, |ui| {
        ui.horizontal_top(|ui| {
            ui.spacing_mut().item_spacing.x = gap;
            for s in 0..columns {
                let cards = deck.stacks.get(s).map_or(&[][..], Vec::as_slice);
                ui.allocate_ui_with_layout(
                    vec2(
                        width,
                        (SLOT_HEIGHT + 6.0) * (crate::app::theme::px_len(max) + 1.0) + 30.0,
                    ),
                    Layout::top_down(Align::Min),
                    |ui| {
                        ui.set_width(width);
                        let short = cards.len() < min;
                        let colour = if short || cards.len() > max {
                            theme::DANGER
                        } else {
                            Color32::from_gray(220)
                        };
                        ui.colored_label(
                            colour,
                            format!("Stack {} · {}/{max}", s + 1, cards.len()),
                        );
                        for (i, written) in cards.iter().enumerate() {
                            let at = Slot { stack: s, index: i };
                            if let Some(e) = card_slot(ui, catalog, written, at, width, picked) {
                                edit = Some(e);
                            }
                        }
                        for k in cards.len()..max {
                            let first = k == cards.len();
                            let needed = k < min;
                            if let Some(e) = empty_slot(ui, s, k, width, first, needed, picked) {
                                edit = Some(e);
                            }
                        }
                    },
                );
            }
        });
    });
    edit
}

/// Where a dropped or picked-up card goes when it lands on `at`, if it moves at all.
fn landing(from: &Source, at: Slot) -> Option<Edit> {
    match from {
        Source::Slot(s) if *s == at => None,
        _ => Some(Edit::Put(from.clone(), at)),
    }
}

/// A card in the deck: drag it, drop on it, click it, or take it out with ×.
fn card_slot(
    ui: &mut Ui,
    catalog: &Cards<'_>,
    written: &str,
    at: Slot,
    width: f32,
    picked: &mut Option<Source>,
) -> Option<Edit> {
    let (rect, _) = ui.allocate_exact_size(vec2(width, SLOT_HEIGHT), Sense::hover());
    let id = Id::unique(("deck-slot", at.stack, at.index));
    let response = ui.interact(rect, id, Sense::click_and_drag());
    // Looked up once for the label, the face and the tooltip.
    let card = catalog.get(written);
    let name = card.map_or_else(
        || format!("{written} (not loaded)"),
        |c| catalog.card(c).meta.name.clone(),
    );
    let label = format!("stack {}, card {}: {name}", at.stack + 1, at.index + 1);
    response.widget_info(|| egui::WidgetInfo::labeled(egui::Role::Button, true, &label));
    response.dnd_set_drag_payload(Source::Slot(at));
    let is_picked = picked.as_ref() == Some(&Source::Slot(at));
    let dropping = response.dnd_hover_payload::<Source>().is_some();
    paint_slot(
        ui,
        catalog,
        rect,
        (written, card),
        is_picked,
        response.dragged(),
    );
    if dropping {
        // A card dropped here goes before this one.
        ui.painter().hline(
            rect.x_range(),
            rect.top() - 1.0,
            Stroke::new(3.0, theme::PREVIEW),
        );
    }
    let take = ui
        .place(
            Rect::from_min_size(rect.right_top() + vec2(-24.0, 4.0), vec2(20.0, 20.0)),
            egui::Button::new("×").small().frame(false),
        )
        .on_hover_text("Take it out of the deck");
    take.widget_info(|| {
        egui::WidgetInfo::labeled(
            egui::Role::Button,
            true,
            format!("take {name} out of stack {}", at.stack + 1),
        )
    });
    if take.clicked() {
        return Some(Edit::Take(at));
    }
    if let Some(from) = response.dnd_release_payload::<Source>() {
        return landing(&from, at);
    }
    if response.clicked() {
        match picked.take() {
            Some(from) => return landing(&from, at),
            None => *picked = Some(Source::Slot(at)),
        }
    }
    if let Some(card) = card {
        response.on_hover_ui(|ui| cards::card_tooltip(ui, catalog, card));
    } else {
        response.on_hover_text(format!(
            "{written} is not in the loaded packs. It stays in the deck (and in its file) until you take it out; the deck can be played once its pack is loaded."
        ));
    }
    None
}

/// Room left in a stack: the first empty slot takes a card at the bottom; the rest show
/// how much room there is (and which slots the rules still need), and take drops too.
fn empty_slot(
    ui: &mut Ui,
    stack: usize,
    k: usize,
    width: f32,
    first: bool,
    needed: bool,
    picked: &mut Option<Source>,
) -> Option<Edit> {
    let (rect, _) = ui.allocate_exact_size(vec2(width, SLOT_HEIGHT), Sense::hover());
    let sense = if first {
        Sense::click()
    } else {
        Sense::hover()
    };
    let response: Response = ui.interact(rect, Id::unique(("deck-room", stack, k)), sense);
    let end = Slot { stack, index: k };
    if first {
        let label = format!("stack {}: add a card", stack + 1);
        response.widget_info(|| egui::WidgetInfo::labeled(egui::Role::Button, true, &label));
    }
    let dropping = response.dnd_hover_payload::<Source>().is_some();
    let stroke = if dropping {
        Stroke::new(2.0, theme::PREVIEW)
    } else if needed {
        Stroke::new(1.0, theme::DANGER.gamma_multiply(0.7))
    } else {
        Stroke::new(1.0, Color32::from_gray(70))
    };
    let painter = ui.painter();
    painter.rect_stroke(rect.shrink(1.0), 6.0, stroke, StrokeKind::Inside);
    let text = match (first, needed, picked.is_some()) {
        (true, _, true) => "click to put it here",
        (true, _, false) => "+ drop a card",
        (false, true, _) => "needed",
        (false, false, _) => "",
    };
    painter.text(
        rect.center(),
        Align2::CENTER_CENTER,
        text,
        FontId::proportional(12.0),
        Color32::from_gray(130),
    );
    if let Some(from) = response.dnd_release_payload::<Source>() {
        return landing(&from, end);
    }
    if first
        && response.clicked()
        && let Some(from) = picked.take()
    {
        return landing(&from, end);
    }
    None
}

fn paint_slot(
    ui: &Ui,
    catalog: &Cards<'_>,
    rect: Rect,
    card: (&str, Option<CardId>),
    picked: bool,
    dragged: bool,
) {
    let painter = ui.painter();
    let fill = match (card.1.is_some(), picked) {
        (false, _) => Color32::from_rgb(70, 36, 36),
        (true, true) => Color32::from_rgb(70, 64, 40),
        (true, false) => Color32::from_rgb(44, 48, 56),
    };
    let alpha = if dragged { 0.35 } else { 1.0 };
    painter.rect_filled(rect, 6.0, fill.gamma_multiply(alpha));
    if picked {
        outline(painter, rect);
    }
    // Leave room for the × button.
    let text_room = Rect::from_min_max(rect.min, egui::pos2(rect.right() - 26.0, rect.bottom()));
    chip(
        &painter.with_clip_rect(text_room),
        catalog,
        rect,
        card,
        alpha,
    );
}

/// The highlight around a picked or dragged card, or a drop target.
pub(super) fn outline(painter: &egui::Painter, rect: Rect) {
    painter.rect_stroke(
        rect,
        6.0,
        Stroke::new(2.0, theme::PREVIEW),
        StrokeKind::Inside,
    );
}

/// A card's face in one line (its token, name, type and ability), or the text of a
/// card that is not loaded.
fn chip(
    painter: &egui::Painter,
    catalog: &Cards<'_>,
    rect: Rect,
    (written, card): (&str, Option<CardId>),
    alpha: f32,
) {
    let Some(card) = card else {
        painter.text(
            rect.left_center() + vec2(10.0, 0.0),
            Align2::LEFT_CENTER,
            format!("{written}\n(not loaded)"),
            FontId::proportional(12.0),
            theme::DANGER.gamma_multiply(alpha),
        );
        return;
    };
    card_face(painter, catalog, rect, card, alpha, false);
}

/// A loaded card in one line: its token, its name, and its token type and ability (and
/// its pack with `with_pack`), faded by `alpha`.
pub(super) fn card_face(
    painter: &egui::Painter,
    catalog: &Cards<'_>,
    rect: Rect,
    card: CardId,
    alpha: f32,
    with_pack: bool,
) {
    let def = catalog.card(card);
    let token = Token {
        value: def.value,
        kind: def.token,
        card: Some(card),
        seat: Seat::One,
    };
    let token_rect = Rect::from_center_size(rect.left_center() + vec2(22.0, 0.0), vec2(30.0, 30.0));
    theme::paint_token(painter, catalog, token_rect, &token, alpha);
    let left = rect.left_top() + vec2(44.0, 6.0);
    painter.text(
        left,
        Align2::LEFT_TOP,
        &def.meta.name,
        FontId::proportional(13.0),
        Color32::from_gray(235).gamma_multiply(alpha),
    );
    let mut line = format!(
        "{} · {}",
        catalog.token_type(def.token).meta.name,
        cards::ability_name(catalog, def)
    );
    if with_pack {
        line.push_str(&format!(" · {}", def.meta.origin.pack));
    }
    painter.text(
        left + vec2(0.0, 18.0),
        Align2::LEFT_TOP,
        line,
        FontId::proportional(11.0),
        Color32::from_gray(165).gamma_multiply(alpha),
    );
}

/// The card being dragged, drawn under the pointer above everything.
pub(super) fn paint_dragged(ui: &Ui, catalog: &Cards<'_>, deck: Option<&SavedDeck>) {
    let Some(from) = egui::DragAndDrop::payload::<Source>(ui.ctx()) else {
        return;
    };
    let Some(pos) = ui.ctx().pointer_interact_pos() else {
        return;
    };
    let written = match &*from {
        Source::Collection(key) => key.clone(),
        Source::Slot(at) => match deck.and_then(|d| d.stacks.get(at.stack)?.get(at.index)) {
            Some(c) => c.clone(),
            None => return,
        },
    };
    let painter = ui.ctx().layer_painter(egui::LayerId::new(
        Order::Tooltip,
        Id::unique("dragged-card"),
    ));
    let rect = Rect::from_min_size(pos + vec2(12.0, 8.0), vec2(200.0, SLOT_HEIGHT));
    painter.rect_filled(rect, 6.0, Color32::from_rgb(60, 66, 78));
    outline(&painter, rect);
    chip(
        &painter,
        catalog,
        rect,
        (&written, catalog.get(&written)),
        1.0,
    );
}
