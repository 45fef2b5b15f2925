//! Where in a script a fast `ctx` entry was called from. A fast entry is a raw C
//! function, so mlua's own view of the running thread is not updated for it: the entry
//! notes its thread here while its body runs, and the body's messages find the calling
//! script's file and line through it.

use std::cell::Cell;
use std::ffi::CStr;

use mlua::ffi;

thread_local! {
    /// The Lua thread whose fast `ctx` call is running its body on this thread, if any.
    /// Set only by [`while_fast_call`], for the length of the body.
    static CALLING: Cell<*mut ffi::lua_State> = const { Cell::new(std::ptr::null_mut()) };
}

/// Puts back the calling thread noted before, also when unwinding.
struct Restore(*mut ffi::lua_State);

impl Drop for Restore {
    #[inline]
    fn drop(&mut self) {
        CALLING.with(|c| c.set(self.0));
    }
}

/// Run `f`, the body of a fast entry running on `state`, with `state` noted as the
/// calling thread.
#[inline(always)]
pub(super) fn while_fast_call<R>(state: *mut ffi::lua_State, f: impl FnOnce() -> R) -> R {
    let _restore = Restore(CALLING.with(|c| c.replace(state)));
    f()
}

/// Run `f` (a hook called inside a `ctx` call: a token destroyed by `ctx:damage` runs its
/// `on_destroyed`) with no calling thread noted, so its own `ctx` calls find their own
/// lines, not those of the call it runs inside.
pub(in crate::script) fn outside_fast_call<R>(f: impl FnOnce() -> R) -> R {
    let _restore = Restore(CALLING.with(|c| c.replace(std::ptr::null_mut())));
    f()
}

/// The line of the script code calling the fast entry under way (the frame above it, or
/// the nearest script frame's when that is not a Lua function); `None` when no fast entry
/// runs its body now.
pub(in crate::script) fn fast_caller_line() -> Option<u32> {
    let state = CALLING.with(Cell::get);
    if state.is_null() {
        return None;
    }
    // SAFETY: `state` is the thread of the fast entry whose body runs now (noted by
    // `while_fast_call` for exactly that long), so it is alive and running a C function;
    // `ar` is filled by `lua_getstack` before `lua_getinfo` reads it, and neither raises.
    unsafe {
        let mut ar: ffi::lua_Debug = std::mem::zeroed();
        if ffi::lua_getstack(state, 1, &mut ar) != 0
            && ffi::lua_getinfo(state, c"l".as_ptr(), &mut ar) != 0
            && let Ok(line) = u32::try_from(ar.currentline)
        {
            return Some(line);
        }
    }
    Some(nearest_script(state).map_or(0, |(_, line)| line))
}

/// The nearest script frame (a chunk loaded from a file, `@pack/path`) calling the fast
/// entry under way: its file and line (`Some(None)` when none is found); `None` when no
/// fast entry runs its body now.
pub(in crate::script) fn fast_caller() -> Option<Option<(String, u32)>> {
    let state = CALLING.with(Cell::get);
    (!state.is_null()).then(|| nearest_script(state))
}

/// The nearest script frame of `state`, a thread noted in [`CALLING`].
fn nearest_script(state: *mut ffi::lua_State) -> Option<(String, u32)> {
    for level in 1..40 {
        // SAFETY: `state` is alive (see `fast_caller_line`); `ar` is filled by
        // `lua_getstack` before `lua_getinfo` reads it; `source` points at a string Lua
        // keeps alive while the function runs, copied before anything else runs.
        unsafe {
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
    }
    None
}
