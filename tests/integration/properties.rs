//! Property tests: random legal games on the base pack keep the engine's invariants.

use proptest::prelude::*;
use tokensmith::rules::{Catalog, Cell, Engine, Event, GameState, Move, NoHooks, Play, Seat};

use crate::support::base_catalog;

fn catalog() -> &'static Catalog {
    static CATALOG: std::sync::OnceLock<Catalog> = std::sync::OnceLock::new();
    CATALOG.get_or_init(base_catalog)
}

/// Play a game from `seed` choosing moves by `choices`; check invariants after each move.
fn play(seed: u64, decks: (usize, usize), choices: &[u16]) -> Result<Vec<Event>, TestCaseError> {
    let catalog = catalog();
    let engine = Engine::new(catalog, &NoHooks);
    let d1 = &catalog.decks()[decks.0 % catalog.decks().len()].stacks;
    let d2 = &catalog.decks()[decks.1 % catalog.decks().len()].stacks;
    let mut events = Vec::new();
    let mut state = engine
        .new_game([d1, d2], seed, &mut events)
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    for &choice in choices {
        let moves = engine.legal_moves(&state);
        if moves.is_empty() {
            prop_assert!(state.is_over(), "no legal move but the game is not over");
            break;
        }
        refused_moves_change_nothing(&engine, &state, &events)?;
        let mv = moves[usize::from(choice) % moves.len()];
        let before = [state.score(Seat::One), state.score(Seat::Two)];
        engine
            .play(&mut state, mv, &mut events)
            .map_err(|e| TestCaseError::fail(format!("legal move refused: {e}")))?;
        for (cell, token) in state.board().tokens() {
            prop_assert!(
                token.value > 0,
                "token of value {} left at {cell}",
                token.value
            );
        }
        for seat in Seat::BOTH {
            prop_assert!(state.score(seat) >= before[seat.index()], "a score fell");
        }
        let engine_income = engine
            .incomes(&state)
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(
            engine_income,
            reference_incomes(catalog, &state),
            "income differs from the rules"
        );
        let by_token = engine
            .incomes_by_token(&state)
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(
            engine_income,
            by_token,
            "the fast income path differs from the token-by-token one hooks use"
        );
    }
    Ok(events)
}

/// Income straight from docs/rules.md, recomputed from scratch: for each token
/// `(value + aura bonuses it receives) × multiplier`. The engine keeps sums incrementally;
/// this is the independent check.
fn reference_incomes(catalog: &Catalog, state: &GameState) -> [i64; 2] {
    let board = state.board();
    let mut totals = [0i64; 2];
    for (cell, token) in board.tokens() {
        let mut bonus = 0i64;
        for (other_cell, other) in board.tokens() {
            let Some(aura) = &catalog.token_type(other.kind).aura else {
                continue;
            };
            // Straight from the offsets, not through `Area`'s own geometry.
            let reaches = aura
                .area
                .offsets
                .iter()
                .any(|&o| other_cell.offset(o) == cell);
            if reaches && aura.to.includes(other.seat, token.seat) {
                bonus += i64::from(aura.income);
            }
        }
        let multiplier = i64::from(catalog.token_type(token.kind).income_multiplier);
        totals[token.seat.index()] += (i64::from(token.value) + bonus) * multiplier;
    }
    totals
}

fn refused_moves_change_nothing(
    engine: &Engine<'_>,
    state: &GameState,
    events: &[Event],
) -> Result<(), TestCaseError> {
    let seat = state.turn();
    let mut attempts = vec![
        Move {
            seat: seat.other(),
            play: Play::Stack(0),
            cell: Cell::new(0, 0),
        },
        Move {
            seat,
            play: Play::Stack(0),
            cell: Cell::new(-1, 0),
        },
        Move {
            seat,
            play: Play::Stack(9),
            cell: Cell::new(0, 0),
        },
    ];
    if let Some((cell, _)) = state.board().tokens().next() {
        attempts.push(Move {
            seat,
            play: Play::Stack(0),
            cell,
        });
    }
    // Every attempt is illegal (the other seat's turn, off the board, a stack that does
    // not exist, a taken cell): each must be refused and change nothing.
    for mv in attempts {
        let mut copy = state.clone();
        let mut log = events.to_vec();
        let result = engine.play(&mut copy, mv, &mut log);
        prop_assert!(result.is_err(), "the illegal move {:?} was played", mv);
        prop_assert_eq!(&copy, state, "a refused move changed the state");
        prop_assert_eq!(log.len(), events.len(), "a refused move added events");
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn random_games_keep_the_invariants(
        seed in any::<u64>(),
        decks in (0usize..8, 0usize..8),
        choices in proptest::collection::vec(any::<u16>(), 1..40),
    ) {
        play(seed, decks, &choices)?;
    }

    #[test]
    fn the_same_seed_and_moves_give_the_same_events(
        seed in any::<u64>(),
        decks in (0usize..8, 0usize..8),
        choices in proptest::collection::vec(any::<u16>(), 1..40),
    ) {
        let a = play(seed, decks, &choices)?;
        let b = play(seed, decks, &choices)?;
        prop_assert_eq!(a, b);
    }
}

#[test]
fn games_played_to_the_end_finish_with_a_result() {
    let catalog = catalog();
    let engine = Engine::new(catalog, &NoHooks);
    let deck = &catalog.decks()[0].stacks;
    for seed in 0..20u64 {
        let mut events = Vec::new();
        let mut state = engine
            .new_game([deck, deck], seed, &mut events)
            .expect("a game");
        let mut n = seed;
        while !state.is_over() {
            let moves = engine.legal_moves(&state);
            n = n
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let mv = moves[usize::try_from(n >> 33).unwrap_or(0) % moves.len()];
            engine.play(&mut state, mv, &mut events).expect("legal");
        }
        assert!(
            state.board().is_full() || state.score(Seat::One).max(state.score(Seat::Two)) >= 1000
        );
    }
}
