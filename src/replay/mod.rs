//! Saved games: a finished game as a small JSON file (its packs with versions and content
//! hashes, both decks, the seed, every move with the events it made, and the result),
//! and a re-run of that file under the content loaded now, which says where the game
//! first plays differently (`tokensmith replay`, the client's replays).
//!
//! A replay file is read as hostile input: its size, move count, deck shape and event
//! text are bounded before anything is played, and every move goes through the engine.
//!
//! Must not: play a move the engine would refuse, or trust a stack index or card key
//! from the file without checking it against the content.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::content::PackFolder;
use crate::rules::{CardId, Catalog, Cell, Engine, Event, Move, Play, Seat, describe};
use crate::timeline::Timeline;

/// The `format` field of every replay file.
pub const FORMAT: &str = "tokensmith-replay";
/// The replay format this build writes and reads.
pub const VERSION: u32 = 1;
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
    let state = timeline.state();
    let winner = match conceded {
        Some(seat) => Some(seat.other().number()),
        None => state.outcome().and_then(|o| o.winner).map(Seat::number),
    };
    Replay {
        format: FORMAT.to_string(),
        version: VERSION,
        packs,
        decks,
        seed,
        moves,
        conceded: conceded.map(Seat::number),
        result: ResultRecord {
            scores: [state.score(Seat::One), state.score(Seat::Two)],
            over: state.is_over() || conceded.is_some(),
            winner,
        },
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

/// Read a replay file: bounded, parsed, and checked for shape (not yet against content).
pub fn read(path: &Path) -> Result<Replay, String> {
    let text = crate::fsutil::read_text(path, MAX_FILE, "a replay").map_err(|e| {
        format!(
            "{}: error: cannot read the replay: {e}",
            crate::fsutil::shown(path)
        )
    })?;
    parse(&text).map_err(|e| format!("{}:{e}", crate::fsutil::shown(path)))
}

/// Parse a replay's text; errors start with `LINE:COLUMN: `.
pub fn parse(text: &str) -> Result<Replay, String> {
    let replay: Replay = serde_json::from_str(text)
        .map_err(|e| format!("{}:{}: error: {}", e.line(), e.column(), plain_json(&e)))?;
    check_shape(&replay).map_err(|e| format!("1:1: error: {e}"))?;
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
    Ok(())
}

/// Write `replay` to a new file in `dir` (made if missing), named after `stem`; never
/// over another file. Returns the path written.
pub fn save(dir: &Path, stem: &str, replay: &Replay) -> Result<PathBuf, String> {
    std::fs::create_dir_all(dir)
        .map_err(|e| format!("cannot make {}: {e}", crate::fsutil::shown(dir)))?;
    crate::fsutil::write_new_numbered(dir, stem, "json", to_text(replay).as_bytes())
        .map_err(|e| format!("cannot write in {}: {e}", crate::fsutil::shown(dir)))
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
pub fn resolve(replay: &Replay, catalog: &Catalog) -> Result<Resolved, String> {
    let card =
        |key: &str, place: &str| catalog.card_named(key).map_err(|e| format!("{place}: {e}"));
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
        let seat = Seat::from_number(i64::from(m.seat))
            .ok_or_else(|| format!("move {}: seat must be 1 or 2", n + 1))?;
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

/// Play `replay` again with `engine` (whose content's packs are `now`), move by move,
/// and compare each move's events with the recorded ones.
pub fn rerun(replay: &Replay, engine: &Engine<'_>, now: &[PackStamp]) -> Result<Rerun, String> {
    let catalog = engine.catalog();
    let resolved = resolve(replay, catalog)?;
    let mut opening = Vec::new();
    let mut state = engine
        .new_game(
            [&resolved.decks[0], &resolved.decks[1]],
            replay.seed,
            &mut opening,
        )
        .map_err(|e| {
            format!("the replay's decks cannot be dealt with the content now loaded: {e}")
        })?;
    let mut report = Rerun {
        moves: 0,
        first_difference: None,
        refused: None,
        recorded: replay.result.clone(),
        now: replay.result.clone(),
        packs: pack_changes(&replay.packs, now),
    };
    let mut events = Vec::new();
    for (n, ((mv, card), record)) in resolved.moves.iter().zip(&replay.moves).enumerate() {
        events.clear();
        if let Err(e) = engine.play_any_seat(&mut state, *mv, Some(&mut events)) {
            report.refused = Some((n + 1, e.to_string()));
            break;
        }
        report.moves = n + 1;
        let lines = event_lines(catalog, &events);
        if report.first_difference.is_none() && lines != record.events {
            report.first_difference = Some(Difference {
                number: n + 1,
                summary: format!(
                    "seat {} plays {} at {}",
                    mv.seat,
                    catalog.card(*card).meta.key(),
                    mv.cell
                ),
                before: record.events.clone(),
                after: lines,
            });
        }
    }
    let conceded = replay
        .conceded
        .and_then(|s| Seat::from_number(i64::from(s)))
        .filter(|_| report.refused.is_none() && report.moves == replay.moves.len());
    let winner = match conceded {
        Some(seat) => Some(seat.other().number()),
        None => state.outcome().and_then(|o| o.winner).map(Seat::number),
    };
    report.now = ResultRecord {
        scores: [state.score(Seat::One), state.score(Seat::Two)],
        over: state.is_over() || conceded.is_some(),
        winner,
    };
    Ok(report)
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
