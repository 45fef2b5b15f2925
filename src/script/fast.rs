//! Fast entries for the `ctx` functions scripts call most.
//!
//! A function made with mlua's `create_function` pays for mlua's general machinery on
//! every call: a reserved error object, a panic guard, each argument turned into a
//! `Value` and back, the results pushed through conversions. For a `ctx:token(x, y)` that
//! is several times the work of the call itself, and scripts call `ctx` in their inner
//! loops. Each function here is a raw C function with the same behaviour as its general
//! twin ([`super::ctx::make`]), which stays its first upvalue:
//!
//! - it reads plain integer arguments straight off the Lua stack, charges the budget and
//!   runs the same Rust body as the general function (`ctx.rs`), then pushes plain
//!   results;
//! - anything else — a float, a string, a missing argument — is passed untouched to the
//!   general function, which converts it (or refuses it) with the usual message;
//! - an error of the body is kept in the [`CallSlot`] and the general function is called to
//!   raise it, so every error reaches the script and the host in mlua's own form.
//!
//! Invariant: nothing that needs dropping is alive in a frame of this module when Lua
//! may jump out of it (raising an error, running out of memory): the Rust work runs in
//! [`run`], which returns plain data, before anything is pushed; a panic in it is caught
//! and raised as an error.

use std::cell::Cell;
use std::ffi::{c_int, c_void};
use std::rc::Rc;

use mlua::{Lua, Table, ffi};

use super::api::CTX_FIELDS;
use super::ctx::{self, CallSlot, NameOut, Spec, TokenOut};
use super::place::CALLING;
use super::sandbox::ScriptBudget;

/// What a fast entry reaches: the state's slot and budget. Owned by the Lua state (its
/// app data), so it lives as long as any function pointing at it.
struct Env {
    slot: Rc<CallSlot>,
    budget: Rc<ScriptBudget>,
    /// The state's `Lua` handle as mlua keeps it for raw C functions (inside the
    /// state's own data, so it lives as long as the state), found at the first call:
    /// finding it is a registry lookup, more than a short call's own work.
    lua: Cell<*const Lua>,
}

/// The [`Env`] box in a state's app data, kept there only to live as long as the state.
struct EnvBox {
    _env: Box<Env>,
}

/// A result a fast entry pushes: plain data only.
enum Out {
    Nothing,
    Bool(bool),
    Int(i64),
    Pair(Option<(i32, i32)>),
    Token(Option<TokenOut>),
    OptInt(Option<i64>),
    Name(Option<NameOut>),
}

/// One fast `ctx` function: its name, how many integer arguments it takes after `ctx`,
/// whether a spec table follows them (`ctx:spawn`), and its body.
trait Method {
    const NAME: &'static str;
    const ARGS: usize;
    const SPEC: bool = false;
    fn body(lua: &Lua, slot: &CallSlot, a: [i64; 4], spec: Option<Spec>) -> mlua::Result<Out>;
}

macro_rules! method {
    ($ty:ident, $name:literal, $args:literal, |$lua:pat_param, $slot:pat_param, $a:pat_param| $body:expr) => {
        struct $ty;
        impl Method for $ty {
            const NAME: &'static str = $name;
            const ARGS: usize = $args;
            fn body(
                $lua: &Lua,
                $slot: &CallSlot,
                $a: [i64; 4],
                _: Option<Spec>,
            ) -> mlua::Result<Out> {
                $body
            }
        }
    };
}

/// `ctx:spawn(x, y, spec)` for a spec table of plain fields (no metatable: a table frozen
/// at load keeps its fields elsewhere, which the general function finds).
struct Spawn;
impl Method for Spawn {
    const NAME: &'static str = "spawn";
    const ARGS: usize = 2;
    const SPEC: bool = true;
    fn body(
        lua: &Lua,
        s: &CallSlot,
        [x, y, ..]: [i64; 4],
        spec: Option<Spec>,
    ) -> mlua::Result<Out> {
        let Some(spec) = spec else {
            return Err(mlua::Error::RuntimeError(
                "ctx:spawn: no spec was read (a bug: please report it)".into(),
            ));
        };
        ctx::spawn(lua, s, x, y, ctx::Spawned::Spec(spec)).map(Out::Bool)
    }
}

method!(Width, "width", 0, |_, s, _| ctx::width(s)
    .map(|n| Out::Int(n.into())));
method!(Height, "height", 0, |_, s, _| ctx::height(s)
    .map(|n| Out::Int(n.into())));
method!(OnBoard, "on_board", 2, |_, s, [x, y, ..]| ctx::on_board(
    s, x, y
)
.map(Out::Bool));
method!(TokenAt, "token", 2, |_, s, [x, y, ..]| ctx::token_at(
    s, x, y
)
.map(Out::Token));
method!(Empty, "empty", 2, |_, s, [x, y, ..]| ctx::empty(s, x, y)
    .map(Out::Bool));
method!(SeatAt, "seat_at", 2, |_, s, [x, y, ..]| ctx::seat_at(
    s, x, y
)
.map(Out::OptInt));
method!(ValueAt, "value_at", 2, |_, s, [x, y, ..]| ctx::value_at(
    s, x, y
)
.map(Out::OptInt));
method!(TypeAt, "type_at", 2, |_, s, [x, y, ..]| ctx::type_at(
    s, x, y
)
.map(Out::Name));
method!(Score, "score", 1, |lua, s, [n, ..]| ctx::score(lua, s, n)
    .map(Out::Int));
method!(TargetCount, "target_count", 0, |_, s, _| {
    ctx::target_count(s).map(|n| Out::Int(i64::try_from(n).unwrap_or(i64::MAX)))
});
method!(Target, "target", 1, |_, s, [i, ..]| ctx::target(s, i)
    .map(Out::Pair));
method!(Damage, "damage", 3, |lua, s, [x, y, n, _]| ctx::damage(
    lua, s, x, y, n
)
.map(Out::Bool));
method!(SetValue, "set_value", 3, |lua, s, [x, y, v, _]| {
    ctx::set_value(lua, s, x, y, v).map(Out::Bool)
});
method!(Move, "move", 4, |lua, s, [x, y, tx, ty]| {
    ctx::move_token(lua, s, x, y, tx, ty).map(Out::Bool)
});
method!(Remove, "remove", 2, |lua, s, [x, y, ..]| ctx::remove(
    lua, s, x, y
)
.map(Out::Bool));
method!(ExtraTurn, "extra_turn", 1, |lua, s, [n, ..]| {
    ctx::extra_turn(lua, s, n).map(|()| Out::Nothing)
});
method!(AddScore, "add_score", 2, |lua, s, [n, amount, ..]| {
    ctx::add_score(lua, s, n, amount).map(|()| Out::Nothing)
});
method!(Random, "random", 1, |lua, s, [n, ..]| ctx::random(
    lua, s, n
)
.map(Out::Int));

/// Give each function above a fast entry in `methods`, in place of its general twin.
pub(super) fn install(
    lua: &Lua,
    methods: &Table,
    slot: &Rc<CallSlot>,
    budget: &Rc<ScriptBudget>,
) -> mlua::Result<()> {
    let env = Box::new(Env {
        slot: Rc::clone(slot),
        budget: Rc::clone(budget),
        lua: Cell::new(std::ptr::null()),
    });
    let env_ptr: *const Env = &raw const *env;
    ctx::keep_keys(lua)?;
    // The box moves into the state's app data; what it points at does not move.
    lua.set_app_data(EnvBox { _env: env });
    // SAFETY: the running thread is the state's main thread (scripts have no
    // coroutines); its extra space is a pointer-sized block Lua keeps for the host, which
    // nothing else here uses.
    unsafe {
        lua.exec_raw::<()>((), |state| {
            ffi::lua_getextraspace(state)
                .cast::<*const Env>()
                .write(env_ptr);
        })?;
    }
    let entries: [(&str, ffi::lua_CFunction); 19] = [
        (Width::NAME, entry::<Width>),
        (Height::NAME, entry::<Height>),
        (OnBoard::NAME, entry::<OnBoard>),
        (TokenAt::NAME, entry::<TokenAt>),
        (Empty::NAME, entry::<Empty>),
        (SeatAt::NAME, entry::<SeatAt>),
        (ValueAt::NAME, entry::<ValueAt>),
        (TypeAt::NAME, entry::<TypeAt>),
        (Score::NAME, entry::<Score>),
        (TargetCount::NAME, entry::<TargetCount>),
        (Target::NAME, entry::<Target>),
        (Damage::NAME, entry::<Damage>),
        (SetValue::NAME, entry::<SetValue>),
        (Move::NAME, entry::<Move>),
        (Remove::NAME, entry::<Remove>),
        (ExtraTurn::NAME, entry::<ExtraTurn>),
        (AddScore::NAME, entry::<AddScore>),
        (Random::NAME, entry::<Random>),
        (Spawn::NAME, entry::<Spawn>),
    ];
    // The per-call fields: read from the slot when a script looks one up (the methods
    // table is not reachable by scripts, so neither is this metatable).
    let fields = lua.create_table()?;
    // SAFETY: as for the methods below: the light userdata becomes the one upvalue.
    let index = unsafe {
        lua.exec_raw::<mlua::Function>((), |state| {
            ffi::lua_pushlightuserdata(state, env_ptr.cast_mut().cast::<c_void>());
            ffi::lua_pushcclosure(state, field, 1);
        })?
    };
    fields.raw_set("__index", index)?;
    fields.raw_set("__metatable", false)?;
    methods.set_metatable(Some(fields))?;
    for (name, function) in entries {
        let general: mlua::Function = methods.raw_get(name)?;
        // SAFETY: the stack holds the general function; the light userdata and the keys
        // table above it become, with the function, the closure's three upvalues
        // (`lua_pushcclosure` pops them and pushes the closure, the one result; running
        // out of memory is caught by the protected call around it). `env_ptr` stays
        // valid while the state lives. Without its keys table (which `keep_keys` above
        // made) nothing is made: `push` reads upvalue 3 as that table.
        let fast = unsafe {
            lua.exec_raw::<mlua::Value>(general, |state| {
                ffi::lua_pushlightuserdata(state, env_ptr.cast_mut().cast::<c_void>());
                if ctx::push_keys(state).is_none() {
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
        methods.raw_set(name, fast)?;
    }
    Ok(())
}

/// The C function of method `M`: upvalue 1 is its general twin, 2 the [`Env`], 3 the
/// state's keys table (`ctx::keep_keys`).
unsafe extern "C-unwind" fn entry<M: Method>(state: *mut ffi::lua_State) -> c_int {
    // The result is written in place and read field by field: moving it (and an
    // `mlua::Result` around it) between frames costs more than the call's own work.
    let mut out = Out::Nothing;
    // SAFETY: Lua calls this with a live thread and the two upvalues `install` gave it.
    // `run` holds nothing across a jump; what it leaves in `out` is plain data.
    unsafe {
        if run::<M>(state, &mut out) {
            push(state, &out)
        } else {
            general(state)
        }
    }
}

/// Read the arguments, charge, run the body: true with its result in `out`, or false
/// to let the general function act (arguments it must convert, or an error kept in the
/// slot to raise).
///
/// # Safety
/// As for [`entry`].
unsafe fn run<M: Method>(state: *mut ffi::lua_State, out: &mut Out) -> bool {
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
        let env = env_of(state, 2);
        let lua = match env.lua.get() {
            known if !known.is_null() => &*known,
            _ => {
                let lua: *const Lua = Lua::get_or_init_from_ptr(state);
                env.lua.set(lua);
                &*lua
            }
        };
        let outer = CALLING.with(|c| c.replace(state));
        let done =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                match ctx::charge_call(lua, &env.budget, M::NAME)
                    .and_then(|()| M::body(lua, &env.slot, a, spec))
                {
                    Ok(result) => {
                        *out = result;
                        true
                    }
                    Err(error) => {
                        env.slot.stash(error);
                        false
                    }
                }
            }));
        CALLING.with(|c| c.set(outer));
        done.unwrap_or_else(|_| {
            env.slot.stash(mlua::Error::RuntimeError(format!(
                "ctx:{}: the host failed inside this call (a bug: please report it)",
                M::NAME
            )));
            false
        })
    }
}

/// The spec table at `index` as plain data, or None to let the general function read it:
/// a table without a metatable whose `seat` and `value` are integers or nil and whose
/// `type` is a UTF-8 string of at most [`ctx::MAX_NAME`] bytes, or nil.
///
/// # Safety
/// As for [`entry`] (upvalue 3 is the keys table). Only raw reads and pops run (no
/// error is raised), and the name is copied after the last of them.
unsafe fn read_spec(state: *mut ffi::lua_State, index: c_int) -> Option<Spec> {
    // SAFETY: the contract; a C function has room for the three values and a metatable.
    unsafe {
        if ffi::lua_type(state, index) != ffi::LUA_TTABLE {
            return None;
        }
        if ffi::lua_getmetatable(state, index) != 0 {
            ffi::lua_pop(state, 1);
            return None;
        }
        let keys = ctx::Keys::at(ffi::lua_upvalueindex(3));
        let top = ffi::lua_gettop(state);
        for key in [ctx::Key::Seat, ctx::Key::Value, ctx::Key::Type] {
            ctx::push_key(state, keys, key);
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
                (len <= ctx::MAX_NAME)
                    .then(|| std::str::from_utf8(bytes).ok().map(|s| Some(s.to_string())))
                    .flatten()
            }
            _ => None,
        };
        ffi::lua_settop(state, top);
        Some(Spec::plain(seat?, value?, kind?))
    }
}

/// The [`Env`] of the running entry: from the thread's extra space, where `install` put
/// it (reading it is one load), or else from the entry's upvalue `upvalue`.
///
/// # Safety
/// `state` is a live thread running an entry `install` made, whose upvalue `upvalue` is
/// its [`Env`]; the returned reference does not outlive the call.
unsafe fn env_of<'a>(state: *mut ffi::lua_State, upvalue: c_int) -> &'a Env {
    // SAFETY: the contract; the extra space holds null or the state's `Env`, which lives
    // as long as the state.
    unsafe {
        let known = ffi::lua_getextraspace(state).cast::<*const Env>().read();
        if known.is_null() {
            &*ffi::lua_touserdata(state, ffi::lua_upvalueindex(upvalue)).cast::<Env>()
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
                token.push(state, ctx::Keys::at(ffi::lua_upvalueindex(3)));
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
                name.push(state, ctx::Keys::at(ffi::lua_upvalueindex(3)));
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
unsafe extern "C-unwind" fn field(state: *mut ffi::lua_State) -> c_int {
    // SAFETY: Lua calls this with a live thread, the upvalue `install` gave it and two
    // arguments; reading them raises no error, and one push fits in a C function's room.
    unsafe {
        let env = env_of(state, 1);
        let mut len = 0usize;
        let key = if ffi::lua_type(state, 2) == ffi::LUA_TSTRING {
            let p = ffi::lua_tolstring(state, 2, &mut len);
            std::slice::from_raw_parts(p.cast::<u8>(), len)
        } else {
            &[]
        };
        let f = env.slot.fields.get();
        // The names are `api::CTX_FIELDS`, in its order (what the API description is checked
        // against).
        let value = match CTX_FIELDS.iter().position(|name| name.as_bytes() == key) {
            Some(0) => Some(i64::from(f.seat)),
            Some(1) => Some(i64::from(f.opponent)),
            Some(2) => f.at.map(|(x, _)| i64::from(x)),
            Some(3) => f.at.map(|(_, y)| i64::from(y)),
            _ => None,
        };
        match value {
            Some(n) => ffi::lua_pushinteger(state, n),
            None => ffi::lua_pushnil(state),
        }
        1
    }
}
