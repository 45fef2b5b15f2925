//! Carrying a game over to changed content (`rules::remap`): what the new content lacks is
//! listed, the rest follows by key.

use tokensmith::rules::{Catalog, Cell, Engine, GameState, Lost, NoHooks, Seat, Token, remap};

use crate::support::base_catalog;

#[test]
fn what_the_new_content_lacks_is_listed_and_the_rest_follows_by_key() {
    let old = base_catalog();
    let deck = old.decks()[0].stacks.clone();
    let mut state = Engine::new(&old, &NoHooks)
        .new_game([&deck, &deck], 5, &mut Vec::new())
        .unwrap_or_else(|e| panic!("{e}"));
    let basic = old
        .token_type_named("basic")
        .unwrap_or_else(|e| panic!("{e}"));
    let token = Token {
        value: 4,
        kind: basic,
        card: None,
        seat: Seat::One,
    };
    state.set_token(&old, Cell::new(0, 0), Some(token));
    // The same content in another order: everything is found again.
    let shuffled = old.clone().edited(|p| p.cards.reverse());
    let moved = remap(&state, &old, &shuffled).unwrap_or_else(|l| panic!("{l:?}"));
    let top = |s: &GameState, c: &Catalog| {
        s.seat(Seat::One).stacks()[0]
            .top()
            .map(|id| c.card(id).meta.key())
    };
    assert_eq!(top(&moved, &shuffled), top(&state, &old));
    assert_eq!(moved.board().get(Cell::new(0, 0)), Some(token));
    // A card of the decks gone: every stack entry holding it is named.
    let first = deck[0][0];
    let fewer = old
        .clone()
        .edited(|p| p.cards[first.index()].meta.id = "renamed".into());
    let lost = remap(&state, &old, &fewer).err().unwrap_or_default();
    let key = old.card(first).meta.key();
    assert_eq!(
        lost,
        vec![
            Lost::StackCard {
                seat: Seat::One,
                stack: 0,
                card: key.clone()
            },
            Lost::StackCard {
                seat: Seat::Two,
                stack: 0,
                card: key
            },
        ]
    );
    assert!(
        lost[0].to_string().contains("stack 1 holds card"),
        "{}",
        lost[0]
    );
}
