//! A scripted ability against its built-in twin: clone + apply + score of the same move
//! (`weaken_row` vs `example_scripted`'s `scripted_weaken_row`) over the same positions,
//! the script run in Lua every time and replayed from its records
//! (`src/script/memo.rs`); and a look-ahead (every legal move from each position, as
//! greedy tries them) on the `scripted_showcase` deck, with hooks run in Lua and
//! replayed.
//!
//! Run with `cargo bench --bench scripts`.

#[path = "support.rs"]
mod support;

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg32;
use tokensmith::rules::{CardId, Catalog, Cell, Engine, Event, GameState, Move, Play};
use tokensmith::script::ScriptHost;

/// Positions from random play, each with an empty cell to play the twins on.
fn positions(engine: &Engine<'_>, catalog: &Catalog, n: usize) -> Vec<(GameState, Cell)> {
    let mut rng = Pcg32::seed_from_u64(5);
    let deck = &catalog.decks()[0].stacks;
    let mut out = Vec::with_capacity(n);
    let mut events = Vec::new();
    while out.len() < n {
        let Some(state) = support::random_play(engine, deck, &mut rng, 0..25, &mut events) else {
            continue;
        };
        let empty: Vec<Cell> = state.board().empty_cells().collect();
        if !state.is_over() && !empty.is_empty() {
            out.push((state, empty[rng.random_range(0..empty.len())]));
        }
    }
    out
}

/// Play `mv` on a copy of `state` (events into `events`, cleared first).
fn try_move(engine: &Engine<'_>, state: &GameState, mv: Move, events: &mut Vec<Event>) {
    let mut s = state.clone();
    events.clear();
    let _ = black_box(engine.play(&mut s, mv, events));
}

fn bench(c: &mut Criterion) {
    let catalog = support::load("example_scripted");
    let host = |replays: bool| match ScriptHost::new(&catalog) {
        Ok(h) => {
            h.set_replays(replays);
            h
        }
        Err(d) => panic!("scripts do not compile: {d:?}"),
    };
    let (lua, replaying) = (host(false), host(true));
    let engine = Engine::new(&catalog, &lua);
    let replayed = Engine::new(&catalog, &replaying);
    let set = positions(&engine, &catalog, 512);
    let card = |name: &str| -> CardId {
        match catalog.card_named(name) {
            Ok(c) => c,
            Err(e) => panic!("{e}"),
        }
    };
    let mut group = c.benchmark_group("weaken_row");
    group.throughput(Throughput::Elements(set.len() as u64));
    for (label, id, engine) in [
        ("built_in", card("base:weaken_row"), &engine),
        ("scripted", card("scripted_weaken_row"), &engine),
        ("scripted_replayed", card("scripted_weaken_row"), &replayed),
    ] {
        group.bench_function(label, |b| {
            let mut events = Vec::with_capacity(64);
            b.iter(|| {
                for (state, cell) in &set {
                    let mv = Move {
                        seat: state.turn(),
                        play: Play::Card(id),
                        cell: *cell,
                    };
                    try_move(engine, state, mv, &mut events);
                }
            });
        });
    }
    group.finish();

    let deck = catalog
        .deck_named("scripted_showcase")
        .unwrap_or_else(|e| panic!("{e}"));
    let showcase = &catalog.deck(deck).stacks;
    let mut rng = Pcg32::seed_from_u64(9);
    let mut ahead = Vec::new();
    let mut events = Vec::new();
    while ahead.len() < 32 {
        let Some(state) = support::random_play(&engine, showcase, &mut rng, 4..24, &mut events)
        else {
            continue;
        };
        let moves = engine.legal_moves(&state);
        if !state.is_over() && !moves.is_empty() {
            ahead.push((state, moves));
        }
    }
    let mut group = c.benchmark_group("look_ahead");
    let tried: usize = ahead.iter().map(|(_, m)| m.len()).sum();
    group.throughput(Throughput::Elements(tried as u64));
    for (label, engine) in [("lua", &engine), ("replayed", &replayed)] {
        group.bench_function(label, |b| {
            let mut events = Vec::with_capacity(64);
            b.iter(|| {
                for (state, moves) in &ahead {
                    for &mv in moves {
                        try_move(engine, state, mv, &mut events);
                    }
                }
            });
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
