//! A position a play was made from, with nothing hidden in it, and what each card was
//! worth there, as the AI has rated it so far: plain data, kept with the position so that
//! a later rating goes on where the last one stopped.

use std::sync::{Mutex, PoisonError};

use crate::rules::{GameState, Seat};

/// A position a play was made from, with nothing hidden in it (both seats' stacks empty,
/// the generator reseeded), and what each card would have been worth there to the seat
/// that played, as far as it has been rated (card by card, as observers need it).
#[derive(Debug)]
pub struct Position {
    state: GameState,
    /// The catalog's stamp and, by card, what is known of its worth (see [`Worth`]).
    worth: Mutex<(u64, Vec<Worth>)>,
}

/// A card's worth at a position to the seat to move: `None` not rated yet (or its rating
/// was cut short, or a script failed in it); `Some(None)` no legal move with it;
/// `Some(Some(swing))` its best income swing, as `greedy` rates a move.
pub(crate) type Worth = Option<Option<f64>>;

impl Position {
    /// The position of a move about to be made from `state`.
    pub(super) fn of(state: &GameState) -> Position {
        let mut public = state.clone();
        for seat in [Seat::One, Seat::Two] {
            let empty = vec![Vec::new(); public.seat(seat).stacks().len()];
            public.set_stacks(seat, &empty);
        }
        public.reseed(u64::from(state.moves_played()).wrapping_mul(0x9E37_79B9_7F4A_7C15));
        Position {
            state: public,
            worth: Mutex::new((0, Vec::new())),
        }
    }

    /// The state the play was made from, both seats' stacks empty.
    #[must_use]
    pub fn state(&self) -> &GameState {
        &self.state
    }

    /// What is known of each of `cards` cards' worth here for the catalog of `stamp`: a
    /// copy (nothing known when what is kept is another catalog's), so that the lock is
    /// held only to copy.
    pub(crate) fn known_worth(&self, stamp: u64, cards: usize) -> Vec<Worth> {
        let kept = self.worth.lock().unwrap_or_else(PoisonError::into_inner);
        if kept.0 == stamp && kept.1.len() == cards {
            kept.1.clone()
        } else {
            vec![None; cards]
        }
    }

    /// Keep what `known` (by card, for the catalog of `stamp`) says of the cards not
    /// rated here yet; what was kept for another catalog goes. Two ratings at once each
    /// merge their own: a card rated by both keeps the first worth merged.
    pub(crate) fn learn_worth(&self, stamp: u64, known: &[Worth]) {
        let n = known.len();
        let mut kept = self.worth.lock().unwrap_or_else(PoisonError::into_inner);
        if kept.0 != stamp || kept.1.len() != n {
            *kept = (stamp, vec![None; n]);
        }
        for (slot, mine) in kept.1.iter_mut().zip(known) {
            if slot.is_none() {
                *slot = *mine;
            }
        }
    }
}
