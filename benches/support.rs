//! Loading the shipped packs and generating large ones for the benchmarks. Not every
//! benchmark uses every helper.

use std::ops::Range;
use std::path::PathBuf;

use rand::RngExt;
use rand_pcg::Pcg32;
use tokensmith::content::{LoadOptions, Loaded, PackFolder};
use tokensmith::rules::{CardId, Catalog, Engine, Event, GameState};

/// The shipped content and mods, only `pack` and what it requires, scripts checked.
#[allow(dead_code)]
pub fn load(pack: &str) -> Catalog {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    load_from(&[root.join("content"), root.join("mods")], Some(pack))
}

/// The packs in these folders (all of them, or only `pack` and what it requires),
/// scripts checked.
#[allow(dead_code)]
pub fn load_from(folders: &[PathBuf], pack: Option<&str>) -> Catalog {
    let loaded = load_report(folders, pack);
    match loaded.catalog {
        Some(c) => c,
        None => panic!(
            "{} does not load: {:?}",
            pack.unwrap_or("the packs"),
            loaded.diagnostics
        ),
    }
}

/// Loading the packs in these folders, with every diagnostic: what [`load_from`] checks.
#[allow(dead_code)]
pub fn load_report(folders: &[PathBuf], pack: Option<&str>) -> Loaded {
    tokensmith::script::load(&LoadOptions {
        folders: folders
            .iter()
            .map(|path| PackFolder {
                path: path.clone(),
                required: true,
            })
            .collect(),
        only: pack.map(|p| vec![p.to_string()]),
        rules_patch: None,
        order: Vec::new(),
    })
}

/// A `cards.yaml` of 1,000 generated cards (`card_0000` …), the first worth
/// `first_value`, for a pack that requires `base`.
#[allow(dead_code)]
pub fn bulk_cards(first_value: i32) -> String {
    let mut text = String::from("cards:\n");
    for i in 0..1000 {
        let value = if i == 0 { first_value } else { 1 + i % 5 };
        text.push_str(&format!(
            "  - id: card_{i:04}\n    name: Card {i}\n    value: {value}\n    ability: weaken\n    area: row\n    description: Generated card {i}.\n"
        ));
    }
    text
}

/// The `pack.yaml` of the generated pack `bulk`.
#[allow(dead_code)]
pub const BULK_PACK: &str =
    "id: bulk\nname: Bulk\nversion: 1.0.0\nrequires:\n  - { id: base, version: \"^1\" }\n";

/// A game of `deck` against itself after a number of random moves drawn from `plies`
/// (fewer when the game ends first), its seed and moves drawn from `rng`: a position for
/// a benchmark. `None` when the deck cannot start a game. `events` is left empty.
#[allow(dead_code)]
pub fn random_play(
    engine: &Engine<'_>,
    deck: &[Vec<CardId>],
    rng: &mut Pcg32,
    plies: Range<usize>,
    events: &mut Vec<Event>,
) -> Option<GameState> {
    let started = engine.new_game([deck, deck], rng.random(), events);
    let mut state = started.ok()?;
    for _ in 0..rng.random_range(plies) {
        let moves = engine.legal_moves(&state);
        if moves.is_empty() {
            break;
        }
        let _ = engine.play(&mut state, moves[rng.random_range(0..moves.len())], events);
    }
    events.clear();
    Some(state)
}
