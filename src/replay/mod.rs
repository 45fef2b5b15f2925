//! Saved games: one format for every saved game — a game of the client's, a LAN game
//! its host saves after every move — as a small JSON file (its packs with versions and
//! content hashes, both decks, the seed, every move with the events it made, and the
//! result; a LAN host's save also says who sits where). A saved game is played again
//! into a [`Timeline`] ([`timeline`]), and a re-run says where a game first plays
//! differently under the content loaded now ([`rerun`], [`play_again`]): `tokensmith
//! replay`, the client's replays, the sandbox's "Replay with new rules" and the LAN
//! host's resume all go through them.
//!
//! A replay file is read as hostile input: its size, move count, deck shape and event
//! text are bounded before anything is played, and every move goes through the engine.
//!
//! Must not: play a move the engine would refuse, or trust a stack index or card key
//! from the file without checking it against the content.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::content::PackFolder;
use crate::fsutil::{ReadError, shown};
use crate::rules::{
    CardId, Catalog, Cell, DeckError, Engine, Event, GameState, LookupError, Move, MoveError, Play,
    Seat, describe,
};
use crate::timeline::{Action, Timeline};

/// The `format` field of every replay file.
pub const FORMAT: &str = "tokensmith-replay";
/// The newest replay format this build reads. Version 2 added [`Replay::table`]; a
/// replay without it is written as version 1, which every earlier build reads.
pub const VERSION: u32 = 2;
/// The longest player name or AI level kept in a LAN host's save.
pub const MAX_NAME: usize = 64;
/// The largest replay file read.
pub const MAX_FILE: u64 = 4 * 1024 * 1024;
/// The most moves a replay may hold.
pub const MAX_MOVES: usize = 10_000;
/// The most event lines kept for one move.
pub const MAX_EVENTS: usize = 2_000;
/// The longest event line kept.
pub const MAX_LINE: usize = 400;

/// A saved game.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Replay {
    /// Always [`FORMAT`].
    pub format: String,
    /// The format version ([`VERSION`]).
    pub version: u32,
    /// The packs the game was played with, in load order.
    pub packs: Vec<PackStamp>,
    /// Each seat's deck at the start: stacks of card keys (`pack:id`), top first.
    pub decks: [Vec<Vec<String>>; 2],
    /// The game's seed.
    pub seed: u64,
    /// The moves, in order.
    pub moves: Vec<MoveRecord>,
    /// The seat that conceded, if one did.
    #[serde(default)]
    pub conceded: Option<u8>,
    /// How the game ended (or stood when saved).
    pub result: ResultRecord,
    /// Who sits at each seat: only in a LAN game's save, which its host takes up again
    /// after a restart (format version 2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub table: Option<[SeatRecord; 2]>,
}

impl Replay {
    /// The replay with `table` as its seats (a LAN host's save).
    #[must_use]
    pub fn with_table(mut self, table: [SeatRecord; 2]) -> Replay {
        self.table = Some(table);
        self.version = VERSION;
        self
    }
}

/// Who sits at a seat of a LAN game (see [`Replay::table`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
pub enum SeatRecord {
    /// The host's AI.
    Ai {
        /// Its level's name (`greedy`).
        level: String,
    },
    /// A player.
    Player {
        /// The name they gave.
        name: String,
        /// The session token that gives them their seat back, in hex (32 digits).
        token: String,
    },
}

/// A pack a game was played with.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PackStamp {
    /// Its id.
    pub id: String,
    /// Its version.
    pub version: String,
    /// Its content hash (docs/packs.md), when its folder was found.
    #[serde(default)]
    pub hash: Option<String>,
}

/// One move of a saved game.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MoveRecord {
    /// The seat moving, 1 or 2.
    pub seat: u8,
    /// The stack played from (0-based); none for a card played from outside the stacks
    /// (the sandbox).
    #[serde(default)]
    pub stack: Option<u8>,
    /// The card played (`pack:id`).
    pub card: String,
    /// The cell `[x, y]`.
    pub at: [i32; 2],
    /// The move's events, in words.
    #[serde(default)]
    pub events: Vec<String>,
}

/// Scores and the result.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResultRecord {
    /// Seat 1's and seat 2's scores.
    pub scores: [i64; 2],
    /// Whether the game was over.
    pub over: bool,
    /// The winner, 1 or 2, or none (a draw, or not over).
    #[serde(default)]
    pub winner: Option<u8>,
}

impl ResultRecord {
    /// How `state` stands, `conceded` by that seat if one did (the other seat then won).
    #[must_use]
    pub fn of(state: &GameState, conceded: Option<Seat>) -> ResultRecord {
        let winner = match conceded {
            Some(seat) => Some(seat.other().number()),
            None => state.outcome().and_then(|o| o.winner).map(Seat::number),
        };
        ResultRecord {
            scores: [state.score(Seat::One), state.score(Seat::Two)],
            over: state.is_over() || conceded.is_some(),
            winner,
        }
    }

    /// The result in words: `seat 1 34, seat 2 29, seat 1 won`.
    #[must_use]
    pub fn text(&self) -> String {
        let outcome = match (self.over, self.winner) {
            (_, Some(w)) => format!("seat {w} won"),
            (true, None) => "a draw".to_string(),
            (false, None) => "not over".to_string(),
        };
        format!(
            "seat 1 {}, seat 2 {}, {outcome}",
            self.scores[0], self.scores[1]
        )
    }
}

/// The packs of `catalog` with their versions and content hashes, each found in
/// `folders` as the loader finds them (the first pack with its id).
#[must_use]
pub fn stamps(catalog: &Catalog, folders: &[PackFolder]) -> Vec<PackStamp> {
    let mut diags = crate::content::Diagnostics::default();
    let found = crate::content::discover::discover(folders, &mut diags);
    catalog
        .packs()
        .iter()
        .map(|p| PackStamp {
            id: p.id.clone(),
            version: p.version.clone(),
            hash: found
                .packs
                .iter()
                .find(|f| f.id() == p.id)
                .and_then(|f| crate::packs::hash(&f.dir).ok()),
        })
        .collect()
}

/// The replay of `timeline`'s applied moves, dealt from its start with `seed`.
#[must_use]
pub fn record(
    timeline: &Timeline,
    catalog: &Catalog,
    seed: u64,
    packs: Vec<PackStamp>,
    conceded: Option<Seat>,
) -> Replay {
    let start = timeline.start();
    let decks = Seat::BOTH.map(|seat| {
        start
            .seat(seat)
            .stacks()
            .iter()
            .map(|s| s.cards().map(|c| catalog.card(c).meta.key()).collect())
            .collect()
    });
    // A game's steps are moves; edits by hand (the sandbox's) are not part of a game.
    let moves = timeline
        .steps()
        .iter()
        .filter_map(|step| {
            let (mv, card) = step.played()?;
            Some(MoveRecord {
                seat: mv.seat.number(),
                stack: match mv.play {
                    Play::Stack(s) => Some(s),
                    Play::Card(_) => None,
                },
                card: step.catalog.card(card).meta.key(),
                at: [mv.cell.x, mv.cell.y],
                events: event_lines(&step.catalog, &step.events),
            })
        })
        .collect();
    Replay {
        format: FORMAT.to_string(),
        version: 1,
        packs,
        decks,
        seed,
        moves,
        conceded: conceded.map(Seat::number),
        result: ResultRecord::of(timeline.state(), conceded),
        table: None,
    }
}

/// A move's events in words, bounded as a replay file keeps them.
fn event_lines(catalog: &Catalog, events: &[Event]) -> Vec<String> {
    events
        .iter()
        .take(MAX_EVENTS)
        .map(|e| cut(describe::event(catalog, e)))
        .collect()
}

fn cut(mut line: String) -> String {
    if line.len() > MAX_LINE {
        let mut end = MAX_LINE;
        while !line.is_char_boundary(end) {
            end -= 1;
        }
        line.truncate(end);
        line.push('…');
    }
    line
}

/// The replay as its file's text (pretty JSON).
#[must_use]
pub fn to_text(replay: &Replay) -> String {
    serde_json::to_string_pretty(replay).unwrap_or_default() + "\n"
}

/// Why a replay could not be read, saved or played.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// The file could not be read.
    #[error("{}: error: cannot read the replay: {source}", shown(path))]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: ReadError,
    },
    /// The text is not a replay, or one this build cannot read.
    #[error("{}{line}:{column}: error: {message}", path.as_deref().map(|p| shown(p) + ":").unwrap_or_default())]
    Format {
        /// The file, when the text came from one.
        path: Option<PathBuf>,
        /// The line (1-based).
        line: usize,
        /// The column (1-based).
        column: usize,
        /// What is wrong.
        message: String,
    },
    /// A card of the replay is not in the content.
    #[error("{place}: {source}")]
    Card {
        /// Where the replay names it (`seat 1's deck`, `move 3`).
        place: String,
        /// The lookup's error.
        #[source]
        source: LookupError,
    },
    /// The replay's decks cannot be dealt with the content.
    #[error("the replay's decks cannot be dealt with the content now loaded: {0}")]
    Deal(#[source] DeckError),
    /// The replay could not be written.
    #[error("cannot write in {}: {source}", shown(dir))]
    Save {
        /// The folder.
        dir: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

/// Read a replay file: bounded, parsed, and checked for shape (not yet against content).
pub fn read(path: &Path) -> Result<Replay, ReplayError> {
    let text = crate::fsutil::read_text(path, MAX_FILE, "a replay").map_err(|source| {
        ReplayError::Read {
            path: path.to_path_buf(),
            source,
        }
    })?;
    parse(&text).map_err(|e| match e {
        ReplayError::Format {
            path: None,
            line,
            column,
            message,
        } => ReplayError::Format {
            path: Some(path.to_path_buf()),
            line,
            column,
            message,
        },
        other => other,
    })
}

/// Parse a replay's text.
pub fn parse(text: &str) -> Result<Replay, ReplayError> {
    let at = |line, column, message| ReplayError::Format {
        path: None,
        line,
        column,
        message,
    };
    let replay: Replay =
        serde_json::from_str(text).map_err(|e| at(e.line(), e.column(), plain_json(&e)))?;
    check_shape(&replay).map_err(|e| at(1, 1, e))?;
    Ok(replay)
}

/// serde_json's message without its own " at line L column C" (the location is given
/// in front).
fn plain_json(e: &serde_json::Error) -> String {
    let text = e.to_string();
    match text.rfind(" at line ") {
        Some(at) => text[..at].to_string(),
        None => text,
    }
}

fn check_shape(r: &Replay) -> Result<(), String> {
    if r.format != FORMAT {
        return Err(format!(
            "this is not a replay: `format` is {:?}, not {FORMAT:?}",
            crate::rules::echo(&r.format)
        ));
    }
    if r.version > VERSION {
        return Err(format!(
            "this replay has format version {}; this Tokensmith reads up to {VERSION}: update Tokensmith",
            r.version
        ));
    }
    if r.moves.len() > MAX_MOVES {
        return Err(format!(
            "the replay has {} moves; at most {MAX_MOVES} are read",
            r.moves.len()
        ));
    }
    for (n, m) in r.moves.iter().enumerate() {
        if Seat::from_number(i64::from(m.seat)).is_none() {
            return Err(format!(
                "move {}: seat must be 1 or 2, found {}",
                n + 1,
                m.seat
            ));
        }
        if m.events.len() > MAX_EVENTS || m.events.iter().any(|e| e.len() > MAX_LINE + 4) {
            return Err(format!(
                "move {}: more or longer event lines than a replay holds ({MAX_EVENTS} of {MAX_LINE} bytes)",
                n + 1
            ));
        }
    }
    if let Some(table) = &r.table {
        if r.version < 2 {
            return Err("`table` needs format version 2".to_string());
        }
        for (n, seat) in table.iter().enumerate() {
            let (name, token) = match seat {
                SeatRecord::Ai { level } => (level, None),
                SeatRecord::Player { name, token } => (name, Some(token)),
            };
            if name.len() > MAX_NAME {
                return Err(format!(
                    "table: seat {}'s name is longer than {MAX_NAME} bytes",
                    n + 1
                ));
            }
            if token.is_some_and(|t| session_token(t).is_none()) {
                return Err(format!(
                    "table: seat {}'s token is not 32 hex digits",
                    n + 1
                ));
            }
        }
    }
    Ok(())
}

/// A session token from its hex form (32 digits), as a LAN host's save keeps it.
#[must_use]
pub fn session_token(text: &str) -> Option<[u8; 16]> {
    let mut out = [0u8; 16];
    hex::decode_to_slice(text, &mut out).ok()?;
    Some(out)
}

/// Write `replay` to a new file in `dir` (made if missing), named after `stem`; never
/// over another file. Returns the path written.
pub fn save(dir: &Path, stem: &str, replay: &Replay) -> Result<PathBuf, ReplayError> {
    let failed = |source| ReplayError::Save {
        dir: dir.to_path_buf(),
        source,
    };
    std::fs::create_dir_all(dir).map_err(failed)?;
    crate::fsutil::write_new_numbered(dir, stem, "json", to_text(replay).as_bytes()).map_err(failed)
}

/// A replay's game rebuilt under some content: the start and its moves, ready to play.
#[derive(Clone, Debug)]
pub struct Resolved {
    /// Each seat's deck as the content's cards.
    pub decks: [Vec<Vec<CardId>>; 2],
    /// The moves as the content's moves, with the card each plays.
    pub moves: Vec<(Move, CardId)>,
}

/// Map `replay`'s card keys to `catalog`'s cards. Fails naming the first card the
/// content no longer has.
pub fn resolve(replay: &Replay, catalog: &Catalog) -> Result<Resolved, ReplayError> {
    let card = |key: &str, place: &str| {
        catalog.card_named(key).map_err(|source| ReplayError::Card {
            place: place.to_string(),
            source,
        })
    };
    let mut decks: [Vec<Vec<CardId>>; 2] = [Vec::new(), Vec::new()];
    for (i, deck) in replay.decks.iter().enumerate() {
        for stack in deck {
            let mut cards = Vec::new();
            for key in stack {
                cards.push(card(key, &format!("seat {}'s deck", i + 1))?);
            }
            decks[i].push(cards);
        }
    }
    let mut moves = Vec::new();
    for (n, m) in replay.moves.iter().enumerate() {
        let seat = Seat::from_number(i64::from(m.seat)).ok_or_else(|| ReplayError::Format {
            path: None,
            line: 1,
            column: 1,
            message: format!("move {}: seat must be 1 or 2", n + 1),
        })?;
        let id = card(&m.card, &format!("move {}", n + 1))?;
        let play = match m.stack {
            Some(s) => Play::Stack(s),
            None => Play::Card(id),
        };
        moves.push((
            Move {
                seat,
                play,
                cell: Cell::new(m.at[0], m.at[1]),
            },
            id,
        ));
    }
    Ok(Resolved { decks, moves })
}

/// What playing a replay again under the content now loaded gave.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Rerun {
    /// Moves played (up to the end, or to the first refused).
    pub moves: usize,
    /// The first move whose events differ: its number (1-based), what it was and what it
    /// did then and now.
    pub first_difference: Option<Difference>,
    /// The first move the content refuses now (1-based) and why; the re-run stops there.
    pub refused: Option<(usize, String)>,
    /// How the game ended when it was played.
    pub recorded: ResultRecord,
    /// How it ends now.
    pub now: ResultRecord,
    /// Packs whose version or content differ from the recorded ones, in words.
    pub packs: Vec<String>,
}

impl Rerun {
    /// Whether every move did exactly what it did and the result is the same.
    #[must_use]
    pub fn same(&self) -> bool {
        self.first_difference.is_none() && self.refused.is_none() && self.recorded == self.now
    }
}

/// One move that plays differently now.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Difference {
    /// Its number (1-based).
    pub number: usize,
    /// The move in words: `seat 1 plays base:push_row at (2, 3)`.
    pub summary: String,
    /// Its events as recorded.
    pub before: Vec<String>,
    /// Its events now.
    pub after: Vec<String>,
}

/// A game played again: its timeline up to the first step refused, and that step.
#[derive(Clone, Debug)]
pub struct PlayedAgain {
    /// The steps that played, from the start.
    pub timeline: Timeline,
    /// The first step refused (1-based) and why; the steps after it were not tried.
    pub refused: Option<(usize, String)>,
}

/// Play `actions` again from `start` (dealt with the `opening` events) with `engine`,
/// whose content is `catalog`, stopping at the first one refused. A move of a card
/// from outside the stacks may be any seat's (the sandbox's); a move from a stack
/// keeps the turn order.
#[must_use]
pub fn play_again(
    engine: &Engine<'_>,
    catalog: &Arc<Catalog>,
    start: GameState,
    opening: Vec<Event>,
    actions: impl IntoIterator<Item = Action>,
) -> PlayedAgain {
    let mut timeline = Timeline::new(start, opening, Arc::clone(catalog));
    let mut refused = None;
    for (n, action) in actions.into_iter().enumerate() {
        let done = match action {
            Action::Move { mv, .. } => timeline
                .play_any_seat(engine, catalog, mv)
                .map(|_| ())
                .map_err(|e: MoveError| e.to_string()),
            Action::Edit(edit) => timeline
                .edit(catalog, edit)
                .map(|_| ())
                .map_err(|e| e.to_string()),
        };
        if let Err(why) = done {
            refused = Some((n + 1, why));
            break;
        }
    }
    PlayedAgain { timeline, refused }
}

/// `replay` dealt and played with `engine` (whose content is `catalog`) into a
/// [`Timeline`], up to the first move the content refuses. Fails when the content lacks
/// one of its cards or cannot deal its decks.
pub fn timeline(
    replay: &Replay,
    engine: &Engine<'_>,
    catalog: &Arc<Catalog>,
) -> Result<PlayedAgain, ReplayError> {
    let resolved = resolve(replay, catalog)?;
    let mut opening = Vec::new();
    let start = engine
        .new_game(
            [&resolved.decks[0], &resolved.decks[1]],
            replay.seed,
            &mut opening,
        )
        .map_err(ReplayError::Deal)?;
    let moves = resolved
        .moves
        .into_iter()
        .map(|(mv, card)| Action::Move { mv, card });
    Ok(play_again(engine, catalog, start, opening, moves))
}

/// The first move of `played` whose events, in words, are not `recorded`'s for the
/// same step (a step `recorded` has no words for is an edit by hand, not compared).
#[must_use]
pub fn first_difference<'r>(
    played: &Timeline,
    recorded: impl IntoIterator<Item = Option<&'r [String]>>,
) -> Option<Difference> {
    for (n, (step, then)) in played.steps().iter().zip(recorded).enumerate() {
        let (Some((mv, card)), Some(then)) = (step.played(), then) else {
            continue;
        };
        let now = event_lines(&step.catalog, &step.events);
        if now != then {
            return Some(Difference {
                number: n + 1,
                summary: format!(
                    "seat {} plays {} at {}",
                    mv.seat,
                    step.catalog.card(card).meta.key(),
                    mv.cell
                ),
                before: then.to_vec(),
                after: now,
            });
        }
    }
    None
}

/// The events of each step of `timeline` in words, as a replay keeps them; none for an
/// edit by hand.
#[must_use]
pub fn step_lines(timeline: &Timeline) -> Vec<Option<Vec<String>>> {
    timeline
        .steps()
        .iter()
        .map(|s| s.played().map(|_| event_lines(&s.catalog, &s.events)))
        .collect()
}

/// Play `replay` again with `engine` (whose content's packs are `now`), move by move,
/// and compare each move's events with the recorded ones.
pub fn rerun(
    replay: &Replay,
    engine: &Engine<'_>,
    catalog: &Arc<Catalog>,
    now: &[PackStamp],
) -> Result<Rerun, ReplayError> {
    let played = timeline(replay, engine, catalog)?;
    let recorded = replay.moves.iter().map(|m| Some(m.events.as_slice()));
    let first_difference = first_difference(&played.timeline, recorded);
    let moves = played.timeline.steps().len();
    let state = played.timeline.state();
    let conceded = replay
        .conceded
        .and_then(|s| Seat::from_number(i64::from(s)))
        .filter(|_| played.refused.is_none() && moves == replay.moves.len());
    Ok(Rerun {
        moves,
        first_difference,
        refused: played.refused,
        recorded: replay.result.clone(),
        now: ResultRecord::of(state, conceded),
        packs: pack_changes(&replay.packs, now),
    })
}

/// The packs that differ between the recording and now, in words.
fn pack_changes(then: &[PackStamp], now: &[PackStamp]) -> Vec<String> {
    let mut out = Vec::new();
    for old in then {
        match now.iter().find(|p| p.id == old.id) {
            None => out.push(format!("{} {} is not loaded now", old.id, old.version)),
            Some(new) if new.version != old.version => {
                out.push(format!(
                    "{}: version {} then, {} now",
                    old.id, old.version, new.version
                ));
            }
            Some(new) if old.hash.is_some() && new.hash.is_some() && new.hash != old.hash => {
                out.push(format!(
                    "{} {}: same version, other content (hash differs)",
                    old.id, old.version
                ));
            }
            Some(_) => {}
        }
    }
    for new in now {
        if !then.iter().any(|p| p.id == new.id) {
            out.push(format!(
                "{} {} is loaded now but was not then",
                new.id, new.version
            ));
        }
    }
    out
}

/// The re-run in words, as `tokensmith replay` prints it.
#[must_use]
pub fn report_text(replay: &Replay, rerun: &Rerun) -> String {
    let mut out = String::new();
    let packs: Vec<String> = replay
        .packs
        .iter()
        .map(|p| format!("{} {}", p.id, p.version))
        .collect();
    let _ = writeln!(
        out,
        "replay of {} moves, played with {}",
        replay.moves.len(),
        packs.join(", ")
    );
    for p in &rerun.packs {
        let _ = writeln!(out, "  pack changed: {p}");
    }
    match &rerun.first_difference {
        None if rerun.refused.is_none() => {
            let _ = writeln!(out, "every move does exactly what it did");
        }
        None => {}
        Some(d) => {
            let _ = writeln!(
                out,
                "move {} ({}) plays differently now:",
                d.number, d.summary
            );
            let _ = writeln!(out, "  then:");
            for e in &d.before {
                let _ = writeln!(out, "    {e}");
            }
            let _ = writeln!(out, "  now:");
            for e in &d.after {
                let _ = writeln!(out, "    {e}");
            }
        }
    }
    if let Some((n, why)) = &rerun.refused {
        let _ = writeln!(
            out,
            "move {n} is refused now: {why} (the re-run stops there)"
        );
    }
    let conceded = replay
        .conceded
        .map_or_else(String::new, |s| format!(" (seat {s} conceded)"));
    let _ = writeln!(out, "final: then {}{conceded}", rerun.recorded.text());
    let _ = writeln!(out, "       now  {}", rerun.now.text());
    out
}
