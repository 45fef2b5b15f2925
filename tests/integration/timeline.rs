//! The one game timeline (start, moves with events, cursor, undo/redo, carry-over to
//! changed content) the sandbox and client games share.

use std::sync::Arc;

use tokensmith::rules::{Catalog, Cell, Engine, IdMap, Move, NoHooks, Play, Seat, Token};
use tokensmith::timeline::{Edit, Moment, Timeline};

use crate::support::base_catalog;

fn dealt(catalog: &Arc<Catalog>) -> Timeline {
    let engine = Engine::new(catalog, &NoHooks);
    let deck = &catalog.decks()[0].stacks;
    let mut opening = Vec::new();
    let start = engine
        .new_game([deck, deck], 3, &mut opening)
        .unwrap_or_else(|e| panic!("{e}"));
    Timeline::new(start, opening, Arc::clone(catalog))
}

fn play(t: &mut Timeline, catalog: &Arc<Catalog>, x: i32) {
    let engine = Engine::new(catalog, &NoHooks);
    let mv = Move {
        seat: t.state().turn(),
        play: Play::Stack(0),
        cell: Cell::new(x, 0),
    };
    let state = t.state().clone();
    t.play(&engine, catalog, state, mv)
        .unwrap_or_else(|e| panic!("move at ({x}, 0): {e}"));
}

#[test]
fn moves_undo_redo_and_a_new_move_drops_what_was_undone() {
    let catalog = Arc::new(base_catalog());
    let mut t = dealt(&catalog);
    assert!(!t.can_undo() && !t.can_redo());
    play(&mut t, &catalog, 0);
    play(&mut t, &catalog, 1);
    assert_eq!(t.steps().len(), 2);
    assert_eq!(t.state(), &t.steps()[1].after);
    assert_eq!(t.score_trail().len(), 3);
    assert_eq!(t.score_trail()[2], t.steps()[1].scores());
    assert!(!t.events(Moment::Move(1)).is_empty());
    assert!(t.undo());
    assert_eq!(t.steps().len(), 1);
    assert!(
        t.events(Moment::Move(1)).is_empty(),
        "an undone move shows no events"
    );
    assert!(t.can_redo());
    assert!(t.redo());
    assert_eq!(t.steps().len(), 2);
    assert!(t.undo() && t.undo() && !t.undo());
    assert_eq!(t.state(), t.start());
    play(&mut t, &catalog, 2);
    assert!(!t.can_redo(), "a new move drops the moves undone before it");
    assert_eq!(
        t.steps()[0].played().map(|p| p.0.cell),
        Some(Cell::new(2, 0))
    );
}

#[test]
fn a_refused_move_changes_nothing() {
    let catalog = Arc::new(base_catalog());
    let mut t = dealt(&catalog);
    play(&mut t, &catalog, 0);
    let engine = Engine::new(&catalog, &NoHooks);
    let taken = Move {
        seat: t.state().turn(),
        play: Play::Stack(0),
        cell: Cell::new(0, 0),
    };
    let state = t.state().clone();
    assert!(t.play(&engine, &catalog, state, taken).is_err());
    assert_eq!(t.steps().len(), 1);
}

#[test]
fn carrying_over_keeps_every_move_or_changes_nothing() {
    let catalog = Arc::new(base_catalog());
    let mut t = dealt(&catalog);
    play(&mut t, &catalog, 0);
    play(&mut t, &catalog, 1);
    t.undo();
    // The same content in another order: everything follows by key, the redo history too.
    let shuffled = (*catalog).clone().edited(|p| p.cards.reverse());
    let map = IdMap::new(&catalog, &shuffled);
    let mut moved = t.clone();
    moved
        .carry_over(&catalog, &shuffled, &map)
        .unwrap_or_else(|p| panic!("{p:?}"));
    let key = |c: &Catalog, card| c.card(card).meta.key();
    assert_eq!(
        key(
            &shuffled,
            moved.steps()[0].played().map(|p| p.1).expect("a move")
        ),
        key(
            &catalog,
            t.steps()[0].played().map(|p| p.1).expect("a move")
        )
    );
    assert!(moved.redo());
    // A card the game uses gone: nothing changes, and the problems say what.
    let first = t.steps()[0].played().map(|p| p.1).expect("a move");
    let fewer = (*catalog)
        .clone()
        .edited(|p| p.cards[first.index()].meta.id = "renamed".into());
    let map = IdMap::new(&catalog, &fewer);
    let before = t.clone();
    let problems = t
        .carry_over(&catalog, &fewer, &map)
        .err()
        .unwrap_or_default();
    assert!(!problems.is_empty(), "a missing card must be reported");
    assert!(
        problems.iter().any(|p| p.contains(&key(&catalog, first))),
        "{problems:?}"
    );
    assert_eq!(t.state(), before.state());
    assert_eq!(
        t.steps()[0].played().map(|p| p.1).expect("a move"),
        before.steps()[0].played().map(|p| p.1).expect("a move")
    );
}

/// Edits by hand (the sandbox's position editor) are steps: they change the position,
/// undo and redo like moves, drop what was undone, a refused one changes nothing, and
/// they carry over to changed content.
#[test]
fn edits_are_undoable_steps_and_carry_over() {
    let catalog = Arc::new(base_catalog());
    let mut t = dealt(&catalog);
    let booster = catalog.token_type_named("booster").expect("booster");
    let token = Token {
        value: 4,
        kind: booster,
        card: None,
        seat: Seat::Two,
    };
    t.edit(
        &catalog,
        Edit::Put {
            cell: Cell::new(5, 5),
            token,
        },
    )
    .expect("put");
    assert_eq!(t.state().board().get(Cell::new(5, 5)), Some(token));
    t.edit(
        &catalog,
        Edit::Score {
            seat: Seat::One,
            score: 40,
        },
    )
    .expect("score");
    t.edit(
        &catalog,
        Edit::ExtraTurns {
            seat: Seat::Two,
            banked: 2,
        },
    )
    .expect("turns");
    let card = catalog.card_named("gift").expect("gift");
    let mut stacks: Vec<Vec<_>> = t
        .state()
        .seat(Seat::One)
        .stacks()
        .iter()
        .map(|s| s.cards().collect())
        .collect();
    stacks[0].insert(0, card);
    t.edit(
        &catalog,
        Edit::Stacks {
            seat: Seat::One,
            stacks,
        },
    )
    .expect("stacks");
    assert_eq!(t.state().score(Seat::One), 40);
    assert_eq!(t.state().seat(Seat::Two).extra_turns, 2);
    assert_eq!(t.state().seat(Seat::One).stacks()[0].top(), Some(card));
    assert_eq!(t.steps().len(), 4);
    assert!(
        t.steps()
            .iter()
            .all(|s| s.played().is_none() && s.events.is_empty())
    );
    // A move after edits is played on the edited position.
    play(&mut t, &catalog, 0);
    assert_eq!(
        t.steps()[4].played().map(|p| p.1),
        Some(card),
        "the edited top card is played"
    );
    // Refused: nothing changes.
    let before = t.state().clone();
    assert!(
        t.edit(
            &catalog,
            Edit::Remove {
                cell: Cell::new(4, 4)
            }
        )
        .is_err(),
        "no token there"
    );
    assert!(
        t.edit(
            &catalog,
            Edit::Put {
                cell: Cell::new(9, 9),
                token
            }
        )
        .is_err(),
        "off the board"
    );
    assert_eq!(t.state(), &before);
    assert_eq!(t.steps().len(), 5);
    // Undo back through the edits.
    assert!(t.undo() && t.undo() && t.undo() && t.undo());
    assert_eq!(t.state().score(Seat::One), t.start().score(Seat::One));
    assert_eq!(t.state().board().get(Cell::new(5, 5)), Some(token));
    assert!(t.undo());
    assert_eq!(t.state(), t.start());
    assert!(t.redo());
    t.edit(
        &catalog,
        Edit::Remove {
            cell: Cell::new(5, 5),
        },
    )
    .expect("remove");
    assert!(!t.can_redo(), "an edit drops the steps undone before it");
    assert_eq!(t.state().board().get(Cell::new(5, 5)), None);
    // Carried over to a copy of the content, the edits keep their meaning.
    let copy = Arc::new(base_catalog());
    let map = IdMap::new(&catalog, &copy);
    t.carry_over(&catalog, &copy, &map)
        .expect("nothing is gone");
    assert_eq!(t.steps().len(), 2);
    assert!(t.undo() && t.undo());
    assert!(t.redo());
    assert_eq!(
        t.state().board().get(Cell::new(5, 5)).map(|t| t.value),
        Some(4)
    );
}

#[test]
fn any_seat_may_play_a_card_from_outside_the_stacks_but_a_stack_keeps_the_turn() {
    let catalog = Arc::new(base_catalog());
    let engine = Engine::new(&catalog, &NoHooks);
    let mut t = dealt(&catalog);
    let waiting = t.state().turn().other();
    let card = catalog.decks()[0].stacks[0][0];
    // The seat not to move plays a card from outside its stacks: recorded as its move.
    let step = t
        .play_any_seat(
            &engine,
            &catalog,
            Move {
                seat: waiting,
                play: Play::Card(card),
                cell: Cell::new(0, 0),
            },
        )
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        step.played().map(|(mv, c)| (mv.seat, c)),
        Some((waiting, card))
    );
    assert!(!step.events.is_empty());
    // From a stack, the turn order holds, and a refusal changes nothing.
    let now = t.state().turn();
    let before = t.state().clone();
    let refused = t.play_any_seat(
        &engine,
        &catalog,
        Move {
            seat: now.other(),
            play: Play::Stack(0),
            cell: Cell::new(1, 0),
        },
    );
    assert!(refused.is_err(), "out of turn from a stack");
    assert_eq!(t.state(), &before);
    assert_eq!(t.steps().len(), 1);
}
