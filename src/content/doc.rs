//! The YAML document types of packs: what designers write, field for field.
//!
//! These are separate from the runtime catalog types (`rules::Catalog`); `compile` is the
//! only place that knows both. Every field but `id` is optional here because an entry may
//! be a patch that gives only the fields it changes; required fields are checked when the
//! catalog is compiled, with the entry's location. The JSON Schemas under `schemas/` are
//! generated from these types.

use schemars::JsonSchema;
use serde::Deserialize;
use serde::de::{self, Deserializer, Visitor};

use super::scalar::{Refused, Scalar, scalar};

use super::yaml::Located;

/// `pack.yaml`: a pack's manifest.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PackManifest {
    /// The pack's id: lowercase letters, digits and `_`, unique among loaded packs.
    pub id: Located<String>,
    /// Display name.
    pub name: Option<String>,
    /// Semantic version, e.g. `1.2.0`.
    pub version: Located<VersionText>,
    /// Who made it.
    #[serde(default)]
    pub authors: Vec<String>,
    /// What it adds.
    pub description: Option<String>,
    /// Packs this one needs, loaded before it.
    #[serde(default)]
    pub requires: Vec<Located<Requirement>>,
    /// Limits for this pack's Lua scripts.
    pub scripts: Option<ScriptLimitsDoc>,
}

/// Limits for a pack's scripts.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScriptLimitsDoc {
    /// Lua instructions each hook call may run (default 1,000,000).
    pub instructions: Option<Located<i64>>,
    /// Memory the pack's scripts may use, in KiB (default 16,384).
    pub memory_kb: Option<Located<i64>>,
}

/// A dependency of a pack.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Requirement {
    /// The required pack's id.
    pub id: Located<String>,
    /// A semver requirement, e.g. `^1` (default: any version).
    pub version: Option<Located<VersionText>>,
}

/// A version or version requirement as written. YAML reads an unquoted `1.0` as a
/// number; it is kept as text so that the semver check can say what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VersionText(pub String);

impl std::ops::Deref for VersionText {
    type Target = str;

    fn deref(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for VersionText {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for VersionText {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        scalar(d, "a version like 1.2.0", |s| {
            Ok(VersionText(match s {
                Scalar::Int(v) => v.to_string(),
                Scalar::Big(v) => v.to_string(),
                Scalar::Float(v) => format!("{v:?}"),
                Scalar::Str(v) => v.to_string(),
            }))
        })
    }
}

impl JsonSchema for VersionText {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Version".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "A semantic version (1.2.0) or requirement (^1.2).",
            "type": "string"
        })
    }
}

/// A content document: any `*.yaml` file of a pack other than `pack.yaml`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ContentDoc {
    /// Rule numbers (patches the ruleset field by field).
    pub rules: Option<RulesDoc>,
    /// Named areas.
    #[serde(default)]
    pub areas: Vec<AreaDoc>,
    /// Token types.
    #[serde(default)]
    pub token_types: Vec<TokenTypeDoc>,
    /// Abilities.
    #[serde(default)]
    pub abilities: Vec<AbilityDoc>,
    /// Cards.
    #[serde(default)]
    pub cards: Vec<CardDoc>,
    /// Ready decks.
    #[serde(default)]
    pub decks: Vec<DeckDoc>,
}

/// The section names of a content document, in the order they are read.
pub const SECTIONS: &[&str] = &[
    "rules",
    "areas",
    "token_types",
    "abilities",
    "cards",
    "decks",
];

/// The rule numbers. In a pack that patches the rules, give only what changes.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RulesDoc {
    /// Board size.
    pub board: Option<Located<BoardDoc>>,
    /// Stacks per deck.
    pub stacks: Option<Located<i64>>,
    /// Cards per stack.
    pub stack_size: Option<Located<StackSizeDoc>>,
    /// The game ends when a seat's score reaches this.
    pub score_limit: Option<Located<i64>>,
    /// The second seat's compensation token, or `null` for none.
    #[serde(default, deserialize_with = "present")]
    #[schemars(with = "Option<OpeningTokenDoc>")]
    pub opening_token: Option<Located<Option<OpeningTokenDoc>>>,
    /// Bounds on the scripted work of one move, shared by every hook of every pack;
    /// each key is optional and has a default.
    pub limits: Option<Located<LimitsDoc>>,
}

/// Bounds on one move's scripted work (rules.limits).
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LimitsDoc {
    /// Lua instructions all hooks together may run in one step of a move (default
    /// 10,000,000; at most 200,000,000).
    pub instructions: Option<Located<i64>>,
    /// Milliseconds a move's hooks may take in all (default 1,000; at most 10,000).
    pub wall_ms: Option<Located<i64>>,
    /// How deep hooks may trigger each other, across packs (default 16; at most 32).
    pub hook_depth: Option<Located<i64>>,
    /// Events one move may produce (default 10,000; at most 1,000,000).
    pub events: Option<Located<i64>>,
    /// Bytes of ctx:log text one move may write (default 65,536; at most 4,194,304).
    pub log_bytes: Option<Located<i64>>,
}

impl RulesDoc {
    /// Take the fields `other` gives (used to rebuild a rules section key by key).
    pub fn merge(&mut self, other: RulesDoc) {
        if other.board.is_some() {
            self.board = other.board;
        }
        if other.stacks.is_some() {
            self.stacks = other.stacks;
        }
        if other.stack_size.is_some() {
            self.stack_size = other.stack_size;
        }
        if other.score_limit.is_some() {
            self.score_limit = other.score_limit;
        }
        if other.opening_token.is_some() {
            self.opening_token = other.opening_token;
        }
        if other.limits.is_some() {
            self.limits = other.limits;
        }
    }
}

/// Deserialize a field that may be `null` so that "given as null" and "absent" differ.
fn present<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    T::deserialize(d).map(Some)
}

/// Board size in cells.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BoardDoc {
    /// Columns (1 to 16).
    pub width: Option<Located<i64>>,
    /// Rows (1 to 16; width × height at most 144).
    pub height: Option<Located<i64>>,
}

/// The fewest and most cards in a stack.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StackSizeDoc {
    /// Fewest cards in a stack.
    pub min: Option<Located<i64>>,
    /// Most cards in a stack (at most 8).
    pub max: Option<Located<i64>>,
}

/// The token put on the board before the first move.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OpeningTokenDoc {
    /// Its owner, 1 or 2.
    pub seat: Located<i64>,
    /// Its value.
    pub value: Located<i64>,
    /// Its token type (default `basic`).
    #[serde(rename = "type")]
    pub kind: Option<Located<String>>,
    /// The cells to choose from at random, as `[x, y]`.
    pub cells: Located<Vec<Located<[i64; 2]>>>,
}

/// A named area: offsets from the placed token, or a grid picture.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AreaDoc {
    /// The area's id.
    pub id: Located<String>,
    /// Display name.
    pub name: Option<String>,
    /// Description.
    pub description: Option<String>,
    /// Offsets `[dx, dy]` from the placed token; `dy > 0` points down.
    pub offsets: Option<Located<Vec<Located<[i64; 2]>>>>,
    /// A picture: `o` the placed token, `x` a target, `.` nothing; cells separated by spaces.
    pub grid: Option<Located<String>>,
}

/// An area given where it is used: an area id, a list of offsets, or `{ grid: ... }`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AreaRef {
    /// A named area.
    Named(String),
    /// Offsets `[dx, dy]`, each with its location.
    Offsets(Vec<Located<[i64; 2]>>),
    /// A grid picture.
    Grid(String),
}

impl<'de> Deserialize<'de> for AreaRef {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = AreaRef;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(
                    "an area id, a list of offsets like [[-1, 0], [1, 0]], or { grid: ... }",
                )
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<AreaRef, E> {
                Ok(AreaRef::Named(v.to_string()))
            }
            fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<AreaRef, A::Error> {
                let mut offsets = Vec::new();
                while let Some(o) = seq.next_element::<Located<[i64; 2]>>()? {
                    offsets.push(o);
                }
                Ok(AreaRef::Offsets(offsets))
            }
            fn visit_map<A: de::MapAccess<'de>>(self, mut map: A) -> Result<AreaRef, A::Error> {
                let mut grid = None;
                while let Some(key) = map.next_key::<String>()? {
                    if key == "grid" {
                        grid = Some(map.next_value::<String>()?);
                    } else {
                        return Err(de::Error::unknown_field(&key, &["grid"]));
                    }
                }
                grid.map(AreaRef::Grid)
                    .ok_or_else(|| de::Error::missing_field("grid"))
            }
        }
        d.deserialize_any(V)
    }
}

impl JsonSchema for AreaRef {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "AreaRef".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "An area id, a list of offsets [dx, dy], or { grid: ... }.",
            "anyOf": [
                { "type": "string" },
                { "type": "array", "items": { "type": "array", "items": { "type": "integer" }, "minItems": 2, "maxItems": 2 } },
                { "type": "object", "properties": { "grid": { "type": "string" } }, "required": ["grid"], "additionalProperties": false }
            ]
        })
    }
}

/// Whose tokens an aura reaches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RelationDoc {
    /// The owner's tokens.
    Friendly,
    /// The other seat's tokens.
    Enemy,
    /// Everyone's tokens.
    All,
}

/// A token type.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TokenTypeDoc {
    /// The type's id (or `pack:id` to patch another pack's type).
    pub id: Located<String>,
    /// Display name.
    pub name: Option<String>,
    /// One line on what it does.
    pub description: Option<String>,
    /// Income it gives to the tokens around it.
    pub aura: Option<Located<AuraDoc>>,
    /// What it becomes instead of being destroyed by losing value.
    pub on_destroyed: Option<Located<OnDestroyedDoc>>,
    /// Its income multiplier (default 1).
    pub income_multiplier: Option<Located<i64>>,
    /// What it does between turns.
    pub between_turns: Option<Located<BetweenTurnsDoc>>,
    /// A Lua script with token hooks, relative to the pack folder.
    pub script: Option<Located<String>>,
}

/// An aura.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AuraDoc {
    /// The cells it reaches.
    pub area: Located<AreaRef>,
    /// Whose tokens it reaches.
    pub to: Located<RelationDoc>,
    /// Income each reached token receives.
    pub income: Located<i64>,
}

/// A replacement for destruction.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OnDestroyedDoc {
    /// The type it becomes.
    #[serde(rename = "become")]
    pub becomes: Located<String>,
    /// The value it gets (at least 1).
    pub value: Located<i64>,
}

/// The only between-turns effect built in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum BetweenTurnsEffect {
    /// Lower a token's value.
    Damage,
}

/// How far a between-turns effect reaches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Reach {
    /// The first token found in each direction.
    FirstInLine,
}

/// A turret-like between-turns effect.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BetweenTurnsDoc {
    /// The effect (`damage`).
    pub effect: Located<BetweenTurnsEffect>,
    /// Damage per hit.
    pub amount: Located<i64>,
    /// How it finds targets (`first_in_line`).
    pub reach: Located<Reach>,
    /// Directions `[dx, dy]` it looks in.
    pub directions: Located<Vec<Located<[i64; 2]>>>,
}

/// The built-in effects an ability can have.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum EffectDoc {
    /// Lower each target's value by `amount`.
    Damage,
    /// Move each target one cell away.
    Push,
    /// Move each target to its mirror cell.
    Flip,
    /// Create tokens on the empty target cells.
    Spawn,
    /// Bank an extra turn.
    ExtraTurn,
    /// Swap with the last placed token.
    SwapWithLast,
    /// Change the type of the target tokens.
    Transform,
    /// Add value to the mover's next token.
    NextTokenBonus,
}

impl EffectDoc {
    /// The YAML name.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            EffectDoc::Damage => "damage",
            EffectDoc::Push => "push",
            EffectDoc::Flip => "flip",
            EffectDoc::Spawn => "spawn",
            EffectDoc::ExtraTurn => "extra_turn",
            EffectDoc::SwapWithLast => "swap_with_last",
            EffectDoc::Transform => "transform",
            EffectDoc::NextTokenBonus => "next_token_bonus",
        }
    }
}

/// `self` or `opponent`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SideDoc {
    /// The seat playing the card.
    #[serde(rename = "self")]
    Mover,
    /// The other seat.
    Opponent,
}

/// A condition on an extra turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ConditionDoc {
    /// Every cell of the area is on the board and holds a token.
    AreaFull,
}

/// A damage amount: an integer, or `friendly_in_area`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AmountDoc {
    /// A fixed amount.
    Fixed(i64),
    /// The mover's tokens on the area's cells.
    FriendlyInArea,
}

impl<'de> Deserialize<'de> for AmountDoc {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        scalar(d, "an integer or `friendly_in_area`", |s| match s {
            Scalar::Int(v) => Ok(AmountDoc::Fixed(v)),
            Scalar::Big(_) => Err(Refused::Custom("amount is too large")),
            Scalar::Str("friendly_in_area") => Ok(AmountDoc::FriendlyInArea),
            Scalar::Str(_) => Err(Refused::Unknown(&["friendly_in_area"])),
            Scalar::Float(_) => Err(Refused::WrongType),
        })
    }
}

impl JsonSchema for AmountDoc {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Amount".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "An integer, or `friendly_in_area`.",
            "anyOf": [ { "type": "integer" }, { "const": "friendly_in_area" } ]
        })
    }
}

/// An ability: a built-in `effect` with its parameters, or a `script`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AbilityDoc {
    /// The ability's id (or `pack:id` to patch another pack's ability).
    pub id: Located<String>,
    /// Display name.
    pub name: Option<String>,
    /// One line on what it does.
    pub description: Option<String>,
    /// A built-in effect.
    pub effect: Option<Located<EffectDoc>>,
    /// `damage`: an integer ≥ 1 or `friendly_in_area`; `next_token_bonus`: an integer.
    pub amount: Option<Located<AmountDoc>>,
    /// `spawn`: whose tokens (`self` or `opponent`).
    pub owner: Option<Located<SideDoc>>,
    /// `spawn`: the new tokens' value (default 1).
    pub value: Option<Located<i64>>,
    /// `spawn`: the new tokens' type (default `basic`).
    #[serde(rename = "type")]
    pub kind: Option<Located<String>>,
    /// `extra_turn`: who banks it (`self` or `opponent`).
    pub player: Option<Located<SideDoc>>,
    /// `extra_turn`: `area_full` to require every area cell to hold a token.
    pub condition: Option<Located<ConditionDoc>>,
    /// `transform`: the new type.
    pub into: Option<Located<String>>,
    /// `transform`: only tokens of at most this value.
    pub max_value: Option<Located<i64>>,
    /// A Lua script whose `on_place` hook is the effect, relative to the pack folder.
    pub script: Option<Located<String>>,
}

/// A card.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CardDoc {
    /// The card's id (or `pack:id` to patch another pack's card).
    pub id: Located<String>,
    /// Display name.
    pub name: Option<String>,
    /// The placed token's value.
    pub value: Option<Located<i64>>,
    /// The placed token's type (default `basic`).
    pub token: Option<Located<String>>,
    /// The ability it triggers.
    pub ability: Option<Located<String>>,
    /// The ability's area: an area id, offsets, or `{ grid: ... }`.
    pub area: Option<Located<AreaRef>>,
    /// One line on what it does (derived when absent).
    pub description: Option<String>,
}

/// One stack of a deck: card ids, top first.
pub type StackDoc = Located<Vec<Located<String>>>;

/// A ready deck.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DeckDoc {
    /// The deck's id.
    pub id: Located<String>,
    /// Display name.
    pub name: Option<String>,
    /// Description.
    pub description: Option<String>,
    /// The stacks, each a list of card ids, top card first.
    pub stacks: Option<Located<Vec<StackDoc>>>,
}
