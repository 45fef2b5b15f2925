//! The differential test of the fast entries: every `ctx` function with a fast entry
//! (its row in [`api::CTX`] says so) is called through it and through its general
//! function alone, in two states made alike, with arguments the table's parameters
//! generate — plain integers, integers off the board, whole and fractional floats,
//! numerals as text, other text, nil, booleans, tables, a missing and an extra argument —
//! directly and through `pcall`. The two must agree on what the call returned or the
//! error it raised (word for word), what it was charged, the hook call's replay record,
//! the failure kept for the host, and the game it left, events included.

use std::fmt::Write as _;
use std::rc::Rc;

use mlua::{Function, Lua, MultiValue, Table, Value};

use crate::content::base_for_tests as base;
use crate::rules::{
    Area, BudgetStep, CardId, Catalog, Cause, Cell, Effects, Event, GameState, MoveLimits, NoHooks,
    Offset, ScriptId, Seat, Token,
};
use crate::script::api::{self, Row};
use crate::script::budget::ScriptBudget;
use crate::script::ctx::{self, CallSlot, CtxTable};
use crate::script::raw::Target;
use crate::script::sandbox;

/// A game with a few tokens of both seats, the same every time.
fn game(catalog: &Catalog) -> GameState {
    let cards: Vec<_> = (0..8).map(CardId::from_index).collect();
    let stacks = vec![cards[..4].to_vec(), cards[4..].to_vec()];
    let mut state = GameState::new(catalog, [&stacks, &stacks], 7);
    let kind = |name: &str| {
        catalog
            .token_type_named(name)
            .unwrap_or_else(|e| panic!("{e}"))
    };
    for (x, y, name, seat, value) in [
        (2, 3, "basic", Seat::One, 3),
        (3, 3, "resilient", Seat::Two, 1),
        (2, 2, "booster", Seat::Two, 2),
        (5, 5, "basic", Seat::One, 1),
    ] {
        let token = Token {
            value,
            kind: kind(name),
            card: None,
            seat,
        };
        assert!(state.set_token(catalog, Cell::new(x, y), Some(token)));
    }
    state
}

/// One state's `ctx`, with or without its fast entries.
struct Side {
    lua: Lua,
    slot: Rc<CallSlot>,
    budget: Rc<ScriptBudget>,
    ctx: Table,
    _held: CtxTable,
}

fn side(catalog: &Catalog, fast: bool) -> Side {
    let budget = Rc::new(ScriptBudget::new(&MoveLimits {
        instructions: 1_000_000,
        wall_ms: 60_000,
        ..MoveLimits::DEFAULT
    }));
    let (lua, _) = sandbox::new_state(&budget, 16 << 20).unwrap_or_else(|e| panic!("{e}"));
    let slot = Rc::new(CallSlot::default());
    let table = ctx::make(&lua, &slot, &budget).unwrap_or_else(|e| panic!("{e}"));
    crate::script::host::keep_names(&lua, catalog).unwrap_or_else(|e| panic!("{e}"));
    if fast {
        let methods: Table = table
            .metatable()
            .and_then(|m| m.raw_get("__index").ok())
            .unwrap_or_else(|| panic!("ctx has its methods table"));
        super::install(&lua, &methods, (&slot, &budget)).unwrap_or_else(|e| panic!("{e}"));
    }
    let held = CtxTable::new(&lua, table.clone()).unwrap_or_else(|e| panic!("{e}"));
    held.set_fields(&slot, (Seat::One, Some(Cell::new(2, 3))), true);
    lua.set_app_data(Rc::clone(&slot));
    Side {
        lua,
        slot,
        budget,
        ctx: table,
        _held: held,
    }
}

/// What one call did, as text to compare.
#[derive(Debug, PartialEq)]
struct Outcome {
    returned: String,
    charged: u64,
    record: String,
    failure: String,
    game: String,
}

impl Outcome {
    /// The fields that differ, fast entry first.
    fn differences(&self, general: &Outcome) -> String {
        let fields = |o: &Outcome| {
            [
                ("returned", o.returned.clone()),
                ("charged", o.charged.to_string()),
                ("record", o.record.clone()),
                ("failure", o.failure.clone()),
                ("game", o.game.clone()),
            ]
        };
        let mut out = String::new();
        for ((what, a), (_, b)) in fields(self).into_iter().zip(fields(general)) {
            if a != b {
                let _ = writeln!(out, "  {what}: fast {a}\n  {what}: general {b}");
            }
        }
        out
    }
}

/// A Lua value as text; a table's fields sorted by name.
fn show(value: &Value) -> String {
    match value {
        Value::Table(t) => {
            let mut fields: Vec<String> = t
                .pairs::<Value, Value>()
                .map(|kv| {
                    let (k, v) = kv.unwrap_or_else(|e| panic!("{e}"));
                    format!("{}={}", show(&k), show(&v))
                })
                .collect();
            fields.sort();
            format!("{{{}}}", fields.join(", "))
        }
        Value::String(s) => format!("{:?}", s.to_string_lossy()),
        Value::Number(f) => format!("{f:?}"),
        other => format!("{other:?}"),
    }
}

fn call(side: &Side, catalog: &Catalog, code: &str) -> Outcome {
    let function: Function = side
        .lua
        .load(format!("return function(ctx)\n  {code}\nend"))
        .set_name("@t.lua")
        .eval()
        .unwrap_or_else(|e| panic!("{code}: {e}"));
    let mut state = game(catalog);
    let mut events: Vec<Event> = Vec::new();
    let area = Area::new(
        None,
        [(-1, 0), (1, 0), (0, -1), (0, 1)]
            .iter()
            .map(|&(dx, dy)| Offset { dx, dy })
            .collect(),
    );
    let returned;
    {
        let mut fx = Effects::new(
            &mut state,
            catalog,
            &NoHooks,
            Some(&mut events),
            Cause::Rules,
            Seat::One,
            Cell::new(2, 3),
            &area,
        );
        side.budget.begin_step(BudgetStep::Move);
        side.budget
            .enter("test", 1_000_000)
            .unwrap_or_else(|e| panic!("{e}"));
        side.slot.memo.start();
        let before = side.budget.used();
        let result = side
            .slot
            .lend(&mut Target::Effects(&mut fx), ScriptId(0), || {
                function.call::<MultiValue>(side.ctx.clone())
            });
        let record = side.slot.memo.stop();
        let charged = side.budget.used().saturating_sub(before);
        side.budget.leave();
        returned = (result, record, charged);
    }
    let (result, record, charged) = returned;
    let returned = match result {
        Ok(values) => values.iter().map(show).collect::<Vec<_>>().join(", "),
        Err(e) => {
            let text = e.to_string();
            let text = text.split("\nstack traceback").next().unwrap_or(&text);
            format!("error: {text}")
        }
    };
    let mut game = format!("{state:?}\n");
    for e in &events {
        let _ = writeln!(game, "{e:?}");
    }
    Outcome {
        returned,
        charged,
        record: format!("{record:?}"),
        failure: format!("{:?}", side.slot.take_failure()),
        game,
    }
}

/// A plain value for each integer parameter, by its name: a cell with a token, an empty
/// destination, seat 1, a small amount.
fn plain(param: &str) -> &'static str {
    match param {
        "x" => "2",
        "y" => "3",
        "tx" => "4",
        "ty" => "0",
        "seat" => "1",
        "i" => "2",
        "value" => "4",
        _ => "1",
    }
}

/// The argument lists to call `row` with: plain ones, then each argument in turn given
/// every kind of value the fast entry passes to the general function, then one missing
/// and one too many.
fn cases(row: &Row) -> Vec<String> {
    let spec = row.params.last().is_some_and(|p| p.ty == "SpawnSpec");
    let ints: Vec<&str> = row
        .params
        .iter()
        .filter(|p| p.ty == "integer")
        .map(|p| plain(p.name))
        .collect();
    let specs: &[&str] = if spec {
        &[
            "{}",
            "{ type = 'booster', seat = 2, value = 3 }",
            "{ seat = 1.0, value = 2.0 }",
            "{ value = 2.5 }",
            "{ seat = 3 }",
            "{ type = 'nope' }",
            "{ type = 7 }",
            "setmetatable({}, { __index = { value = 5 } })",
            "'x'",
            "nil",
        ]
    } else {
        &[""]
    };
    let odd = [
        "0",
        "-1",
        "6",
        "99",
        "2.0",
        "2.5",
        "0/0",
        "1/0",
        "'2'",
        "'x'",
        "nil",
        "true",
        "{}",
        "math.maxinteger",
        "math.mininteger",
    ];
    let join = |ints: &[&str], spec: &str| {
        let mut all: Vec<&str> = ints.to_vec();
        if !spec.is_empty() {
            all.push(spec);
        }
        all.join(", ")
    };
    let mut out = Vec::new();
    for s in specs {
        out.push(join(&ints, s));
    }
    let first_spec = specs[0];
    for i in 0..ints.len() {
        for v in odd {
            let mut changed = ints.clone();
            changed[i] = v;
            out.push(join(&changed, first_spec));
        }
    }
    // One argument missing, one too many.
    let all = join(&ints, first_spec);
    if let Some((fewer, _)) = all.rsplit_once(", ") {
        out.push(fewer.to_string());
    } else if !all.is_empty() {
        out.push(String::new());
    }
    out.push(if all.is_empty() {
        "7".to_string()
    } else {
        format!("{all}, 7")
    });
    out
}

#[test]
fn fast_entries_behave_as_their_general_functions() {
    let catalog = base();
    let (fast, general) = (side(&catalog, true), side(&catalog, false));
    let mut compared = 0;
    let mut differences = Vec::new();
    for row in api::CTX.iter().filter(|r| r.fast) {
        for args in cases(row) {
            let name = row.name;
            let after_ctx = if args.is_empty() {
                String::new()
            } else {
                format!(", {args}")
            };
            for code in [
                format!("return ctx:{name}({args})"),
                format!("return pcall(ctx.{name}, ctx{after_ctx})"),
            ] {
                let (a, b) = (
                    call(&fast, &catalog, &code),
                    call(&general, &catalog, &code),
                );
                compared += 1;
                if a != b {
                    differences.push(format!("{code}\n{}", a.differences(&b)));
                }
            }
        }
    }
    assert!(compared > 500, "{compared} calls compared");
    assert!(
        differences.is_empty(),
        "{} of {compared} calls differ:\n{}",
        differences.len(),
        differences.join("\n")
    );
}

/// The record the table promises: a call of a recorded function that succeeds is kept in
/// the hook call's record, one of a function without spoils it (on both entries).
#[test]
fn recorded_functions_are_recorded_and_the_others_spoil_the_record() {
    let catalog = base();
    for fast in [true, false] {
        let side = side(&catalog, fast);
        for row in api::CTX.iter() {
            let args = match row.name {
                "log" => "'hello'".to_string(),
                "set_type" => "2, 3, 'booster'".to_string(),
                "spawn" => "0, 0, {}".to_string(),
                _ => row
                    .params
                    .iter()
                    .map(|p| plain(p.name))
                    .collect::<Vec<_>>()
                    .join(", "),
            };
            let code = format!("return ctx:{}({args})", row.name);
            let out = call(&side, &catalog, &code);
            assert!(!out.returned.starts_with("error"), "{code}: {out:?}");
            assert_eq!(
                out.record != "None",
                row.recorded,
                "{code} (fast entries {fast}): record {}",
                out.record
            );
        }
    }
}
