//! AI-versus-AI games for balance work, in parallel, identical for a given seed whatever
//! the thread count, with per-card statistics.
//!
//! Each game has its own seed (derived from the run's and the game's number) and its own
//! agents, and results are collected in game order. A run can be split into shards
//! (`--shard K/N`, or read from a scheduler's array job by [`shard_from_env`]); [`merge`]
//! adds the shards' raw sums into the whole run's report, and refuses shards of another run
//! or of other content ([`RunInfo::content`]), a shard given twice and missing ones.

use std::time::Instant;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::{Brain, Level, Options, agent, hooks_for};
use crate::observe::{History, Observation};
use crate::rules::{CardId, Catalog, GameState, Seat};

/// A deck taking part: its name and its stacks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeckChoice {
    /// How reports name it.
    pub id: String,
    /// The stacks, top card first.
    pub stacks: Vec<Vec<CardId>>,
    /// Random content drawn anew for every pair of games (the stacks are unused): games
    /// `2k` and `2k + 1` draw the same two decks, and the sides swap them, so neither
    /// side keeps a lucky deck.
    pub per_game: bool,
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
    /// A game still going after this many moves is stopped and counted as capped (a
    /// draw in the tallies).
    pub max_moves: u32,
    /// Play only this share of the games: `(k, n)` plays game `g` when `g % n == k - 1`
    /// (`k` from 1). The shards of one run merge into its report ([`merge`]).
    pub shard: Option<(u32, u32)>,
}

/// The default move cap.
pub const MAX_MOVES: u32 = 10_000;

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
    /// Moves with it refused: by the engine (an illegal move the AI chose) and by its
    /// scripts (a hook failed, the move was rolled back). Each card is also tried once
    /// per game, on a copy, the first time it is offered; a script failure there counts
    /// too (an agent skips moves that fail, so a broken card is never chosen).
    pub refused: u64,
    /// Of those, refused by a script.
    pub refused_by_script: u64,
    /// The first refusal's message (`pack/scripts/file.lua:LINE: …` for a script).
    pub first_error: Option<String>,
    /// Its scripts refused moves: the card is broken, whatever its pick rate says.
    pub broken: bool,
    /// Offered often but almost never chosen (and not broken).
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
    /// Games stopped at the move cap (counted as draws above).
    pub capped_games: u32,
    /// The cap.
    pub max_moves: u32,
    /// Which deck pairings hit the cap, and how often (`A vs B`).
    pub capped_pairings: Vec<(String, u32)>,
    /// Moves refused by scripts, all cards together.
    pub script_refusals: u64,
    /// Moves refused by the engine.
    pub engine_refusals: u64,
    /// AI decisions whose look-ahead ran out of its script budget
    /// (`--ai-script-instructions`, `--ai-script-ms`) and chose among the moves rated by
    /// then.
    pub decisions_cut: u64,
    /// Game quality (src/ai/quality.rs).
    pub quality: super::quality::Quality,
    /// The raw sums the figures above come from: what [`merge`] adds up.
    pub totals: Totals,
}

/// What identifies a run, so only shards of the same run merge.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct RunInfo {
    /// Side A's deck.
    pub deck_a: String,
    /// Side B's decks.
    pub decks_b: Vec<String>,
    /// Levels.
    pub ai_a: String,
    /// Levels.
    pub ai_b: String,
    /// Games in the whole run.
    pub games: u32,
    /// Seed.
    pub seed: u64,
    /// `hard`'s budget, as text.
    pub budget: String,
    /// What one AI decision may spend on scripts, as text.
    #[serde(default)]
    pub scripts: String,
    /// Omniscient agents.
    pub omniscient: bool,
    /// The move cap.
    pub max_moves: u32,
    /// Shards of the run (1: unsharded).
    pub shards: u32,
    /// What the run plays with: a hash of its packs (ids, versions, content hashes) and
    /// its decks' cards, set by the command that runs it (empty: not known), so shards
    /// made with other packs do not merge.
    #[serde(default)]
    pub content: String,
}

/// One card's raw sums.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq, Default)]
pub struct CardTotals {
    /// Card id.
    pub id: String,
    /// Times played.
    pub played: u64,
    /// Times offered.
    pub offered: u64,
    /// Sum of income swings.
    pub swing: i64,
    /// Games played in (per side).
    pub in_games: u64,
    /// Twice the points won in those games (a draw is 1).
    pub points2: u64,
    /// Refused by the engine.
    pub refused_engine: u64,
    /// Refused by scripts.
    pub refused_script: u64,
    /// The first refusal: its game number and message.
    pub first_error: Option<(u32, String)>,
}

/// A run's (or shard's) raw sums.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Default)]
pub struct Totals {
    /// The run.
    pub run: Option<RunInfo>,
    /// The shards summed in (1-based numbers).
    pub shards: Vec<u32>,
    /// Games.
    pub games: u32,
    /// A's wins.
    pub wins_a: u32,
    /// B's wins.
    pub wins_b: u32,
    /// Draws (capped games included).
    pub draws: u32,
    /// Twice the first seat's points.
    pub first2: u64,
    /// Sum of A's margins.
    pub margin: i64,
    /// Sum of moves.
    pub moves: u64,
    /// Games capped, by pairing.
    pub capped: std::collections::BTreeMap<String, u32>,
    /// AI decisions cut short by their script budget.
    #[serde(default)]
    pub decisions_cut: u64,
    /// Wall time, seconds (summed over shards).
    pub seconds: f64,
    /// Every card of the catalog, in its order.
    pub cards: Vec<CardTotals>,
    /// Game quality's sums (src/ai/quality.rs).
    #[serde(default)]
    pub quality: super::quality::QualityTotals,
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
    game: u32,
    a_seat: Option<Seat>,
    winner: Option<Seat>,
    margin_a: i64,
    moves: u32,
    plays: Vec<PlayRecord>,
    offered: Vec<(bool, CardId)>,
    capped: Option<String>,
    refusals: Vec<Refusal>,
    /// AI decisions cut short by their script budget.
    cuts: u64,
    /// Game quality: the score lead after each move (src/ai/quality.rs).
    trace: super::quality::GameTrace,
}

/// A move the engine or a script refused.
#[derive(Clone, Debug)]
struct Refusal {
    card: CardId,
    script: bool,
    message: String,
}

/// A game's seed from the run's seed and the game's number (SplitMix64).
fn game_seed(seed: u64, game: u32) -> u64 {
    let mut z = seed ^ (u64::from(game).wrapping_add(1)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Play game number `g` of `config`.
fn play_game(brain: &Brain<'_>, config: &Config, g: u32) -> GameRecord {
    let seed = game_seed(config.seed, g);
    let a_seat = if g.is_multiple_of(2) {
        Seat::One
    } else {
        Seat::Two
    };
    let deck_b = &config.decks_b[g as usize % config.decks_b.len()];
    // Random content per pair of games: decks X and Y; A has X in the even game and Y in
    // the odd one, B the other.
    let drawn = (config.deck_a.per_game || deck_b.per_game).then(|| {
        let pair = game_seed(config.seed, g / 2);
        let draw = |n: u64| {
            super::decks::random_content(brain, pair.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ n)
                .unwrap_or_default()
        };
        let (x, y) = (draw(1), draw(2));
        if g.is_multiple_of(2) { (x, y) } else { (y, x) }
    });
    let own_a = match (&drawn, config.deck_a.per_game) {
        (Some((a, _)), true) => a,
        _ => &config.deck_a.stacks,
    };
    let own_b = match (&drawn, deck_b.per_game) {
        (Some((_, b)), true) => b,
        _ => &deck_b.stacks,
    };
    let decks = match a_seat {
        Seat::One => [&own_a[..], &own_b[..]],
        Seat::Two => [&own_b[..], &own_a[..]],
    };
    let mut events = Vec::new();
    let Ok(mut state) = brain.engine().new_game(decks, seed, &mut events) else {
        return GameRecord::default();
    };
    let mut agents = [
        agent(config.ai_a, seed ^ 0xA, config.options),
        agent(config.ai_b, seed ^ 0xB, config.options),
    ];
    let mut history =
        if !config.options.omniscient && (config.ai_a.fills_in() || config.ai_b.fills_in()) {
            History::new()
        } else {
            History::plays_only()
        };
    let mut record_out = GameRecord {
        game: g,
        a_seat: Some(a_seat),
        ..GameRecord::default()
    };
    let mut guard = 0u32;
    // Each seat's income on the board as it stands: a move's own scoring says it for the
    // board the move leaves, so it is worked out here only once, for the start.
    let mut income = incomes(brain, &state);
    // Only scripts can refuse a legal move: without them there is nothing to probe.
    let mut probed = if brain.engine().catalog().has_scripts() {
        vec![false; brain.engine().catalog().cards().len()]
    } else {
        Vec::new()
    };
    while !state.is_over() {
        if guard >= config.max_moves {
            record_out.capped = Some(format!("{} vs {}", config.deck_a.id, deck_b.id));
            break;
        }
        guard += 1;
        let seat = state.turn();
        let side_a = seat == a_seat;
        for (stack, card) in state.seat(seat).hand() {
            record_out.offered.push((side_a, card));
            probe(
                brain,
                &state,
                seat,
                stack,
                card,
                &mut probed,
                &mut record_out.refusals,
            );
        }
        let obs = Observation::new(&state, seat, &history, config.options.omniscient);
        let chosen = agents[usize::from(!side_a)].choose(brain, &obs);
        let before = income;
        let position = history.position_of(&state);
        events.clear();
        let played = chosen.is_some_and(|mv| {
            attempt(brain, &mut state, mv, &mut events, &mut record_out.refusals)
        }) || fallback(brain, &mut state, &mut events, &mut record_out.refusals);
        if !played {
            break;
        }
        let after = scored(&events).unwrap_or_else(|| incomes(brain, &state));
        income = after;
        let swing = (after[seat.index()] - after[seat.other().index()])
            - (before[seat.index()] - before[seat.other().index()]);
        if let Some(card) = played_card(&events) {
            record_out.plays.push(PlayRecord {
                side_a,
                card,
                swing,
            });
        }
        history.record(position, &events);
        record_out.moves += 1;
        // Game quality (src/ai/quality.rs).
        record_out
            .trace
            .push(state.score(Seat::One) - state.score(Seat::Two));
    }
    record_out.cuts = brain.cuts();
    record_out.winner = state.outcome().and_then(|o| o.winner);
    record_out.trace.first_seat_won = record_out.winner.map(|w| w == Seat::One);
    record_out.margin_a = state.score(a_seat) - state.score(a_seat.other());
    record_out
}

/// When the chosen move is refused (a failing script), play the first legal move that
/// works, so a broken card cannot stall a simulation.
fn fallback(
    brain: &Brain<'_>,
    state: &mut GameState,
    events: &mut Vec<crate::rules::Event>,
    refusals: &mut Vec<Refusal>,
) -> bool {
    brain
        .engine()
        .legal_moves(state)
        .into_iter()
        .any(|mv| attempt(brain, state, mv, events, refusals))
}

/// The first time a card is offered in a game, play it once on a copy at the first free
/// cell: a card whose script fails there is recorded as refused by its script even when
/// no agent ever chooses it (an agent's look-ahead skips moves that fail, so a broken
/// card would otherwise only look unpopular).
fn probe(
    brain: &Brain<'_>,
    state: &GameState,
    seat: Seat,
    stack: u8,
    card: CardId,
    probed: &mut [bool],
    refusals: &mut Vec<Refusal>,
) {
    let Some(seen) = probed.get_mut(card.index()) else {
        return;
    };
    if *seen {
        return;
    }
    *seen = true;
    let board = state.board();
    let Some(cell) = (0..board.len())
        .filter(|&i| board.at(i).is_none())
        .map(|i| board.cell(i))
        .next()
    else {
        return;
    };
    let mv = crate::rules::Move {
        seat,
        play: crate::rules::Play::Stack(stack),
        cell,
    };
    let mut copy = state.clone();
    if let Err(e @ crate::rules::MoveError::Script(_)) = brain.play_lookahead(&mut copy, mv) {
        refusals.push(Refusal {
            card,
            script: true,
            message: e.to_string(),
        });
    }
}

/// Play `mv`; a refusal is recorded against its card.
fn attempt(
    brain: &Brain<'_>,
    state: &mut GameState,
    mv: crate::rules::Move,
    events: &mut Vec<crate::rules::Event>,
    refusals: &mut Vec<Refusal>,
) -> bool {
    match brain.engine().play(state, mv, events) {
        Ok(()) => true,
        Err(e) => {
            // A refused move changed nothing: its card is still where it was.
            if let Ok(card) = brain.engine().card_played(state, mv) {
                refusals.push(Refusal {
                    card,
                    script: matches!(e, crate::rules::MoveError::Script(_)),
                    message: e.to_string(),
                });
            }
            false
        }
    }
}

fn incomes(brain: &Brain<'_>, state: &GameState) -> [i64; 2] {
    brain.engine().incomes(state).unwrap_or([0, 0])
}

/// Each seat's income as a move's events scored it: the income of the board the move
/// left (scoring is a move's last change). `None` when a seat did not score.
fn scored(events: &[crate::rules::Event]) -> Option<[i64; 2]> {
    let mut out = [None, None];
    for e in events {
        if let crate::rules::EventKind::Scored { seat, income, .. } = e.kind {
            out[seat.index()] = Some(income);
        }
    }
    Some([out[0]?, out[1]?])
}

fn played_card(events: &[crate::rules::Event]) -> Option<CardId> {
    events.iter().find_map(|e| match e.kind {
        crate::rules::EventKind::Cycled { card, .. } => Some(card),
        _ => None,
    })
}

/// The worker threads a simulation of `catalog` runs with when `threads` are asked for
/// (0: every core): each worker holds a script host, so no more than the hosts that fit
/// in the process's free script memory ([`crate::script::memory`]), and at least one.
/// With fewer than asked, also what to tell the user.
#[must_use]
pub fn workers(catalog: &Catalog, threads: usize) -> (usize, Option<String>) {
    let wanted = if threads == 0 {
        std::thread::available_parallelism().map_or(1, std::num::NonZero::get)
    } else {
        threads
    };
    let fit = crate::script::memory::hosts_that_fit(catalog);
    if fit >= wanted {
        return (wanted, None);
    }
    let share = crate::script::memory::host_share(catalog).div_ceil(1024 * 1024);
    let workers = fit.max(1);
    (
        workers,
        Some(format!(
            "running {workers} worker thread(s) instead of {wanted}: each needs {share} MiB of script memory for these packs, and {} MiB of the {} MiB all script hosts may hold together is free",
            crate::script::memory::free() / (1024 * 1024),
            crate::script::memory::PROCESS_MEMORY / (1024 * 1024)
        )),
    )
}

/// Run the simulation; `tick` is called after each game (for a progress bar). It runs
/// on [`workers`] threads.
pub fn simulate(catalog: &Catalog, config: &Config, tick: &(dyn Fn() + Sync)) -> Report {
    let started = Instant::now();
    let games: Vec<u32> = (0..config.games)
        .filter(|&g| in_shard(g, config.shard))
        .collect();
    let run = || {
        games
            .par_iter()
            .copied()
            .map(|g| {
                // This thread's script host (every move starts from the scripts' loaded
                // state, so no game depends on which games ran before it on the thread)
                // and a fresh brain: what a game's look-ahead learns (runaway cards)
                // stays in that game, so no game depends on the thread either.
                let scripts = hooks_for(catalog);
                let brain = scripts.brain(catalog);
                let r = play_game(&brain, config, g);
                tick();
                r
            })
            .collect::<Vec<_>>()
    };
    let records = in_pool(workers(catalog, config.threads).0, run);
    let seconds = started.elapsed().as_secs_f64();
    let mut totals = tally(catalog, &records, seconds);
    totals.run = Some(run_info(config));
    totals.shards = vec![config.shard.map_or(1, |(k, _)| k)];
    summarize(totals)
}

/// Whether game `g` is one of `shard`'s (all games are, unsharded).
fn in_shard(g: u32, shard: Option<(u32, u32)>) -> bool {
    shard.is_none_or(|(k, n)| n > 0 && g % n == k.saturating_sub(1))
}

/// How many of a run's `games` shard `k` of `n` plays.
#[must_use]
pub fn shard_games(games: u32, k: u32, n: u32) -> u32 {
    if n == 0 || k == 0 || k > games {
        return 0;
    }
    (games - k) / n + 1
}

/// A's points in each game of `config` (1 a win, ½ a draw, 0 a loss), in game order: what
/// paired comparisons need. A sharded config plays only its shard's games (still in game
/// order). `tick` is called after each game.
pub fn outcomes(catalog: &Catalog, config: &Config, tick: &(dyn Fn() + Sync)) -> Vec<f64> {
    let games: Vec<u32> = (0..config.games)
        .filter(|&g| in_shard(g, config.shard))
        .collect();
    let run = || {
        games
            .par_iter()
            .copied()
            .map(|g| {
                let scripts = hooks_for(catalog);
                let brain = scripts.brain(catalog);
                let r = play_game(&brain, config, g);
                tick();
                match r.winner {
                    Some(w) if Some(w) == r.a_seat => 1.0,
                    Some(_) => 0.0,
                    None => 0.5,
                }
            })
            .collect::<Vec<_>>()
    };
    in_pool(workers(catalog, config.threads).0, run)
}

/// Run `run` in a pool of `threads` worker threads, each with the stack scripts need
/// ([`crate::script::THREAD_STACK`]): the one place simulations set up their threads.
/// When the system refuses that many threads, one worker thread is tried, and only then
/// the calling thread (with rayon's global pool for the parallel parts). Results do not
/// depend on the number of threads, only the time does.
fn in_pool<T: Send>(threads: usize, run: impl FnOnce() -> T + Send) -> T {
    let pool = |n: usize| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .stack_size(crate::script::THREAD_STACK)
            .build()
    };
    match pool(threads).or_else(|_| pool(1)) {
        Ok(pool) => pool.install(run),
        Err(_) => run(),
    }
}

fn run_info(config: &Config) -> RunInfo {
    RunInfo {
        deck_a: config.deck_a.id.clone(),
        decks_b: config.decks_b.iter().map(|d| d.id.clone()).collect(),
        ai_a: config.ai_a.name().into(),
        ai_b: config.ai_b.name().into(),
        games: config.games,
        seed: config.seed,
        budget: format!("{:?}", config.options.budget),
        scripts: format!(
            "{} instructions, {} ms",
            config.options.scripts.instructions, config.options.scripts.wall_ms
        ),
        omniscient: config.options.omniscient,
        max_moves: config.max_moves,
        shards: config.shard.map_or(1, |(_, n)| n),
        content: String::new(),
    }
}

/// Why shard reports cannot be merged. Reports are numbered from 1 in the order given;
/// [`MergeError::report`] says which one is at fault (the command line names its file).
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum MergeError {
    /// No report given.
    #[error("no reports to merge")]
    Empty,
    /// A report has no run description (made by an older version).
    #[error(
        "has no `totals.run` (it was made by an older version): make it again with this version"
    )]
    NoRun(usize),
    /// Two reports are of different runs.
    #[error(
        "is of another run than the first report: its `totals.run.{field}` is {this}, the first report's is {first} (the shards of one run have the same decks, levels, games, seed, budgets, move cap and shard count)"
    )]
    OtherRun {
        /// The report, from 1.
        report: usize,
        /// The first field of `totals.run` that differs.
        field: String,
        /// Its value in the first report (JSON).
        first: String,
        /// Its value in this report (JSON).
        this: String,
    },
    /// Two reports are of different content.
    #[error("was made with other cards than the first report: {0}")]
    OtherCards(usize, String),
    /// A shard appears twice.
    #[error("holds shard {1}, which an earlier report holds too: give each shard once")]
    Twice(usize, u32),
    /// Shards are missing.
    #[error("shards missing: {0:?} (of {1})")]
    Missing(Vec<u32>, u32),
}

impl MergeError {
    /// The report at fault (from 1), when one is.
    #[must_use]
    pub fn report(&self) -> Option<usize> {
        match self {
            MergeError::NoRun(i)
            | MergeError::OtherRun { report: i, .. }
            | MergeError::OtherCards(i, _)
            | MergeError::Twice(i, _) => Some(*i),
            MergeError::Empty | MergeError::Missing(..) => None,
        }
    }
}

/// The first field of two run descriptions that differs: (field, first's, other's).
pub(super) fn first_difference<T: Serialize>(first: &T, other: &T) -> (String, String, String) {
    let (a, b) = (
        serde_json::to_value(first).unwrap_or_default(),
        serde_json::to_value(other).unwrap_or_default(),
    );
    if let (Some(a), Some(b)) = (a.as_object(), b.as_object()) {
        for (key, va) in a {
            let vb = b.get(key).cloned().unwrap_or_default();
            if *va != vb {
                return (key.clone(), va.to_string(), vb.to_string());
            }
        }
    }
    ("?".into(), String::new(), String::new())
}

/// How two card lists differ, in words.
fn cards_difference(first: &[CardTotals], other: &[CardTotals]) -> String {
    match first.iter().zip(other).position(|(a, b)| a.id != b.id) {
        Some(i) => format!(
            "its card {} is '{}', the first report's is '{}'",
            i + 1,
            crate::rules::echo(&other[i].id),
            crate::rules::echo(&first[i].id)
        ),
        None => format!(
            "it has {} cards, the first report has {}",
            other.len(),
            first.len()
        ),
    }
}

/// Add up the totals of a run's shards (every shard once) into the report the whole run
/// gives. `games_per_second` is the summed games over the summed seconds.
pub fn merge(parts: &[Totals]) -> Result<Report, MergeError> {
    let first = parts.first().ok_or(MergeError::Empty)?;
    let run = first.run.clone().ok_or(MergeError::NoRun(1))?;
    let mut total = Totals {
        run: Some(run.clone()),
        cards: first
            .cards
            .iter()
            .map(|c| CardTotals {
                id: c.id.clone(),
                ..CardTotals::default()
            })
            .collect(),
        ..Totals::default()
    };
    for (i, part) in parts.iter().enumerate() {
        match &part.run {
            None => return Err(MergeError::NoRun(i + 1)),
            Some(r) if *r != run => {
                let (field, first, this) = first_difference(&run, r);
                return Err(MergeError::OtherRun {
                    report: i + 1,
                    field,
                    first,
                    this,
                });
            }
            Some(_) => {}
        }
        if part.cards.len() != total.cards.len()
            || part
                .cards
                .iter()
                .zip(&total.cards)
                .any(|(a, b)| a.id != b.id)
        {
            return Err(MergeError::OtherCards(
                i + 1,
                cards_difference(&first.cards, &part.cards),
            ));
        }
        for &k in &part.shards {
            if total.shards.contains(&k) {
                return Err(MergeError::Twice(i + 1, k));
            }
            total.shards.push(k);
        }
        total.games += part.games;
        total.wins_a += part.wins_a;
        total.wins_b += part.wins_b;
        total.draws += part.draws;
        total.first2 += part.first2;
        total.margin += part.margin;
        total.moves += part.moves;
        total.decisions_cut += part.decisions_cut;
        total.seconds += part.seconds;
        total.quality.merge(&part.quality); // Game quality (src/ai/quality.rs).
        for (pair, n) in &part.capped {
            *total.capped.entry(pair.clone()).or_default() += n;
        }
        for (t, c) in total.cards.iter_mut().zip(&part.cards) {
            t.played += c.played;
            t.offered += c.offered;
            t.swing += c.swing;
            t.in_games += c.in_games;
            t.points2 += c.points2;
            t.refused_engine += c.refused_engine;
            t.refused_script += c.refused_script;
            t.first_error = match (t.first_error.take(), &c.first_error) {
                (Some(a), Some(b)) => Some(if b.0 < a.0 { b.clone() } else { a }),
                (a, b) => a.or_else(|| b.clone()),
            };
        }
    }
    let missing: Vec<u32> = (1..=run.shards)
        .filter(|k| !total.shards.contains(k))
        .collect();
    if !missing.is_empty() {
        return Err(MergeError::Missing(missing, run.shards));
    }
    total.shards.sort_unstable();
    Ok(summarize(total))
}

/// The raw sums of `records` (in game order).
fn tally(catalog: &Catalog, records: &[GameRecord], seconds: f64) -> Totals {
    let mut t = Totals {
        seconds,
        cards: catalog
            .card_ids()
            .map(|c| CardTotals {
                id: catalog.card(c).meta.id.clone(),
                ..CardTotals::default()
            })
            .collect(),
        ..Totals::default()
    };
    let n_cards = t.cards.len();
    for r in records {
        t.games += 1;
        let a = r.a_seat.unwrap_or(Seat::One);
        let points2_a: u64 = match r.winner {
            Some(w) if w == a => {
                t.wins_a += 1;
                2
            }
            Some(_) => {
                t.wins_b += 1;
                0
            }
            None => {
                t.draws += 1;
                1
            }
        };
        t.first2 += match r.winner {
            Some(Seat::One) => 2,
            Some(Seat::Two) => 0,
            None => 1,
        };
        t.margin += r.margin_a;
        t.moves += u64::from(r.moves);
        t.decisions_cut += r.cuts;
        t.quality.add(&r.trace); // Game quality (src/ai/quality.rs).
        if let Some(pair) = &r.capped {
            *t.capped.entry(pair.clone()).or_default() += 1;
        }
        for &(_, card) in &r.offered {
            if let Some(c) = t.cards.get_mut(card.index()) {
                c.offered += 1;
            }
        }
        for f in &r.refusals {
            if let Some(c) = t.cards.get_mut(f.card.index()) {
                if f.script {
                    c.refused_script += 1;
                } else {
                    c.refused_engine += 1;
                }
                if c.first_error.is_none() {
                    c.first_error = Some((r.game, f.message.clone()));
                }
            }
        }
        for side_a in [true, false] {
            let mut seen = vec![false; n_cards];
            for p in r.plays.iter().filter(|p| p.side_a == side_a) {
                let i = p.card.index();
                let Some(c) = t.cards.get_mut(i) else {
                    continue;
                };
                c.played += 1;
                c.swing += p.swing;
                if !seen[i] {
                    seen[i] = true;
                    c.in_games += 1;
                    c.points2 += if side_a { points2_a } else { 2 - points2_a };
                }
            }
        }
    }
    t
}

#[allow(clippy::cast_precision_loss)]
fn summarize(totals: Totals) -> Report {
    let t = &totals;
    let n = f64::from(t.games.max(1));
    let win_rate_a = (f64::from(t.wins_a) + 0.5 * f64::from(t.draws)) / n;
    let cards = t
        .cards
        .iter()
        .filter(|c| c.offered > 0)
        .map(|c| {
            let pick_rate = c.played as f64 / c.offered.max(1) as f64;
            let broken = c.refused_script > 0;
            CardStats {
                id: c.id.clone(),
                played: c.played,
                offered: c.offered,
                pick_rate,
                avg_income_swing: if c.played > 0 {
                    c.swing as f64 / c.played as f64
                } else {
                    0.0
                },
                games_played_in: c.in_games,
                win_rate_when_played: if c.in_games > 0 {
                    c.points2 as f64 / 2.0 / c.in_games as f64
                } else {
                    0.0
                },
                refused: c.refused_engine + c.refused_script,
                refused_by_script: c.refused_script,
                first_error: c.first_error.as_ref().map(|(_, m)| m.clone()),
                broken,
                dead: !broken && c.offered >= 30 && pick_rate < 0.05,
            }
        })
        .collect();
    Report {
        games: t.games,
        wins_a: t.wins_a,
        wins_b: t.wins_b,
        draws: t.draws,
        win_rate_a,
        ci95_a: wilson(win_rate_a, n),
        first_seat_win_rate: t.first2 as f64 / 2.0 / n,
        avg_margin_a: t.margin as f64 / n,
        avg_moves: t.moves as f64 / n,
        games_per_second: if t.seconds > 0.0 && t.games > 0 {
            f64::from(t.games) / t.seconds
        } else {
            0.0
        },
        cards,
        capped_games: t.capped.values().sum(),
        max_moves: t.run.as_ref().map_or(MAX_MOVES, |r| r.max_moves),
        capped_pairings: t.capped.iter().map(|(k, v)| (k.clone(), *v)).collect(),
        script_refusals: t.cards.iter().map(|c| c.refused_script).sum(),
        engine_refusals: t.cards.iter().map(|c| c.refused_engine).sum(),
        decisions_cut: t.decisions_cut,
        quality: super::quality::metrics(&t.quality, &card_uses(&t.cards)),
        totals,
    }
}

/// The cards as game quality's dead and dominant cards need them (src/ai/quality.rs).
fn card_uses(cards: &[CardTotals]) -> Vec<super::quality::CardUse> {
    cards
        .iter()
        .map(|c| super::quality::CardUse {
            id: c.id.clone(),
            offered: c.offered,
            played: c.played,
            broken: c.refused_script > 0,
        })
        .collect()
}

/// The 95 % Wilson score interval (it lives with the game-quality metrics, which use it
/// too).
pub use super::quality::wilson;

/// The variable an Indexed Job's or an array job's definition sets to the number of
/// shards, where the scheduler itself does not say it (Kubernetes, AWS Batch).
pub const SHARD_COUNT_VAR: &str = "TOKENSMITH_SHARD_COUNT";

/// Why `--shard auto` cannot tell the shard from the environment.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ShardEnvError {
    /// No scheduler's array index is set.
    #[error(
        "--shard auto found no array job: none of SLURM_ARRAY_TASK_ID (Slurm), JOB_COMPLETION_INDEX (a Kubernetes Indexed Job) or AWS_BATCH_JOB_ARRAY_INDEX (AWS Batch) is set; outside such a job give the shard as --shard K/N"
    )]
    NoScheduler,
    /// Several schedulers' indexes are set.
    #[error(
        "--shard auto cannot tell the scheduler: both {0} and {1} are set; give the shard as --shard K/N"
    )]
    Ambiguous(&'static str, &'static str),
    /// A variable is not a whole number.
    #[error("--shard auto: {var} is '{value}', not a whole number")]
    NotNumber {
        /// The variable.
        var: &'static str,
        /// Its value.
        value: String,
    },
    /// The shard count is not set.
    #[error("--shard auto: {index} is set but not {count}: {hint}")]
    NoCount {
        /// The index variable.
        index: &'static str,
        /// The count variable that is missing.
        count: &'static str,
        /// How to set it.
        hint: &'static str,
    },
    /// The variables contradict each other.
    #[error("--shard auto: {0}")]
    Inconsistent(String),
}

/// The shard (`k` from 1, `n`) a scheduler's array job gives this process, read through
/// `var` (the environment, in the command): Slurm's `SLURM_ARRAY_TASK_ID` with
/// `SLURM_ARRAY_TASK_COUNT` or `SLURM_ARRAY_TASK_MIN`/`MAX` (and `STEP`), a Kubernetes
/// Indexed Job's `JOB_COMPLETION_INDEX` and AWS Batch's `AWS_BATCH_JOB_ARRAY_INDEX`, each
/// with [`SHARD_COUNT_VAR`].
///
/// # Errors
/// When no scheduler's index is set, when several are, or when a count is missing, not a
/// number or does not fit the index.
pub fn shard_from_env(var: impl Fn(&str) -> Option<String>) -> Result<(u32, u32), ShardEnvError> {
    const SLURM: &str = "SLURM_ARRAY_TASK_ID";
    const KUBE: &str = "JOB_COMPLETION_INDEX";
    const AWS: &str = "AWS_BATCH_JOB_ARRAY_INDEX";
    let set = |name: &str| var(name).filter(|v| !v.trim().is_empty());
    let number = |name: &'static str| -> Result<Option<u64>, ShardEnvError> {
        set(name)
            .map(|v| {
                v.trim()
                    .parse::<u64>()
                    .map_err(|_| ShardEnvError::NotNumber {
                        var: name,
                        value: v.clone(),
                    })
            })
            .transpose()
    };
    let present: Vec<&'static str> = [SLURM, KUBE, AWS]
        .into_iter()
        .filter(|n| set(n).is_some())
        .collect();
    let index_name = match present.as_slice() {
        [] => return Err(ShardEnvError::NoScheduler),
        [one] => *one,
        [a, b, ..] => return Err(ShardEnvError::Ambiguous(a, b)),
    };
    let index = number(index_name)?.unwrap_or_default();
    let fit = |k: u64, n: u64| -> Result<(u32, u32), ShardEnvError> {
        match (u32::try_from(k), u32::try_from(n)) {
            (Ok(k), Ok(n)) if k >= 1 && k <= n => Ok((k, n)),
            _ => Err(ShardEnvError::Inconsistent(format!(
                "the index makes shard {k} of {n}, not from 1 to the count"
            ))),
        }
    };
    if index_name != SLURM {
        let count = number(SHARD_COUNT_VAR)?.ok_or(ShardEnvError::NoCount {
            index: index_name,
            count: SHARD_COUNT_VAR,
            hint: if index_name == KUBE {
                "set it in the Job's pod template to the Job's `completions` (`simulate plan` writes such a manifest)"
            } else {
                "set it in the job definition's environment to the array size"
            },
        })?;
        if index >= count {
            return Err(ShardEnvError::Inconsistent(format!(
                "{index_name} is {index}, but {SHARD_COUNT_VAR} is {count}: indexes run from 0 to {}",
                count.saturating_sub(1)
            )));
        }
        return fit(index + 1, count);
    }
    let min = number("SLURM_ARRAY_TASK_MIN")?;
    let max = number("SLURM_ARRAY_TASK_MAX")?;
    let step = number("SLURM_ARRAY_TASK_STEP")?.unwrap_or(1).max(1);
    let count = number("SLURM_ARRAY_TASK_COUNT")?;
    let Some(min) = min else {
        // The plain ID/COUNT form: the IDs run from 0.
        let count = count.ok_or(ShardEnvError::NoCount {
            index: SLURM,
            count: "SLURM_ARRAY_TASK_COUNT or SLURM_ARRAY_TASK_MIN/MAX",
            hint: "submit with `sbatch --array` (Slurm sets them)",
        })?;
        if index >= count {
            return Err(ShardEnvError::Inconsistent(format!(
                "SLURM_ARRAY_TASK_ID is {index}, but SLURM_ARRAY_TASK_COUNT is {count} and SLURM_ARRAY_TASK_MIN is not set: without it the IDs run from 0"
            )));
        }
        return fit(index + 1, count);
    };
    if index < min || (index - min) % step != 0 || max.is_some_and(|m| index > m) {
        return Err(ShardEnvError::Inconsistent(format!(
            "SLURM_ARRAY_TASK_ID {index} is not one of the array's IDs (from {min}{} in steps of {step})",
            max.map(|m| format!(" to {m}")).unwrap_or_default()
        )));
    }
    let span = max.map(|m| (m.saturating_sub(min)) / step + 1);
    let count = match (count, span) {
        (Some(c), Some(s)) if c != s => {
            return Err(ShardEnvError::Inconsistent(format!(
                "SLURM_ARRAY_TASK_COUNT is {c}, but the array runs {s} IDs from {min} to {} in steps of {step}: shards need an array without gaps (say --array={min}-{})",
                max.unwrap_or_default(),
                min + c.saturating_sub(1) * step
            )));
        }
        (Some(c), _) => c,
        (None, Some(s)) => s,
        (None, None) => {
            return Err(ShardEnvError::NoCount {
                index: SLURM,
                count: "SLURM_ARRAY_TASK_COUNT or SLURM_ARRAY_TASK_MAX",
                hint: "submit with `sbatch --array` (Slurm sets them)",
            });
        }
    };
    fit((index - min) / step + 1, count)
}

#[cfg(test)]
mod shard_env_tests {
    use super::{ShardEnvError, shard_from_env};

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let pairs: Vec<(String, String)> = pairs
            .iter()
            .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
            .collect();
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
        }
    }

    #[test]
    fn slurm_id_and_count_from_zero() {
        let e = env(&[
            ("SLURM_ARRAY_TASK_ID", "0"),
            ("SLURM_ARRAY_TASK_COUNT", "4"),
        ]);
        assert_eq!(shard_from_env(e), Ok((1, 4)));
        let e = env(&[
            ("SLURM_ARRAY_TASK_ID", "3"),
            ("SLURM_ARRAY_TASK_COUNT", "4"),
        ]);
        assert_eq!(shard_from_env(e), Ok((4, 4)));
        let e = env(&[
            ("SLURM_ARRAY_TASK_ID", "4"),
            ("SLURM_ARRAY_TASK_COUNT", "4"),
        ]);
        assert!(matches!(
            shard_from_env(e),
            Err(ShardEnvError::Inconsistent(_))
        ));
    }

    #[test]
    fn slurm_min_max_form() {
        // sbatch --array=1-8 sets all four; ID 5 is the fifth shard.
        let e = env(&[
            ("SLURM_ARRAY_TASK_ID", "5"),
            ("SLURM_ARRAY_TASK_MIN", "1"),
            ("SLURM_ARRAY_TASK_MAX", "8"),
            ("SLURM_ARRAY_TASK_COUNT", "8"),
            ("SLURM_ARRAY_TASK_STEP", "1"),
        ]);
        assert_eq!(shard_from_env(e), Ok((5, 8)));
        // Without the count, MIN/MAX give it.
        let e = env(&[
            ("SLURM_ARRAY_TASK_ID", "12"),
            ("SLURM_ARRAY_TASK_MIN", "10"),
            ("SLURM_ARRAY_TASK_MAX", "13"),
        ]);
        assert_eq!(shard_from_env(e), Ok((3, 4)));
        // A stepped array without gaps: 0-12:4 is 4 shards.
        let e = env(&[
            ("SLURM_ARRAY_TASK_ID", "8"),
            ("SLURM_ARRAY_TASK_MIN", "0"),
            ("SLURM_ARRAY_TASK_MAX", "12"),
            ("SLURM_ARRAY_TASK_STEP", "4"),
            ("SLURM_ARRAY_TASK_COUNT", "4"),
        ]);
        assert_eq!(shard_from_env(e), Ok((3, 4)));
    }

    #[test]
    fn slurm_inconsistent_or_missing() {
        // --array=1,3,8: the count (3) is not the span (8): shards would be lost.
        let e = env(&[
            ("SLURM_ARRAY_TASK_ID", "3"),
            ("SLURM_ARRAY_TASK_MIN", "1"),
            ("SLURM_ARRAY_TASK_MAX", "8"),
            ("SLURM_ARRAY_TASK_COUNT", "3"),
        ]);
        let err = shard_from_env(e)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(err.contains("without gaps"), "{err}");
        let e = env(&[("SLURM_ARRAY_TASK_ID", "3")]);
        assert!(matches!(
            shard_from_env(e),
            Err(ShardEnvError::NoCount { .. })
        ));
        let e = env(&[
            ("SLURM_ARRAY_TASK_ID", "x3"),
            ("SLURM_ARRAY_TASK_COUNT", "4"),
        ]);
        assert_eq!(
            shard_from_env(e),
            Err(ShardEnvError::NotNumber {
                var: "SLURM_ARRAY_TASK_ID",
                value: "x3".to_string()
            })
        );
        let e = env(&[
            ("SLURM_ARRAY_TASK_ID", "0"),
            ("SLURM_ARRAY_TASK_MIN", "1"),
            ("SLURM_ARRAY_TASK_MAX", "4"),
        ]);
        assert!(matches!(
            shard_from_env(e),
            Err(ShardEnvError::Inconsistent(_))
        ));
    }

    #[test]
    fn kubernetes_index_with_the_count() {
        let e = env(&[
            ("JOB_COMPLETION_INDEX", "0"),
            ("TOKENSMITH_SHARD_COUNT", "8"),
        ]);
        assert_eq!(shard_from_env(e), Ok((1, 8)));
        let e = env(&[
            ("JOB_COMPLETION_INDEX", "7"),
            ("TOKENSMITH_SHARD_COUNT", "8"),
        ]);
        assert_eq!(shard_from_env(e), Ok((8, 8)));
        let e = env(&[
            ("JOB_COMPLETION_INDEX", "8"),
            ("TOKENSMITH_SHARD_COUNT", "8"),
        ]);
        assert!(matches!(
            shard_from_env(e),
            Err(ShardEnvError::Inconsistent(_))
        ));
        let e = env(&[("JOB_COMPLETION_INDEX", "2")]);
        let err = shard_from_env(e)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(
            err.contains("TOKENSMITH_SHARD_COUNT") && err.contains("completions"),
            "{err}"
        );
    }

    #[test]
    fn aws_batch_index_with_the_count() {
        let e = env(&[
            ("AWS_BATCH_JOB_ARRAY_INDEX", "4"),
            ("TOKENSMITH_SHARD_COUNT", "10"),
        ]);
        assert_eq!(shard_from_env(e), Ok((5, 10)));
        let e = env(&[
            ("AWS_BATCH_JOB_ARRAY_INDEX", "4"),
            ("TOKENSMITH_SHARD_COUNT", "0"),
        ]);
        assert!(matches!(
            shard_from_env(e),
            Err(ShardEnvError::Inconsistent(_))
        ));
        let e = env(&[("AWS_BATCH_JOB_ARRAY_INDEX", "1")]);
        let err = shard_from_env(e)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(err.contains("array size"), "{err}");
    }

    #[test]
    fn shard_games_add_up_to_the_run() {
        for games in [0, 1, 5, 10, 101] {
            for n in 1..=7 {
                let sum: u32 = (1..=n).map(|k| super::shard_games(games, k, n)).sum();
                assert_eq!(sum, games, "{games} games in {n} shards");
                for k in 1..=n {
                    let played = (0..games)
                        .filter(|&g| super::in_shard(g, Some((k, n))))
                        .count();
                    assert_eq!(super::shard_games(games, k, n) as usize, played);
                }
            }
        }
    }

    #[test]
    fn none_or_several_schedulers() {
        assert_eq!(shard_from_env(env(&[])), Err(ShardEnvError::NoScheduler));
        let msg = ShardEnvError::NoScheduler.to_string();
        assert!(msg.contains("--shard K/N"), "{msg}");
        let e = env(&[
            ("SLURM_ARRAY_TASK_ID", "1"),
            ("SLURM_ARRAY_TASK_COUNT", "2"),
            ("JOB_COMPLETION_INDEX", "0"),
            ("TOKENSMITH_SHARD_COUNT", "2"),
        ]);
        assert_eq!(
            shard_from_env(e),
            Err(ShardEnvError::Ambiguous(
                "SLURM_ARRAY_TASK_ID",
                "JOB_COMPLETION_INDEX"
            ))
        );
    }
}
