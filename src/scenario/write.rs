//! A played game written out as a scenario file: its packs, start position, moves and
//! the outcome as `expect:` (the sandbox's "Save as scenario"). The file runs with
//! `tokensmith scenario` and passes as long as the content plays the game the same way.

use std::fmt::Write as _;

use super::report::quoted;
use crate::rules::{CardId, Catalog, Engine, GameState, Move, Play, Seat};

/// A game to write as a scenario.
pub struct Recording<'a> {
    /// What the scenario guards, in a few words.
    pub name: &'a str,
    /// Folders to look for packs in besides the content and mods folders (written as
    /// `pack_dirs:`, as given).
    pub pack_dirs: &'a [String],
    /// The seed the start was dealt with.
    pub seed: u64,
    /// The position before the first move.
    pub start: &'a GameState,
    /// The moves, in order. A [`Play::Card`] move is written as the sandbox plays it
    /// (`sandbox: true`: the seat takes the turn, the stacks stay).
    pub moves: &'a [Move],
}

/// Why a game cannot be written as a scenario.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// The decks cannot be dealt again with the content.
    #[error("the start cannot be dealt again: {0}")]
    Deal(#[source] crate::rules::DeckError),
    /// A move plays from a stack that is empty.
    #[error("move {number}: stack {stack} is empty")]
    EmptyStack {
        /// The move (1-based).
        number: usize,
        /// The stack (1-based).
        stack: u16,
    },
    /// The content refuses a move.
    #[error("move {number} is refused by the content now loaded: {source}")]
    Refused {
        /// The move (1-based).
        number: usize,
        /// Why.
        #[source]
        source: crate::rules::MoveError,
    },
}

/// The scenario file for `game`, played under `engine` (whose content's packs it loads).
/// Fails, saying which, when a move is refused: the file would not replay.
pub fn scenario_text(engine: &Engine<'_>, game: &Recording<'_>) -> Result<String, WriteError> {
    let catalog = engine.catalog();
    let mut out = String::new();
    let _ = writeln!(out, "name: {}", quoted(game.name));
    let packs: Vec<&str> = catalog.packs().iter().map(|p| p.id.as_str()).collect();
    let _ = writeln!(out, "packs: [{}]", packs.join(", "));
    if !game.pack_dirs.is_empty() {
        let dirs: Vec<String> = game.pack_dirs.iter().map(|d| quoted(d)).collect();
        let _ = writeln!(out, "pack_dirs: [{}]", dirs.join(", "));
    }
    let decks: [Vec<Vec<CardId>>; 2] = Seat::BOTH.map(|seat| game.start.seat(seat).stack_cards());
    let mut dealt_events = Vec::new();
    let dealt = engine
        .new_game([&decks[0], &decks[1]], game.seed, &mut dealt_events)
        .map_err(WriteError::Deal)?;
    let explicit = !same_position(&dealt, game.start);
    if explicit {
        // The start is not what these decks and seed deal (content changed since, or
        // the position was edited): write it out whole.
        out.push_str("rules: { opening_token: null }\n");
    }
    let _ = writeln!(out, "seed: {}", game.seed);
    out.push_str("decks:\n");
    for seat in Seat::BOTH {
        let stacks: Vec<String> = decks[seat.index()]
            .iter()
            .map(|s| {
                let names: Vec<String> = s.iter().map(|&c| card_name(catalog, c)).collect();
                format!("[{}]", names.join(", "))
            })
            .collect();
        let _ = writeln!(out, "  {seat}: [{}]", stacks.join(", "));
    }
    if explicit {
        write_start(&mut out, catalog, game.start);
    }
    let mut state = game.start.clone();
    if game.moves.is_empty() {
        out.push_str("moves: []\n");
    } else {
        out.push_str("moves:\n");
    }
    for (n, &mv) in game.moves.iter().enumerate() {
        let sandbox = matches!(mv.play, Play::Card(_));
        let refused = |source| WriteError::Refused {
            number: n + 1,
            source,
        };
        let card = engine.card_played(&state, mv).map_err(|e| match mv.play {
            Play::Stack(s) => WriteError::EmptyStack {
                number: n + 1,
                stack: u16::from(s) + 1,
            },
            Play::Card(_) => refused(e),
        })?;
        engine
            .play_any_seat(&mut state, mv, None)
            .map_err(refused)?;
        let _ = writeln!(
            out,
            "  - {{ seat: {}, card: {}, at: [{}, {}]{} }}",
            mv.seat,
            card_name(catalog, card),
            mv.cell.x,
            mv.cell.y,
            if sandbox { ", sandbox: true" } else { "" }
        );
    }
    out.push_str(&super::report::actual(engine, &state, None));
    Ok(out)
}

/// The start position's board, scores and turn, for a start written out whole.
fn write_start(out: &mut String, catalog: &Catalog, start: &GameState) {
    super::report::board_yaml(out, catalog, start, "", false);
    let banked = Seat::BOTH.map(|s| start.seat(s).extra_turns);
    if banked != [0, 0] {
        let _ = writeln!(out, "extra_turns: {{ 1: {}, 2: {} }}", banked[0], banked[1]);
    }
    let _ = writeln!(out, "turn: {}", start.turn());
}

/// Whether two positions agree on everything a scenario can state.
fn same_position(a: &GameState, b: &GameState) -> bool {
    let tokens = |s: &GameState| {
        s.board()
            .tokens()
            .map(|(c, t)| (c, t.seat, t.value, t.kind))
            .collect::<Vec<_>>()
    };
    tokens(a) == tokens(b)
        && a.turn() == b.turn()
        && Seat::BOTH
            .iter()
            .all(|&s| a.score(s) == b.score(s) && a.seat(s).extra_turns == b.seat(s).extra_turns)
}

/// The card's id, or its `pack:id` when the bare id names another card.
fn card_name(catalog: &Catalog, card: CardId) -> String {
    let meta = &catalog.card(card).meta;
    if catalog.card_named(&meta.id).ok() == Some(card) {
        meta.id.clone()
    } else {
        meta.key()
    }
}
