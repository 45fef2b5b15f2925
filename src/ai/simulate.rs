//! AI-versus-AI games for balance work, in parallel, identical for a given seed whatever
//! the thread count, with per-card statistics.

use std::time::Instant;

use rayon::prelude::*;
use serde::Serialize;

use super::observe::{Observation, PublicPlay, record};
use super::{Brain, Level, Options, agent, hooks_for};
use crate::rules::{CardId, Catalog, GameState, Seat};

/// A deck taking part: its name and its stacks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeckChoice {
    /// How reports name it.
    pub id: String,
    /// The stacks, top card first.
    pub stacks: Vec<Vec<CardId>>,
}

/// What to simulate.
#[derive(Clone, Debug)]
pub struct Config {
    /// Side A's deck.
    pub deck_a: DeckChoice,
    /// Side B's decks, used in turn game by game.
    pub decks_b: Vec<DeckChoice>,
    /// Side A's level.
    pub ai_a: Level,
    /// Side B's level.
    pub ai_b: Level,
    /// Number of games; A takes seat 1 in even games, seat 2 in odd ones.
    pub games: u32,
    /// The seed every game's seed derives from.
    pub seed: u64,
    /// Worker threads (0: all cores).
    pub threads: usize,
    /// `hard`'s budget and whether agents see hidden cards.
    pub options: Options,
}

/// One card's statistics.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct CardStats {
    /// Card id.
    pub id: String,
    /// Times played.
    pub played: u64,
    /// Times it was in the hand of the seat to move.
    pub offered: u64,
    /// `played / offered`.
    pub pick_rate: f64,
    /// Average immediate change in (mover's income − opponent's income) of its moves.
    pub avg_income_swing: f64,
    /// Games in which a side played it at least once (counted per side).
    pub games_played_in: u64,
    /// The share of those games that side won (a draw counts half).
    pub win_rate_when_played: f64,
    /// Offered often but almost never chosen.
    pub dead: bool,
}

/// The result of a simulation.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Report {
    /// Games played.
    pub games: u32,
    /// Games A won.
    pub wins_a: u32,
    /// Games B won.
    pub wins_b: u32,
    /// Drawn games.
    pub draws: u32,
    /// A's share of the points (a draw counts half).
    pub win_rate_a: f64,
    /// 95 % Wilson interval of `win_rate_a`.
    pub ci95_a: [f64; 2],
    /// The share of points the seat moving first took.
    pub first_seat_win_rate: f64,
    /// A's average final score minus B's.
    pub avg_margin_a: f64,
    /// Average number of moves per game.
    pub avg_moves: f64,
    /// Games per second of wall time.
    pub games_per_second: f64,
    /// Per card, by id.
    pub cards: Vec<CardStats>,
}

/// One played card, as the statistics need it.
#[derive(Clone, Copy, Debug)]
struct PlayRecord {
    side_a: bool,
    card: CardId,
    swing: i64,
}

#[derive(Clone, Debug, Default)]
struct GameRecord {
    a_seat: Option<Seat>,
    winner: Option<Seat>,
    margin_a: i64,
    moves: u32,
    plays: Vec<PlayRecord>,
    offered: Vec<(bool, CardId)>,
}

/// A game's seed from the run's seed and the game's number (SplitMix64).
fn game_seed(seed: u64, game: u32) -> u64 {
    let mut z = seed ^ (u64::from(game).wrapping_add(1)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Play game number `g` of `config`.
fn play_game(engine: &Brain<'_>, config: &Config, g: u32) -> GameRecord {
    let seed = game_seed(config.seed, g);
    let a_seat = if g.is_multiple_of(2) {
        Seat::One
    } else {
        Seat::Two
    };
    let deck_b = &config.decks_b[g as usize % config.decks_b.len()];
    let decks = match a_seat {
        Seat::One => [&config.deck_a.stacks[..], &deck_b.stacks[..]],
        Seat::Two => [&deck_b.stacks[..], &config.deck_a.stacks[..]],
    };
    let mut events = Vec::new();
    let Ok(mut state) = engine.new_game(decks, seed, &mut events) else {
        return GameRecord::default();
    };
    let mut agents = [
        agent(config.ai_a, seed ^ 0xA, config.options),
        agent(config.ai_b, seed ^ 0xB, config.options),
    ];
    let mut history: Vec<PublicPlay> = Vec::new();
    let mut record_out = GameRecord {
        a_seat: Some(a_seat),
        ..GameRecord::default()
    };
    let mut guard = 0u32;
    while !state.is_over() && guard < 10_000 {
        guard += 1;
        let seat = state.turn();
        let side_a = seat == a_seat;
        for (_, card) in state.seat(seat).hand() {
            record_out.offered.push((side_a, card));
        }
        let obs = Observation::new(&state, seat, &history, config.options.omniscient);
        let chosen = agents[usize::from(!side_a)].choose(engine, &obs);
        let before = incomes(engine, &state);
        events.clear();
        let played = chosen.is_some_and(|mv| engine.play(&mut state, mv, &mut events).is_ok())
            || fallback(engine, &mut state, &mut events);
        if !played {
            break;
        }
        let after = incomes(engine, &state);
        let swing = (after[seat.index()] - after[seat.other().index()])
            - (before[seat.index()] - before[seat.other().index()]);
        if let Some(card) = played_card(&events) {
            record_out.plays.push(PlayRecord {
                side_a,
                card,
                swing,
            });
        }
        record(&mut history, &events);
        record_out.moves += 1;
    }
    record_out.winner = state.outcome().and_then(|o| o.winner);
    record_out.margin_a = state.score(a_seat) - state.score(a_seat.other());
    record_out
}

/// When the chosen move is refused (a failing script), play the first legal move that
/// works, so a broken card cannot stall a simulation.
fn fallback(
    engine: &Brain<'_>,
    state: &mut GameState,
    events: &mut Vec<crate::rules::Event>,
) -> bool {
    engine
        .legal_moves(state)
        .into_iter()
        .any(|mv| engine.play(state, mv, events).is_ok())
}

fn incomes(engine: &Brain<'_>, state: &GameState) -> [i64; 2] {
    engine.incomes(state).unwrap_or([0, 0])
}

fn played_card(events: &[crate::rules::Event]) -> Option<CardId> {
    events.iter().find_map(|e| match e.kind {
        crate::rules::EventKind::Cycled { card, .. } => Some(card),
        _ => None,
    })
}

/// Run the simulation; `tick` is called after each game (for a progress bar).
pub fn simulate(catalog: &Catalog, config: &Config, tick: &(dyn Fn() + Sync)) -> Report {
    let started = Instant::now();
    let run = || {
        (0..config.games)
            .into_par_iter()
            .map(|g| {
                // A fresh script host per game: whatever a script keeps in Lua between
                // calls cannot make a game depend on which games ran before it.
                let scripts = hooks_for(catalog);
                let engine = scripts.brain(catalog);
                let r = play_game(&engine, config, g);
                tick();
                r
            })
            .collect::<Vec<_>>()
    };
    let records = match rayon::ThreadPoolBuilder::new()
        .num_threads(config.threads)
        .stack_size(crate::script::THREAD_STACK)
        .build()
    {
        Ok(pool) => pool.install(run),
        Err(_) => run(),
    };
    let seconds = started.elapsed().as_secs_f64();
    summarize(catalog, &records, seconds)
}

#[allow(clippy::cast_precision_loss)]
fn summarize(catalog: &Catalog, records: &[GameRecord], seconds: f64) -> Report {
    let games = u32::try_from(records.len()).unwrap_or(u32::MAX);
    let (mut wins_a, mut wins_b, mut draws, mut first) = (0u32, 0u32, 0u32, 0.0f64);
    let (mut margin, mut moves) = (0i64, 0u64);
    let n_cards = catalog.cards().len();
    let mut played = vec![0u64; n_cards];
    let mut offered = vec![0u64; n_cards];
    let mut swing = vec![0i64; n_cards];
    let mut in_games = vec![0u64; n_cards];
    let mut points = vec![0.0f64; n_cards];
    for r in records {
        let a = r.a_seat.unwrap_or(Seat::One);
        let points_a = match r.winner {
            Some(w) if w == a => {
                wins_a += 1;
                1.0
            }
            Some(_) => {
                wins_b += 1;
                0.0
            }
            None => {
                draws += 1;
                0.5
            }
        };
        first += match r.winner {
            Some(Seat::One) => 1.0,
            Some(Seat::Two) => 0.0,
            None => 0.5,
        };
        margin += r.margin_a;
        moves += u64::from(r.moves);
        for &(_, card) in &r.offered {
            if let Some(o) = offered.get_mut(card.index()) {
                *o += 1;
            }
        }
        for side_a in [true, false] {
            let mut seen = vec![false; n_cards];
            for p in r.plays.iter().filter(|p| p.side_a == side_a) {
                let i = p.card.index();
                if i >= n_cards {
                    continue;
                }
                played[i] += 1;
                swing[i] += p.swing;
                if !seen[i] {
                    seen[i] = true;
                    in_games[i] += 1;
                    points[i] += if side_a { points_a } else { 1.0 - points_a };
                }
            }
        }
    }
    let n = f64::from(games.max(1));
    let win_rate_a = (f64::from(wins_a) + 0.5 * f64::from(draws)) / n;
    let cards = catalog
        .card_ids()
        .filter(|c| offered[c.index()] > 0)
        .map(|c| {
            let i = c.index();
            let pick_rate = played[i] as f64 / offered[i].max(1) as f64;
            CardStats {
                id: catalog.card(c).meta.id.clone(),
                played: played[i],
                offered: offered[i],
                pick_rate,
                avg_income_swing: if played[i] > 0 {
                    swing[i] as f64 / played[i] as f64
                } else {
                    0.0
                },
                games_played_in: in_games[i],
                win_rate_when_played: if in_games[i] > 0 {
                    points[i] / in_games[i] as f64
                } else {
                    0.0
                },
                dead: offered[i] >= 30 && pick_rate < 0.05,
            }
        })
        .collect();
    Report {
        games,
        wins_a,
        wins_b,
        draws,
        win_rate_a,
        ci95_a: wilson(win_rate_a, n),
        first_seat_win_rate: first / n,
        avg_margin_a: margin as f64 / n,
        avg_moves: moves as f64 / n,
        games_per_second: if seconds > 0.0 && games > 0 {
            f64::from(games) / seconds
        } else {
            0.0
        },
        cards,
    }
}

/// The 95 % Wilson score interval of a proportion `p` over `n` trials.
#[must_use]
pub fn wilson(p: f64, n: f64) -> [f64; 2] {
    if n <= 0.0 {
        return [0.0, 1.0];
    }
    let z = 1.959_964;
    let z2 = z * z;
    let centre = (p + z2 / (2.0 * n)) / (1.0 + z2 / n);
    let half = z * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt() / (1.0 + z2 / n);
    [(centre - half).max(0.0), (centre + half).min(1.0)]
}
