//! Calling a hook: the function, `ctx` and the arguments pushed straight from the
//! registry onto the state's main thread and run by one `lua_pcall`.
//!
//! mlua's `Function::call` pays, at every call, for its general machinery: a reference
//! pushed through its auxiliary thread, each argument turned into a `Value` and back, a
//! traceback built for every error (which the host cuts off anyway). A hook call runs on
//! every scripted move, so this module does only what a hook call needs; errors still
//! come back as the same `mlua::Error`s (a failed `ctx` call's, mlua's own, a memory
//! error), so every message stays as it was.
//!
//! Invariant: nothing that can raise a Lua error (allocating) runs outside the protected
//! call: the pushes before it only read the registry or push plain values, and a result
//! or an error is handed to mlua through a registry entry that exists already (setting
//! an existing key allocates nothing).
//!
//! A token hook's `self` is made from the token as plain data by a light C function, in a
//! protected call of its own.

use std::cell::RefCell;
use std::ffi::c_int;

use mlua::{Function, Lua, RegistryKey, Table, Value, ffi};

use super::stack::TokenOut;
use super::thread::MainThread;

/// The token a hook is about (`self`), or nil.
pub(in crate::script) enum Me {
    Nil,
    /// Made into its table inside the call's protection, with no value of mlua's in
    /// between (a table made through mlua is a protected call and a registry entry of
    /// its own: about a thousand instructions on every hook call that runs in Lua).
    Token(TokenOut),
}

/// What a hook call passes after `ctx`.
pub(in crate::script) struct Args {
    /// The token the hook is about (`self`), or nil; absent for `on_place`, `evaluate`.
    pub me: Option<Me>,
    /// A number after it (`income`'s income, `evaluate`'s seat).
    pub number: Option<i64>,
}

impl Args {
    /// `ctx` alone.
    pub const CTX: Args = Args {
        me: None,
        number: None,
    };
}

/// A pack state's way of calling hooks.
pub(in crate::script) struct Caller {
    /// The state's main thread (the only one: scripts have no coroutines).
    main: MainThread,
    /// `ctx`, in the registry.
    ctx: RegistryKey,
    /// An entry that always holds a value (never nil, so it never leaves the registry):
    /// where an argument table waits to be pushed, and where an error or a result is
    /// handed to mlua.
    slot: RefCell<RegistryKey>,
}

impl Caller {
    /// A caller for `lua`, passing `ctx`.
    pub fn new(lua: &Lua, ctx: &Table) -> mlua::Result<Caller> {
        Ok(Caller {
            main: MainThread::of(lua)?,
            ctx: lua.create_registry_value(ctx)?,
            slot: RefCell::new(lua.create_registry_value(true)?),
        })
    }

    /// Call the hook `function` (a key made by [`hook_keys`] in this state) with `ctx`
    /// and `args`: its first result when `result` is asked for, nil otherwise.
    /// (A key of another state's registry names some other value here, or none: the call
    /// then fails, safely.)
    pub fn call(&self, function: &RegistryKey, args: Args, result: bool) -> mlua::Result<Value> {
        let state = self.main.ptr();
        // SAFETY: `state` is this state's main thread, kept alive by `self.main`. Lua is
        // either idle or running a C function on that thread (a hook nested in a `ctx`
        // call): pushing above its frame and putting the top back afterwards is what any
        // C function does. The pushes before each `lua_pcall` allocate nothing (a light
        // C function and a light userdata are plain values); the reads after it are of
        // values it left. `me` outlives the protected call that reads it.
        unsafe {
            let top = ffi::lua_gettop(state);
            if ffi::lua_checkstack(state, 5) == 0 {
                return Err(mlua::Error::StackError);
            }
            ffi::lua_pushcfunction(state, handler);
            ffi::lua_rawgeti(state, ffi::LUA_REGISTRYINDEX, function.id().into());
            ffi::lua_rawgeti(state, ffi::LUA_REGISTRYINDEX, self.ctx.id().into());
            let mut n = 1;
            match &args.me {
                None => {}
                Some(Me::Token(me)) => {
                    ffi::lua_pushcfunction(state, token_table);
                    ffi::lua_pushlightuserdata(
                        state,
                        std::ptr::from_ref(me).cast_mut().cast::<std::ffi::c_void>(),
                    );
                    // Running out of memory, or out of nested C calls, fails here.
                    let status = ffi::lua_pcall(state, 1, 1, 0);
                    if status != ffi::LUA_OK {
                        let text = text_at_top(state);
                        ffi::lua_settop(state, top);
                        return Err(if status == ffi::LUA_ERRMEM {
                            mlua::Error::MemoryError(text)
                        } else {
                            mlua::Error::RuntimeError(text)
                        });
                    }
                    n += 1;
                }
                Some(Me::Nil) => {
                    ffi::lua_pushnil(state);
                    n += 1;
                }
            }
            if let Some(number) = args.number {
                ffi::lua_pushinteger(state, number);
                n += 1;
            }
            let wanted = c_int::from(result);
            let status = ffi::lua_pcall(state, n, wanted, top + 1);
            if status == ffi::LUA_OK && !result {
                ffi::lua_settop(state, top);
                return Ok(Value::Nil);
            }
            let out = match status {
                ffi::LUA_OK => self.take(state),
                ffi::LUA_ERRMEM => {
                    let text = text_at_top(state);
                    Err(mlua::Error::MemoryError(text))
                }
                _ => match self.take(state) {
                    Ok(Value::Error(e)) => Err(*e),
                    Ok(Value::String(s)) => Err(mlua::Error::RuntimeError(s.to_string_lossy())),
                    // Only a userdata the handler left (every other value became text):
                    // named by its kind, as `luaL_tolstring` would, never by address.
                    Ok(other) => Err(mlua::Error::RuntimeError(format!(
                        "{}: 0x0",
                        other.type_name()
                    ))),
                    Err(e) => Err(e),
                },
            };
            ffi::lua_settop(state, top);
            out
        }
    }

    /// The value on top of `state` as mlua sees it (an error raised by a Rust function
    /// becomes that `mlua::Error`), handed over through the slot.
    ///
    /// # Safety
    /// `state` is the main thread with a value on top, which this pops.
    unsafe fn take(&self, state: *mut ffi::lua_State) -> mlua::Result<Value> {
        let slot = self.slot.borrow();
        // SAFETY: the contract; `slot` is an existing integer key of the registry.
        unsafe {
            match ffi::lua_type(state, -1) {
                ffi::LUA_TNIL => {
                    ffi::lua_pop(state, 1);
                    return Ok(Value::Nil);
                }
                ffi::LUA_TNUMBER => {
                    let mut whole = 0;
                    let n = ffi::lua_tointegerx(state, -1, &mut whole);
                    let value = if whole != 0 {
                        Value::Integer(n)
                    } else {
                        Value::Number(ffi::lua_tonumberx(state, -1, std::ptr::null_mut()))
                    };
                    ffi::lua_pop(state, 1);
                    return Ok(value);
                }
                _ => {}
            }
            ffi::lua_rawseti(state, ffi::LUA_REGISTRYINDEX, slot.id().into());
        }
        let value = self.main.lua().registry_value::<Value>(&slot);
        // The slot lets go of what it held (it never holds nil).
        // SAFETY: as above.
        unsafe {
            ffi::lua_pushboolean(state, 1);
            ffi::lua_rawseti(state, ffi::LUA_REGISTRYINDEX, slot.id().into());
        }
        value
    }
}

/// The text of the value on top of `state` (a memory error's message).
///
/// # Safety
/// `state` is a live thread with a value on top.
unsafe fn text_at_top(state: *mut ffi::lua_State) -> String {
    // SAFETY: the contract; `lua_tolstring` on a string converts nothing.
    unsafe {
        if ffi::lua_type(state, -1) != ffi::LUA_TSTRING {
            return String::new();
        }
        let mut len = 0usize;
        let p = ffi::lua_tolstring(state, -1, &mut len);
        String::from_utf8_lossy(std::slice::from_raw_parts(p.cast::<u8>(), len)).into_owned()
    }
}

/// Make the table of the [`TokenOut`] a light userdata (the one argument) points at.
unsafe extern "C-unwind" fn token_table(state: *mut ffi::lua_State) -> c_int {
    // SAFETY: `Caller::call` calls this in a protected call with a pointer to a token
    // that outlives it; a C function has room for the pushes (`LUA_MINSTACK`). Running
    // out of memory raises a Lua error, which the protected call catches; nothing here
    // needs dropping. The token's table is left on top, the one result.
    unsafe {
        let me = &*ffi::lua_touserdata(state, 1).cast::<TokenOut>();
        me.push_alone(state);
    }
    1
}

/// The message handler of a hook call: an error raised by a Rust function (a userdata
/// mlua made) stays as it is; any other error value becomes its text, as mlua's own
/// handler makes it (without the traceback, which the host cuts off anyway).
unsafe extern "C-unwind" fn handler(state: *mut ffi::lua_State) -> c_int {
    // SAFETY: Lua calls this with the error on top; `luaL_tolstring` may raise (a
    // `__tostring` that fails), which Lua reports as an error in the handler.
    unsafe {
        if ffi::lua_checkstack(state, 2) != 0 && ffi::lua_type(state, -1) != ffi::LUA_TUSERDATA {
            ffi::luaL_tolstring(state, -1, std::ptr::null_mut());
        }
    }
    1
}

/// Registry keys for a script's hooks, to call them with [`Caller::call`].
pub(in crate::script) fn hook_keys(
    lua: &Lua,
    hooks: &[Option<Function>; 5],
) -> mlua::Result<[Option<RegistryKey>; 5]> {
    let mut keys: [Option<RegistryKey>; 5] = [None, None, None, None, None];
    for (key, hook) in keys.iter_mut().zip(hooks) {
        if let Some(f) = hook {
            *key = Some(lua.create_registry_value(f)?);
        }
    }
    Ok(keys)
}
