//! Events in words, for logs, the command line and "why did this happen".

use super::board::Token;
use super::catalog::Catalog;
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
            Some(s) => format!("{}/{}:{line}", s.pack, s.path),
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
