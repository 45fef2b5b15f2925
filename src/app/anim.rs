//! Move animations, played from a move's events in order: each visible event gets a short
//! step (a placement grows in, a push slides, a removal fades with a mark). Nothing here
//! knows a rule: the board before the move and the events are all it needs.

use std::time::{Duration, Instant};

use crate::rules::{Board, Cell, Event, EventKind, Token};

/// A token as drawn at one moment: where it is between two cells, how visible it is.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Piece {
    /// The cell it comes from.
    pub from: Cell,
    /// The cell it goes to (the same when it does not move).
    pub to: Cell,
    /// Progress from `from` to `to`, 0 to 1.
    pub t: f32,
    /// The token.
    pub token: Token,
    /// Opacity, 0 to 1.
    pub alpha: f32,
    /// Whether it is leaving the board (drawn with a removal mark).
    pub leaving: bool,
}

impl Piece {
    /// A token at rest on `cell`.
    #[must_use]
    pub fn at(cell: Cell, token: Token) -> Piece {
        Piece {
            from: cell,
            to: cell,
            t: 1.0,
            token,
            alpha: 1.0,
            leaving: false,
        }
    }
}

/// The pieces of a board at rest.
#[must_use]
pub fn pieces(board: &Board) -> Vec<Piece> {
    board
        .tokens()
        .map(|(cell, token)| Piece::at(cell, token))
        .collect()
}

/// An animation of one move.
#[derive(Clone, Debug)]
pub struct Animation {
    start: Vec<(Cell, Token)>,
    steps: Vec<Event>,
    began: Instant,
    step: Duration,
}

impl Animation {
    /// Animate `events` starting from `before`, each step lasting `step` (shortened so
    /// the whole move takes at most about 1.2 s).
    #[must_use]
    pub fn new(before: &Board, events: &[Event], step: Duration) -> Animation {
        let steps: Vec<Event> = events
            .iter()
            .filter(|e| visible(&e.kind))
            .cloned()
            .collect();
        let most = Duration::from_millis(1200);
        let n = u32::try_from(steps.len().max(1)).unwrap_or(u32::MAX);
        let step = step.min(most / n);
        Animation {
            start: before.tokens().collect(),
            steps,
            began: Instant::now(),
            step,
        }
    }

    /// Whether it has finished.
    #[must_use]
    pub fn done(&self) -> bool {
        self.began.elapsed() >= self.total()
    }

    /// Its whole length.
    #[must_use]
    pub fn total(&self) -> Duration {
        self.step * u32::try_from(self.steps.len()).unwrap_or(u32::MAX)
    }

    /// The cell the current step acts on, for a highlight.
    #[must_use]
    pub fn focus(&self) -> Vec<Cell> {
        let (index, _) = self.position();
        self.steps
            .get(index)
            .map(super::session::Session::event_cells)
            .unwrap_or_default()
    }

    fn position(&self) -> (usize, f32) {
        if self.done() {
            return (self.steps.len(), 1.0);
        }
        let elapsed = self.began.elapsed().as_secs_f32();
        let step = self.step.as_secs_f32().max(1e-6);
        let index = (elapsed / step).floor();
        // Non-negative and whole; past usize::MAX saturates, which `done` covers anyway.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let whole = index as usize;
        (whole, (elapsed / step - index).clamp(0.0, 1.0))
    }

    /// The pieces to draw now.
    #[must_use]
    pub fn pieces(&self) -> Vec<Piece> {
        let (index, t) = self.position();
        let mut cells: Vec<(Cell, Token)> = self.start.clone();
        for e in self.steps.iter().take(index) {
            apply(&mut cells, &e.kind);
        }
        let mut out: Vec<Piece> = cells.iter().map(|&(c, t)| Piece::at(c, t)).collect();
        let Some(current) = self.steps.get(index) else {
            return out;
        };
        let ease = 1.0 - (1.0 - t) * (1.0 - t);
        match &current.kind {
            EventKind::Placed { cell, token } | EventKind::Spawned { cell, token } => {
                out.push(Piece {
                    alpha: ease,
                    ..Piece::at(*cell, *token)
                });
            }
            EventKind::Moved { from, to } => {
                for p in &mut out {
                    if p.to == *from {
                        p.to = *to;
                        p.t = ease;
                    }
                }
            }
            EventKind::Swapped { a, b } => {
                for p in &mut out {
                    if p.from == *a {
                        p.to = *b;
                        p.t = ease;
                    } else if p.from == *b {
                        p.to = *a;
                        p.t = ease;
                    }
                }
            }
            EventKind::Removed { cell, .. } => {
                for p in &mut out {
                    if p.to == *cell {
                        p.alpha = 1.0 - ease;
                        p.leaving = true;
                    }
                }
            }
            EventKind::Damaged { cell, value, .. } => {
                for p in &mut out {
                    if p.to == *cell && t > 0.35 {
                        p.token.value = *value;
                    }
                }
            }
            kind => {
                // Value and type changes show halfway through their step.
                if t > 0.35 {
                    let mut moved: Vec<(Cell, Token)> =
                        out.iter().map(|p| (p.to, p.token)).collect();
                    apply(&mut moved, kind);
                    for (p, (_, token)) in out.iter_mut().zip(moved) {
                        p.token = token;
                    }
                }
            }
        }
        out
    }
}

/// Whether an event changes what the board shows.
fn visible(kind: &EventKind) -> bool {
    matches!(
        kind,
        EventKind::Placed { .. }
            | EventKind::Damaged { .. }
            | EventKind::ValueSet { .. }
            | EventKind::Moved { .. }
            | EventKind::Swapped { .. }
            | EventKind::Removed { .. }
            | EventKind::Spawned { .. }
            | EventKind::Transformed { .. }
    )
}

/// Apply one event to a list of tokens.
fn apply(cells: &mut Vec<(Cell, Token)>, kind: &EventKind) {
    let find = |cells: &[(Cell, Token)], c: Cell| cells.iter().position(|&(x, _)| x == c);
    match kind {
        EventKind::Placed { cell, token } | EventKind::Spawned { cell, token } => {
            cells.retain(|&(c, _)| c != *cell);
            cells.push((*cell, *token));
        }
        EventKind::Damaged { cell, value, .. }
        | EventKind::ValueSet {
            cell, to: value, ..
        } => {
            if let Some(i) = find(cells, *cell) {
                cells[i].1.value = *value;
            }
        }
        EventKind::Moved { from, to } => {
            if let Some(i) = find(cells, *from) {
                cells[i].0 = *to;
            }
        }
        EventKind::Swapped { a, b } => {
            for entry in cells.iter_mut() {
                if entry.0 == *a {
                    entry.0 = *b;
                } else if entry.0 == *b {
                    entry.0 = *a;
                }
            }
        }
        EventKind::Removed { cell, .. } => cells.retain(|&(c, _)| c != *cell),
        EventKind::Transformed {
            cell, to, value, ..
        } => {
            if let Some(i) = find(cells, *cell) {
                cells[i].1.kind = *to;
                cells[i].1.value = *value;
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::{Engine, NoHooks};

    /// Played to its end, an animation shows exactly the board the engine left, for
    /// every move of a whole game.
    #[test]
    fn a_finished_animation_shows_the_board_after_the_move() {
        let catalog = crate::content::base_for_tests();
        let engine = Engine::new(&catalog, &NoHooks);
        for deck in catalog.decks() {
            let mut events = Vec::new();
            let mut state = engine
                .new_game([&deck.stacks, &deck.stacks], 3, &mut events)
                .unwrap_or_else(|e| panic!("{e}"));
            let mut n = 0usize;
            while !state.is_over() {
                let moves = engine.legal_moves(&state);
                let Some(&mv) = moves.get(n * 7 % moves.len().max(1)) else {
                    break;
                };
                let before = state.board().clone();
                events.clear();
                engine
                    .play(&mut state, mv, &mut events)
                    .unwrap_or_else(|e| panic!("{e}"));
                let anim = Animation::new(&before, &events, Duration::ZERO);
                let mut shown: Vec<(Cell, Token)> =
                    anim.pieces().iter().map(|p| (p.to, p.token)).collect();
                let mut after: Vec<(Cell, Token)> = state.board().tokens().collect();
                shown.sort_by_key(|(c, _)| *c);
                after.sort_by_key(|(c, _)| *c);
                assert_eq!(shown, after, "move {n} of deck {}", deck.meta.id);
                n += 1;
            }
            assert!(n > 10, "{} moves", n);
        }
    }
}
