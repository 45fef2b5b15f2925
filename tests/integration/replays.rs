//! Hook calls replayed from a record of their `ctx` calls (`src/script/memo.rs`) play
//! exactly as the Lua would: every move a look-ahead tries and every move played gives
//! the same state, the same events (script lines included) and the same refusals with
//! replays on as with every hook run in Lua, within the default limits and within limits
//! so tight that moves are refused.

use tokensmith::content::{LoadOptions, PackFolder};
use tokensmith::rules::{Catalog, Engine, Event, GameState, Move};
use tokensmith::script::ScriptHost;

use crate::support::{root, scripted_pack, temp};

/// Load base, the shipped mods and `extra` packs, keeping `only` and what it requires.
fn load(extra: Option<&std::path::Path>, only: &str) -> Catalog {
    let mut folders = vec![root().join("content"), root().join("mods")];
    folders.extend(extra.map(std::path::Path::to_path_buf));
    let loaded = tokensmith::script::load(&LoadOptions {
        folders: folders
            .into_iter()
            .map(|path| PackFolder {
                path,
                required: true,
            })
            .collect(),
        only: Some(vec![only.to_string()]),
        rules_patch: None,
        order: Vec::new(),
    });
    assert!(loaded.diagnostics.is_empty(), "{:#?}", loaded.diagnostics);
    loaded.catalog.expect("the packs load")
}

/// One move on one engine: the state after it, its events, or its refusal. It is played
/// quietly first, as a look-ahead does (records made without events must replay with
/// them), and must come to the same state.
fn outcome(engine: &Engine<'_>, state: &GameState, mv: Move) -> (GameState, Vec<Event>, String) {
    let mut quiet = state.clone();
    let quietly = engine.play_quiet(&mut quiet, mv).map_err(|e| e.to_string());
    let mut after = state.clone();
    let mut events = Vec::new();
    let refused = match engine.play(&mut after, mv, &mut events) {
        Ok(()) => String::new(),
        Err(e) => e.to_string(),
    };
    match quietly {
        Ok(()) => assert_eq!(quiet, after, "{mv:?} played quietly and not"),
        Err(e) => assert_eq!(e, refused, "{mv:?} refused quietly and not"),
    }
    (after, events, refused)
}

/// Play `games` games of `deck` against itself on both engines, trying every
/// legal move from every position first (as the AI does) and then playing one picked by
/// a fixed sequence: every result must be the same on both. The moves refused.
fn play_both(catalog: &Catalog, deck: &str, games: u64) -> (usize, (u64, u64)) {
    let replaying = ScriptHost::new(catalog).expect("the scripts compile");
    let lua = ScriptHost::new(catalog).expect("the scripts compile");
    lua.set_replays(false);
    let engines = [Engine::new(catalog, &replaying), Engine::new(catalog, &lua)];
    let deck = &catalog
        .deck(catalog.deck_named(deck).expect("the deck"))
        .stacks;
    let mut refused = 0;
    let mut pick: u64 = 0x9e37_79b9_7f4a_7c15;
    for seed in 0..games {
        let mut states = Vec::new();
        for engine in &engines {
            let mut events = Vec::new();
            let state = engine
                .new_game([deck, deck], seed, &mut events)
                .expect("the deck is legal");
            states.push((state, events));
        }
        assert_eq!(states[0], states[1], "game {seed} starts alike");
        let mut state = states.swap_remove(0).0;
        while !state.is_over() {
            let moves = engines[0].legal_moves(&state);
            assert_eq!(moves, engines[1].legal_moves(&state));
            if moves.is_empty() {
                break;
            }
            for &mv in &moves {
                let a = outcome(&engines[0], &state, mv);
                let b = outcome(&engines[1], &state, mv);
                assert_eq!(a.2, b.2, "game {seed}, move {mv:?}: the same refusal");
                assert_eq!(a.1, b.1, "game {seed}, move {mv:?}: the same events");
                assert_eq!(a.0, b.0, "game {seed}, move {mv:?}: the same state");
                refused += usize::from(!a.2.is_empty());
            }
            pick = pick
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            let index = usize::try_from(pick >> 33).unwrap_or(0) % moves.len();
            let (after, _, why) = outcome(&engines[0], &state, moves[index]);
            if !why.is_empty() {
                break;
            }
            state = after;
        }
    }
    assert_eq!(
        lua.replay_counts(),
        (0, 0),
        "with replays off, none is tried"
    );
    (refused, replaying.replay_counts())
}

#[test]
fn replayed_hook_calls_play_exactly_as_lua_does() {
    let catalog = load(None, "example_scripted");
    let (_, (hits, misses)) = play_both(&catalog, "scripted_showcase", 3);
    // Both paths ran: replays that went as recorded, and ones undone for a hook run in Lua.
    assert!(hits > 1_000, "{hits} replays went as recorded");
    assert!(misses > 100, "{misses} replays were undone");
}

#[test]
fn replays_are_refused_where_lua_is_refused() {
    // A step budget so small that boards with a few scripted tokens pass it: a replay
    // must never let through a move the Lua would have refused, nor refuse one it let
    // through, and each refusal must say the same.
    let files = scripted_pack(
        "tight",
        "  - { id: example_scripted, version: \"^1\" }\n",
        "rules:\n  limits:\n    instructions: 700\n",
        &[],
    );
    let dir = temp(&files);
    let catalog = load(Some(dir.path()), "tight");
    let (refused, (hits, _)) = play_both(&catalog, "scripted_showcase", 2);
    assert!(refused > 10, "{refused} moves were refused");
    assert!(hits > 100, "{hits} replays went as recorded");
}

/// A pack of four cards whose ability runs `lua`, in a deck of its own, with `scripts`
/// limits.
fn pack_running(scripts_limits: &str, lua: &str) -> Vec<(String, String)> {
    let names = ["one", "two", "three", "four"];
    let scripts: Vec<(&str, &str)> = names.iter().map(|n| (*n, lua)).collect();
    scripted_pack(
        "catching",
        &format!("scripts: {scripts_limits}\n"),
        "decks:\n  - id: catching\n    name: Catching\n    stacks:\n      \
         - [one, weaken_row]\n      - [two, weaken_column]\n      \
         - [three, weaken_cross]\n      - [four, push_row]\n",
        &scripts,
    )
}

#[test]
fn a_call_that_caught_an_error_is_not_replayed() {
    // Running out of memory depends on more than a call's arguments: a call that caught
    // an error (it may have been that) must run in Lua every time. The same hook without
    // the catch is replayed, so the test sees replays when they happen.
    let damage = "if ctx:on_board(ctx.x + 1, ctx.y) and ctx:token(ctx.x + 1, ctx.y) then \
                  ctx:damage(ctx.x + 1, ctx.y, 1) end";
    let plain = format!("return {{ on_place = function(ctx) {damage} end }}\n");
    let catching = format!(
        "return {{ on_place = function(ctx)\n  local s = 'x'\n  \
         local fits = pcall(function() for _ = 1, 40 do s = s .. s end end)\n  \
         if not fits then {damage} end\nend }}\n"
    );
    let dir = temp(&pack_running("{ memory_kb: 512 }", &plain));
    let (_, (hits, _)) = play_both(&load(Some(dir.path()), "catching"), "catching", 1);
    assert!(hits > 10, "the plain hook was replayed {hits} times");
    let dir = temp(&pack_running("{ memory_kb: 512 }", &catching));
    let (_, counts) = play_both(&load(Some(dir.path()), "catching"), "catching", 2);
    assert_eq!(counts, (0, 0), "no call that caught an error is replayed");
}

#[test]
fn replays_keep_each_calls_own_cap() {
    // A hook whose work grows with the tokens on the board, under the smallest cap a
    // call may have: past a dozen tokens it is stopped. A replayed call must be stopped
    // exactly where its run in Lua is (with the same message), and let through where
    // that is.
    let grind = "return { on_place = function(ctx)\n  local n = 0\n  \
                 for y = 0, 5 do for x = 0, 5 do if ctx:token(x, y) then n = n + 1 end end end\n  \
                 for _ = 1, n * 40 do end\n  \
                 if ctx:on_board(ctx.x + 1, ctx.y) and ctx:token(ctx.x + 1, ctx.y) then \
                 ctx:damage(ctx.x + 1, ctx.y, 1) end\nend }\n";
    let dir = temp(&pack_running("{ instructions: 1000 }", grind));
    let (refused, (hits, _)) = play_both(&load(Some(dir.path()), "catching"), "catching", 2);
    assert!(refused > 10, "{refused} moves were refused");
    assert!(hits > 100, "{hits} replays went as recorded");
}

#[test]
fn a_record_of_one_part_of_a_cell_holds_when_the_rest_changes() {
    // The same hook twice: reading whole tokens, then only the seats it decides on. Row
    // and column damage keeps changing the values around, which spoils records of whole
    // tokens and not of seats: both play exactly as the Lua does (the games are the
    // same), and the second replays more of the same calls.
    let hook = |read: &str| {
        format!(
            "return {{ on_place = function(ctx)\n  \
             for dx = -1, 1 do\n    local x = ctx.x + dx\n    \
             if dx ~= 0 and {read} then ctx:damage(x, ctx.y, 1) end\n  end\nend }}\n"
        )
    };
    let whole = hook("(ctx:token(x, ctx.y) or {}).seat == ctx.opponent");
    let seat = hook("ctx:seat_at(x, ctx.y) == ctx.opponent");
    let dir = temp(&pack_running("{}", &whole));
    let (refused, (whole_hits, whole_misses)) =
        play_both(&load(Some(dir.path()), "catching"), "catching", 3);
    assert_eq!(refused, 0);
    let dir = temp(&pack_running("{}", &seat));
    let (_, (seat_hits, seat_misses)) =
        play_both(&load(Some(dir.path()), "catching"), "catching", 3);
    assert!(
        seat_hits > whole_hits && seat_misses < whole_misses,
        "seats: {seat_hits} replays went as recorded and {seat_misses} were undone; \
         whole tokens: {whole_hits} and {whole_misses}"
    );
}

#[test]
fn hooks_nested_across_packs_play_alike() {
    // A pack's hook whose damage destroys another pack's powder kegs (whose
    // `on_destroyed` then runs in that pack's state): a call that started another is not
    // recorded, and a replay whose change would start one runs in Lua instead.
    let blast = "return { on_place = function(ctx)\n  \
                 for _, c in ipairs(ctx:targets()) do\n    \
                 if ctx:token(c.x, c.y) then ctx:damage(c.x, c.y, 1) end\n  end\nend }\n";
    let names = ["one", "two", "three", "four"];
    let scripts: Vec<(&str, &str)> = names.iter().map(|n| (*n, blast)).collect();
    let files = scripted_pack(
        "blasting",
        "  - { id: example_scripted, version: \"^1\" }\n",
        "decks:\n  - id: blasting\n    name: Blasting\n    stacks:\n      \
         - [one, powder_keg]\n      - [two, leech]\n      \
         - [three, hermit]\n      - [four, weaken_row]\n",
        &scripts,
    );
    let dir = temp(&files);
    let (_, (hits, misses)) = play_both(&load(Some(dir.path()), "blasting"), "blasting", 3);
    assert!(hits > 100, "{hits} replays went as recorded");
    assert!(misses > 10, "{misses} replays were undone");
}
