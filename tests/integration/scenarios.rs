//! The scenario runner itself (each file under `tests/scenarios/` is its own test in
//! `tests/scenarios.rs`): expectations it cannot check fail instead of being skipped.

use tokensmith::scenario::{self, PackPaths, ScenarioOutcome};

use crate::support::{TempPacks, root};

fn run(text: &str) -> ScenarioOutcome {
    let dir = TempPacks::new(&[("s.yaml", text)]);
    let paths = PackPaths {
        content: root().join("content"),
        mods: root().join("mods"),
    };
    match scenario::run_file(&dir.path().join("s.yaml"), &paths) {
        Ok(run) => run.outcome,
        Err(e) => panic!("the scenario should run: {:?}", e.diagnostics),
    }
}

#[test]
fn an_expectation_for_a_seat_that_does_not_exist_fails() {
    for expect in ["scores: { 1: 0, 3: 0 }", "income: { 0: 0 }"] {
        let outcome = run(&format!(
            "name: a seat that does not exist\nrules: {{ opening_token: null }}\nexpect:\n  {expect}\n"
        ));
        match outcome {
            ScenarioOutcome::Fail(report) => assert!(
                report.contains("there is no seat"),
                "{expect}: the report should name the seat: {report}"
            ),
            ScenarioOutcome::Pass => panic!("{expect}: a scenario expecting a missing seat passed"),
        }
    }
}

/// A game played as the sandbox plays (any seat, any card, out of turn) and written out
/// by `scenario::write` runs as a passing scenario; the same file with one expectation
/// changed fails. With the scripted example pack too, whose hooks the moves run.
#[test]
fn a_game_saved_as_a_scenario_replays_and_passes() {
    use tokensmith::rules::{Cell, Engine, Move, Play, Seat};
    use tokensmith::scenario::write::{Recording, scenario_text};
    for (packs, cards) in [
        (
            vec!["base"],
            ["weaken_row", "push_row", "weaken_cross", "spawn_row"],
        ),
        (
            vec!["example_scripted"],
            ["hunter", "leech", "powder_keg", "scripted_weaken_row"],
        ),
    ] {
        let loaded = tokensmith::script::load(&tokensmith::content::LoadOptions {
            only: Some(packs.iter().map(|s| (*s).to_string()).collect()),
            ..tokensmith::content::LoadOptions::standard(
                &root().join("content"),
                &root().join("mods"),
            )
        });
        let catalog = loaded.catalog.expect("the packs load");
        let host = tokensmith::script::ScriptHost::new(&catalog).expect("scripts start");
        let engine = Engine::new(&catalog, &host);
        let deck = &catalog.decks()[0].stacks;
        let mut events = Vec::new();
        let start = engine
            .new_game([deck, deck], 11, &mut events)
            .expect("deals");
        let mut state = start.clone();
        let mut moves = Vec::new();
        // Seat 1 twice in a row, then seat 2, then two more: out of turn is allowed.
        let plan = [
            (Seat::One, 0, (1, 1)),
            (Seat::One, 1, (2, 1)),
            (Seat::Two, 2, (2, 2)),
            (Seat::Two, 3, (3, 1)),
            (Seat::One, 0, (3, 2)),
        ];
        for (seat, card, (x, y)) in plan {
            let card = catalog.card_named(cards[card]).expect("the card exists");
            let mv = Move {
                seat,
                play: Play::Card(card),
                cell: Cell::new(x, y),
            };
            if state.board().get(mv.cell).is_some() {
                continue;
            }
            state.set_turn(seat);
            engine
                .play_quiet(&mut state, mv)
                .expect("the move is played");
            moves.push(mv);
        }
        assert!(moves.len() >= 4, "{packs:?}: too few moves were played");
        let text = scenario_text(
            &engine,
            &Recording {
                name: "saved from the sandbox",
                pack_dirs: &[],
                seed: 11,
                start: &start,
                moves: &moves,
            },
        )
        .expect("the game is written");
        assert!(text.contains("sandbox: true"), "{text}");
        assert!(
            text.contains(&format!("  next: {}", state.turn())),
            "{text}"
        );
        let score = format!(
            "  scores: {{ 1: {}, 2: {} }}",
            state.score(Seat::One),
            state.score(Seat::Two)
        );
        assert!(text.contains(&score), "{text}");
        assert_eq!(
            run(&text),
            ScenarioOutcome::Pass,
            "{packs:?}: the saved game does not pass:\n{text}"
        );
        let wrong = text.replace(&score, "  scores: { 1: -1, 2: -1 }");
        assert!(
            matches!(run(&wrong), ScenarioOutcome::Fail(_)),
            "a changed score still passes"
        );
    }
}

/// The schema says a seed is any `uint64`: 2^63 and above are taken, and a seed past
/// 2^64 is refused with the range, not a rounded number.
#[test]
fn seeds_up_to_u64_max_are_taken() {
    let text = |seed: &str| format!("name: big seed\nseed: {seed}\nmoves: []\n");
    assert_eq!(run(&text("9223372036854775808")), ScenarioOutcome::Pass);
    assert_eq!(run(&text("18446744073709551615")), ScenarioOutcome::Pass);
    let dir = TempPacks::new(&[("s.yaml", text("18446744073709551616").as_str())]);
    let paths = PackPaths {
        content: root().join("content"),
        mods: root().join("mods"),
    };
    let err = scenario::run_file(&dir.path().join("s.yaml"), &paths)
        .expect_err("a seed past u64 is refused");
    let message = err.diagnostics[0].to_string();
    assert!(
        message.ends_with("2:7: error: this whole number is out of range: it must be from 0 to 18446744073709551615"),
        "{message}"
    );
}

/// A card or token type that a pack the scenario does not load has: the message names
/// the pack and the `packs:` line to write.
#[test]
fn a_name_from_a_pack_the_scenario_does_not_load_names_that_pack() {
    let paths = PackPaths {
        content: root().join("content"),
        mods: root().join("mods"),
    };
    for (body, wanted) in [
        (
            "moves:\n  - { seat: 1, card: glacier_wall, at: [0, 0] }\n",
            "3:22: error: unknown card 'glacier_wall'; it is in pack 'frost', which this scenario does not load: add it to `packs:` (packs: [base, frost])",
        ),
        (
            "board:\n  - { at: [1, 1], seat: 1, value: 2, type: frost_lantern }\n",
            "3:44: error: unknown token type 'frost_lantern'; it is in pack 'frost', which this scenario does not load: add it to `packs:` (packs: [base, frost])",
        ),
    ] {
        let dir = TempPacks::new(&[("s.yaml", &format!("name: x\n{body}"))]);
        let err =
            scenario::run_file(&dir.path().join("s.yaml"), &paths).expect_err("it cannot run");
        let message = err.diagnostics[0].to_string();
        assert!(message.ends_with(wanted), "{message}");
    }
}

/// A move onto the cell the rules' opening token took says so, and how to start from an
/// empty board; a move onto a token a move placed says only that the cell is taken.
#[test]
fn a_move_refused_on_the_opening_token_says_so() {
    let opening = run(
        "name: onto the opening token\nrules: { opening_token: { seat: 2, value: 2, type: basic, cells: [[2, 3]] } }\nmoves:\n  - { seat: 1, card: weaken_row, at: [2, 3] }\nexpect:\n  scores: { 1: 0, 2: 2 }\n",
    );
    match opening {
        ScenarioOutcome::Fail(report) => assert!(
            report.contains(
                "line 4: move 1 (seat 1, weaken_row at (2, 3)) was refused: cell (2, 3) is not empty: the rules' opening token was put there before the first move (`opening_token` in the rules); play another cell, or start from an empty board with `rules: { opening_token: null }` in the scenario"
            ),
            "{report}"
        ),
        ScenarioOutcome::Pass => panic!("a move onto the opening token was played"),
    }
    let taken = run(
        "name: onto a placed token\nrules: { opening_token: null }\nmoves:\n  - { seat: 1, card: weaken_row, at: [1, 1] }\n  - { seat: 2, card: weaken_row, at: [1, 1] }\nexpect:\n  next: 1\n",
    );
    match taken {
        ScenarioOutcome::Fail(report) => {
            assert!(report.contains("cell (1, 1) is not empty"), "{report}");
            assert!(!report.contains("opening token"), "{report}");
        }
        ScenarioOutcome::Pass => panic!("a move onto a taken cell was played"),
    }
}

/// A card two loaded packs define, written without its pack in a scenario's deck: one
/// message naming both (no count of a stack without it after it).
#[test]
fn an_ambiguous_card_in_a_deck_is_one_message_naming_both_packs() {
    let dir = TempPacks::new(&[
        (
            "packs/echo/pack.yaml",
            "id: echo\nname: Echo\nversion: 1.0.0\nrequires:\n  - { id: base, version: \"^1\" }\n",
        ),
        (
            "packs/echo/cards.yaml",
            "cards:\n  - id: beacon\n    value: 1\n    ability: weaken\n    area: row\n",
        ),
        (
            "s.yaml",
            "name: x\npacks: [echo]\ndecks:\n  1: [[beacon, gift], [weaken_row, push_row], [spawn_row, booster], [push_cross, weaken_ring]]\nmoves: []\n",
        ),
    ]);
    let paths = PackPaths {
        content: root().join("content"),
        mods: dir.path().join("packs"),
    };
    let err = scenario::run_file(&dir.path().join("s.yaml"), &paths).expect_err("it cannot run");
    let messages: Vec<String> = err
        .diagnostics
        .iter()
        .filter(|d| d.severity == tokensmith::content::Severity::Error)
        .map(ToString::to_string)
        .collect();
    assert_eq!(messages.len(), 1, "{messages:#?}");
    assert!(
        messages[0].contains("'beacon' is ambiguous")
            && messages[0].contains("base:beacon")
            && messages[0].contains("echo:beacon"),
        "{messages:#?}"
    );
}
