//! Colours and the drawing of tokens, shared by the board, the cards and the browser.
//!
//! A token's look is read from its type's data, never from its id: a golden type is any
//! type with an income multiplier above 1, an aura draws a dotted ring coloured by whom
//! it feeds, a turret draws its firing directions, a type that survives destruction a
//! double rim, a scripted type a small mark. New types in a pack look right unchanged.

use egui::{Align2, Color32, FontId, Painter, Pos2, Rect, Stroke, StrokeKind, Vec2, pos2, vec2};

use crate::rules::{Catalog, Offset, Relation, Seat, Token, TokenTypeDef};

/// Seat 1's colour.
pub const SEAT_ONE: Color32 = Color32::from_rgb(58, 124, 214);
/// Seat 2's colour.
pub const SEAT_TWO: Color32 = Color32::from_rgb(214, 92, 58);
/// Gold, for golden tokens.
pub const GOLD: Color32 = Color32::from_rgb(236, 190, 60);
/// The preview's highlight.
pub const PREVIEW: Color32 = Color32::from_rgb(250, 220, 90);
/// Good news: a live connection.
pub const GOOD: Color32 = Color32::from_rgb(90, 200, 120);
/// Removal marks.
pub const DANGER: Color32 = Color32::from_rgb(235, 70, 70);
/// The AI hint.
pub const HINT: Color32 = Color32::from_rgb(90, 220, 210);
/// The board's cells.
pub const CELL: Color32 = Color32::from_rgb(44, 47, 54);
/// Empty cells that can be played on.
pub const CELL_OPEN: Color32 = Color32::from_rgb(54, 60, 70);

/// A seat's colour.
#[must_use]
pub fn seat_color(seat: Seat) -> Color32 {
    match seat {
        Seat::One => SEAT_ONE,
        Seat::Two => SEAT_TWO,
    }
}

/// A seat's name as the UI says it.
#[must_use]
pub fn seat_name(seat: Seat) -> &'static str {
    match seat {
        Seat::One => "Blue",
        Seat::Two => "Red",
    }
}

/// Whether a type reads as golden: it earns more than once its value.
#[must_use]
pub fn is_golden(def: &TokenTypeDef) -> bool {
    def.income_multiplier > 1
}

/// A short badge for a type, or `None` for a plain type.
#[must_use]
pub fn badge(def: &TokenTypeDef) -> Option<String> {
    if def.income_multiplier != 1 {
        return Some(format!("×{}", def.income_multiplier));
    }
    let plain = def.aura.is_none()
        && def.between_turns.is_none()
        && def.on_destroyed.is_none()
        && def.script.is_none();
    if plain {
        return None;
    }
    let letters: String = def
        .meta
        .name
        .chars()
        .filter(|c| c.is_alphanumeric())
        .take(2)
        .collect();
    Some(letters)
}

/// Draw `token` filling `rect` (a cell), with `alpha` from 0 (invisible) to 1.
pub fn paint_token(painter: &Painter, catalog: &Catalog, rect: Rect, token: &Token, alpha: f32) {
    let def = catalog.token_type(token.kind);
    let fade = |c: Color32| c.gamma_multiply(alpha.clamp(0.0, 1.0));
    let body = rect.shrink(rect.width() * 0.12);
    let radius = body.width() * 0.22;
    let seat = seat_color(token.seat);
    painter.rect_filled(body, radius, fade(seat));
    if is_golden(def) {
        painter.rect_stroke(
            body,
            radius,
            Stroke::new(body.width() * 0.07, fade(GOLD)),
            StrokeKind::Inside,
        );
        // A gold sheen in the corner.
        painter.circle_filled(
            body.left_top() + body.size() * 0.22,
            body.width() * 0.08,
            fade(GOLD),
        );
    } else {
        painter.rect_stroke(
            body,
            radius,
            Stroke::new(1.5, fade(seat.linear_multiply(0.6))),
            StrokeKind::Inside,
        );
    }
    if def.on_destroyed.is_some() {
        painter.rect_stroke(
            body.shrink(body.width() * 0.09),
            radius * 0.7,
            Stroke::new(2.0, fade(Color32::from_gray(235))),
            StrokeKind::Inside,
        );
    }
    if let Some(aura) = &def.aura {
        let ring = match aura.to {
            Relation::Friendly => Color32::from_rgb(120, 230, 120),
            Relation::Enemy => Color32::from_rgb(240, 120, 200),
            Relation::All => Color32::from_gray(240),
        };
        let c = body.center();
        let r = body.width() * 0.58;
        for i in 0..12 {
            let a = px(i) / 12.0 * std::f32::consts::TAU;
            painter.circle_filled(c + vec2(a.cos(), a.sin()) * r, 1.8, fade(ring));
        }
    }
    if let Some(turret) = &def.between_turns {
        let c = body.center();
        for d in &turret.directions {
            let dir = vec2(f32::from(d.dx), f32::from(d.dy)).normalized();
            let tip = c + dir * body.width() * 0.62;
            let side = vec2(-dir.y, dir.x) * body.width() * 0.1;
            let base = c + dir * body.width() * 0.45;
            painter.add(egui::Shape::convex_polygon(
                vec![tip, base + side, base - side],
                fade(Color32::from_gray(235)),
                Stroke::NONE,
            ));
        }
    }
    let text = if is_golden(def) {
        fade(Color32::from_rgb(255, 245, 200))
    } else {
        fade(Color32::WHITE)
    };
    painter.text(
        body.center(),
        Align2::CENTER_CENTER,
        token.value.to_string(),
        FontId::proportional(body.height() * 0.5),
        text,
    );
    if let Some(b) = badge(def) {
        let at = pos2(body.center().x, body.bottom() - body.height() * 0.13);
        painter.text(
            at,
            Align2::CENTER_CENTER,
            b,
            FontId::proportional((body.height() * 0.2).max(8.0)),
            fade(Color32::from_gray(240)),
        );
    }
    if def.script.is_some() {
        painter.circle_filled(
            body.right_top() + vec2(-body.width() * 0.14, body.width() * 0.14),
            body.width() * 0.06,
            fade(HINT),
        );
    }
}

/// Draw an area (its offsets) as a small grid of `cell`-sized squares centred on `centre`: the placed
/// cell marked, the area's cells filled.
pub fn paint_area(painter: &Painter, offsets: &[Offset], centre: Pos2, cell: f32) {
    let reach = offsets.iter().map(|o| o.reach()).max().unwrap_or(0).max(1);
    for dy in -reach..=reach {
        for dx in -reach..=reach {
            let min = centre + vec2(px(dx) - 0.5, px(dy) - 0.5) * cell;
            let r = Rect::from_min_size(min, Vec2::splat(cell)).shrink(cell * 0.08);
            let hit = offsets
                .iter()
                .any(|o| i32::from(o.dx) == dx && i32::from(o.dy) == dy);
            let colour = if dx == 0 && dy == 0 {
                Color32::WHITE
            } else if hit {
                PREVIEW
            } else {
                Color32::from_gray(70)
            };
            painter.rect_filled(r, cell * 0.15, colour);
        }
    }
}

/// The size of [`paint_area`]'s drawing for `area` with squares of `cell`.
#[must_use]
pub fn area_size(offsets: &[Offset], cell: f32) -> Vec2 {
    let reach = offsets.iter().map(|o| o.reach()).max().unwrap_or(0).max(1);
    Vec2::splat(px(2 * reach + 1) * cell)
}

/// The built-in fonts, with the monospace font as the last fallback of the proportional
/// one, so arrows and symbols (→ ◀ ▶) render with the default fonts alone.
pub fn install_fonts(ctx: &egui::Context) {
    let mut fonts = egui::FontDefinitions::default();
    if let Some(list) = fonts.families.get_mut(&egui::FontFamily::Proportional)
        && !list.iter().any(|f| f == "Hack")
    {
        list.push("Hack".to_owned());
    }
    ctx.set_fonts(fonts);
}

/// A file path as the UI shows it: relative to the working folder when inside it.
#[must_use]
pub fn short_path(path: &str) -> String {
    let p = std::path::Path::new(path);
    std::env::current_dir()
        .ok()
        .and_then(|cwd| p.strip_prefix(cwd).ok().map(|r| r.display().to_string()))
        .unwrap_or_else(|| path.to_string())
}

/// A whole number on screen (a cell index, a count, a score on a chart) as a layout
/// coordinate. Layout only: a number past 2^24 may round, which no screen shows.
#[must_use]
pub fn px(n: impl Into<i64>) -> f32 {
    #[allow(clippy::cast_precision_loss)] // Layout only; see above.
    let x = n.into() as f32;
    x
}

/// A length or count as a layout coordinate (as [`px`]).
#[must_use]
pub fn px_len(n: usize) -> f32 {
    #[allow(clippy::cast_precision_loss)] // Layout only; see `px`.
    let x = n as f32;
    x
}
