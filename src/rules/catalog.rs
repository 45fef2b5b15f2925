//! The compiled catalog: every rule number, area, token type, ability, card and deck of the
//! loaded packs, addressed by dense integer ids.
//!
//! This is the runtime form of content. The YAML document types live in `content` and are
//! converted into these types there; nothing here knows about YAML or files. Names and
//! descriptions are kept beside the definitions for tools and the UI, never read on the
//! hot path of move resolution.

pub use super::ids::MAX_CELLS;
use super::ids::{
    AbilityId, AreaId, Bounds, CardId, Cell, DeckId, Offset, ScriptId, Seat, TokenTypeId, WORDS,
};

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
}

impl Area {
    /// An area of these offsets.
    #[must_use]
    pub fn new(id: Option<AreaId>, offsets: Vec<Offset>) -> Area {
        let mut by_reach = offsets.clone();
        by_reach.sort_by_key(|o| std::cmp::Reverse(o.reach()));
        Area {
            id,
            offsets,
            by_reach,
        }
    }

    /// An area with no cells.
    pub const EMPTY: Area = Area {
        id: None,
        offsets: Vec::new(),
        by_reach: Vec::new(),
    };

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

/// Everything the engine needs to play, compiled from the loaded packs. Immutable once
/// made: [`Catalog::new`] indexes its parts once, and changing content means taking the
/// parts back ([`Catalog::into_parts`]) and making a new catalog, so no index can go stale.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Catalog {
    rules: Ruleset,
    areas: Vec<AreaDef>,
    token_types: Vec<TokenTypeDef>,
    abilities: Vec<AbilityDef>,
    cards: Vec<CardDef>,
    decks: Vec<DeckDef>,
    scripts: Vec<ScriptDef>,
    packs: Vec<PackInfo>,
    /// Per token type, what the engine's inner loops need, made once by [`Catalog::new`].
    kinds: Vec<KindInfo>,
    /// For each token type with an aura, the cells its aura reaches from each cell of the
    /// board, as bitsets of storage indices (empty for the others): what
    /// `Engine::incomes` counts with bit operations.
    aura_reach: Vec<Vec<[u64; WORDS]>>,
    /// Per card, whether playing it may put a token whose type has a script on the board:
    /// its own token, a spawn or a transform into such a type (or a type that becomes
    /// one when destroyed), or a scripted ability.
    brings_scripts: Vec<bool>,
    /// Whether a token type without a script becomes, when destroyed, one with a script:
    /// then a token with a script can appear from a board without one.
    scripts_behind_types: bool,
    /// Which [`Catalog::new`] made it (its clones share it).
    stamp: Stamp,
}

/// Per token type, whether it has a script or becomes, when destroyed (and again, and
/// so on), a type with one.
fn leads_to_script(types: &[TokenTypeDef]) -> Vec<bool> {
    let mut leads: Vec<bool> = types.iter().map(|t| t.script.is_some()).collect();
    // Each pass follows one more step of the chains; a chain has at most one step per type.
    for _ in 0..types.len() {
        let mut changed = false;
        for (i, t) in types.iter().enumerate() {
            let next = t
                .on_destroyed
                .is_some_and(|b| leads.get(b.kind.index()).copied().unwrap_or(false));
            if next && !leads[i] {
                leads[i] = true;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    leads
}

/// A catalog's identity: a number no other [`Catalog::new`] of this process gives, shared
/// by clones, for caches of what is built from a catalog (a thread's script host). Not
/// part of equality: two catalogs with the same definitions are equal.
#[derive(Clone, Copy, Debug)]
struct Stamp(u64);

impl PartialEq for Stamp {
    fn eq(&self, _: &Stamp) -> bool {
        true
    }
}

impl Eq for Stamp {}

impl Stamp {
    fn next() -> Stamp {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        Stamp(NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
    }
}

/// The definitions a [`Catalog`] is made of, in id order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CatalogParts {
    /// The rule numbers.
    pub rules: Ruleset,
    /// Named areas.
    pub areas: Vec<AreaDef>,
    /// Token types.
    pub token_types: Vec<TokenTypeDef>,
    /// Abilities.
    pub abilities: Vec<AbilityDef>,
    /// Cards.
    pub cards: Vec<CardDef>,
    /// Ready decks.
    pub decks: Vec<DeckDef>,
    /// Script files.
    pub scripts: Vec<ScriptDef>,
    /// The loaded packs, in load order.
    pub packs: Vec<PackInfo>,
}

/// The few facts about a token type that the engine's inner loops read, packed small.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct KindInfo {
    /// Income multiplier.
    pub multiplier: i32,
    /// Whether it has an aura.
    pub aura: bool,
    /// Whether it fires between turns.
    pub turret: bool,
    /// Whether it has a script.
    pub script: bool,
}

impl KindInfo {
    fn of(def: &TokenTypeDef) -> KindInfo {
        KindInfo {
            multiplier: def.income_multiplier,
            aura: def.aura.is_some(),
            turret: def.between_turns.is_some(),
            script: def.script.is_some(),
        }
    }
}

/// Why a name could not be resolved to a catalog entry.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LookupError {
    /// No entry has that name.
    #[error("unknown {kind} '{name}'{}", did_you_mean(.suggestion.as_deref()))]
    Unknown {
        /// What was looked for (`card`, `token type`…).
        kind: &'static str,
        /// The name as written.
        name: String,
        /// The nearest existing name.
        suggestion: Option<String>,
    },
    /// Several packs define that id.
    #[error("'{name}' is ambiguous: it could be {}; write one of them in full", .candidates.join(" or "))]
    Ambiguous {
        /// The name as written.
        name: String,
        /// The qualified candidates.
        candidates: Vec<String>,
    },
}

/// The longest name [`nearest`] compares, in bytes.
pub const MAX_SUGGESTED: usize = 128;

/// The longest text [`echo`] shows, in characters.
pub const MAX_ECHO: usize = 80;

/// A value quoted back in a message: control characters escaped (so it cannot forge a
/// new line or move the cursor) and cut after [`MAX_ECHO`] characters with `…`.
#[must_use]
pub fn echo(text: &str) -> String {
    echo_within(text, MAX_ECHO)
}

/// [`echo`] with another length: control characters escaped, cut after `max`
/// characters with `…`.
#[must_use]
pub fn echo_within(text: &str, max: usize) -> String {
    let mut out = String::new();
    for (i, c) in text.chars().enumerate() {
        if i == max {
            out.push('…');
            break;
        }
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

fn did_you_mean(s: Option<&str>) -> String {
    s.map(|s| format!(" (did you mean '{s}'?)"))
        .unwrap_or_default()
}

/// The candidate closest to `name`, if it is close enough to be a likely typo: a few
/// edits away (a swap of two letters counts as one) or sharing most of its letters in order.
///
/// The work is bounded before it starts: names longer than [`MAX_SUGGESTED`] bytes (no id
/// is that long) get no suggestion, so a hostile name costs nothing to refuse.
#[must_use]
pub fn nearest<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<String> {
    if name.len() > MAX_SUGGESTED {
        return None;
    }
    let allowed = (name.chars().count() / 3).max(1);
    candidates
        .into_iter()
        .filter(|c| *c != name && c.len() <= MAX_SUGGESTED)
        .filter_map(|c| {
            let edits = strsim::damerau_levenshtein(name, c);
            let similarity = strsim::jaro_winkler(name, c);
            (edits <= allowed || similarity >= 0.85).then_some((edits, -similarity, c))
        })
        .min_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)))
        .map(|(_, _, c)| c.to_string())
}

fn lookup<'a>(
    kind: &'static str,
    name: &str,
    metas: impl Iterator<Item = &'a Meta> + Clone,
) -> Result<usize, LookupError> {
    let (pack, id) = match name.split_once(':') {
        Some((pack, id)) => (Some(pack), id),
        None => (None, name),
    };
    let matches: Vec<usize> = metas
        .clone()
        .enumerate()
        .filter(|(_, m)| m.id == id && pack.is_none_or(|p| m.origin.pack == p))
        .map(|(i, _)| i)
        .collect();
    match matches.as_slice() {
        [one] => Ok(*one),
        [] => {
            let keys: Vec<String> = metas
                .map(|m| {
                    if pack.is_some() {
                        m.key()
                    } else {
                        m.id.clone()
                    }
                })
                .collect();
            Err(LookupError::Unknown {
                kind,
                name: echo(name),
                suggestion: nearest(name, keys.iter().map(String::as_str)),
            })
        }
        many => {
            let all: Vec<&Meta> = metas.collect();
            Err(LookupError::Ambiguous {
                name: echo(name),
                candidates: many.iter().map(|&i| all[i].key()).collect(),
            })
        }
    }
}

impl Catalog {
    /// A catalog of these definitions, indexed once.
    #[must_use]
    pub fn new(parts: CatalogParts) -> Catalog {
        let kinds = parts.token_types.iter().map(KindInfo::of).collect();
        let CatalogParts {
            rules,
            areas,
            token_types,
            abilities,
            cards,
            decks,
            scripts,
            packs,
        } = parts;
        let aura_reach = token_types
            .iter()
            .map(|t| {
                t.aura
                    .as_ref()
                    .map(|a| reach(&a.area, rules.width, rules.height))
                    .unwrap_or_default()
            })
            .collect();
        let leads = leads_to_script(&token_types);
        let leads_to = |kind: TokenTypeId| leads.get(kind.index()).copied().unwrap_or(false);
        let brings_scripts = cards
            .iter()
            .map(|card| {
                leads_to(card.token)
                    || card
                        .ability
                        .and_then(|a| abilities.get(a.index()))
                        .is_some_and(|a| match a.effect {
                            Effect::Spawn { kind, .. } => leads_to(kind),
                            Effect::Transform { into, .. } => leads_to(into),
                            Effect::Script(_) => true,
                            _ => false,
                        })
            })
            .collect();
        let scripts_behind_types = token_types
            .iter()
            .zip(&leads)
            .any(|(t, &leads)| leads && t.script.is_none());
        Catalog {
            rules,
            areas,
            token_types,
            abilities,
            cards,
            decks,
            scripts,
            packs,
            kinds,
            aura_reach,
            brings_scripts,
            scripts_behind_types,
            stamp: Stamp::next(),
        }
    }

    /// Whether playing `card` may run a script hook on a board that holds no token with a
    /// script (see the field `brings_scripts`): a scripted ability, or a token with a
    /// script the move may bring. When not, and the board holds none, the move runs no
    /// hook.
    #[must_use]
    pub(crate) fn may_bring_scripts(&self, card: CardId) -> bool {
        self.scripts_behind_types
            || self
                .brings_scripts
                .get(card.index())
                .copied()
                .unwrap_or(true)
    }

    /// The cells the aura of token type `kind` reaches from each cell of the board (see
    /// the field); empty when it has no aura.
    #[must_use]
    pub(crate) fn aura_reach(&self, kind: TokenTypeId) -> &[[u64; WORDS]] {
        self.aura_reach.get(kind.index()).map_or(&[], Vec::as_slice)
    }

    /// This catalog's identity for caches: unique to the [`Catalog::new`] that made it,
    /// shared by its clones (see [`Catalog`]'s equality, which ignores it).
    #[must_use]
    pub fn stamp(&self) -> u64 {
        self.stamp.0
    }

    /// The definitions back, to change and make a new catalog of.
    #[must_use]
    pub fn into_parts(self) -> CatalogParts {
        CatalogParts {
            rules: self.rules,
            areas: self.areas,
            token_types: self.token_types,
            abilities: self.abilities,
            cards: self.cards,
            decks: self.decks,
            scripts: self.scripts,
            packs: self.packs,
        }
    }

    /// This catalog with its definitions changed by `change`, indexed again.
    #[must_use]
    pub fn edited(self, change: impl FnOnce(&mut CatalogParts)) -> Catalog {
        let mut parts = self.into_parts();
        change(&mut parts);
        Catalog::new(parts)
    }

    /// The rule numbers.
    #[must_use]
    pub fn rules(&self) -> &Ruleset {
        &self.rules
    }

    /// Named areas, in id order.
    #[must_use]
    pub fn areas(&self) -> &[AreaDef] {
        &self.areas
    }

    /// Token types, in id order.
    #[must_use]
    pub fn token_types(&self) -> &[TokenTypeDef] {
        &self.token_types
    }

    /// Abilities, in id order.
    #[must_use]
    pub fn abilities(&self) -> &[AbilityDef] {
        &self.abilities
    }

    /// Cards, in id order.
    #[must_use]
    pub fn cards(&self) -> &[CardDef] {
        &self.cards
    }

    /// Ready decks, in id order.
    #[must_use]
    pub fn decks(&self) -> &[DeckDef] {
        &self.decks
    }

    /// Script files, in id order.
    #[must_use]
    pub fn scripts(&self) -> &[ScriptDef] {
        &self.scripts
    }

    /// The loaded packs, in load order.
    #[must_use]
    pub fn packs(&self) -> &[PackInfo] {
        &self.packs
    }

    /// The packed facts about a token type.
    #[inline]
    #[must_use]
    pub fn kind(&self, id: TokenTypeId) -> KindInfo {
        self.kinds[id.index()]
    }

    /// The card called `name` (`push_row` or `base:push_row`).
    pub fn card_named(&self, name: &str) -> Result<CardId, LookupError> {
        lookup("card", name, self.cards.iter().map(|c| &c.meta)).map(CardId::from_index)
    }

    /// The token type called `name`.
    pub fn token_type_named(&self, name: &str) -> Result<TokenTypeId, LookupError> {
        lookup("token type", name, self.token_types.iter().map(|t| &t.meta))
            .map(TokenTypeId::from_index)
    }

    /// The ability called `name`.
    pub fn ability_named(&self, name: &str) -> Result<AbilityId, LookupError> {
        lookup("ability", name, self.abilities.iter().map(|a| &a.meta)).map(AbilityId::from_index)
    }

    /// The deck called `name`.
    pub fn deck_named(&self, name: &str) -> Result<DeckId, LookupError> {
        lookup("deck", name, self.decks.iter().map(|d| &d.meta)).map(DeckId::from_index)
    }

    /// The area called `name`.
    pub fn area_named(&self, name: &str) -> Result<AreaId, LookupError> {
        lookup("area", name, self.areas.iter().map(|a| &a.meta)).map(AreaId::from_index)
    }

    /// A card's definition.
    #[must_use]
    pub fn card(&self, id: CardId) -> &CardDef {
        &self.cards[id.index()]
    }

    /// A token type's definition.
    #[must_use]
    pub fn token_type(&self, id: TokenTypeId) -> &TokenTypeDef {
        &self.token_types[id.index()]
    }

    /// An ability's definition.
    #[must_use]
    pub fn ability(&self, id: AbilityId) -> &AbilityDef {
        &self.abilities[id.index()]
    }

    /// A deck's definition.
    #[must_use]
    pub fn deck(&self, id: DeckId) -> &DeckDef {
        &self.decks[id.index()]
    }

    /// Every card id, in catalog order.
    pub fn card_ids(&self) -> impl Iterator<Item = CardId> + '_ {
        (0..self.cards.len()).map(CardId::from_index)
    }

    /// Whether any token type has an aura.
    #[must_use]
    pub fn any_aura(&self) -> bool {
        if self.kinds.len() == self.token_types.len() {
            self.kinds.iter().any(|k| k.aura)
        } else {
            self.token_types.iter().any(|t| t.aura.is_some())
        }
    }

    /// Whether any ability or token type runs a script (then moves snapshot the state to
    /// stay atomic). A pack's `ai.lua` alone does not count: the engine never runs it.
    #[must_use]
    pub fn has_scripts(&self) -> bool {
        self.abilities
            .iter()
            .any(|a| matches!(a.effect, Effect::Script(_)))
            || self.token_types.iter().any(|t| t.script.is_some())
    }
}

/// For each cell of a `width` × `height` board (storage order), the cells `area` covers
/// from it on the board, as a bitset of storage indices.
fn reach(area: &Area, width: u8, height: u8) -> Vec<[u64; WORDS]> {
    let board = Bounds::clamped(width, height);
    (0..board.len())
        .map(|from| {
            let mut bits = [0u64; WORDS];
            for target in area.cells_from(board.cell(from)) {
                if let Some(j) = board.index(target) {
                    bits[j / 64] |= 1 << (j % 64);
                }
            }
            bits
        })
        .collect()
}
