//! Events: the only record of what a move changed, each tagged with its cause.
//!
//! History, animation, the hover preview, replays and "why did this happen" all read
//! events; none of them recompute rules.

use super::board::Token;
use super::ids::{AbilityId, CardId, Cell, ScriptId, Seat, TokenTypeId};

/// What made an event happen.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Cause {
    /// The rules themselves: the opening token, scoring, turn order, the end of the game.
    Rules,
    /// A card being played (its placement and its cycling).
    Card(CardId),
    /// A card's ability.
    Ability {
        /// The card played.
        card: CardId,
        /// Its ability.
        ability: AbilityId,
    },
    /// A token type's property (a turret firing, a resilient token surviving).
    TokenType {
        /// The type.
        kind: TokenTypeId,
        /// The cell of the token whose property acted.
        cell: Cell,
    },
    /// A script, at a line.
    Script {
        /// The script file.
        script: ScriptId,
        /// The line of the `ctx` call (0 when unknown).
        line: u32,
    },
}

/// Why a token left the board.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RemoveReason {
    /// Its value dropped to 0 or below.
    Destroyed,
    /// It was moved off the board.
    OffBoard,
    /// A script removed it.
    Removed,
}

/// One change to the game state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EventKind {
    /// A card's token was placed.
    Placed {
        /// Where.
        cell: Cell,
        /// The token.
        token: Token,
    },
    /// A token's value was lowered.
    Damaged {
        /// Where.
        cell: Cell,
        /// By how much.
        amount: i32,
        /// Its value afterwards (may be ≤ 0 until destruction resolves).
        value: i32,
    },
    /// A token's value was set.
    ValueSet {
        /// Where.
        cell: Cell,
        /// Before.
        from: i32,
        /// After.
        to: i32,
    },
    /// A token moved to an empty cell.
    Moved {
        /// From.
        from: Cell,
        /// To.
        to: Cell,
    },
    /// Two tokens swapped cells.
    Swapped {
        /// One cell.
        a: Cell,
        /// The other.
        b: Cell,
    },
    /// A token left the board.
    Removed {
        /// Where it was.
        cell: Cell,
        /// What it was.
        token: Token,
        /// Why.
        reason: RemoveReason,
    },
    /// A token was created by an effect.
    Spawned {
        /// Where.
        cell: Cell,
        /// The token.
        token: Token,
    },
    /// A token changed type (and possibly value).
    Transformed {
        /// Where.
        cell: Cell,
        /// Old type.
        from: TokenTypeId,
        /// New type.
        to: TokenTypeId,
        /// Its value afterwards.
        value: i32,
    },
    /// A seat banked an extra turn.
    ExtraTurnBanked {
        /// Which seat.
        seat: Seat,
    },
    /// A seat's next placed token will get extra value.
    BonusBanked {
        /// Which seat.
        seat: Seat,
        /// The bonus added.
        amount: i32,
    },
    /// A played card went to the bottom of its stack.
    Cycled {
        /// Whose stack.
        seat: Seat,
        /// Which stack (0-based).
        stack: u8,
        /// The card.
        card: CardId,
    },
    /// A seat scored its income.
    Scored {
        /// Which seat.
        seat: Seat,
        /// The income added.
        income: i64,
        /// The new score.
        total: i64,
    },
    /// A script changed a score directly.
    ScoreChanged {
        /// Which seat.
        seat: Seat,
        /// The amount added (may be negative).
        amount: i64,
        /// The new score.
        total: i64,
    },
    /// The turn passed (or stayed, using a banked extra turn).
    NextTurn {
        /// The seat to move.
        seat: Seat,
        /// Whether it moves again by using a banked extra turn.
        extra: bool,
    },
    /// The game ended.
    GameOver {
        /// The winner, or `None` for a draw.
        winner: Option<Seat>,
    },
    /// A line a script wrote to the game's log.
    Log {
        /// The text.
        text: String,
    },
}

/// An event and its cause.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Event {
    /// What happened.
    pub kind: EventKind,
    /// Why.
    pub cause: Cause,
}
