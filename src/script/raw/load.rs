//! Making a sandbox's state and parsing a script into it.
//!
//! The state is made with the debug library's five functions the prelude needs (the
//! `debug` global is gone before anyone gets the state), and a script is parsed a piece at a
//! time (so the load's clock is read between pieces).

use mlua::{Function, Lua, LuaOptions, StdLib, Table, Value, ffi};

/// The five functions of Lua's debug library the prelude keeps (in locals no script can
/// reach) to find and restore a script's state between moves.
pub(in crate::script) struct Inspect {
    pub getupvalue: Function,
    pub setupvalue: Function,
    pub getmetatable: Function,
    pub setmetatable: Function,
    pub getinfo: Function,
}

/// A new state with the `string`, `table` and `math` libraries, and the five functions
/// of the debug library the prelude needs. The `debug` global is gone before the state
/// is returned: no script can reach the library.
pub(in crate::script) fn new_lua_with_inspect() -> mlua::Result<(Lua, Inspect)> {
    // SAFETY: mlua calls opening the debug library unsafe because a script holding it
    // could break the host's invariants (read or replace the metatables and upvalues of
    // mlua's own values). The library's table is taken out of the globals below, before
    // the state is handed to anyone, and its five functions only go to the prelude, which
    // keeps them in locals; scripts are loaded as text only (no binary chunks), with no
    // `load` at all.
    let lua = unsafe {
        Lua::unsafe_new_with(
            StdLib::STRING | StdLib::TABLE | StdLib::MATH | StdLib::DEBUG,
            LuaOptions::default(),
        )
    };
    let globals = lua.globals();
    let debug: Table = globals.get("debug")?;
    globals.raw_set("debug", Value::Nil)?;
    let inspect = Inspect {
        getupvalue: debug.get("getupvalue")?,
        setupvalue: debug.get("setupvalue")?,
        getmetatable: debug.get("getmetatable")?,
        setmetatable: debug.get("setmetatable")?,
        getinfo: debug.get("getinfo")?,
    };
    Ok((lua, inspect))
}

/// The pieces Lua's parser is fed, in bytes: the clock is read between two pieces.
const PARSE_PIECE: usize = 1024;

/// A script's source as Lua's parser reads it, a piece at a time, until a deadline.
struct Feed<'a> {
    source: &'a [u8],
    at: usize,
    deadline: Option<std::time::Instant>,
    /// Whether the deadline came before the end of the source.
    cut: bool,
}

/// Gives Lua's parser the next piece of a [`Feed`], or nothing (the end of the chunk)
/// once its deadline has passed.
unsafe extern "C-unwind" fn feed_piece(
    _: *mut ffi::lua_State,
    data: *mut std::ffi::c_void,
    size: *mut usize,
) -> *const std::ffi::c_char {
    // SAFETY: `data` is the `Feed` that `parse` passes to `lua_load`, alive and not
    // otherwise borrowed while `lua_load` runs; `size` is Lua's.
    unsafe {
        let feed = &mut *data.cast::<Feed<'_>>();
        let rest = feed.source.len().saturating_sub(feed.at);
        if rest == 0
            || feed
                .deadline
                .is_some_and(|d| std::time::Instant::now() >= d)
        {
            feed.cut = rest > 0;
            *size = 0;
            return std::ptr::null();
        }
        let n = rest.min(PARSE_PIECE);
        let piece = feed.source.as_ptr().add(feed.at);
        feed.at += n;
        *size = n;
        piece.cast()
    }
}

/// A parsed script, or where parsing was stopped by the deadline.
pub(in crate::script) enum Parsed {
    /// The chunk, or Lua's message of a syntax error (if it gave one).
    Done(Result<Function, Option<String>>),
    /// Cut at this byte of the source.
    Cut(usize),
}

/// Parse `source` (text only, never a binary chunk) as a chunk named `@name` whose `_ENV`
/// is `env`, fed a piece at a time and given no more once `deadline` has passed.
pub(in crate::script) fn parse(
    lua: &Lua,
    source: &str,
    name: &str,
    env: &Table,
    deadline: Option<std::time::Instant>,
) -> mlua::Result<Parsed> {
    let chunk_name = std::ffi::CString::new(format!("@{name}"))
        .unwrap_or_else(|_| std::ffi::CString::from(c"@script"));
    let mut feed = Feed {
        source: source.as_bytes(),
        at: 0,
        deadline,
        cut: false,
    };
    let data: *mut Feed<'_> = &raw mut feed;
    // SAFETY: the closure runs in protected mode with `env` at stack index 1; `lua_load`
    // reads only through `feed` (alive for the call, and not touched by anything else
    // until it returns) and is given mode "t" (no binary chunks); the closure leaves
    // exactly two values: the chunk and nil, or nil and the error message.
    let (chunk, error): (Value, Value) = unsafe {
        lua.exec_raw(env, |state| {
            let status = ffi::lua_load(
                state,
                feed_piece,
                data.cast(),
                chunk_name.as_ptr(),
                c"t".as_ptr(),
            );
            if status == ffi::LUA_OK {
                // The main chunk's only upvalue is its `_ENV`.
                ffi::lua_pushvalue(state, 1);
                ffi::lua_setupvalue(state, -2, 1);
                ffi::lua_pushnil(state);
            } else {
                ffi::lua_pushnil(state);
                ffi::lua_insert(state, -2);
            }
            ffi::lua_remove(state, 1);
        })?
    };
    if feed.cut {
        return Ok(Parsed::Cut(feed.at.min(source.len())));
    }
    Ok(Parsed::Done(match (chunk, error) {
        (Value::Function(f), _) => Ok(f),
        (_, Value::String(m)) => Err(Some(m.to_string_lossy())),
        _ => Err(None),
    }))
}
