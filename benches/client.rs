//! The client's frame time on the base pack: the CPU work of one frame of the game
//! screen (layout and painting into shapes, the accessibility tree, then tessellation
//! into triangles for the GPU) with the hover preview active, against the same screen
//! with nothing hovered.
//!
//! - `game/idle`: a card selected, the pointer off the board.
//! - `game/hover_same_cell`: the pointer resting on an empty cell (the preview is worked
//!   out once, as when a player hovers).
//! - `game/hover_new_cell`: the pointer on a different empty cell every frame, so each
//!   frame asks the preview worker a new question (the engine plays the move on the
//!   worker, not in the frame).
//! - `decks/base` and `decks/bulk_1000`: the deck editor with 10 saved decks of 15
//!   cards (each naming one card of a pack that is not loaded), one open, the pointer
//!   on the collection; over the base pack, and with a generated pack of 1,000 cards.
//!
//! Run with `cargo bench --bench client`.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use tokensmith::app::{App, ClientSettings, Library};
use tokensmith::content::LoadOptions;
use tokensmith::profile::Profile;

#[path = "support.rs"]
mod support;

fn game_harness() -> Harness<'static, App> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let library = Library::load(LoadOptions {
        only: Some(vec!["base".into()]),
        ..LoadOptions::standard(&root.join("content"), &root.join("mods"))
    });
    let mut app = App::new(library);
    app.settings = ClientSettings {
        animations: false,
        ..ClientSettings::default()
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

/// The deck editor over the shipped content plus the packs in `mods`, with a profile of
/// 10 saved decks (kept alive by the returned folder).
fn deck_editor(mods: &std::path::Path) -> (Harness<'static, App>, tempfile::TempDir) {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let library = Library::load(LoadOptions::standard(&root.join("content"), mods));
    let profile = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let decks = profile.path().join("decks");
    std::fs::create_dir_all(&decks).unwrap_or_else(|e| panic!("{e}"));
    let keys: Vec<String> = library
        .catalog
        .as_ref()
        .map(|c| c.cards().iter().map(|d| d.meta.key()).collect())
        .unwrap_or_default();
    for n in 0..10 {
        let stack = |s: usize| {
            let cards: Vec<&str> = (0..4)
                .map(|k| keys[(n * 3 + s * 4 + k) % keys.len()].as_str())
                .collect();
            format!("  - [{}]\n", cards.join(", "))
        };
        let text = format!(
            "format_version: 2\nid: deck-{n}\nname: Deck {n}\nstacks:\n{}{}{}  - [frost_missing:hail, {}, {}]\n",
            stack(0),
            stack(1),
            stack(2),
            keys[(n + 20) % keys.len()],
            keys[(n + 21) % keys.len()],
        );
        std::fs::write(decks.join(format!("deck-{n}.yaml")), text)
            .unwrap_or_else(|e| panic!("{e}"));
    }
    let app = App::with_profile(
        library,
        Profile::open(profile.path()).map_err(|e| e.to_string()),
    );
    let mut h = Harness::builder()
        .with_size(egui::vec2(1280.0, 800.0))
        .build_ui_state(|ui, app: &mut App| app.show(ui), app);
    h.run();
    h.get_by_label("Decks").click();
    h.run();
    (h, profile)
}

fn deck_frames(c: &mut Criterion) {
    let mut group = c.benchmark_group("decks");
    let none = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let bulk = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let pack = bulk.path().join("bulk");
    std::fs::create_dir_all(&pack).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(pack.join("pack.yaml"), support::BULK_PACK).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(pack.join("cards.yaml"), support::bulk_cards(1))
        .unwrap_or_else(|e| panic!("{e}"));
    for (name, mods) in [("base", none.path()), ("bulk_1000", bulk.path())] {
        let (mut h, _profile) = deck_editor(mods);
        let over_collection = egui::pos2(1100.0, 500.0);
        h.hover_at(over_collection);
        h.step();
        group.bench_function(name, |b| {
            b.iter(|| {
                h.hover_at(over_collection);
                frame(&mut h);
            });
        });
    }
    group.finish();
}

criterion_group!(benches, frames, deck_frames);
criterion_main!(benches);
