//! The pure rules core: board, tokens, game state, move resolution, income and events.
//!
//! Must not: touch the file system, a clock, Lua or the UI. Everything here is
//! deterministic given the catalog, the seed and the moves. Scripts arrive through the
//! [`Hooks`] trait; this module does not know what language they are written in.

mod abilities;
mod board;
mod catalog;
mod deck;
mod defs;
pub mod describe;
mod effects;
mod engine;
mod event;
mod hooks;
mod ids;
mod lookup;
mod never;
mod remap;
mod state;

pub use board::{Board, Token};
pub use catalog::{Catalog, CatalogParts, KindInfo};
pub use deck::{DeckError, Whose, deck_problems};
pub use defs::{
    AbilityDef, Amount, Area, AreaDef, Aura, Becomes, CardDef, DeckDef, Effect, MAX_SIDE,
    MAX_STACK_CARDS, MAX_STACKS, Meta, MoveLimits, NO_AREA, OpeningToken, Origin, PackInfo,
    Relation, Ruleset, ScriptDef, Side, TokenTypeDef, Turret,
};
pub use effects::{Checkpoint, Effects, Hooks, MoveResult, NoHooks};
pub use engine::{Engine, Move, MoveError, Play};
pub use event::{Cause, Event, EventKind, RemoveReason};
pub use hooks::{BudgetStep, HookError, HookErrorKind, ScriptPlace};
pub use ids::{
    AbilityId, AreaId, Bounds, CardId, Cell, DeckId, MAX_CELLS, Offset, ScriptId, Seat, TokenTypeId,
};
pub use lookup::{LookupError, MAX_ECHO, MAX_SUGGESTED, echo, echo_within, nearest};
pub(crate) use never::never;
pub use remap::{IdMap, Lost, remap, remap_with};
pub use state::{GameState, GameView, Outcome, Restored, SeatState, Stack};
