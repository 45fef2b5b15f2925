//! Script state between moves and the cost of loading scripts: tables made when a script
//! loads are frozen (a write in a hook is refused with a message, and nothing is copied
//! back between moves), the upvalues a hook can change are put back before each move
//! within the move's budget, a move's result depends only on the game state and the move
//! (whatever ran before: other orders, the AI's look-aheads), a failure stays with its move
//! and pack, and loading a pack's scripts (parsing included) has one budget and clock.

use std::time::{Duration, Instant};

use tokensmith::rules::{Catalog, Cell, Engine, Event, EventKind, GameState, Move, Play};
use tokensmith::script::ScriptHost;

use crate::support::{fixture, load_with_scripts as load, scripted_pack, temp};

/// A pack `id` requiring base (see [`scripted_pack`]), `extra` appended to its content
/// file.
fn pack_files(id: &str, extra: &str, scripts: &[(&str, &str)]) -> Vec<(String, String)> {
    scripted_pack(id, "", extra, scripts)
}

/// The load's error messages (the content must not load).
fn refused_load(files: &[(String, String)]) -> (Vec<String>, Duration) {
    let dir = temp(files);
    let started = Instant::now();
    let loaded = load(dir.path());
    let took = started.elapsed();
    assert!(loaded.catalog.is_none(), "the packs should not load");
    (
        loaded.diagnostics.iter().map(ToString::to_string).collect(),
        took,
    )
}

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

    /// Play `card` at `(x, y)` for the seat to move: its log lines, or its refusal (which
    /// must leave the state as it was).
    fn play(&mut self, card: &str, x: i32, y: i32) -> Result<Vec<String>, String> {
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
        let before = self.state.clone();
        let mut events = Vec::new();
        let result = self.engine.play(&mut self.state, mv, &mut events);
        match result {
            Ok(()) => {
                let logs = events
                    .iter()
                    .filter_map(|e| match &e.kind {
                        EventKind::Log { text } => Some(text.clone()),
                        _ => None,
                    })
                    .collect();
                self.events.extend(events);
                Ok(logs)
            }
            Err(e) => {
                assert_eq!(self.state, before, "a refused move changed the state");
                Err(e.to_string())
            }
        }
    }

    /// Play moves on copies of the game and throw them away, as the AI's look-ahead does.
    fn look_ahead(&self, moves: &[(&str, i32, i32)]) {
        let mut state = self.state.clone();
        for &(card, x, y) in moves {
            let card = self
                .engine
                .catalog()
                .card_named(card)
                .unwrap_or_else(|e| panic!("{e}"));
            let mv = Move {
                seat: state.turn(),
                play: Play::Card(card),
                cell: Cell::new(x, y),
            };
            let _ = self.engine.play(&mut state, mv, &mut Vec::new());
        }
    }
}

// ---------------------------------------------------------------------------------------
// Frozen tables

#[test]
fn a_table_made_at_load_is_read_only_in_hooks() {
    let f = fixture(&pack_files(
        "t",
        "",
        &[
            (
                "poke",
                "local T = { 1, 2, 3, n = 0 }\nreturn { on_place = function(ctx)\n  T.n = T.n + 1\nend }\n",
            ),
            (
                "push",
                "local list = {}\nreturn { on_place = function(ctx)\n  table.insert(list, ctx.x)\nend }\n",
            ),
            (
                "meta",
                "local T = {}\nreturn { on_place = function(ctx)\n  setmetatable(T, {})\nend }\n",
            ),
            (
                "global",
                "Bag = { n = 0 }\nreturn { on_place = function(ctx)\n  Bag.n = 1\nend }\n",
            ),
        ],
    ));
    let host = ScriptHost::new(&f.catalog).expect("the scripts compile");
    let mut game = Game::new(&f.catalog, &host);
    for (card, line, key) in [
        ("poke", 3, "tried to set 'n'"),
        ("push", 3, "tried to set '1'"),
        ("meta", 3, "setmetatable"),
        ("global", 3, "tried to set 'n'"),
    ] {
        let e = game
            .play(card, 0, 0)
            .expect_err("a write to a load-time table must be refused");
        assert!(
            e.contains(&format!("t/scripts/{card}.lua:{line}:")) && e.contains(key),
            "{e}"
        );
        assert!(
            e.contains("made when the script loaded") && e.contains("read-only in hooks"),
            "{e}"
        );
    }
}

#[test]
fn a_frozen_table_reads_as_it_did() {
    let lua = r##"
local Point = {}
Point.__index = Point
function Point.new(x, y) return setmetatable({ x = x, y = y }, Point) end
function Point:sum() return self.x + self.y end
Point.__eq = function(a, b) return a.x == b.x and a.y == b.y end
Point.__tostring = function(p) return "(" .. p.x .. "," .. p.y .. ")" end
local origin = Point.new(1, 2)
local list = { 10, 20, 30 }
local holes = { 1, 2, nil, 4 }
local named = { b = 2, a = 1, [3] = "c" }
local lazy = setmetatable({ here = 1 }, { __index = function(t, k) return k .. "!" end })
local callable = setmetatable({}, { __call = function(self, a) return a * 2 end })
local spec = { value = 3 }
local it = pairs(named)
return { on_place = function(ctx)
  local out = {}
  out[#out + 1] = origin:sum() .. " " .. tostring(origin) .. " " .. tostring(origin == Point.new(1, 2))
  out[#out + 1] = #list .. " " .. rawlen(list) .. " " .. table.concat(list, ",") .. " " .. select("#", table.unpack(list))
  local seen = {}
  for i, v in ipairs(list) do seen[#seen + 1] = i .. "=" .. v end
  for k, v in pairs(named) do seen[#seen + 1] = k .. "=" .. v end
  out[#out + 1] = table.concat(seen, " ") .. " " .. tostring(next(named)) .. " " .. tostring(rawget(named, "a"))
  out[#out + 1] = #holes .. " " .. lazy.here .. " " .. lazy.there .. " " .. callable(21)
  out[#out + 1] = tostring(getmetatable(origin) == Point) .. " " .. tostring(it())
  ctx:spawn(ctx.x + 1, ctx.y, spec)
  local t = ctx:token(ctx.x + 1, ctx.y)
  out[#out + 1] = "spawned " .. (t and t.value or -1)
  ctx:log(table.concat(out, " | "))
end }
"##;
    let f = fixture(&pack_files("t", "", &[("read", lua)]));
    let host = ScriptHost::new(&f.catalog).expect("the script compiles");
    let mut game = Game::new(&f.catalog, &host);
    let expected = "3 (1,2) true | 3 3 10,20,30 3 | 1=10 2=20 3=30 3=c a=1 b=2 3 1 | 4 1 there! 42 | true 3 | spawned 3";
    for cell in [(0, 0), (0, 5), (3, 5)] {
        let logs = game
            .play("read", cell.0, cell.1)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(logs, [expected]);
    }
}

// ---------------------------------------------------------------------------------------
// A move depends only on the game state and the move

/// A script with state a hook can change: an upvalue counter, a `pairs` iterator made at
/// load, a helper closure with its own counter.
const STATEFUL: &str = r#"
local n = 0
local it = pairs({ a = 1, b = 2, c = 3 })
local function counter()
  local c = 0
  return function() c = c + 1; return c end
end
local tick = counter()
local holes = { 1, nil, 3 }
return { on_place = function(ctx)
  n = n + 1
  ctx:log(n .. " " .. tostring(it()) .. " " .. tick() .. " " .. #holes)
end }
"#;

#[test]
fn a_moves_result_does_not_depend_on_what_ran_before() {
    let f = fixture(&pack_files(
        "t",
        "",
        &[("count", STATEFUL), ("count2", STATEFUL)],
    ));
    let host = ScriptHost::new(&f.catalog).expect("the scripts compile");
    // The same position reached directly, and after look-aheads and other moves.
    let mut direct = Game::new(&f.catalog, &host);
    let first = direct.play("count", 0, 0);
    let mut busy = Game::new(&f.catalog, &host);
    busy.look_ahead(&[("count", 0, 0), ("count", 1, 1), ("count2", 2, 2)]);
    busy.look_ahead(&[("count2", 5, 5), ("count", 4, 4)]);
    let second = busy.play("count", 0, 0);
    assert_eq!(first, second);
    assert_eq!(first, Ok(vec!["1 a 1 3".to_string()]));
    // Two orders of the same moves give the same logs, move by move.
    let mut a = Game::new(&f.catalog, &host);
    let mut b = Game::new(&f.catalog, &host);
    let one = [a.play("count", 0, 0), a.play("count2", 5, 5)];
    b.look_ahead(&[("count2", 5, 5)]);
    let two = [b.play("count", 0, 0), b.play("count2", 5, 5)];
    assert_eq!(one, two);
}

// ---------------------------------------------------------------------------------------
// The cost of the state between moves

#[test]
fn putting_state_back_is_counted_against_the_moves_budget() {
    // 3,000 closures, each with its own upvalue: 3,000 values put back before each move
    // in which the hook ran before, counted like the hook's own instructions.
    let lua = "local fs = {}\nfor i = 1, 3000 do fs[i] = function() return i end end\nreturn { on_place = function(ctx) ctx:log(fs[1]()) end }\n";
    let f = fixture(&pack_files(
        "t",
        "rules:\n  limits:\n    instructions: 5000\n",
        &[("many", lua)],
    ));
    let host = ScriptHost::new(&f.catalog).expect("the script compiles");
    let mut game = Game::new(&f.catalog, &host);
    assert_eq!(game.play("many", 0, 0), Ok(vec!["1".to_string()]));
    let e = game
        .play("many", 5, 5)
        .expect_err("putting back 3,000 values spends more than 5,000 instructions");
    assert!(
        e.contains("t/scripts/many.lua: putting back the script's state before this move")
            && e.contains("rules.limits.instructions"),
        "{e}"
    );
    // A base card's move runs no hook of the script: nothing to put back.
    assert!(game.play("weaken_row", 0, 5).is_ok());
}

#[test]
fn too_many_upvalues_to_put_back_are_refused_at_load() {
    let lua = "local fs = {}\nfor i = 1, 20000 do fs[i] = function() return i end end\nreturn { on_place = function(ctx) ctx:log(fs[1]()) end }\n";
    let files = pack_files("t", "", &[("many", lua)]);
    let dir = temp(&files);
    let mut pack = std::fs::read_to_string(dir.path().join("t/pack.yaml")).expect("pack.yaml");
    pack.push_str("scripts: { instructions: 5000000 }\n");
    std::fs::write(dir.path().join("t/pack.yaml"), pack).expect("write pack.yaml");
    let loaded = load(dir.path());
    assert!(loaded.catalog.is_none());
    let errors: Vec<String> = loaded.diagnostics.iter().map(ToString::to_string).collect();
    assert!(
        errors
            .iter()
            .any(|e| e.contains("many.lua") && e.contains("more than 10000 upvalues")),
        "{errors:?}"
    );
}

#[test]
fn large_and_colliding_tables_made_at_load_cost_nothing_between_moves() {
    // 100,000 entries, and 4,000 integer keys in one hash chain (multiples of a power of
    // two): once frozen, nothing of them is copied back before a move.
    let lua = r#"
local big = {}
for i = 1, 100000 do big[i] = i end
local chain = {}
for i = 1, 4000 do chain[i * 65536] = i end
return {
  on_place = function(ctx) ctx:log(#big .. " " .. chain[65536]) end,
  between_turns = function(ctx, self) local _ = big[1] end,
}
"#;
    let files = vec![
        (
            "t/pack.yaml".to_string(),
            "id: t\nname: t\nversion: 1.0.0\nrequires:\n  - { id: base, version: \"^1\" }\nscripts: { instructions: 5000000 }\n".to_string(),
        ),
        (
            "t/content.yaml".to_string(),
            "token_types:\n  - id: holder\n    script: scripts/big.lua\nabilities:\n  - id: big\n    script: scripts/big.lua\ncards:\n  - id: big\n    value: 1\n    ability: big\n    area: cross\n  - id: hold\n    value: 1\n    token: holder\n".to_string(),
        ),
        ("t/scripts/big.lua".to_string(), lua.to_string()),
    ];
    let f = fixture(&files);
    let host = ScriptHost::new(&f.catalog).expect("the script compiles");
    let mut game = Game::new(&f.catalog, &host);
    // The holder's between_turns runs after every move from now on.
    game.play("hold", 0, 0).unwrap_or_else(|e| panic!("{e}"));
    let started = Instant::now();
    let cells = [
        (5, 5),
        (0, 5),
        (5, 0),
        (1, 5),
        (4, 0),
        (1, 0),
        (5, 1),
        (0, 4),
    ];
    for &(x, y) in &cells {
        let logs = game.play("big", x, y).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(logs, ["100000 1"]);
    }
    let took = started.elapsed();
    // Copying the tables back took tens of milliseconds a move (seconds for a longer
    // chain); the moves themselves take well under one.
    assert!(
        took < Duration::from_secs(3),
        "{} moves took {took:?}",
        cells.len()
    );
}

// ---------------------------------------------------------------------------------------
// A failure stays with its move and its pack

#[test]
fn a_pack_whose_state_cannot_be_kept_refuses_only_its_own_moves() {
    // The attack that once broke every pack for the life of the process: a hook that
    // empties one table made at load and fills another.
    let attack = r#"
local a = {}
for i = 1, 20000 do a[i] = i end
local b = {}
return { on_place = function(ctx)
  for i = 1, #a do a[i] = nil end
  for i = 1, 40000 do b[i] = i end
end }
"#;
    let hog = "local keep\nreturn { on_place = function(ctx)\n  keep = {}\n  for i = 1, 100000 do keep[i] = i end\n  ctx:log('kept')\nend }\n";
    let mut files = pack_files(
        "pa",
        "",
        &[
            ("attack", attack),
            ("hog", hog),
            (
                "calm",
                "return { on_place = function(ctx) ctx:log('calm') end }\n",
            ),
        ],
    );
    files.extend(pack_files(
        "pb",
        "",
        &[(
            "other",
            "return { on_place = function(ctx) ctx:log('other') end }\n",
        )],
    ));
    let f = fixture(&files);
    let host = ScriptHost::new(&f.catalog).expect("the scripts compile");
    let mut game = Game::new(&f.catalog, &host);
    let e = game.play("attack", 0, 0).expect_err("the write is refused");
    assert!(e.contains("read-only in hooks"), "{e}");
    for (card, x, y, log) in [
        ("other", 5, 5, "other"),
        ("hog", 0, 5, "kept"),
        ("calm", 5, 0, "calm"),
        ("hog", 1, 0, "kept"),
        ("other", 4, 5, "other"),
    ] {
        assert_eq!(game.play(card, x, y), Ok(vec![log.to_string()]), "{card}");
    }
}

// ---------------------------------------------------------------------------------------
// Loading

#[test]
fn a_packs_top_levels_share_one_load_clock_named_as_load() {
    // Five files whose top levels only the clock stops (each `..` copies 2 MB in one
    // instruction): one clock for the pack, not one per file.
    let slow =
        "local s = string.rep('x', 2000000)\nwhile true do local t = s .. 'y' end\nreturn {}\n";
    let scripts: Vec<(String, &str)> = (0..5).map(|i| (format!("slow{i}"), slow)).collect();
    let refs: Vec<(&str, &str)> = scripts.iter().map(|(n, s)| (n.as_str(), *s)).collect();
    let (errors, took) = refused_load(&pack_files("t", "", &refs));
    assert!(
        errors.iter().any(|e| e.contains("slow0.lua:2:")
            && e.contains("loading the pack's scripts ran for more than 1000 ms")),
        "{errors:?}"
    );
    assert!(
        errors.iter().all(|e| !e.contains("rules.limits.wall_ms")),
        "{errors:?}"
    );
    assert!(
        errors
            .iter()
            .filter(|e| e.contains("not loaded: loading the pack's scripts"))
            .count()
            >= 3,
        "{errors:?}"
    );
    assert!(took < Duration::from_secs(4), "the load took {took:?}");
}

#[test]
fn a_script_that_takes_long_to_parse_is_stopped_by_the_load_clock() {
    // Lua's parser is quadratic in an `elseif` chain: a megabyte of them took seconds.
    let mut lua = String::from("local x = 0\nif x == 0 then x = 1\n");
    let mut i = 1;
    while lua.len() < 1_000_000 {
        lua.push_str(&format!("elseif x == {i} then x = 1\n"));
        i += 1;
    }
    lua.push_str("end\nreturn { on_place = function(ctx) end }\n");
    let (errors, took) = refused_load(&pack_files("t", "", &[("chain", &lua)]));
    assert!(
        errors.iter().any(|e| e.contains("chain.lua:")
            && e.contains("parsing the script stopped here")
            && e.contains("ran for more than 1000 ms")),
        "{errors:?}"
    );
    assert!(took < Duration::from_secs(4), "the load took {took:?}");
}

#[test]
fn a_packs_scripts_are_capped_in_size_together() {
    let filler = format!(
        "-- {}\nreturn {{ on_place = function(ctx) end }}\n",
        "x".repeat(1_000_000)
    );
    let scripts: Vec<(String, &str)> = (0..5).map(|i| (format!("f{i}"), filler.as_str())).collect();
    let refs: Vec<(&str, &str)> = scripts.iter().map(|(n, s)| (n.as_str(), *s)).collect();
    let (errors, _) = refused_load(&pack_files("t", "", &refs));
    assert!(
        errors
            .iter()
            .any(|e| e.contains("script file 'scripts/f4.lua' is not read")
                && e.contains("the scripts of one pack may hold 4194304 bytes together")),
        "{errors:?}"
    );
}
