//! A move's events on the wire, so a joiner's history, animations and "why did this
//! happen" read the host's own events. Every id is a key (`pack:id`; scripts as
//! `pack/path`). Events only describe public changes: the board, scores, banked turns,
//! the card a seat played, script log lines.

use serde::{Deserialize, Serialize};

use crate::rules::{
    AbilityId, CardId, Catalog, Cause, Cell, Event, EventKind, RemoveReason, ScriptDef, ScriptId,
    Seat, Token, TokenTypeId,
};

use super::seat_of;

/// A token inside an event.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WireToken {
    /// Value.
    pub value: i32,
    /// Token type key.
    pub kind: String,
    /// The card that placed it.
    pub card: Option<String>,
    /// Owner.
    pub seat: u8,
}

/// Why an event happened.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum WireCause {
    /// The rules.
    Rules,
    /// A card.
    Card(String),
    /// A card's ability.
    Ability {
        /// The card.
        card: String,
        /// The ability.
        ability: String,
    },
    /// A token type's effect at a cell.
    TokenType {
        /// The token type.
        kind: String,
        /// Column.
        x: i32,
        /// Row.
        y: i32,
    },
    /// A script line.
    Script {
        /// `pack/path`.
        script: String,
        /// Line.
        line: u32,
    },
}

type Xy = (i32, i32);

/// What happened.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[allow(missing_docs)]
pub enum WireKind {
    Placed {
        cell: Xy,
        token: WireToken,
    },
    Damaged {
        cell: Xy,
        amount: i32,
        value: i32,
    },
    ValueSet {
        cell: Xy,
        from: i32,
        to: i32,
    },
    Moved {
        from: Xy,
        to: Xy,
    },
    Swapped {
        a: Xy,
        b: Xy,
    },
    Removed {
        cell: Xy,
        token: WireToken,
        reason: u8,
    },
    Spawned {
        cell: Xy,
        token: WireToken,
    },
    Transformed {
        cell: Xy,
        from: String,
        to: String,
        value: i32,
    },
    ExtraTurnBanked {
        seat: u8,
    },
    BonusBanked {
        seat: u8,
        amount: i32,
    },
    Cycled {
        seat: u8,
        stack: u8,
        card: String,
    },
    Scored {
        seat: u8,
        income: i64,
        total: i64,
    },
    ScoreChanged {
        seat: u8,
        amount: i64,
        total: i64,
    },
    NextTurn {
        seat: u8,
        extra: bool,
    },
    GameOver {
        winner: Option<u8>,
    },
    Log {
        text: String,
    },
}

/// One event on the wire.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WireEvent {
    /// What happened.
    pub kind: WireKind,
    /// Why.
    pub cause: WireCause,
}

fn xy(c: Cell) -> Xy {
    (c.x, c.y)
}

fn cell((x, y): Xy) -> Cell {
    Cell::new(x, y)
}

struct Keys<'a>(&'a Catalog);

impl Keys<'_> {
    fn card(&self, c: CardId) -> String {
        self.0.card(c).meta.key()
    }
    fn kind(&self, k: TokenTypeId) -> String {
        self.0.token_type(k).meta.key()
    }
    fn ability(&self, a: AbilityId) -> String {
        self.0.ability(a).meta.key()
    }
    fn script(&self, s: ScriptId) -> String {
        self.0
            .scripts()
            .get(s.index())
            .map(ScriptDef::name)
            .unwrap_or_default()
    }
    fn token(&self, t: &Token) -> WireToken {
        WireToken {
            value: t.value,
            kind: self.kind(t.kind),
            card: t.card.map(|c| self.card(c)),
            seat: t.seat.number(),
        }
    }
}

/// Most events of one move sent (a script may make up to the rules' event limit; the
/// rest are summed up in one log line).
pub const MAX_WIRE_EVENTS: usize = 2_000;

/// `events` for the wire: at most [`MAX_WIRE_EVENTS`], log lines cut to a line's length.
#[must_use]
pub fn to_wire(catalog: &Catalog, events: &[Event]) -> Vec<WireEvent> {
    let k = Keys(catalog);
    let mut out: Vec<WireEvent> = events
        .iter()
        .take(MAX_WIRE_EVENTS)
        .map(|e| WireEvent {
            kind: match &e.kind {
                EventKind::Placed { cell, token } => WireKind::Placed {
                    cell: xy(*cell),
                    token: k.token(token),
                },
                EventKind::Damaged {
                    cell,
                    amount,
                    value,
                } => WireKind::Damaged {
                    cell: xy(*cell),
                    amount: *amount,
                    value: *value,
                },
                EventKind::ValueSet { cell, from, to } => WireKind::ValueSet {
                    cell: xy(*cell),
                    from: *from,
                    to: *to,
                },
                EventKind::Moved { from, to } => WireKind::Moved {
                    from: xy(*from),
                    to: xy(*to),
                },
                EventKind::Swapped { a, b } => WireKind::Swapped {
                    a: xy(*a),
                    b: xy(*b),
                },
                EventKind::Removed {
                    cell,
                    token,
                    reason,
                } => WireKind::Removed {
                    cell: xy(*cell),
                    token: k.token(token),
                    reason: match reason {
                        RemoveReason::Destroyed => 0,
                        RemoveReason::OffBoard => 1,
                        RemoveReason::Removed => 2,
                    },
                },
                EventKind::Spawned { cell, token } => WireKind::Spawned {
                    cell: xy(*cell),
                    token: k.token(token),
                },
                EventKind::Transformed {
                    cell,
                    from,
                    to,
                    value,
                } => WireKind::Transformed {
                    cell: xy(*cell),
                    from: k.kind(*from),
                    to: k.kind(*to),
                    value: *value,
                },
                EventKind::ExtraTurnBanked { seat } => WireKind::ExtraTurnBanked {
                    seat: seat.number(),
                },
                EventKind::BonusBanked { seat, amount } => WireKind::BonusBanked {
                    seat: seat.number(),
                    amount: *amount,
                },
                EventKind::Cycled { seat, stack, card } => WireKind::Cycled {
                    seat: seat.number(),
                    stack: *stack,
                    card: k.card(*card),
                },
                EventKind::Scored {
                    seat,
                    income,
                    total,
                } => WireKind::Scored {
                    seat: seat.number(),
                    income: *income,
                    total: *total,
                },
                EventKind::ScoreChanged {
                    seat,
                    amount,
                    total,
                } => WireKind::ScoreChanged {
                    seat: seat.number(),
                    amount: *amount,
                    total: *total,
                },
                EventKind::NextTurn { seat, extra } => WireKind::NextTurn {
                    seat: seat.number(),
                    extra: *extra,
                },
                EventKind::GameOver { winner } => WireKind::GameOver {
                    winner: winner.map(Seat::number),
                },
                EventKind::Log { text } => WireKind::Log {
                    text: super::clean(text),
                },
            },
            cause: match &e.cause {
                Cause::Rules => WireCause::Rules,
                Cause::Card(c) => WireCause::Card(k.card(*c)),
                Cause::Ability { card, ability } => WireCause::Ability {
                    card: k.card(*card),
                    ability: k.ability(*ability),
                },
                Cause::TokenType { kind, cell } => WireCause::TokenType {
                    kind: k.kind(*kind),
                    x: cell.x,
                    y: cell.y,
                },
                Cause::Script { script, line } => WireCause::Script {
                    script: k.script(*script),
                    line: *line,
                },
            },
        })
        .collect();
    if events.len() > MAX_WIRE_EVENTS {
        out.push(WireEvent {
            kind: WireKind::Log {
                text: format!("… and {} more events", events.len() - MAX_WIRE_EVENTS),
            },
            cause: WireCause::Rules,
        });
    }
    out
}

/// A name in a host's events that the game's content lacks: the host and this client
/// disagree on the content (a bug, or a hostile host).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum WireError {
    /// A card key.
    #[error("an event names card '{}', which this game lacks", crate::rules::echo(.0))]
    Card(String),
    /// A token type key.
    #[error("an event names token type '{}', which this game lacks", crate::rules::echo(.0))]
    TokenType(String),
    /// An ability key.
    #[error("an event names ability '{}', which this game lacks", crate::rules::echo(.0))]
    Ability(String),
    /// A seat number other than 1 and 2.
    #[error("an event names seat {0}")]
    Seat(u8),
    /// A script name.
    #[error("an event names script '{}', which this game lacks", crate::rules::echo(.0))]
    Script(String),
}

struct Ids<'a>(&'a Catalog);

impl Ids<'_> {
    fn card(&self, key: &str) -> Result<CardId, WireError> {
        self.0
            .card_named(key)
            .map_err(|_| WireError::Card(key.to_string()))
    }
    fn kind(&self, key: &str) -> Result<TokenTypeId, WireError> {
        self.0
            .token_type_named(key)
            .map_err(|_| WireError::TokenType(key.to_string()))
    }
    fn seat(n: u8) -> Result<Seat, WireError> {
        seat_of(n).ok_or(WireError::Seat(n))
    }
    fn token(&self, t: &WireToken) -> Result<Token, WireError> {
        Ok(Token {
            value: t.value,
            kind: self.kind(&t.kind)?,
            card: t.card.as_deref().map(|c| self.card(c)).transpose()?,
            seat: Self::seat(t.seat)?,
        })
    }
    fn script(&self, key: &str) -> Result<ScriptId, WireError> {
        self.0
            .scripts()
            .iter()
            .position(|d| d.name() == key)
            .and_then(|i| u16::try_from(i).ok())
            .map(ScriptId)
            .ok_or_else(|| WireError::Script(key.to_string()))
    }
}

/// The events of `wire` over `catalog` (the game's content), or the first key it lacks.
pub fn from_wire(catalog: &Catalog, wire: &[WireEvent]) -> Result<Vec<Event>, WireError> {
    let ids = Ids(catalog);
    let seat = Ids::seat;
    wire.iter()
        .map(|e| {
            let kind = match &e.kind {
                WireKind::Placed { cell: c, token } => EventKind::Placed {
                    cell: cell(*c),
                    token: ids.token(token)?,
                },
                WireKind::Damaged {
                    cell: c,
                    amount,
                    value,
                } => EventKind::Damaged {
                    cell: cell(*c),
                    amount: *amount,
                    value: *value,
                },
                WireKind::ValueSet { cell: c, from, to } => EventKind::ValueSet {
                    cell: cell(*c),
                    from: *from,
                    to: *to,
                },
                WireKind::Moved { from, to } => EventKind::Moved {
                    from: cell(*from),
                    to: cell(*to),
                },
                WireKind::Swapped { a, b } => EventKind::Swapped {
                    a: cell(*a),
                    b: cell(*b),
                },
                WireKind::Removed {
                    cell: c,
                    token,
                    reason,
                } => EventKind::Removed {
                    cell: cell(*c),
                    token: ids.token(token)?,
                    reason: match reason {
                        0 => RemoveReason::Destroyed,
                        1 => RemoveReason::OffBoard,
                        _ => RemoveReason::Removed,
                    },
                },
                WireKind::Spawned { cell: c, token } => EventKind::Spawned {
                    cell: cell(*c),
                    token: ids.token(token)?,
                },
                WireKind::Transformed {
                    cell: c,
                    from,
                    to,
                    value,
                } => EventKind::Transformed {
                    cell: cell(*c),
                    from: ids.kind(from)?,
                    to: ids.kind(to)?,
                    value: *value,
                },
                WireKind::ExtraTurnBanked { seat: s } => {
                    EventKind::ExtraTurnBanked { seat: seat(*s)? }
                }
                WireKind::BonusBanked { seat: s, amount } => EventKind::BonusBanked {
                    seat: seat(*s)?,
                    amount: *amount,
                },
                WireKind::Cycled {
                    seat: s,
                    stack,
                    card,
                } => EventKind::Cycled {
                    seat: seat(*s)?,
                    stack: *stack,
                    card: ids.card(card)?,
                },
                WireKind::Scored {
                    seat: s,
                    income,
                    total,
                } => EventKind::Scored {
                    seat: seat(*s)?,
                    income: *income,
                    total: *total,
                },
                WireKind::ScoreChanged {
                    seat: s,
                    amount,
                    total,
                } => EventKind::ScoreChanged {
                    seat: seat(*s)?,
                    amount: *amount,
                    total: *total,
                },
                WireKind::NextTurn { seat: s, extra } => EventKind::NextTurn {
                    seat: seat(*s)?,
                    extra: *extra,
                },
                WireKind::GameOver { winner } => EventKind::GameOver {
                    winner: winner.map(seat).transpose()?,
                },
                WireKind::Log { text } => EventKind::Log {
                    text: super::clean(text),
                },
            };
            let cause = match &e.cause {
                WireCause::Rules => Cause::Rules,
                WireCause::Card(c) => Cause::Card(ids.card(c)?),
                WireCause::Ability { card, ability } => Cause::Ability {
                    card: ids.card(card)?,
                    ability: catalog
                        .ability_named(ability)
                        .map_err(|_| WireError::Ability(ability.clone()))?,
                },
                WireCause::TokenType { kind, x, y } => Cause::TokenType {
                    kind: ids.kind(kind)?,
                    cell: Cell::new(*x, *y),
                },
                WireCause::Script { script, line } => Cause::Script {
                    script: ids.script(script)?,
                    line: *line,
                },
            };
            Ok(Event { kind, cause })
        })
        .collect()
}
