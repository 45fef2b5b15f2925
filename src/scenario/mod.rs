//! Scenarios: rules tests as data files, run through the real engine.
//!
//! A scenario names packs, sets up a position, plays moves and states what must hold.
//! Running one gives [`ScenarioOutcome::Pass`], [`ScenarioOutcome::Fail`] with a readable difference, or a
//! [`ScenarioError`] when the file itself cannot be used (exit code 2 on the command line).
//!
//! Must not: implement any rule itself. It only drives [`Engine`] and compares.

pub mod doc;
mod report;
pub mod write;

use std::path::{Path, PathBuf};

use crate::content::diagnostic::Diagnostic;
use crate::content::yaml::{self, Loc, Located};
use crate::content::{LoadOptions, PackFolder};
use crate::rules::{
    CardId, Catalog, Cell, Engine, Event, GameState, Hooks, Move, NoHooks, Play, Seat, Token,
};
use crate::script::{self, ScriptHost};
pub use doc::ScenarioDoc;
use doc::{TokenDoc, WinnerDoc};

/// Where packs are looked for, besides a scenario's own `pack_dirs`.
#[derive(Clone, Debug)]
pub struct PackPaths {
    /// The content folder.
    pub content: PathBuf,
    /// The mods folder.
    pub mods: PathBuf,
}

/// A scenario that cannot be run: every problem, with locations.
#[derive(Debug, Clone)]
pub struct ScenarioError {
    /// The problems.
    pub diagnostics: Vec<Diagnostic>,
}

/// The result of a scenario that could be run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScenarioOutcome {
    /// Every expectation held.
    Pass,
    /// Some did not: a readable report.
    Fail(String),
}

/// A scenario run: its name and outcome.
#[derive(Debug, Clone)]
pub struct Run {
    /// The scenario's name (its file name when it has none).
    pub name: String,
    /// Pass or fail.
    pub outcome: ScenarioOutcome,
    /// Every event of the game, in order.
    pub events: Vec<Event>,
    /// The content it was played with (to describe the events).
    pub catalog: Catalog,
    /// The game as the moves left it (before a refused last move).
    pub state: GameState,
    /// The `expect:` block the game ended with, to paste over the file's after an
    /// intended rules change; only from [`run_file_actual`] (it plays the income hooks
    /// again, which an ordinary run need not pay for).
    pub actual: Option<String>,
}

/// The JSON Schemas of every file format a designer writes (the packs' and the
/// scenarios'), by file name (`tokensmith schema`).
#[must_use]
pub fn schemas() -> Vec<(&'static str, schemars::Schema)> {
    let mut all = crate::content::schemas();
    all.push(("scenario.schema.json", schemars::schema_for!(ScenarioDoc)));
    all
}

/// Read and run the scenario at `path`.
pub fn run_file(path: &Path, packs: &PackPaths) -> Result<Run, ScenarioError> {
    run_doc(path, &read(path)?, packs, false)
}

/// [`run_file`], also writing out the `expect:` block the game ended with
/// ([`Run::actual`]).
pub fn run_file_actual(path: &Path, packs: &PackPaths) -> Result<Run, ScenarioError> {
    run_doc(path, &read(path)?, packs, true)
}

/// Read and parse the scenario at `path`.
/// Read and parse a scenario file (not yet run).
pub fn read(path: &Path) -> Result<ScenarioDoc, ScenarioError> {
    let err = |loc: Loc, message: String| ScenarioError {
        diagnostics: vec![Diagnostic::error(path, loc, message)],
    };
    let text = crate::fsutil::read_text(path, crate::fsutil::MAX_SCENARIO_FILE, "a scenario")
        .map_err(|e| err(Loc::default(), format!("cannot read the scenario: {e}")))?;
    let node = yaml::parse(&text).map_err(|e| err(e.loc, format!("YAML syntax: {}", e.message)))?;
    yaml::from_node(&node).map_err(|e| err(e.loc.unwrap_or(node.loc), e.message))
}

/// Run a parsed scenario; `path` locates its messages and its `pack_dirs`.
pub fn run(path: &Path, doc: &ScenarioDoc, packs: &PackPaths) -> Result<Run, ScenarioError> {
    run_doc(path, doc, packs, false)
}

/// Run a parsed scenario, with the `expect:` block it really ended with when `actual`
/// (see [`run_file_actual`]).
pub fn run_doc(
    path: &Path,
    doc: &ScenarioDoc,
    packs: &PackPaths,
    with_actual: bool,
) -> Result<Run, ScenarioError> {
    let catalog = load(path, doc, packs)?;
    let mut setup = Setup {
        path,
        catalog: &catalog,
        problems: Vec::new(),
        every: Some(every_pack(path, doc, packs)),
        others: None,
    };
    let name = doc.name.clone().unwrap_or_else(|| {
        path.file_stem()
            .map_or_else(String::new, |s| s.to_string_lossy().into_owned())
    });
    let host = if catalog.has_scripts() {
        match ScriptHost::new(&catalog) {
            Ok(host) => Some(host),
            Err(diagnostics) => return Err(ScenarioError { diagnostics }),
        }
    } else {
        None
    };
    let hooks: &dyn Hooks = match &host {
        Some(h) => h,
        None => &NoHooks,
    };
    let engine = Engine::new(&catalog, hooks);
    let mut events = Vec::new();
    let state = setup.start(doc, &engine, &mut events);
    let moves = setup.moves(doc);
    if !setup.problems.is_empty() {
        return Err(ScenarioError {
            diagnostics: setup.problems,
        });
    }
    let (Some(mut state), Some(moves)) = (state, moves) else {
        return Err(ScenarioError {
            diagnostics: setup.problems,
        });
    };
    // Where the rules' opening token went, to explain a move refused there.
    let opening = events.iter().find_map(|e| match (&e.kind, &e.cause) {
        (crate::rules::EventKind::Placed { cell, .. }, crate::rules::Cause::Rules) => Some(*cell),
        _ => None,
    });
    let mut failures = Vec::new();
    let last = moves.len().checked_sub(1);
    let mut refusal: Option<String> = None;
    for (i, (seat, card, cell, loc, sandbox)) in moves.into_iter().enumerate() {
        let seat = seat.unwrap_or(state.turn());
        let before = state.clone();
        let result = if sandbox {
            engine
                .play_any_seat(
                    &mut state,
                    Move {
                        seat,
                        play: Play::Card(card),
                        cell,
                    },
                    Some(&mut events),
                )
                .map_err(|e| e.to_string())
        } else {
            match state.seat(seat).stack_of(card) {
                Some(stack) => engine
                    .play(
                        &mut state,
                        Move {
                            seat,
                            play: Play::Stack(stack),
                            cell,
                        },
                        &mut events,
                    )
                    .map_err(|e| e.to_string()),
                // Report what the engine would refuse first; the hand is checked last.
                None => Err(engine
                    .check(
                        &state,
                        Move {
                            seat,
                            play: Play::Card(card),
                            cell,
                        },
                    )
                    .err()
                    .map_or_else(
                        || {
                            format!(
                                "card '{}' is not in seat {seat}'s hand",
                                catalog.card(card).meta.id
                            )
                        },
                        |e| e.to_string(),
                    )),
            }
        };
        if let Err(mut message) = result {
            if Some(cell) == opening
                && message == crate::rules::MoveError::NotEmpty(cell).to_string()
            {
                message.push_str(
                    ": the rules' opening token was put there before the first move (`opening_token` in the rules); \
                     play another cell, or start from an empty board with `rules: { opening_token: null }` in the scenario",
                );
            }
            if state != before {
                failures.push(format!(
                    "move {} was refused ({message}) but the state changed: a refused move must change nothing",
                    i + 1
                ));
            }
            if Some(i) == last && doc.expect.error.is_some() {
                refusal = Some(message);
            } else {
                failures.push(format!(
                    "line {}: move {} (seat {seat}, {} at {cell}) was refused: {message}",
                    loc.line,
                    i + 1,
                    catalog.card(card).meta.id
                ));
                break;
            }
        }
    }
    report::check(
        &engine,
        &state,
        doc,
        refusal.as_deref(),
        &mut setup,
        &mut failures,
    );
    if !setup.problems.is_empty() {
        return Err(ScenarioError {
            diagnostics: setup.problems,
        });
    }
    let actual = with_actual.then(|| report::actual(&engine, &state, refusal.as_deref()));
    let outcome = if failures.is_empty() {
        ScenarioOutcome::Pass
    } else {
        ScenarioOutcome::Fail(failures.join("\n"))
    };
    Ok(Run {
        name,
        outcome,
        events,
        catalog,
        state,
        actual,
    })
}

/// Every pack the scenario could name: its folders, with no `only`.
fn every_pack(path: &Path, doc: &ScenarioDoc, packs: &PackPaths) -> LoadOptions {
    let base = path.parent().unwrap_or(Path::new("."));
    let mut options = LoadOptions::standard(&packs.content, &packs.mods);
    for dir in &doc.pack_dirs {
        options.folders.push(PackFolder {
            path: base.join(&dir.value),
            required: true,
        });
    }
    options
}

fn load(path: &Path, doc: &ScenarioDoc, packs: &PackPaths) -> Result<Catalog, ScenarioError> {
    let mut options = every_pack(path, doc, packs);
    options.only = Some(match &doc.packs {
        Some(ids) => ids.iter().map(|i| i.value.clone()).collect(),
        None => vec!["base".to_string()],
    });
    options.rules_patch = Some((path.to_path_buf(), doc.rules.clone().unwrap_or_default()));
    let loaded = script::load(&options);
    match loaded.catalog {
        Some(catalog) => Ok(catalog),
        None => Err(ScenarioError {
            diagnostics: loaded.diagnostics,
        }),
    }
}

/// Turns the scenario's names and numbers into engine values, collecting problems.
pub(crate) struct Setup<'a> {
    path: &'a Path,
    catalog: &'a Catalog,
    problems: Vec<Diagnostic>,
    /// How to load every pack the scenario's folders hold, to say which pack has a
    /// name the loaded ones lack (loaded on the first such name, once).
    every: Option<LoadOptions>,
    others: Option<Option<Catalog>>,
}

/// A move to play: its seat (or the seat to move), card, cell, line, and whether it is
/// played as the sandbox plays.
type PlannedMove = (Option<Seat>, CardId, Cell, Loc, bool);

impl Setup<'_> {
    fn problem(&mut self, loc: Loc, message: impl Into<String>) {
        self.problems
            .push(Diagnostic::error(self.path, loc, message));
    }

    fn seat(&mut self, n: &Located<i64>) -> Option<Seat> {
        let seat = Seat::from_number(n.value);
        if seat.is_none() {
            self.problem(n.loc, format!("seat must be 1 or 2, found {}", n.value));
        }
        seat
    }

    fn cell(at: &Located<[i64; 2]>) -> Cell {
        let c = |v: i64| i32::try_from(v).unwrap_or(i32::MAX);
        Cell::new(c(at.value[0]), c(at.value[1]))
    }

    fn card(&mut self, name: &Located<String>) -> Option<CardId> {
        match self.catalog.card_named(&name.value) {
            Ok(id) => Some(id),
            Err(e) => {
                let more = self.elsewhere(&name.value, |c, n| {
                    c.card_named(n)
                        .ok()
                        .map(|id| c.card(id).meta.origin.pack.clone())
                });
                self.problem(name.loc, format!("{e}{more}"));
                None
            }
        }
    }

    /// For a name the loaded packs lack: the pack among every one the scenario's folders
    /// hold that has it, as advice (`; it is in pack 'frost', …`), or nothing.
    fn elsewhere(&mut self, name: &str, find: impl Fn(&Catalog, &str) -> Option<String>) -> String {
        if self.others.is_none() {
            self.others = Some(
                self.every
                    .take()
                    .and_then(|options| crate::content::load(&options).catalog),
            );
        }
        let Some(Some(all)) = &self.others else {
            return String::new();
        };
        match find(all, name) {
            Some(pack) if !self.catalog.packs().iter().any(|p| p.id == pack) => {
                let mut ids: Vec<String> =
                    self.catalog.packs().iter().map(|p| p.id.clone()).collect();
                ids.push(pack.clone());
                format!(
                    "; it is in pack '{pack}', which this scenario does not load: add it to \
                     `packs:` (packs: [{}])",
                    ids.join(", ")
                )
            }
            _ => String::new(),
        }
    }

    pub(crate) fn token(&mut self, t: &Located<TokenDoc>) -> Option<(Cell, Token)> {
        let seat = self.seat(&t.seat);
        let kind = match &t.kind {
            Some(k) => self
                .catalog
                .token_type_named(&k.value)
                .map_err(|e| (k.loc, e)),
            None => self
                .catalog
                .token_type_named("basic")
                .map_err(|e| (t.loc, e)),
        };
        let kind = match kind {
            Ok(k) => Some(k),
            Err((loc, e)) => {
                let written = t.kind.as_ref().map_or("basic", |k| k.value.as_str());
                let more = self.elsewhere(written, |c, n| {
                    c.token_type_named(n)
                        .ok()
                        .map(|id| c.token_type(id).meta.origin.pack.clone())
                });
                self.problem(loc, format!("{e}{more}"));
                None
            }
        };
        let doc: &TokenDoc = &t.value;
        let value = i32::try_from(doc.value.value).ok();
        if value.is_none() {
            self.problem(doc.value.loc, "value is out of range");
        }
        Some((
            Self::cell(&t.at),
            Token {
                value: value?,
                kind: kind?,
                card: None,
                seat: seat?,
            },
        ))
    }

    fn start(
        &mut self,
        doc: &ScenarioDoc,
        engine: &Engine<'_>,
        events: &mut Vec<Event>,
    ) -> Option<GameState> {
        let Some(default) = self.catalog.decks().first().map(|d| d.stacks.clone()) else {
            self.problem(
                Loc::default(),
                "the loaded packs have no deck; give `decks:` for both seats",
            );
            return None;
        };
        let mut decks = [default.clone(), default];
        for (&n, deck) in &doc.decks {
            let Some(seat) = Seat::from_number(i64::from(n)) else {
                self.problem(
                    deck.loc,
                    format!("decks are given per seat, 1 or 2; found {n}"),
                );
                continue;
            };
            let named = self.problems.len();
            let stacks: Vec<Vec<CardId>> = deck
                .iter()
                .map(|s| s.iter().filter_map(|c| self.card(c)).collect())
                .collect();
            // A card that could not be named is reported already: the stacks without it
            // would only add a false count.
            if self.problems.len() == named
                && let Err(e) = engine.check_deck(seat, &stacks)
            {
                self.problem(deck.loc, e.to_string());
            }
            decks[seat.index()] = stacks;
        }
        if !self.problems.is_empty() {
            return None;
        }
        let mut state = match engine.new_game([&decks[0], &decks[1]], doc.seed.unwrap_or(0), events)
        {
            Ok(s) => s,
            Err(e) => {
                self.problem(Loc::default(), e.to_string());
                return None;
            }
        };
        for t in &doc.board {
            let Some((cell, token)) = self.token(t) else {
                continue;
            };
            if state.board().get(cell).is_some() {
                self.problem(t.at.loc, format!("cell {cell} already holds a token"));
            } else if !state.set_token(self.catalog, cell, Some(token)) {
                self.problem(t.at.loc, format!("cell {cell} is off the board"));
            }
        }
        for (&n, &score) in &doc.scores {
            match Seat::from_number(i64::from(n)) {
                Some(seat) => state.set_score(seat, score),
                None => self.problem(
                    Loc::default(),
                    format!("scores are given per seat, 1 or 2; found {n}"),
                ),
            }
        }
        for (&n, &banked) in &doc.extra_turns {
            match Seat::from_number(i64::from(n)) {
                Some(seat) => state.set_extra_turns(seat, banked),
                None => self.problem(
                    Loc::default(),
                    format!("extra turns are given per seat, 1 or 2; found {n}"),
                ),
            }
        }
        if let Some(turn) = &doc.turn
            && let Some(seat) = self.seat(turn)
        {
            state.set_turn(seat);
        }
        Some(state)
    }

    fn moves(&mut self, doc: &ScenarioDoc) -> Option<Vec<PlannedMove>> {
        let mut out = Vec::new();
        for m in &doc.moves {
            let seat = match &m.seat {
                Some(s) => Some(self.seat(s)?),
                None => None,
            };
            let card = self.card(&m.card)?;
            out.push((seat, card, Self::cell(&m.at), m.loc, m.sandbox));
        }
        Some(out)
    }
}

fn winner_text(w: Option<WinnerDoc>) -> String {
    match w {
        Some(WinnerDoc::Seat(s)) => format!("seat {s}"),
        Some(WinnerDoc::Draw) => "a draw".to_string(),
        None => "no result (the game goes on)".to_string(),
    }
}
