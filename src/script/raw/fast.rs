//! The C side of the fast entries for the `ctx` functions scripts call most.
//!
//! A function made with mlua's `create_function` pays for mlua's general machinery on
//! every call: a reserved error object, a panic guard, each argument turned into a
//! `Value` and back, the results pushed through conversions. For a `ctx:token(x, y)` that
//! is several times the work of the call itself, and scripts call `ctx` in their inner
//! loops. Each entry made here is a raw C function with the same behaviour as its general
//! twin, which stays its first upvalue:
//!
//! - it reads plain integer arguments straight off the Lua stack and runs the method's
//!   Rust body ([`Method::body`], which charges the budget), then pushes plain results;
//! - anything else — a float, a string, a missing argument — is passed untouched to the
//!   general function, which converts it (or refuses it) with the usual message;
//! - an error of the body is handed to the environment ([`Env::stash`]) and the general
//!   function is called to raise it, so every error reaches the script and the host in
//!   mlua's own form.
//!
//! Invariant: nothing that needs dropping is alive in a frame of this module when Lua
//! may jump out of it (raising an error, running out of memory): the Rust work runs in
//! [`run`], which returns plain data, before anything is pushed; a panic in it is caught
//! and raised as an error.

use std::cell::Cell;
use std::ffi::{c_int, c_void};
use std::marker::PhantomData;

use mlua::{Lua, Table, ffi};

use super::place::while_fast_call;
use super::stack::{self, Key, Keys, NameOut, TokenOut};

/// The longest name (of a token type) a `ctx` call takes, in bytes: far longer than any
/// id, and short enough that looking it up costs nothing.
pub(in crate::script) const MAX_NAME: usize = 256;

/// A result a fast entry pushes: plain data only.
pub(in crate::script) enum Out {
    Nothing,
    Bool(bool),
    Int(i64),
    Pair(Option<(i32, i32)>),
    Token(Option<TokenOut>),
    OptInt(Option<i64>),
    Name(Option<NameOut>),
}

/// `ctx:spawn`'s spec table as a fast entry reads it: a table without a metatable whose
/// `seat` and `value` are integers or nil and whose `type` is a UTF-8 string of at most
/// [`MAX_NAME`] bytes, or nil.
pub(in crate::script) struct PlainSpec {
    pub seat: Option<i64>,
    pub value: Option<i64>,
    pub kind: Option<String>,
}

/// What the fast entries of a state reach (its call slot and budget): owned by the state.
pub(in crate::script) trait Env: 'static {
    /// The per-call field `key` of `ctx` (`ctx.seat`, …), or nil.
    fn field(&self, key: &[u8]) -> Option<i64>;
    /// Keep a body's error for the general function to raise.
    fn stash(&self, error: mlua::Error);
}

/// One fast `ctx` function: its name, how many integer arguments it takes after `ctx`,
/// whether a spec table follows them (`ctx:spawn`), and its body (which charges the
/// call, then acts).
pub(in crate::script) trait Method<E: Env> {
    const NAME: &'static str;
    const ARGS: usize;
    const SPEC: bool = false;
    fn body(lua: &Lua, env: &E, a: [i64; 4], spec: Option<PlainSpec>) -> mlua::Result<Out>;
}

/// The fast entry of one method, for [`install`].
pub(in crate::script) struct Entry<E> {
    name: &'static str,
    function: ffi::lua_CFunction,
    env: PhantomData<fn(&E)>,
}

impl<E: Env> Entry<E> {
    /// The entry of method `M`.
    pub fn of<M: Method<E>>() -> Entry<E> {
        Entry {
            name: M::NAME,
            function: entry::<E, M>,
            env: PhantomData,
        }
    }

    /// The method's name.
    pub fn name(&self) -> &'static str {
        self.name
    }
}

/// What the entries of a state reach: its environment, and the state's `Lua` handle as
/// mlua keeps it for raw C functions (inside the state's own data, so it lives as long as
/// the state), found at the first call: finding it is a registry lookup, more than a
/// short call's own work.
struct Held<E> {
    env: E,
    lua: Cell<*const Lua>,
}

/// In a state's app data once its fast entries are installed.
struct Installed;

/// The [`Held`] box in a state's app data, kept there only to live as long as the state.
struct HeldBox<E> {
    _held: Box<Held<E>>,
}

/// Give each method of `entries` a fast entry in `methods` (in place of its general
/// twin, found there under the same name), reaching `env`. The state's names must be
/// kept already (`stack::keep_names`). Once per state: a second install is refused.
pub(in crate::script) fn install<E: Env>(
    lua: &Lua,
    methods: &Table,
    env: E,
    entries: &[Entry<E>],
) -> mlua::Result<()> {
    // Lua does not initialise a state's extra space, so the mark that the entries are
    // installed is kept in the state's app data.
    if lua.app_data_ref::<Installed>().is_some() {
        return Err(mlua::Error::RuntimeError(
            "ctx: the fast entries were installed twice (a bug: please report it)".into(),
        ));
    }
    lua.set_app_data(Installed);
    let held = Box::new(Held {
        env,
        lua: Cell::new(std::ptr::null()),
    });
    let held_ptr: *const Held<E> = &raw const *held;
    // The box moves into the state's app data; what it points at does not move.
    lua.set_app_data(HeldBox { _held: held });
    // SAFETY: as above; this writes the pointer to the box's contents, which live as long
    // as the state (its app data).
    unsafe {
        lua.exec_raw::<()>((), |state| {
            ffi::lua_getextraspace(state)
                .cast::<*const Held<E>>()
                .write(held_ptr);
        })?;
    }
    // The per-call fields: read from the environment when a script looks one up (the
    // methods table is not reachable by scripts, so neither is this metatable).
    let fields = lua.create_table()?;
    // SAFETY: the light userdata becomes the closure's one upvalue (`lua_pushcclosure`
    // pops it and pushes the closure, the one result; running out of memory is caught by
    // the protected call around it); `held_ptr` stays valid while the state lives.
    let index = unsafe {
        lua.exec_raw::<mlua::Function>((), |state| {
            ffi::lua_pushlightuserdata(state, held_ptr.cast_mut().cast::<c_void>());
            ffi::lua_pushcclosure(state, field::<E>, 1);
        })?
    };
    fields.raw_set("__index", index)?;
    fields.raw_set("__metatable", false)?;
    methods.set_metatable(Some(fields))?;
    for entry in entries {
        let general: mlua::Function = methods.raw_get(entry.name)?;
        let function = entry.function;
        // SAFETY: the stack holds the general function; the light userdata and the keys
        // table above it become, with the function, the closure's three upvalues
        // (`lua_pushcclosure` pops them and pushes the closure, the one result; running
        // out of memory is caught by the protected call around it). `held_ptr` stays
        // valid while the state lives. Without its keys table nothing is made: the entry
        // reads upvalue 3 as that table.
        let fast = unsafe {
            lua.exec_raw::<mlua::Value>(general, |state| {
                ffi::lua_pushlightuserdata(state, held_ptr.cast_mut().cast::<c_void>());
                if stack::push_keys(state).is_none() {
                    ffi::lua_settop(state, 0);
                    ffi::lua_pushnil(state);
                    return;
                }
                ffi::lua_pushcclosure(state, function, 3);
            })?
        };
        let mlua::Value::Function(fast) = fast else {
            return Err(mlua::Error::RuntimeError(
                "ctx: the field names were not kept".into(),
            ));
        };
        methods.raw_set(entry.name, fast)?;
    }
    Ok(())
}

/// The C function of method `M`: upvalue 1 is its general twin, 2 the [`Held`]
/// environment, 3 the state's keys table.
unsafe extern "C-unwind" fn entry<E: Env, M: Method<E>>(state: *mut ffi::lua_State) -> c_int {
    // The result is written in place and read field by field: moving it (and an
    // `mlua::Result` around it) between frames costs more than the call's own work.
    let mut out = Out::Nothing;
    // SAFETY: Lua calls this with a live thread and the upvalues `install` gave it.
    // `run` holds nothing across a jump; what it leaves in `out` is plain data.
    unsafe {
        if run::<E, M>(state, &mut out) {
            push(state, &out)
        } else {
            general(state)
        }
    }
}

/// Read the arguments, run the body: true with its result in `out`, or false to let the
/// general function act (arguments it must convert, or an error stashed to raise).
///
/// # Safety
/// As for [`entry`].
unsafe fn run<E: Env, M: Method<E>>(state: *mut ffi::lua_State, out: &mut Out) -> bool {
    // SAFETY: the contract; reading stack slots below the top and the upvalues never
    // raises an error.
    unsafe {
        let Ok(wanted) = c_int::try_from(M::ARGS) else {
            return false;
        };
        if ffi::lua_gettop(state) < 1 + wanted {
            return false;
        }
        let mut a = [0i64; 4];
        for (i, slot) in a.iter_mut().enumerate().take(M::ARGS) {
            let Ok(i) = c_int::try_from(i) else {
                return false;
            };
            let index = i + 2;
            if ffi::lua_isinteger(state, index) == 0 {
                return false;
            }
            *slot = ffi::lua_tointegerx(state, index, std::ptr::null_mut());
        }
        let spec = if M::SPEC {
            match read_spec(state, wanted + 2) {
                Some(spec) => Some(spec),
                None => return false,
            }
        } else {
            None
        };
        let held = env_of::<E>(state, 2);
        let lua = match held.lua.get() {
            known if !known.is_null() => &*known,
            _ => {
                let lua: *const Lua = Lua::get_or_init_from_ptr(state);
                held.lua.set(lua);
                &*lua
            }
        };
        let done = while_fast_call(state, || {
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                match M::body(lua, &held.env, a, spec) {
                    Ok(result) => {
                        *out = result;
                        true
                    }
                    Err(error) => {
                        held.env.stash(error);
                        false
                    }
                }
            }))
        });
        done.unwrap_or_else(|_| {
            // Nothing may unwind into Lua's C frames: a second panic is dropped too.
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                held.env.stash(mlua::Error::RuntimeError(format!(
                    "ctx:{}: the host failed inside this call (a bug: please report it)",
                    M::NAME
                )));
            }));
            false
        })
    }
}

/// The spec table at `index` as plain data, or None to let the general function read it:
/// a table without a metatable whose `seat` and `value` are integers or nil and whose
/// `type` is a UTF-8 string of at most [`MAX_NAME`] bytes, or nil.
///
/// # Safety
/// As for [`entry`] (upvalue 3 is the keys table). Only raw reads and pops run (no
/// error is raised), and the name is copied after the last of them.
unsafe fn read_spec(state: *mut ffi::lua_State, index: c_int) -> Option<PlainSpec> {
    // SAFETY: the contract; a C function has room for the three values and a metatable.
    unsafe {
        if ffi::lua_type(state, index) != ffi::LUA_TTABLE {
            return None;
        }
        if ffi::lua_getmetatable(state, index) != 0 {
            ffi::lua_pop(state, 1);
            return None;
        }
        let keys = Keys::at(ffi::lua_upvalueindex(3));
        let top = ffi::lua_gettop(state);
        for key in [Key::Seat, Key::Value, Key::Type] {
            stack::push_key(state, keys, key);
            ffi::lua_rawget(state, index);
        }
        let int = |at: c_int| match ffi::lua_type(state, at) {
            ffi::LUA_TNIL => Some(None),
            _ if ffi::lua_isinteger(state, at) != 0 => {
                Some(Some(ffi::lua_tointegerx(state, at, std::ptr::null_mut())))
            }
            _ => None,
        };
        let seat = int(top + 1);
        let value = int(top + 2);
        let kind = match ffi::lua_type(state, top + 3) {
            ffi::LUA_TNIL => Some(None),
            ffi::LUA_TSTRING => {
                let mut len = 0usize;
                let p = ffi::lua_tolstring(state, top + 3, &mut len);
                let bytes = std::slice::from_raw_parts(p.cast::<u8>(), len);
                (len <= MAX_NAME)
                    .then(|| std::str::from_utf8(bytes).ok().map(|s| Some(s.to_string())))
                    .flatten()
            }
            _ => None,
        };
        ffi::lua_settop(state, top);
        Some(PlainSpec {
            seat: seat?,
            value: value?,
            kind: kind?,
        })
    }
}

/// The [`Held`] environment of the running entry: from the thread's extra space, where
/// `install` put it (reading it is one load), or else from the entry's upvalue `upvalue`.
///
/// # Safety
/// `state` is a live thread running an entry `install::<E>` made, whose upvalue `upvalue`
/// is its [`Held`]; the returned reference does not outlive the call.
unsafe fn env_of<'a, E: Env>(state: *mut ffi::lua_State, upvalue: c_int) -> &'a Held<E> {
    // SAFETY: the contract; the extra space holds null or the state's `Held<E>` (install
    // runs once per state), which lives as long as the state.
    unsafe {
        let known = ffi::lua_getextraspace(state)
            .cast::<*const Held<E>>()
            .read();
        if known.is_null() {
            &*ffi::lua_touserdata(state, ffi::lua_upvalueindex(upvalue)).cast::<Held<E>>()
        } else {
            &*known
        }
    }
}

/// Push `out`: the number of results.
///
/// # Safety
/// As for [`entry`]; may raise a memory error.
unsafe fn push(state: *mut ffi::lua_State, out: &Out) -> c_int {
    // SAFETY: a C function has room for `LUA_MINSTACK` (20) values.
    unsafe {
        match out {
            Out::Nothing => 0,
            Out::Bool(b) => {
                ffi::lua_pushboolean(state, c_int::from(*b));
                1
            }
            Out::Int(n) => {
                ffi::lua_pushinteger(state, *n);
                1
            }
            Out::Pair(Some((x, y))) => {
                ffi::lua_pushinteger(state, (*x).into());
                ffi::lua_pushinteger(state, (*y).into());
                2
            }
            Out::Pair(None) => {
                ffi::lua_pushnil(state);
                ffi::lua_pushnil(state);
                2
            }
            Out::Token(Some(token)) => {
                // SAFETY: upvalue 3 is the keys table for as long as the closure lives.
                token.push(state, Keys::at(ffi::lua_upvalueindex(3)));
                1
            }
            Out::Token(None) | Out::OptInt(None) | Out::Name(None) => {
                ffi::lua_pushnil(state);
                1
            }
            Out::OptInt(Some(n)) => {
                ffi::lua_pushinteger(state, *n);
                1
            }
            Out::Name(Some(name)) => {
                // SAFETY: as for a token's table.
                name.push(state, Keys::at(ffi::lua_upvalueindex(3)));
                1
            }
        }
    }
}

/// Call the general function (upvalue 1) with this call's arguments: its results.
///
/// # Safety
/// As for [`entry`]; errors raised by the general function jump out of here.
unsafe fn general(state: *mut ffi::lua_State) -> c_int {
    // SAFETY: the contract; the function is pushed below the arguments and called with
    // all of them, leaving its results alone on the stack.
    unsafe {
        let n = ffi::lua_gettop(state);
        ffi::lua_pushvalue(state, ffi::lua_upvalueindex(1));
        ffi::lua_insert(state, 1);
        ffi::lua_call(state, n, ffi::LUA_MULTRET);
        ffi::lua_gettop(state)
    }
}

/// `ctx.seat`, `ctx.opponent`, `ctx.x`, `ctx.y`: the `__index` of the methods table,
/// called with (methods, key) for a key that is not a method.
unsafe extern "C-unwind" fn field<E: Env>(state: *mut ffi::lua_State) -> c_int {
    // SAFETY: Lua calls this with a live thread, the upvalue `install` gave it and two
    // arguments; reading them raises no error, and one push fits in a C function's room.
    // The key's bytes are read before anything else runs.
    unsafe {
        let held = env_of::<E>(state, 1);
        let mut len = 0usize;
        let key = if ffi::lua_type(state, 2) == ffi::LUA_TSTRING {
            let p = ffi::lua_tolstring(state, 2, &mut len);
            std::slice::from_raw_parts(p.cast::<u8>(), len)
        } else {
            &[]
        };
        // Nothing may unwind into Lua's C frames: a panic reads as nil.
        let value = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| held.env.field(key)));
        match value {
            Ok(Some(n)) => ffi::lua_pushinteger(state, n),
            Ok(None) | Err(_) => ffi::lua_pushnil(state),
        }
        1
    }
}
