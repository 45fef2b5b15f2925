//! The compiled catalog: the definitions of the loaded packs (see `defs`) addressed by
//! dense integer ids, with the indexes the engine's inner loops read, made once by
//! [`Catalog::new`]: per token type its packed facts and its aura's reach, per card
//! whether it may bring a script onto the board.
//!
//! Each catalog has a `stamp` of its own, by which caches made from one (the AI's ratings,
//! the per-thread script hosts) tell it from another.

use super::defs::{
    AbilityDef, Area, AreaDef, CardDef, DeckDef, Effect, PackInfo, Ruleset, ScriptDef, TokenTypeDef,
};
use super::ids::{AbilityId, Bounds, CardId, DeckId, TokenTypeId, WORDS};

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
