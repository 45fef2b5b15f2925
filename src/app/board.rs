//! The board widget: cells, tokens, and the overlays drawn over them (the move preview,
//! the AI hint, highlights). Every cell is a widget with an accessibility label that
//! says what is on it and what the preview predicts for it.

use egui::{Align2, Color32, FontId, Rect, Sense, Stroke, StrokeKind, Ui, Vec2, pos2, vec2};

use crate::ai::Rated;
use crate::rules::{Board, Catalog, Cell};

use super::anim::Piece;
use super::preview::Preview;
use super::theme;

/// What to draw over the tokens.
#[derive(Default)]
pub struct Overlay<'a> {
    /// The preview of the hovered move.
    pub preview: Option<&'a Preview>,
    /// Moves to suggest, best first, drawn with their rank and value.
    pub hint: &'a [(Rated, String)],
    /// Cells to outline (the last move's changes, a hovered history entry).
    pub highlight: &'a [Cell],
    /// Whether empty cells take clicks (a card is selected and it is a person's turn).
    pub targets: bool,
    /// Whether every cell takes clicks, occupied or not (the sandbox's position editor).
    pub every_cell: bool,
    /// The hovered move the engine refuses (a failing script, a rule), with why: the
    /// cell is crossed out and says so.
    pub refused: Option<(Cell, &'a str)>,
}

/// What the pointer did on the board this frame.
#[derive(Default, Debug, Clone, Copy)]
pub struct BoardInput {
    /// The cell under the pointer.
    pub hovered: Option<Cell>,
    /// The cell clicked.
    pub clicked: Option<Cell>,
}

/// Draw the board with `pieces` and `overlay` in the space given, square.
pub fn show(
    ui: &mut Ui,
    catalog: &Catalog,
    board: &Board,
    pieces: &[Piece],
    overlay: &Overlay<'_>,
) -> BoardInput {
    let (w, h) = (board.width(), board.height());
    let avail = ui.available_size();
    let cell = ((avail.x / theme::px(w)).min(avail.y / theme::px(h))).clamp(24.0, 110.0);
    let size = vec2(cell * theme::px(w), cell * theme::px(h));
    let (area, _) = ui.allocate_exact_size(size, Sense::hover());
    let painter = ui.painter_at(area.expand(4.0));
    let rect_of = |c: Cell| {
        Rect::from_min_size(
            area.min + vec2(theme::px(c.x) * cell, theme::px(c.y) * cell),
            Vec2::splat(cell),
        )
    };
    let lerp_rect = |p: &Piece| {
        let a = rect_of(p.from);
        let b = rect_of(p.to);
        a.translate((b.min - a.min) * p.t)
    };
    let mut input = BoardInput::default();
    // Cells, each an interactive widget.
    for y in 0..h {
        for x in 0..w {
            let c = Cell::new(x, y);
            let r = rect_of(c);
            let occupied = board.get(c).is_some();
            let open = (overlay.targets && !occupied) || overlay.every_cell;
            let id = ui.scope_id().with(("cell", x, y));
            let sense = if open { Sense::click() } else { Sense::hover() };
            let response = ui.interact(r, id, sense);
            let mut label = cell_label(catalog, board, c, overlay.preview);
            let refused = overlay
                .refused
                .filter(|(at, _)| *at == c)
                .map(|(_, why)| why);
            if let Some(why) = refused {
                label.push_str(&format!(" — refused: {why}"));
            }
            response.widget_info(|| egui::WidgetInfo::labeled(egui::Role::Button, open, &label));
            let fill = if open && response.hovered() {
                theme::CELL_OPEN.gamma_multiply(1.4)
            } else if open {
                theme::CELL_OPEN
            } else {
                theme::CELL
            };
            painter.rect_filled(r.shrink(2.0), 6.0, fill);
            if open {
                painter.circle_filled(r.center(), cell * 0.05, Color32::from_gray(110));
            }
            if response.hovered() {
                input.hovered = Some(c);
            }
            if response.clicked() {
                input.clicked = Some(c);
            }
            if let Some(why) = refused {
                cross(&painter, r.shrink(cell * 0.2), theme::DANGER);
                response.on_hover_ui(|ui| {
                    ui.colored_label(theme::DANGER, "This move will be refused:");
                    ui.label(why);
                });
            } else if let Some(t) = board.get(c) {
                let def = catalog.token_type(t.kind);
                response.on_hover_ui(|ui| {
                    ui.strong(format!(
                        "{} {} · {}",
                        theme::seat_name(t.seat),
                        def.meta.name,
                        t.value
                    ));
                    ui.label(&def.meta.description);
                    if let Some(card) = t.card {
                        ui.label(format!("from card {}", catalog.card(card).meta.name));
                    }
                    ui.weak(format!("token type {}", def.meta.key()));
                });
            }
        }
    }
    // Quiet area cells of the preview, greyed.
    if let Some(p) = overlay.preview {
        for &c in &p.quiet {
            painter.rect_filled(rect_of(c).shrink(2.0), 6.0, Color32::from_white_alpha(18));
            painter.rect_stroke(
                rect_of(c).shrink(3.0),
                6.0,
                Stroke::new(1.0, Color32::from_gray(120)),
                StrokeKind::Inside,
            );
        }
    }
    // Tokens.
    for p in pieces {
        let r = lerp_rect(p);
        let moving = overlay
            .preview
            .is_some_and(|pv| pv.moved.iter().any(|&(from, _)| from == p.to));
        let alpha = if moving { p.alpha * 0.45 } else { p.alpha };
        theme::paint_token(&painter, catalog, r, &p.token, alpha);
        if p.leaving {
            cross(&painter, r, theme::DANGER);
        }
    }
    for &c in overlay.highlight {
        painter.rect_stroke(
            rect_of(c).shrink(1.0),
            7.0,
            Stroke::new(2.5, theme::PREVIEW.gamma_multiply(0.8)),
            StrokeKind::Inside,
        );
    }
    if let Some(p) = overlay.preview {
        paint_preview(&painter, catalog, board, p, &rect_of, cell);
    }
    for (rank, (rated, text)) in overlay.hint.iter().enumerate() {
        let r = rect_of(rated.mv.cell);
        painter.rect_stroke(
            r.shrink(3.0),
            6.0,
            Stroke::new(2.0, theme::HINT),
            StrokeKind::Inside,
        );
        painter.text(
            r.left_top() + vec2(5.0, 3.0),
            Align2::LEFT_TOP,
            format!("#{}", rank + 1),
            FontId::proportional(cell * 0.2),
            theme::HINT,
        );
        painter.text(
            r.center_bottom() - vec2(0.0, 4.0),
            Align2::CENTER_BOTTOM,
            text,
            FontId::proportional(cell * 0.16),
            theme::HINT,
        );
    }
    input
}

fn paint_preview(
    painter: &egui::Painter,
    catalog: &Catalog,
    board: &Board,
    p: &Preview,
    rect_of: &dyn Fn(Cell) -> Rect,
    cell: f32,
) {
    // The placed token as a ghost where it lands (when it moves on, the arrows below
    // draw it at the end of its way).
    if let Some((at, t)) = &p.placed
        && *at == p.mv.cell
    {
        theme::paint_token(painter, catalog, rect_of(p.mv.cell), t, 0.6);
    }
    for &(c, t) in &p.spawned {
        theme::paint_token(painter, catalog, rect_of(c), &t, 0.45);
        dashed(painter, rect_of(c), theme::PREVIEW);
    }
    for &(from, to) in &p.moved {
        // The token as it lands: changed on the way, or as it stands now (the placed
        // token itself when it is the one moving).
        let after = p
            .changed
            .iter()
            .find(|c| c.cell == to)
            .map(|c| c.after)
            .or_else(|| board.get(from))
            .or(if from == p.mv.cell {
                p.placed.map(|(_, t)| t)
            } else {
                None
            });
        if let Some(tok) = after {
            theme::paint_token(painter, catalog, rect_of(to), &tok, 0.7);
        }
        let a = rect_of(from).center();
        let b = rect_of(to).center();
        let v = b - a;
        let shorten = v.normalized() * cell * 0.22;
        painter.arrow(
            a + shorten,
            v - shorten * 2.0,
            Stroke::new(cell * 0.06, theme::PREVIEW),
        );
    }
    for c in &p.changed {
        let r = rect_of(c.cell);
        painter.rect_stroke(
            r.shrink(2.0),
            6.0,
            Stroke::new(2.5, theme::PREVIEW),
            StrokeKind::Inside,
        );
        let tag = format!("{}→{}", c.before.value, c.after.value);
        let at = r.right_top() + vec2(-3.0, 3.0);
        let font = FontId::proportional(cell * 0.2);
        let galley = painter.layout_no_wrap(tag, font, Color32::BLACK);
        let bg = Rect::from_min_size(
            pos2(at.x - galley.size().x - 4.0, at.y),
            galley.size() + vec2(4.0, 0.0),
        );
        painter.rect_filled(bg, 3.0, theme::PREVIEW);
        painter.galley(bg.min + vec2(2.0, 0.0), galley, Color32::BLACK);
    }
    for g in &p.removed {
        cross(painter, rect_of(g.cell), theme::DANGER);
    }
}

fn cross(painter: &egui::Painter, r: Rect, colour: Color32) {
    let s = r.shrink(r.width() * 0.2);
    let stroke = Stroke::new(r.width() * 0.07, colour);
    painter.line_segment([s.left_top(), s.right_bottom()], stroke);
    painter.line_segment([s.right_top(), s.left_bottom()], stroke);
}

fn dashed(painter: &egui::Painter, r: Rect, colour: Color32) {
    let s = r.shrink(4.0);
    let pts = [
        s.left_top(),
        s.right_top(),
        s.right_bottom(),
        s.left_bottom(),
        s.left_top(),
    ];
    for w in pts.windows(2) {
        let shapes = egui::Shape::dashed_line(&[w[0], w[1]], Stroke::new(1.5, colour), 5.0, 4.0);
        for sh in shapes {
            painter.add(sh);
        }
    }
}

/// The accessibility label of a cell: its position, its token, and the preview's
/// prediction for it.
fn cell_label(catalog: &Catalog, board: &Board, c: Cell, preview: Option<&Preview>) -> String {
    let what = match board.get(c) {
        Some(t) => format!(
            "{} {} {}",
            theme::seat_name(t.seat),
            catalog.token_type(t.kind).meta.name,
            t.value
        ),
        None => "empty".to_string(),
    };
    let mut label = format!("cell {}: {what}", c);
    if let Some(note) = preview.and_then(|p| p.describe_cell(catalog, c)) {
        label.push_str(&format!(" — preview: {note}"));
    }
    label
}
