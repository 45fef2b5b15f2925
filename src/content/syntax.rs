//! Turning the YAML parser's errors into advice a designer can act on, at the place
//! where the mistake is (the parser often notices a line or more later).

use super::yaml::{Loc, SyntaxError};

/// Rewrite a parser error about `text` so it names the real mistake and its place.
pub(super) fn explain(text: &str, error: SyntaxError) -> SyntaxError {
    let message = error.message.as_str();
    if let Some(rest) = message.strip_prefix("duplicate mapping key: ") {
        let key = rest.split(", set ").next().unwrap_or(rest).trim();
        return SyntaxError {
            message: format!("duplicate key `{key}`; a key appears once per mapping"),
            loc: error.loc,
        };
    }
    if message.contains("multiple YAML documents") {
        let line = second_document(text).unwrap_or(error.loc.line);
        return SyntaxError {
            message: "a content file holds one YAML document; remove the `---` separator"
                .to_string(),
            loc: Loc { line, column: 1 },
        };
    }
    if message.contains("tab")
        && let Some(line) = tab_indented_line(text)
    {
        return SyntaxError {
            message: "a tab cannot indent YAML; indent with spaces".to_string(),
            loc: Loc { line, column: 1 },
        };
    }
    if let Some((bracket, loc)) = unclosed_bracket(text, error.loc) {
        let message = match bracket {
            '[' => "this `[` is never closed; end the list with `]`",
            _ => "this `{` is never closed; end the mapping with `}`",
        };
        return SyntaxError {
            message: message.to_string(),
            loc,
        };
    }
    error
}

fn is_content(line: &str) -> bool {
    let t = line.trim();
    !t.is_empty() && !t.starts_with('#') && !t.starts_with("---") && !t.starts_with('%')
}

/// The 1-based line of a `---` that starts a second document.
fn second_document(text: &str) -> Option<u32> {
    let mut seen_content = false;
    for (i, line) in text.lines().enumerate() {
        if (line == "---" || line.starts_with("--- ")) && seen_content {
            return u32::try_from(i + 1).ok();
        }
        seen_content |= is_content(line);
    }
    None
}

/// The 1-based line of the first line indented with a tab.
fn tab_indented_line(text: &str) -> Option<u32> {
    text.lines()
        .position(|l| {
            l.chars()
                .take_while(|c| c.is_whitespace())
                .any(|c| c == '\t')
        })
        .and_then(|i| u32::try_from(i + 1).ok())
}

/// The last `[` or `{` opened before `until` and never closed, if any.
fn unclosed_bracket(text: &str, until: Loc) -> Option<(char, Loc)> {
    let mut open: Vec<(char, Loc)> = Vec::new();
    let mut block_indent: Option<usize> = None;
    for (i, line) in text.lines().enumerate() {
        let line_no = u32::try_from(i + 1).unwrap_or(u32::MAX);
        if line_no > until.line {
            break;
        }
        let indent = line.len() - line.trim_start().len();
        if let Some(b) = block_indent {
            if line.trim().is_empty() || indent > b {
                continue;
            }
            block_indent = None;
        }
        let mut quote: Option<char> = None;
        let mut prev = ' ';
        let mut starts_value = true;
        for (j, c) in line.chars().enumerate() {
            let col = u32::try_from(j + 1).unwrap_or(u32::MAX);
            if line_no == until.line && col >= until.column {
                break;
            }
            match quote {
                Some(q) if c == q => quote = None,
                Some(_) => {}
                None => match c {
                    '#' if prev.is_whitespace() => break,
                    '"' | '\'' if starts_value || !open.is_empty() => quote = Some(c),
                    '[' | '{' if starts_value || !open.is_empty() => {
                        open.push((
                            c,
                            Loc {
                                line: line_no,
                                column: col,
                            },
                        ));
                    }
                    ']' | '}' => {
                        open.pop();
                    }
                    _ => {}
                },
            }
            starts_value = matches!(c, ' ' | '\t')
                && matches!(prev, ':' | '-' | ' ' | ',' | '[' | '{')
                || matches!(c, '[' | '{' | ',');
            if j == 0 && matches!(c, ' ') {
                starts_value = true;
            }
            prev = c;
        }
        let value = line.split(" #").next().unwrap_or("").trim_end();
        if open.is_empty()
            && (value.ends_with('|')
                || value.ends_with('>')
                || value.ends_with("|-")
                || value.ends_with(">-"))
        {
            block_indent = Some(indent);
        }
    }
    open.pop()
}
