//! The deck editor's edits, without egui: putting a card from the collection into a
//! stack, moving one between places, taking one out, and everything that keeps the deck
//! from being played, in words. Cards are kept as written (`pack:id`), so a card of a
//! pack that is not loaded stays in its place.
//!
//! `Cards` is an index of the names decks use, made once per catalog, so a frame costs the
//! same with 40 cards or 1,000.

use std::collections::HashMap;
use std::ops::Deref;
use std::sync::Arc;

use crate::profile::{Resolved, SavedDeck};
use crate::rules::{CardId, Catalog, DeckError, Engine, NoHooks, Seat, Whose};

/// Cards by the text decks name them with: `pack:id`, or a bare id that one pack alone
/// uses (as [`Catalog::card_named`] reads them). Made once per catalog, so a frame that
/// looks up every card of every deck costs no scan, and a card that is not loaded costs
/// no did-you-mean search.
pub struct CardIndex {
    by_key: HashMap<String, CardId>,
    /// `None` where two packs use the same id.
    by_id: HashMap<String, Option<CardId>>,
}

impl CardIndex {
    /// The index of `catalog`'s cards.
    #[must_use]
    pub fn new(catalog: &Catalog) -> CardIndex {
        let mut by_key = HashMap::with_capacity(catalog.cards().len());
        let mut by_id: HashMap<String, Option<CardId>> =
            HashMap::with_capacity(catalog.cards().len());
        for id in catalog.card_ids() {
            let meta = &catalog.card(id).meta;
            by_key.insert(meta.key(), id);
            by_id
                .entry(meta.id.clone())
                .and_modify(|e| *e = None)
                .or_insert(Some(id));
        }
        CardIndex { by_key, by_id }
    }
}

/// A [`CardIndex`] kept with the catalog it was made from, made again when that changes
/// (a live reload).
#[derive(Default)]
pub struct IndexCache(Option<(Arc<Catalog>, CardIndex)>);

impl IndexCache {
    /// The index of `catalog`.
    pub fn get(&mut self, catalog: &Arc<Catalog>) -> &CardIndex {
        if self
            .0
            .as_ref()
            .is_some_and(|(c, _)| !Arc::ptr_eq(c, catalog))
        {
            self.0 = None;
        }
        let (_, index) = self
            .0
            .get_or_insert_with(|| (Arc::clone(catalog), CardIndex::new(catalog)));
        index
    }
}

/// The loaded content with its card index: what the editor resolves deck cards in. It
/// derefs to the [`Catalog`].
#[derive(Clone, Copy)]
pub struct Cards<'a> {
    catalog: &'a Catalog,
    index: &'a CardIndex,
}

impl<'a> Cards<'a> {
    /// `catalog` with its index.
    #[must_use]
    pub fn new(catalog: &'a Catalog, index: &'a CardIndex) -> Cards<'a> {
        Cards { catalog, index }
    }

    /// The card a deck's text names, when it is loaded.
    #[must_use]
    pub fn get(&self, written: &str) -> Option<CardId> {
        if written.contains(':') {
            self.index.by_key.get(written).copied()
        } else {
            self.index.by_id.get(written).copied().flatten()
        }
    }

    /// The name shown for a card as written in a deck: its name when loaded, else the
    /// text.
    #[must_use]
    pub fn name(&self, written: &str) -> String {
        self.get(written).map_or_else(
            || written.to_string(),
            |id| self.catalog.card(id).meta.name.clone(),
        )
    }

    /// The deck's cards looked up, as [`SavedDeck::resolve`] does.
    #[must_use]
    pub fn resolve(&self, deck: &SavedDeck) -> Resolved {
        deck.resolve_with(|c| self.get(c))
    }
}

impl Deref for Cards<'_> {
    type Target = Catalog;

    fn deref(&self) -> &Catalog {
        self.catalog
    }
}

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

/// A deck's stacks as a deck file writes them: each card by `pack:id`.
#[must_use]
pub fn written(catalog: &Catalog, stacks: &[Vec<CardId>]) -> Vec<Vec<String>> {
    stacks
        .iter()
        .map(|s| s.iter().map(|&c| catalog.card(c).meta.key()).collect())
        .collect()
}

/// Where `key` already is in the deck (matched by card, so `weaken` and `base:weaken`
/// are the same card).
#[must_use]
pub fn find(deck: &SavedDeck, catalog: &Cards<'_>, key: &str) -> Option<Slot> {
    let wanted = catalog.get(key);
    deck.stacks.iter().enumerate().find_map(|(stack, cards)| {
        cards
            .iter()
            .position(|c| match wanted {
                Some(id) => catalog.get(c) == Some(id),
                None => c == key,
            })
            .map(|index| Slot { stack, index })
    })
}

/// What a put did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Placed {
    /// The card is now at this slot.
    At(Slot),
    /// The target stack was full: the card dropped on a card of it changed places with
    /// that card.
    Swapped(Slot),
    /// The target stack was full: the collection card took the place of the card it was
    /// dropped on, which went back to the collection (its text).
    Replaced(Slot, String),
}

/// Put a card at `to` (a stack the rules have but the deck lacks is added); what it did,
/// or why not (the deck is then unchanged). Dropped on a card of a full stack, a card
/// of the deck changes places with it and a collection card takes its place.
pub fn put(
    deck: &mut SavedDeck,
    catalog: &Cards<'_>,
    from: &Source,
    to: Slot,
) -> Result<Placed, String> {
    let max = usize::from(catalog.rules().stack_max);
    let stacks = deck.stacks.len().max(usize::from(catalog.rules().stacks));
    if to.stack >= stacks {
        return Err(format!("there is no stack {}", to.stack + 1));
    }
    if let Source::Collection(key) = from
        && let Some(at) = find(deck, catalog, key)
    {
        return Err(format!(
            "{} is already in stack {}: a card appears at most once in a deck",
            catalog.name(key),
            at.stack + 1
        ));
    }
    if let Source::Slot(at) = from
        && deck
            .stacks
            .get(at.stack)
            .is_none_or(|s| at.index >= s.len())
    {
        return Err("that card is no longer there".into());
    }
    while deck.stacks.len() <= to.stack {
        deck.stacks.push(Vec::new());
    }
    let target_len = deck.stacks[to.stack].len();
    let moves_in = !matches!(from, Source::Slot(at) if at.stack == to.stack);
    if moves_in && target_len >= max {
        return exchange(deck, from, to).ok_or_else(|| full(to.stack, max));
    }
    let card = match from {
        Source::Collection(key) => key.clone(),
        Source::Slot(at) => deck.stacks[at.stack].remove(at.index),
    };
    let mut index = to.index;
    if let Source::Slot(at) = from
        && at.stack == to.stack
        && to.index > at.index
    {
        index -= 1;
    }
    let stack = &mut deck.stacks[to.stack];
    let index = index.min(stack.len());
    stack.insert(index, card);
    Ok(Placed::At(Slot {
        stack: to.stack,
        index,
    }))
}

/// A drop on a card of a full stack: swap with a deck card, or replace it with a
/// collection card. `None` when `to` is not a card.
fn exchange(deck: &mut SavedDeck, from: &Source, to: Slot) -> Option<Placed> {
    deck.stacks.get(to.stack)?.get(to.index)?;
    match from {
        Source::Collection(key) => {
            let old = std::mem::replace(&mut deck.stacks[to.stack][to.index], key.clone());
            Some(Placed::Replaced(to, old))
        }
        Source::Slot(at) => {
            let mine = deck.stacks[at.stack][at.index].clone();
            let theirs = std::mem::replace(&mut deck.stacks[to.stack][to.index], mine);
            deck.stacks[at.stack][at.index] = theirs;
            Some(Placed::Swapped(to))
        }
    }
}

fn full(stack: usize, max: usize) -> String {
    format!(
        "stack {} is full: stacks hold at most {max} cards (drop on one of its cards to exchange them)",
        stack + 1
    )
}

/// Take the card at `at` out of the deck (back to the collection); the card taken.
pub fn take(deck: &mut SavedDeck, at: Slot) -> Option<String> {
    let stack = deck.stacks.get_mut(at.stack)?;
    (at.index < stack.len()).then(|| stack.remove(at.index))
}

/// Give the deck the rules' number of stacks, keeping every card (extra stacks' cards
/// move to the last stack kept, so nothing is lost; the size check then tells). Only
/// when the user asks: a deck is never changed behind their back.
pub fn fit_stacks(deck: &mut SavedDeck, catalog: &Catalog) {
    let want = usize::from(catalog.rules().stacks).max(1);
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
pub fn problems(deck: &SavedDeck, catalog: &Cards<'_>) -> Vec<String> {
    let resolved = catalog.resolve(deck);
    let mut out: Vec<String> = resolved
        .missing
        .iter()
        .map(|c| {
            let pack = c.split_once(':').map_or("", |(p, _)| p);
            if pack.is_empty() || catalog.packs().iter().any(|p| p.id == pack) {
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
            .map(|p| describe(catalog, deck, p)),
    );
    out
}

/// A rules problem in the editor's words (no seat: the deck is not in a game yet). The
/// engine's own words, except where the editor knows more: a card's display name, and the
/// cards of a stack that are not loaded.
fn describe(catalog: &Cards<'_>, deck: &SavedDeck, problem: &DeckError) -> String {
    match problem {
        DeckError::StackCount { .. } | DeckError::UnknownCard { .. } => {
            problem.message(Whose::Deck)
        }
        DeckError::StackSize {
            stack,
            found,
            min,
            max,
            ..
        } => {
            let cards = if *found == 1 { "card" } else { "cards" };
            let written = deck.stacks.get(*stack).map_or(0, Vec::len);
            let loaded = if written > *found {
                format!(" loaded (and {} not loaded)", written - found)
            } else {
                String::new()
            };
            format!(
                "stack {} has {found} {cards}{loaded}; stacks hold {min} to {max}",
                stack + 1
            )
        }
        DeckError::Duplicate { card, .. } => format!(
            "{} is in the deck more than once: a card appears at most once",
            catalog.name(card)
        ),
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

    fn ok(r: Result<Placed, String>) -> Placed {
        r.unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn cards_go_in_once_move_within_and_between_stacks_and_come_out() {
        let base = crate::content::base_for_tests();
        let index = CardIndex::new(&base);
        let catalog = Cards::new(&base, &index);
        let mut d = deck(&[&[], &[], &[], &[]]);
        let weaken = Source::Collection("base:weaken_row".into());
        assert_eq!(
            ok(put(&mut d, &catalog, &weaken, slot(0, 0))),
            Placed::At(slot(0, 0))
        );
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
        ok(put(
            &mut d,
            &catalog,
            &Source::Collection("base:push_row".into()),
            slot(0, 0),
        ));
        assert_eq!(d.stacks[0], ["base:push_row", "base:weaken_row"]);
        // Down within a stack: to the bottom; the card lands at the last place.
        let placed = ok(put(&mut d, &catalog, &Source::Slot(slot(0, 0)), slot(0, 2)));
        assert_eq!(placed, Placed::At(slot(0, 1)));
        assert_eq!(d.stacks[0], ["base:weaken_row", "base:push_row"]);
        // To another stack, past its end: at its bottom.
        let placed = ok(put(&mut d, &catalog, &Source::Slot(slot(0, 1)), slot(3, 4)));
        assert_eq!(placed, Placed::At(slot(3, 0)));
        assert_eq!(d.stacks[0], ["base:weaken_row"]);
        assert_eq!(d.stacks[3], ["base:push_row"]);
        let gone = put(&mut d, &catalog, &Source::Slot(slot(2, 0)), slot(1, 0));
        assert!(gone.is_err_and(|e| e.contains("no longer there")));
        assert!(
            put(&mut d, &catalog, &weaken, slot(7, 0)).is_err(),
            "no stack 8"
        );
        assert_eq!(take(&mut d, slot(3, 0)).as_deref(), Some("base:push_row"));
        assert_eq!(take(&mut d, slot(3, 0)), None);
    }

    #[test]
    fn a_full_stack_refuses_a_new_card_but_exchanges_one_dropped_on_its_cards() {
        let base = crate::content::base_for_tests();
        let index = CardIndex::new(&base);
        let catalog = Cards::new(&base, &index);
        let keys: Vec<String> = catalog.cards().iter().map(|c| c.meta.key()).collect();
        let mut d = deck(&[&[], &[], &[], &[]]);
        let max = usize::from(catalog.rules().stack_max);
        for key in keys.iter().take(max) {
            ok(put(
                &mut d,
                &catalog,
                &Source::Collection(key.clone()),
                slot(1, 9),
            ));
        }
        let before = d.clone();
        let refused = put(
            &mut d,
            &catalog,
            &Source::Collection(keys[max].clone()),
            slot(1, max),
        );
        assert!(refused.is_err_and(|e| e.contains("stack 2 is full")));
        assert_eq!(d, before, "unchanged");
        // A deck card dropped on a card of the full stack: they change places.
        ok(put(
            &mut d,
            &catalog,
            &Source::Collection(keys[max].clone()),
            slot(0, 0),
        ));
        let swapped = ok(put(&mut d, &catalog, &Source::Slot(slot(0, 0)), slot(1, 2)));
        assert_eq!(swapped, Placed::Swapped(slot(1, 2)));
        assert_eq!(d.stacks[1][2], keys[max]);
        assert_eq!(d.stacks[0], [keys[2].clone()]);
        // A collection card dropped on one: it takes the place, the other goes back.
        let replaced = ok(put(
            &mut d,
            &catalog,
            &Source::Collection(keys[max + 1].clone()),
            slot(1, 0),
        ));
        assert_eq!(replaced, Placed::Replaced(slot(1, 0), keys[0].clone()));
        assert_eq!(d.stacks[1][0], keys[max + 1]);
        // Reordering inside a full stack is a plain move.
        let first = d.stacks[1][0].clone();
        ok(put(
            &mut d,
            &catalog,
            &Source::Slot(slot(1, 0)),
            slot(1, max),
        ));
        assert_eq!(d.stacks[1].len(), max);
        assert_eq!(d.stacks[1][max - 1], first);
    }

    #[test]
    fn problems_name_each_stack_duplicates_and_cards_of_packs_not_loaded() {
        let base = crate::content::base_for_tests();
        let index = CardIndex::new(&base);
        let catalog = Cards::new(&base, &index);
        let d = deck(&[
            &["base:weaken_row", "frost:hailstorm"],
            &["weaken_row", "base:push_row"],
            &["base:flip_cross", "base:plant_ring"],
            &["base:gild_cross"],
        ]);
        assert_eq!(
            problems(&d, &catalog),
            [
                "frost:hailstorm is from the pack 'frost', which is not loaded",
                "stack 1 has 1 card loaded (and 1 not loaded); stacks hold 2 to 5",
                "Row Weakener is in the deck more than once: a card appears at most once",
                "stack 4 has 1 card; stacks hold 2 to 5",
            ]
        );
    }

    #[test]
    fn a_deck_with_the_wrong_number_of_stacks_is_told_and_fitted_only_when_asked() {
        let base = crate::content::base_for_tests();
        let index = CardIndex::new(&base);
        let catalog = Cards::new(&base, &index);
        let mut five = deck(&[
            &["base:weaken_row", "base:push_row"],
            &["base:flip_cross", "base:plant_ring"],
            &["base:gift", "base:swap"],
            &["base:lure"],
            &["base:beacon"],
        ]);
        assert_eq!(
            problems(&five, &catalog).first().map(String::as_str),
            Some("the deck has 5 stacks; the rules want 4")
        );
        fit_stacks(&mut five, &catalog);
        assert_eq!(five.stacks.len(), 4);
        assert_eq!(five.stacks[3], ["base:lure", "base:beacon"], "no card lost");
        assert!(problems(&five, &catalog).is_empty());
        // Too few: a put into a stack the rules have adds it.
        let mut two = deck(&[&["base:gift"], &[]]);
        let placed = ok(put(
            &mut two,
            &catalog,
            &Source::Collection("base:lure".into()),
            slot(3, 0),
        ));
        assert_eq!(placed, Placed::At(slot(3, 0)));
        assert_eq!(two.stacks.len(), 4);
        assert!(
            put(
                &mut two,
                &catalog,
                &Source::Collection("base:swap".into()),
                slot(4, 0)
            )
            .is_err()
        );
    }
}
