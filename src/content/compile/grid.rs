//! Area pictures: `o` the placed token, `x` a target, `.` nothing.

use super::MAX_OFFSET;
use crate::rules::Offset;

/// Parse a grid picture into offsets, row by row, left to right.
pub(super) fn parse_grid(text: &str) -> Result<Vec<Offset>, String> {
    let rows: Vec<Vec<&str>> = text
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .filter(|r| !r.is_empty())
        .collect();
    let width = rows.first().map_or(0, Vec::len);
    let mut centre = None;
    let mut targets = Vec::new();
    for (y, row) in rows.iter().enumerate() {
        if row.len() != width {
            return Err(format!(
                "grid row {} has {} cells but row 1 has {width}; every row needs the same number of cells",
                y + 1,
                row.len()
            ));
        }
        for (x, cell) in row.iter().enumerate() {
            match *cell {
                "o" | "O" => {
                    if centre.is_some() {
                        return Err(format!(
                            "grid has more than one `o` (row {}); `o` marks the one placed token",
                            y + 1
                        ));
                    }
                    centre = Some((x, y));
                }
                "x" | "X" => targets.push((x, y)),
                "." => {}
                other => {
                    return Err(format!(
                        "grid cell `{other}` in row {}, column {} is not `o` (the placed token), `x` (a target) or `.` (nothing); separate cells with spaces",
                        y + 1,
                        x + 1
                    ));
                }
            }
        }
    }
    let Some((cx, cy)) = centre else {
        return Err("grid has no `o` marking the placed token".to_string());
    };
    if targets.is_empty() {
        return Err("grid has no `x` target cell".to_string());
    }
    let to_i8 = |v: usize, c: usize| -> Result<i8, String> {
        let d = i64::try_from(v).unwrap_or(i64::MAX) - i64::try_from(c).unwrap_or(0);
        if d.abs() > MAX_OFFSET {
            Err(format!(
                "grid reaches further than {MAX_OFFSET} cells from `o`"
            ))
        } else {
            i8::try_from(d).map_err(|_| "grid is too large".to_string())
        }
    };
    targets
        .into_iter()
        .map(|(x, y)| Ok(Offset::new(to_i8(x, cx)?, to_i8(y, cy)?)))
        .collect()
}
