//! The AI against hostile scripts, in figures: the worst decision with a hand of runaway
//! cards and a looping `ai.lua` against the decision's script budget, and the peak
//! memory of `simulate` with 8 threads over packs whose scripts fill their caps.
//!
//! Run with `cargo bench --bench ai_budget` (release). Prints a table; no assertion.
//! `cargo bench --bench ai_budget -- memory` runs only the memory figure (its peak is the
//! process's, so run it alone to read it).

use std::path::Path;
use std::time::{Duration, Instant};

use tokensmith::ai::simulate::{self, Config, DeckChoice};
use tokensmith::ai::{Budget, Level, Options, ScriptLimits, agent};
use tokensmith::observe::{History, Observation};
use tokensmith::rules::Catalog;

mod support;

const REQUIRES: &str = "version: 1.0.0\nrequires:\n  - { id: base, version: \"^1\" }\n";

/// `VmHWM` of this process, in MB (Linux).
fn peak_mb() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with("VmHWM"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|kb| kb.parse::<f64>().ok())
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

fn write(dir: &Path, files: &[(String, String)]) {
    for (path, text) in files {
        let path = dir.join(path);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).unwrap_or_else(|e| panic!("{e}"));
        }
        std::fs::write(&path, text).unwrap_or_else(|e| panic!("{e}"));
    }
}

fn load(dir: &Path) -> Catalog {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    support::load_from(&[root.join("content"), dir.to_path_buf()], None)
}

/// Eight cards whose `on_place` loops forever, and an `ai.lua` whose `evaluate` does.
fn runaway_pack(dir: &Path) {
    let mut cards =
        String::from("abilities:\n  - id: spin\n    script: scripts/spin.lua\ncards:\n");
    for i in 0..8 {
        cards.push_str(&format!(
            "  - id: spinner{i}\n    value: 5\n    ability: spin\n    area: cross\n"
        ));
    }
    write(
        dir,
        &[
            (
                "spin/pack.yaml".into(),
                format!("id: spin\nname: Spin\n{REQUIRES}"),
            ),
            ("spin/content.yaml".into(), cards),
            (
                "spin/scripts/spin.lua".into(),
                "return { on_place = function(ctx) while true do end end }\n".into(),
            ),
            (
                "spin/ai.lua".into(),
                "return { evaluate = function(ctx, seat) while true do end end }\n".into(),
            ),
        ],
    );
}

fn decisions() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    runaway_pack(dir.path());
    let catalog = load(dir.path());
    let spinners: Vec<_> = (0..8)
        .map(|i| {
            catalog
                .card_named(&format!("spin:spinner{i}"))
                .unwrap_or_else(|e| panic!("{e}"))
        })
        .collect();
    let hand: Vec<Vec<_>> = spinners.chunks(2).map(<[_]>::to_vec).collect();
    let starter = catalog.decks()[0].stacks.clone();
    println!("worst decision, a hand of runaway cards and a looping evaluate (one thread):");
    println!("| level | script budget | first decision | worst of 6 turns | limit ×2 |");
    println!("|---|---|---|---|---|");
    let budgets = [
        ScriptLimits::DEFAULT,
        ScriptLimits {
            instructions: u64::MAX / 4,
            wall_ms: 200,
        },
    ];
    for limits in budgets {
        for level in [Level::Greedy, Level::Normal, Level::Hard] {
            // A fresh brain per game, as in play; each turn the same hand comes back
            // (the stacks turn), and the opponent plays greedy with the real engine.
            let scripts = tokensmith::ai::hooks_for(&catalog);
            let brain = scripts.brain(&catalog);
            let mut state = brain
                .engine()
                .new_game([&hand, &starter], 3, &mut Vec::new())
                .unwrap_or_else(|e| panic!("{e}"));
            let options = Options {
                budget: Budget::Iterations(200),
                scripts: limits,
                ..Options::default()
            };
            let mut ai = agent(level, 1, options);
            let mut other = agent(Level::Greedy, 2, Options::default());
            let (mut first, mut worst) = (None, Duration::ZERO);
            let mut events = Vec::new();
            for _ in 0..12 {
                if state.is_over() {
                    break;
                }
                let obs = Observation::new(&state, state.turn(), &History::default(), false);
                let mine = state.turn() == tokensmith::rules::Seat::One;
                let started = Instant::now();
                let mv = if mine {
                    ai.choose(&brain, &obs)
                } else {
                    other.choose(&brain, &obs)
                };
                let took = started.elapsed();
                if mine {
                    first.get_or_insert(took);
                    worst = worst.max(took);
                }
                let played = mv
                    .is_some_and(|mv| brain.engine().play(&mut state, mv, &mut events).is_ok())
                    || brain
                        .engine()
                        .legal_moves(&state)
                        .into_iter()
                        .any(|mv| brain.engine().play(&mut state, mv, &mut events).is_ok());
                if !played {
                    break;
                }
            }
            let label = if limits == ScriptLimits::DEFAULT {
                "default (20 M instructions, 1000 ms)".to_string()
            } else {
                format!("{} ms", limits.wall_ms)
            };
            println!(
                "| {} | {label} | {:.0} ms | {:.0} ms | {} ms |",
                level.name(),
                first.unwrap_or_default().as_secs_f64() * 1000.0,
                worst.as_secs_f64() * 1000.0,
                2 * limits.wall_ms
            );
        }
    }
}

/// Four packs whose top levels fill `fill_mb` of their `cap_mb` cap, each with a card.
fn filled_packs(dir: &Path, packs: usize, cap_mb: usize, fill_mb: usize) {
    let mut files = Vec::new();
    for p in 0..packs {
        files.push((
            format!("fat{p}/pack.yaml"),
            format!(
                "id: fat{p}\nname: Fat {p}\n{REQUIRES}scripts: {{ instructions: 50000000, memory_kb: {} }}\n",
                cap_mb * 1024
            ),
        ));
        files.push((
            format!("fat{p}/content.yaml"),
            "abilities:\n  - id: fat\n    script: scripts/fat.lua\ncards:\n  - id: fat\n    value: 3\n    ability: fat\n    area: cross\n".to_string(),
        ));
        files.push((
            format!("fat{p}/scripts/fat.lua"),
            format!(
                "local kept = {{}}\nfor i = 1, {fill_mb} do kept[i] = string.rep('x', 1024 * 1024 - 64) .. i end\nreturn {{ on_place = function(ctx) return #kept end }}\n"
            ),
        ));
    }
    write(dir, &files);
}

fn memory() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    // Three packs filling 40 MiB of a 48 MiB cap each: 120 MiB, within the content set's
    // total (four would not load).
    filled_packs(dir.path(), 3, 48, 40);
    let at_rest = peak_mb();
    let catalog = load(dir.path());
    let deck = |i: usize| DeckChoice {
        id: catalog.decks()[i].meta.id.clone(),
        stacks: catalog.decks()[i].stacks.clone(),
        per_game: false,
    };
    let config = Config {
        deck_a: deck(0),
        decks_b: vec![deck(0)],
        ai_a: Level::Greedy,
        ai_b: Level::Greedy,
        games: 64,
        seed: 1,
        threads: 8,
        options: Options::default(),
        max_moves: simulate::MAX_MOVES,
        shard: None,
    };
    let (workers, note) = simulate::workers(&catalog, 8);
    let started = Instant::now();
    let report = simulate::simulate(&catalog, &config, &|| {});
    println!(
        "memory: 3 packs × 40 MiB of scripts (48 MiB caps), simulate --threads 8: {workers} workers, {} games in {:.1} s, peak RSS {:.0} MB (at rest {:.0} MB){}",
        report.games,
        started.elapsed().as_secs_f64(),
        peak_mb(),
        at_rest,
        note.map(|n| format!("; note: {n}")).unwrap_or_default()
    );
    let four = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    filled_packs(four.path(), 4, 48, 40);
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let loaded = support::load_report(&[root.join("content"), four.path().to_path_buf()], None);
    println!(
        "4 packs × 40 MiB: loads {}; {}",
        loaded.catalog.is_some(),
        loaded
            .diagnostics
            .iter()
            .map(|d| d.message.clone())
            .collect::<Vec<_>>()
            .join(" / ")
    );
}

fn main() {
    let only: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let wants = |name: &str| only.is_empty() || only.iter().any(|o| o == name);
    if wants("memory") {
        memory();
    }
    if wants("decisions") {
        decisions();
    }
}
