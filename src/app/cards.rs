//! Cards as the player sees them: value, token type, ability and area, with a tooltip
//! that tells each part's description and the pack it comes from.

use egui::{Align2, Color32, FontId, Rect, Response, Sense, Stroke, StrokeKind, Ui, Vec2, vec2};

use crate::rules::{CardDef, CardId, Catalog, Meta, Token};

use super::theme;

/// The size of a card in the hand.
pub const CARD_SIZE: Vec2 = Vec2::new(132.0, 176.0);

/// How a card is shown.
pub struct CardLook<'a> {
    /// A key hint in the corner ("1" to "4").
    pub key: Option<&'a str>,
    /// The number of cards in its stack, shown under the card.
    pub stack_len: Option<usize>,
    /// Whether it is selected.
    pub selected: bool,
    /// Whether it can be played now.
    pub enabled: bool,
    /// The accessibility label.
    pub label: String,
    /// Whose colour the card's token is painted in (the seat whose hand it is in).
    pub seat: crate::rules::Seat,
}

/// Draw a card; clicking it is the response's click.
pub fn card(ui: &mut Ui, catalog: &Catalog, id: CardId, look: &CardLook<'_>) -> Response {
    let def = catalog.card(id);
    let (rect, response) = ui.allocate_exact_size(CARD_SIZE, Sense::click());
    response.widget_info(|| {
        let mut info = egui::WidgetInfo::labeled(egui::Role::Button, look.enabled, &look.label);
        info.selected = Some(look.selected);
        info
    });
    let painter = ui.painter_at(rect.expand(2.0));
    let hovered = response.hovered() && look.enabled;
    let fill = if look.selected {
        Color32::from_rgb(70, 64, 40)
    } else if hovered {
        Color32::from_rgb(58, 62, 72)
    } else {
        Color32::from_rgb(40, 43, 50)
    };
    let border = if look.selected {
        Stroke::new(3.0, theme::PREVIEW)
    } else {
        Stroke::new(1.0, Color32::from_gray(90))
    };
    let alpha = if look.enabled { 1.0 } else { 0.45 };
    painter.rect_filled(rect, 10.0, fill.gamma_multiply(alpha));
    painter.rect_stroke(rect, 10.0, border, StrokeKind::Inside);
    let text = Color32::from_gray(235).gamma_multiply(alpha);
    let weak = Color32::from_gray(170).gamma_multiply(alpha);
    // Name.
    painter.text(
        rect.center_top() + vec2(0.0, 8.0),
        Align2::CENTER_TOP,
        &def.meta.name,
        FontId::proportional(13.0),
        text,
    );
    if let Some(key) = look.key {
        painter.text(
            rect.left_top() + vec2(8.0, 6.0),
            Align2::LEFT_TOP,
            key,
            FontId::monospace(11.0),
            weak,
        );
    }
    // The token it places.
    let token_rect = Rect::from_center_size(rect.left_top() + vec2(38.0, 62.0), Vec2::splat(50.0));
    let token = Token {
        value: def.value,
        kind: def.token,
        card: Some(id),
        seat: look.seat,
    };
    theme::paint_token(&painter, catalog, token_rect, &token, alpha);
    // Its area.
    let area_cell = 9.0;
    let size = theme::area_size(def.area.offsets(), area_cell);
    let scale = (40.0 / size.x).min(1.0);
    theme::paint_area(
        &painter,
        def.area.offsets(),
        rect.left_top() + vec2(100.0, 62.0),
        area_cell * scale,
    );
    // Type and ability.
    let ability = ability_name(catalog, def);
    painter.text(
        rect.left_top() + vec2(10.0, 98.0),
        Align2::LEFT_TOP,
        &catalog.token_type(def.token).meta.name,
        FontId::proportional(12.0),
        weak,
    );
    let kind = catalog.token_type(def.token);
    if def.ability.is_none() && !kind.meta.description.trim().is_empty() {
        // No ability: what the token type does is what the card does.
        let mut job = egui::text::LayoutJob::simple(
            kind.meta.description.trim().to_string(),
            FontId::proportional(11.0),
            text,
            rect.width() - 20.0,
        );
        job.wrap.max_rows = if look.stack_len.is_some() { 3 } else { 4 };
        painter.galley(
            rect.left_top() + vec2(10.0, 114.0),
            painter.layout_job(job),
            text,
        );
    } else {
        painter.text(
            rect.left_top() + vec2(10.0, 116.0),
            Align2::LEFT_TOP,
            ability,
            FontId::proportional(13.0),
            text,
        );
    }
    if let Some(n) = look.stack_len {
        painter.text(
            rect.center_bottom() - vec2(0.0, 8.0),
            Align2::CENTER_BOTTOM,
            format!("{n} in stack"),
            FontId::proportional(11.0),
            weak,
        );
    }
    response.on_hover_ui(|ui| card_tooltip(ui, catalog, id))
}

/// A card's description with its token type's and ability's, and where each is defined.
pub fn card_tooltip(ui: &mut Ui, catalog: &Catalog, id: CardId) {
    let def = catalog.card(id);
    ui.set_max_width(320.0);
    ui.strong(format!("{} (value {})", def.meta.name, def.value));
    ui.label(&def.meta.description);
    origin(ui, "card", &def.meta);
    ui.separator();
    let kind = catalog.token_type(def.token);
    ui.label(format!("Token type: {}", kind.meta.name));
    ui.weak(&kind.meta.description);
    origin(ui, "token type", &kind.meta);
    if let Some(a) = def.ability {
        let ability = catalog.ability(a);
        ui.separator();
        ui.label(format!("Ability: {}", ability.meta.name));
        ui.weak(&ability.meta.description);
        origin(ui, "ability", &ability.meta);
    }
}

/// "defined in pack base, base/cards.yaml:12".
pub fn origin(ui: &mut Ui, what: &str, meta: &Meta) {
    ui.small(format!(
        "{what} {} · {}:{}",
        meta.key(),
        theme::short_path(&meta.origin.file),
        meta.origin.line
    ));
}

/// A card's ability name, or "no ability".
pub fn ability_name<'a>(catalog: &'a Catalog, def: &CardDef) -> &'a str {
    def.ability
        .map_or("no ability", |a| catalog.ability(a).meta.name.as_str())
}

/// The accessibility label of a hand card.
#[must_use]
pub fn hand_label(catalog: &Catalog, stack: usize, id: CardId, len: usize) -> String {
    let def = catalog.card(id);
    let ability = ability_name(catalog, def);
    format!(
        "stack {}: {}, value {}, {}, {} ({} cards)",
        stack + 1,
        def.meta.name,
        def.value,
        catalog.token_type(def.token).meta.name,
        ability,
        len
    )
}
