//! The messages (docs/protocol.md is their reference). Every id on the wire is a
//! catalog key (`pack:id`), never an index: two machines agree on names, not on the
//! order their loaders numbered things in.
//!
//! [`Seen`] is one seat's view (what `observe::Observation` allows), which
//! [`Seen::restore`] turns back into a `GameState`. What a host decodes from a client is
//! bounded while decoding: collections and texts are refused at their length prefix,
//! before anything of their size is allocated. [`PROTOCOL`] is the version; [`hello_version`] and
//! [`welcome_version`] read it from a message's first fields alone, so peers of different
//! versions name both instead of failing to decode.

use serde::{Deserialize, Serialize};

pub use super::{clean, seat_of};
use crate::observe::PublicPlay;
use crate::rules::never;
use crate::rules::{CardId, Catalog, Cell, GameState, Outcome, Restored, Seat, Token, TokenTypeId};

/// The protocol's version: a peer speaking another is refused in the handshake.
/// docs/protocol.md ("Versioning") says what each version changed.
///
/// - 1: the first.
/// - 2: `Welcome` ends with `ai_deck`.
/// - 3: `ToHost::Concede`.
pub const PROTOCOL: u32 = 3;

/// The version a `Hello` body announces, read from its first fields alone (variant 0,
/// the magic, the version), so a peer of any version is told which one it met, whatever
/// that version changed after them. `None` when the body does not start like a `Hello`
/// of this magic.
#[must_use]
pub fn hello_version(body: &[u8]) -> Option<u32> {
    match postcard::take_from_bytes::<(u32, String, u32)>(body) {
        Ok(((0, magic, protocol), _)) if magic == MAGIC => Some(protocol),
        _ => None,
    }
}

/// The version a `Welcome` body announces, read from its first fields alone (variant 0,
/// the version): see [`hello_version`].
#[must_use]
pub fn welcome_version(body: &[u8]) -> Option<u32> {
    match postcard::take_from_bytes::<(u32, u32)>(body) {
        Ok(((0, protocol), _)) => Some(protocol),
        _ => None,
    }
}

/// What a peer of another version is told (and the log says): `theirs` is the other
/// side's version, `side` names it ("host", "joiner").
#[must_use]
pub fn other_version(theirs: u32, side: &str) -> String {
    if theirs > PROTOCOL {
        format!(
            "the {side} speaks LAN protocol version {theirs}, newer than this copy's \
             {PROTOCOL}: update this copy of Tokensmith"
        )
    } else {
        format!(
            "the {side} speaks LAN protocol version {theirs}, older than this copy's \
             {PROTOCOL}: update the {side}'s copy of Tokensmith"
        )
    }
}

/// The first bytes of every `Hello`, so a stray connection is told apart at once.
pub const MAGIC: &str = "tokensmith-lan";

/// How a `Bye` turning a new connection away because the host is full begins: the client
/// connects again (see `docs/protocol.md`, Limits).
pub const HOST_FULL: &str = "the host is full";

/// Longest text field a peer may send (names, reasons), in bytes.
pub const MAX_TEXT: usize = 200;

/// Longest text a host decodes from a client (magic, name), in bytes: longer is refused
/// while decoding, before it is allocated.
pub const MAX_WIRE_TEXT: usize = 1_024;

/// Longest card key or pack id a host decodes from a client, in bytes.
pub const MAX_KEY: usize = 256;

/// Most pack ids one `WantPacks` may name.
pub const MAX_WANTED: usize = 64;

/// The largest frame a host reads from a client: a `Join` of the largest deck decodable
/// with the longest keys fits well within it (9 × 9 × 258 bytes is about 21 KiB).
pub const MAX_TO_HOST_FRAME: usize = 64 << 10;

/// A session token: whoever shows it again takes the seat back after a drop.
pub type SessionToken = [u8; 16];

/// One pack of a game, as the handshake compares them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PackRef {
    /// Its id.
    pub id: String,
    /// Its version.
    pub version: String,
    /// Its content hash (see docs/packs.md).
    pub hash: String,
}

/// What a client sends.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ToHost {
    /// The first message: who is calling, and a token to take a seat back.
    Hello {
        /// [`MAGIC`].
        #[serde(deserialize_with = "bounded::text")]
        magic: String,
        /// [`PROTOCOL`].
        protocol: u32,
        /// The player's name (at most [`MAX_WIRE_TEXT`] bytes).
        #[serde(deserialize_with = "bounded::text")]
        name: String,
        /// The token of a seat held before a drop.
        resume: Option<SessionToken>,
    },
    /// Send these packs of the game (ids from the welcome; at most [`MAX_WANTED`]).
    WantPacks(#[serde(deserialize_with = "bounded::ids")] Vec<String>),
    /// Take a seat with this deck: stacks of card keys, top first.
    Join {
        /// The deck: at most one stack more than the rules allow, each at most one card
        /// more (so the engine can say what is too long), keys at most [`MAX_KEY`]
        /// bytes. Anything larger is refused while decoding, before it is allocated.
        #[serde(deserialize_with = "bounded::deck")]
        deck: Vec<Vec<String>>,
        /// The seat wanted (1 or 2), if any: a game waiting with that seat free, else a
        /// new one (a host with an AI seat decides alone).
        seat: Option<u8>,
    },
    /// Play the top card of `stack` on `cell`.
    Intent {
        /// Numbered from 1 per seat, rising; a number not above the last is a replay.
        seq: u32,
        /// The seat the client plays (must be its own).
        seat: u8,
        /// Stack index (0-based).
        stack: u8,
        /// Column.
        x: i32,
        /// Row.
        y: i32,
    },
    /// Still here (sent while waiting).
    Ping,
    /// Give up the game: it is over, the other seat wins.
    Concede,
}

/// What the host sends.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum ToClient {
    /// The handshake's answer: the game's packs in load order, whether the host sends
    /// them, and the token of this connection's seat.
    Welcome {
        /// [`PROTOCOL`].
        protocol: u32,
        /// The host's name.
        host: String,
        /// The game's packs, in load order.
        packs: Vec<PackRef>,
        /// Whether the host sends its packs to joiners.
        sends_packs: bool,
        /// Keep it to take the seat back after a drop.
        token: SessionToken,
        /// A resumed seat's number (then no `Join` is needed).
        resumed: Option<u8>,
        /// What the host's AI plays, when a seat is the host's AI: a random-content deck
        /// made for each game, or the deck the host chose. Added last: a client that
        /// stops reading before it still decodes the welcome.
        ai_deck: Option<String>,
    },
    /// One piece of a pack archive; `offset` + `bytes` reach `total` on the last.
    PackChunk {
        /// Which pack.
        id: String,
        /// The archive's size.
        total: u64,
        /// Where these bytes go.
        offset: u64,
        /// The bytes.
        bytes: Vec<u8>,
    },
    /// The deck was refused (the connection stays open: send another `Join`).
    DeckRefused {
        /// Why.
        reason: String,
    },
    /// Seated; waiting for an opponent.
    Seated {
        /// The seat.
        seat: u8,
    },
    /// What this seat sees now, the play that led to it and that play's events (the
    /// opening token's, in the first state; none in a reconnect snapshot).
    State {
        /// The view.
        seen: Seen,
        /// The move just played, if one was.
        last: Option<Played>,
        /// Its events.
        events: Vec<super::events::WireEvent>,
    },
    /// An intent the engine refused (the state is unchanged).
    MoveRefused {
        /// Its number.
        seq: u32,
        /// Why.
        reason: String,
    },
    /// The opponent dropped: the game waits for them.
    Paused,
    /// The opponent is back.
    Resumed,
    /// The connection is being closed, and why.
    Bye {
        /// Why.
        reason: String,
    },
}

/// A card as played, in public.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Played {
    /// Who.
    pub seat: u8,
    /// From which stack.
    pub stack: u8,
    /// The card's key.
    pub card: String,
    /// Where its token went (`None` when no token was placed, e.g. a fallback pass).
    pub cell: Option<(i32, i32)>,
}

/// A token on the wire.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeenToken {
    /// Column.
    pub x: i32,
    /// Row.
    pub y: i32,
    /// Token type key.
    pub kind: String,
    /// Value.
    pub value: i32,
    /// Owner.
    pub seat: u8,
    /// The card that placed it.
    pub card: Option<String>,
}

/// Everything one seat may see: the board, both scores and banked turns, its own stacks,
/// the sizes of the opponent's stacks and the cards they played — exactly what
/// [`crate::observe::Observation`] allows, nothing of the opponent's hidden order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Seen {
    /// The seat this is for.
    pub seat: u8,
    /// The tokens.
    pub tokens: Vec<SeenToken>,
    /// Scores, seat 1 first.
    pub scores: [i64; 2],
    /// Banked extra turns.
    pub extra_turns: [u8; 2],
    /// Next-token bonuses.
    pub bonus: [i32; 2],
    /// This seat's stacks in their present order, top first (card keys).
    pub stacks: Vec<Vec<String>>,
    /// How many cards each opponent stack holds.
    pub their_sizes: Vec<u8>,
    /// The cards the opponent played, oldest first (stack, card key).
    pub their_plays: Vec<(u8, String)>,
    /// The seat to move.
    pub turn: u8,
    /// The last placed token's cell.
    pub last_placed: Option<(i32, i32)>,
    /// The cell placed before it.
    pub prev_placed: Option<(i32, i32)>,
    /// Moves played.
    pub moves: u32,
    /// Whether the game is over.
    pub over: bool,
    /// The winner (when over; `None` for a draw).
    pub winner: Option<u8>,
}

fn card_key(catalog: &Catalog, card: CardId) -> String {
    catalog.card(card).meta.key()
}

fn kind_key(catalog: &Catalog, kind: TokenTypeId) -> String {
    catalog.token_type(kind).meta.key()
}

fn xy(cell: Cell) -> (i32, i32) {
    (cell.x, cell.y)
}

impl Seen {
    /// What `seat` sees of `state`, given every play so far.
    #[must_use]
    pub fn of(catalog: &Catalog, state: &GameState, seat: Seat, history: &[PublicPlay]) -> Seen {
        let board = state.board();
        let tokens = board
            .indexed()
            .map(|(i, t)| {
                let cell = board.cell(i);
                SeenToken {
                    x: cell.x,
                    y: cell.y,
                    kind: kind_key(catalog, t.kind),
                    value: t.value,
                    seat: t.seat.number(),
                    card: t.card.map(|c| card_key(catalog, c)),
                }
            })
            .collect();
        let both = Seat::BOTH.map(|s| state.seat(s));
        let other = seat.other();
        let outcome = state.outcome();
        Seen {
            seat: seat.number(),
            tokens,
            scores: both.map(|s| s.score),
            extra_turns: both.map(|s| s.extra_turns),
            bonus: both.map(|s| s.bonus),
            stacks: state
                .seat(seat)
                .stacks()
                .iter()
                .map(|s| s.cards().map(|c| card_key(catalog, c)).collect())
                .collect(),
            their_sizes: state
                .seat(other)
                .stacks()
                .iter()
                .map(|s| {
                    u8::try_from(s.len()).unwrap_or_else(|_| {
                        never!(
                            u8::MAX,
                            "a stack of {} cards, past MAX_STACK_CARDS",
                            s.len()
                        )
                    })
                })
                .collect(),
            their_plays: history
                .iter()
                .filter(|p| p.seat == other)
                .map(|p| (p.stack, card_key(catalog, p.card)))
                .collect(),
            turn: state.turn().number(),
            last_placed: state.last_placed().map(xy),
            prev_placed: state.prev_placed().map(xy),
            moves: state.moves_played(),
            over: outcome.is_some(),
            winner: outcome.and_then(|o| o.winner).map(Seat::number),
        }
    }

    /// The viewing seat.
    #[must_use]
    pub fn seat(&self) -> Seat {
        seat_of(self.seat).unwrap_or(Seat::One)
    }

    /// A game state for this view over `catalog` (the opponent's stacks hold
    /// placeholders of their true sizes), and the plays known: an error names the first key the catalog lacks.
    ///
    /// # Errors
    /// A seat that is neither 1 nor 2, or a card or token type the catalog lacks.
    pub fn restore(&self, catalog: &Catalog) -> Result<(GameState, Vec<PublicPlay>), ViewError> {
        let seat = seat_of(self.seat).ok_or(ViewError::NoSeat(self.seat))?;
        let card = |key: &str| {
            catalog
                .card_named(key)
                .map_err(|_| ViewError::UnknownCard(crate::rules::echo(key)))
        };
        let mut tokens = Vec::with_capacity(self.tokens.len());
        for t in &self.tokens {
            let kind = catalog
                .token_type_named(&t.kind)
                .map_err(|_| ViewError::UnknownTokenType(crate::rules::echo(&t.kind)))?;
            let owner = seat_of(t.seat).ok_or(ViewError::NoSeat(t.seat))?;
            tokens.push((
                Cell::new(t.x, t.y),
                Token {
                    value: t.value,
                    kind,
                    card: t.card.as_deref().map(card).transpose()?,
                    seat: owner,
                },
            ));
        }
        let mut own = Vec::with_capacity(self.stacks.len().min(crate::rules::MAX_STACKS));
        for stack in self.stacks.iter().take(crate::rules::MAX_STACKS) {
            own.push(
                stack
                    .iter()
                    .map(|k| card(k))
                    .collect::<Result<Vec<_>, _>>()?,
            );
        }
        let mut stacks: [Vec<Vec<CardId>>; 2] = [Vec::new(), Vec::new()];
        stacks[seat.index()] = own;
        // The opponent's stacks keep their sizes (what an observer and the AI's
        // determinization need) and hold placeholders, never shown: their cards are not
        // known here.
        stacks[seat.other().index()] = self
            .their_sizes
            .iter()
            .take(crate::rules::MAX_STACKS)
            .map(|&n| vec![CardId(0); usize::from(n).min(crate::rules::MAX_STACK_CARDS)])
            .collect();
        let mut plays = Vec::with_capacity(self.their_plays.len());
        for (stack, key) in &self.their_plays {
            plays.push(PublicPlay {
                seat: seat.other(),
                stack: *stack,
                card: card(key)?,
            });
        }
        let parts = Restored {
            tokens,
            stacks,
            scores: self.scores,
            extra_turns: self.extra_turns,
            bonus: self.bonus,
            turn: seat_of(self.turn).ok_or(ViewError::NoSeat(self.turn))?,
            last_placed: self.last_placed.map(|(x, y)| Cell::new(x, y)),
            prev_placed: self.prev_placed.map(|(x, y)| Cell::new(x, y)),
            moves: self.moves,
            outcome: self.over.then(|| Outcome {
                winner: self.winner.and_then(seat_of),
            }),
        };
        Ok((GameState::restored(catalog, &parts), plays))
    }
}

/// Why a host's view of a game cannot be made into a game state here.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ViewError {
    /// A seat number that is neither 1 nor 2.
    #[error("no seat {0}")]
    NoSeat(u8),
    /// A card this game's content lacks (its key, made printable).
    #[error("the host played card '{0}', which this game's content lacks")]
    UnknownCard(String),
    /// A token type this game's content lacks.
    #[error("the host placed token type '{0}', which this game's content lacks")]
    UnknownTokenType(String),
}

/// A deck's stacks as card keys, top first: what `Join` carries.
#[must_use]
pub fn deck_keys(catalog: &Catalog, stacks: &[Vec<CardId>]) -> Vec<Vec<String>> {
    stacks
        .iter()
        .map(|s| s.iter().map(|&c| card_key(catalog, c)).collect())
        .collect()
}

/// A played card on the wire.
#[must_use]
pub fn played(catalog: &Catalog, play: PublicPlay, cell: Option<Cell>) -> Played {
    Played {
        seat: play.seat.number(),
        stack: play.stack,
        card: card_key(catalog, play.card),
        cell: cell.map(xy),
    }
}

/// Decoding with limits: collections and texts from a client are refused at their length
/// prefix, before anything of their size is allocated.
mod bounded {
    use serde::Deserializer;
    use serde::de::{DeserializeSeed, Error, SeqAccess, Visitor};

    use super::{MAX_KEY, MAX_WANTED, MAX_WIRE_TEXT};
    use crate::rules::{MAX_STACK_CARDS, MAX_STACKS};

    #[derive(Clone, Copy)]
    struct Str(usize);

    impl<'de> DeserializeSeed<'de> for Str {
        type Value = String;
        fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<String, D::Error> {
            d.deserialize_str(self)
        }
    }

    impl Visitor<'_> for Str {
        type Value = String;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            write!(f, "a text of at most {} bytes", self.0)
        }
        fn visit_str<E: Error>(self, v: &str) -> Result<String, E> {
            if v.len() > self.0 {
                let why = format!(
                    "a text of {} bytes is over the {}-byte limit",
                    v.len(),
                    self.0
                );
                crate::net::frame::note_refusal(&why);
                return Err(E::custom(why));
            }
            Ok(v.to_owned())
        }
    }

    #[derive(Clone, Copy)]
    struct List<S> {
        max: usize,
        what: &'static str,
        item: S,
    }

    impl<'de, S: DeserializeSeed<'de> + Copy> DeserializeSeed<'de> for List<S> {
        type Value = Vec<S::Value>;
        fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
            d.deserialize_seq(self)
        }
    }

    impl<'de, S: DeserializeSeed<'de> + Copy> Visitor<'de> for List<S> {
        type Value = Vec<S::Value>;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            write!(f, "at most {} {}", self.max, self.what)
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            let over = |n: usize| {
                let why = format!("{n} {} are over the limit of {}", self.what, self.max);
                crate::net::frame::note_refusal(&why);
                A::Error::custom(why)
            };
            if let Some(n) = seq.size_hint()
                && n > self.max
            {
                return Err(over(n));
            }
            let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(self.max));
            while let Some(v) = seq.next_element_seed(self.item)? {
                if out.len() == self.max {
                    return Err(over(self.max + 1));
                }
                out.push(v);
            }
            Ok(out)
        }
    }

    pub fn text<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
        Str(MAX_WIRE_TEXT).deserialize(d)
    }

    pub fn ids<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
        List {
            max: MAX_WANTED,
            what: "pack ids",
            item: Str(MAX_KEY),
        }
        .deserialize(d)
    }

    pub fn deck<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Vec<String>>, D::Error> {
        List {
            max: MAX_STACKS + 1,
            what: "stacks",
            item: List {
                max: MAX_STACK_CARDS + 1,
                what: "cards in a stack",
                item: Str(MAX_KEY),
            },
        }
        .deserialize(d)
    }
}
