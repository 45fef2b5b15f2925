//! Engine throughput on the base pack, one core.
//!
//! - `moves/clone_apply_score`: clone a mid-game state and play one legal move (the move
//!   includes between-turns effects and scoring), over a fixed set of positions.
//! - `playouts/random`: whole games from the opening, uniformly random legal moves.
//! - `saves/lan_game`: what a LAN host does after every move of a game it saves: the
//!   whole game so far as a replay with its seats, as text (here after the last move of
//!   a random game: the largest save of that game).
//!
//! Run with `cargo bench --bench engine`; figures are per element (move or playout).

#[path = "support.rs"]
mod support;

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg32;
use tokensmith::replay::{self, SeatRecord};
use tokensmith::rules::{Catalog, Engine, GameState, Move, NoHooks, Play};
use tokensmith::timeline::Timeline;

/// A uniformly random legal move without building the whole move list.
fn random_move(state: &GameState, rng: &mut Pcg32) -> Option<Move> {
    let board = state.board();
    let empty = board.empty_count();
    if empty == 0 || state.is_over() {
        return None;
    }
    let pick = rng.random_range(0..empty);
    let cell = board.empty_cells().nth(pick)?;
    let seat = state.turn();
    let stacks = state.seat(seat).stacks().len();
    let stack = u8::try_from(rng.random_range(0..stacks)).ok()?;
    Some(Move {
        seat,
        play: Play::Stack(stack),
        cell,
    })
}

fn positions(engine: &Engine<'_>, catalog: &Catalog, n: usize) -> Vec<(GameState, Move)> {
    let mut rng = Pcg32::seed_from_u64(7);
    let mut out = Vec::with_capacity(n);
    let mut events = Vec::new();
    let decks = catalog.decks().len();
    while out.len() < n {
        let d1 = &catalog.decks()[rng.random_range(0..decks)].stacks;
        let d2 = &catalog.decks()[rng.random_range(0..decks)].stacks;
        let Ok(mut state) = engine.new_game([d1, d2], rng.random(), &mut events) else {
            continue;
        };
        let depth = rng.random_range(0..30);
        for _ in 0..depth {
            let Some(mv) = random_move(&state, &mut rng) else {
                break;
            };
            if engine.play(&mut state, mv, &mut events).is_err() {
                break;
            }
        }
        if let Some(mv) = random_move(&state, &mut rng) {
            out.push((state, mv));
        }
        events.clear();
    }
    out
}

fn bench(c: &mut Criterion) {
    let catalog = support::load("base");
    let engine = Engine::new(&catalog, &NoHooks);
    let set = positions(&engine, &catalog, 1024);

    let mut group = c.benchmark_group("moves");
    group.throughput(Throughput::Elements(set.len() as u64));
    group.bench_function("clone_apply_score", |b| {
        let mut events = Vec::with_capacity(64);
        b.iter(|| {
            for (state, mv) in &set {
                let mut s = state.clone();
                events.clear();
                let _ = black_box(engine.play(&mut s, *mv, &mut events));
                black_box(&s);
            }
        });
    });
    group.finish();

    let mut group = c.benchmark_group("parts");
    group.throughput(Throughput::Elements(set.len() as u64));
    group.bench_function("clone", |b| {
        b.iter(|| {
            for (state, _) in &set {
                black_box(state.clone());
            }
        });
    });
    group.bench_function("incomes", |b| {
        b.iter(|| {
            for (state, _) in &set {
                let _ = black_box(engine.incomes(state));
            }
        });
    });
    group.finish();

    let mut group = c.benchmark_group("playouts");
    const PLAYOUTS: u64 = 64;
    group.throughput(Throughput::Elements(PLAYOUTS));
    let deck = &catalog.decks()[0].stacks;
    group.bench_function("random", |b| {
        let mut rng = Pcg32::seed_from_u64(11);
        let mut events = Vec::with_capacity(64);
        b.iter(|| {
            for _ in 0..PLAYOUTS {
                events.clear();
                let Ok(mut state) = engine.new_game([deck, deck], rng.random(), &mut events) else {
                    continue;
                };
                while let Some(mv) = random_move(&state, &mut rng) {
                    events.clear();
                    if engine.play(&mut state, mv, &mut events).is_err() {
                        break;
                    }
                }
                black_box(&state);
            }
        });
    });
    group.finish();

    let mut group = c.benchmark_group("saves");
    let catalog = std::sync::Arc::new(catalog.clone());
    let engine = Engine::new(&catalog, &NoHooks);
    let mut rng = Pcg32::seed_from_u64(5);
    let mut opening = Vec::new();
    let start = engine
        .new_game([deck, deck], 5, &mut opening)
        .unwrap_or_else(|e| panic!("the base deck deals: {e}"));
    let mut timeline = Timeline::new(start, opening, std::sync::Arc::clone(&catalog));
    while let Some(mv) = random_move(timeline.state(), &mut rng) {
        let state = timeline.state().clone();
        if timeline.play(&engine, &catalog, state, mv).is_err() {
            break;
        }
    }
    let seats = [
        SeatRecord::Ai {
            level: "greedy".into(),
        },
        SeatRecord::Player {
            name: "me".into(),
            token: "00112233445566778899aabbccddeeff".into(),
        },
    ];
    eprintln!("saves/lan_game: a game of {} moves", timeline.steps().len());
    group.bench_function("lan_game", |b| {
        b.iter(|| {
            let replay =
                replay::record(&timeline, &catalog, 5, Vec::new(), None).with_table(seats.clone());
            black_box(replay::to_text(&replay))
        });
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
