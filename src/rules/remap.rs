//! Carry a game over to new content (a live reload): every card and token type the game
//! uses is matched by `pack:id` in the new catalog. What cannot be matched is listed,
//! never dropped silently.

use std::collections::HashMap;

use super::board::Token;
use super::catalog::Catalog;
use super::defs::Meta;
use super::ids::{CardId, Cell, Seat, TokenTypeId};
use super::state::GameState;

/// Something a game uses that the new content no longer has.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Lost {
    /// The board's size changed.
    Board {
        /// Old width × height.
        old: (u8, u8),
        /// New width × height.
        new: (u8, u8),
    },
    /// A token whose type (or the card it came from) is gone.
    Token {
        /// Where it is.
        cell: Cell,
        /// `pack:id` of the missing type or card.
        missing: String,
    },
    /// A stack entry whose card is gone.
    StackCard {
        /// Whose stack.
        seat: Seat,
        /// Which stack (0-based).
        stack: usize,
        /// `pack:id` of the missing card.
        card: String,
    },
}

impl std::fmt::Display for Lost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Lost::Board { old, new } => write!(
                f,
                "the board changed from {}×{} to {}×{}",
                old.0, old.1, new.0, new.1
            ),
            Lost::Token { cell, missing } => {
                write!(f, "the token at {cell} uses {missing}, which is gone")
            }
            Lost::StackCard { seat, stack, card } => write!(
                f,
                "seat {seat}'s stack {} holds card {card}, which is gone",
                stack + 1
            ),
        }
    }
}

/// Maps the ids of one catalog to another's, by `pack:id`.
pub struct IdMap {
    cards: Vec<Option<CardId>>,
    kinds: Vec<Option<TokenTypeId>>,
}

impl IdMap {
    /// The map from `old`'s ids to `new`'s.
    #[must_use]
    pub fn new(old: &Catalog, new: &Catalog) -> IdMap {
        IdMap {
            cards: by_key(old.cards(), new.cards(), |c| &c.meta)
                .map(|i| i.map(CardId))
                .collect(),
            kinds: by_key(old.token_types(), new.token_types(), |t| &t.meta)
                .map(|i| i.map(TokenTypeId))
                .collect(),
        }
    }

    /// The new id of an old card.
    #[must_use]
    pub fn card(&self, id: CardId) -> Option<CardId> {
        self.cards.get(id.index()).copied().flatten()
    }

    /// The new id of an old token type.
    #[must_use]
    pub fn kind(&self, id: TokenTypeId) -> Option<TokenTypeId> {
        self.kinds.get(id.index()).copied().flatten()
    }
}

/// For each entry of `old`, the index of the entry with the same `pack:id` in `new`.
fn by_key<'a, T>(
    old: &'a [T],
    new: &'a [T],
    meta: impl Fn(&T) -> &Meta + 'a,
) -> impl Iterator<Item = Option<u16>> + 'a {
    let index: HashMap<String, u16> = new
        .iter()
        .enumerate()
        .filter_map(|(i, e)| Some((meta(e).key(), u16::try_from(i).ok()?)))
        .collect();
    old.iter().map(move |e| index.get(&meta(e).key()).copied())
}

/// `state` (played with `old`) as a state of `new`: the same tokens, values, stacks in
/// their current order, scores, turn and generator, with ids matched by `pack:id`. A
/// token's value stays as it is (a changed card value applies to tokens placed from now
/// on); its type is looked up in `new` from now on. Every unmatched use is returned.
pub fn remap(state: &GameState, old: &Catalog, new: &Catalog) -> Result<GameState, Vec<Lost>> {
    remap_with(state, &IdMap::new(old, new), old, new)
}

/// [`remap`] with a map already made (carrying many states over at once).
pub fn remap_with(
    state: &GameState,
    map: &IdMap,
    old: &Catalog,
    new: &Catalog,
) -> Result<GameState, Vec<Lost>> {
    let (ow, oh) = (old.rules().width, old.rules().height);
    let (nw, nh) = (new.rules().width, new.rules().height);
    if (ow, oh) != (nw, nh) {
        return Err(vec![Lost::Board {
            old: (ow, oh),
            new: (nw, nh),
        }]);
    }
    let mut lost = Vec::new();
    let mut tokens = Vec::new();
    for (cell, token) in state.board().tokens() {
        let kind = map.kind(token.kind);
        let card = token.card.map(|c| map.card(c));
        match (kind, card) {
            (Some(kind), None | Some(Some(_))) => {
                tokens.push((
                    cell,
                    Token {
                        kind,
                        card: card.flatten(),
                        ..token
                    },
                ));
            }
            (None, _) => lost.push(Lost::Token {
                cell,
                missing: format!("token type {}", old.token_type(token.kind).meta.key()),
            }),
            (Some(_), Some(None)) => lost.push(Lost::Token {
                cell,
                missing: format!(
                    "card {}",
                    token
                        .card
                        .map_or_else(String::new, |c| old.card(c).meta.key())
                ),
            }),
        }
    }
    let mut decks = Vec::new();
    for seat in Seat::BOTH {
        let mut stacks = Vec::new();
        for (i, stack) in state.seat(seat).stacks().iter().enumerate() {
            let mut cards = Vec::new();
            for c in stack.cards() {
                match map.card(c) {
                    Some(n) => cards.push(n),
                    None => lost.push(Lost::StackCard {
                        seat,
                        stack: i,
                        card: old.card(c).meta.key(),
                    }),
                }
            }
            stacks.push(cards);
        }
        decks.push((seat, stacks));
    }
    if !lost.is_empty() {
        return Err(lost);
    }
    let mut next = state.clone();
    // Take every token off with the catalog it was placed with, then put it back with
    // the new one, so the board's cached sums never mix the two.
    for &(cell, _) in &tokens {
        next.set_token(old, cell, None);
    }
    for (cell, token) in tokens {
        next.set_token(new, cell, Some(token));
    }
    for (seat, stacks) in decks {
        next.set_stacks(seat, &stacks);
    }
    next.rebind(new);
    Ok(next)
}
