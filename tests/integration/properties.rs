//! Property tests: random legal games on the base pack keep the engine's invariants, and
//! on random content the two aura passes agree with the rules.

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
                .offsets()
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

/// A small deterministic generator (xorshift64*), for random content.
struct Gen(u64);

impl Gen {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A number in `lo..=hi`.
    fn range(&mut self, lo: i64, hi: i64) -> i64 {
        let span = u64::try_from(hi - lo + 1).unwrap_or(1);
        lo + i64::try_from(self.next() % span).unwrap_or(0)
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        let at = usize::try_from(self.range(0, i64::try_from(items.len()).unwrap_or(1) - 1))
            .unwrap_or(0);
        items[at]
    }
}

/// A pack of random content on top of base, from `seed`: a board of random size, areas
/// of random offsets, token types with auras (random area, relation, income) and income
/// multipliers, cards placing them (some with base's moving and flipping abilities), and
/// one deck of those cards.
fn random_pack(seed: u64) -> crate::support::TempPacks {
    let mut g = Gen(seed | 1);
    let width = g.range(4, 12);
    let height = g.range(4, (144 / width).min(12));
    let mut areas = String::from("areas:\n");
    for a in 0..4 {
        // Distinct offsets, never the token's own cell.
        let mut offsets: Vec<String> = Vec::new();
        for _ in 0..g.range(1, 6) {
            let (dx, dy) = (g.range(-3, 3), g.range(-3, 3));
            let offset = format!("[{dx}, {dy}]");
            if (dx, dy) != (0, 0) && !offsets.contains(&offset) {
                offsets.push(offset);
            }
        }
        if offsets.is_empty() {
            offsets.push("[1, 0]".to_string());
        }
        areas.push_str(&format!(
            "  - id: a{a}\n    offsets: [{}]\n",
            offsets.join(", ")
        ));
    }
    let mut types = String::from("token_types:\n");
    for t in 0..5 {
        types.push_str(&format!(
            "  - id: t{t}\n    name: T{t}\n    income_multiplier: {}\n",
            g.range(-2, 3)
        ));
        if t > 0 {
            types.push_str(&format!(
                "    aura: {{ area: a{}, to: {}, income: {} }}\n",
                g.range(0, 3),
                g.pick(&["friendly", "enemy", "all"]),
                g.range(-3, 4)
            ));
        }
    }
    let mut cards = String::from("cards:\n");
    for c in 0..12 {
        cards.push_str(&format!(
            "  - id: c{c}\n    name: C{c}\n    value: {}\n    token: t{}\n",
            g.range(1, 6),
            g.range(0, 4)
        ));
        if g.range(0, 2) == 0 {
            cards.push_str(&format!(
                "    ability: base:{}\n    area: a{}\n",
                g.pick(&["push", "flip", "weaken"]),
                g.range(0, 3)
            ));
        }
    }
    let deck = "decks:\n  - id: mix\n    name: Mix\n    stacks:\n      - [c0, c1, c2]\n      - [c3, c4, c5]\n      - [c6, c7, c8]\n      - [c9, c10, c11]\n";
    let rules = format!("rules:\n  board: {{ width: {width}, height: {height} }}\n");
    let manifest =
        "id: rnd\nname: Random\nversion: 1.0.0\nrequires:\n  - { id: base, version: \"^1\" }\n";
    crate::support::TempPacks::new(&[
        ("rnd/pack.yaml", manifest),
        (
            "rnd/content.yaml",
            &format!("{rules}{areas}{types}{cards}{deck}"),
        ),
    ])
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// The two aura passes (the bitset one of `Engine::incomes` and the token-by-token one
    /// hooks use) and the rules' own arithmetic agree on random content too: boards of
    /// other sizes, areas of any shape, auras of every relation and sign, multipliers of
    /// every sign, tokens moved and flipped.
    #[test]
    fn random_content_keeps_both_aura_passes_equal_to_the_rules(
        content in any::<u64>(),
        seed in any::<u64>(),
        choices in proptest::collection::vec(any::<u16>(), 1..40),
    ) {
        let packs = random_pack(content);
        let loaded = crate::support::load_folders(
            &[crate::support::root().join("content"), packs.path().to_path_buf()],
            None,
        );
        prop_assert!(loaded.diagnostics.is_empty(), "{:#?}", loaded.diagnostics);
        let catalog = loaded.catalog.ok_or_else(|| TestCaseError::fail("no catalog"))?;
        let engine = Engine::new(&catalog, &NoHooks);
        let deck = catalog
            .decks()
            .iter()
            .find(|d| d.meta.key() == "rnd:mix")
            .map(|d| d.stacks.clone())
            .ok_or_else(|| TestCaseError::fail("no random deck"))?;
        let mut events = Vec::new();
        let mut state = engine
            .new_game([&deck, &deck], seed, &mut events)
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        for &choice in &choices {
            let moves = engine.legal_moves(&state);
            if moves.is_empty() {
                break;
            }
            let mv = moves[usize::from(choice) % moves.len()];
            engine
                .play(&mut state, mv, &mut events)
                .map_err(|e| TestCaseError::fail(format!("legal move refused: {e}")))?;
            let fast = engine.incomes(&state).map_err(|e| TestCaseError::fail(e.to_string()))?;
            let by_token = engine
                .incomes_by_token(&state)
                .map_err(|e| TestCaseError::fail(e.to_string()))?;
            prop_assert_eq!(fast, reference_incomes(&catalog, &state), "income differs from the rules");
            prop_assert_eq!(fast, by_token, "the two aura passes differ");
        }
    }
}
