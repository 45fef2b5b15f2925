//! Checking a scenario's expectations and drawing readable differences.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::doc::{ScenarioDoc, WinnerDoc};
use super::{Setup, winner_text};
use crate::rules::never;
use crate::rules::{Board, Catalog, Cell, Engine, GameState, Seat, Token};

pub(super) fn check(
    engine: &Engine<'_>,
    state: &GameState,
    doc: &ScenarioDoc,
    refusal: Option<&str>,
    setup: &mut Setup<'_>,
    failures: &mut Vec<String>,
) {
    let catalog = engine.catalog();
    let expect = &doc.expect;
    if let Some(want) = &expect.error {
        match refusal {
            Some(got) if got.contains(want.value.as_str()) => {}
            Some(got) => failures.push(format!(
                "the last move was refused with \"{got}\", which does not contain \"{}\"",
                want.value
            )),
            None => failures.push(format!(
                "the last move should have been refused with \"{}\", but it was played",
                want.value
            )),
        }
    }
    // Scenarios state seat, value and type; which card placed a token is not compared.
    let actual: BTreeMap<Cell, Token> = state
        .board()
        .tokens()
        .map(|(c, t)| (c, Token { card: None, ..t }))
        .collect();
    if let Some(board) = &expect.board {
        let wanted: BTreeMap<Cell, Token> = board.iter().filter_map(|t| setup.token(t)).collect();
        if wanted != actual {
            let mut text = String::from("the board differs:\n");
            text.push_str(&side_by_side(catalog, state.board(), &wanted, &actual));
            for cell in wanted
                .keys()
                .chain(actual.keys())
                .collect::<std::collections::BTreeSet<_>>()
            {
                let (w, a) = (wanted.get(cell), actual.get(cell));
                if w != a {
                    let _ = writeln!(
                        text,
                        "  at {cell}: expected {}, found {}",
                        describe(catalog, w),
                        describe(catalog, a)
                    );
                }
            }
            failures.push(text.trim_end().to_string());
        }
    }
    for t in expect.tokens.iter().flatten() {
        let Some((cell, token)) = setup.token(t) else {
            continue;
        };
        let found = actual.get(&cell);
        if found != Some(&token) {
            failures.push(format!(
                "at {cell}: expected {}, found {}",
                describe(catalog, Some(&token)),
                describe(catalog, found)
            ));
        }
    }
    for at in expect.empty.iter().flatten() {
        let cell = Setup::cell(at);
        if let Some(t) = actual.get(&cell) {
            failures.push(format!(
                "at {cell}: expected an empty cell, found {}",
                describe(catalog, Some(t))
            ));
        }
    }
    if let Some(scores) = &expect.scores {
        for (&n, &want) in scores.iter() {
            let Some(seat) = Seat::from_number(i64::from(n)) else {
                failures.push(no_such_seat("scores", n));
                continue;
            };
            let got = state.score(seat);
            if got != want {
                failures.push(format!(
                    "score of seat {seat}: expected {want}, found {got}"
                ));
            }
        }
    }
    if let Some(income) = &expect.income {
        match engine.incomes(state) {
            Ok(got) => {
                for (&n, &want) in income.iter() {
                    let Some(seat) = Seat::from_number(i64::from(n)) else {
                        failures.push(no_such_seat("income", n));
                        continue;
                    };
                    if got[seat.index()] != want {
                        failures.push(format!(
                            "income of seat {seat}: expected {want}, found {}",
                            got[seat.index()]
                        ));
                    }
                }
            }
            Err(e) => failures.push(format!("income could not be computed: {e}")),
        }
    }
    if let Some(next) = &expect.next {
        let got = state.turn();
        if i64::from(got.number()) != next.value {
            failures.push(format!(
                "next seat to move: expected {}, found {got}",
                next.value
            ));
        }
    }
    if let Some(over) = &expect.over
        && state.is_over() != over.value
    {
        failures.push(format!(
            "game over: expected {}, found {}",
            over.value,
            state.is_over()
        ));
    }
    if let Some(winner) = &expect.winner {
        let got = state.outcome().map(|o| match o.winner {
            Some(s) => WinnerDoc::Seat(s.number()),
            None => WinnerDoc::Draw,
        });
        if got != winner.value {
            failures.push(format!(
                "winner: expected {}, found {}",
                winner_text(winner.value),
                winner_text(got)
            ));
        }
    }
    if !failures.is_empty() && expect.board.is_none() {
        let mut text = String::from("the board after the moves:\n");
        let mut legend = Legend::default();
        text.push_str(&draw(catalog, state.board(), &actual, &mut legend).join("\n"));
        if !legend.0.is_empty() {
            let _ = write!(text, "\n  (seat:value, then the type: {})", legend.text());
        }
        let _ = write!(
            text,
            "\nscores: seat 1 {}, seat 2 {}; seat {} to move{}",
            state.score(Seat::One),
            state.score(Seat::Two),
            state.turn(),
            if state.is_over() { " (game over)" } else { "" }
        );
        failures.push(text);
    }
}

fn describe(catalog: &Catalog, token: Option<&Token>) -> String {
    match token {
        None => "nothing".to_string(),
        Some(t) => format!(
            "seat {} value {} {}",
            t.seat,
            t.value,
            catalog.token_type(t.kind).meta.id
        ),
    }
}

/// Short tags for non-basic token types, listed under the drawing.
#[derive(Default)]
struct Legend(Vec<String>);

impl Legend {
    fn tag(&mut self, id: &str) -> char {
        let pos = match self.0.iter().position(|x| x == id) {
            Some(p) => p,
            None => {
                self.0.push(id.to_string());
                self.0.len() - 1
            }
        };
        letter(pos)
    }

    fn text(&self) -> String {
        self.0
            .iter()
            .enumerate()
            .map(|(i, id)| format!("{}={id}", letter(i)))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

fn draw(
    catalog: &Catalog,
    board: &Board,
    tokens: &BTreeMap<Cell, Token>,
    legend: &mut Legend,
) -> Vec<String> {
    let mut rows = Vec::new();
    for y in 0..board.height() {
        let mut row = String::new();
        for x in 0..board.width() {
            let cell = match tokens.get(&Cell::new(x, y)) {
                None => ".".to_string(),
                Some(t) => {
                    let id = &catalog.token_type(t.kind).meta.id;
                    if id == "basic" {
                        format!("{}:{}", t.seat, t.value)
                    } else {
                        format!("{}:{}{}", t.seat, t.value, legend.tag(id))
                    }
                }
            };
            let _ = write!(row, "{cell:>6}");
        }
        rows.push(row);
    }
    rows
}

fn side_by_side(
    catalog: &Catalog,
    board: &Board,
    wanted: &BTreeMap<Cell, Token>,
    actual: &BTreeMap<Cell, Token>,
) -> String {
    let mut legend = Legend::default();
    let left = draw(catalog, board, wanted, &mut legend);
    let right = draw(catalog, board, actual, &mut legend);
    let width = left.first().map_or(0, String::len);
    let mut text = format!("  {:<width$}   {}\n", "expected", "actual");
    for (l, r) in left.iter().zip(&right) {
        let _ = writeln!(text, "  {l:<width$} | {r}");
    }
    if !legend.0.is_empty() {
        let _ = writeln!(text, "  (seat:value, then the type: {})", legend.text());
    }
    text
}

/// An expectation for a seat the game does not have: a failure, never skipped.
fn no_such_seat(what: &str, n: impl std::fmt::Display) -> String {
    format!("expect.{what}: there is no seat {n} (seats are 1 and 2)")
}

/// The `expect:` block the game ended with, in the scenario format: every token, both
/// scores and incomes, who moves next, whether the game is over (and who won), and the
/// last move's refusal. After an intended rules change, review it and paste it over the
/// file's old block (`tokensmith scenario --actual`).
pub(super) fn actual(engine: &Engine<'_>, state: &GameState, refusal: Option<&str>) -> String {
    let mut out = String::from("expect:\n");
    board_yaml(&mut out, engine.catalog(), state, "  ", true);
    match engine.incomes(state) {
        Ok([one, two]) => {
            let _ = writeln!(out, "  income: {{ 1: {one}, 2: {two} }}");
        }
        Err(e) => {
            let _ = writeln!(out, "  # income could not be computed: {e}");
        }
    }
    let _ = writeln!(out, "  next: {}", state.turn());
    let _ = writeln!(out, "  over: {}", state.is_over());
    if let Some(o) = state.outcome() {
        match o.winner {
            Some(seat) => {
                let _ = writeln!(out, "  winner: {seat}");
            }
            None => out.push_str("  winner: draw\n"),
        }
    }
    if let Some(message) = refusal {
        let _ = writeln!(out, "  error: {}", quoted(message));
    }
    out
}

/// A position's tokens (`board:`, a list; `board: []` when empty and `empty_list`, else
/// nothing) and both scores (`scores:`) in the scenario format, each line after `indent`:
/// the one writer of a board as scenario YAML, for starts and for expectations.
pub(super) fn board_yaml(
    out: &mut String,
    catalog: &Catalog,
    state: &GameState,
    indent: &str,
    empty_list: bool,
) {
    let tokens: Vec<(Cell, Token)> = state.board().tokens().collect();
    if tokens.is_empty() {
        if empty_list {
            let _ = writeln!(out, "{indent}board: []");
        }
    } else {
        let _ = writeln!(out, "{indent}board:");
        for (cell, t) in tokens {
            let _ = writeln!(
                out,
                "{indent}  - {{ at: [{}, {}], seat: {}, value: {}, type: {} }}",
                cell.x,
                cell.y,
                t.seat,
                t.value,
                catalog.token_type(t.kind).meta.id
            );
        }
    }
    let _ = writeln!(
        out,
        "{indent}scores: {{ 1: {}, 2: {} }}",
        state.score(Seat::One),
        state.score(Seat::Two)
    );
}

/// Text as a YAML double-quoted string (JSON's string syntax is YAML's).
pub(super) fn quoted(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_else(|_| "\"\"".to_string())
}

/// The letter standing for the `i`th id: `a` to `z`, then again from `a`.
fn letter(i: usize) -> char {
    let offset = u8::try_from(i % 26).unwrap_or_else(|_| never!(0, "{i} % 26 is past 25"));
    char::from(b'a' + offset)
}
