//! The client's frame time on the base pack: the CPU work of one frame of the game
//! screen (layout and painting into shapes, the accessibility tree, then tessellation
//! into triangles for the GPU) with the hover preview active, against the same screen
//! with nothing hovered.
//!
//! - `game/idle`: a card selected, the pointer off the board.
//! - `game/hover_same_cell`: the pointer resting on an empty cell (the preview is cached
//!   after the first frame, as when a player hovers).
//! - `game/hover_new_cell`: the pointer on a different empty cell every frame, so the
//!   engine runs the move again each frame (the worst case).
//!
//! Run with `cargo bench --bench client`.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use tokensmith::app::{App, Library, Settings};
use tokensmith::content::LoadOptions;

fn game_harness() -> Harness<'static, App> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let library = Library::load(LoadOptions {
        only: Some(vec!["base".into()]),
        ..LoadOptions::standard(&root.join("content"), &root.join("mods"))
    });
    let mut app = App::new(library);
    app.settings = Settings {
        animations: false,
        ..Settings::default()
    };
    let mut h = Harness::builder()
        .with_size(egui::vec2(1280.0, 800.0))
        .build_ui_state(|ui, app: &mut App| app.show(ui), app);
    h.run();
    h.get_by_label("Hotseat").click();
    h.run();
    h.get_by_label("Start").click();
    h.run();
    h.key_press(egui::Key::Num1);
    h.run();
    h
}

/// One frame: egui's pass, then tessellating its shapes as the renderer would.
fn frame(h: &mut Harness<'static, App>) {
    h.step();
    let out = h.output();
    let meshes = h.ctx.tessellate(out.shapes.clone(), out.pixels_per_point);
    black_box(meshes);
}

fn frames(c: &mut Criterion) {
    let mut group = c.benchmark_group("game");
    let mut h = game_harness();
    let cells: Vec<egui::Pos2> = h
        .get_all_by_label_contains(": empty")
        .map(|n| n.rect().center())
        .collect();
    let off_board = egui::pos2(5.0, 790.0);
    h.hover_at(off_board);
    h.step();
    group.bench_function("idle", |b| {
        b.iter(|| {
            h.hover_at(off_board);
            frame(&mut h);
        });
    });
    let first = cells.first().copied().unwrap_or(off_board);
    h.hover_at(first);
    h.step();
    group.bench_function("hover_same_cell", |b| {
        b.iter(|| {
            h.hover_at(first);
            frame(&mut h);
        });
    });
    let mut i = 0;
    group.bench_function("hover_new_cell", |b| {
        b.iter(|| {
            i = (i + 1) % cells.len().max(1);
            h.hover_at(cells.get(i).copied().unwrap_or(off_board));
            frame(&mut h);
        });
    });
    group.finish();
}

criterion_group!(benches, frames);
criterion_main!(benches);
