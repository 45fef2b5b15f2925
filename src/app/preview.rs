//! The exact preview of a move: the real engine plays it on a copy, and the outcome is
//! read from the events it reported. Scripted effects preview exactly like built-in ones.
//! Beside it, the sandbox's AI hint ([`hint`]): the evaluator's best moves, each played
//! through the engine's look-ahead.
//!
//! This module draws nothing; the board view paints a [`Preview`] and a hint's moves.

use std::collections::HashMap;

use crate::ai::{self, Rated};
use crate::rules::{
    CardId, Catalog, Cell, Engine, Event, EventKind, GameState, Move, Play, RemoveReason, Seat,
    Token,
};

use super::session::SessionError;

/// What happens to one cell's token.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Changed {
    /// Where the token ends up.
    pub cell: Cell,
    /// The token before the move (at the cell it started from).
    pub before: Token,
    /// The token after the move.
    pub after: Token,
}

/// A token that leaves the board.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Gone {
    /// The cell it was last on.
    pub cell: Cell,
    /// The token as it was before the move.
    pub token: Token,
    /// Why it left.
    pub reason: RemoveReason,
}

/// The outcome of a move, before it is played.
#[derive(Clone, Debug, PartialEq)]
pub struct Preview {
    /// The move previewed.
    pub mv: Move,
    /// The placed token where it ends up (`None` when the move destroyed it at once).
    pub placed: Option<(Cell, Token)>,
    /// Tokens whose value, type or seat changes, at the cell they end on.
    pub changed: Vec<Changed>,
    /// Tokens that move: from → to (their final cell).
    pub moved: Vec<(Cell, Cell)>,
    /// Tokens removed from the board.
    pub removed: Vec<Gone>,
    /// Tokens created by effects.
    pub spawned: Vec<(Cell, Token)>,
    /// Cells of the card's area where nothing happens.
    pub quiet: Vec<Cell>,
    /// Each seat's income before the move.
    pub income_before: [i64; 2],
    /// Each seat's income after it.
    pub income_after: [i64; 2],
    /// Each seat's score after the move has been scored.
    pub score_after: [i64; 2],
    /// Whether the move banks an extra turn, and for whom.
    pub extra_turn: Option<Seat>,
    /// Whether the move ends the game.
    pub ends_game: bool,
    /// Every event of the move, in order.
    pub events: Vec<Event>,
}

impl Preview {
    /// Each seat's income change.
    #[must_use]
    pub fn income_delta(&self) -> [i64; 2] {
        [
            self.income_after[0] - self.income_before[0],
            self.income_after[1] - self.income_before[1],
        ]
    }

    /// What the preview says about `cell`, in words (for accessibility and tooltips).
    #[must_use]
    pub fn describe_cell(&self, catalog: &Catalog, cell: Cell) -> Option<String> {
        if cell == self.mv.cell {
            return Some(match self.placed {
                Some((at, t)) if at == cell => format!(
                    "places {} {} here",
                    catalog.token_type(t.kind).meta.name,
                    t.value
                ),
                Some((at, t)) => format!(
                    "places {} {}, which moves to {at}",
                    catalog.token_type(t.kind).meta.name,
                    t.value
                ),
                None => "the placed token is removed at once".to_string(),
            });
        }
        let mut parts = Vec::new();
        if let Some(c) = self.changed.iter().find(|c| c.cell == cell) {
            let mut what = format!("{} → {}", c.before.value, c.after.value);
            if c.before.seat != c.after.seat {
                what.push_str(&format!(", seat {} → {}", c.before.seat, c.after.seat));
            }
            if c.before.kind != c.after.kind {
                what.push_str(&format!(
                    ", becomes {}",
                    catalog.token_type(c.after.kind).meta.name
                ));
            }
            parts.push(what);
        }
        if let Some((from, _)) = self.moved.iter().find(|(_, to)| *to == cell) {
            parts.push(format!("moves here from {from}"));
        }
        if let Some(g) = self.removed.iter().find(|g| g.cell == cell) {
            parts.push(match g.reason {
                RemoveReason::Destroyed => "destroyed".to_string(),
                RemoveReason::OffBoard => "pushed off the board".to_string(),
                RemoveReason::Removed => "removed".to_string(),
            });
        }
        if let Some((_, t)) = self.spawned.iter().find(|(c, _)| *c == cell) {
            parts.push(format!(
                "spawns seat {} {} {}",
                t.seat,
                catalog.token_type(t.kind).meta.name,
                t.value
            ));
        }
        if self.quiet.contains(&cell) {
            parts.push("in the area, nothing happens".to_string());
        }
        (!parts.is_empty()).then(|| parts.join("; "))
    }
}

/// Play `mv` on a copy of `state` and describe the outcome, or say why it is refused.
///
/// Scripted tokens and cards run their hooks within the engine's limits: the move's own
/// budget and clock, and one more for the income hooks before and after it. The client
/// calls this on a worker thread ([`super::hover::Previews`]), never on the frame's.
///
/// # Errors
/// When the engine refuses the move or an income hook fails: the text to show.
pub fn preview(engine: &Engine<'_>, state: &GameState, mv: Move) -> Result<Preview, SessionError> {
    // One look: the income hooks before and after share one budget and clock (the move
    // has its own), so a preview costs a bounded time however many scripted tokens.
    engine.look(|| preview_now(engine, state, mv))
}

fn preview_now(engine: &Engine<'_>, state: &GameState, mv: Move) -> Result<Preview, SessionError> {
    let income_before = engine.incomes(state)?;
    let mut after = state.clone();
    let mut events = Vec::new();
    engine.play(&mut after, mv, &mut events)?;
    // Incomes are read before the next turn's changes would matter: the move is scored.
    let income_after = engine.incomes(&after)?;
    Ok(from_events(
        engine,
        state,
        &after,
        mv,
        events,
        income_before,
        income_after,
    ))
}

/// Where a token on the board after the move came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum From {
    /// It stood on this cell before the move.
    Board(Cell),
    /// It is the token the move placed.
    Placed,
    /// An effect created it.
    Spawned,
}

/// Build a preview from the state before, the state after and the events between.
fn from_events(
    engine: &Engine<'_>,
    before: &GameState,
    after: &GameState,
    mv: Move,
    events: Vec<Event>,
    income_before: [i64; 2],
    income_after: [i64; 2],
) -> Preview {
    // Follow each token through the events: its current cell → where it came from.
    let mut origin: HashMap<Cell, From> = HashMap::new();
    let mut removed = Vec::new();
    let mut extra_turn = None;
    let mut ends_game = false;
    let start = |origin: &HashMap<Cell, From>, cell: Cell| -> From {
        origin.get(&cell).copied().unwrap_or(From::Board(cell))
    };
    for e in &events {
        match &e.kind {
            EventKind::Placed { cell, .. } => {
                origin.insert(*cell, From::Placed);
            }
            EventKind::Spawned { cell, .. } => {
                origin.insert(*cell, From::Spawned);
            }
            EventKind::Moved { from, to } => {
                let o = start(&origin, *from);
                origin.remove(from);
                origin.insert(*to, o);
            }
            EventKind::Swapped { a, b } => {
                let (oa, ob) = (start(&origin, *a), start(&origin, *b));
                origin.insert(*a, ob);
                origin.insert(*b, oa);
            }
            EventKind::Removed {
                cell,
                token,
                reason,
            } => {
                let o = start(&origin, *cell);
                origin.remove(cell);
                match o {
                    From::Board(o) => {
                        if let Some(original) = before.board().get(o) {
                            removed.push(Gone {
                                cell: *cell,
                                token: original,
                                reason: *reason,
                            });
                        }
                    }
                    // The placed token gone again: say so.
                    From::Placed => removed.push(Gone {
                        cell: *cell,
                        token: *token,
                        reason: *reason,
                    }),
                    // A spawn gone again within the move shows nothing.
                    From::Spawned => {}
                }
            }
            EventKind::ExtraTurnBanked { seat } => extra_turn = Some(*seat),
            EventKind::GameOver { .. } => ends_game = true,
            _ => {}
        }
    }
    let mut changed = Vec::new();
    let mut moved = Vec::new();
    let mut spawned = Vec::new();
    let mut placed = None;
    for (cell, after_token) in after.board().tokens() {
        match start(&origin, cell) {
            From::Board(o) => {
                if o != cell {
                    moved.push((o, cell));
                }
                if let Some(b) = before.board().get(o)
                    && (b.value != after_token.value
                        || b.kind != after_token.kind
                        || b.seat != after_token.seat)
                {
                    changed.push(Changed {
                        cell,
                        before: b,
                        after: after_token,
                    });
                }
            }
            From::Placed => {
                if cell != mv.cell {
                    moved.push((mv.cell, cell));
                }
                placed = Some((cell, after_token));
            }
            From::Spawned => spawned.push((cell, after_token)),
        }
    }
    let touched = |c: Cell| {
        c == mv.cell
            || changed.iter().any(|x| x.cell == c)
            || moved.iter().any(|&(f, t)| f == c || t == c)
            || removed.iter().any(|g| g.cell == c)
            || spawned.iter().any(|&(s, _)| s == c)
    };
    let catalog = engine.catalog();
    let card = engine.card_played(before, mv).ok();
    let quiet = card
        .map(|card| {
            catalog
                .card(card)
                .area
                .cells_on(mv.cell, after.board().bounds())
                .filter(|&c| !touched(c))
                .collect()
        })
        .unwrap_or_default();
    Preview {
        mv,
        placed,
        changed,
        moved,
        removed,
        spawned,
        quiet,
        income_before,
        income_after,
        score_after: [after.score(Seat::One), after.score(Seat::Two)],
        extra_turn,
        ends_game,
        events,
    }
}

/// The AI hint: of every move of `seat` with one of `cards` on an empty cell of `base`
/// (the state with `seat` to move), the `k` best by the change in the evaluator's value
/// for `seat`, best first; a move the engine or a script refuses is left out.
#[must_use]
pub fn hint(
    brain: &ai::Brain<'_>,
    base: &GameState,
    seat: Seat,
    cards: &[CardId],
    k: usize,
) -> Vec<Rated> {
    let now = ai::evaluate(brain, base, seat);
    let mut scratch = base.clone();
    let mut rated: Vec<Rated> = Vec::new();
    let cells: Vec<Cell> = base.board().empty_cells().collect();
    for &card in cards {
        for &cell in &cells {
            scratch.clone_from(base);
            let mv = Move {
                seat,
                play: Play::Card(card),
                cell,
            };
            if brain.play_lookahead(&mut scratch, mv).is_ok() {
                rated.push(Rated {
                    mv,
                    value: ai::evaluate(brain, &scratch, seat) - now,
                    visits: 0,
                });
            }
        }
    }
    rated.sort_by(|a, b| b.value.total_cmp(&a.value));
    rated.truncate(k);
    rated
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::{NoHooks, Play};

    use crate::content::base_for_tests as base;

    fn put(catalog: &Catalog, state: &mut GameState, cell: Cell, seat: Seat, value: i32) {
        let kind = catalog
            .token_type_named("basic")
            .unwrap_or_else(|e| panic!("{e}"));
        state.set_token(
            catalog,
            cell,
            Some(Token {
                value,
                kind,
                card: None,
                seat,
            }),
        );
    }

    fn game(catalog: &Catalog) -> GameState {
        let deck = &catalog.decks()[0].stacks;
        let mut events = Vec::new();
        let engine = Engine::new(catalog, &NoHooks);
        let mut state = engine
            .new_game([deck, deck], 1, &mut events)
            .unwrap_or_else(|e| panic!("{e}"));
        for (cell, _) in state.board().tokens().collect::<Vec<_>>() {
            state.set_token(catalog, cell, None);
        }
        state
    }

    #[test]
    fn a_push_previews_arrows_and_the_placed_token() {
        let catalog = base();
        let engine = Engine::new(&catalog, &NoHooks);
        let mut state = game(&catalog);
        let push = catalog
            .card_named("push_row")
            .unwrap_or_else(|e| panic!("{e}"));
        put(&catalog, &mut state, Cell::new(3, 2), Seat::Two, 2);
        let mv = Move {
            seat: Seat::One,
            play: Play::Card(push),
            cell: Cell::new(2, 2),
        };
        let p = preview(&engine, &state, mv).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(p.moved, vec![(Cell::new(3, 2), Cell::new(4, 2))]);
        assert!(p.placed.is_some());
        assert!(p.removed.is_empty());
        // The pushed token keeps its value: it moved, nothing else changed.
        assert!(p.changed.is_empty());
        assert!(p.describe_cell(&catalog, Cell::new(4, 2)).is_some());
        // The state previewed from is untouched.
        assert!(state.board().get(Cell::new(2, 2)).is_none());
    }

    #[test]
    fn damage_reports_new_values_and_destroyed_tokens() {
        let catalog = base();
        let engine = Engine::new(&catalog, &NoHooks);
        let mut state = game(&catalog);
        let card = catalog.cards().iter().position(|c| {
            matches!(
                c.ability.map(|a| &catalog.ability(a).effect),
                Some(crate::rules::Effect::Damage {
                    amount: crate::rules::Amount::Fixed(_)
                })
            ) && !c.area.offsets().is_empty()
        });
        let Some(card) = card else {
            panic!("the base pack has a damage card")
        };
        let def = &catalog.cards()[card];
        let target = def
            .area
            .cells_from(Cell::new(2, 2))
            .next()
            .unwrap_or_default();
        put(&catalog, &mut state, target, Seat::Two, 1);
        let mv = Move {
            seat: Seat::One,
            play: Play::Card(crate::rules::CardId::from_index(card)),
            cell: Cell::new(2, 2),
        };
        let p = preview(&engine, &state, mv).unwrap_or_else(|e| panic!("{e}"));
        assert!(
            p.removed
                .iter()
                .any(|g| g.cell == target && g.reason == RemoveReason::Destroyed),
            "{p:?}"
        );
        assert!(p.income_delta()[1] < 0, "seat 2 loses the destroyed income");
    }

    #[test]
    fn a_placed_token_that_swaps_away_is_shown_where_it_lands() {
        let catalog = base();
        let engine = Engine::new(&catalog, &NoHooks);
        let mut state = game(&catalog);
        let weaken = catalog
            .card_named("weaken_row")
            .unwrap_or_else(|e| panic!("{e}"));
        let swap = catalog.card_named("swap").unwrap_or_else(|e| panic!("{e}"));
        let first = Move {
            seat: Seat::One,
            play: Play::Card(weaken),
            cell: Cell::new(0, 0),
        };
        engine
            .play(&mut state, first, &mut Vec::new())
            .unwrap_or_else(|e| panic!("{e}"));
        let mv = Move {
            seat: Seat::Two,
            play: Play::Card(swap),
            cell: Cell::new(5, 5),
        };
        let p = preview(&engine, &state, mv).unwrap_or_else(|e| panic!("{e}"));
        let (at, token) = p.placed.unwrap_or_else(|| panic!("placed: {p:?}"));
        assert_eq!(at, Cell::new(0, 0), "{p:?}");
        assert_eq!(token.seat, Seat::Two);
        assert!(
            p.moved.contains(&(Cell::new(5, 5), Cell::new(0, 0))),
            "{p:?}"
        );
        assert!(
            p.moved.contains(&(Cell::new(0, 0), Cell::new(5, 5))),
            "{p:?}"
        );
        let text = p
            .describe_cell(&catalog, Cell::new(5, 5))
            .unwrap_or_default();
        assert!(text.contains("moves to (0, 0)"), "{text}");
    }

    #[test]
    fn a_refused_move_says_why() {
        let catalog = base();
        let engine = Engine::new(&catalog, &NoHooks);
        let mut state = game(&catalog);
        put(&catalog, &mut state, Cell::new(0, 0), Seat::Two, 1);
        let mv = Move {
            seat: Seat::One,
            play: Play::Stack(0),
            cell: Cell::new(0, 0),
        };
        let e = preview(&engine, &state, mv)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(e.contains("not empty"), "{e}");
    }
}
