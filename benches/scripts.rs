//! A scripted ability against its built-in twin: clone + apply + score of the same move
//! (`weaken_row` vs `example_scripted`'s `scripted_weaken_row`) over the same positions.
//!
//! Run with `cargo bench --bench scripts`.

#[path = "support.rs"]
mod support;

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg32;
use tokensmith::rules::{CardId, Catalog, Cell, Engine, GameState, Move, Play};
use tokensmith::script::ScriptHost;

/// Positions from random play, each with an empty cell to play the twins on.
fn positions(engine: &Engine<'_>, catalog: &Catalog, n: usize) -> Vec<(GameState, Cell)> {
    let mut rng = Pcg32::seed_from_u64(5);
    let deck = &catalog.decks()[0].stacks;
    let mut out = Vec::with_capacity(n);
    let mut events = Vec::new();
    while out.len() < n {
        let Ok(mut state) = engine.new_game([deck, deck], rng.random(), &mut events) else {
            continue;
        };
        for _ in 0..rng.random_range(0..25) {
            let moves = engine.legal_moves(&state);
            if moves.is_empty() {
                break;
            }
            let mv = moves[rng.random_range(0..moves.len())];
            let _ = engine.play(&mut state, mv, &mut events);
        }
        let empty: Vec<Cell> = state.board().empty_cells().collect();
        if !state.is_over() && !empty.is_empty() {
            out.push((state, empty[rng.random_range(0..empty.len())]));
        }
        events.clear();
    }
    out
}

fn bench(c: &mut Criterion) {
    let catalog = support::load("example_scripted");
    let host = match ScriptHost::new(&catalog) {
        Ok(h) => h,
        Err(d) => panic!("scripts do not compile: {d:?}"),
    };
    let engine = Engine::new(&catalog, &host);
    let set = positions(&engine, &catalog, 512);
    let card = |name: &str| -> CardId {
        match catalog.card_named(name) {
            Ok(c) => c,
            Err(e) => panic!("{e}"),
        }
    };
    let mut group = c.benchmark_group("weaken_row");
    group.throughput(Throughput::Elements(set.len() as u64));
    for (label, id) in [
        ("built_in", card("base:weaken_row")),
        ("scripted", card("scripted_weaken_row")),
    ] {
        group.bench_function(label, |b| {
            let mut events = Vec::with_capacity(64);
            b.iter(|| {
                for (state, cell) in &set {
                    let mut s = state.clone();
                    events.clear();
                    let mv = Move {
                        seat: s.turn(),
                        play: Play::Card(id),
                        cell: *cell,
                    };
                    let _ = black_box(engine.play(&mut s, mv, &mut events));
                }
            });
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
