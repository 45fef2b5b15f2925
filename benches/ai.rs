//! AI throughput on the base pack: greedy decisions, `hard`'s search iterations, and whole
//! greedy-versus-greedy games. Run with `cargo bench --bench ai`.

#[path = "support.rs"]
mod support;

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use rand::SeedableRng;
use rand_pcg::Pcg32;
use tokensmith::ai::simulate::{self, Config, DeckChoice};
use tokensmith::ai::{Budget, Level, Options, agent};
use tokensmith::observe::{History, Observation};
use tokensmith::rules::{Catalog, Engine, GameState};

fn midgame(engine: &Engine<'_>, catalog: &Catalog, n: usize) -> Vec<GameState> {
    let mut rng = Pcg32::seed_from_u64(9);
    let deck = &catalog.decks()[0].stacks;
    let mut events = Vec::new();
    let mut out = Vec::new();
    while out.len() < n {
        let Some(state) = support::random_play(engine, deck, &mut rng, 2..20, &mut events) else {
            continue;
        };
        if !state.is_over() {
            out.push(state);
        }
    }
    out
}

fn bench(c: &mut Criterion) {
    let catalog = support::load("base");
    let scripts = tokensmith::ai::hooks_for(&catalog);
    let engine = scripts.brain(&catalog);
    let states = midgame(engine.engine(), &catalog, 64);

    let mut group = c.benchmark_group("decisions");
    group.throughput(Throughput::Elements(states.len() as u64));
    group.bench_function("greedy", |b| {
        let mut a = agent(Level::Greedy, 1, Options::default());
        b.iter(|| {
            for s in &states {
                let obs = Observation::new(s, s.turn(), &History::default(), false);
                black_box(a.choose(&engine, &obs));
            }
        });
    });
    group.finish();

    let mut group = c.benchmark_group("mcts");
    const ITERATIONS: u32 = 2_000;
    group.throughput(Throughput::Elements(u64::from(ITERATIONS)));
    group.sample_size(20);
    group.bench_function("iterations", |b| {
        let options = Options {
            budget: Budget::Iterations(ITERATIONS),
            omniscient: false,
            scripts: tokensmith::ai::ScriptLimits::DEFAULT,
        };
        let mut a = agent(Level::Hard, 1, options);
        let s = &states[0];
        b.iter(|| {
            let obs = Observation::new(s, s.turn(), &History::default(), false);
            black_box(a.choose(&engine, &obs));
        });
    });
    group.finish();

    let mut group = c.benchmark_group("simulate");
    const GAMES: u32 = 200;
    group.throughput(Throughput::Elements(u64::from(GAMES)));
    group.sample_size(10);
    let deck = DeckChoice {
        id: "starter".into(),
        stacks: catalog.decks()[0].stacks.clone(),
        per_game: false,
    };
    for threads in [1usize, 2] {
        group.bench_function(format!("greedy_vs_greedy_{threads}_threads"), |b| {
            let config = Config {
                deck_a: deck.clone(),
                decks_b: vec![deck.clone()],
                ai_a: Level::Greedy,
                ai_b: Level::Greedy,
                games: GAMES,
                seed: 1,
                threads,
                options: Options::default(),
                max_moves: simulate::MAX_MOVES,
                shard: None,
            };
            b.iter(|| black_box(simulate::simulate(&catalog, &config, &|| {})));
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
