//! Where in a script a host function was called from, for the messages of the functions
//! the host gives scripts (`ctx`, the metered string functions, the budget's charge).

use std::cell::Cell;
use std::ffi::CStr;

use mlua::{Lua, ffi};

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
    if let Some(state) = calling() {
        // SAFETY: a fast `ctx` entry under way set this: the thread calling it, alive.
        return unsafe { raw_caller(state) };
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

thread_local! {
    /// The Lua thread whose fast `ctx` call is running its body on this thread, if any:
    /// where the body looks for the calling script's file and line (mlua's own view of
    /// the running thread is not updated for a raw C function).
    pub(super) static CALLING: Cell<*mut ffi::lua_State> = const { Cell::new(std::ptr::null_mut()) };
}

/// The thread of the fast `ctx` call running its body, if any.
pub(super) fn calling() -> Option<*mut ffi::lua_State> {
    let state = CALLING.with(Cell::get);
    (!state.is_null()).then_some(state)
}

/// Forget the calling thread while a hook runs inside a ctx call (a token destroyed by
/// `ctx:damage` runs its `on_destroyed`): that hook's own calls find their own lines.
/// Returns what to put back with [`restore_calling`].
pub(super) fn suspend_calling() -> *mut ffi::lua_State {
    CALLING.with(|c| c.replace(std::ptr::null_mut()))
}

/// Put back what [`suspend_calling`] returned.
pub(super) fn restore_calling(state: *mut ffi::lua_State) {
    CALLING.with(|c| c.set(state));
}

/// The line of the script code calling the running C function (level 1), or the nearest
/// script frame's when that is not a Lua function.
///
/// # Safety
/// `state` is a live thread running a C function.
pub(super) unsafe fn raw_caller_line(state: *mut ffi::lua_State) -> u32 {
    // SAFETY: the contract; `ar` is filled by `lua_getstack` before `lua_getinfo` reads it.
    unsafe {
        let mut ar: ffi::lua_Debug = std::mem::zeroed();
        if ffi::lua_getstack(state, 1, &mut ar) != 0
            && ffi::lua_getinfo(state, c"l".as_ptr(), &mut ar) != 0
            && let Ok(line) = u32::try_from(ar.currentline)
        {
            return line;
        }
        raw_caller(state).map_or(0, |(_, line)| line)
    }
}

/// The nearest script frame (a chunk loaded from a file, `@pack/path`): its file and line.
///
/// # Safety
/// `state` is a live thread.
pub(super) unsafe fn raw_caller(state: *mut ffi::lua_State) -> Option<(String, u32)> {
    // SAFETY: the contract; `source` points at a string Lua keeps alive while the
    // function runs.
    unsafe {
        for level in 1..40 {
            let mut ar: ffi::lua_Debug = std::mem::zeroed();
            if ffi::lua_getstack(state, level, &mut ar) == 0 {
                return None;
            }
            if ffi::lua_getinfo(state, c"Sl".as_ptr(), &mut ar) == 0 || ar.source.is_null() {
                continue;
            }
            let source = CStr::from_ptr(ar.source).to_string_lossy();
            if let (Some(file), Ok(line)) =
                (source.strip_prefix('@'), u32::try_from(ar.currentline))
            {
                return Some((file.to_string(), line));
            }
        }
        None
    }
}
