//! The deck rules, in one place: how many stacks, how many cards in each, no card twice.
//! A game's decks are checked through [`Engine::deck_problems`](super::Engine::deck_problems);
//! the loader checks a pack's decks with the same [`deck_problems`] before its catalog
//! exists, and places each [`DeckError`] in the YAML file.

use super::defs::Ruleset;
use super::ids::{CardId, Seat};

/// Why a deck cannot be used with the loaded rules. `Display` names the seat whose deck
/// it is; [`DeckError::message`] can leave it out (a deck not in a game yet).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DeckError {
    /// Wrong number of stacks.
    StackCount {
        /// Whose deck.
        seat: Seat,
        /// How many it has.
        found: usize,
        /// How many the rules want.
        wanted: u8,
    },
    /// A stack too small or too large.
    StackSize {
        /// Whose deck.
        seat: Seat,
        /// Which stack (0-based).
        stack: usize,
        /// How many cards it has.
        found: usize,
        /// Fewest allowed.
        min: u8,
        /// Most allowed.
        max: u8,
    },
    /// A card twice in one deck (reported at its second place).
    Duplicate {
        /// Whose deck.
        seat: Seat,
        /// The card id.
        card: String,
        /// The stack of the second place (0-based).
        stack: usize,
        /// The place in that stack (0-based).
        place: usize,
    },
    /// A card id outside the catalog.
    UnknownCard {
        /// Whose deck.
        seat: Seat,
        /// The raw id.
        card: u16,
        /// Its stack (0-based).
        stack: usize,
        /// Its place in that stack (0-based).
        place: usize,
    },
}

/// Whose deck a [`DeckError`] message speaks of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Whose<'a> {
    /// A seat's, in a game: "seat 1's deck has…".
    Seat,
    /// A deck on its own (the editor, `deck import`): "the deck has…".
    Deck,
    /// A pack's deck by its id (the loader): "deck 'starter' has…".
    Named(&'a str),
}

impl DeckError {
    /// The problem in words, naming the seat or not.
    #[must_use]
    pub fn message(&self, whose: Whose<'_>) -> String {
        // "seat 1's deck" / "the deck" / "deck 'starter'", and "seat 1's stack 2" /
        // "stack 2" / "stack 2 of deck 'starter'".
        let deck = |seat: &Seat| match whose {
            Whose::Seat => format!("seat {seat}'s deck"),
            Whose::Deck => "the deck".to_string(),
            Whose::Named(id) => format!("deck '{id}'"),
        };
        match self {
            DeckError::StackCount {
                seat,
                found,
                wanted,
            } => format!("{} has {found} stacks; the rules want {wanted}", deck(seat)),
            DeckError::StackSize {
                seat,
                stack,
                found,
                min,
                max,
            } => {
                let stack = match whose {
                    Whose::Seat => format!("seat {seat}'s stack {}", stack + 1),
                    Whose::Deck => format!("stack {}", stack + 1),
                    Whose::Named(id) => format!("stack {} of deck '{id}'", stack + 1),
                };
                let plural = if *found == 1 { "" } else { "s" };
                format!("{stack} has {found} card{plural}; stacks hold {min} to {max}")
            }
            DeckError::Duplicate { seat, card, .. } => format!(
                "card '{card}' is already in {}; a card appears at most once in a deck",
                deck(seat)
            ),
            DeckError::UnknownCard { seat, card, .. } => format!(
                "{} names card #{card}, which is not in the loaded content",
                deck(seat)
            ),
        }
    }
}

impl std::fmt::Display for DeckError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message(Whose::Seat))
    }
}

impl std::error::Error for DeckError {}

/// Every way a deck breaks the rules, stack by stack: the stack count, then for each
/// stack its size and any card already in an earlier place of the deck (once per card).
/// Without `rules` (a content set whose rules did not load) only the cards are checked.
/// `cards` is how many cards the content has; `name` gives a card's id for messages.
#[must_use]
pub fn deck_problems(
    rules: Option<&Ruleset>,
    cards: usize,
    seat: Seat,
    stacks: &[Vec<CardId>],
    name: &dyn Fn(CardId) -> String,
) -> Vec<DeckError> {
    let mut problems = Vec::new();
    if let Some(rules) = rules
        && stacks.len() != usize::from(rules.stacks)
    {
        problems.push(DeckError::StackCount {
            seat,
            found: stacks.len(),
            wanted: rules.stacks,
        });
    }
    let mut seen = vec![0u8; cards];
    for (i, stack) in stacks.iter().enumerate() {
        if let Some(rules) = rules
            && (stack.len() < usize::from(rules.stack_min)
                || stack.len() > usize::from(rules.stack_max))
        {
            problems.push(DeckError::StackSize {
                seat,
                stack: i,
                found: stack.len(),
                min: rules.stack_min,
                max: rules.stack_max,
            });
        }
        for (place, &card) in stack.iter().enumerate() {
            let Some(count) = seen.get_mut(card.index()) else {
                problems.push(DeckError::UnknownCard {
                    seat,
                    card: card.0,
                    stack: i,
                    place,
                });
                continue;
            };
            *count = count.saturating_add(1);
            if *count == 2 {
                problems.push(DeckError::Duplicate {
                    seat,
                    card: name(card),
                    stack: i,
                    place,
                });
            }
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deck_errors_speak_of_a_seat_or_of_the_deck() {
        let count = DeckError::StackCount {
            seat: Seat::Two,
            found: 5,
            wanted: 4,
        };
        assert_eq!(
            count.to_string(),
            "seat 2's deck has 5 stacks; the rules want 4"
        );
        assert_eq!(
            count.message(Whose::Deck),
            "the deck has 5 stacks; the rules want 4"
        );
        let size = DeckError::StackSize {
            seat: Seat::One,
            stack: 1,
            found: 1,
            min: 2,
            max: 5,
        };
        assert_eq!(
            size.to_string(),
            "seat 1's stack 2 has 1 card; stacks hold 2 to 5"
        );
        assert_eq!(
            size.message(Whose::Deck),
            "stack 2 has 1 card; stacks hold 2 to 5"
        );
        assert_eq!(
            size.message(Whose::Named("starter")),
            "stack 2 of deck 'starter' has 1 card; stacks hold 2 to 5"
        );
        let twice = DeckError::Duplicate {
            seat: Seat::One,
            card: "boost".to_string(),
            stack: 0,
            place: 1,
        };
        assert_eq!(
            twice.message(Whose::Named("starter")),
            "card 'boost' is already in deck 'starter'; a card appears at most once in a deck"
        );
    }
}
