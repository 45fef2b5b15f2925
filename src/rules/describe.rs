//! Events and definitions in words, for logs, the command line, the client's browser,
//! reload diffs and "why did this happen". Plain text only: the client lays it out.
//!
//! A script is named only by `ScriptDef::name`.

use super::board::Token;
use super::catalog::Catalog;
use super::defs::{Area, Meta, Relation, TokenTypeDef};
use super::event::{Cause, Event, EventKind, RemoveReason};

fn token(catalog: &Catalog, t: &Token) -> String {
    format!(
        "seat {} {} {}",
        t.seat,
        catalog.token_type(t.kind).meta.id,
        t.value
    )
}

/// What made an event happen, in words.
#[must_use]
pub fn cause(catalog: &Catalog, cause: &Cause) -> String {
    match *cause {
        Cause::Rules => "the rules".to_string(),
        Cause::Card(card) => format!("card {}", catalog.card(card).meta.id),
        Cause::Ability { card, ability } => format!(
            "ability {} of card {}",
            catalog.ability(ability).meta.id,
            catalog.card(card).meta.id
        ),
        Cause::TokenType { kind, cell } => {
            format!("{} at {cell}", catalog.token_type(kind).meta.id)
        }
        Cause::Script { script, line } => match catalog.scripts().get(script.index()) {
            Some(s) => format!("{}:{line}", s.name()),
            None => format!("script #{}:{line}", script.0),
        },
    }
}

/// One event in words, with its cause: `damaged (2, 3) by 1 to 0 [ability weaken of card weaken_row]`.
#[must_use]
pub fn event(catalog: &Catalog, event: &Event) -> String {
    let what = match &event.kind {
        EventKind::Placed { cell, token: t } => format!("placed {} at {cell}", token(catalog, t)),
        EventKind::Damaged {
            cell,
            amount,
            value,
        } => {
            format!("damaged {cell} by {amount} to {value}")
        }
        EventKind::ValueSet { cell, from, to } => format!("set {cell} from {from} to {to}"),
        EventKind::Moved { from, to } => format!("moved {from} to {to}"),
        EventKind::Swapped { a, b } => format!("swapped {a} and {b}"),
        EventKind::Removed {
            cell,
            token: t,
            reason,
        } => {
            let why = match reason {
                RemoveReason::Destroyed => "destroyed",
                RemoveReason::OffBoard => "pushed off the board",
                RemoveReason::Removed => "removed",
            };
            format!("{why} {} at {cell}", token(catalog, t))
        }
        EventKind::Spawned { cell, token: t } => format!("spawned {} at {cell}", token(catalog, t)),
        EventKind::Transformed {
            cell,
            from,
            to,
            value,
        } => format!(
            "turned {cell} from {} into {} {value}",
            catalog.token_type(*from).meta.id,
            catalog.token_type(*to).meta.id
        ),
        EventKind::ExtraTurnBanked { seat } => format!("seat {seat} banked an extra turn"),
        EventKind::BonusBanked { seat, amount } => {
            format!("seat {seat}'s next token gets {amount:+}")
        }
        EventKind::Cycled { seat, stack, card } => format!(
            "seat {seat} sent {} to the bottom of stack {}",
            catalog.card(*card).meta.id,
            stack + 1
        ),
        EventKind::Scored {
            seat,
            income,
            total,
        } => {
            format!("seat {seat} scored {income} (total {total})")
        }
        EventKind::ScoreChanged {
            seat,
            amount,
            total,
        } => {
            format!("seat {seat}'s score changed by {amount:+} (total {total})")
        }
        EventKind::NextTurn { seat, extra: true } => format!("seat {seat} moves again"),
        EventKind::NextTurn { seat, extra: false } => format!("seat {seat} to move"),
        EventKind::GameOver { winner: Some(s) } => format!("game over: seat {s} wins"),
        EventKind::GameOver { winner: None } => "game over: a draw".to_string(),
        EventKind::Log { text } => format!("log: {text}"),
    };
    format!("{what} [{}]", cause(catalog, &event.cause))
}

/// How a description names the other entries it mentions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Naming {
    /// The display name (`Spark`), for players.
    Name,
    /// The id within its pack (`spark`), for a short list.
    Id,
    /// The `pack:id` key (`base:spark`), where entries of several packs are compared.
    Key,
}

impl Naming {
    fn of(self, meta: &Meta) -> String {
        match self {
            Naming::Name => meta.name.clone(),
            Naming::Id => meta.id.clone(),
            Naming::Key => meta.key(),
        }
    }
}

/// Whose tokens an aura reaches, in words: `friendly`, `enemy`, `any`.
#[must_use]
pub fn relation(to: Relation) -> &'static str {
    match to {
        Relation::Friendly => "friendly",
        Relation::Enemy => "enemy",
        Relation::All => "any",
    }
}

/// An area: a named one by its name as `naming` says, one written out in place by its
/// offsets (`[0, 1] [1, 0]`), an empty one as `no area`.
#[must_use]
pub fn area(catalog: &Catalog, area: &Area, naming: Naming) -> String {
    if let Some(def) = area.id.and_then(|id| catalog.areas().get(id.index())) {
        return naming.of(&def.meta);
    }
    if area.offsets().is_empty() {
        return "no area".to_string();
    }
    let offsets: Vec<String> = area.offsets().iter().map(ToString::to_string).collect();
    offsets.join(" ")
}

/// A token type's rules in words, one phrase per field; `None` where the type does not
/// have that rule. The browser, `list token-types` and the reload diff each label them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TokenTypeWords {
    /// `× 2`, when the multiplier is not 1.
    pub income_multiplier: Option<String>,
    /// `+1 income to friendly tokens over ring`.
    pub aura: Option<String>,
    /// `1 damage towards [0, -1] [1, 0]`.
    pub between_turns: Option<String>,
    /// `becomes spark of value 1`.
    pub on_destroyed: Option<String>,
    /// `base/scripts/vortex.lua`.
    pub script: Option<String>,
}

/// The words for token type `def`, naming other entries as `naming` says.
#[must_use]
pub fn token_type(catalog: &Catalog, def: &TokenTypeDef, naming: Naming) -> TokenTypeWords {
    let type_name = |kind: super::ids::TokenTypeId| {
        catalog
            .token_types()
            .get(kind.index())
            .map_or_else(|| format!("#{}", kind.0), |t| naming.of(&t.meta))
    };
    TokenTypeWords {
        income_multiplier: (def.income_multiplier != 1)
            .then(|| format!("× {}", def.income_multiplier)),
        aura: def.aura.as_ref().map(|a| {
            format!(
                "{:+} income to {} tokens over {}",
                a.income,
                relation(a.to),
                area(catalog, &a.area, naming)
            )
        }),
        between_turns: def.between_turns.as_ref().map(|t| {
            let towards: Vec<String> = t.directions.iter().map(ToString::to_string).collect();
            format!("{} damage towards {}", t.amount, towards.join(" "))
        }),
        on_destroyed: def
            .on_destroyed
            .as_ref()
            .map(|b| format!("becomes {} of value {}", type_name(b.kind), b.value)),
        script: def
            .script
            .and_then(|s| catalog.scripts().get(s.index()))
            .map(super::defs::ScriptDef::name),
    }
}
