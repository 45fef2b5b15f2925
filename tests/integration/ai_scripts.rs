//! The AI against hostile scripts: what one decision may spend on scripts is bounded
//! however many runaway cards are in hand or however often a looping `evaluate` runs,
//! and what the AI remembers of runaway cards depends only on the game (the same report
//! for any thread count).

use std::process::Output;
use std::time::{Duration, Instant};

use tokensmith::ai::{Level, Options, ScriptLimits, agent};
use tokensmith::content::{LoadOptions, PackFolder};
use tokensmith::observe::{History, Observation};
use tokensmith::rules::Catalog;

use crate::support::{self, TempPacks, root};

const PACK: &str = "version: 1.0.0\nrequires:\n  - { id: base, version: \"^1\" }\n";

fn load(packs: &TempPacks) -> Catalog {
    let loaded = tokensmith::script::load(&LoadOptions {
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
    loaded
        .catalog
        .unwrap_or_else(|| panic!("loads: {:?}", loaded.diagnostics))
}

fn tokensmith(args: &[&str]) -> Output {
    support::tokensmith(args).output().expect("the binary runs")
}

/// `simulate --json` with the packs of `dir` and `args` (decks, AIs, games, seed,
/// threads): the report without its timing fields, which differ from run to run.
fn simulate_report(dir: &str, args: &[&str]) -> serde_json::Value {
    let mut all = vec!["--mods", dir, "--all-packs", "simulate"];
    all.extend_from_slice(args);
    all.push("--json");
    let out = tokensmith(&all);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    v["games_per_second"] = serde_json::Value::Null;
    v["totals"]["seconds"] = serde_json::Value::Null;
    v
}

/// A pack whose card loops forever only once the board holds `crowd` tokens or more, in
/// a deck of its own with base cards.
fn crowded(crowd: usize) -> TempPacks {
    TempPacks::new(&[
        (
            "crowd/pack.yaml",
            &format!("id: crowd\nname: Crowd\n{PACK}"),
        ),
        (
            "crowd/content.yaml",
            "abilities:\n  - id: crowding\n    script: scripts/crowd.lua\n\
             cards:\n  - id: crowder\n    value: 6\n    ability: crowding\n    area: cross\n\
             decks:\n  - id: crowded\n    name: Crowded\n    stacks:\n      - [crowder, base:weaken_row]\n      - [base:spawn_row, base:booster]\n      - [base:flip_cross, base:weaken_cross]\n      - [base:push_cross, base:weaken_ring]\n",
        ),
        (
            "crowd/scripts/crowd.lua",
            &format!(
                "return {{\n  on_place = function(ctx)\n    if #ctx:tokens() >= {crowd} then\n      while true do end\n    end\n  end,\n}}\n"
            ),
        ),
    ])
}

#[test]
fn a_card_that_loops_only_on_crowded_boards_gives_one_report_for_any_thread_count() {
    let packs = crowded(10);
    let dir = packs.path().to_string_lossy().into_owned();
    let run = |threads: &str| {
        simulate_report(
            &dir,
            &[
                "--deck-a",
                "crowded",
                "--deck-b",
                "starter",
                "--ai-a",
                "greedy",
                "--ai-b",
                "normal",
                "--games",
                "6",
                "--seed",
                "5",
                "--threads",
                threads,
            ],
        )
    };
    let one = run("1");
    let crowder = one["cards"]
        .as_array()
        .and_then(|cards| cards.iter().find(|c| c["id"] == "crowder"))
        .unwrap_or_else(|| panic!("the card is offered: {one}"));
    assert!(crowder["played"].as_u64() > Some(0), "it is played: {one}");
    assert_eq!(run("2"), one, "2 threads");
    assert_eq!(run("3"), one, "3 threads");
}

/// A pack of `n` cards that loop forever when played, and an `ai.lua` whose `evaluate`
/// loops forever too.
fn runaways(n: usize) -> TempPacks {
    let mut cards =
        String::from("abilities:\n  - id: spin\n    script: scripts/spin.lua\ncards:\n");
    for i in 0..n {
        cards.push_str(&format!(
            "  - id: spinner{i}\n    value: 5\n    ability: spin\n    area: cross\n"
        ));
    }
    TempPacks::new(&[
        ("spin/pack.yaml", &format!("id: spin\nname: Spin\n{PACK}")),
        ("spin/content.yaml", &cards),
        (
            "spin/scripts/spin.lua",
            "return {\n  on_place = function(ctx)\n    while true do end\n  end,\n}\n",
        ),
        (
            "spin/ai.lua",
            "return {\n  evaluate = function(ctx, seat)\n    while true do end\n  end,\n}\n",
        ),
    ])
}

#[test]
fn a_hand_of_runaway_cards_and_a_looping_evaluate_stay_within_one_decisions_script_budget() {
    let packs = runaways(8);
    let catalog = load(&packs);
    assert!(
        catalog.packs().iter().any(|p| p.ai_script.is_some()),
        "the pack's ai.lua is loaded"
    );
    let spinners: Vec<_> = (0..8)
        .map(|i| {
            catalog
                .card_named(&format!("spin:spinner{i}"))
                .unwrap_or_else(|e| panic!("{e}"))
        })
        .collect();
    // Two stacks of four runaway cards and two of base cards: two runaway cards in hand,
    // and two that run no script.
    let starter = catalog.decks()[0].stacks.clone();
    let mut stacks: Vec<Vec<_>> = spinners.chunks(4).map(<[_]>::to_vec).collect();
    stacks.extend(starter[2..].iter().cloned());
    let scripts = tokensmith::ai::hooks_for(&catalog);
    let brain = scripts.brain(&catalog);
    let state = brain
        .engine()
        .new_game([&stacks, &starter], 3, &mut Vec::new())
        .unwrap_or_else(|e| panic!("{e}"));
    // A budget far below what the runaway cards and evaluate calls would spend: each
    // would run a million instructions (a hook call's budget), and every one of the
    // `normal` decision's hundreds of evaluations would again.
    let limits = ScriptLimits {
        instructions: 300_000,
        wall_ms: 60_000,
    };
    let options = Options {
        scripts: limits,
        ..Options::default()
    };
    for level in [Level::Greedy, Level::Normal, Level::Hard] {
        let options = Options {
            budget: tokensmith::ai::Budget::Iterations(64),
            ..options
        };
        let mut ai = agent(level, 1, options);
        let obs = Observation::new(&state, state.turn(), &History::default(), false);
        let before = brain.cuts();
        let started = Instant::now();
        let chosen = ai.choose(&brain, &obs);
        let took = started.elapsed();
        // The decision ends with a move that runs no script, says it was cut, and took a
        // small multiple of a budget of 300,000 instructions (well under a second;
        // without the meter, every evaluation runs a million instructions).
        let card = chosen.and_then(|mv| brain.engine().card_played(&state, mv).ok());
        assert!(
            card.is_some_and(|c| !spinners.contains(&c)),
            "{level:?} chose {card:?}"
        );
        assert_eq!(brain.cuts(), before + 1, "{level:?}'s decision was cut");
        assert!(took < Duration::from_secs(3), "{level:?} took {took:?}");
    }
}

#[test]
fn running_out_of_the_decision_budget_does_not_mark_a_card_as_runaway() {
    // A card whose script is slow but finishes: with a decision budget smaller than one
    // play of it, the decision is cut, but the card is not remembered as runaway, and a
    // decision with room plays it.
    let packs = TempPacks::new(&[
        ("slow/pack.yaml", &format!("id: slow\nname: Slow\n{PACK}")),
        (
            "slow/content.yaml",
            "abilities:\n  - id: slow\n    script: scripts/slow.lua\ncards:\n  - id: slowpoke\n    value: 40\n    ability: slow\n    area: cross\n",
        ),
        (
            "slow/scripts/slow.lua",
            "return {\n  on_place = function(ctx)\n    local n = 0\n    for i = 1, 20000 do n = n + i end\n  end,\n}\n",
        ),
    ]);
    let catalog = load(&packs);
    let slow = catalog
        .card_named("slow:slowpoke")
        .unwrap_or_else(|e| panic!("{e}"));
    let mut stacks = catalog.decks()[0].stacks.clone();
    stacks[0].insert(0, slow);
    let scripts = tokensmith::ai::hooks_for(&catalog);
    let brain = scripts.brain(&catalog);
    let state = brain
        .engine()
        .new_game([&stacks, &stacks], 1, &mut Vec::new())
        .unwrap_or_else(|e| panic!("{e}"));
    let obs = Observation::new(&state, state.turn(), &History::default(), false);
    let tight = Options {
        scripts: ScriptLimits {
            instructions: 1_000,
            wall_ms: 60_000,
        },
        ..Options::default()
    };
    let mut ai = agent(Level::Greedy, 1, tight);
    let chosen = ai.choose(&brain, &obs).expect("a move");
    assert_ne!(
        brain.engine().card_played(&state, chosen).ok(),
        Some(slow),
        "not rated within 1,000 instructions"
    );
    assert_eq!(brain.cuts(), 1);
    assert!(
        brain.spent().iter().all(Option::is_none),
        "nothing remembered"
    );
    let mut ai = agent(Level::Greedy, 1, Options::default());
    let chosen = ai.choose(&brain, &obs).expect("a move");
    assert_eq!(
        brain.engine().card_played(&state, chosen).ok(),
        Some(slow),
        "worth 40"
    );
    assert_eq!(brain.cuts(), 1, "not cut with the default budget");
}

/// Packs with cards that attack the memory meter: one leaves garbage, one counts
/// allocations until memory runs out (inside a `pcall`), one nests `gsub` calls whose
/// results are built outside Lua, and one holds 1.25 MiB for a moment and scores. Two
/// more packs ask for 64 MiB each, so the caps add up past the 128 MiB a content set's
/// scripts hold together and each pack gets a fixed share (the attackers 3.7 MiB).
fn memory_attacks() -> TempPacks {
    let pack = |id: &str, card: &str, kb: u32, lua: &str| {
        vec![
            (
                format!("{id}/pack.yaml"),
                format!(
                    "id: {id}\nname: {id}\n{PACK}scripts: {{ memory_kb: {kb}, instructions: 50000000 }}\n"
                ),
            ),
            (
                format!("{id}/content.yaml"),
                format!(
                    "abilities:\n  - id: {card}\n    script: scripts/{card}.lua\n\
                     cards:\n  - id: {card}\n    value: 4\n    ability: {card}\n    area: cross\n"
                ),
            ),
            (format!("{id}/scripts/{card}.lua"), lua.to_string()),
        ]
    };
    let mut files = Vec::new();
    for big in ["mem_big1", "mem_big2"] {
        files.extend(pack(
            big,
            &format!("{big}_card"),
            65536,
            "return { on_place = function(ctx) end }\n",
        ));
    }
    files.extend(pack(
        "mem_litter",
        "litter",
        4096,
        "return { on_place = function(ctx)\n  for i = 1, 30 do local s = string.rep('g', 65536 + i) end\nend }\n",
    ));
    files.extend(pack(
        "mem_count",
        "counter",
        4096,
        "return { on_place = function(ctx)\n  local n, keep = 0, {}\n  \
         pcall(function() while true do n = n + 1; keep[n] = string.rep('c', 65536 + n) end end)\n  \
         ctx:add_score(ctx.seat, n % 3)\nend }\n",
    ));
    files.extend(pack(
        "mem_nest",
        "nester",
        4096,
        "return { on_place = function(ctx)\n  local r = ('aaa'):gsub('a', function()\n    \
         return (('b'):rep(8)):gsub('b', function() return ('c'):rep(262144) end)\n  end)\n  \
         ctx:add_score(ctx.seat, #r)\nend }\n",
    ));
    let mut decks = pack(
        "mem_fits",
        "holder",
        4096,
        "return { on_place = function(ctx)\n  local t = {}\n  \
         for i = 1, 20 do t[i] = string.rep('f', 65536 + i) end\n  ctx:add_score(ctx.seat, #t)\nend }\n",
    );
    decks[0].1 = decks[0].1.replace(
        "requires:\n",
        "requires:\n  - { id: mem_litter, version: \"^1\" }\n  - { id: mem_count, version: \"^1\" }\n  - { id: mem_nest, version: \"^1\" }\n",
    );
    decks[1].1.push_str(
        "decks:\n  - id: attacks\n    name: Attacks\n    stacks:\n      \
         - [mem_litter:litter, base:weaken_row, base:push_cross]\n      \
         - [mem_count:counter, base:spawn_row, base:flip_cross]\n      \
         - [mem_nest:nester, base:booster, base:weaken_ring]\n      \
         - [holder, base:weaken_cross, base:weaken_column]\n",
    );
    files.extend(decks);
    support::temp(&files)
}

#[test]
fn memory_attack_decks_give_one_report_for_any_thread_count() {
    let packs = memory_attacks();
    let dir = packs.path().to_string_lossy().into_owned();
    let run = |threads: &str| {
        simulate_report(
            &dir,
            &[
                "--deck-a",
                "attacks",
                "--deck-b",
                "attacks",
                "--ai-a",
                "random",
                "--ai-b",
                "random",
                "--games",
                "4",
                "--seed",
                "3",
                "--threads",
                threads,
            ],
        )
    };
    let started = Instant::now();
    let one = run("1");
    eprintln!("one thread: {:?}", started.elapsed());
    let card = |id: &str| {
        one["cards"]
            .as_array()
            .and_then(|cards| cards.iter().find(|c| c["id"] == id))
            .cloned()
            .unwrap_or_default()
    };
    let played = |id: &str| card(id)["played"].as_u64().unwrap_or(0);
    assert!(
        played("holder") > 0,
        "a card within its share is played: {one}"
    );
    assert!(
        played("litter") > 0,
        "a card that leaves garbage is played: {one}"
    );
    // Running out of memory refuses the move, however the script catches it.
    for card_id in ["counter", "nester"] {
        assert_eq!(played(card_id), 0, "{one}");
        let error = card(card_id)["first_error"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        assert!(
            error.contains("the pack's script memory limit is reached")
                && error.contains("its share of the 128 MiB"),
            "{card_id}: {error}"
        );
    }
    assert_eq!(run("2"), one, "2 threads");
    assert_eq!(run("8"), one, "8 threads");
}
