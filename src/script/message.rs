//! Message cleaning: the text of a Lua error as users see it, the same in every run and
//! safe to print (no traceback, no address, no prelude line, no control character, a
//! length cap), and numbers as scripts print them.
//!
//! Must not: decide what failed (the kind of a hook's failure is [`super::run`]'s).

use super::diagnose::ctx_name_hint;
use crate::rules::ScriptPlace;

/// The message of running out of script memory.
pub(super) const MEMORY_MESSAGE: &str = "the pack's script memory limit is reached";

/// The message of a Lua error, without mlua's wrapping and tracebacks.
pub(super) fn message(e: &mlua::Error) -> String {
    let text = clean(&raw_message(e));
    match ctx_name_hint(&text) {
        Some(hint) => format!("{text}{hint}"),
        None => text,
    }
}

/// The longest message a script error may give, in characters; the rest is cut.
const MAX_MESSAGE: usize = 1_000;

/// A number as scripts print it: `nan`, `inf` and `-inf` the same on every platform.
pub(crate) fn number_text(f: f64) -> String {
    if f.is_nan() {
        "nan".to_string()
    } else if f.is_infinite() {
        if f > 0.0 { "inf" } else { "-inf" }.to_string()
    } else {
        // Lua's own text for the value (`%.14g`, with `.0` for integral values).
        let text = format!("{f}");
        if text.contains(['.', 'e', 'E']) {
            text
        } else {
            format!("{text}.0")
        }
    }
}

/// Make a Lua message safe to show and the same in every run: no stack traceback (it
/// shows the sandbox's insides), no line of the sandbox's own prelude, no address (they
/// differ from run to run), NaN spelt one way, control characters escaped (a message
/// cannot forge a new line of output), and at most [`MAX_MESSAGE`] characters.
pub(crate) fn clean(text: &str) -> String {
    let text = text
        .split("\nstack traceback:")
        .next()
        .unwrap_or(text)
        .trim_end();
    for kind in ["table", "function", "userdata", "thread"] {
        if let Some(rest) = text.strip_prefix(kind).and_then(|r| r.strip_prefix(": 0x"))
            && rest.chars().all(|c| c.is_ascii_hexdigit())
        {
            return format!(
                "an error value that is a {kind}, not a message (raise errors with a string)"
            );
        }
    }
    let mut out = String::with_capacity(text.len().min(MAX_MESSAGE + 8));
    let mut rest = text;
    let mut count = 0usize;
    while let Some(c) = rest.chars().next() {
        if count >= MAX_MESSAGE {
            out.push('…');
            break;
        }
        if let Some(after) = rest.strip_prefix("sandbox:") {
            // `sandbox:LINE: ` of the prelude: dropped.
            let digits = after
                .find(|c: char| !c.is_ascii_digit())
                .unwrap_or(after.len());
            if digits > 0 {
                rest = after[digits..]
                    .strip_prefix(": ")
                    .unwrap_or(&after[digits..]);
                continue;
            }
        }
        if let Some(hex) = rest.strip_prefix(": 0x") {
            // `table: 0x55d1c0a8` (and `NAME: 0x…` from a `__name`): an address.
            let digits = hex
                .find(|c: char| !c.is_ascii_hexdigit())
                .unwrap_or(hex.len());
            if digits >= 6 {
                out.push_str(": (address)");
                rest = &hex[digits..];
                count += 11;
                continue;
            }
        }
        if let Some(after) = rest.strip_prefix("-nan") {
            out.push_str("nan");
            rest = after;
            count += 3;
            continue;
        }
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
        count += 1;
        rest = &rest[c.len_utf8()..];
    }
    out
}

/// Whether `e` is (or wraps) running out of the pack's script memory.
pub(super) fn is_memory(e: &mlua::Error) -> bool {
    match e {
        mlua::Error::MemoryError(_) => true,
        mlua::Error::CallbackError { cause, .. } | mlua::Error::WithContext { cause, .. } => {
            is_memory(cause)
        }
        _ => false,
    }
}

fn raw_message(e: &mlua::Error) -> String {
    match e {
        mlua::Error::RuntimeError(s) | mlua::Error::SyntaxError { message: s, .. } => s.clone(),
        // Lua's own says only "not enough memory"; the sandbox's functions put the
        // calling line and function before it.
        mlua::Error::MemoryError(text) => format!(
            "{}{MEMORY_MESSAGE} (too much data in its scripts)",
            text.strip_suffix("not enough memory").unwrap_or_default()
        ),
        mlua::Error::CallbackError { cause, .. } => message(cause),
        mlua::Error::WithContext { cause, .. } => message(cause),
        mlua::Error::BadArgument { to, pos, cause, .. } => {
            // ctx functions are called as methods: argument 1 is ctx itself.
            let cause = raw_message(cause);
            let call = to.as_deref().map_or_else(String::new, |t| format!("{t}: "));
            let n = pos.saturating_sub(1);
            // The cause is a `ctx` argument error's text, placed at the calling line.
            match split_place(&cause) {
                Some((place, rest)) => format!("{place}: {call}argument {n}: {rest}"),
                None => format!("{call}argument {n}: {cause}"),
            }
        }
        mlua::Error::FromLuaConversionError {
            from,
            to,
            message: m,
        } => {
            format!(
                "expected {to}, got {from}{}",
                m.as_deref().map(|m| format!(" ({m})")).unwrap_or_default()
            )
        }
        other => other.to_string(),
    }
}

/// The place at the start of an error's text that crossed Lua as a string,
/// `pack/file.lua:LINE: rest` → (`pack/file.lua:LINE`, `rest`).
///
/// Only for text from outside the host's own records: Lua puts `file:line: ` in front of
/// `error("…")` and of its own runtime errors, and an error the host raised into a script
/// travels on as that text (a script may catch it, print it or raise it again). Where the
/// host makes a failure itself it gives the place explicitly ([`HookError::at`]).
///
/// [`HookError::at`]: crate::rules::HookError::at
pub(super) fn split_place(text: &str) -> Option<(&str, &str)> {
    let lua_end = text.find(".lua:")? + ".lua:".len();
    let after = &text[lua_end..];
    let digits = after.find(|c: char| !c.is_ascii_digit())?;
    if digits == 0 || !after[digits..].starts_with(": ") {
        return None;
    }
    Some((&text[..lua_end + digits], &after[digits + 2..]))
}

/// The place [`split_place`] finds at the start of a Lua error's text, if any.
pub(super) fn lua_place(text: &str) -> Option<ScriptPlace> {
    let (place, _) = split_place(text)?;
    let (script, line) = place.rsplit_once(':')?;
    Some(ScriptPlace {
        script: script.to_string(),
        line: line.parse().ok()?,
    })
}
