//! The runtime definitions the engine plays with: the rule numbers, areas, token types,
//! abilities with their effects, cards, decks, scripts and packs, each with its [`Meta`]
//! (id, name, description, origin).
//!
//! This is the runtime form of content. The YAML document types live in `content` and are
//! converted into these types there; nothing here knows about YAML or files. Names and
//! descriptions are kept beside the definitions for tools and the UI, never read on the
//! hot path of move resolution.

use super::ids::{AbilityId, AreaId, Bounds, CardId, Cell, Offset, ScriptId, Seat, TokenTypeId};

/// The largest board side the engine supports.
pub const MAX_SIDE: u8 = 16;
/// The largest number of stacks in a deck.
pub const MAX_STACKS: usize = 8;
/// The largest number of cards in one stack.
pub const MAX_STACK_CARDS: usize = 8;

/// Where an entry was defined: for "where does this come from" in tools and diagnostics.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Origin {
    /// The id of the pack that defined the entry.
    pub pack: String,
    /// The file, relative to the folder the pack was found in (e.g. `base/cards.yaml`).
    pub file: String,
    /// 1-based line of the entry's id.
    pub line: u32,
    /// 1-based column of the entry's id.
    pub column: u32,
}

/// The human side of an entry: its qualified id, name, description and origin.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Meta {
    /// The id within its pack (`push_row`).
    pub id: String,
    /// The display name (falls back to the id).
    pub name: String,
    /// A one-line description.
    pub description: String,
    /// Where it was defined.
    pub origin: Origin,
}

impl Meta {
    /// `pack:id`, the id that names this entry exactly.
    #[must_use]
    pub fn key(&self) -> String {
        format!("{}:{}", self.origin.pack, self.id)
    }
}

/// The rule numbers of the game.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ruleset {
    /// Board width in cells.
    pub width: u8,
    /// Board height in cells.
    pub height: u8,
    /// Stacks per deck.
    pub stacks: u8,
    /// Fewest cards in a stack.
    pub stack_min: u8,
    /// Most cards in a stack.
    pub stack_max: u8,
    /// The game ends when a seat's score reaches this.
    pub score_limit: i64,
    /// The compensation token for the second seat, if any.
    pub opening_token: Option<OpeningToken>,
    /// What one move may cost when scripts run (instructions, time, nesting, events).
    pub limits: MoveLimits,
}

/// Bounds on one move's scripted work, shared by every hook of every pack that runs
/// during it. Rule numbers like the others (`rules.limits` in a pack); the defaults are
/// [`MoveLimits::DEFAULT`] and the loader refuses values above [`MoveLimits::MAX`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MoveLimits {
    /// Lua instructions all hooks together may run in one step of a move (the placement
    /// with its ability, then between turns and scoring): each step has its own.
    pub instructions: u64,
    /// Wall-clock milliseconds a whole move's hooks may take.
    pub wall_ms: u32,
    /// How deep hooks may trigger each other (a hook destroys a token whose type has a
    /// hook, and so on), across packs.
    pub hook_depth: u8,
    /// Events one move may produce.
    pub events: u32,
    /// Bytes of `ctx:log` text one move may write.
    pub log_bytes: u32,
}

impl MoveLimits {
    /// The limits a ruleset has when no pack sets them.
    pub const DEFAULT: MoveLimits = MoveLimits {
        instructions: 10_000_000,
        wall_ms: 1_000,
        hook_depth: 16,
        events: 10_000,
        log_bytes: 64 * 1024,
    };

    /// The largest value the loader accepts for each limit.
    pub const MAX: MoveLimits = MoveLimits {
        instructions: 200_000_000,
        wall_ms: 10_000,
        hook_depth: 32,
        events: 1_000_000,
        log_bytes: 4 * 1024 * 1024,
    };
}

impl Default for MoveLimits {
    fn default() -> Self {
        MoveLimits::DEFAULT
    }
}

/// The token put on the board before the first move.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpeningToken {
    /// Its owner.
    pub seat: Seat,
    /// Its value.
    pub value: i32,
    /// Its type.
    pub kind: TokenTypeId,
    /// The cells to choose from, uniformly at random.
    pub cells: Vec<Cell>,
}

/// A set of offsets around a placed token, in a fixed order.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Area {
    /// The named area this came from, if it was named.
    pub id: Option<AreaId>,
    /// The offsets, in the order effects visit them.
    offsets: Vec<Offset>,
    /// The offsets farthest first (Chebyshev distance), ties in area order: the order in
    /// which `push` and `flip` visit targets. Computed once by [`Area::new`].
    by_reach: Vec<Offset>,
    /// A hash of `offsets` (0 for none), computed once by [`Area::new`].
    fingerprint: u64,
}

impl Area {
    /// An area of these offsets.
    #[must_use]
    pub fn new(id: Option<AreaId>, offsets: Vec<Offset>) -> Area {
        let mut by_reach = offsets.clone();
        by_reach.sort_by_key(|o| std::cmp::Reverse(o.reach()));
        let fingerprint = if offsets.is_empty() {
            0
        } else {
            use std::hash::{Hash, Hasher};
            // SipHash with fixed keys: the same offsets give the same number throughout a
            // run (nothing keeps it longer).
            let mut hasher = std::hash::DefaultHasher::new();
            offsets.hash(&mut hasher);
            hasher.finish()
        };
        Area {
            id,
            offsets,
            by_reach,
            fingerprint,
        }
    }

    /// An area with no cells.
    pub const EMPTY: Area = Area {
        id: None,
        offsets: Vec::new(),
        by_reach: Vec::new(),
        fingerprint: 0,
    };

    /// A number that stands for the area's offsets (in their order) wherever it is kept:
    /// areas of different offsets almost never share one. Caches that outlive a catalog
    /// use it, not the area's address.
    #[must_use]
    pub fn fingerprint(&self) -> u64 {
        self.fingerprint
    }

    /// The offsets, in the order effects visit them (set only by [`Area::new`], which
    /// also sorts them farthest first).
    #[must_use]
    pub fn offsets(&self) -> &[Offset] {
        &self.offsets
    }

    /// The offsets farthest first, ties in area order.
    #[must_use]
    pub fn farthest_first(&self) -> &[Offset] {
        if self.by_reach.len() == self.offsets.len() {
            &self.by_reach
        } else {
            &self.offsets
        }
    }

    /// The cells the area covers from `origin`, in area order, off the board too. This
    /// and the methods below are the one place area geometry is worked out.
    pub fn cells_from(&self, origin: Cell) -> impl Iterator<Item = Cell> + '_ {
        self.offsets.iter().map(move |&o| origin.offset(o))
    }

    /// The cells the area covers from `origin` on a board of `bounds`, in area order.
    pub fn cells_on(&self, origin: Cell, bounds: Bounds) -> impl Iterator<Item = Cell> + '_ {
        self.cells_from(origin).filter(move |&c| bounds.contains(c))
    }

    /// The cells the area covers from `origin`, farthest first (ties in area order), off
    /// the board too.
    pub fn cells_farthest_first(&self, origin: Cell) -> impl Iterator<Item = Cell> + '_ {
        self.farthest_first().iter().map(move |&o| origin.offset(o))
    }

    /// Whether the area from `origin` covers `cell`.
    #[must_use]
    pub fn covers(&self, origin: Cell, cell: Cell) -> bool {
        self.cells_from(origin).any(|c| c == cell)
    }
}

/// The area of hooks that have none (a token's `between_turns` and `on_destroyed`).
pub static NO_AREA: Area = Area::EMPTY;

/// A named area of the catalog.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AreaDef {
    /// Id, name, origin.
    pub meta: Meta,
    /// The offsets.
    pub offsets: Vec<Offset>,
}

/// Which tokens an aura reaches, relative to the aura's owner.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Relation {
    /// Tokens of the same seat.
    Friendly,
    /// Tokens of the other seat.
    Enemy,
    /// Tokens of either seat.
    All,
}

impl Relation {
    /// Whether a token of seat `other` is reached by an aura of a token of seat `owner`.
    #[must_use]
    pub fn includes(self, owner: Seat, other: Seat) -> bool {
        match self {
            Relation::Friendly => owner == other,
            Relation::Enemy => owner != other,
            Relation::All => true,
        }
    }
}

/// A passive income bonus a token gives to the tokens around it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Aura {
    /// The cells it reaches.
    pub area: Area,
    /// Whose tokens it reaches.
    pub to: Relation,
    /// The income each reached token receives.
    pub income: i32,
}

/// What a token becomes instead of being destroyed by losing value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Becomes {
    /// The new type.
    pub kind: TokenTypeId,
    /// The new value.
    pub value: i32,
}

/// A between-turns effect of a token type: damage to the first token in each direction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Turret {
    /// Damage per hit.
    pub amount: i32,
    /// The directions it looks in, each followed cell by cell.
    pub directions: Vec<Offset>,
}

/// A token type and its passive properties.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TokenTypeDef {
    /// Id, name, origin.
    pub meta: Meta,
    /// Income it gives to the tokens around it.
    pub aura: Option<Aura>,
    /// What it becomes when destroyed by losing value.
    pub on_destroyed: Option<Becomes>,
    /// Its income multiplier (1 for plain tokens).
    pub income_multiplier: i32,
    /// What it does between turns.
    pub between_turns: Option<Turret>,
    /// Its script, whose hooks the engine calls.
    pub script: Option<ScriptId>,
}

/// How much a `damage` effect lowers each target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Amount {
    /// A fixed amount.
    Fixed(i32),
    /// The number of the mover's tokens on the area's cells, counted before damage lands.
    FriendlyInArea,
}

/// Self or opponent, relative to the seat that plays the card.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// The seat playing the card.
    Mover,
    /// The other seat.
    Opponent,
}

impl Side {
    /// The seat this side means when `mover` plays.
    #[must_use]
    pub fn seat(self, mover: Seat) -> Seat {
        match self {
            Side::Mover => mover,
            Side::Opponent => mover.other(),
        }
    }
}

/// A built-in effect with its parameters, or a script.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Effect {
    /// Lower each target token's value.
    Damage {
        /// By how much.
        amount: Amount,
    },
    /// Move each target token one cell away from the placed token.
    Push,
    /// Move each target token to its mirror cell through the placed token.
    Flip,
    /// Create a token on each empty target cell.
    Spawn {
        /// Whose tokens.
        owner: Side,
        /// Their value.
        value: i32,
        /// Their type.
        kind: TokenTypeId,
    },
    /// Bank an extra turn.
    ExtraTurn {
        /// For whom.
        player: Side,
        /// Only if every cell of the area is on the board and holds a token.
        area_full: bool,
    },
    /// The placed token swaps cells with the previous last-placed token.
    SwapWithLast,
    /// Change the type of each target token.
    Transform {
        /// The new type.
        into: TokenTypeId,
        /// Only tokens of at most this value.
        max_value: Option<i32>,
    },
    /// The mover's next placed token gets extra value.
    NextTokenBonus {
        /// How much.
        amount: i32,
    },
    /// A script's `on_place` hook.
    Script(ScriptId),
}

impl Effect {
    /// The effect's name as written in YAML.
    #[must_use]
    pub fn name(&self) -> &'static str {
        match self {
            Effect::Damage { .. } => "damage",
            Effect::Push => "push",
            Effect::Flip => "flip",
            Effect::Spawn { .. } => "spawn",
            Effect::ExtraTurn { .. } => "extra_turn",
            Effect::SwapWithLast => "swap_with_last",
            Effect::Transform { .. } => "transform",
            Effect::NextTokenBonus { .. } => "next_token_bonus",
            Effect::Script(_) => "script",
        }
    }
}

/// An ability: an effect a card applies over its area.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AbilityDef {
    /// Id, name, origin.
    pub meta: Meta,
    /// What it does.
    pub effect: Effect,
}

/// A card: the token it places and the ability it triggers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CardDef {
    /// Id, name, origin.
    pub meta: Meta,
    /// The placed token's value.
    pub value: i32,
    /// The placed token's type.
    pub token: TokenTypeId,
    /// The ability, if any.
    pub ability: Option<AbilityId>,
    /// The ability's area (empty when the card has none).
    pub area: Area,
}

/// A ready deck: stacks of cards, top first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeckDef {
    /// Id, name, origin.
    pub meta: Meta,
    /// The stacks, each top card first.
    pub stacks: Vec<Vec<CardId>>,
}

/// A script file the catalog refers to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScriptDef {
    /// The pack it belongs to.
    pub pack: String,
    /// Its path relative to the pack folder (`scripts/vortex.lua`).
    pub path: String,
    /// Where it was read from (the pack folder joined with `path`), for messages.
    pub file: String,
    /// Its source, read once when the packs were loaded: every script host compiles
    /// the same text, whatever happens to the file afterwards.
    pub source: String,
}

impl ScriptDef {
    /// The script's name as messages, events on the wire and the client show it:
    /// `pack/path` (`base/scripts/vortex.lua`).
    #[must_use]
    pub fn name(&self) -> String {
        format!("{}/{}", self.pack, self.path)
    }
}

/// A loaded pack, as its manifest describes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PackInfo {
    /// Its id.
    pub id: String,
    /// Its display name.
    pub name: String,
    /// Its version.
    pub version: String,
    /// Its description.
    pub description: String,
    /// Its authors.
    pub authors: Vec<String>,
    /// Instructions each of its script hook calls may run.
    pub script_instructions: u64,
    /// Bytes its scripts' state may use.
    pub script_memory: usize,
    /// Its `ai.lua`, whose `evaluate` the AI adds to its own evaluation.
    pub ai_script: Option<ScriptId>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_area_fingerprint_follows_its_offsets_not_its_name_or_place() {
        let o = |dx, dy| Offset { dx, dy };
        let row = Area::new(None, vec![o(-1, 0), o(1, 0)]);
        let named = Area::new(Some(AreaId(3)), vec![o(-1, 0), o(1, 0)]);
        let reversed = Area::new(None, vec![o(1, 0), o(-1, 0)]);
        let column = Area::new(None, vec![o(0, -1), o(0, 1)]);
        assert_eq!(row.fingerprint(), named.fingerprint());
        assert_eq!(row.fingerprint(), row.clone().fingerprint());
        assert_ne!(row.fingerprint(), reversed.fingerprint(), "order counts");
        assert_ne!(row.fingerprint(), column.fingerprint());
        assert_eq!(
            Area::new(None, Vec::new()).fingerprint(),
            Area::EMPTY.fingerprint()
        );
    }
}
