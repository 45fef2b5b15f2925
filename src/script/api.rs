//! The script API as data: every `ctx` field and method, every hook, the token table, the
//! globals and library functions of the sandbox, and every limit with its default.
//!
//! `tokensmith api --json` prints it, the editor definitions ([`super::luals`]) and the
//! static checks ([`super::lint`]) are made from it, and docs/lua.md is checked against
//! it. The names come from the host itself where the host has them as data (limits,
//! defaults); a test builds a live sandbox and a live `ctx` and compares their names with
//! this description both ways, so the two cannot drift apart.
//!
//! Must not: describe anything the sandbox does not offer.
//!
//! `CTX` is the one table of `ctx`'s functions (name, parameters, returns, docs, cost,
//! whether its calls are recorded for replay, whether it has a fast entry): the description
//! (`describe`, `tokensmith api --json`, the editor definitions, the lint), the registration
//! in `ctx.rs`, the fast entries and the diagnostics are made from it or checked against it
//! at build time. *Why:* five lists drift apart.

use serde::Serialize;

use crate::content::discover::{
    DEFAULT_SCRIPT_INSTRUCTIONS, DEFAULT_SCRIPT_MEMORY_KB, SCRIPT_INSTRUCTIONS_RANGE,
    SCRIPT_MEMORY_KB_RANGE,
};
use crate::rules::MoveLimits;

/// The names of `ctx`'s functions (called `ctx:name(…)`), in the table's order.
pub(super) fn ctx_names() -> impl Iterator<Item = &'static str> + Clone {
    CTX.iter().map(|r| r.name)
}

/// The fields set on `ctx` for each hook call (`ctx.seat`).
pub(super) const CTX_FIELDS: &[&str] = &["seat", "opponent", "x", "y"];

/// The whole description.
#[derive(Clone, Debug, Serialize)]
pub struct Api {
    /// Bumped when a name or a type changes.
    pub version: u32,
    /// The per-call fields of `ctx` (`ctx.seat`).
    pub ctx_fields: Vec<Field>,
    /// The functions of `ctx`, called `ctx:name(…)`.
    pub ctx_methods: Vec<Method>,
    /// The hooks a script's returned table may hold.
    pub hooks: Vec<Hook>,
    /// The fields of a token table (`ctx:token`, `self`).
    pub token_fields: Vec<Field>,
    /// The fields of a cell table (`ctx:targets()`).
    pub cell_fields: Vec<Field>,
    /// The fields of `ctx:spawn`'s spec table.
    pub spawn_spec_fields: Vec<Field>,
    /// The globals the sandbox offers: base functions and values, and the libraries.
    pub globals: Vec<Global>,
    /// Globals of standard Lua the sandbox removes, each with what to use instead.
    pub removed_globals: Vec<Removed>,
    /// Every limit, with its default and allowed range.
    pub limits: Vec<Limit>,
}

/// A field of a table.
#[derive(Clone, Debug, Serialize)]
pub struct Field {
    pub name: &'static str,
    /// In LuaLS notation: `integer`, `string?`, …
    #[serde(rename = "type")]
    pub ty: &'static str,
    pub doc: &'static str,
}

/// A parameter of a function.
#[derive(Clone, Debug, Serialize)]
pub struct Param {
    pub name: &'static str,
    #[serde(rename = "type")]
    pub ty: &'static str,
    pub doc: &'static str,
}

/// A function of `ctx`.
#[derive(Clone, Debug, Serialize)]
pub struct Method {
    pub name: &'static str,
    /// The arguments after `ctx`.
    pub params: Vec<Param>,
    /// What it returns, in order (empty: nothing).
    pub returns: Vec<Field>,
    /// Whether it changes the game (an error in the read-only hooks `income`, `evaluate`).
    pub changes: bool,
    pub doc: &'static str,
    /// Errors it gives besides a bad argument.
    pub errors: Vec<&'static str>,
    /// What a call is charged against the instruction budget.
    pub cost: &'static str,
}

/// A hook of a script's returned table.
#[derive(Clone, Debug, Serialize)]
pub struct Hook {
    pub name: &'static str,
    /// What names the script: `ability`, `token type` or `ai.lua`.
    pub owner: &'static str,
    pub params: Vec<Param>,
    /// What it must return (None: the return value is ignored).
    pub returns: Option<Field>,
    /// Whether a path that returns nothing is an error.
    pub must_return: bool,
    /// Whether `ctx` may change the game in it.
    pub read_only: bool,
    /// When it runs.
    pub runs: &'static str,
}

/// A global of the sandbox.
#[derive(Clone, Debug, Serialize)]
pub struct Global {
    pub name: &'static str,
    /// `function`, `value` or `library`.
    pub kind: &'static str,
    /// The members of a library (`string.find`), empty otherwise.
    pub members: Vec<&'static str>,
    pub doc: &'static str,
}

/// A standard global the sandbox removes.
#[derive(Clone, Debug, Serialize)]
pub struct Removed {
    pub name: &'static str,
    /// What to use instead, or why there is nothing.
    pub instead: &'static str,
}

/// A limit.
#[derive(Clone, Debug, Serialize)]
pub struct Limit {
    /// Where it is set (`scripts.instructions` in pack.yaml, `rules.limits.events`), or
    /// `fixed` for limits no setting changes.
    pub key: String,
    pub default: u64,
    pub min: Option<u64>,
    pub max: Option<u64>,
    pub unit: &'static str,
    pub doc: &'static str,
}

const fn p(name: &'static str, ty: &'static str, doc: &'static str) -> Param {
    Param { name, ty, doc }
}

const fn f(name: &'static str, ty: &'static str, doc: &'static str) -> Field {
    Field { name, ty, doc }
}

const X: Param = p("x", "integer", "the column, 0-based");
const Y: Param = p("y", "integer", "the row, 0-based");
const SEAT: Param = p("seat", "integer", "1 or 2");
const OFF_BOARD: &str = "cell (x, y) is off the board";
const BAD_SEAT: &str = "a seat is 1 or 2";
const CHEAP: &str = "16 instructions";
const PER_TABLE: &str = "16 instructions, and 16 more per table it builds";

/// What a changing call on a cell returns: false when the cell is empty.
const HIT_EMPTY: &[Field] = &[f("done", "boolean", "false if the cell is empty")];

/// One function of `ctx`: the one table the API description, the registration of the
/// general functions (`ctx::make`), the record-and-replay layer (`memo.rs`) and the fast
/// entries (`fast.rs`) are made from or checked against.
#[derive(Clone, Copy, Debug)]
pub(super) struct Row {
    pub name: &'static str,
    /// The arguments after `ctx`.
    pub params: &'static [Param],
    /// What it returns, in order (empty: nothing).
    pub returns: &'static [Field],
    /// Whether it changes the game (an error in the read-only hooks).
    pub changes: bool,
    pub doc: &'static str,
    /// Errors it gives besides a bad argument.
    pub errors: &'static [&'static str],
    /// What a call is charged against the instruction budget.
    pub cost: &'static str,
    /// Whether a hook call's record holds its calls ([`super::memo::Op`]), so the call
    /// can be replayed; a call of a function without spoils the record.
    pub recorded: bool,
    /// Whether it has a fast entry for plain integer arguments (`fast.rs`), beside the
    /// general function every method has.
    pub fast: bool,
}

const fn read(
    name: &'static str,
    params: &'static [Param],
    returns: &'static [Field],
    doc: &'static str,
    errors: &'static [&'static str],
) -> Row {
    Row {
        name,
        params,
        returns,
        changes: false,
        doc,
        errors,
        cost: CHEAP,
        recorded: true,
        fast: true,
    }
}

const fn change(
    name: &'static str,
    params: &'static [Param],
    returns: &'static [Field],
    doc: &'static str,
    errors: &'static [&'static str],
) -> Row {
    Row {
        changes: true,
        ..read(name, params, returns, doc, errors)
    }
}

impl Row {
    /// Without a fast entry.
    const fn general_only(self) -> Row {
        Row {
            fast: false,
            ..self
        }
    }

    /// Never recorded: a call of it spoils the hook call's record.
    const fn unrecorded(self) -> Row {
        Row {
            recorded: false,
            ..self
        }
    }

    /// Charged per table it builds.
    const fn per_table(self) -> Row {
        Row {
            cost: PER_TABLE,
            ..self
        }
    }
}

/// Every function of `ctx`, in the order the description lists them.
pub(super) const CTX: &[Row] = &[
    read(
        "width",
        &[],
        &[f("width", "integer", "columns")],
        "The board's width.",
        &[],
    ),
    read(
        "height",
        &[],
        &[f("height", "integer", "rows")],
        "The board's height.",
        &[],
    ),
    read(
        "on_board",
        &[X, Y],
        &[f("on_board", "boolean", "")],
        "Whether the cell is on the board.",
        &[],
    ),
    read(
        "token",
        &[X, Y],
        &[f(
            "token",
            "Token?",
            "nil for an empty cell or one off the board",
        )],
        "The token on a cell (a copy), or nil.",
        &[],
    ),
    read(
        "empty",
        &[X, Y],
        &[f("empty", "boolean", "false off the board")],
        "Whether the cell is on the board and holds no token (no table is made).",
        &[],
    ),
    read(
        "seat_at",
        &[X, Y],
        &[f(
            "seat",
            "integer?",
            "1 or 2; nil for an empty cell or one off the board",
        )],
        "The seat of the token on a cell, or nil (no table is made).",
        &[],
    ),
    read(
        "value_at",
        &[X, Y],
        &[f(
            "value",
            "integer?",
            "nil for an empty cell or one off the board",
        )],
        "The value of the token on a cell, or nil (no table is made).",
        &[],
    ),
    read(
        "type_at",
        &[X, Y],
        &[f(
            "type",
            "string?",
            "without the pack prefix; nil for an empty cell or one off the board",
        )],
        "The type of the token on a cell, or nil (no table is made).",
        &[],
    ),
    read(
        "tokens",
        &[],
        &[f("tokens", "Token[]", "row by row from the top left")],
        "Every token on the board.",
        &[],
    )
    .per_table()
    .general_only()
    .unrecorded(),
    read(
        "score",
        &[SEAT],
        &[f("score", "integer", "")],
        "A seat's score.",
        &[BAD_SEAT],
    ),
    read(
        "targets",
        &[],
        &[f(
            "cells",
            "Cell[]",
            "in area order; empty outside on_place",
        )],
        "The on-board cells of the card's area.",
        &[],
    )
    .per_table()
    .general_only(),
    read(
        "target_count",
        &[],
        &[f("count", "integer", "0 outside on_place")],
        "How many cells ctx:targets() would list.",
        &[],
    ),
    read(
        "target",
        &[p("i", "integer", "from 1")],
        &[
            f("x", "integer?", "nil past the last"),
            f("y", "integer?", "nil past the last"),
        ],
        "The i-th cell of ctx:targets() as two numbers.",
        &[],
    ),
    change(
        "damage",
        &[X, Y, p("n", "integer", "0 or more")],
        HIT_EMPTY,
        "Lowers the token's value by n; at 0 or below it is destroyed (its on_destroyed runs).",
        &[OFF_BOARD, "damage must be 0 or more"],
    ),
    change(
        "set_value",
        &[X, Y, p("value", "integer", "0 or below destroys it")],
        HIT_EMPTY,
        "Sets the token's value.",
        &[OFF_BOARD],
    ),
    change(
        "move",
        &[
            X,
            Y,
            p("tx", "integer", "destination column"),
            p("ty", "integer", "destination row"),
        ],
        &[f(
            "done",
            "boolean",
            "false when the destination holds a token",
        )],
        "Moves the token; a destination off the board removes it.",
        &[OFF_BOARD, "there is no token at (x, y) to move"],
    ),
    change(
        "remove",
        &[X, Y],
        HIT_EMPTY,
        "Takes the token off the board (no on_destroyed).",
        &[OFF_BOARD],
    ),
    change(
        "spawn",
        &[X, Y, p("spec", "SpawnSpec", "required, may be empty: {}")],
        &[f("done", "boolean", "false if the cell is taken")],
        "Creates a token on an empty cell.",
        &[
            OFF_BOARD,
            BAD_SEAT,
            "unknown token type",
            "a missing spec table",
        ],
    ),
    change(
        "set_type",
        &[
            X,
            Y,
            p(
                "type",
                "string",
                "a token type id, optionally with its pack prefix",
            ),
        ],
        HIT_EMPTY,
        "Changes the token's type, keeping owner and value; no hook runs.",
        &[OFF_BOARD, "unknown token type"],
    )
    .general_only(),
    change(
        "extra_turn",
        &[SEAT],
        &[],
        "Banks an extra turn for the seat.",
        &[BAD_SEAT],
    ),
    change(
        "add_score",
        &[SEAT, p("n", "integer", "negative to take away")],
        &[],
        "Adds n to the seat's score.",
        &[BAD_SEAT],
    ),
    // A draw moves the game's generator: a call that draws is never replayed.
    change(
        "random",
        &[p("n", "integer", "at least 1")],
        &[f("number", "integer", "from 1 to n")],
        "A whole number from the game's seeded generator.",
        &["random(n) needs n of at least 1"],
    )
    .unrecorded(),
    change(
        "log",
        &[p("text", "string|number", "one line")],
        &[],
        "Writes a line to the game's log (a `log` event).",
        &["the move logged more than rules.limits.log_bytes bytes"],
    )
    .general_only()
    .unrecorded(),
];

/// The row of `name`; naming a function the table lacks fails the build where it is
/// used in a constant (`const ROW: &Row = row("…")`).
pub(super) const fn row(name: &str) -> &'static Row {
    let mut i = 0;
    while i < CTX.len() {
        if same(CTX[i].name, name) {
            return &CTX[i];
        }
        i += 1;
    }
    panic!("not a ctx function of api::CTX")
}

const fn same(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

fn methods() -> Vec<Method> {
    CTX.iter()
        .map(|r| Method {
            name: r.name,
            params: r.params.to_vec(),
            returns: r.returns.to_vec(),
            changes: r.changes,
            doc: r.doc,
            errors: r.errors.to_vec(),
            cost: r.cost,
        })
        .collect()
}

fn hooks() -> Vec<Hook> {
    let ctx = p("ctx", "Ctx", "the game, for this call");
    let this = p(
        "self",
        "Token",
        "the token, as it was when the hook started",
    );
    vec![
        Hook {
            name: "on_place",
            owner: "ability",
            params: vec![ctx.clone()],
            returns: None,
            must_return: false,
            read_only: false,
            runs: "at the ability step of a move, once the card's token is placed",
        },
        Hook {
            name: "between_turns",
            owner: "token type",
            params: vec![ctx.clone(), this.clone()],
            returns: None,
            must_return: false,
            read_only: false,
            runs: "between turns, after the built-in turrets, row by row",
        },
        Hook {
            name: "income",
            owner: "token type",
            params: vec![
                ctx.clone(),
                this.clone(),
                p(
                    "income",
                    "integer",
                    "what the token earns without the script",
                ),
            ],
            returns: Some(f("income", "integer", "the token's income, a whole number")),
            must_return: true,
            read_only: true,
            runs: "whenever the game works out an income: scoring, the display, the AI",
        },
        Hook {
            name: "on_destroyed",
            owner: "token type",
            params: vec![ctx.clone(), this],
            returns: None,
            must_return: false,
            read_only: false,
            runs: "when a token of the type is destroyed by losing value, inside what destroyed it",
        },
        Hook {
            name: "evaluate",
            owner: "ai.lua",
            params: vec![ctx, p("seat", "integer", "the seat whose view is asked")],
            returns: Some(f(
                "value",
                "number?",
                "points for the seat; nil counts as 0",
            )),
            must_return: false,
            read_only: true,
            runs: "for every position the AI looks at (normal and hard levels)",
        },
    ]
}

const BASE_FUNCTIONS: &[&str] = &[
    "assert",
    "error",
    "getmetatable",
    "ipairs",
    "next",
    "pairs",
    "pcall",
    "rawequal",
    "rawget",
    "rawlen",
    "select",
    "setmetatable",
    "tonumber",
    "tostring",
    "type",
    "unpack",
    "xpcall",
];

const STRING: &[&str] = &[
    "byte", "char", "find", "format", "gmatch", "gsub", "len", "lower", "match", "rep", "reverse",
    "sub", "upper",
];
const TABLE: &[&str] = &[
    "concat", "insert", "move", "pack", "remove", "sort", "unpack",
];
const MATH: &[&str] = &[
    "abs",
    "acos",
    "asin",
    "atan",
    "atan2",
    "ceil",
    "cos",
    "cosh",
    "deg",
    "exp",
    "floor",
    "fmod",
    "frexp",
    "huge",
    "ldexp",
    "log",
    "log10",
    "max",
    "maxinteger",
    "min",
    "mininteger",
    "modf",
    "pi",
    "pow",
    "rad",
    "sin",
    "sinh",
    "sqrt",
    "tan",
    "tanh",
    "tointeger",
    "type",
    "ult",
];

fn globals() -> Vec<Global> {
    let mut out: Vec<Global> = BASE_FUNCTIONS
        .iter()
        .map(|&name| Global {
            name,
            kind: "function",
            members: Vec::new(),
            doc: "as in Lua 5.4 (pairs, next, tostring and setmetatable are deterministic: docs/lua.md)",
        })
        .collect();
    out.push(Global {
        name: "_VERSION",
        kind: "value",
        members: Vec::new(),
        doc: "\"Lua 5.4\"",
    });
    for (name, members, doc) in [
        (
            "string",
            STRING,
            "read-only; the pattern functions are metered",
        ),
        ("table", TABLE, "read-only; table.sort is stable"),
        ("math", MATH, "read-only; no random (use ctx:random)"),
    ] {
        out.push(Global {
            name,
            kind: "library",
            members: members.to_vec(),
            doc,
        });
    }
    out
}

fn removed_globals() -> Vec<Removed> {
    let r = |name, instead| Removed { name, instead };
    vec![
        r("print", "ctx:log(text): scripts have no console"),
        r("warn", "ctx:log(text): scripts have no console"),
        r("io", "nothing: scripts cannot reach files"),
        r(
            "os",
            "nothing: no clock or environment; ctx:random for randomness",
        ),
        r(
            "require",
            "put helper functions in the same file: scripts cannot load code",
        ),
        r(
            "dofile",
            "put the code in the same file: scripts cannot load code",
        ),
        r(
            "loadfile",
            "put the code in the same file: scripts cannot load code",
        ),
        r(
            "load",
            "write the function itself: scripts cannot load code",
        ),
        r(
            "loadstring",
            "write the function itself: scripts cannot load code",
        ),
        r("module", "return a table of hooks"),
        r("package", "nothing: scripts cannot load code"),
        r("debug", "ctx:log to see values"),
        r("collectgarbage", "nothing: memory is the host's"),
        r("coroutine", "nothing: not part of the sandbox"),
        r("utf8", "string functions on bytes"),
        r("rawset", "a plain assignment t[k] = v"),
        r("_G", "the global's name itself"),
    ]
}

fn limits() -> Vec<Limit> {
    let d = MoveLimits::DEFAULT;
    let m = MoveLimits::MAX;
    let range = |r: &std::ops::RangeInclusive<i64>| {
        (u64::try_from(*r.start()).ok(), u64::try_from(*r.end()).ok())
    };
    let (imin, imax) = range(&SCRIPT_INSTRUCTIONS_RANGE);
    let (mmin, mmax) = range(&SCRIPT_MEMORY_KB_RANGE);
    let rule = |key: &str, default: u64, max: u64, unit, doc| Limit {
        key: format!("rules.limits.{key}"),
        default,
        min: Some(1),
        max: Some(max),
        unit,
        doc,
    };
    let fixed = |key: &str, default: u64, unit, doc| Limit {
        key: format!("fixed.{key}"),
        default,
        min: None,
        max: None,
        unit,
        doc,
    };
    let ms = |t: std::time::Duration| u64::try_from(t.as_millis()).unwrap_or(u64::MAX);
    let mib = |b: usize| u64::try_from(b).unwrap_or(u64::MAX);
    vec![
        Limit {
            key: "scripts.instructions".to_string(),
            default: DEFAULT_SCRIPT_INSTRUCTIONS,
            min: imin,
            max: imax,
            unit: "instructions",
            doc: "Lua instructions one hook call may run (with the hooks nested in it), per pack",
        },
        Limit {
            key: "scripts.memory_kb".to_string(),
            default: u64::try_from(DEFAULT_SCRIPT_MEMORY_KB).unwrap_or(0),
            min: mmin,
            max: mmax,
            unit: "KiB",
            doc: "memory all of a pack's scripts may use together",
        },
        rule(
            "instructions",
            d.instructions,
            m.instructions,
            "instructions",
            "instructions all hooks of all packs may run together in one step of a move",
        ),
        rule(
            "wall_ms",
            d.wall_ms.into(),
            m.wall_ms.into(),
            "ms",
            "milliseconds all hooks of a move may take together",
        ),
        rule(
            "hook_depth",
            d.hook_depth.into(),
            m.hook_depth.into(),
            "levels",
            "how deep hooks may set each other off, across packs",
        ),
        rule(
            "events",
            d.events.into(),
            m.events.into(),
            "events",
            "changes one move may make",
        ),
        rule(
            "log_bytes",
            d.log_bytes.into(),
            m.log_bytes.into(),
            "bytes",
            "bytes of ctx:log text one move may write",
        ),
        fixed(
            "script_file",
            crate::fsutil::MAX_SCRIPT_FILE,
            "bytes",
            "one script file",
        ),
        fixed(
            "pack_scripts",
            crate::fsutil::MAX_PACK_SCRIPTS,
            "bytes",
            "the script files of one pack together",
        ),
        fixed(
            "set_scripts",
            crate::fsutil::MAX_SET_SCRIPTS,
            "bytes",
            "the script files of all packs loaded together",
        ),
        fixed(
            "load_instructions",
            super::LOAD_INSTRUCTIONS,
            "instructions",
            "the top levels of one pack's scripts together, at load",
        ),
        fixed(
            "load_pack_ms",
            ms(super::LOAD_PACK),
            "ms",
            "loading one pack's scripts",
        ),
        fixed(
            "load_set_ms",
            ms(super::LOAD_SET),
            "ms",
            "loading the scripts of all packs",
        ),
        fixed(
            "content_set_memory",
            mib(super::memory::CONTENT_SET_MEMORY),
            "bytes",
            "all the packs' scripts of one content set together",
        ),
        fixed(
            "process_memory",
            mib(super::memory::PROCESS_MEMORY),
            "bytes",
            "every script host of the program together",
        ),
    ]
}

/// The script API as it is now.
#[must_use]
pub fn describe() -> Api {
    Api {
        version: 2,
        ctx_fields: vec![
            f(
                "seat",
                "integer",
                "the acting seat: the mover in on_place, the token's owner in a token's hooks",
            ),
            f("opponent", "integer", "the other seat"),
            f(
                "x",
                "integer",
                "the hook's cell: the placed token's in on_place, the token's in its hooks (nil in evaluate)",
            ),
            f("y", "integer", "the hook's cell (nil in evaluate)"),
        ],
        ctx_methods: methods(),
        hooks: hooks(),
        token_fields: vec![
            f("x", "integer", "its column"),
            f("y", "integer", "its row"),
            f("seat", "integer", "its owner, 1 or 2"),
            f("value", "integer", "its value"),
            f(
                "type",
                "string",
                "its token type's id, without the pack prefix",
            ),
            f(
                "card",
                "string?",
                "the id of the card that placed it, or nil",
            ),
        ],
        cell_fields: vec![
            f("x", "integer", "the column"),
            f("y", "integer", "the row"),
        ],
        spawn_spec_fields: vec![
            f("seat", "integer?", "default: ctx.seat"),
            f("value", "integer?", "default: 1"),
            f("type", "string?", "default: \"basic\""),
        ],
        globals: globals(),
        removed_globals: removed_globals(),
        limits: limits(),
    }
}

impl Api {
    /// Every global name a script finds, libraries as `string.find`, sorted: what
    /// [`super::sandbox_names`] lists for a live sandbox.
    #[must_use]
    pub fn global_names(&self) -> Vec<String> {
        let mut names = Vec::new();
        for g in &self.globals {
            if g.kind == "library" {
                names.extend(g.members.iter().map(|m| format!("{}.{m}", g.name)));
            } else {
                names.push(g.name.to_string());
            }
        }
        names.sort();
        names
    }

    /// The `ctx` method of that name.
    #[must_use]
    pub fn method(&self, name: &str) -> Option<&Method> {
        self.ctx_methods.iter().find(|m| m.name == name)
    }

    /// The hook of that name.
    #[must_use]
    pub fn hook(&self, name: &str) -> Option<&Hook> {
        self.hooks.iter().find(|h| h.name == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sorted(mut v: Vec<String>) -> Vec<String> {
        v.sort();
        v
    }

    /// The methods and per-call fields of a live `ctx`, as the host builds it, sorted.
    fn live_ctx_names() -> (Vec<String>, Vec<String>) {
        use std::rc::Rc;
        let budget = Rc::new(super::super::ScriptBudget::new(&MoveLimits::DEFAULT));
        let (lua, _) = super::super::sandbox::new_state(&budget, 1 << 24).unwrap();
        let slot = Rc::new(super::super::ctx::CallSlot::default());
        let table = super::super::ctx::make(&lua, &slot, &budget).unwrap();
        let methods: mlua::Table = table.metatable().unwrap().raw_get("__index").unwrap();
        super::super::raw::keep_names(&lua, &[], &[]).unwrap();
        super::super::fast::install(&lua, &methods, (&slot, &budget)).unwrap();
        let ctx = super::super::ctx::CtxTable::new(&lua, table.clone()).unwrap();
        let at = crate::rules::Cell::new(1, 2);
        ctx.set_fields(
            &slot,
            (crate::rules::Seat::from_number(1).unwrap(), Some(at)),
            false,
        );
        let keys = |t: &mlua::Table| {
            sorted(
                t.pairs::<String, mlua::Value>()
                    .map(|kv| kv.unwrap().0)
                    .collect(),
            )
        };
        let methods: mlua::Table = table.metatable().unwrap().raw_get("__index").unwrap();
        // The per-call fields are read through the methods' metatable, by the names in
        // `ctx::FIELDS`: each must read as a number through the live ctx.
        let fields: Vec<String> = super::CTX_FIELDS.iter().map(|f| f.to_string()).collect();
        for f in &fields {
            let v: mlua::Value = table.get(f.as_str()).unwrap();
            assert!(v.is_integer(), "ctx.{f} reads {v:?}");
        }
        assert!(keys(&table).is_empty(), "ctx has no keys of its own");
        (keys(&methods), sorted(fields))
    }

    #[test]
    fn globals_match_a_live_sandbox_both_ways() {
        let live = super::super::sandbox_names();
        assert!(
            live.len() > 40,
            "the live sandbox lists its names: {live:?}"
        );
        assert_eq!(describe().global_names(), live);
    }

    #[test]
    fn ctx_methods_and_fields_match_a_live_ctx_both_ways() {
        let (methods, fields) = live_ctx_names();
        let api = describe();
        let described = sorted(api.ctx_methods.iter().map(|m| m.name.to_string()).collect());
        assert_eq!(described, methods);
        let described = sorted(api.ctx_fields.iter().map(|m| m.name.to_string()).collect());
        assert_eq!(described, fields);
    }

    #[test]
    fn hooks_match_the_hosts_hook_names() {
        let api = describe();
        let names: Vec<&str> = api.hooks.iter().map(|h| h.name).collect();
        assert_eq!(names, super::super::HOOK_NAMES);
    }

    #[test]
    fn removed_globals_are_absent_from_a_live_sandbox() {
        let live = super::super::sandbox_names();
        for r in describe().removed_globals {
            assert!(
                !live.iter().any(|n| n == r.name),
                "{} is in the sandbox",
                r.name
            );
        }
    }

    /// docs/lua.md's reference says what the description says: every ctx function, hook,
    /// token field, global, removed global, and every settable limit with its default.
    #[test]
    fn the_lua_reference_is_checked_against_the_description() {
        let doc = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/lua.md"),
        )
        .unwrap();
        let api = describe();
        let mut missing = Vec::new();
        let mut want = |text: String| {
            if !doc.contains(&text) {
                missing.push(text);
            }
        };
        for m in &api.ctx_methods {
            want(format!("`ctx:{}(", m.name));
        }
        for f in &api.ctx_fields {
            want(format!("`ctx.{}`", f.name));
        }
        for h in &api.hooks {
            let params: Vec<&str> = h.params.iter().map(|p| p.name).collect();
            want(format!("{}({})", h.name, params.join(", ")));
        }
        for f in &api.token_fields {
            want(format!("`{}`", f.name));
        }
        for g in &api.globals {
            want(format!("`{}`", g.name));
            for m in &g.members {
                want(format!("`{m}`"));
            }
        }
        for r in &api.removed_globals {
            want(format!("`{}`", r.name));
        }
        for l in &api.limits {
            let Some(short) = l
                .key
                .strip_prefix("scripts.")
                .or(l.key.strip_prefix("rules.limits."))
            else {
                continue;
            };
            want(format!(
                "| `{short}` | {}",
                crate::content::totals::thousands(l.default)
            ));
        }
        assert!(missing.is_empty(), "docs/lua.md lacks {missing:#?}");
    }

    #[test]
    fn limits_carry_the_hosts_defaults() {
        let api = describe();
        let get = |k: &str| api.limits.iter().find(|l| l.key == k).map(|l| l.default);
        assert_eq!(get("rules.limits.hook_depth"), Some(16));
        assert_eq!(get("scripts.instructions"), Some(1_000_000));
        assert_eq!(get("scripts.memory_kb"), Some(16_384));
    }
}
