//! The generic evaluation of a position, for any content: it only reads scores, incomes
//! and the board through the engine, so a new card or script needs no AI code.
//!
//! The value: the score margin plus the income margin times an estimate of the moves left,
//! plus the packs' `ai.lua` heuristics; a finished game is a win or a loss beyond any of
//! those.

use super::Brain;
use crate::rules::{GameState, Seat};

/// The value of a won game (a lost one is its negative).
pub const WIN: f64 = 1.0e9;

/// How good `state` is for `seat`, after every effect of the last move has resolved:
/// the score difference plus the income difference times an estimate of the moves left
/// (each seat scores its income after every move, its own and the opponent's). Finished
/// games are worth ±1e9 (`WIN`) plus the score margin (0 for a draw).
#[must_use]
pub fn evaluate(brain: &Brain<'_>, state: &GameState, seat: Seat) -> f64 {
    let other = seat.other();
    if let Some(outcome) = state.outcome() {
        return match outcome.winner {
            Some(w) if w == seat => WIN + score_margin(state, seat),
            Some(_) => -WIN + score_margin(state, seat),
            None => 0.0,
        };
    }
    let Ok(incomes) = brain.engine().incomes(state) else {
        return score_margin(state, seat);
    };
    let (mine, theirs) = (incomes[seat.index()], incomes[other.index()]);
    #[allow(clippy::cast_precision_loss)]
    let income_margin = (mine - theirs) as f64;
    let generic =
        score_margin(state, seat) + income_margin * turns_left(brain, state, mine.max(theirs));
    generic + brain.heuristics(state, seat)
}

#[allow(clippy::cast_precision_loss)]
fn score_margin(state: &GameState, seat: Seat) -> f64 {
    (state.score(seat) - state.score(seat.other())) as f64
}

/// Moves left in the game, roughly: every move fills at least one cell, and both seats
/// score their income after every move, so the leader reaches the score limit after about
/// (limit − leader's score) / its income more moves.
fn turns_left(brain: &Brain<'_>, state: &GameState, best_income: i64) -> f64 {
    #[allow(clippy::cast_precision_loss)]
    let by_cells = state.board().empty_count() as f64;
    let leader = state.score(Seat::One).max(state.score(Seat::Two));
    let to_limit = brain.engine().catalog().rules().score_limit - leader;
    if best_income <= 0 {
        return by_cells;
    }
    #[allow(clippy::cast_precision_loss)]
    let by_score = to_limit as f64 / best_income as f64;
    by_cells.min(by_score.max(0.0))
}
