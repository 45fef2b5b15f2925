//! What one seat may see (`tokensmith::observe`): a position keeps nothing hidden, and a
//! history followed one state at a time keeps only the positions it saw.

use tokensmith::observe::{History, KEPT_POSITIONS, PublicPlay};
use tokensmith::rules::{Engine, EventKind, NoHooks, Seat};

use crate::support::base_catalog;

#[test]
fn a_position_keeps_nothing_hidden() {
    let catalog = base_catalog();
    let engine = Engine::new(&catalog, &NoHooks);
    let (a, b) = (&catalog.decks()[0].stacks, &catalog.decks()[1].stacks);
    let one = engine.new_game([a, b], 1, &mut Vec::new()).expect("a game");
    let mut two = one.clone();
    two.set_stacks(Seat::Two, a);
    two.set_stacks(Seat::One, b);
    two.reseed(99);
    let history = History::new();
    let (p, q) = (history.position_of(&one), history.position_of(&two));
    let (p, q) = (p.expect("kept"), q.expect("kept"));
    assert_eq!(
        p.state(),
        q.state(),
        "stacks and draws differ only where hidden"
    );
    assert!(p.state().seat(Seat::One).hand().next().is_none());
    assert!(p.state().seat(Seat::Two).hand().next().is_none());
}

/// A client's history keeps the position of an opponent's play only when it saw the
/// state just before it: one move, one new play.
#[test]
fn a_followed_history_keeps_positions_seen_just_before_a_play() {
    let catalog = base_catalog();
    let engine = Engine::new(&catalog, &NoHooks);
    let stacks = &catalog.decks()[0].stacks;
    // Six states, one move apart; seat 1 (the opponent of the seat watching) moves
    // first and then every other move.
    let first = engine
        .new_game([stacks, stacks], 1, &mut Vec::new())
        .expect("a game");
    let mut states = vec![first];
    let mut theirs = Vec::new();
    let mut plays = vec![Vec::new()];
    for _ in 0..5 {
        let mut next = states[states.len() - 1].clone();
        let mv = engine.legal_moves(&next)[0];
        let mut events = Vec::new();
        engine
            .play(&mut next, mv, &mut events)
            .expect("a legal move");
        if mv.seat == Seat::One {
            for e in &events {
                if let EventKind::Cycled { seat, stack, card } = e.kind {
                    theirs.push(PublicPlay { seat, stack, card });
                }
            }
        }
        plays.push(theirs.clone());
        states.push(next);
    }
    let kept = |h: &History| {
        (0..h.plays().len())
            .map(|i| h.position(i).is_some())
            .collect::<Vec<_>>()
    };
    // Every state seen: the opponent's plays, from states 0, 2 and 4, keep their
    // positions.
    let mut seen_all = History::new();
    seen_all.follow(None, &states[0], plays[0].clone());
    for i in 1..states.len() {
        seen_all.follow(Some(&states[i - 1]), &states[i], plays[i].clone());
    }
    assert_eq!(seen_all.plays().len(), 3);
    assert_eq!(kept(&seen_all), [true, true, true]);
    let position = seen_all.position(1).expect("kept");
    let before = seen_all.position_of(&states[2]).expect("kept");
    assert_eq!(position.state(), before.state());
    // State 2 missed (a reconnect): the play made from it keeps none, as the play
    // that came two moves after what was seen.
    let mut gap = History::new();
    gap.follow(None, &states[0], plays[0].clone());
    gap.follow(Some(&states[0]), &states[1], plays[1].clone());
    gap.follow(Some(&states[1]), &states[3], plays[3].clone());
    gap.follow(Some(&states[3]), &states[4], plays[4].clone());
    gap.follow(Some(&states[4]), &states[5], plays[5].clone());
    assert_eq!(kept(&gap), [true, false, true]);
    // Another game's plays replace the ones held; a history of plays only keeps none.
    gap.follow(None, &states[0], Vec::new());
    assert!(gap.plays().is_empty() && gap.position(0).is_none());
    // However long a game runs, only the newest positions are kept.
    let mut long = History::new();
    let mut so_far = Vec::new();
    for _ in 0..KEPT_POSITIONS + 40 {
        so_far.push(plays[1][0]);
        long.follow(Some(&states[0]), &states[1], so_far.clone());
    }
    assert_eq!(long.plays().len(), KEPT_POSITIONS + 40);
    assert_eq!(kept(&long)[..40], [false; 40]);
    assert!(kept(&long)[40..].iter().all(|&k| k));
    let mut bare = History::plays_only();
    for i in 1..states.len() {
        bare.follow(Some(&states[i - 1]), &states[i], plays[i].clone());
    }
    assert_eq!(bare.plays().len(), 3);
    assert_eq!(kept(&bare), [false; 3]);
}
