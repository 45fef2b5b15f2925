//! A Lua state's main thread, where the host runs its hooks.

use mlua::{Lua, ffi};

/// The main thread of a Lua state (the only one: scripts have no coroutines), with the
/// state kept alive as long as this value is: its pointer is valid whenever it is used.
pub(in crate::script) struct MainThread {
    state: *mut ffi::lua_State,
    /// Keeps the state open.
    lua: Lua,
}

impl MainThread {
    /// The main thread of `lua`.
    pub fn of(lua: &Lua) -> mlua::Result<MainThread> {
        let mut main = std::ptr::null_mut();
        // SAFETY: the closure only notes the running thread's pointer; it pushes nothing
        // and leaves the stack as it found it.
        unsafe {
            lua.exec_raw::<()>((), |state| main = state)?;
        }
        Ok(MainThread {
            state: main,
            lua: lua.clone(),
        })
    }

    /// The state.
    pub(super) fn lua(&self) -> &Lua {
        &self.lua
    }

    /// The thread's pointer, for the modules of this room.
    pub(super) fn ptr(&self) -> *mut ffi::lua_State {
        self.state
    }

    /// Restart the instruction countdown of the hook set with `count` instructions, so
    /// an outermost hook call is counted from zero exactly, whatever ran before it: the
    /// hook is set again as it is (no allocation, unlike installing it anew). False,
    /// changing nothing, when no hook with that count is set.
    pub fn restart_countdown(&self, count: u32) -> bool {
        let state = self.state;
        // SAFETY: `state` is a live state's main thread (this value keeps it open); these
        // read and set the thread's hook fields only, raise no error, and are what any
        // host may do between or inside calls.
        unsafe {
            let hook = ffi::lua_gethook(state);
            let mask = ffi::lua_gethookmask(state);
            let now = ffi::lua_gethookcount(state);
            let present = hook.is_some() && u32::try_from(now) == Ok(count);
            if present {
                ffi::lua_sethook(state, hook, mask, now);
            }
            present
        }
    }
}
