//! Load diagnostics: parsing a script a piece at a time under the load's clock, and
//! placing what went wrong in its source (the line of a Lua message, the column of the
//! token it is near, the mistake just before a line, a returned key, `<close>`, a ctx
//! function called with a dot, a ctx name misspelt).
//!
//! Must not: run a script.

use mlua::{Function, Lua};

use super::api::{CTX_FIELDS, ctx_names};
use crate::content::yaml::Loc;

/// A parsed script, or where parsing was stopped by the load's clock.
pub(super) enum Parsed {
    Chunk(Function),
    Cut { line: usize },
}

/// Parse `source` as a text chunk named `name` whose `_ENV` is `env`. Lua's parser is one
/// call no instruction count sees, and some constructs cost it time growing with the
/// square of their size (a long `elseif` chain, many labels, names looked up through
/// deeply nested functions): so it is fed a piece at a time and given no more once
/// `deadline` has passed, wherever it is.
pub(super) fn parse(
    lua: &Lua,
    source: &str,
    name: &str,
    env: &mlua::Table,
    deadline: Option<std::time::Instant>,
) -> mlua::Result<Parsed> {
    match super::raw::parse(lua, source, name, env, deadline)? {
        super::raw::Parsed::Cut(at) => {
            let line = source.as_bytes()[..at]
                .iter()
                .filter(|&&b| b == b'\n')
                .count()
                + 1;
            Ok(Parsed::Cut { line })
        }
        super::raw::Parsed::Done(Ok(f)) => Ok(Parsed::Chunk(f)),
        super::raw::Parsed::Done(Err(Some(message))) => Err(mlua::Error::SyntaxError {
            message,
            incomplete_input: false,
        }),
        super::raw::Parsed::Done(Err(None)) => Err(mlua::Error::RuntimeError(
            "the script could not be parsed".to_string(),
        )),
    }
}

/// Where a script declares a to-be-closed variable (`local x <close> = ...`), if it does:
/// read on Lua's tokens (strings, comments and operators such as `<` and `<=` are tokens
/// of their own, never an attribute), in the names a `local` statement declares.
pub(super) fn close_attribute(source: &str) -> Option<Loc> {
    let tokens = lua_tokens(source);
    let text = |j: usize| tokens.get(j).map(|t| t.text);
    let is_name = |j: usize| tokens.get(j).is_some_and(|t| t.name);
    let mut i = 0;
    while i < tokens.len() {
        if text(i) != Some("local") || !is_name(i + 1) || text(i + 1) == Some("function") {
            i += 1;
            continue;
        }
        // `local` attnamelist: Name [`<` Name `>`] {`,` Name [`<` Name `>`]}
        let mut j = i + 1;
        while is_name(j) {
            j += 1;
            if text(j) == Some("<") {
                if text(j + 1) == Some("close") && text(j + 2) == Some(">") {
                    return tokens.get(j).map(|t| t.loc);
                }
                j += 3;
            }
            if text(j) != Some(",") {
                break;
            }
            j += 1;
        }
        i = j.max(i + 1);
    }
    None
}

/// One token of Lua source, as far as [`close_attribute`] needs: names and keywords,
/// numbers, and operators (two-character ones whole); strings and comments are skipped.
struct LuaToken<'a> {
    text: &'a str,
    /// A name or keyword (not a number, not an operator).
    name: bool,
    loc: Loc,
}

/// The level of a long bracket (`[[`, `[==[`) opening at `i`, if one does.
fn long_open(b: &[u8], i: usize) -> Option<usize> {
    if b.get(i) != Some(&b'[') {
        return None;
    }
    let level = b[i + 1..].iter().take_while(|&&c| c == b'=').count();
    (b.get(i + 1 + level) == Some(&b'[')).then_some(level)
}

fn lua_tokens(source: &str) -> Vec<LuaToken<'_>> {
    let b = source.as_bytes();
    let mut out = Vec::new();
    let (mut i, mut line, mut line_start) = (0usize, 1u32, 0usize);
    // Skips a long bracket's body from `i` (just after its opening) past its closing.
    let skip_long = |mut i: usize, level: usize, line: &mut u32, line_start: &mut usize| {
        while i < b.len() {
            if b[i] == b'\n' {
                *line += 1;
                *line_start = i + 1;
            } else if b[i] == b']'
                && b[i + 1..].iter().take_while(|&&c| c == b'=').count() == level
                && b.get(i + 1 + level) == Some(&b']')
            {
                return i + level + 2;
            }
            i += 1;
        }
        i
    };
    while i < b.len() {
        let c = b[i];
        let loc = Loc {
            line,
            column: u32::try_from(i - line_start + 1).unwrap_or(1),
        };
        if c == b'\n' {
            i += 1;
            line += 1;
            line_start = i;
        } else if c.is_ascii_whitespace() || c == b'\x0b' || !c.is_ascii() {
            i += 1;
        } else if c == b'-' && b.get(i + 1) == Some(&b'-') {
            i += 2;
            if let Some(level) = long_open(b, i) {
                i = skip_long(i + level + 2, level, &mut line, &mut line_start);
            } else {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
        } else if let Some(level) = long_open(b, i) {
            i = skip_long(i + level + 2, level, &mut line, &mut line_start);
        } else if c == b'"' || c == b'\'' {
            i += 1;
            while i < b.len() && b[i] != c && b[i] != b'\n' {
                if b[i] == b'\\' {
                    i += 1;
                    if b.get(i) == Some(&b'\n') {
                        line += 1;
                        line_start = i + 1;
                    }
                }
                i += 1;
            }
            i += 1;
        } else if c.is_ascii_alphanumeric() || c == b'_' {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            out.push(LuaToken {
                text: &source[start..i],
                name: !c.is_ascii_digit(),
                loc,
            });
        } else {
            let next = b.get(i + 1).copied().unwrap_or(0);
            let len = match (c, next) {
                (b'<', b'<' | b'=') | (b'>', b'>' | b'=') | (b'=' | b'~', b'=') => 2,
                (b':', b':') | (b'/', b'/') | (b'.', b'.') => 2,
                _ => 1,
            };
            out.push(LuaToken {
                text: &source[i..i + len],
                name: false,
                loc,
            });
            i += len;
        }
    }
    out
}

/// The location of `key = ` in a script's source, to point at a returned hook by name.
pub(super) fn key_loc(source: &str, key: &str) -> Loc {
    for (i, line) in source.lines().enumerate() {
        if let Some(col) = line.find(key)
            && line[col + key.len()..].trim_start().starts_with('=')
            && !line[..col].ends_with(|c: char| c.is_alphanumeric() || c == '_')
        {
            return Loc {
                line: u32::try_from(i + 1).unwrap_or(1),
                column: u32::try_from(col + 1).unwrap_or(1),
            };
        }
    }
    Loc { line: 1, column: 1 }
}

/// `name:LINE: text` → (LINE, text); other messages keep line 1.
pub(super) fn split_location(text: &str, name: &str) -> (u32, String) {
    if let Some(rest) = text.strip_prefix(name).and_then(|r| r.strip_prefix(':'))
        && let Some((line, msg)) = rest.split_once(':')
        && let Ok(line) = line.trim().parse::<u32>()
    {
        return (line, msg.trim().to_string());
    }
    (1, text.to_string())
}

/// For "… (method 'damge')" or "… (field 'opponnent')": the ctx name meant, when one is
/// close (`; ctx has no 'damge': did you mean ctx:damage?`).
pub(super) fn ctx_name_hint(text: &str) -> Option<String> {
    let rest = ["(method '", "(field '"]
        .iter()
        .find_map(|open| text.rfind(open).map(|at| &text[at + open.len()..]))?;
    let name = rest.split('\'').next()?;
    let is_method = |n: &str| ctx_names().any(|m| m == n);
    if is_method(name) || CTX_FIELDS.contains(&name) {
        return None;
    }
    let candidates = ctx_names().chain(CTX_FIELDS.iter().copied());
    let near = crate::rules::nearest(name, candidates)?;
    let written = if is_method(&near) {
        format!("ctx:{near}(…)")
    } else {
        format!("ctx.{near}")
    };
    Some(format!("; ctx has no '{name}': did you mean {written}?"))
}

/// The column of the token a Lua syntax error is "near" (`near '='`), when it appears
/// exactly once on the error's line; Lua itself gives only the line.
pub(super) fn near_column(source: &str, line: u32, message: &str) -> Option<u32> {
    let token = message.rsplit_once("near '")?.1.strip_suffix('\'')?;
    if token.is_empty() || token.starts_with('<') {
        return None;
    }
    let text = source
        .lines()
        .nth(usize::try_from(line).ok()?.checked_sub(1)?)?;
    let mut found = text.match_indices(token);
    let (at, _) = found.next()?;
    if found.next().is_some() {
        return None;
    }
    u32::try_from(text[..at].chars().count() + 1).ok()
}

/// When the token at (`line`, `column`) starts its line: the last token before it, on an
/// earlier line, as (line, column, text). Lua reports a syntax error at the token after
/// the mistake, so a dangling `+` at the end of line 2 is reported on line 3; this names
/// the `+`. Blank lines and lines holding only a `--` comment are passed over.
pub(super) fn token_before(source: &str, line: u32, column: u32) -> Option<(u32, u32, String)> {
    let index = usize::try_from(line).ok()?.checked_sub(1)?;
    let lines: Vec<&str> = source.lines().take(index + 1).collect();
    let here = lines.get(index)?;
    let first = here.chars().take_while(|c| c.is_whitespace()).count();
    if usize::try_from(column).ok()? != first + 1 {
        return None;
    }
    // Only a few lines back: the mistake is near.
    for back in (index.saturating_sub(8)..index).rev() {
        // Code before a `--` comment (strings holding `--` are rare in hooks).
        let code = lines[back].split("--").next().unwrap_or("").trim_end();
        if code.trim().is_empty() {
            continue;
        }
        let last = code.chars().next_back()?;
        let word = |c: char| c.is_alphanumeric() || c == '_';
        let token: String = if word(last) {
            let n = code.chars().rev().take_while(|c| word(*c)).count();
            code.chars().skip(code.chars().count() - n).collect()
        } else {
            // One symbol, or an operator of two (`..`, `==`, `~=`, `<=`, `>=`, `//`).
            let two: String = code
                .chars()
                .skip(code.chars().count().saturating_sub(2))
                .collect();
            if ["..", "==", "~=", "<=", ">=", "//"].contains(&two.as_str()) {
                two
            } else {
                last.to_string()
            }
        };
        let start = code.chars().count() - token.chars().count() + 1;
        let token: String = token.chars().take(24).collect();
        return Some((
            u32::try_from(back + 1).ok()?,
            u32::try_from(start).ok()?,
            token,
        ));
    }
    None
}

/// Calls of a ctx function with a dot (`ctx.damage(…)`), which pass no ctx and shift
/// every argument: each as (line, column, name), comments left out.
#[must_use]
pub fn dot_calls(source: &str) -> Vec<(u32, u32, &'static str)> {
    let mut out = Vec::new();
    for (i, line) in source.lines().enumerate() {
        let code = line.split("--").next().unwrap_or("");
        for (at, _) in code.match_indices("ctx.") {
            let after = &code[at + 4..];
            let Some(name) = ctx_names().find(|m| {
                after
                    .strip_prefix(*m)
                    .is_some_and(|r| r.trim_start().starts_with('('))
            }) else {
                continue;
            };
            // `myctx.damage(` is another table.
            if code[..at]
                .chars()
                .next_back()
                .is_some_and(|c| c.is_alphanumeric() || c == '_')
            {
                continue;
            }
            let column = code[..at].chars().count() + 1;
            out.push((
                u32::try_from(i + 1).unwrap_or(u32::MAX),
                u32::try_from(column).unwrap_or(u32::MAX),
                name,
            ));
        }
    }
    out
}
