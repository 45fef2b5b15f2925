//! Where in a script a host function was called from, for the messages of the functions
//! the host gives scripts (`ctx`, the metered string functions, the budget's charge).

use mlua::Lua;

use crate::rules::ScriptPlace;

/// `file:line: ` of the script code calling the host, or nothing when no script frame is
/// found.
pub(super) fn script_place(lua: &Lua) -> String {
    caller(lua)
        .map(|(file, line)| format!("{file}:{line}: "))
        .unwrap_or_default()
}

/// [`caller`] as a [`ScriptPlace`], for a failure the host makes itself.
pub(super) fn script_place_of(lua: &Lua) -> Option<ScriptPlace> {
    caller(lua).map(|(script, line)| ScriptPlace { script, line })
}

/// The nearest script frame calling into the host: its file and line. Frames of the
/// sandbox's own wrappers (`pcall`) and of C functions are skipped.
pub(super) fn caller(lua: &Lua) -> Option<(String, u32)> {
    if let Some(found) = super::raw::fast_caller() {
        return found;
    }
    (1..40).find_map(|level| {
        lua.inspect_stack(level, |d| {
            let source = d.source().source?.into_owned();
            let file = source.strip_prefix('@')?.to_string();
            let line = u32::try_from(d.current_line()?).ok()?;
            Some((file, line))
        })
        .flatten()
    })
}
