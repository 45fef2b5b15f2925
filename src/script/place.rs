//! Where in a script a host function was called from, for the messages of the functions
//! the host gives scripts (`ctx`, the metered string functions, the budget's charge).

use mlua::Lua;

/// `file:line: ` of the script code calling the host, or nothing when no script frame is
/// found.
pub(super) fn script_place(lua: &Lua) -> String {
    caller(lua)
        .map(|(file, line)| format!("{file}:{line}: "))
        .unwrap_or_default()
}

/// The nearest script frame calling into the host: its file and line. Frames of the
/// sandbox's own wrappers (`pcall`) and of C functions are skipped.
pub(super) fn caller(lua: &Lua) -> Option<(String, u32)> {
    if let Some(state) = super::fast::calling() {
        // SAFETY: a fast `ctx` entry under way set this: the thread calling it, alive.
        return unsafe { super::fast::caller(state) };
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
