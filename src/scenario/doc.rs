//! The scenario file format (see `docs/scenarios.md`).

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Deserialize;
use serde::de::Deserializer;

use crate::content::scalar::{Refused, Scalar, scalar};

use crate::content::doc::RulesDoc;
use crate::content::yaml::Located;

/// A rules test as data: a start position, moves, and what must hold afterwards.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScenarioDoc {
    /// What the scenario guards, in a few words.
    pub name: Option<String>,
    /// Pack ids to load, with what they require (default: `[base]`).
    pub packs: Option<Vec<Located<String>>>,
    /// More folders to look for packs in, relative to this file.
    #[serde(default)]
    pub pack_dirs: Vec<Located<String>>,
    /// The content hash of each pack the scenario was written against, by id (what
    /// `tokensmith pack list --json` shows): `tokensmith scenario FILE --sync` fetches
    /// the ones missing here from the indexes, by hash.
    #[serde(default)]
    pub pack_hashes: BTreeMap<String, String>,
    /// Patches to the ruleset for this scenario.
    pub rules: Option<RulesDoc>,
    /// The game's random seed (default 0).
    pub seed: Option<u64>,
    /// Tokens on the board before the first move.
    #[serde(default)]
    pub board: Vec<Located<TokenDoc>>,
    /// Each seat's deck (`1:` and `2:`), stacks of card ids, top first. Default: the first
    /// deck of the loaded content.
    #[serde(default)]
    pub decks: BTreeMap<u8, Located<Vec<Vec<Located<String>>>>>,
    /// Scores before the first move.
    #[serde(default)]
    pub scores: BTreeMap<u8, i64>,
    /// Extra turns each seat has banked before the first move.
    #[serde(default)]
    pub extra_turns: BTreeMap<u8, u8>,
    /// The seat to move first (default 1).
    pub turn: Option<Located<i64>>,
    /// The moves, in order.
    #[serde(default)]
    pub moves: Vec<Located<MoveDoc>>,
    /// What must hold after the moves.
    #[serde(default)]
    pub expect: ExpectDoc,
}

/// A token in a scenario.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TokenDoc {
    /// Its cell `[x, y]`.
    pub at: Located<[i64; 2]>,
    /// Its owner, 1 or 2.
    pub seat: Located<i64>,
    /// Its value.
    pub value: Located<i64>,
    /// Its token type (default `basic`).
    #[serde(rename = "type")]
    pub kind: Option<Located<String>>,
}

/// A move in a scenario.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MoveDoc {
    /// The seat moving (default: the seat to move).
    pub seat: Option<Located<i64>>,
    /// The card; it must be in that seat's hand.
    pub card: Located<String>,
    /// The cell `[x, y]`.
    pub at: Located<[i64; 2]>,
    /// Played as the sandbox plays: the seat is given the turn and the card comes from
    /// outside its stacks, which stay as they are (default false). Scenarios saved from
    /// the sandbox use it.
    #[serde(default)]
    pub sandbox: bool,
}

/// The result of a game: a seat, or a draw.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WinnerDoc {
    /// Seat 1 or 2 won.
    Seat(u8),
    /// A draw.
    Draw,
}

impl<'de> Deserialize<'de> for WinnerDoc {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        scalar(d, "1, 2, `draw` or null", |s| match s {
            Scalar::Int(1) => Ok(WinnerDoc::Seat(1)),
            Scalar::Int(2) => Ok(WinnerDoc::Seat(2)),
            Scalar::Str("draw") => Ok(WinnerDoc::Draw),
            Scalar::Int(_) | Scalar::Big(_) | Scalar::Str(_) => Err(Refused::Invalid),
            Scalar::Float(_) => Err(Refused::WrongType),
        })
    }
}

impl JsonSchema for WinnerDoc {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Winner".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "1, 2, or `draw`.",
            "anyOf": [ { "enum": [1, 2] }, { "const": "draw" } ]
        })
    }
}

fn present<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    T::deserialize(d).map(Some)
}

/// What must hold after the moves; every key is optional.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExpectDoc {
    /// Exactly these tokens, nothing else.
    pub board: Option<Located<Vec<Located<TokenDoc>>>>,
    /// These tokens at least.
    pub tokens: Option<Vec<Located<TokenDoc>>>,
    /// These cells are empty.
    pub empty: Option<Vec<Located<[i64; 2]>>>,
    /// Each seat's score.
    pub scores: Option<Located<BTreeMap<u8, i64>>>,
    /// Each seat's income on the final board.
    pub income: Option<Located<BTreeMap<u8, i64>>>,
    /// The seat to move.
    pub next: Option<Located<i64>>,
    /// Whether the game is over.
    pub over: Option<Located<bool>>,
    /// The winner: 1, 2, `draw`, or null for none (the game is not over).
    #[serde(default, deserialize_with = "present")]
    #[schemars(with = "Option<WinnerDoc>")]
    pub winner: Option<Located<Option<WinnerDoc>>>,
    /// The last move must be refused with an error containing this text.
    pub error: Option<Located<String>>,
}
