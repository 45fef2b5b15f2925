//! Lua hooks: the sandbox's escape vectors, the instruction budget and memory cap, script
//! errors (refused moves and load-time diagnostics), determinism (in one process, across
//! processes, across threads) and one host per worker thread.
//!
//! Every pack here is written to a temporary folder: a pack `t` (or `pa`, `pb`, `det`)
//! requiring base, with one ability and one card per script (see [`pack_files`]). A refused
//! move is always checked to leave the state and the events exactly as they were.

use std::sync::mpsc;
use std::time::{Duration, Instant};

use tokensmith::content::{LoadOptions, Loaded, PackFolder};
use tokensmith::rules::{
    Catalog, Cause, Cell, Engine, Event, EventKind, GameState, HookError, HookErrorKind, Move,
    MoveError, Play, Seat,
};
use tokensmith::scenario::{self, PackPaths, ScenarioOutcome};
use tokensmith::script::{self, ScriptHost};

use crate::support::{
    Fixture, TempPacks, fixture, load_with_scripts as load, root, scripted_pack, temp,
};

// ---------------------------------------------------------------------------------------
// Packs, games and a watchdog

/// What a refused script may take before the test calls it a hang. Generous: the limits
/// stop these attacks in milliseconds (`cargo bench --bench adversarial` measures it), and
/// a loaded 2-core machine must never fail the test, while an unbounded attack runs for
/// hours and still does.
const HANG: Duration = Duration::from_secs(20);

/// A pack `id` requiring base (see [`scripted_pack`]), `extra` appended to its
/// `pack.yaml`.
fn pack_files(id: &str, extra: &str, scripts: &[(&str, &str)]) -> Vec<(String, String)> {
    scripted_pack(id, extra, "", scripts)
}

/// A pack `t` (default limits) with these ability scripts.
fn pack(scripts: &[(&str, &str)]) -> Fixture {
    fixture(&pack_files("t", "", scripts))
}

/// A pack `t` with one ability script per `(name, attempt)`, each [`after_effects`].
fn attempts_pack(attempts: &[(&str, &str)]) -> Fixture {
    let scripts: Vec<(String, String)> = attempts
        .iter()
        .map(|(name, attempt)| ((*name).to_string(), after_effects(attempt)))
        .collect();
    let refs: Vec<(&str, &str)> = scripts
        .iter()
        .map(|(n, s)| (n.as_str(), s.as_str()))
        .collect();
    pack(&refs)
}

/// An ability script whose `on_place` first changes the game (a score, a log line, a
/// spawned token), then runs `attempt` on line 6.
fn after_effects(attempt: &str) -> String {
    format!(
        "return {{\n  on_place = function(ctx)\n    ctx:add_score(ctx.seat, 100)\n    ctx:log('changed the game')\n    ctx:spawn(ctx.x + 1, ctx.y, {{ value = 5 }})\n    {attempt}\n  end,\n}}\n"
    )
}

/// A game: both seats hold base's starter deck, seed 7 (the opening token lands on a central
/// cell; the tests play around the edges). Moves play any card of the catalog.
struct Game<'a> {
    engine: Engine<'a>,
    state: GameState,
    events: Vec<Event>,
}

impl<'a> Game<'a> {
    fn new(catalog: &'a Catalog, host: &'a ScriptHost) -> Game<'a> {
        let engine = Engine::new(catalog, host);
        let deck = &catalog.decks()[0].stacks;
        let mut events = Vec::new();
        let state = engine
            .new_game([deck, deck], 7, &mut events)
            .expect("the starter deck is legal");
        Game {
            engine,
            state,
            events,
        }
    }

    /// Play `card` (any card of the catalog) at `(x, y)` for the seat to move.
    fn play(&mut self, card: &str, x: i32, y: i32) -> Result<(), String> {
        let card = self
            .engine
            .catalog()
            .card_named(card)
            .unwrap_or_else(|e| panic!("{e}"));
        let mv = Move {
            seat: self.state.turn(),
            play: Play::Card(card),
            cell: Cell::new(x, y),
        };
        self.engine
            .play(&mut self.state, mv, &mut self.events)
            .map_err(|e| e.to_string())
    }

    /// Play a move that must be played.
    fn played(&mut self, card: &str, x: i32, y: i32) {
        if let Err(e) = self.play(card, x, y) {
            panic!("{card} at ({x}, {y}) should be played, but it was refused: {e}");
        }
    }

    /// Play a move that must be refused, leaving the state and the events exactly as they
    /// were; the refusal's message.
    fn refused(&mut self, card: &str, x: i32, y: i32) -> String {
        let (state, events) = (self.state.clone(), self.events.clone());
        let message = match self.play(card, x, y) {
            Ok(()) => panic!(
                "{card} at ({x}, {y}) should have been refused, but it was played; its events: {:#?}",
                &self.events[events.len()..]
            ),
            Err(m) => m,
        };
        assert_eq!(
            self.state, state,
            "the refused move ({message}) changed the state"
        );
        assert_eq!(
            self.events, events,
            "the refused move ({message}) left events"
        );
        message
    }

    /// The texts of the `log` events so far.
    fn logs(&self) -> Vec<String> {
        logs(&self.events)
    }
}

fn logs(events: &[Event]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::Log { text } => Some(text.clone()),
            _ => None,
        })
        .collect()
}

/// Run `work` on its own thread and wait at most `limit`: a hang fails the test instead of
/// stopping the suite (the stuck thread spins until the test process exits).
fn within<T: Send + 'static>(limit: Duration, work: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(work());
    });
    match rx.recv_timeout(limit) {
        Ok(v) => v,
        Err(mpsc::RecvTimeoutError::Timeout) => {
            panic!("still running after {limit:?}: the script was not stopped")
        }
        Err(mpsc::RecvTimeoutError::Disconnected) => {
            panic!("the worker thread panicked (its message is above)")
        }
    }
}

/// On a fresh host for `catalog` in a watched thread: play `card` at (0, 0), which must be
/// refused with the state untouched, then a legal base move, which must be played. The
/// refusal and the time the refused move took.
fn refused_in_thread(catalog: &Catalog, card: &str) -> (String, Duration) {
    let catalog = catalog.clone();
    let card = card.to_string();
    within(Duration::from_secs(20), move || {
        let host = ScriptHost::new(&catalog).expect("the scripts compile");
        let mut game = Game::new(&catalog, &host);
        let start = Instant::now();
        let message = game.refused(&card, 0, 0);
        let took = start.elapsed();
        game.played("weaken_row", 0, 0);
        (message, took)
    })
}

/// The first line of a refusal (Lua runtime errors carry a traceback after it).
fn first_line(message: &str) -> &str {
    message.lines().next().unwrap_or_default()
}

// ---------------------------------------------------------------------------------------
// 1. Escape vectors

#[test]
fn escape_vectors_are_refused_and_change_nothing() {
    // (card, what it attempts on line 6, a fragment of the refusal)
    let cases: &[(&str, &str, &str)] = &[
        ("io", "io.open('Cargo.toml')", "(global 'io')"),
        ("os", "os.time()", "(global 'os')"),
        ("os_execute", "os.execute('true')", "(global 'os')"),
        ("require", "require('os')", "(global 'require')"),
        ("load", "load('return 1')()", "(global 'load')"),
        (
            "loadstring",
            "loadstring('return 1')()",
            "(global 'loadstring')",
        ),
        ("dofile", "dofile('Cargo.toml')", "(global 'dofile')"),
        ("loadfile", "loadfile('Cargo.toml')", "(global 'loadfile')"),
        ("debug", "debug.getinfo(1)", "(global 'debug')"),
        ("package", "package.loadlib('x', 'y')", "(global 'package')"),
        (
            "collectgarbage",
            "collectgarbage('count')",
            "(global 'collectgarbage')",
        ),
        ("print", "print('hello')", "(global 'print')"),
        (
            "coroutine",
            "coroutine.wrap(function() end)()",
            "(global 'coroutine')",
        ),
        (
            "string_dump",
            "string.dump(function() end)",
            "(field 'dump')",
        ),
        (
            "method_dump",
            "local f = ('').dump; f(function() end)",
            "(local 'f')",
        ),
        ("math_random", "math.random(6)", "(field 'random')"),
        (
            "math_randomseed",
            "math.randomseed(1)",
            "(field 'randomseed')",
        ),
        (
            "g_io",
            "_G.io.open('Cargo.toml')",
            "attempt to index a nil value",
        ),
        (
            "env_io",
            "_ENV.io.open('Cargo.toml')",
            "attempt to index a nil value",
        ),
        (
            "rawget_os",
            "rawget(_ENV, 'os').time()",
            "attempt to index a nil value",
        ),
        (
            "env_load",
            "_ENV.load('return 1')",
            "attempt to call a nil value",
        ),
        (
            "string_metatable",
            "getmetatable('').__index.upper = nil",
            "attempt to index a boolean value",
        ),
        (
            "gc",
            "setmetatable({}, { __gc = function() end })",
            "'__gc' is not available",
        ),
        (
            "weak_keys",
            "setmetatable({}, { __mode = 'k' })",
            "'__mode' is not available",
        ),
        (
            "weak_values",
            "setmetatable({}, { __mode = 'v' })",
            "'__mode' is not available",
        ),
    ];
    let attempts: Vec<(&str, &str)> = cases.iter().map(|(n, a, _)| (*n, *a)).collect();
    let f = attempts_pack(&attempts);
    let host = ScriptHost::new(&f.catalog).expect("the scripts compile");
    let mut game = Game::new(&f.catalog, &host);
    for (name, _, fragment) in cases {
        let message = game.refused(name, 0, 0);
        let prefix = format!("t/scripts/{name}.lua:6: ");
        assert!(
            message.starts_with(&prefix) && first_line(&message).contains(fragment),
            "{name}: expected `{prefix}...{fragment}...`, got: {message}"
        );
    }
    // The game goes on: the same cell takes a legal move.
    game.played("weaken_row", 0, 0);
}

#[test]
fn escape_globals_are_absent_however_they_are_looked_up() {
    let script = r#"
local names = { "io", "os", "require", "load", "loadstring", "dofile", "loadfile", "debug",
  "package", "collectgarbage", "print", "coroutine", "module", "utf8" }
return {
  on_place = function(ctx)
    for _, name in ipairs(names) do
      ctx:log(name .. " " .. type(_ENV[name]) .. " " .. type(rawget(_ENV, name)) .. " " ..
        type(_G and _G[name]))
    end
    ctx:log("string.dump " .. type(string.dump) .. " " .. type(("").dump))
    ctx:log("math.random " .. type(math.random) .. " " .. type(math.randomseed))
    ctx:log("string metatable " .. tostring(getmetatable("")))
  end,
}
"#;
    let f = pack(&[("look", script)]);
    let host = ScriptHost::new(&f.catalog).expect("the script compiles");
    let mut game = Game::new(&f.catalog, &host);
    game.played("look", 0, 0);
    let mut expected: Vec<String> = [
        "io",
        "os",
        "require",
        "load",
        "loadstring",
        "dofile",
        "loadfile",
        "debug",
        "package",
        "collectgarbage",
        "print",
        "coroutine",
        "module",
        "utf8",
    ]
    .iter()
    .map(|n| format!("{n} nil nil nil"))
    .collect();
    expected.push("string.dump nil nil".to_string());
    expected.push("math.random nil nil".to_string());
    expected.push("string metatable false".to_string());
    assert_eq!(game.logs(), expected);
}

#[test]
fn escape_string_rep_memory_bomb_hits_the_memory_cap() {
    // 30 MB: over the default 16 MiB cap, and cheap in instructions (rep is charged
    // 1 per 64 bytes: 470,000 of the 1,000,000), so the cap is what stops it.
    let f = pack(&[
        ("rep", &after_effects("local s = string.rep('x', 30000000)")),
        (
            "rep_sep",
            &after_effects("local s = string.rep('ab', 10000000, 'c')"),
        ),
    ]);
    for card in ["rep", "rep_sep"] {
        let (message, took) = refused_in_thread(&f.catalog, card);
        eprintln!("{card}: refused in {took:?}: {}", first_line(&message));
        assert!(
            message.starts_with(&format!("t/scripts/{card}.lua")) && message.contains("memory"),
            "{card}: expected the memory cap, got: {message}"
        );
    }
}

#[test]
fn escape_huge_tables_hit_the_memory_cap() {
    // A small cap and a large budget: the cap is what stops the endless growth.
    let loop_array = after_effects("local t, i = {}, 0\n    while true do i = i + 1; t[i] = i end");
    let loop_hash =
        after_effects("local t, i = {}, 0\n    while true do i = i + 1; t['key' .. i] = { i } end");
    let f = fixture(&pack_files(
        "t",
        "scripts: { memory_kb: 512, instructions: 50000000 }\n",
        &[("grow_array", &loop_array), ("grow_hash", &loop_hash)],
    ));
    for card in ["grow_array", "grow_hash"] {
        let (message, took) = refused_in_thread(&f.catalog, card);
        eprintln!("{card}: refused in {took:?}: {}", first_line(&message));
        assert!(
            message.starts_with(&format!("t/scripts/{card}.lua")) && message.contains("memory"),
            "{card}: expected the memory cap, got: {message}"
        );
    }
}

#[test]
fn escape_deep_recursion_ends_with_an_error() {
    let f = pack(&[
        (
            "lua_recursion",
            &after_effects("local function f(n) return 1 + f(n + 1) end\n    f(1)"),
        ),
        (
            "c_recursion",
            &after_effects("local function f() string.gsub('a', 'a', f) end\n    f()"),
        ),
        (
            "metamethod_recursion",
            &after_effects(
                "local t = setmetatable({}, { __index = function(t, k) return t[k + 1] end })\n    local x = t[1]",
            ),
        ),
        (
            "pcall_recursion",
            &after_effects("local function f() pcall(f); f() end\n    f()"),
        ),
    ]);
    for card in [
        "lua_recursion",
        "c_recursion",
        "metamethod_recursion",
        "pcall_recursion",
    ] {
        let (message, took) = refused_in_thread(&f.catalog, card);
        eprintln!("{card}: refused in {took:?}: {}", first_line(&message));
        assert!(
            message.starts_with(&format!("t/scripts/{card}.lua")),
            "{card}: the refusal should name the script: {message}"
        );
        assert!(took <= HANG, "{card} took {took:?}");
    }
}

#[test]
fn escape_error_objects_with_metatables_do_not_hang() {
    let looping = "setmetatable({}, { __tostring = function() while true do end end })";
    let f = pack(&[
        (
            "error_tostring_loops",
            &after_effects(&format!("error({looping})")),
        ),
        (
            "error_tostring_not_string",
            &after_effects("error(setmetatable({}, { __tostring = function() return {} end }))"),
        ),
        (
            "caught_then_printed",
            &after_effects(&format!(
                "local ok, e = pcall(error, {looping})\n    ctx:log(tostring(e))"
            )),
        ),
        (
            "error_in_concat",
            &after_effects(&format!("error('x' .. {looping})")),
        ),
        (
            "error_index_loops",
            &after_effects(
                "error(setmetatable({}, { __index = function() while true do end end }))",
            ),
        ),
    ]);
    for card in [
        "error_tostring_loops",
        "error_tostring_not_string",
        "caught_then_printed",
        "error_in_concat",
        "error_index_loops",
    ] {
        let (message, took) = refused_in_thread(&f.catalog, card);
        eprintln!("{card}: refused in {took:?}: {}", first_line(&message));
        assert!(
            message.starts_with(&format!("t/scripts/{card}.lua")),
            "{card}: the refusal should name the script: {message}"
        );
        assert!(took <= HANG, "{card} took {took:?}");
    }
}

/// Both packs run the same script: at its top level it notes the global `shared` and the
/// library field `string.shared` as it finds them and sets them to its pack id (the library
/// write may be refused: scripts may not change the libraries); its hook logs what it sees.
fn globals_probe(id: &str) -> String {
    format!(
        r#"local before, before_lib = shared, rawget(string, "shared")
shared = "{id}"
pcall(function() string.shared = "{id}" end)
pcall(function() math.pi = "{id}" end)
return {{
  on_place = function(ctx)
    ctx:log("{id} before " .. tostring(before) .. " " .. tostring(before_lib) .. ", now " ..
      tostring(shared) .. " " .. tostring(string.shared) .. " " .. tostring(math.pi))
    pcall(function() shared = "{id} again" end)
    pcall(function() string.shared = "{id} again" end)
  end,
}}
"#
    )
}

#[test]
fn escape_packs_cannot_see_or_change_each_others_globals() {
    // Packs load in id order: pa's top level runs first, pb's sees whatever pa left.
    let mut files = pack_files("pa", "", &[("probe_a", &globals_probe("pa"))]);
    files.extend(pack_files("pb", "", &[("probe_b", &globals_probe("pb"))]));
    let f = fixture(&files);
    let host = ScriptHost::new(&f.catalog).expect("the scripts compile");
    let mut game = Game::new(&f.catalog, &host);
    game.played("probe_a", 0, 0);
    game.played("probe_b", 5, 5);
    game.played("probe_a", 5, 0);
    game.played("probe_b", 0, 5);
    let logs = game.logs();
    assert_eq!(logs.len(), 4, "{logs:#?}");
    for line in &logs {
        let (own, other) = if line.starts_with("pa ") {
            ("pa", "pb")
        } else {
            ("pb", "pa")
        };
        assert!(
            line.starts_with(&format!("{own} before nil nil, now {own} ")),
            "each pack starts from clean globals and keeps its own: {line}"
        );
        assert!(
            !line.contains(other),
            "pack {own} sees a value of pack {other}: {line}"
        );
    }
}

#[test]
fn escape_no_userdata_or_thread_reaches_scripts() {
    // Walks ctx, every value a ctx call returns and the hook's own arguments; a
    // token type script does the same for `self` and `income`.
    let walker = r#"
local function check(v, path, seen)
  local t = type(v)
  if t == "userdata" or t == "thread" then error(path .. " is a " .. t, 0) end
  if t == "table" and not seen[v] then
    seen[v] = true
    for k, x in pairs(v) do check(x, path .. "." .. tostring(k), seen) end
    local mt = getmetatable(v)
    if mt then check(mt, path .. " (metatable)", seen) end
  end
end
"#;
    let ability = format!(
        r#"{walker}
return {{
  on_place = function(ctx, ...)
    local seen = {{}}
    check(ctx, "ctx", seen)
    check({{ ... }}, "extra arguments", seen)
    check(ctx:targets(), "targets", seen)
    check(ctx:tokens(), "tokens", seen)
    check(ctx:token(ctx.x, ctx.y), "token", seen)
    check({{ ctx:empty(0, 0), ctx:seat_at(ctx.x, ctx.y), ctx:value_at(ctx.x, ctx.y),
      ctx:type_at(ctx.x, ctx.y) }}, "plain reads", seen)
    check({{ ctx:width(), ctx:height(), ctx:on_board(0, 0), ctx:score(1), ctx:random(3),
      ctx:spawn(ctx.x + 1, ctx.y, {{ type = "glow", value = 5 }}),
      ctx:move(ctx.x + 1, ctx.y, ctx.x + 2, ctx.y), ctx:damage(ctx.x + 2, ctx.y, 1),
      ctx:set_value(ctx.x + 2, ctx.y, 3), ctx:set_type(ctx.x + 2, ctx.y, "glow"),
      ctx:add_score(1, 1), ctx:extra_turn(1), ctx:log("walked"),
      ctx:spawn(ctx.x, ctx.y + 1, {{}}), ctx:remove(ctx.x, ctx.y + 1) }}, "results", seen)
  end,
}}
"#
    );
    let token = format!(
        r#"{walker}
return {{
  income = function(ctx, self, income, ...)
    check({{ ctx, self, income, ... }}, "income arguments", {{}})
    return income
  end,
}}
"#
    );
    let mut files = pack_files("t", "", &[("walk", &ability)]);
    // The content document ends with the cards: another section can follow.
    files[1]
        .1
        .push_str("token_types:\n  - id: glow\n    script: scripts/glow.lua\n");
    files.push(("t/scripts/glow.lua".to_string(), token));
    let f = fixture(&files);
    let host = ScriptHost::new(&f.catalog).expect("the scripts compile");
    let mut game = Game::new(&f.catalog, &host);
    game.played("walk", 0, 0);
    assert_eq!(game.logs(), ["walked"]);
}

#[test]
fn escape_errors_of_ctx_calls_reach_scripts_as_strings() {
    // A caught ctx error is a string with its message (never a host object), and the
    // bad call still refuses the move: a bad ctx argument aborts the move, caught or not.
    let script = r#"
return {
  on_place = function(ctx)
    local ok, e = pcall(ctx.score, ctx, 3)
    local ok2, e2 = pcall(ctx.token, ctx, "a", 1)
    error("caught " .. type(e) .. " and " .. type(e2) .. ": " .. tostring(e), 0)
  end,
}
"#;
    let f = pack(&[("catch", script)]);
    let host = ScriptHost::new(&f.catalog).expect("the script compiles");
    let mut game = Game::new(&f.catalog, &host);
    let message = game.refused("catch", 0, 0);
    assert!(
        message.contains("a seat is 1 or 2, got 3"),
        "the move is refused for the bad seat: {message}"
    );
    let quiet = r#"
return {
  on_place = function(ctx)
    local ok, e = pcall(ctx.score, ctx, 3)
    error("caught " .. type(e) .. ": " .. tostring(e), 0)
  end,
}
"#;
    let f = pack(&[("quiet", quiet)]);
    let host = ScriptHost::new(&f.catalog).expect("the script compiles");
    let mut game = Game::new(&f.catalog, &host);
    let message = game.refused("quiet", 0, 0);
    assert!(message.contains("a seat is 1 or 2, got 3"), "{message}");
}

#[test]
fn escape_weak_mode_added_after_setmetatable_has_no_effect() {
    // The check in setmetatable sees no __mode; Lua reads __mode at collection time.
    let script = r#"
return {
  on_place = function(ctx)
    local mt = {}
    local t = setmetatable({}, mt)
    mt.__mode = "v"
    t[1] = {}
    for i = 1, 200000 do local garbage = { i } end
    ctx:log(t[1] == nil and "collected" or "kept")
  end,
}
"#;
    let f = pack(&[("late_weak", script)]);
    let host = ScriptHost::new(&f.catalog).expect("the script compiles");
    let mut game = Game::new(&f.catalog, &host);
    // Right: either refused, or the table stays strong.
    if game.play("late_weak", 0, 0).is_ok() {
        assert_eq!(game.logs(), ["kept"], "a weak table reached a script");
    }
}

// ---------------------------------------------------------------------------------------
// 2. Limits

#[test]
fn limits_endless_loops_are_stopped_and_named() {
    let f = pack(&[
        ("loop", &after_effects("while true do end")),
        (
            "pcall_loop",
            &after_effects(
                "local function f() while true do end end\n    while true do pcall(f) end",
            ),
        ),
        (
            "pcall_error_loop",
            &after_effects(
                "local function f() while true do end end\n    while true do pcall(pcall, pcall, f) end",
            ),
        ),
        (
            "xpcall_quiet_handler",
            &after_effects(
                "local function f() while true do end end\n    while true do xpcall(f, function(e) return e end) end",
            ),
        ),
        (
            "repeat_loop",
            &after_effects("local n = 0\n    repeat n = n + 1 until false"),
        ),
        ("goto_loop", &after_effects("::again::\n    goto again")),
    ]);
    for card in [
        "loop",
        "pcall_loop",
        "pcall_error_loop",
        "xpcall_quiet_handler",
        "repeat_loop",
        "goto_loop",
    ] {
        let (message, took) = refused_in_thread(&f.catalog, card);
        eprintln!("{card}: refused in {took:?}: {}", first_line(&message));
        assert!(
            message.contains(&format!("t/scripts/{card}.lua")) && message.contains("on_place"),
            "{card}: the refusal should name the script and the hook: {message}"
        );
        assert!(
            message.contains("instruction budget") || message.contains("endless loop"),
            "{card}: the refusal should say the budget is spent: {message}"
        );
        assert!(took <= HANG, "{card} took {took:?}");
    }
}

#[test]
fn limits_runaway_loop_stop_time_is_reported() {
    let f = pack(&[("loop", &after_effects("while true do end"))]);
    let (message, took) = refused_in_thread(&f.catalog, "loop");
    // Timings are reported from benchmarks, not asserted: only a sanity bound here.
    eprintln!(
        "stopping `while true do end` with the default budget took {took:?} ({})",
        first_line(&message)
    );
    assert!(took <= HANG, "took {took:?}");
}

#[test]
fn limits_pack_instructions_setting_changes_the_budget() {
    // About 4 instructions per iteration: some 200,000 in all.
    let counting = "return {\n  on_place = function(ctx)\n    local sum = 0\n    for i = 1, 50000 do sum = sum + i % 7 end\n    ctx:log('sum ' .. sum)\n  end,\n}\n";
    let big = fixture(&pack_files(
        "t",
        "scripts: { instructions: 5000000 }\n",
        &[("count", counting)],
    ));
    let small = fixture(&pack_files(
        "t",
        "scripts: { instructions: 20000 }\n",
        &[("count", counting)],
    ));

    let host = ScriptHost::new(&big.catalog).expect("the script compiles");
    let mut game = Game::new(&big.catalog, &host);
    game.played("count", 0, 0);
    assert_eq!(game.logs(), ["sum 150003"]);

    let host = ScriptHost::new(&small.catalog).expect("the script compiles");
    let mut game = Game::new(&small.catalog, &host);
    let message = game.refused("count", 0, 0);
    assert!(
        message.starts_with("t/scripts/count.lua:4: ")
            && message.contains("on_place")
            && message.contains("20000"),
        "the refusal should name the script, line, hook and the pack's budget: {message}"
    );
    game.played("weaken_row", 0, 0);
}

#[test]
fn limits_xpcall_with_a_looping_handler_is_stopped() {
    let f = pack(&[
        (
            "xpcall_loop",
            &after_effects(
                "local function f() while true do end end\n    xpcall(f, function() while true do end end)",
            ),
        ),
        (
            "xpcall_error",
            &after_effects("xpcall(error, function() while true do end end, 'x')"),
        ),
    ]);
    for card in ["xpcall_loop", "xpcall_error"] {
        let catalog = f.catalog.clone();
        let (message, took) = within(Duration::from_secs(5), move || {
            let host = ScriptHost::new(&catalog).expect("the scripts compile");
            let mut game = Game::new(&catalog, &host);
            let start = Instant::now();
            let message = game.refused(card, 0, 0);
            (message, start.elapsed())
        });
        assert!(
            message.contains(&format!("t/scripts/{card}.lua")) && message.contains("on_place"),
            "{card}: {message}"
        );
        assert!(took <= HANG, "{card} took {took:?}");
    }
}

#[test]
fn limits_to_be_closed_variables_are_refused_at_load() {
    // A `__close` handler would run while the budget error unwinds, where the count cannot
    // stop it: `<close>` is refused when the script loads, with its line.
    let files = pack_files(
        "t",
        "",
        &[(
            "close_loop",
            "return {\n  on_place = function(ctx)\n    local x <close> = nil\n  end,\n}\n",
        )],
    );
    let packs = TempPacks::new(
        &files
            .iter()
            .map(|(p, t)| (p.as_str(), t.as_str()))
            .collect::<Vec<_>>(),
    );
    let loaded = script::load(&LoadOptions {
        folders: vec![
            PackFolder {
                path: root().join("content"),
                required: true,
            },
            PackFolder {
                path: packs.path().to_path_buf(),
                required: true,
            },
        ],
        only: None,
        rules_patch: None,
        order: Vec::new(),
    });
    let lines: Vec<String> = loaded.diagnostics.iter().map(ToString::to_string).collect();
    assert!(loaded.catalog.is_none());
    assert!(
        lines.iter().any(|l| l.ends_with("close_loop.lua:3:13: error: to-be-closed variables (`<close>`) are not available in scripts")),
        "{lines:?}"
    );
}

#[test]
fn limits_to_be_closed_variables_are_found_on_lua_tokens() {
    // Refused: after a comparison on the same line, as the second name of a `local`, with
    // the attribute on the next line; accepted: `<close>` in strings and comments, and
    // comparisons with a variable named `close`.
    let refused = [
        (
            "after_lt",
            "return {\n  on_place = function(ctx)\n    if 1 < 2 then local x <close> = nil end\n  end,\n}\n",
            "3:27",
        ),
        (
            "second_name",
            "return {\n  on_place = function(ctx)\n    local a <const>, b <close> = 1, nil\n  end,\n}\n",
            "3:24",
        ),
        (
            "next_line",
            "return {\n  on_place = function(ctx)\n    local x\n      <close> = nil\n  end,\n}\n",
            "4:7",
        ),
        (
            "after_string",
            "return {\n  on_place = function(ctx)\n    local s = \"<\" local x <close> = nil\n  end,\n}\n",
            "3:27",
        ),
        (
            "vertical_tab",
            "return {\n  on_place = function(ctx)\n    local h\x0b<close> = nil\n  end,\n}\n",
            "3:13",
        ),
    ];
    let accepted = [
        (
            "in_string",
            "local s = \"local x <close> = 1\" -- local y <close> = 2\nreturn {\n  on_place = function(ctx) end,\n}\n",
        ),
        (
            "in_comment",
            "--[==[ local x <close> = 1 ]==]\nlocal t = [[local y <close> = 2]]\nreturn {\n  on_place = function(ctx) end,\n}\n",
        ),
        (
            "compared",
            "local close, a, b = 1, 0, 2\nlocal function c() return a < close > b end\nlocal d = function() return a <close> b end\nreturn {\n  on_place = function(ctx) end,\n}\n",
        ),
    ];
    let scripts: Vec<(&str, &str)> = refused
        .iter()
        .map(|(n, s, _)| (*n, *s))
        .chain(accepted.iter().copied())
        .collect();
    let files = pack_files("t", "", &scripts);
    let packs = TempPacks::new(
        &files
            .iter()
            .map(|(p, t)| (p.as_str(), t.as_str()))
            .collect::<Vec<_>>(),
    );
    let loaded = script::load(&LoadOptions {
        folders: vec![
            PackFolder {
                path: root().join("content"),
                required: true,
            },
            PackFolder {
                path: packs.path().to_path_buf(),
                required: true,
            },
        ],
        only: None,
        rules_patch: None,
        order: Vec::new(),
    });
    let lines: Vec<String> = loaded.diagnostics.iter().map(ToString::to_string).collect();
    for (name, _, at) in refused {
        assert!(
            lines.iter().any(|l| l.ends_with(&format!("{name}.lua:{at}: error: to-be-closed variables (`<close>`) are not available in scripts"))),
            "{name}: {lines:?}"
        );
    }
    for (name, _) in accepted {
        assert!(
            !lines.iter().any(|l| l.contains(&format!("{name}.lua"))),
            "{name}: {lines:?}"
        );
    }
}

/// Each card, on a fresh host in a watched thread, must be refused within 2 s (the time is
/// printed); every card is tried, and the failures are reported together.
fn each_stopped_within_2s(f: &Fixture, cards: &[&'static str]) {
    let mut failures = Vec::new();
    for &card in cards {
        let catalog = f.catalog.clone();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let host = ScriptHost::new(&catalog).expect("the scripts compile");
            let mut game = Game::new(&catalog, &host);
            let start = Instant::now();
            let message = game.refused(card, 0, 0);
            let _ = tx.send((message, start.elapsed()));
        });
        match rx.recv_timeout(Duration::from_secs(10)) {
            Ok((message, took)) => {
                eprintln!("{card}: refused in {took:?}: {}", first_line(&message));
                if !message.starts_with(&format!("t/scripts/{card}.lua")) {
                    failures.push(format!(
                        "{card}: the refusal does not name the script: {message}"
                    ));
                }
                if took > Duration::from_secs(2) {
                    failures.push(format!("{card}: took {took:?}"));
                }
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                failures.push(format!("{card}: still running after 10 s"));
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                failures.push(format!("{card}: the worker panicked (see above)"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn limits_big_library_work_is_stopped() {
    // Library calls do much work in one VM instruction; looping on them must still end.
    let big = "local s = string.rep('x', 2000000)\n    ";
    let f = pack(&[
        ("table_move", &after_effects("table.move({}, 1, 1e10, 2)")),
        (
            "table_concat",
            &after_effects(
                "local t = {}\n    for i = 1, 100 do t[i] = string.rep('x', 100000) end\n    while true do local u = table.concat(t) end",
            ),
        ),
        (
            "rep_loop",
            &after_effects("while true do local u = string.rep('x', 2000000) end"),
        ),
        (
            "upper",
            &after_effects(&format!("{big}while true do local u = s:upper() end")),
        ),
        (
            "reverse",
            &after_effects(&format!("{big}while true do local u = s:reverse() end")),
        ),
        (
            "sub",
            &after_effects(&format!("{big}while true do local u = s:sub(2) end")),
        ),
        (
            "format",
            &after_effects(&format!(
                "{big}while true do local u = string.format('%s.', s) end"
            )),
        ),
        (
            "concat_operator",
            &after_effects(&format!("{big}while true do local u = s .. 'x' end")),
        ),
        (
            "find_plain",
            &after_effects(&format!(
                "{big}while true do local u = s:find('y', 1, true) end"
            )),
        ),
    ]);
    each_stopped_within_2s(
        &f,
        &[
            "table_move",
            "table_concat",
            "rep_loop",
            "upper",
            "reverse",
            "sub",
            "format",
            "concat_operator",
            "find_plain",
        ],
    );
}

#[test]
fn limits_long_index_chains_are_refused_where_they_are_made() {
    // A read of a missing key follows `__index` tables inside one instruction: a chain of
    // 1,990 made `table.unpack` of 250,000 values run for seconds under a 1 s clock.
    let f = attempts_pack(&[
        (
            "bottom_up",
            "local t = {} for i = 1, 1990 do t = setmetatable({}, { __index = t }) end \
             local n = select('#', table.unpack(t, 1, 250000))",
        ),
        (
            "top_down",
            "local first = {} local t = first \
             for i = 1, 1990 do local u = {} setmetatable(t, { __index = u }) t = u end",
        ),
        (
            "newindex",
            "local t = {} for i = 1, 1990 do t = setmetatable({}, { __newindex = t }) end",
        ),
        (
            "classes",
            "local Base = { hp = 3 } Base.__index = Base \
             local Mid = setmetatable({}, Base) Mid.__index = Mid \
             local Leaf = setmetatable({}, Mid) Leaf.__index = Leaf \
             local obj = setmetatable({}, Leaf) \
             local n = select('#', table.unpack(obj, 1, 1000)) \
             error('a chain of four is fine: ' .. obj.hp .. ' ' .. n)",
        ),
    ]);
    let cases = [
        (
            "bottom_up",
            "t/scripts/bottom_up.lua:6: setmetatable: '__index' leads through more than 7 tables",
        ),
        (
            "top_down",
            "t/scripts/top_down.lua:6: setmetatable: this table is already another metatable's __index or __newindex",
        ),
        (
            "newindex",
            "t/scripts/newindex.lua:6: setmetatable: '__newindex' leads through more than 7 tables",
        ),
        (
            "classes",
            "t/scripts/classes.lua:6: a chain of four is fine: 3 1000",
        ),
    ];
    for (card, expected) in cases {
        let (message, took) = refused_in_thread(&f.catalog, card);
        assert!(
            first_line(&message).starts_with(expected),
            "{card}: {message}"
        );
        assert!(took < Duration::from_secs(2), "{card} took {took:?}");
    }
}

#[test]
fn limits_backtracking_patterns_are_stopped() {
    let f = pack(&[
        (
            "pattern_optional",
            &after_effects(
                "string.find(string.rep('a', 30), string.rep('a?', 30) .. string.rep('a', 30) .. 'b')",
            ),
        ),
        (
            "pattern_quadratic",
            &after_effects("string.find(string.rep('a', 200000), '.-b')"),
        ),
        (
            "match_quadratic",
            &after_effects("string.match(string.rep('a', 200000), 'a*b')"),
        ),
        (
            "gmatch_quadratic",
            &after_effects("for m in string.rep('a', 200000):gmatch('a*b') do end"),
        ),
    ]);
    each_stopped_within_2s(
        &f,
        &[
            "pattern_optional",
            "pattern_quadratic",
            "match_quadratic",
            "gmatch_quadratic",
        ],
    );
}

// ---------------------------------------------------------------------------------------
// 3. Errors

#[test]
fn errors_refuse_the_move_with_script_line_and_message() {
    // (card, line 6 of the script, the exact first line of the refusal)
    let cases: &[(&str, &str, &str)] = &[
        (
            "runtime",
            "local n = nil; local x = n + 1",
            "t/scripts/runtime.lua:6: attempt to perform arithmetic on a nil value (local 'n')",
        ),
        (
            "raised",
            "error('the vortex collapsed')",
            "t/scripts/raised.lua:6: the vortex collapsed",
        ),
        (
            "off_board",
            "ctx:damage(99, 0, 1)",
            "t/scripts/off_board.lua:6: ctx:damage: cell (99, 0) is off the board",
        ),
        (
            "seat_three",
            "ctx:add_score(3, 1)",
            "t/scripts/seat_three.lua:6: ctx:add_score: a seat is 1 or 2, got 3",
        ),
        (
            "spawn_seat_three",
            "ctx:spawn(ctx.x, ctx.y + 1, { seat = 3 })",
            "t/scripts/spawn_seat_three.lua:6: ctx:spawn: a seat is 1 or 2, got 3",
        ),
        (
            "unknown_type",
            "ctx:set_type(ctx.x, ctx.y, 'bosster')",
            "t/scripts/unknown_type.lua:6: ctx:set_type: unknown token type 'bosster' (did you mean 'booster'?)",
        ),
    ];
    let attempts: Vec<(&str, &str)> = cases.iter().map(|(n, a, _)| (*n, *a)).collect();
    let f = attempts_pack(&attempts);
    let host = ScriptHost::new(&f.catalog).expect("the scripts compile");
    let mut game = Game::new(&f.catalog, &host);
    for (name, _, expected) in cases {
        let message = game.refused(name, 0, 0);
        assert_eq!(first_line(&message), *expected, "{name}: {message}");
        // The game goes on: the next legal move is played.
        game.played("weaken_row", 0, 0);
        game.played("weaken_row", 5, 5);
        game = Game::new(&f.catalog, &host);
    }
}

#[test]
fn errors_ctx_arguments_of_the_wrong_type_name_the_line() {
    let cases: &[(&str, &str)] = &[
        ("fraction", "ctx:damage(ctx.x, ctx.y, 1.5)"),
        ("text_cell", "ctx:token('a', 1)"),
        ("missing", "ctx:set_value(ctx.x, ctx.y)"),
    ];
    let f = attempts_pack(cases);
    let host = ScriptHost::new(&f.catalog).expect("the scripts compile");
    let mut game = Game::new(&f.catalog, &host);
    for (name, _) in cases {
        let message = game.refused(name, 0, 0);
        assert!(
            message.starts_with(&format!("t/scripts/{name}.lua:6: ")),
            "{name}: the refusal should give the line of the call: {message}"
        );
    }
    game.played("weaken_row", 0, 0);
}

/// `path:line:col: severity: message` for each diagnostic, paths relative to `dir`.
fn diagnostics(dir: &TempPacks, loaded: &Loaded) -> Vec<String> {
    dir.relative(loaded)
}

#[test]
fn errors_load_time_problems_are_diagnostics_at_the_script_and_line() {
    let f = temp(&pack_files(
        "t",
        "",
        &[
            (
                "syntax",
                "return {\n  on_place = function(ctx)\n    local = 1\n  end,\n}\n",
            ),
            ("number", "-- a comment\nreturn 42\n"),
            ("nothing", "local hooks = {}\n"),
            (
                "misspelt",
                "return {\n  on_place = function(ctx) end,\n  on_destroy = function(ctx, self) end,\n}\n",
            ),
            ("not_function", "return {\n  on_place = 'damage',\n}\n"),
            (
                "top_error",
                "local limit = 3\nerror('this script needs a limit of ' .. limit)\n",
            ),
            (
                "no_on_place",
                "return {\n  income = function(ctx, self, income) return income end,\n}\n",
            ),
            ("top_loop", "while true do end\nreturn {}\n"),
        ],
    ));
    let loaded = load(f.path());
    assert!(
        loaded.catalog.is_none(),
        "a pack with bad scripts has no catalog"
    );
    let found = diagnostics(&f, &loaded);
    // The ability `no_on_place` is the 7th ability of content.yaml: line 14.
    let expected = [
        "t/content.yaml:14:9: error: ability 'no_on_place' runs t/scripts/no_on_place.lua, which returns no on_place hook",
        "t/scripts/misspelt.lua:3:3: error: the returned table has 'on_destroy', which is not a hook (did you mean 'on_destroyed'?); hooks are on_place, between_turns, income, on_destroyed",
        "t/scripts/not_function.lua:2:3: error: hook 'on_place' must be a function, found a string",
        "t/scripts/nothing.lua:1:1: error: a script returns a table of hooks (`return { on_place = function(ctx) ... end }`), but this one returns nothing (nil)",
        "t/scripts/number.lua:1:1: error: a script returns a table of hooks (`return { on_place = function(ctx) ... end }`), but this one returns the number 42",
        "t/scripts/syntax.lua:3:11: error: <name> expected near '='",
        "t/scripts/top_error.lua:2:1: error: this script needs a limit of 3",
    ];
    for line in expected {
        assert!(
            found.iter().any(|d| d.starts_with(line)),
            "missing diagnostic\n  {line}\nin\n  {}",
            found.join("\n  ")
        );
    }
    let top_loop = found
        .iter()
        .find(|d| d.starts_with("t/scripts/top_loop.lua:1:"))
        .unwrap_or_else(|| panic!("no diagnostic for the endless top level: {found:#?}"));
    assert!(
        top_loop.contains("endless loop") || top_loop.contains("instruction budget"),
        "{top_loop}"
    );
    assert_eq!(
        found.len(),
        expected.len() + 1,
        "only these diagnostics: {found:#?}"
    );
}

#[test]
fn errors_validate_command_reports_script_problems() {
    let f = temp(&pack_files(
        "t",
        "",
        &[(
            "syntax",
            "return {\n  on_place = function(ctx)\n    local = 1\n  end,\n}\n",
        )],
    ));
    let out = crate::support::tokensmith(["--content"])
        .arg(root().join("content"))
        .arg("--mods")
        .arg(f.path())
        .arg("validate")
        .output()
        .expect("tokensmith runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains("scripts/syntax.lua:3:11: error: <name> expected near '='"),
        "{stdout}"
    );
}

// ---------------------------------------------------------------------------------------
// 4. Determinism

/// A script that looks at everything that could differ between runs and logs it.
const DETERMINISM_PROBE: &str = r#"
return {
  on_place = function(ctx)
    local t = { zeta = 1, alpha = 2, mid = 3, beta = 4, [10] = "ten", [2] = "two", [-1] = "neg" }
    local seen = {}
    for k, v in pairs(t) do seen[#seen + 1] = tostring(k) .. "=" .. tostring(v) end
    ctx:log("pairs " .. table.concat(seen, ","))

    local walked, k = {}, next(t)
    while k ~= nil do walked[#walked + 1] = tostring(k); k = next(t, k) end
    ctx:log("next " .. table.concat(walked, ","))

    local big = {}
    for i = 1, 300 do big["k" .. i] = i end
    for i = 1, 300, 3 do big["k" .. i] = nil end
    local firsts = {}
    for key in pairs(big) do
      firsts[#firsts + 1] = key
      if #firsts == 6 then break end
    end
    ctx:log("big " .. table.concat(firsts, ","))

    ctx:log("random " .. ctx:random(6) .. " " .. ctx:random(100) .. " " .. ctx:random(1000000))

    ctx:log("tostring " .. tostring({}) .. " " .. tostring(function() end) .. " " ..
      tostring(ctx) .. " " .. string.format("%s", {}) .. " " .. tostring(pairs))

    local list = {
      { k = 2, n = "a" }, { k = 1, n = "b" }, { k = 2, n = "c" }, { k = 1, n = "d" },
      { k = 3, n = "e" }, { k = 2, n = "f" }, { k = 1, n = "g" },
    }
    table.sort(list, function(a, b) return a.k < b.k end)
    local names = {}
    for i, item in ipairs(list) do names[i] = item.n end
    ctx:log("sort " .. table.concat(names))
  end,
}
"#;

/// The scenario driving [`DETERMINISM_PROBE`]: four scripted moves with random draws.
const DETERMINISM_SCENARIO: &str = r#"name: scripts see the same things in every run
packs: [det]
rules: { opening_token: null }
seed: 1234
decks:
  1: [[probe, weaken_row], [probe2, booster], [flip_cross, weaken_cross, gift], [push_cross, weaken_ring]]
  2: [[probe, weaken_row], [probe2, booster], [flip_cross, weaken_cross, gift], [push_cross, weaken_ring]]
moves:
  - { seat: 1, card: probe, at: [0, 0] }
  - { seat: 2, card: probe, at: [5, 5] }
  - { seat: 1, card: probe2, at: [5, 0] }
  - { seat: 2, card: probe2, at: [0, 5] }
expect:
  next: 1
"#;

/// Packs folder `packs/det` (scripts `probe` and `probe2`, both the probe) and
/// `determinism.yaml` next to it.
fn determinism_files() -> TempPacks {
    let mut files: Vec<(String, String)> = pack_files(
        "det",
        "",
        &[("probe", DETERMINISM_PROBE), ("probe2", DETERMINISM_PROBE)],
    )
    .into_iter()
    .map(|(path, text)| (format!("packs/{path}"), text))
    .collect();
    files.push((
        "determinism.yaml".to_string(),
        DETERMINISM_SCENARIO.to_string(),
    ));
    temp(&files)
}

fn run_determinism_scenario(dir: &TempPacks) -> Vec<Event> {
    let paths = PackPaths {
        content: root().join("content"),
        mods: dir.path().join("packs"),
    };
    let run = scenario::run_file(&dir.path().join("determinism.yaml"), &paths)
        .unwrap_or_else(|e| panic!("the scenario runs: {:#?}", e.diagnostics));
    assert_eq!(run.outcome, ScenarioOutcome::Pass);
    run.events
}

#[test]
fn determinism_same_scenario_twice_in_one_process() {
    let dir = determinism_files();
    let first = run_determinism_scenario(&dir);
    let second = run_determinism_scenario(&dir);
    assert_eq!(first, second);

    let logs = logs(&first);
    assert_eq!(logs.len(), 4 * 6, "{logs:#?}");
    for probe in logs.chunks(6) {
        // pairs and next: numbers ascending, then strings in byte order.
        assert_eq!(
            probe[0],
            "pairs -1=neg,2=two,10=ten,alpha=2,beta=4,mid=3,zeta=1"
        );
        assert_eq!(probe[1], "next -1,2,10,alpha,beta,mid,zeta");
        assert_eq!(probe[2], "big k101,k102,k104,k105,k107,k108");
        assert!(probe[3].starts_with("random "), "{}", probe[3]);
        // No addresses.
        assert_eq!(probe[4], "tostring table function table table function");
        // A stable sort: ties keep their order.
        assert_eq!(probe[5], "sort bdgacfe");
    }
    // The draws come from the game's generator: they move on from move to move.
    let draws: Vec<&String> = logs.iter().skip(3).step_by(6).collect();
    assert!(
        draws.windows(2).any(|w| w[0] != w[1]),
        "four identical draws: {draws:?}"
    );
}

#[test]
fn determinism_two_processes_print_the_same_events() {
    let dir = determinism_files();
    let run = || {
        let out = crate::support::tokensmith(["--content"])
            .arg(root().join("content"))
            .arg("--mods")
            .arg(dir.path().join("packs"))
            .arg("scenario")
            .arg("--events")
            .arg(dir.path().join("determinism.yaml"))
            .output()
            .expect("tokensmith runs");
        assert!(
            out.status.success(),
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).expect("UTF-8 output")
    };
    let first = run();
    let second = run();
    assert_eq!(first, second);
    assert!(first.contains("sort bdgacfe"), "{first}");
    assert!(
        first.contains("pairs -1=neg,2=two,10=ten,alpha=2,beta=4,mid=3,zeta=1"),
        "{first}"
    );
    assert!(first.contains("random "), "{first}");
}

/// Play the determinism probe four times on `host`.
fn play_probes(catalog: &Catalog) -> Vec<Event> {
    let host = ScriptHost::new(catalog).expect("the scripts compile");
    let mut game = Game::new(catalog, &host);
    for (card, x, y) in [
        ("probe", 0, 0),
        ("probe", 5, 5),
        ("probe2", 5, 0),
        ("probe2", 0, 5),
        ("weaken_row", 1, 4),
        ("probe", 4, 1),
    ] {
        game.played(card, x, y);
    }
    game.events
}

#[test]
fn determinism_hosts_built_in_two_threads_give_the_same_events() {
    let f = fixture(&pack_files(
        "det",
        "",
        &[("probe", DETERMINISM_PROBE), ("probe2", DETERMINISM_PROBE)],
    ));
    let catalog = &f.catalog;
    let (a, b) = std::thread::scope(|s| {
        let a = s.spawn(|| play_probes(catalog));
        let b = s.spawn(|| play_probes(catalog));
        (a.join().expect("thread a"), b.join().expect("thread b"))
    });
    assert_eq!(a, b);
    assert_eq!(a, play_probes(catalog), "and the same as on this thread");
    assert_eq!(logs(&a).len(), 5 * 6);
}

#[test]
fn determinism_error_with_a_table_value_has_no_address() {
    let f = pack(&[("table_error", &after_effects("error({})"))]);
    let host = ScriptHost::new(&f.catalog).expect("the script compiles");
    let message = Game::new(&f.catalog, &host).refused("table_error", 0, 0);
    assert!(!message.contains("0x"), "{message}");
}

#[test]
fn limits_a_hook_of_ctx_calls_is_stopped_by_the_moves_clock() {
    // Budgets far beyond what a millisecond allows and an endless loop of the cheapest
    // ctx calls: the clock, read once per 500 instructions' worth of charged work, must
    // still stop it, with the clock's message.
    let mut files = pack_files(
        "t",
        "scripts: { instructions: 50000000 }\n",
        &[(
            "busy",
            "return {\n  on_place = function(ctx)\n    while true do ctx:token(1, 1); ctx:on_board(2, 2) end\n  end,\n}\n",
        )],
    );
    files.push((
        "t/rules.yaml".to_string(),
        "rules:\n  limits: { instructions: 60000000, wall_ms: 1 }\n".to_string(),
    ));
    let f = fixture(&files);
    let (message, took) = refused_in_thread(&f.catalog, "busy");
    assert!(
        first_line(&message).contains("ran for more than 1 ms (rules.limits.wall_ms)"),
        "{message}"
    );
    assert!(took < Duration::from_secs(2), "stopped after {took:?}");
}

#[test]
fn limits_long_string_work_hidden_in_single_instructions_is_stopped_near_the_clock() {
    // `<` of two 16 MB strings collates them in one instruction: the 500 instructions
    // between two of the budget's own looks at the clock take most of a second here. The
    // watchdog stops the script at its next instruction once the clock has run out, so
    // the move ends near its 100 ms, not a look at the clock later.
    let compares = "if a < b then end ".repeat(250);
    let lua = format!(
        "return {{\n  on_place = function(ctx)\n    local a, b = string.rep('x', 16000000), string.rep('x', 16000000)\n    while true do {compares}end\n  end,\n}}\n"
    );
    let mut files = pack_files(
        "t",
        "scripts: { instructions: 50000000, memory_kb: 65536 }\n",
        &[("collate", &lua)],
    );
    files.push((
        "t/rules.yaml".to_string(),
        "rules:\n  limits: { instructions: 200000000, wall_ms: 100 }\n".to_string(),
    ));
    let f = fixture(&files);
    let (message, took) = refused_in_thread(&f.catalog, "collate");
    assert!(
        first_line(&message).contains("ran for more than 100 ms (rules.limits.wall_ms)"),
        "{message}"
    );
    // Generous against a loaded machine; without the watchdog it takes 0.7 s or more.
    assert!(took < Duration::from_millis(450), "stopped after {took:?}");
}

#[test]
fn determinism_a_hook_within_its_budget_is_never_refused_for_time() {
    // Ten million loop iterations against the largest budget per call, 50 million
    // instructions, and a move budget raised to match: within both, and longer than
    // 50 ms, but far below the move's time limit.
    let mut files = pack_files(
        "t",
        "scripts: { instructions: 50000000 }\n",
        &[(
            "long",
            "return {\n  on_place = function(ctx)\n    for i = 1, 10000000 do end\n    ctx:log('done')\n  end,\n}\n",
        )],
    );
    files.push((
        "t/rules.yaml".to_string(),
        "rules:\n  limits: { instructions: 60000000, wall_ms: 10000 }\n".to_string(),
    ));
    let f = fixture(&files);
    let host = ScriptHost::new(&f.catalog).expect("the script compiles");
    let mut game = Game::new(&f.catalog, &host);
    game.played("long", 0, 0);
    assert_eq!(game.logs(), ["done"]);
}

// ---------------------------------------------------------------------------------------
// 5. Threads

#[test]
fn threads_each_worker_makes_its_own_host_cheaply() {
    let glow = "return {\n  income = function(ctx, self, income) return income + 1 end,\n}\n";
    let mut files = pack_files("det", "", &[("probe", DETERMINISM_PROBE)]);
    // The content document ends with the cards: one more card, then the token type.
    files[1].1.push_str(
        "  - id: glow_card\n    value: 2\n    token: glow\ntoken_types:\n  - id: glow\n    script: scripts/glow.lua\n",
    );
    files.push(("det/scripts/glow.lua".to_string(), glow.to_string()));
    let f = fixture(&files);
    let catalog = &f.catalog;

    let results: Vec<(Duration, Vec<Event>, [i64; 2])> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..4)
            .map(|_| {
                s.spawn(move || {
                    let start = Instant::now();
                    let host = ScriptHost::new(catalog).expect("the scripts compile");
                    let made = start.elapsed();
                    let mut game = Game::new(catalog, &host);
                    game.played("probe", 0, 0);
                    game.played("glow_card", 5, 5);
                    game.played("glow_card", 5, 0);
                    game.played("probe", 0, 5);
                    let incomes = game.engine.incomes(&game.state).expect("incomes");
                    (made, game.events, incomes)
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|w| w.join().expect("a worker"))
            .collect()
    });
    for (i, (made, _, _)) in results.iter().enumerate() {
        eprintln!("worker {i}: ScriptHost::new took {made:?}");
        assert!(
            *made <= Duration::from_millis(500),
            "making a host should be cheap; worker {i} took {made:?}"
        );
    }
    for (_, events, incomes) in &results[1..] {
        assert_eq!(events, &results[0].1);
        assert_eq!(incomes, &results[0].2);
    }
    // Seat 1: probe 1 + glow 2 (+1 from its income hook); seat 2: the opening token 2,
    // glow 2 (+1) and probe 1.
    assert_eq!(results[0].2, [4, 6]);
}

#[test]
fn docs_list_exactly_the_sandboxs_globals_and_library_functions() {
    let doc = std::fs::read_to_string(root().join("docs/lua.md")).expect("docs/lua.md");
    let row = |label: &str| -> Vec<String> {
        let line = doc
            .lines()
            .find(|l| l.starts_with(&format!("| {label} |")))
            .unwrap_or_else(|| panic!("docs/lua.md has no '{label}' row"));
        line.split('|')
            .nth(2)
            .unwrap_or("")
            .split(';')
            .next()
            .unwrap_or("")
            .split(',')
            .map(|n| n.trim().trim_matches('`').to_string())
            .filter(|n| !n.is_empty() && !n.contains(' '))
            .collect()
    };
    let mut documented: Vec<String> = row("base functions");
    for library in ["string", "table", "math"] {
        documented.extend(
            row(&format!("`{library}`"))
                .into_iter()
                .map(|n| format!("{library}.{n}")),
        );
    }
    documented.sort();
    let real = tokensmith::script::sandbox_names();
    assert_eq!(
        documented, real,
        "docs/lua.md's table of what exists, against the sandbox"
    );
}

#[test]
fn script_memory_stays_bounded_over_long_play() {
    // The shipped scripted pack's weaken, played again and again from one position as a
    // search does: every move leaves a little garbage and puts script state back. The
    // collector must keep up however long the AI plays, or allocations reach the memory
    // cap and every move pays for a full collection.
    let loaded = crate::support::load_folders(
        &[root().join("content"), root().join("mods")],
        Some(&["example_scripted"]),
    );
    let catalog = loaded.catalog.expect("example_scripted loads");
    let host = ScriptHost::new(&catalog).expect("the scripts compile");
    let mut game = Game::new(&catalog, &host);
    let start = game.state.clone();
    game.played("scripted_weaken_row", 0, 0);
    let after_load = host.memory_in_use();
    let mut most = 0;
    for _ in 0..60_000 {
        game.state = start.clone();
        game.events.clear();
        game.played("scripted_weaken_row", 0, 0);
        most = most.max(host.memory_in_use());
    }
    assert!(
        most < after_load + 512 * 1024,
        "script memory grew from {after_load} bytes to {most} over 60,000 moves"
    );
}

/// The error a move playing `card` at (0, 0) is refused with.
fn refusal(f: &Fixture, card: &str) -> HookError {
    let host = ScriptHost::new(&f.catalog).expect("the scripts compile");
    let engine = Engine::new(&f.catalog, &host);
    let deck = &f.catalog.decks()[0].stacks;
    let mut events = Vec::new();
    let mut state = engine
        .new_game([deck, deck], 7, &mut events)
        .expect("the starter deck is legal");
    let mv = Move {
        seat: state.turn(),
        play: Play::Card(f.catalog.card_named(card).unwrap_or_else(|e| panic!("{e}"))),
        cell: Cell::new(0, 0),
    };
    match engine.play(&mut state, mv, &mut events) {
        Err(MoveError::Script(e)) => e,
        other => panic!("{card}: expected a script refusal, got {other:?}"),
    }
}

#[test]
fn hook_errors_say_their_kind_and_place() {
    let f = pack(&[
        (
            "boom",
            "return { on_place = function(ctx)\n  error('boom')\nend }\n",
        ),
        (
            "offboard",
            "return { on_place = function(ctx)\n  ctx:damage(99, 99, 1)\nend }\n",
        ),
        (
            "spin",
            "return { on_place = function(ctx)\n  while true do end\nend }\n",
        ),
        (
            "flood",
            "return { on_place = function(ctx)\n  for i = 1, 1e9 do ctx:log('x') end\nend }\n",
        ),
        (
            "caught",
            "return { on_place = function(ctx)\n  pcall(function() while true do end end)\nend }\n",
        ),
    ]);
    for (card, kind, line) in [
        ("boom", HookErrorKind::Script, Some(2)),
        ("offboard", HookErrorKind::Script, Some(2)),
        ("spin", HookErrorKind::Limit, Some(2)),
        ("flood", HookErrorKind::Limit, Some(2)),
        ("caught", HookErrorKind::Limit, None),
    ] {
        let e = refusal(&f, card);
        assert_eq!(e.kind, kind, "{card}: {}", e.message);
        if let Some(line) = line {
            let place = e
                .place
                .clone()
                .unwrap_or_else(|| panic!("{card}: no place in {}", e.message));
            assert_eq!(
                place.script,
                format!("t/scripts/{card}.lua"),
                "{}",
                e.message
            );
            assert_eq!(place.line, line, "{card}: {}", e.message);
        }
    }
}

// ---------------------------------------------------------------------------------------
// Messages a newcomer needs.

#[test]
fn a_dot_call_of_a_ctx_function_is_warned_at_load_and_named_when_it_fails() {
    let dot =
        "return {\n  on_place = function(ctx)\n    ctx.damage(ctx.x + 1, ctx.y, 1)\n  end,\n}\n";
    let dir = temp(&pack_files("t", "", &[("dotted", dot)]));
    let loaded = load(dir.path());
    let warnings: Vec<String> = loaded.diagnostics.iter().map(ToString::to_string).collect();
    assert_eq!(warnings.len(), 1, "{warnings:#?}");
    assert!(
        warnings[0].ends_with("t/scripts/dotted.lua:3:5: warning: `ctx.damage(…)` calls ctx's function without ctx, so every argument shifts by one: write `ctx:damage(…)` with a colon"),
        "{warnings:#?}"
    );
    let catalog = loaded.catalog.expect("a warning does not stop the load");
    let host = ScriptHost::new(&catalog).expect("scripts start");
    let mut game = Game::new(&catalog, &host);
    let refused = game.refused("dotted", 0, 0);
    assert!(
        refused.contains(
            "(`ctx.damage(…)` passes no ctx, so the arguments shift: write `ctx:damage(…)`)"
        ),
        "{refused}"
    );
}

#[test]
fn a_misspelt_ctx_name_suggests_the_nearest() {
    let fixture = pack(&[
        (
            "method",
            "return {\n  on_place = function(ctx)\n    ctx:damge(ctx.x, ctx.y, 1)\n  end,\n}\n",
        ),
        (
            "field",
            "return {\n  on_place = function(ctx)\n    local s = ctx.opponnent + 1\n  end,\n}\n",
        ),
    ]);
    let host = ScriptHost::new(&fixture.catalog).expect("scripts start");
    let mut game = Game::new(&fixture.catalog, &host);
    let method = game.refused("method", 0, 0);
    assert!(
        method.ends_with("(method 'damge'); ctx has no 'damge': did you mean ctx:damage(…)?"),
        "{method}"
    );
    let field = game.refused("field", 0, 0);
    assert!(
        field.ends_with("(field 'opponnent'); ctx has no 'opponnent': did you mean ctx.opponent?"),
        "{field}"
    );
}

#[test]
fn a_lua_syntax_error_points_at_the_token_when_it_is_unambiguous() {
    let bad = "return {\n  on_place = function(ctx)\n    local y = ctx.x +* 2\n  end,\n}\n";
    let dir = temp(&pack_files("t", "", &[("broken", bad)]));
    let loaded = load(dir.path());
    let errors: Vec<String> = loaded.diagnostics.iter().map(ToString::to_string).collect();
    assert!(
        errors
            .iter()
            .any(|e| e.ends_with("t/scripts/broken.lua:3:22: error: unexpected symbol near '*'")),
        "{errors:#?}"
    );
}

#[test]
fn every_listed_ctx_function_exists_and_every_function_is_listed() {
    let names = tokensmith::script::ctx_functions();
    let checks: String = names
        .iter()
        .map(|n| format!("    if type(ctx.{n}) ~= 'function' then error('missing {n}') end\n"))
        .collect();
    let probe = format!("return {{\n  on_place = function(ctx)\n{checks}  end,\n}}\n");
    let fixture = pack(&[("probe", &probe)]);
    let host = ScriptHost::new(&fixture.catalog).expect("scripts start");
    Game::new(&fixture.catalog, &host).played("probe", 0, 0);
    // Each `func!("name", …)` in the source defines one function.
    let source = std::fs::read_to_string(root().join("src/script/ctx.rs")).expect("source");
    let defined =
        source.matches("    func!(\n        \"").count() + source.matches("    func!(\"").count();
    assert_eq!(
        defined,
        names.len(),
        "ctx defines {defined} functions, the list has {}",
        names.len()
    );
}

/// A pack `t` whose token type `glow` has the script `glow`; a card `sow` spawns glows
/// (a built-in ability) and a card `husk` places a type without a script that becomes a
/// glow when destroyed.
fn glow_pack(glow: &str) -> Fixture {
    fixture(&[
        (
            "t/pack.yaml".to_string(),
            "id: t\nname: t\nversion: 1.0.0\nrequires:\n  - { id: base, version: \"^1\" }\n"
                .to_string(),
        ),
        (
            "t/content.yaml".to_string(),
            "token_types:\n  - id: glow\n    script: scripts/glow.lua\n  - id: husk\n    on_destroyed: { become: glow, value: 1 }\nabilities:\n  - id: sow_glow\n    effect: spawn\n    owner: self\n    value: 1\n    type: glow\ncards:\n  - id: sow\n    value: 1\n    ability: sow_glow\n    area: cross\n  - id: husk\n    value: 1\n    token: husk\n"
                .to_string(),
        ),
        ("t/scripts/glow.lua".to_string(), glow.to_string()),
    ])
}

#[test]
fn a_built_in_card_that_brings_a_scripted_token_runs_its_hooks() {
    // Built-in effects that put a token with a script on the board: a spawn of such a
    // type, and a type that becomes one when destroyed. A move on a board without any
    // token with a script skips the script path (no snapshot, no budget) only when it
    // can bring none: a hook that fails in such a move still refuses it cleanly.
    let f = glow_pack(
        r#"
return {
  income = function(ctx, self, income) return income + 100 end,
  between_turns = function(ctx, self) ctx:log("glow at " .. self.x .. "," .. self.y) end,
}
"#,
    );
    let host = ScriptHost::new(&f.catalog).expect("the script compiles");

    // A spawn of a scripted type: its between_turns runs at once and its income counts.
    let mut game = Game::new(&f.catalog, &host);
    game.played("sow", 0, 0);
    assert_eq!(game.logs(), ["glow at 1,0", "glow at 0,1"]);
    let income = game.engine.incomes(&game.state).expect("incomes")[Seat::One.index()];
    assert!(
        income >= 200,
        "two glows earn their hook's 100 each: {income}"
    );

    // A type without a script destroyed into one with a script.
    let mut game = Game::new(&f.catalog, &host);
    game.played("husk", 0, 0);
    assert!(game.logs().is_empty());
    game.played("weaken_row", 1, 0);
    assert_eq!(game.logs(), ["glow at 0,0"], "the husk became a glow");

    // The same moves when the hook fails: refused, and nothing changed.
    let f = glow_pack("return { between_turns = function(ctx, self) error('dim', 0) end }\n");
    let host = ScriptHost::new(&f.catalog).expect("the script compiles");
    let mut game = Game::new(&f.catalog, &host);
    let message = game.refused("sow", 0, 0);
    assert!(message.contains("dim"), "{message}");
    game.played("husk", 0, 0);
    let message = game.refused("weaken_row", 1, 0);
    assert!(message.contains("dim"), "{message}");
}

// ---------------------------------------------------------------------------------------
// The fast ctx entries behave like the general functions

/// The lines of the script causes of the `Damaged` events so far.
fn damage_lines(events: &[Event]) -> Vec<u32> {
    events
        .iter()
        .filter_map(|e| match (&e.kind, e.cause) {
            (EventKind::Damaged { .. }, Cause::Script { line, .. }) => Some(line),
            _ => None,
        })
        .collect()
}

#[test]
fn ctx_calls_through_pcall_name_the_scripts_lines() {
    // A ctx function called by `pcall` has a C function as its caller: its events and
    // its errors must still name the script's line.
    let script = r#"
return {
  on_place = function(ctx)
    ctx:damage(ctx.x + 1, ctx.y, 1)
    local ok = pcall(ctx.damage, ctx, ctx.x + 1, ctx.y, 1)
    pcall(ctx.damage, ctx, ctx.x + 1, ctx.y, -1)
  end,
}
"#;
    let f = pack(&[("caught", script)]);
    let host = ScriptHost::new(&f.catalog).expect("the script compiles");
    let mut game = Game::new(&f.catalog, &host);
    game.played("base:weaken_corners", 1, 0);
    let message = game.refused("caught", 0, 0);
    assert!(
        message.contains("caught.lua:6:") && message.contains("damage must be 0 or more"),
        "the error names line 6: {message}"
    );
    let fine = script.replace("ctx.y, -1)", "ctx.y, 0)");
    let f = pack(&[("caught", &fine)]);
    let host = ScriptHost::new(&f.catalog).expect("the script compiles");
    let mut game = Game::new(&f.catalog, &host);
    game.played("base:weaken_corners", 1, 0);
    let before = game.events.len();
    game.played("caught", 0, 0);
    assert_eq!(damage_lines(&game.events[before..]), [4, 5]);
}

#[test]
fn plain_reads_give_the_parts_of_the_token_table() {
    // ctx:empty, ctx:seat_at, ctx:value_at and ctx:type_at say what ctx:token's table
    // says, on a taken cell, an empty one and one off the board, by their fast entries
    // (integers) and their general ones (whole floats); a wrong argument is refused with
    // the general message at the script's line.
    let script = r#"
local function parts(ctx, x, y)
  return table.concat({ tostring(ctx:empty(x, y)), tostring(ctx:seat_at(x, y)),
    tostring(ctx:value_at(x, y)), tostring(ctx:type_at(x, y)) }, " ")
end

local function from_table(ctx, x, y)
  local t = ctx:token(x, y)
  local empty = t == nil and ctx:on_board(x, y)
  if t == nil then return tostring(empty) .. " nil nil nil" end
  return table.concat({ "false", tostring(t.seat), tostring(t.value), t.type }, " ")
end

return {
  on_place = function(ctx)
    ctx:spawn(ctx.x + 1, ctx.y, { seat = 2, value = 7, type = "resilient" })
    for _, c in ipairs({ { 0, 0 }, { 1, 0 }, { 2, 0 }, { -1, 0 }, { 0, 6 } }) do
      local x, y = c[1], c[2]
      local fast, general = parts(ctx, x, y), parts(ctx, x + 0.0, y * 1.0)
      local want = from_table(ctx, x, y)
      if fast ~= want or general ~= want then
        error(("(%d, %d): %s / %s, ctx:token says %s"):format(x, y, fast, general, want))
      end
      ctx:log(fast)
    end
    local v = ctx:value_at(0, "0")
  end,
}
"#;
    let f = pack(&[("parts", script)]);
    let host = ScriptHost::new(&f.catalog).expect("the script compiles");
    let mut game = Game::new(&f.catalog, &host);
    let message = game.refused("parts", 0, 0);
    assert!(
        message.contains("parts.lua:26:")
            && message.contains("expected a whole number, got a string"),
        "{message}"
    );
    let fine = script.replace("local v = ctx:value_at(0, \"0\")", "");
    let f = pack(&[("parts", &fine)]);
    let host = ScriptHost::new(&f.catalog).expect("the script compiles");
    let mut game = Game::new(&f.catalog, &host);
    game.played("parts", 0, 0);
    let logs = game.logs();
    assert_eq!(logs.len(), 5, "{logs:?}");
    assert!(logs[0].starts_with("false 1 "), "{logs:?}");
    assert_eq!(logs[1], "false 2 7 resilient");
    assert_eq!(logs[2], "true nil nil nil");
    assert_eq!(logs[3..], ["false nil nil nil", "false nil nil nil"]);
}

#[test]
fn spawn_reads_its_spec_alike_by_either_entry() {
    // A spec of plain fields (the fast entry), the same with whole floats (the general
    // function), and a table made at load (frozen: its fields live elsewhere) give the
    // same tokens; a bad type name is refused with the same message either way.
    let script = r#"
SPEC = { seat = 2, value = 3, type = "resilient" }

return {
  on_place = function(ctx)
    ctx:spawn(ctx.x + 1, ctx.y, { seat = 2, value = 3, type = "resilient" })
    ctx:spawn(ctx.x + 2, ctx.y, { seat = 2.0, value = 3.0, type = "resilient" })
    ctx:spawn(ctx.x + 3, ctx.y, SPEC)
    ctx:spawn(ctx.x + 4, ctx.y, {})
    for x = 1, 4 do
      local t = ctx:token(ctx.x + x, ctx.y)
      ctx:log(("%d %d %s"):format(t.seat, t.value, t.type))
    end
    BAD
  end,
}
"#;
    let fine = script.replace("    BAD\n", "");
    let f = pack(&[("spawner", &fine)]);
    let host = ScriptHost::new(&f.catalog).expect("the script compiles");
    let mut game = Game::new(&f.catalog, &host);
    game.played("spawner", 0, 0);
    assert_eq!(
        game.logs(),
        [
            "2 3 resilient",
            "2 3 resilient",
            "2 3 resilient",
            "1 1 basic"
        ]
    );
    for bad in [
        "ctx:spawn(ctx.x, ctx.y + 1, { type = 'resilent' })",
        "ctx:spawn(ctx.x + 0.0, ctx.y + 1, { type = 'resilent' })",
    ] {
        let f = pack(&[("spawner", &script.replace("BAD", bad))]);
        let host = ScriptHost::new(&f.catalog).expect("the script compiles");
        let message = Game::new(&f.catalog, &host).refused("spawner", 0, 0);
        assert!(
            message.contains("spawner.lua:14:")
                && message.contains("unknown token type 'resilent' (did you mean 'resilient'?)"),
            "{bad}: {message}"
        );
    }
}

#[test]
fn ctx_arguments_of_other_types_are_converted_or_refused_as_before() {
    // Whole floats count as integers, numbers written as text do not; a wrong argument is
    // refused with the general message at the script's line, however it was called.
    let script = r#"
return {
  on_place = function(ctx)
    ctx:damage(ctx.x + 1.0, ctx.y, 1)
    ctx:log(tostring(ctx:on_board(5.0, 5)) .. " " .. tostring(ctx:token(ctx.x, ctx.y).value))
    local t = ctx:token("1", 0)
  end,
}
"#;
    let f = pack(&[("mixed", script)]);
    let host = ScriptHost::new(&f.catalog).expect("the script compiles");
    let mut game = Game::new(&f.catalog, &host);
    let message = game.refused("mixed", 0, 0);
    assert!(
        message.contains("mixed.lua:6:")
            && message.contains("expected a whole number, got a string"),
        "{message}"
    );
    let f = pack(&[(
        "mixed",
        &script.replace("local t = ctx:token(\"1\", 0)", ""),
    )]);
    let host = ScriptHost::new(&f.catalog).expect("the script compiles");
    let mut game = Game::new(&f.catalog, &host);
    game.played("mixed", 0, 0);
    assert_eq!(game.logs(), ["true 1"]);
}

#[test]
fn ctx_fields_cannot_be_assigned() {
    for (field, line) in [
        ("seat", "ctx.seat = 2"),
        ("x", "ctx.x = 0"),
        ("damage", "ctx.damage = print"),
    ] {
        let script = format!("return {{\n  on_place = function(ctx)\n    {line}\n  end,\n}}\n");
        let f = pack(&[("assign", &script)]);
        let host = ScriptHost::new(&f.catalog).expect("the script compiles");
        let mut game = Game::new(&f.catalog, &host);
        let message = game.refused("assign", 0, 0);
        assert!(
            message.contains(&format!(
                "ctx cannot be changed by scripts (tried to set '{field}')"
            )),
            "{line}: {message}"
        );
    }
}

#[test]
fn a_lua_syntax_error_at_the_start_of_a_line_names_the_token_before_it() {
    // A dangling `+` at the end of line 3: Lua reports the `return` on line 5 (after a
    // comment line), and the message points at the `+` too.
    let bad = "return {\n  on_place = function(ctx)\n    local y = ctx.x +\n    -- the rest\n    return y\n  end,\n}\n";
    let dir = temp(&pack_files("t", "", &[("broken", bad)]));
    let loaded = load(dir.path());
    let errors: Vec<String> = loaded.diagnostics.iter().map(ToString::to_string).collect();
    assert!(
        errors.iter().any(|e| e.ends_with(
            "t/scripts/broken.lua:5:5: error: unexpected symbol near 'return'; the mistake may be just before it, at line 3, column 21 (`+`, the last token before line 5): is something unfinished there?"
        )),
        "{errors:#?}"
    );
}

#[test]
fn limits_the_income_hooks_of_one_look_share_one_budget() {
    // Twelve scripted tokens whose income hook runs about 600,000 instructions each: each
    // call is within its pack's cap, but a check of both seats' incomes is one look at the
    // game, whose calls share the move's 2,000,000 (they used to get a budget each, so
    // twelve slow tokens cost twelve times a move's limits).
    let slow = "return {\n  income = function(ctx, self, income)\n    \
                for i = 1, 300000 do end\n    return income\n  end,\n}\n";
    let mut files: Vec<(String, String)> = vec![
        (
            "packs/slow/pack.yaml".to_string(),
            "id: slow\nname: slow\nversion: 1.0.0\nrequires:\n  - { id: base, version: \"^1\" }\n\
             scripts: { instructions: 5000000 }\n"
                .to_string(),
        ),
        (
            "packs/slow/content.yaml".to_string(),
            "token_types:\n  - id: slow\n    name: Slow\n    description: Thinks about its income.\n    \
             script: scripts/slow.lua\n"
                .to_string(),
        ),
        ("packs/slow/scripts/slow.lua".to_string(), slow.to_string()),
        (
            "packs/slow/rules.yaml".to_string(),
            "rules:\n  limits: { instructions: 2000000, wall_ms: 10000 }\n".to_string(),
        ),
    ];
    let mut board = String::new();
    for i in 0..12 {
        board.push_str(&format!(
            "  - {{ at: [{}, {}], seat: {}, value: 1, type: slow }}\n",
            i % 6,
            i / 6,
            i % 2 + 1
        ));
    }
    files.push((
        "s.yaml".to_string(),
        format!(
            "name: slow incomes\npacks: [slow]\nrules: {{ opening_token: null }}\nboard:\n{board}\
             decks:\n  1: [[weaken_row, push_row], [spawn_row, booster], [push_cross, weaken_ring], [flip_cross, gift]]\n\
             expect:\n  income: {{ 1: 6, 2: 6 }}\n"
        ),
    ));
    let dir = temp(&files);
    let paths = PackPaths {
        content: root().join("content"),
        mods: dir.path().join("packs"),
    };
    let run = scenario::run_file(&dir.path().join("s.yaml"), &paths)
        .unwrap_or_else(|e| panic!("the scenario runs: {:#?}", e.diagnostics));
    match run.outcome {
        ScenarioOutcome::Fail(text) => assert!(
            text.contains("shared budget of 2000000 instructions"),
            "{text}"
        ),
        ScenarioOutcome::Pass => panic!("twelve calls of 600,000 instructions passed one look"),
    }
}
