//! Fast entries for the `ctx` functions scripts call most: which functions have one and
//! what each does, run by the raw C entries of [`super::raw::fast`].
//!
//! Which functions have one, their names and how many integers they take come from their
//! rows of [`super::api::CTX`] (the build fails for an entry without its row; a state is
//! refused when a row's entry is missing). Each body here begins with the prologue of its
//! general twin ([`super::ctx::make`]: [`ctx::prologue`]) and runs the same Rust function
//! of `ctx.rs`, so both behave alike by construction; only plain integer arguments (and,
//! for `ctx:spawn`, a plain spec table) reach it, everything else goes to the general
//! function. The differential test (`fast_tests.rs`) calls both with every kind of
//! argument and compares results, errors, charges, records and the game.

use std::rc::Rc;

use mlua::{Lua, Table};

use super::api::{self, CTX_FIELDS, Row};
use super::budget::ScriptBudget;
use super::ctx::{self, CallSlot, Spec};
use super::raw::fast::{Entry, Env, Method, Out, PlainSpec};

/// What a state's fast entries reach: its slot and budget.
pub(super) struct FastEnv {
    slot: Rc<CallSlot>,
    budget: Rc<ScriptBudget>,
}

impl Env for FastEnv {
    fn field(&self, key: &[u8]) -> Option<i64> {
        let f = self.slot.fields.get();
        // The names are `api::CTX_FIELDS`, in its order (what the API description is
        // checked against).
        match CTX_FIELDS.iter().position(|name| name.as_bytes() == key) {
            Some(0) => Some(i64::from(f.seat)),
            Some(1) => Some(i64::from(f.opponent)),
            Some(2) => f.at.map(|(x, _)| i64::from(x)),
            Some(3) => f.at.map(|(_, y)| i64::from(y)),
            _ => None,
        }
    }

    fn stash(&self, error: mlua::Error) {
        self.slot.stash(error);
    }
}

/// The row of a fast entry: the build fails for a name the table lacks, or whose row
/// says it has no fast entry.
const fn fast_row(name: &str) -> &'static Row {
    let row = api::row(name);
    assert!(
        row.fast,
        "a fast entry for a ctx function whose row has none"
    );
    row
}

macro_rules! method {
    ($ty:ident, $name:literal, |$lua:pat_param, $slot:pat_param, $a:pat_param| $body:expr) => {
        struct $ty;
        impl $ty {
            const ROW: &Row = fast_row($name);
        }
        impl Method<FastEnv> for $ty {
            const NAME: &'static str = Self::ROW.name;
            const ARGS: usize = Self::ROW.params.len();
            fn body(
                lua: &Lua,
                env: &FastEnv,
                a: [i64; 4],
                _: Option<PlainSpec>,
            ) -> mlua::Result<Out> {
                ctx::prologue(lua, &env.budget, &env.slot, Self::ROW)?;
                let ($lua, $slot, $a) = (lua, &*env.slot, a);
                $body
            }
        }
    };
}

/// `ctx:spawn(x, y, spec)` for a spec table of plain fields (no metatable: a table frozen
/// at load keeps its fields elsewhere, which the general function finds).
struct Spawn;
impl Spawn {
    const ROW: &Row = fast_row("spawn");
}
impl Method<FastEnv> for Spawn {
    const NAME: &'static str = Self::ROW.name;
    // The integers before the spec table.
    const ARGS: usize = Self::ROW.params.len() - 1;
    const SPEC: bool = true;
    fn body(
        lua: &Lua,
        env: &FastEnv,
        [x, y, ..]: [i64; 4],
        spec: Option<PlainSpec>,
    ) -> mlua::Result<Out> {
        ctx::prologue(lua, &env.budget, &env.slot, Self::ROW)?;
        let Some(spec) = spec else {
            return Err(mlua::Error::RuntimeError(
                "ctx:spawn: no spec was read (a bug: please report it)".into(),
            ));
        };
        let spec = Spec::plain(spec.seat, spec.value, spec.kind);
        ctx::spawn(lua, &env.slot, x, y, ctx::Spawned::Spec(spec)).map(Out::Bool)
    }
}

method!(Width, "width", |_, s, _| ctx::width(s)
    .map(|n| Out::Int(n.into())));
method!(Height, "height", |_, s, _| ctx::height(s)
    .map(|n| Out::Int(n.into())));
method!(OnBoard, "on_board", |_, s, [x, y, ..]| ctx::on_board(
    s, x, y
)
.map(Out::Bool));
method!(TokenAt, "token", |_, s, [x, y, ..]| ctx::token_at(s, x, y)
    .map(Out::Token));
method!(Empty, "empty", |_, s, [x, y, ..]| ctx::empty(s, x, y)
    .map(Out::Bool));
method!(SeatAt, "seat_at", |_, s, [x, y, ..]| ctx::seat_at(s, x, y)
    .map(Out::OptInt));
method!(ValueAt, "value_at", |_, s, [x, y, ..]| ctx::value_at(
    s, x, y
)
.map(Out::OptInt));
method!(TypeAt, "type_at", |_, s, [x, y, ..]| ctx::type_at(s, x, y)
    .map(Out::Name));
method!(Score, "score", |lua, s, [n, ..]| ctx::score(lua, s, n)
    .map(Out::Int));
method!(TargetCount, "target_count", |_, s, _| {
    ctx::target_count(s).map(|n| Out::Int(i64::try_from(n).unwrap_or(i64::MAX)))
});
method!(Target, "target", |_, s, [i, ..]| ctx::target(s, i)
    .map(Out::Pair));
method!(Damage, "damage", |lua, s, [x, y, n, _]| ctx::damage(
    lua, s, x, y, n
)
.map(Out::Bool));
method!(SetValue, "set_value", |lua, s, [x, y, v, _]| {
    ctx::set_value(lua, s, x, y, v).map(Out::Bool)
});
method!(Move, "move", |lua, s, [x, y, tx, ty]| {
    ctx::move_token(lua, s, x, y, tx, ty).map(Out::Bool)
});
method!(Remove, "remove", |lua, s, [x, y, ..]| ctx::remove(
    lua, s, x, y
)
.map(Out::Bool));
method!(ExtraTurn, "extra_turn", |lua, s, [n, ..]| {
    ctx::extra_turn(lua, s, n).map(|()| Out::Nothing)
});
method!(AddScore, "add_score", |lua, s, [n, amount, ..]| {
    ctx::add_score(lua, s, n, amount).map(|()| Out::Nothing)
});
method!(Random, "random", |lua, s, [n, ..]| ctx::random(lua, s, n)
    .map(Out::Int));

/// Give each function above a fast entry in `methods`, in place of its general twin.
/// The state's names (`raw::keep_names`) are kept already: the tables the entries make
/// name token types and cards by index.
pub(super) fn install(
    lua: &Lua,
    methods: &Table,
    (slot, budget): (&Rc<CallSlot>, &Rc<ScriptBudget>),
) -> mlua::Result<()> {
    let env = FastEnv {
        slot: Rc::clone(slot),
        budget: Rc::clone(budget),
    };
    let entries = [
        Entry::of::<Width>(),
        Entry::of::<Height>(),
        Entry::of::<OnBoard>(),
        Entry::of::<TokenAt>(),
        Entry::of::<Empty>(),
        Entry::of::<SeatAt>(),
        Entry::of::<ValueAt>(),
        Entry::of::<TypeAt>(),
        Entry::of::<Score>(),
        Entry::of::<TargetCount>(),
        Entry::of::<Target>(),
        Entry::of::<Damage>(),
        Entry::of::<SetValue>(),
        Entry::of::<Move>(),
        Entry::of::<Remove>(),
        Entry::of::<ExtraTurn>(),
        Entry::of::<AddScore>(),
        Entry::of::<Random>(),
        Entry::of::<Spawn>(),
    ];
    // Exactly the rows that say they have a fast entry have one (an entry's name is a
    // row's with a fast entry: `fast_row`).
    let listed = |name: &str| entries.iter().filter(|e| e.name() == name).count();
    if let Some(row) = api::CTX
        .iter()
        .find(|r| listed(r.name) != usize::from(r.fast))
    {
        return Err(mlua::Error::RuntimeError(format!(
            "ctx:{}: its fast entry does not match the API table (a bug: please report it)",
            row.name
        )));
    }
    super::raw::fast::install(lua, methods, env, &entries)
}

#[cfg(test)]
#[path = "fast_tests.rs"]
mod tests;
