//! The deck editor's edits, without egui: putting a card from the collection into a
//! stack, moving one between places, taking one out, and everything that keeps the deck
//! from being played, in words. Cards are kept as written (`pack:id`), so a card of a
//! pack that is not loaded stays in its place.

use crate::profile::SavedDeck;
use crate::rules::{Catalog, DeckError, Engine, NoHooks, Seat};

/// Where a card is taken from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    /// The collection: a card of the loaded packs, by `pack:id`.
    Collection(String),
    /// A place in the deck.
    Slot(Slot),
}

/// A place in the deck: a stack and a position in it, top card first. As a target, the
/// card goes before the one there (`index` = the stack's length: at the bottom).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Slot {
    /// The stack (0-based).
    pub stack: usize,
    /// The position in the stack (0 = top).
    pub index: usize,
}

/// The name shown for a card as written in a deck: its name when loaded, else the text.
#[must_use]
pub fn card_name(catalog: &Catalog, written: &str) -> String {
    catalog.card_named(written).map_or_else(
        |_| written.to_string(),
        |id| catalog.card(id).meta.name.clone(),
    )
}

/// Where `key` already is in the deck (matched by card, so `weaken` and `base:weaken`
/// are the same card).
#[must_use]
pub fn find(deck: &SavedDeck, catalog: &Catalog, key: &str) -> Option<Slot> {
    let wanted = catalog.card_named(key).ok();
    deck.stacks.iter().enumerate().find_map(|(stack, cards)| {
        cards
            .iter()
            .position(|c| match wanted {
                Some(id) => catalog.card_named(c).ok() == Some(id),
                None => c == key,
            })
            .map(|index| Slot { stack, index })
    })
}

/// Put a card at `to`; why not, when it cannot go there (the deck is then unchanged).
pub fn put(deck: &mut SavedDeck, catalog: &Catalog, from: &Source, to: Slot) -> Result<(), String> {
    let max = usize::from(catalog.rules.stack_max);
    let Some(target_len) = deck.stacks.get(to.stack).map(Vec::len) else {
        return Err(format!("there is no stack {}", to.stack + 1));
    };
    match from {
        Source::Collection(key) => {
            if let Some(at) = find(deck, catalog, key) {
                return Err(format!(
                    "{} is already in stack {}: a card appears at most once in a deck",
                    card_name(catalog, key),
                    at.stack + 1
                ));
            }
            if target_len >= max {
                return Err(full(to.stack, max));
            }
            deck.stacks[to.stack].insert(to.index.min(target_len), key.clone());
        }
        Source::Slot(at) => {
            let Some(card) = deck.stacks.get(at.stack).and_then(|s| s.get(at.index)) else {
                return Err("that card is no longer there".into());
            };
            let card = card.clone();
            if at.stack != to.stack && target_len >= max {
                return Err(full(to.stack, max));
            }
            deck.stacks[at.stack].remove(at.index);
            let mut index = to.index;
            if at.stack == to.stack && to.index > at.index {
                index -= 1;
            }
            let stack = &mut deck.stacks[to.stack];
            stack.insert(index.min(stack.len()), card);
        }
    }
    Ok(())
}

fn full(stack: usize, max: usize) -> String {
    format!(
        "stack {} is full: stacks hold at most {max} cards",
        stack + 1
    )
}

/// Take the card at `at` out of the deck (back to the collection); the card taken.
pub fn take(deck: &mut SavedDeck, at: Slot) -> Option<String> {
    let stack = deck.stacks.get_mut(at.stack)?;
    (at.index < stack.len()).then(|| stack.remove(at.index))
}

/// Give the deck the rules' number of stacks, keeping every card (extra stacks' cards
/// move to the last stack kept, so nothing is lost; the size check then tells).
pub fn fit_stacks(deck: &mut SavedDeck, catalog: &Catalog) {
    let want = usize::from(catalog.rules.stacks).max(1);
    while deck.stacks.len() < want {
        deck.stacks.push(Vec::new());
    }
    while deck.stacks.len() > want {
        let extra = deck.stacks.pop().unwrap_or_default();
        if let Some(last) = deck.stacks.last_mut() {
            last.extend(extra);
        }
    }
}

/// Everything that keeps the deck from being played with the loaded content, in words;
/// empty when it is ready.
#[must_use]
pub fn problems(deck: &SavedDeck, catalog: &Catalog) -> Vec<String> {
    let resolved = deck.resolve(catalog);
    let mut out: Vec<String> = resolved
        .missing
        .iter()
        .map(|c| {
            let pack = c.split_once(':').map_or("", |(p, _)| p);
            if pack.is_empty() || catalog.packs.iter().any(|p| p.id == pack) {
                format!("{c} is not a card of the loaded packs")
            } else {
                format!("{c} is from the pack '{pack}', which is not loaded")
            }
        })
        .collect();
    let engine = Engine::new(catalog, &NoHooks);
    out.extend(
        engine
            .deck_problems(Seat::One, &resolved.stacks)
            .iter()
            .map(|p| describe(catalog, p)),
    );
    out
}

/// A rules problem in the editor's words (no seat: the deck is not in a game yet).
fn describe(catalog: &Catalog, problem: &DeckError) -> String {
    match problem {
        DeckError::StackCount { found, wanted, .. } => {
            format!("the deck has {found} stacks; the rules want {wanted}")
        }
        DeckError::StackSize {
            stack,
            found,
            min,
            max,
            ..
        } => {
            let cards = if *found == 1 { "card" } else { "cards" };
            format!(
                "stack {} has {found} {cards}; stacks hold {min} to {max}",
                stack + 1
            )
        }
        DeckError::Duplicate { card, .. } => format!(
            "{} is in the deck more than once: a card appears at most once",
            card_name(catalog, card)
        ),
        DeckError::UnknownCard { card, .. } => {
            format!("card #{card} is not in the loaded content")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::FORMAT_VERSION;

    fn deck(stacks: &[&[&str]]) -> SavedDeck {
        SavedDeck {
            format_version: FORMAT_VERSION,
            id: "d".into(),
            name: "D".into(),
            stacks: stacks
                .iter()
                .map(|s| s.iter().map(|c| (*c).to_string()).collect())
                .collect(),
        }
    }

    fn slot(stack: usize, index: usize) -> Slot {
        Slot { stack, index }
    }

    #[test]
    fn cards_go_in_once_move_within_and_between_stacks_and_come_out() {
        let catalog = crate::content::base_for_tests();
        let mut d = deck(&[&[], &[], &[], &[]]);
        let weaken = Source::Collection("base:weaken_row".into());
        put(&mut d, &catalog, &weaken, slot(0, 0)).unwrap_or_else(|e| panic!("{e}"));
        let again = put(
            &mut d,
            &catalog,
            &Source::Collection("weaken_row".into()),
            slot(2, 0),
        );
        assert!(
            again.is_err_and(|e| e.contains("already in stack 1")),
            "once"
        );
        put(
            &mut d,
            &catalog,
            &Source::Collection("base:push_row".into()),
            slot(0, 0),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(d.stacks[0], ["base:push_row", "base:weaken_row"]);
        // Down within a stack: to the bottom.
        put(&mut d, &catalog, &Source::Slot(slot(0, 0)), slot(0, 2))
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(d.stacks[0], ["base:weaken_row", "base:push_row"]);
        // To another stack.
        put(&mut d, &catalog, &Source::Slot(slot(0, 1)), slot(3, 0))
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(d.stacks[0], ["base:weaken_row"]);
        assert_eq!(d.stacks[3], ["base:push_row"]);
        assert_eq!(take(&mut d, slot(3, 0)).as_deref(), Some("base:push_row"));
        assert_eq!(take(&mut d, slot(3, 0)), None);
    }

    #[test]
    fn a_full_stack_refuses_a_card_and_says_why() {
        let catalog = crate::content::base_for_tests();
        let keys: Vec<String> = catalog.cards.iter().map(|c| c.meta.key()).collect();
        let mut d = deck(&[&[], &[], &[], &[]]);
        let max = usize::from(catalog.rules.stack_max);
        for key in keys.iter().take(max) {
            put(
                &mut d,
                &catalog,
                &Source::Collection(key.clone()),
                slot(1, 9),
            )
            .unwrap_or_else(|e| panic!("{e}"));
        }
        let before = d.clone();
        let refused = put(
            &mut d,
            &catalog,
            &Source::Collection(keys[max].clone()),
            slot(1, 0),
        );
        assert!(refused.is_err_and(|e| e.contains("stack 2 is full")));
        put(
            &mut d,
            &catalog,
            &Source::Collection(keys[max].clone()),
            slot(0, 0),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let moved = put(&mut d, &catalog, &Source::Slot(slot(0, 0)), slot(1, 0));
        assert!(moved.is_err(), "a full stack takes no card from another");
        // Reordering inside a full stack is fine.
        put(&mut d, &catalog, &Source::Slot(slot(1, 0)), slot(1, max))
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(d.stacks[1].len(), max);
        assert_eq!(d.stacks[1][max - 1], before.stacks[1][0]);
    }

    #[test]
    fn problems_name_each_stack_duplicates_and_cards_of_packs_not_loaded() {
        let catalog = crate::content::base_for_tests();
        let d = deck(&[
            &["base:weaken_row", "frost:hailstorm"],
            &["weaken_row", "base:push_row"],
            &["base:flip_cross", "base:plant_ring"],
            &["base:gild_cross"],
        ]);
        let p = problems(&d, &catalog);
        assert_eq!(
            p,
            [
                "frost:hailstorm is from the pack 'frost', which is not loaded",
                "stack 1 has 1 card; stacks hold 2 to 5",
                "Row Weakener is in the deck more than once: a card appears at most once",
                "stack 4 has 1 card; stacks hold 2 to 5",
            ]
        );
        let mut fixed = d.clone();
        fixed.stacks[3].push("base:push_ring".into());
        fit_stacks(&mut fixed, &catalog);
        assert_eq!(fixed.stacks.len(), 4);
    }
}
