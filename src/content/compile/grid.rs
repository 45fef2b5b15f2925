//! Area pictures: `o` the placed token, `x` a target, `.` nothing.

use super::MAX_OFFSET;
use crate::rules::Offset;

/// Why a grid picture is refused, and where in its text: `at` is (line, byte column),
/// both from 0, of the row or cell at fault; `None` for the grid as a whole.
#[derive(Debug)]
pub(super) struct GridError {
    pub message: String,
    pub at: Option<(usize, usize)>,
}

impl From<String> for GridError {
    fn from(message: String) -> Self {
        GridError { message, at: None }
    }
}

/// The cells of one line with their byte columns.
fn cells(line: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, ch) in line.char_indices() {
        match (ch.is_whitespace(), start) {
            (true, Some(s)) => {
                out.push((s, &line[s..i]));
                start = None;
            }
            (false, None) => start = Some(i),
            _ => {}
        }
    }
    if let Some(s) = start {
        out.push((s, &line[s..]));
    }
    out
}

/// Parse a grid picture into offsets, row by row, left to right.
pub(super) fn parse_grid(text: &str) -> Result<Vec<Offset>, GridError> {
    // Each row with the line of the text it is on (blank lines are skipped).
    let rows: Vec<(usize, Vec<(usize, &str)>)> = text
        .lines()
        .enumerate()
        .map(|(n, l)| (n, cells(l)))
        .filter(|(_, r)| !r.is_empty())
        .collect();
    let width = rows.first().map_or(0, |(_, r)| r.len());
    let mut centre = None;
    let mut targets = Vec::new();
    for (y, (line, row)) in rows.iter().enumerate() {
        if row.len() != width {
            return Err(GridError {
                message: format!(
                    "grid row {} has {} cells but row 1 has {width}; every row needs the same number of cells",
                    y + 1,
                    row.len()
                ),
                at: Some((*line, row.first().map_or(0, |c| c.0))),
            });
        }
        for (x, (column, cell)) in row.iter().enumerate() {
            match *cell {
                "o" | "O" => {
                    if centre.is_some() {
                        return Err(GridError {
                            message: format!(
                                "grid has more than one `o` (row {}); `o` marks the one placed token",
                                y + 1
                            ),
                            at: Some((*line, *column)),
                        });
                    }
                    centre = Some((x, y));
                }
                "x" | "X" => targets.push((x, y)),
                "." => {}
                other => {
                    return Err(GridError {
                        message: format!(
                            "grid cell `{other}` in row {}, column {} is not `o` (the placed token), `x` (a target) or `.` (nothing); separate cells with spaces",
                            y + 1,
                            x + 1
                        ),
                        at: Some((*line, *column)),
                    });
                }
            }
        }
    }
    let Some((cx, cy)) = centre else {
        return Err("grid has no `o` marking the placed token"
            .to_string()
            .into());
    };
    if targets.is_empty() {
        return Err("grid has no `x` target cell".to_string().into());
    }
    let to_i8 = |v: usize, c: usize| -> Result<i8, GridError> {
        let d = i64::try_from(v).unwrap_or(i64::MAX) - i64::try_from(c).unwrap_or(0);
        if d.abs() > MAX_OFFSET {
            Err(format!("grid reaches further than {MAX_OFFSET} cells from `o`").into())
        } else {
            i8::try_from(d).map_err(|_| "grid is too large".to_string().into())
        }
    };
    targets
        .into_iter()
        .map(|(x, y)| Ok(Offset::new(to_i8(x, cx)?, to_i8(y, cy)?)))
        .collect()
}
