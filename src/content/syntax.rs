//! Turning the YAML parser's errors into advice a designer can act on, at the place
//! where the mistake is (the parser often notices a line or more later); the error and
//! location types themselves ([`Loc`], [`SyntaxError`]), which `yaml` re-exports.

/// A 1-based line and column in a file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Loc {
    /// Line, from 1.
    pub line: u32,
    /// Column, from 1.
    pub column: u32,
}

/// A YAML syntax error (or an unreadable structure) with its location.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SyntaxError {
    /// What is wrong.
    pub message: String,
    /// Where, when known.
    pub loc: Loc,
}

/// Rewrite a parser error about `text` so it names the real mistake and its place.
pub(super) fn explain(text: &str, error: SyntaxError) -> SyntaxError {
    let message = error.message.as_str();
    if message.starts_with("recursion limit exceeded") {
        return SyntaxError {
            message: budget("Depth"),
            loc: error.loc,
        };
    }
    if let Some(limit) = message.strip_prefix("budget breached: ") {
        return SyntaxError {
            message: budget(limit),
            loc: error.loc,
        };
    }
    if message.starts_with("unexpected character")
        && let Some(c) = char_at(text, error.loc)
    {
        return SyntaxError {
            message: format!(
                "{} cannot appear in YAML here; remove it (is this a text file?)",
                describe_char(c)
            ),
            loc: error.loc,
        };
    }
    if let Some(kind) = message.strip_prefix("invalid ")
        && let Some(rest) = line_from(text, error.loc)
    {
        let kind = match kind {
            "u8" | "u16" | "u32" | "u64" | "i8" | "i16" | "i32" | "i64" => "a whole number",
            "f32" | "f64" => "a number",
            "bool" => "true or false",
            _ => "a value of that kind",
        };
        let value = rest.split(" #").next().unwrap_or(rest).trim();
        return SyntaxError {
            message: format!(
                "a tag here asks for {kind}, but the value is `{}`; remove the `!!` tag or write {kind}",
                crate::rules::echo(value)
            ),
            loc: error.loc,
        };
    }
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
    if is_structure_error(message)
        && let Some(bad) = misindented(text, error.loc.line)
    {
        return SyntaxError {
            message: format!(
                "check the indentation of line {} (it is at column {}; the entry above starts at column {})",
                bad.line, bad.column, bad.above
            ),
            loc: Loc {
                line: bad.line,
                column: bad.column,
            },
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

/// The parser's messages for a block structure it could not follow, which is nearly
/// always a line indented more or less than its neighbours.
fn is_structure_error(message: &str) -> bool {
    [
        "mapping values are not allowed",
        "did not find expected key",
        "did not find expected '-'",
        "block sequence entries are not allowed",
        "did not find expected <document start>",
    ]
    .iter()
    .any(|m| message.contains(m))
}

/// A line whose indentation fits neither the entry above it nor any enclosing one.
#[derive(Debug, PartialEq, Eq)]
struct Misindented {
    line: u32,
    column: u32,
    above: u32,
}

/// The first block line, up to one past `until`, indented so that it belongs to no
/// entry: deeper than the line above when that line opens nothing, or shallower than it
/// at a column no enclosing entry uses. Columns are 1-based, of the key (after a `- `).
fn misindented(text: &str, until: u32) -> Option<Misindented> {
    // Key columns of the entries open above, innermost last.
    let mut open: Vec<usize> = Vec::new();
    let mut above: Option<(usize, bool)> = None;
    let mut block: Option<usize> = None;
    for (i, line) in text.lines().enumerate() {
        let number = u32::try_from(i + 1).unwrap_or(u32::MAX);
        if number > until.saturating_add(1) {
            break;
        }
        let indent = line.len() - line.trim_start_matches(' ').len();
        let body = line.trim();
        if body.is_empty() || body.starts_with('#') {
            continue;
        }
        if let Some(b) = block {
            if indent > b {
                continue;
            }
            block = None;
        }
        if body.starts_with("---") || body.starts_with('%') || line.starts_with('\t') {
            return None;
        }
        // `- key: v` puts the entry's key two columns in.
        let mut key = indent;
        let mut rest = body;
        let mut dashes = Vec::new();
        while let Some(after) = rest.strip_prefix("- ") {
            dashes.push(key);
            key += 2 + (after.len() - after.trim_start().len());
            rest = after.trim_start();
        }
        let value = rest.split(" #").next().unwrap_or("").trim_end();
        let opens = value.ends_with(':')
            || value.ends_with('|')
            || value.ends_with('>')
            || value.ends_with("|-")
            || value.ends_with(">-")
            || rest == "-";
        if let Some((prev, prev_opens)) = above {
            let known = open.contains(&indent) || dashes.first().is_some_and(|d| open.contains(d));
            let deeper = indent > prev && !prev_opens;
            let stray = indent < prev && !known;
            if deeper || stray {
                return Some(Misindented {
                    line: number,
                    column: u32::try_from(indent + 1).unwrap_or(u32::MAX),
                    above: u32::try_from(prev + 1).unwrap_or(u32::MAX),
                });
            }
        }
        // Entries deeper than this line are closed.
        open.retain(|&c| c < indent || dashes.contains(&c));
        for d in &dashes {
            if !open.contains(d) {
                open.push(*d);
            }
        }
        if !open.contains(&key) {
            open.push(key);
        }
        if value.ends_with('|')
            || value.ends_with('>')
            || value.ends_with("|-")
            || value.ends_with(">-")
        {
            block = Some(indent);
        }
        above = Some((key, opens));
    }
    None
}

/// A YAML reader limit in words: `Depth { depth: 65 }`, `Nodes { nodes: 250001 }`, ….
fn budget(limit: &str) -> String {
    let what = limit.split([' ', '{']).next().unwrap_or(limit);
    match what {
        "Depth" => "lists and mappings nest deeper than the YAML reader allows; content \
                    never needs that many levels: flatten it"
            .to_string(),
        "Nodes" | "Events" | "AliasAnchorRatio" | "Aliases" | "Anchors" => {
            "this file expands to more values than the YAML reader allows (through `&anchor` \
             and `*alias` repeats, or sheer size); write the entries out plainly or split the file"
                .to_string()
        }
        _ => format!(
            "this file is beyond a limit of the YAML reader ({}); make it smaller or simpler",
            crate::rules::echo(what)
        ),
    }
}

/// The character at a 1-based location.
fn char_at(text: &str, loc: Loc) -> Option<char> {
    let line = text
        .lines()
        .nth(usize::try_from(loc.line).ok()?.checked_sub(1)?)?;
    line.chars()
        .nth(usize::try_from(loc.column).ok()?.checked_sub(1)?)
}

/// The rest of the line from a 1-based location.
fn line_from(text: &str, loc: Loc) -> Option<&str> {
    let line = text
        .lines()
        .nth(usize::try_from(loc.line).ok()?.checked_sub(1)?)?;
    let start = line
        .char_indices()
        .nth(usize::try_from(loc.column).ok()?.checked_sub(1)?)
        .map(|(i, _)| i)?;
    Some(&line[start..])
}

/// A character as a designer would name it: `a NUL byte (U+0000)`, `U+200B`, `'é'`.
fn describe_char(c: char) -> String {
    let code = format!("U+{:04X}", u32::from(c));
    match c {
        '\0' => format!("a NUL byte ({code})"),
        c if c.is_control() => format!("the control character {code}"),
        c if c.is_whitespace() => format!("the space-like character {code}"),
        c => format!("the character '{c}' ({code})"),
    }
}

#[cfg(test)]
mod tests {
    use super::{Misindented, misindented};

    fn bad(text: &str) -> Option<(u32, u32, u32)> {
        misindented(text, 100).map(
            |Misindented {
                 line,
                 column,
                 above,
             }| (line, column, above),
        )
    }

    #[test]
    fn a_line_off_its_entry_is_found() {
        let good =
            "cards:\n  - id: a\n    value: 2\n    area: row\n  - id: b\n    value: 1\nareas: []\n";
        assert_eq!(bad(good), None);
        // Deeper than its sibling.
        assert_eq!(
            bad("cards:\n  - id: a\n    value: 2\n      ability: w\n"),
            Some((4, 7, 5))
        );
        // Shallower than its sibling, at no enclosing column.
        assert_eq!(
            bad("cards:\n  - id: a\n    value: 2\n   ability: w\n"),
            Some((4, 4, 5))
        );
        // A list entry at a column no list uses.
        assert_eq!(
            bad("cards:\n  - id: a\n    value: 2\n - id: b\n"),
            Some((4, 2, 5))
        );
        // Nested mappings and block text are fine.
        let nested = "rules:\n  board: { width: 4 }\n  stack_size:\n    min: 1\n    max: 3\n  score_limit: 9\ncards:\n- id: a\n  description: |\n    two\n      lines\n  value: 1\n";
        assert_eq!(bad(nested), None);
    }
}
