//! Every Lua example in docs/lua.md runs, and does what the page says it does.
//!
//! Each ```` ```lua ```` block of the page is found by a phrase of its own ([`CHECKS`]),
//! put into a pack `doc` as the page says it is used (a whole ability or token-type script,
//! the body of an `on_place` hook, an `ai.lua`), and played in scenarios around it. A block
//! with no check, or a check whose phrase finds no block or several, fails the test: a new
//! example on the page needs its check here.
//!
//! In a hook body, a line ending in `--> VALUE` is a documented result: on a `ctx:log`
//! line, the text logged; on `local a, b = ...`, the values the locals get
//! (`tostring`, joined with `, `); on any other statement, `tostring` of its value. A
//! parenthesised remark after the value (`--> bdac (equal elements keep their order)`) is
//! not part of it.

use std::fmt::Write as _;
use std::path::Path;

use tokensmith::rules::{EventKind, GameView, Seat};
use tokensmith::scenario::{self, PackPaths, Run, ScenarioOutcome};
use tokensmith::script::ScriptHost;

use crate::support::{TempPacks, root};

/// A `lua` block of docs/lua.md: the line its code starts on and the code, dedented.
struct Example {
    line: usize,
    code: String,
}

fn examples() -> Vec<Example> {
    let path = root().join("docs/lua.md");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: cannot read it: {e}", path.display()));
    let mut out = Vec::new();
    let mut open: Option<(usize, usize, String)> = None;
    for (i, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        match &mut open {
            None if trimmed.starts_with("```lua") => {
                open = Some((i + 2, line.len() - trimmed.len(), String::new()));
            }
            None => {}
            Some((start, indent, code)) => {
                if trimmed.starts_with("```") {
                    out.push(Example {
                        line: *start,
                        code: std::mem::take(code),
                    });
                    open = None;
                } else {
                    let cut = line
                        .char_indices()
                        .take_while(|(n, c)| *n < *indent && *c == ' ')
                        .count();
                    code.push_str(&line[cut..]);
                    code.push('\n');
                }
            }
        }
    }
    assert!(
        open.is_none(),
        "docs/lua.md: a ```lua block is never closed"
    );
    out
}

/// How an example is used.
#[derive(Clone, Copy)]
enum Role {
    /// A whole ability script: the card `example` (value 2, area cross unless `card` says
    /// otherwise) has the ability `example` running it.
    Ability,
    /// The body of an ability's `on_place`: wrapped in `return { on_place = function(ctx)
    /// ... end }`; its `-->` results are checked.
    Body,
    /// A whole token-type script: the card `example` places a token of type `example`.
    Token,
    /// The page's outline of every hook: the script of the ability `example` and of the
    /// token type `example`, both on the card.
    Outline,
    /// The pack's `ai.lua`.
    Ai,
}

/// One example's check.
struct Check {
    /// A phrase found in this example's code and no other's.
    phrase: &'static str,
    role: Role,
    /// Fields of the card `example` (YAML, one per line) replacing `value: 2` and
    /// `area: cross`.
    card: &'static str,
    /// More of the pack: `(path in the pack, text)`; a `content2.yaml` adds content.
    extra: &'static [(&'static str, &'static str)],
    /// Scenarios (the YAML keys after `packs`, `pack_dirs` and `rules: { opening_token:
    /// null }`), each of which must pass; the example's card is `example`.
    scenarios: &'static [&'static str],
    /// The log lines the scenarios print, all of them in order (for a `Body`, after those
    /// its `-->` results give).
    logs: &'static [&'static str],
    /// A last look at the first scenario's run.
    then: Option<fn(&Run)>,
}

const PLAY: &str = "moves:\n  - { seat: 1, card: example, at: [2, 2], sandbox: true }\n";

/// A token type `keg` whose `on_destroyed` logs the fields of its `ctx`.
const KEG: &[(&str, &str)] = &[
    (
        "content2.yaml",
        "token_types:\n  - id: keg\n    name: Keg\n    script: scripts/keg.lua\n",
    ),
    (
        "scripts/keg.lua",
        "return {\n  on_destroyed = function(ctx, self)\n    ctx:log(string.format(\"keg: seat %d at (%d, %d)\", ctx.seat, ctx.x, ctx.y))\n  end,\n}\n",
    ),
];

/// A token type `powder_keg` of no effect of its own, for the `ai.lua` example.
const POWDER_KEG: &[(&str, &str)] = &[(
    "content2.yaml",
    "token_types:\n  - id: powder_keg\n    name: Powder Keg\n",
)];

const fn check(phrase: &'static str, role: Role, scenarios: &'static [&'static str]) -> Check {
    Check {
        phrase,
        role,
        card: "value: 2\n    area: cross",
        extra: &[],
        scenarios,
        logs: &[],
        then: None,
    }
}

/// The cross around (2, 2), in area order: (2, 1), (1, 2), (3, 2), (2, 3).
const CHECKS: &[Check] = &[
    // A first script.
    check(
        "-- Spark: 1 damage to each enemy token in the card's area.",
        Role::Ability,
        &["board:
  - { at: [2, 1], seat: 2, value: 1 }
  - { at: [1, 2], seat: 1, value: 2 }
  - { at: [3, 2], seat: 2, value: 2 }
moves:
  - { seat: 1, card: example, at: [2, 2], sandbox: true }
expect:
  board:
    - { at: [1, 2], seat: 1, value: 2 }
    - { at: [2, 2], seat: 1, value: 2 }
    - { at: [3, 2], seat: 2, value: 1 }
"],
    ),
    // The outline of a script: every hook doing nothing changes nothing.
    Check {
        card: "value: 2\n    area: cross\n    token: example",
        ..check(
            "code here runs once, when the content is loaded",
            Role::Outline,
            &["moves:
  - { seat: 1, card: example, at: [2, 2], sandbox: true }
  - { seat: 2, card: example, at: [0, 0], sandbox: true }
expect:
  board:
    - { at: [2, 2], seat: 1, value: 2, type: example }
    - { at: [0, 0], seat: 2, value: 2, type: example }
  income: { 1: 2, 2: 2 }
  scores: { 1: 4, 2: 2 }
"],
        )
    },
    // The fields belong to the call.
    Check {
        extra: KEG,
        logs: &[
            "keg: seat 2 at (3, 2)",
            "ctx says 1 (2, 2), the copies say 1 (2, 2)",
        ],
        ..check(
            "the copies say %d (%d, %d)",
            Role::Body,
            &["board:
  - { at: [3, 2], seat: 2, value: 1, type: keg }
moves:
  - { seat: 1, card: example, at: [2, 2], sandbox: true }
expect:
  empty: [[3, 2]]
"],
        )
    },
    // Sprout grows by 1 between turns, up to 5.
    Check {
        card: "value: 4\n    token: example",
        ..check(
            "-- Sprout: between turns, grows by 1, up to 5.",
            Role::Token,
            &["moves:
  - { seat: 1, card: example, at: [2, 2], sandbox: true }
  - { seat: 2, card: example, at: [0, 0], sandbox: true }
expect:
  board:
    - { at: [2, 2], seat: 1, value: 5, type: example }
    - { at: [0, 0], seat: 2, value: 5, type: example }
"],
        )
    },
    // Miser earns double while its owner is behind, and not otherwise.
    Check {
        card: "value: 3\n    token: example",
        ..check(
            "-- Miser: earns double while its owner is behind.",
            Role::Token,
            &[
                "board:
  - { at: [0, 0], seat: 1, value: 3, type: example }
scores: { 1: 0, 2: 10 }
expect:
  income: { 1: 6 }
",
                "board:
  - { at: [0, 0], seat: 1, value: 3, type: example }
scores: { 1: 10, 2: 0 }
expect:
  income: { 1: 3 }
",
            ],
        )
    },
    // Seedpod leaves a basic 1 of its owner when destroyed by losing value.
    Check {
        card: "value: 1\n    token: example",
        ..check(
            "-- Seedpod: when destroyed by losing value",
            Role::Token,
            &["board:
  - { at: [3, 2], seat: 2, value: 1, type: example }
moves:
  - { seat: 1, card: weaken_cross, at: [2, 2], sandbox: true }
expect:
  tokens:
    - { at: [3, 2], seat: 2, value: 1, type: basic }
"],
        )
    },
    // A point for the other seat (the mover's own comes from its income).
    check(
        "ctx:add_score(ctx.opponent, 1)",
        Role::Body,
        &["moves:
  - { seat: 1, card: example, at: [2, 2], sandbox: true }
expect:
  scores: { 1: 2, 2: 1 }
"],
    ),
    // The board's size and what is on it: the `-->` results.
    check("ctx:log(tostring(ctx:width()))", Role::Body, &[PLAY]),
    // The token right of the placed one, hit when it is an enemy of 3 or more.
    check(
        "local t = ctx:token(ctx.x + 1, ctx.y)",
        Role::Body,
        &["board:
  - { at: [3, 2], seat: 2, value: 3 }
moves:
  - { seat: 1, card: example, at: [2, 2], sandbox: true }
expect:
  tokens:
    - { at: [3, 2], seat: 2, value: 2 }
"],
    ),
    // One part of a cell as a plain value, and the strongest enemy around: the `-->`
    // results (a stronger friendly token beside it is passed over).
    check(
        "reading only what the choice needs",
        Role::Body,
        &["board:
  - { at: [2, 1], seat: 2, value: 3 }
  - { at: [1, 1], seat: 2, value: 2 }
  - { at: [1, 2], seat: 1, value: 5 }
moves:
  - { seat: 1, card: example, at: [2, 2], sandbox: true }
"],
    ),
    // Counting a seat's tokens.
    Check {
        logs: &["seat 1 has 2 tokens"],
        ..check(
            "local mine = 0",
            Role::Body,
            &["board:
  - { at: [0, 0], seat: 1, value: 1 }
  - { at: [5, 5], seat: 2, value: 1 }
moves:
  - { seat: 1, card: example, at: [2, 2], sandbox: true }
"],
        )
    },
    // Spawning on every target: nothing happens where a cell is taken.
    check(
        "ctx:spawn(cell.x, cell.y, {})",
        Role::Body,
        &["board:
  - { at: [3, 2], seat: 2, value: 3 }
moves:
  - { seat: 1, card: example, at: [2, 2], sandbox: true }
expect:
  board:
    - { at: [2, 2], seat: 1, value: 2 }
    - { at: [3, 2], seat: 2, value: 3 }
    - { at: [2, 1], seat: 1, value: 1 }
    - { at: [1, 2], seat: 1, value: 1 }
    - { at: [2, 3], seat: 1, value: 1 }
"],
    ),
    // Targets by number, and `nil, nil` past the last.
    check(
        "for i = 1, ctx:target_count() do",
        Role::Body,
        &["board:
  - { at: [2, 1], seat: 2, value: 1 }
  - { at: [3, 2], seat: 2, value: 2 }
moves:
  - { seat: 1, card: example, at: [2, 2], sandbox: true }
expect:
  empty: [[2, 1]]
  tokens:
    - { at: [3, 2], seat: 2, value: 1 }
"],
    ),
    // An extra turn to catch up, only when behind.
    check(
        "ctx:extra_turn(ctx.seat)     -- catch up",
        Role::Body,
        &[
            "scores: { 1: 0, 2: 5 }
moves:
  - { seat: 1, card: example, at: [2, 2], sandbox: true }
expect:
  next: 1
",
            "moves:
  - { seat: 1, card: example, at: [2, 2], sandbox: true }
expect:
  next: 2
",
        ],
    ),
    // `ctx:damage` says whether a token was there.
    Check {
        logs: &["false", "false", "true", "false"],
        ..check(
            "local hit = ctx:damage(cell.x, cell.y, 2)",
            Role::Body,
            &["board:
  - { at: [3, 2], seat: 2, value: 3 }
moves:
  - { seat: 1, card: example, at: [2, 2], sandbox: true }
expect:
  tokens:
    - { at: [3, 2], seat: 2, value: 1 }
"],
        )
    },
    // Halving, rounding down: a 1 becomes 0 and is destroyed.
    check(
        "ctx:set_value(t.x, t.y, t.value // 2)",
        Role::Body,
        &["board:
  - { at: [3, 2], seat: 2, value: 3 }
  - { at: [1, 2], seat: 1, value: 1 }
moves:
  - { seat: 1, card: example, at: [2, 2], sandbox: true }
expect:
  empty: [[1, 2]]
  tokens:
    - { at: [3, 2], seat: 2, value: 1 }
"],
    ),
    // Moving each target up a row; a blocked one is stuck.
    Check {
        logs: &["(3, 2) is stuck"],
        ..check(
            "is stuck",
            Role::Body,
            &["board:
  - { at: [3, 2], seat: 2, value: 1 }
  - { at: [3, 1], seat: 2, value: 4 }
  - { at: [1, 2], seat: 1, value: 1 }
moves:
  - { seat: 1, card: example, at: [2, 2], sandbox: true }
expect:
  empty: [[1, 2]]
  tokens:
    - { at: [1, 1], seat: 1, value: 1 }
    - { at: [3, 2], seat: 2, value: 1 }
    - { at: [3, 1], seat: 2, value: 4 }
"],
        )
    },
    // Moving off the board removes the token.
    check(
        "ctx:move(ctx.x + 1, ctx.y, ctx.x + 1, -1)",
        Role::Body,
        &["board:
  - { at: [3, 2], seat: 2, value: 5 }
moves:
  - { seat: 1, card: example, at: [2, 2], sandbox: true }
expect:
  empty: [[3, 2]]
"],
    ),
    // Removing resilient tokens for good.
    check(
        "ctx:remove(cell.x, cell.y)",
        Role::Body,
        &["board:
  - { at: [3, 2], seat: 2, value: 3, type: resilient }
  - { at: [1, 2], seat: 2, value: 3 }
moves:
  - { seat: 1, card: example, at: [2, 2], sandbox: true }
expect:
  empty: [[3, 2]]
  tokens:
    - { at: [1, 2], seat: 2, value: 3 }
"],
    ),
    // Spawning with and without a spec.
    check(
        "ctx:spawn(ctx.x - 1, ctx.y, {})",
        Role::Body,
        &["moves:
  - { seat: 1, card: example, at: [2, 2], sandbox: true }
expect:
  tokens:
    - { at: [1, 2], seat: 1, value: 1, type: basic }
    - { at: [3, 2], seat: 2, value: 3, type: booster }
"],
    ),
    // Turning the mover's tokens golden; owner and value stay.
    check(
        "ctx:set_type(cell.x, cell.y, \"base:golden\")",
        Role::Body,
        &["board:
  - { at: [3, 2], seat: 1, value: 1 }
  - { at: [1, 2], seat: 2, value: 1 }
moves:
  - { seat: 1, card: example, at: [2, 2], sandbox: true }
expect:
  tokens:
    - { at: [3, 2], seat: 1, value: 1, type: golden }
    - { at: [1, 2], seat: 2, value: 1, type: basic }
"],
    ),
    // An extra turn for the mover.
    Check {
        phrase: "ctx:extra_turn(ctx.seat)\n",
        ..check(
            "",
            Role::Body,
            &["moves:
  - { seat: 1, card: example, at: [2, 2], sandbox: true }
expect:
  next: 1
"],
        )
    },
    // Taking points off the mover: its income of 2, less 2.
    check(
        "ctx:add_score(ctx.seat, -2)",
        Role::Body,
        &["moves:
  - { seat: 1, card: example, at: [2, 2], sandbox: true }
expect:
  scores: { 1: 0, 2: 0 }
"],
    ),
    // One random target takes 3.
    Check {
        then: Some(one_random_target_destroyed),
        ..check(
            "ctx:target(ctx:random(n))",
            Role::Body,
            &["board:
  - { at: [2, 1], seat: 2, value: 3 }
  - { at: [1, 2], seat: 2, value: 3 }
  - { at: [3, 2], seat: 2, value: 3 }
  - { at: [2, 3], seat: 2, value: 3 }
moves:
  - { seat: 1, card: example, at: [2, 2], sandbox: true }
"],
        )
    },
    // Counting hits.
    Check {
        logs: &["hit 2 tokens"],
        ..check(
            "local hits = 0",
            Role::Body,
            &["board:
  - { at: [3, 2], seat: 2, value: 1 }
  - { at: [1, 2], seat: 1, value: 1 }
moves:
  - { seat: 1, card: example, at: [2, 2], sandbox: true }
expect:
  empty: [[3, 2], [1, 2]]
"],
        )
    },
    // The AI's view of powder kegs: 2 points per enemy around a keg, for its owner.
    Check {
        extra: POWDER_KEG,
        then: Some(kegs_are_weighed),
        ..check(
            "-- The AI's view of powder kegs",
            Role::Ai,
            &["board:
  - { at: [2, 2], seat: 1, value: 2, type: powder_keg }
  - { at: [1, 1], seat: 2, value: 1 }
  - { at: [3, 3], seat: 2, value: 1 }
  - { at: [2, 1], seat: 1, value: 1 }
  - { at: [5, 5], seat: 2, value: 1 }
"],
        )
    },
    // `pairs` in a fixed order.
    check("[true] = 5, [1.5] = 6", Role::Body, &[PLAY]),
    // `pairs` refuses table keys.
    check(
        "local seen = { [{}] = true }",
        Role::Body,
        &["moves:
  - { seat: 1, card: example, at: [2, 2], sandbox: true }
expect:
  error: \"pairs: a table with table keys has no fixed order; use numbers or strings as keys\"
"],
    ),
    // A stable `table.sort`.
    check("table.sort(list, function(p, q)", Role::Body, &[PLAY]),
    // `tostring` of tables and functions.
    check("tostring(print)", Role::Body, &[PLAY]),
    // No weak tables.
    check(
        "setmetatable({}, { __mode = \"k\" })",
        Role::Body,
        &["moves:
  - { seat: 1, card: example, at: [2, 2], sandbox: true }
expect:
  error: \"setmetatable: '__mode' is not available in scripts\"
"],
    ),
    // Short `__index` chains made in order.
    check("local Knight = setmetatable({}, Base)", Role::Body, &[PLAY]),
    // An upvalue reads the same at the start of every move.
    Check {
        logs: &["plays = 1", "plays = 1"],
        ..check(
            "local plays = 0",
            Role::Ability,
            &["moves:
  - { seat: 1, card: example, at: [2, 2], sandbox: true }
  - { seat: 2, card: example, at: [0, 0], sandbox: true }
"],
        )
    },
    // A spent budget cannot be caught.
    check(
        "ctx:log(\"never reached\")",
        Role::Body,
        &["moves:
  - { seat: 1, card: example, at: [2, 2], sandbox: true }
expect:
  error: \"on_place spent the instruction budget of 1000000 per hook call\"
"],
    ),
    // `pcall` around a failing `ctx` call: the move is refused all the same.
    check(
        "pcall(ctx.damage, ctx, 9, 9, 1)",
        Role::Body,
        &["moves:
  - { seat: 1, card: example, at: [2, 2], sandbox: true }
expect:
  error: \"ctx:damage: cell (9, 9) is off the board\"
"],
    ),
    // The editor's typed script: the placed token takes 1.
    check(
        "---@type AbilityHooks",
        Role::Ability,
        &["moves:
  - { seat: 1, card: example, at: [2, 2], sandbox: true }
expect:
  board:
    - { at: [2, 2], seat: 1, value: 1 }
"],
    ),
];

/// Exactly one of the four seat-2 threes around (2, 2) was destroyed.
fn one_random_target_destroyed(run: &Run) {
    let left = run
        .state
        .board()
        .tokens()
        .filter(|(_, t)| t.seat == Seat::Two)
        .count();
    assert_eq!(
        left, 3,
        "one of the four targets should have been destroyed"
    );
}

/// A keg of seat 1 with two enemies around it: +4 for seat 1, -4 for seat 2.
fn kegs_are_weighed(run: &Run) {
    let host = ScriptHost::new(&run.catalog).unwrap_or_else(|d| panic!("{d:#?}"));
    let view = GameView {
        state: &run.state,
        catalog: &run.catalog,
    };
    for (seat, want) in [(Seat::One, 4.0), (Seat::Two, -4.0)] {
        let got = host
            .heuristics(&view, seat)
            .unwrap_or_else(|e| panic!("evaluate failed: {e}"));
        assert!(
            (got - want).abs() < f64::EPSILON,
            "evaluate for seat {} should be {want}, got {got}",
            seat.number()
        );
    }
}

/// The documented result of a `-->` line: the value, without a remark in brackets.
fn documented(after: &str) -> String {
    let after = after.trim();
    after
        .find(" (")
        .map_or(after, |i| &after[..i])
        .trim()
        .to_string()
}

/// A hook body as an ability script logging its `-->` results; the results, in order.
fn body_script(code: &str) -> (String, Vec<String>) {
    let mut script = String::from("return {\n  on_place = function(ctx)\n");
    let mut results = Vec::new();
    for line in code.lines() {
        let Some((stmt, result)) = line.split_once("-->") else {
            script.push_str(line);
            script.push('\n');
            continue;
        };
        let stmt = stmt.trim_end();
        results.push(documented(result));
        let bare = stmt.trim_start();
        if bare.starts_with("ctx:log(") {
            script.push_str(stmt);
        } else if let Some(rest) = bare.strip_prefix("local ") {
            let names = rest.split_once('=').map_or(rest, |(n, _)| n);
            let shown: Vec<String> = names
                .split(',')
                .map(|n| format!("tostring({})", n.trim()))
                .collect();
            let _ = write!(script, "{stmt}\nctx:log({})", shown.join(" .. \", \" .. "));
        } else {
            let _ = write!(script, "ctx:log(tostring({bare}))");
        }
        script.push('\n');
    }
    script.push_str("  end,\n}\n");
    (script, results)
}

/// The pack `doc` for `example` used as `check.role` says, and the logs its `-->` lines
/// promise.
fn pack(check: &Check, code: &str) -> (Vec<(String, String)>, Vec<String>) {
    let mut files = vec![(
        "doc/pack.yaml".to_string(),
        "id: doc\nname: doc\nversion: 1.0.0\nrequires:\n  - { id: base, version: \"^1\" }\n"
            .to_string(),
    )];
    let mut content = String::new();
    let mut results = Vec::new();
    let ability = |content: &mut String| {
        content.push_str("abilities:\n  - id: example\n    script: scripts/example.lua\n");
    };
    let token = |content: &mut String| {
        content.push_str("token_types:\n  - id: example\n    script: scripts/example.lua\n");
    };
    match check.role {
        Role::Ability => {
            ability(&mut content);
            files.push(("doc/scripts/example.lua".into(), code.to_string()));
        }
        Role::Body => {
            ability(&mut content);
            let (script, logged) = body_script(code);
            results = logged;
            files.push(("doc/scripts/example.lua".into(), script));
        }
        Role::Token => {
            token(&mut content);
            files.push(("doc/scripts/example.lua".into(), code.to_string()));
        }
        Role::Outline => {
            ability(&mut content);
            token(&mut content);
            files.push(("doc/scripts/example.lua".into(), code.to_string()));
        }
        Role::Ai => files.push(("doc/ai.lua".into(), code.to_string())),
    }
    let ability_line = if matches!(check.role, Role::Ability | Role::Body | Role::Outline) {
        "\n    ability: example"
    } else {
        ""
    };
    let _ = write!(
        content,
        "cards:\n  - id: example\n    name: Example\n    {}{ability_line}\n",
        check.card
    );
    files.push(("doc/content.yaml".into(), content));
    for (path, text) in check.extra {
        files.push((format!("doc/{path}"), (*text).to_string()));
    }
    (files, results)
}

fn logs(run: &Run) -> Vec<String> {
    run.events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::Log { text } => Some(text.clone()),
            _ => None,
        })
        .collect()
}

/// Run `check` on `example`; a description of what went wrong, if anything did.
fn run_check(check: &Check, example: &Example) -> Result<(), String> {
    let (files, mut want) = pack(check, &example.code);
    want.extend(check.logs.iter().map(ToString::to_string));
    let mut refs: Vec<(String, String)> = files;
    for (i, body) in check.scenarios.iter().enumerate() {
        refs.push((
            format!("scenario{i}.yaml"),
            format!("packs: [doc]\npack_dirs: [\".\"]\nrules: {{ opening_token: null }}\n{body}"),
        ));
    }
    let pairs: Vec<(&str, &str)> = refs.iter().map(|(p, t)| (p.as_str(), t.as_str())).collect();
    let dir = TempPacks::new(&pairs);
    let packs = PackPaths {
        content: root().join("content"),
        mods: dir.path().join("no-mods"),
    };
    let mut got = Vec::new();
    let mut first = None;
    for i in 0..check.scenarios.len() {
        let path: &Path = &dir.path().join(format!("scenario{i}.yaml"));
        let run = scenario::run_file(path, &packs).map_err(|e| {
            let problems: Vec<String> = e.diagnostics.iter().map(ToString::to_string).collect();
            format!(
                "scenario {i} cannot run:\n{}\nits pack:\n{}",
                problems.join("\n"),
                show(&refs)
            )
        })?;
        if let ScenarioOutcome::Fail(why) = &run.outcome {
            return Err(format!(
                "scenario {i} failed:\n{why}\nlogs: {:?}\nits pack:\n{}",
                logs(&run),
                show(&refs)
            ));
        }
        got.extend(logs(&run));
        first.get_or_insert(run);
    }
    if got != want {
        return Err(format!(
            "the logs differ from the documented results\n  documented: {want:?}\n  logged:     {got:?}\nits pack:\n{}",
            show(&refs)
        ));
    }
    if let (Some(then), Some(run)) = (check.then, &first) {
        then(run);
    }
    Ok(())
}

fn show(files: &[(String, String)]) -> String {
    files
        .iter()
        .map(|(p, t)| format!("--- {p}\n{t}"))
        .collect::<Vec<_>>()
        .join("")
}

#[test]
fn every_lua_example_in_the_docs_has_exactly_one_check() {
    let examples = examples();
    assert!(
        examples.len() >= 30,
        "docs/lua.md should hold its ~34 examples, found {}",
        examples.len()
    );
    let mut problems = Vec::new();
    for check in CHECKS {
        let found = examples
            .iter()
            .filter(|e| e.code.contains(check.phrase))
            .count();
        if found != 1 {
            problems.push(format!(
                "the check for {:?} finds {found} examples in docs/lua.md, not 1",
                check.phrase
            ));
        }
    }
    for e in &examples {
        if !CHECKS.iter().any(|c| e.code.contains(c.phrase)) {
            problems.push(format!(
                "docs/lua.md:{}: this example has no check in tests/integration/lua_docs.rs; add one:\n{}",
                e.line, e.code
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}

#[test]
fn every_lua_example_in_the_docs_does_what_the_docs_say() {
    let examples = examples();
    let mut failures = Vec::new();
    for check in CHECKS {
        let Some(example) = examples.iter().find(|e| e.code.contains(check.phrase)) else {
            continue; // reported by the test above
        };
        if let Err(why) = run_check(check, example) {
            failures.push(format!("docs/lua.md:{}: {why}", example.line));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} examples:\n\n{}",
        failures.len(),
        CHECKS.len(),
        failures.join("\n\n")
    );
}
