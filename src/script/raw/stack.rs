//! Tables made straight on Lua's stack: a token's `{x, y, seat, value, type, card}`, a
//! cell's `{x, y}`, lists of them, and the names of token types and cards.
//!
//! Through mlua's API each table, each field and each string pushed under a memory cap is
//! a protected call of its own; here a whole value (or list) is made in one. The field
//! names and the catalog's names are kept once per state as Lua strings in a keys table
//! (pushing a kept string is a table read, where pushing a C string hashes it and looks it
//! up among the interned strings each time).
//!
//! Invariant: a push only pushes and raw-sets (no metamethod runs); running out of memory
//! raises a Lua error (a long jump) that the protected call around it catches, and no
//! frame of this module holds anything that needs dropping when it does.
//!
//! The keys table is kept in the registry, made with the state from the catalog; a fast
//! entry holds it as an upvalue.

use std::ffi::{CStr, c_int, c_void};

use mlua::{Lua, Table, ffi};

use crate::rules::{Cell as BoardCell, Token, TokenTypeId};

/// A field of a token or cell table (and of `ctx:spawn`'s spec: seat, value, type).
#[derive(Clone, Copy)]
pub(super) enum Key {
    X = 1,
    Y,
    Seat,
    Value,
    Type,
    Card,
}

impl Key {
    /// Every key, in the order of their numbers.
    const ALL: [Key; 6] = [Key::X, Key::Y, Key::Seat, Key::Value, Key::Type, Key::Card];

    fn name(self) -> &'static CStr {
        match self {
            Key::X => c"x",
            Key::Y => c"y",
            Key::Seat => c"seat",
            Key::Value => c"value",
            Key::Type => c"type",
            Key::Card => c"card",
        }
    }
}

/// The registry slot of a state's keys table (its address is the key).
static KEYS_SLOT: u8 = 0;

fn keys_slot() -> *const c_void {
    (&raw const KEYS_SLOT).cast()
}

/// Which name a kept name is: the keys table keeps the names of token types and cards
/// beside the field names, type number `n` (from 1) at `8 + 2n` and card number `n` at
/// `9 + 2n`. A host serves one catalog's content (its clones share it), so a number always
/// stands for the same name.
#[derive(Clone, Copy)]
enum Name {
    Type = 0,
    Card = 1,
}

/// The slot of the kept name `number` (from 1) of kind `name` in the keys table.
fn name_slot(name: Name, number: i64) -> ffi::lua_Integer {
    number.saturating_mul(2).saturating_add(8 + name as i64)
}

/// The number a name is kept under in the keys table: its index + 1.
fn number_of(index: usize) -> i64 {
    i64::try_from(index).map_or(i64::MAX, |i| i.saturating_add(1))
}

/// Keep the field names and the catalog's token type and card names (`types`, `cards`,
/// by index) as Lua strings in `lua`'s registry, for the tables made here.
pub(in crate::script) fn keep_names(lua: &Lua, types: &[&str], cards: &[&str]) -> mlua::Result<()> {
    let size = c_int::try_from(8 + 2 * types.len().max(cards.len()) + 2).unwrap_or(c_int::MAX);
    // SAFETY: a protected call gives room for the table, a key and a value, and catches
    // running out of memory; every push is followed by the raw set that pops it, and
    // `lua_rawsetp` pops the table. The names' bytes are live for the call.
    unsafe {
        lua.exec_raw::<()>((), |state| {
            ffi::lua_createtable(state, size, 0);
            for key in Key::ALL {
                ffi::lua_pushstring(state, key.name().as_ptr());
                ffi::lua_rawseti(state, -2, key as ffi::lua_Integer);
            }
            for (kind, names) in [(Name::Type, types), (Name::Card, cards)] {
                for (i, name) in names.iter().enumerate() {
                    ffi::lua_pushlstring(state, name.as_ptr().cast(), name.len());
                    ffi::lua_rawseti(state, -2, name_slot(kind, number_of(i)));
                }
            }
            ffi::lua_rawsetp(state, ffi::LUA_REGISTRYINDEX, keys_slot());
        })
    }
}

/// Where a table finds its field names: the keys table [`keep_names`] made, at a fixed
/// stack index (an absolute index or a C function's upvalue), or none (the field names
/// are pushed as C strings).
#[derive(Clone, Copy)]
pub(super) struct Keys(Option<c_int>);

impl Keys {
    /// Whether there is no keys table.
    pub(super) fn is_none(self) -> bool {
        self.0.is_none()
    }

    /// The keys table at `index` (absolute, or an upvalue's pseudo-index).
    ///
    /// # Safety
    /// While the result is used, the value at `index` is the table [`keep_names`] made.
    pub(super) unsafe fn at(index: c_int) -> Keys {
        Keys(Some(index))
    }
}

/// Push the state's keys table, or nil where [`keep_names`] never ran: where to find it
/// while it stays on the stack.
///
/// # Safety
/// `state` is a live thread with room for one more value.
pub(super) unsafe fn push_keys(state: *mut ffi::lua_State) -> Keys {
    // SAFETY: the contract; a raw read of the registry raises no error.
    unsafe {
        if ffi::lua_rawgetp(state, ffi::LUA_REGISTRYINDEX, keys_slot()) == ffi::LUA_TTABLE {
            Keys(Some(ffi::lua_absindex(state, -1)))
        } else {
            Keys(None)
        }
    }
}

/// Push `key`'s name: from the kept keys table when there is one, or else as a C string.
///
/// # Safety
/// `state` is a live thread with room for one more value, and `keys` holds (see
/// [`Keys::at`]).
pub(super) unsafe fn push_key(state: *mut ffi::lua_State, keys: Keys, key: Key) {
    // SAFETY: the contract; a raw read of the keys table raises no error.
    unsafe {
        match keys.0 {
            Some(at) => {
                ffi::lua_rawgeti(state, at, key as ffi::lua_Integer);
            }
            None => {
                ffi::lua_pushstring(state, key.name().as_ptr());
            }
        }
    }
}

/// Push the kept name `number` (from 1) of kind `kind`: the empty string where none is
/// kept (a number of another catalog than the host's, which only a bug can give).
///
/// # Safety
/// `state` is a live thread with room for one more value, and `keys` holds (see
/// [`Keys::at`]). Pushing the empty string may raise a memory error (a long jump): the
/// caller holds nothing that needs dropping.
unsafe fn push_name(state: *mut ffi::lua_State, keys: Keys, kind: Name, number: i64) {
    // SAFETY: the contract; a raw read runs no metamethod.
    unsafe {
        if let Some(at) = keys.0 {
            if ffi::lua_rawgeti(state, at, name_slot(kind, number)) == ffi::LUA_TSTRING {
                return;
            }
            ffi::lua_pop(state, 1);
        }
        ffi::lua_pushstring(state, c"".as_ptr());
    }
}

/// A token type's name as scripts see it (`ctx:type_at`, a token table's `type`).
#[derive(Clone, Copy)]
pub(in crate::script) struct NameOut(i64);

impl NameOut {
    /// The name of token type `kind`.
    pub fn of_type(kind: TokenTypeId) -> NameOut {
        NameOut(number_of(kind.index()))
    }

    /// Push the name, found through `keys`.
    ///
    /// # Safety
    /// As for [`push_name`].
    pub(super) unsafe fn push(self, state: *mut ffi::lua_State, keys: Keys) {
        // SAFETY: the contract.
        unsafe { push_name(state, keys, Name::Type, self.0) }
    }

    /// The name as a Lua string, made in one protected call.
    pub fn string(self, lua: &Lua) -> mlua::Result<mlua::LuaString> {
        // SAFETY: a protected call gives room for the keys table and the name, and
        // catches running out of memory; the keys table (or the nil in its place) is
        // taken off, leaving the name alone on the stack.
        unsafe {
            lua.exec_raw::<mlua::LuaString>((), |state| {
                let keys = push_keys(state);
                self.push(state, keys);
                ffi::lua_remove(state, -2);
            })
        }
    }
}

/// A token as scripts see it, ready to become a table: `{x, y, seat, value, type, card}`
/// (plain numbers: the names are the state's kept ones).
#[derive(Clone, Copy)]
pub(in crate::script) struct TokenOut {
    numbers: [i64; 4],
    kind: NameOut,
    /// The card's number + 1.
    card: Option<i64>,
}

impl TokenOut {
    /// `token`, on `at`.
    pub fn new(at: BoardCell, token: Token) -> TokenOut {
        TokenOut {
            numbers: [
                at.x.into(),
                at.y.into(),
                token.seat.number().into(),
                token.value.into(),
            ],
            kind: NameOut::of_type(token.kind),
            card: token.card.map(|c| number_of(c.index())),
        }
    }

    /// Push the token's table, its names found through `keys`.
    ///
    /// # Safety
    /// `state` is a live thread with room for six more values and `keys` holds (see
    /// [`Keys::at`]). Running out of memory raises a Lua error (a long jump): the caller
    /// holds nothing that needs dropping.
    pub(super) unsafe fn push(&self, state: *mut ffi::lua_State, keys: Keys) {
        // SAFETY: see the function's contract; each field is a raw set of a key and a
        // value into the new table (no metamethod runs).
        unsafe {
            ffi::lua_createtable(state, 0, 6);
            let numbers = [Key::X, Key::Y, Key::Seat, Key::Value];
            for (key, n) in numbers.into_iter().zip(self.numbers) {
                push_key(state, keys, key);
                ffi::lua_pushinteger(state, n);
                ffi::lua_rawset(state, -3);
            }
            push_key(state, keys, Key::Type);
            self.kind.push(state, keys);
            ffi::lua_rawset(state, -3);
            if let Some(number) = self.card {
                push_key(state, keys, Key::Card);
                push_name(state, keys, Name::Card, number);
                ffi::lua_rawset(state, -3);
            }
        }
    }

    /// Push the token's table, its names found through the keys table in the registry
    /// (looked up, then taken off again).
    ///
    /// # Safety
    /// `state` is a live thread with room for seven more values. Running out of memory
    /// raises a Lua error (a long jump): the caller holds nothing that needs dropping.
    pub(super) unsafe fn push_alone(&self, state: *mut ffi::lua_State) {
        // SAFETY: the contract; the keys table (or the nil in its place) is taken off,
        // leaving the token's table on top.
        unsafe {
            let keys = push_keys(state);
            self.push(state, keys);
            ffi::lua_remove(state, -2);
        }
    }

    /// The token's table, made in one protected call.
    pub fn table(&self, lua: &Lua) -> mlua::Result<Table> {
        // SAFETY: a protected call gives room for the keys table, the token's table and a
        // key and value, and catches running out of memory; the token's table is left
        // alone on the stack.
        unsafe { lua.exec_raw::<Table>((), |state| self.push_alone(state)) }
    }
}

/// A list (a sequence table) of one table per item, each pushed by `push`, made in one
/// protected call, the field names looked up once for the whole list.
///
/// # Safety
/// `push` leaves exactly one value (the item's table) on the stack, needs at most six
/// slots, and only pushes and raw-sets (see the module's invariant).
unsafe fn list_of<T>(
    lua: &Lua,
    items: &[T],
    push: impl Fn(*mut ffi::lua_State, Keys, &T),
) -> mlua::Result<Table> {
    let size = c_int::try_from(items.len()).unwrap_or(c_int::MAX);
    // SAFETY: the contract; the keys table (or the nil in its place) stays under the
    // list and is taken off at the end, leaving the list alone on the stack, the one
    // result.
    unsafe {
        lua.exec_raw::<Table>((), |state| {
            let keys = push_keys(state);
            ffi::lua_createtable(state, size, 0);
            let mut n: ffi::lua_Integer = 0;
            for item in items {
                push(state, keys, item);
                n += 1;
                ffi::lua_rawseti(state, -2, n);
            }
            ffi::lua_remove(state, -2);
        })
    }
}

/// A list of the tokens' tables (`ctx:tokens()`).
pub(in crate::script) fn token_list(lua: &Lua, tokens: &[TokenOut]) -> mlua::Result<Table> {
    // SAFETY: a token's push leaves its one table, needs six slots, and only pushes and
    // raw-sets.
    unsafe { list_of(lua, tokens, |state, keys, token| token.push(state, keys)) }
}

/// A list of `{x, y}` tables (`ctx:targets()`).
pub(in crate::script) fn cell_list(lua: &Lua, cells: &[[i64; 2]]) -> mlua::Result<Table> {
    // SAFETY: each pair table is a new table and two raw sets of a key and a value: one
    // value left, three slots needed.
    unsafe {
        list_of(lua, cells, |state, keys, xy| {
            ffi::lua_createtable(state, 0, 2);
            for (key, n) in [Key::X, Key::Y].into_iter().zip(xy) {
                push_key(state, keys, key);
                ffi::lua_pushinteger(state, *n);
                ffi::lua_rawset(state, -3);
            }
        })
    }
}
