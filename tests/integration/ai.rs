//! The AI: hidden information stays hidden, determinizations respect what was seen,
//! simulations are reproducible, the levels are ordered, and a scripted card is
//! understood without any AI code knowing it.

use rand::SeedableRng;
use rand_pcg::Pcg32;
use tokensmith::ai::simulate::{self, Config, DeckChoice};
use tokensmith::ai::{Budget, Level, Options, Worlds, agent};
use tokensmith::observe::{History, Observation};
use tokensmith::rules::{CardId, Catalog, Engine, GameState, NoHooks, Play, Seat};

use crate::support::{TempPacks, base_catalog, root};

fn deck(catalog: &Catalog, i: usize) -> DeckChoice {
    let d = &catalog.decks()[i];
    DeckChoice {
        id: d.meta.id.clone(),
        stacks: d.stacks.clone(),
        per_game: false,
    }
}

fn config(catalog: &Catalog, a: Level, b: Level, games: u32, seed: u64) -> Config {
    Config {
        deck_a: deck(catalog, 0),
        decks_b: vec![deck(catalog, 0)],
        ai_a: a,
        ai_b: b,
        games,
        seed,
        threads: 2,
        options: Options {
            budget: Budget::Iterations(300),
            omniscient: false,
            scripts: tokensmith::ai::ScriptLimits::DEFAULT,
        },
        max_moves: simulate::MAX_MOVES,
        shard: None,
    }
}

/// A game a few moves in, with the history of public plays.
fn midgame(catalog: &Catalog, moves: usize) -> (GameState, History) {
    let engine = Engine::new(catalog, &NoHooks);
    let d = &catalog.decks()[1].stacks;
    let mut events = Vec::new();
    let mut state = engine.new_game([d, d], 3, &mut events).expect("a game");
    let mut history = History::new();
    for i in 0..moves {
        events.clear();
        let legal = engine.legal_moves(&state);
        let mv = legal[(i * 7) % legal.len()];
        let from = history.position_of(&state);
        engine.play(&mut state, mv, &mut events).expect("legal");
        history.record(from, &events);
    }
    (state, history)
}

/// Every level decides the same in `state` and in a copy whose opponent stacks hold
/// their unseen cards in another order.
fn decides_alike_whatever_the_hidden_order(
    catalog: &Catalog,
    state: &GameState,
    history: &History,
) {
    let seat = state.turn();
    let opponent = seat.other();
    let mut other = state.clone();
    let mut changed = false;
    let hidden: Vec<Vec<CardId>> = state
        .seat(opponent)
        .stacks()
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let mut cards: Vec<CardId> = s.cards().collect();
            let seen = history
                .plays()
                .iter()
                .filter(|p| p.seat == opponent && usize::from(p.stack) == i)
                .count();
            // The cards above the ones seen played are nobody's business but the owner's.
            let unseen = cards.len().saturating_sub(seen);
            cards[..unseen].reverse();
            changed |= unseen > 1;
            cards
        })
        .collect();
    assert!(changed, "some hidden order to change");
    other.set_stacks(opponent, &hidden);
    let a = Observation::new(state, seat, history, false);
    let b = Observation::new(&other, seat, history, false);
    assert_eq!(a.state(), b.state(), "the public part is identical");
    let scripts = tokensmith::ai::hooks_for(catalog);
    let engine = scripts.brain(catalog);
    for level in Level::ALL {
        let options = Options {
            budget: Budget::Iterations(200),
            omniscient: false,
            scripts: tokensmith::ai::ScriptLimits::DEFAULT,
        };
        let pick_a = agent(level, 7, options).choose(&engine, &a);
        let pick_b = agent(level, 7, options).choose(&engine, &b);
        assert_eq!(pick_a, pick_b, "{} looked at hidden cards", level.name());
    }
    // The public state shows no opponent hand at all.
    assert!(a.state().seat(opponent).hand().next().is_none());
}

#[test]
fn an_observation_does_not_depend_on_the_opponents_hidden_order() {
    let catalog = base_catalog();
    // A loaded deck, recognised from its plays.
    let (state, history) = midgame(&catalog, 3);
    decides_alike_whatever_the_hidden_order(&catalog, &state, &history);
    // Random-content decks: the positions the plays were made from are rated too.
    let scripts = tokensmith::ai::hooks_for(&catalog);
    let brain = scripts.brain(&catalog);
    for seed in [1, 2] {
        let (state, history) = greedy_game(&brain, seed, 5);
        decides_alike_whatever_the_hidden_order(&catalog, &state, &history);
    }
}

#[test]
fn omniscient_agents_see_the_true_stacks() {
    let catalog = base_catalog();
    let (state, history) = midgame(&catalog, 2);
    let obs = Observation::new(&state, state.turn(), &history, true);
    let mut rng = Pcg32::seed_from_u64(1);
    let scripts = tokensmith::ai::hooks_for(&catalog);
    let brain = scripts.brain(&catalog);
    assert_eq!(Worlds::new(&obs).determinize(&brain, &mut rng), state);
}

#[test]
fn determinized_hands_keep_sizes_seen_cards_and_the_deck_rules() {
    let catalog = base_catalog();
    let (state, history) = midgame(&catalog, 9);
    let seat = state.turn();
    let opponent = seat.other();
    let obs = Observation::new(&state, seat, &history, false);
    let mut rng = Pcg32::seed_from_u64(2);
    let scripts = tokensmith::ai::hooks_for(&catalog);
    let brain = scripts.brain(&catalog);
    let worlds = Worlds::new(&obs);
    for _ in 0..200 {
        let world = worlds.determinize(&brain, &mut rng);
        let truth = state.seat(opponent).stacks();
        let sampled = world.seat(opponent).stacks();
        assert_eq!(truth.len(), sampled.len());
        let mut all = Vec::new();
        for (i, (t, s)) in truth.iter().zip(sampled).enumerate() {
            assert_eq!(t.len(), s.len(), "stack {i} keeps its size");
            let plays: Vec<CardId> = history
                .plays()
                .iter()
                .filter(|p| p.seat == opponent && usize::from(p.stack) == i)
                .map(|p| p.card)
                .collect();
            let known = plays.len().min(s.len());
            let cards: Vec<CardId> = s.cards().collect();
            assert_eq!(
                &cards[cards.len() - known..],
                &plays[plays.len() - known..],
                "seen cards at the bottom, in order"
            );
            all.extend(cards);
        }
        let mut unique = all.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), all.len(), "a card at most once in the deck");
        // Own stacks and the board are never touched.
        assert_eq!(world.seat(seat), state.seat(seat));
        assert_eq!(world.board(), state.board());
    }
}

/// A game a few moves in where each side plays `stacks`, with the public plays.
fn game_with(catalog: &Catalog, stacks: &[Vec<CardId>], moves: usize) -> (GameState, History) {
    let engine = Engine::new(catalog, &NoHooks);
    let mut events = Vec::new();
    let mut state = engine
        .new_game([stacks, stacks], 5, &mut events)
        .expect("a game");
    let mut history = History::new();
    for i in 0..moves {
        events.clear();
        let legal = engine.legal_moves(&state);
        let mv = legal[(i * 5) % legal.len()];
        let from = history.position_of(&state);
        engine.play(&mut state, mv, &mut events).expect("legal");
        history.record(from, &events);
    }
    (state, history)
}

/// How many of `n` determinizations give the opponent exactly its true stacks.
fn true_worlds(catalog: &Catalog, state: &GameState, history: &History, n: usize) -> usize {
    let seat = state.turn();
    let obs = Observation::new(state, seat, history, false);
    let order = |s: &GameState| -> Vec<Vec<CardId>> {
        s.seat(seat.other())
            .stacks()
            .iter()
            .map(|st| st.cards().collect())
            .collect()
    };
    let truth = order(state);
    let mut rng = Pcg32::seed_from_u64(4);
    let scripts = tokensmith::ai::hooks_for(catalog);
    let brain = scripts.brain(catalog);
    let worlds = Worlds::new(&obs);
    (0..n)
        .filter(|_| order(&worlds.determinize(&brain, &mut rng)) == truth)
        .count()
}

#[test]
fn a_loaded_deck_is_recognised_from_the_plays_and_another_is_not_assumed() {
    let catalog = base_catalog();
    let starter = catalog.decks()[0].stacks.clone();
    // Two plays each: a loaded deck consistent with them is by far the likelier story.
    let (state, history) = game_with(&catalog, &starter, 4);
    let found = true_worlds(&catalog, &state, &history, 400);
    assert!(
        found > 300,
        "the starter deck is recognised in {found} of 400 worlds"
    );
    // Before any play only the stack sizes speak: the deck is one guess among others.
    let (fresh, none) = game_with(&catalog, &starter, 0);
    let early = true_worlds(&catalog, &fresh, &none, 400);
    assert!(
        (20..300).contains(&early),
        "{early} of 400 worlds before any play"
    );
    // The same cards in another order are no loaded deck: once plays contradict every
    // loaded deck, the hidden cards are drawn one by one and the truth is a rare guess.
    let mut mine = starter.clone();
    for stack in &mut mine {
        stack.reverse();
    }
    let (state, history) = game_with(&catalog, &mine, 4);
    let found = true_worlds(&catalog, &state, &history, 400);
    assert!(
        found < 10,
        "a deck of no pack is guessed whole in {found} of 400 worlds"
    );
}

/// Both seats play `greedy` for `moves` moves with random-content decks (no loaded deck
/// is theirs), keeping the position of every play.
fn greedy_game(brain: &tokensmith::ai::Brain<'_>, seed: u64, moves: usize) -> (GameState, History) {
    let deck = |s: u64| tokensmith::ai::decks::random_content(brain, s).expect("a deck");
    let (one, two) = (deck(seed * 2), deck(seed * 2 + 1));
    let mut events = Vec::new();
    let mut state = brain
        .engine()
        .new_game([&one[..], &two[..]], seed, &mut events)
        .expect("a game");
    let mut history = History::new();
    let options = Options {
        budget: Budget::Iterations(1),
        omniscient: false,
        scripts: tokensmith::ai::ScriptLimits::DEFAULT,
    };
    for _ in 0..moves {
        let obs = Observation::new(&state, state.turn(), &history, false);
        let mv = agent(Level::Greedy, seed, options)
            .choose(brain, &obs)
            .expect("a move");
        let from = history.position_of(&state);
        events.clear();
        brain
            .engine()
            .play(&mut state, mv, &mut events)
            .expect("legal");
        history.record(from, &events);
    }
    (state, history)
}

#[test]
fn what_an_opponent_passed_over_tells_its_top_cards() {
    let catalog = base_catalog();
    let scripts = tokensmith::ai::hooks_for(&catalog);
    let brain = scripts.brain(&catalog);
    // How often a determinization puts the true card on top of a stack whose top the
    // observer has not seen: with the positions the plays were made from, and without.
    let (mut with, mut without, mut draws) = (0u32, 0u32, 0u32);
    for seed in 0..12 {
        let (state, history) = greedy_game(&brain, seed, 7);
        let seat = state.turn();
        let other = seat.other();
        let unseen: Vec<(usize, CardId)> = state
            .seat(other)
            .stacks()
            .iter()
            .enumerate()
            .filter(|(i, s)| {
                let played = history
                    .plays()
                    .iter()
                    .filter(|p| p.seat == other && usize::from(p.stack) == *i)
                    .count();
                played < s.len()
            })
            .filter_map(|(i, s)| Some((i, s.top()?)))
            .collect();
        let bare = History::from_plays(history.plays().to_vec());
        for (known, hits) in [(&history, &mut with), (&bare, &mut without)] {
            let obs = Observation::new(&state, seat, known, false);
            let mut rng = Pcg32::seed_from_u64(seed);
            let worlds = Worlds::new(&obs);
            for _ in 0..200 {
                let world = worlds.determinize(&brain, &mut rng);
                let stacks = world.seat(other).stacks();
                let right = unseen
                    .iter()
                    .filter(|(i, card)| stacks[*i].top() == Some(*card))
                    .count();
                *hits += u32::try_from(right).expect("a few");
            }
        }
        draws += 200 * u32::try_from(unseen.len()).expect("a few");
    }
    eprintln!("true tops: {with} with the positions, {without} without, of {draws}");
    assert!(draws > 2000, "enough unseen tops to tell: {draws}");
    // Beyond chance: the hits without positions are a count with a spread of about its
    // square root; with them, the true tops must come up clearly more often.
    assert!(
        f64::from(with) > f64::from(without) + 4.0 * f64::from(without).sqrt(),
        "the passed-over cards made the true tops likelier: {with} vs {without} of {draws}"
    );
}

#[test]
fn simulation_results_are_the_same_for_any_thread_count() {
    let catalog = base_catalog();
    let mut one = config(&catalog, Level::Greedy, Level::Easy, 24, 11);
    one.threads = 1;
    let mut two = one.clone();
    two.threads = 2;
    let mut a = simulate::simulate(&catalog, &one, &|| {});
    let mut b = simulate::simulate(&catalog, &two, &|| {});
    a.games_per_second = 0.0;
    b.games_per_second = 0.0;
    a.totals.seconds = 0.0;
    b.totals.seconds = 0.0;
    assert_eq!(a, b);
    assert_eq!(a.games, 24);
    assert_eq!(a.wins_a + a.wins_b + a.draws, 24);
}

#[test]
fn simulate_json_is_deterministic_per_seed_across_thread_counts() {
    let run = |threads: &str| {
        let out = crate::support::tokensmith([
            "simulate",
            "--deck-a",
            "starter",
            "--deck-b",
            "starter",
            "--ai-a",
            "greedy",
            "--ai-b",
            "random",
            "--games",
            "16",
            "--seed",
            "5",
            "--threads",
            threads,
            "--json",
        ])
        .output()
        .expect("runs");
        assert!(out.status.success());
        let mut v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
        for key in [
            "games",
            "wins_a",
            "wins_b",
            "draws",
            "win_rate_a",
            "ci95_a",
            "first_seat_win_rate",
            "games_per_second",
            "cards",
        ] {
            assert!(v.get(key).is_some(), "missing key {key}");
        }
        v["games_per_second"] = serde_json::Value::Null;
        v["totals"]["seconds"] = serde_json::Value::Null;
        v
    };
    assert_eq!(run("1"), run("2"));
}

/// Side A's share of the points over `games` games with mirrored decks.
fn rate(catalog: &Catalog, a: Level, b: Level, games: u32) -> f64 {
    simulate::simulate(catalog, &config(catalog, a, b, games, 2024), &|| {}).win_rate_a
}

#[test]
fn each_level_beats_the_one_below() {
    // A small, fast version of the ladder; the full one is in docs/ai.md.
    let catalog = base_catalog();
    let easy = rate(&catalog, Level::Easy, Level::Random, 40);
    let greedy = rate(&catalog, Level::Greedy, Level::Easy, 40);
    let normal = rate(&catalog, Level::Normal, Level::Greedy, 40);
    eprintln!("easy {easy:.2}, greedy {greedy:.2}, normal {normal:.2}");
    assert!(easy >= 0.6, "easy beat random {easy:.2}");
    assert!(greedy >= 0.6, "greedy beat easy {greedy:.2}");
    assert!(normal >= 0.6, "normal beat greedy {normal:.2}");
}

#[test]
fn hard_beats_greedy() {
    let catalog = base_catalog();
    let mut c = config(&catalog, Level::Hard, Level::Greedy, 12, 7);
    c.options.budget = Budget::Iterations(800);
    let r = simulate::simulate(&catalog, &c, &|| {});
    eprintln!("hard vs greedy {:.2}", r.win_rate_a);
    assert!(r.win_rate_a >= 0.6, "hard beat greedy {:.2}", r.win_rate_a);
}

#[test]
fn greedy_understands_a_scripted_card_without_ai_code() {
    // `bless` sets its own token to 10 (worth far more than anything else in the hand);
    // `curse` destroys its own token. Only the engine knows what they do.
    let packs = TempPacks::new(&[
        (
            "scripted_ai/pack.yaml",
            "id: scripted_ai\nversion: 1.0.0\nrequires: [{ id: base }]\n",
        ),
        (
            "scripted_ai/cards.yaml",
            "abilities:\n  - id: bless\n    script: bless.lua\n  - id: curse\n    script: curse.lua\ncards:\n  - id: bless\n    value: 1\n    ability: bless\n  - id: curse\n    value: 6\n    ability: curse\ndecks:\n  - id: scripted\n    stacks:\n      - [curse, weaken_row]\n      - [bless, push_row]\n      - [booster, spawn_row]\n      - [beacon, gift]\n",
        ),
        (
            "scripted_ai/bless.lua",
            "return { on_place = function(ctx) ctx:set_value(ctx.x, ctx.y, 10) end }\n",
        ),
        (
            "scripted_ai/curse.lua",
            "return { on_place = function(ctx) ctx:remove(ctx.x, ctx.y) end }\n",
        ),
    ]);
    let loaded = tokensmith::script::load(&tokensmith::content::LoadOptions {
        folders: vec![
            tokensmith::content::PackFolder {
                path: root().join("content"),
                required: true,
            },
            tokensmith::content::PackFolder {
                path: packs.path().to_path_buf(),
                required: true,
            },
        ],
        only: Some(vec!["scripted_ai".into()]),
        rules_patch: None,
        order: Vec::new(),
    });
    let catalog = loaded.catalog.expect("the test pack loads");
    let scripts = tokensmith::ai::hooks_for(&catalog);
    let engine = scripts.brain(&catalog);
    let deck = catalog
        .deck(catalog.deck_named("scripted").expect("deck"))
        .stacks
        .clone();
    let bless = catalog.card_named("bless").expect("bless");
    let mut events = Vec::new();
    for seed in 0..5 {
        let state = engine
            .engine()
            .new_game([&deck, &deck], seed, &mut events)
            .expect("game");
        let obs = Observation::new(&state, Seat::One, &History::default(), false);
        let mv = agent(Level::Greedy, seed, Options::default())
            .choose(&engine, &obs)
            .expect("a move");
        let Play::Stack(stack) = mv.play else {
            panic!("a stack move")
        };
        let card = state.seat(Seat::One).stacks()[usize::from(stack)].top();
        assert_eq!(
            card,
            Some(bless),
            "greedy should bless, not {:?}",
            card.map(|c| &catalog.card(c).meta.id)
        );
    }
}

fn normalized(mut r: simulate::Report) -> serde_json::Value {
    r.games_per_second = 0.0;
    r.totals.seconds = 0.0;
    r.totals.shards = Vec::new();
    if let Some(run) = &mut r.totals.run {
        run.shards = 0;
    }
    serde_json::to_value(&r).expect("json")
}

#[test]
fn shards_of_a_run_merge_into_exactly_the_report_of_the_whole_run() {
    let catalog = base_catalog();
    let mut c = config(&catalog, Level::Greedy, Level::Easy, 30, 77);
    c.decks_b = vec![deck(&catalog, 1), deck(&catalog, 2)];
    let whole = simulate::simulate(&catalog, &c, &|| {});
    let mut parts = Vec::new();
    // Out of order on purpose.
    for k in [3, 1, 2] {
        let mut s = c.clone();
        s.shard = Some((k, 3));
        let r = simulate::simulate(&catalog, &s, &|| {});
        assert_eq!(r.games, 10);
        parts.push(r.totals);
    }
    let merged = simulate::merge(&parts).expect("merge");
    assert_eq!(merged.totals.shards, vec![1, 2, 3]);
    assert_eq!(normalized(merged), normalized(whole));
    // A missing shard, a shard twice and another run are refused.
    assert!(matches!(
        simulate::merge(&parts[..2]),
        Err(simulate::MergeError::Missing(m, 3)) if m == vec![2]
    ));
    let twice = [parts[0].clone(), parts[0].clone()];
    assert_eq!(
        simulate::merge(&twice).err(),
        Some(simulate::MergeError::Twice(2, 3))
    );
    let mut other = c.clone();
    other.seed = 78;
    other.shard = Some((2, 3));
    let foreign = simulate::simulate(&catalog, &other, &|| {}).totals;
    assert_eq!(
        simulate::merge(&[parts[0].clone(), parts[1].clone(), foreign]).err(),
        Some(simulate::MergeError::OtherRun {
            report: 3,
            field: "seed".into(),
            first: "77".into(),
            this: "78".into()
        })
    );
}

#[test]
fn games_stopped_by_the_move_cap_are_counted_and_named() {
    let catalog = base_catalog();
    let mut c = config(&catalog, Level::Greedy, Level::Greedy, 6, 5);
    c.max_moves = 4;
    let r = simulate::simulate(&catalog, &c, &|| {});
    assert_eq!(r.capped_games, 6);
    assert_eq!(r.draws, 6);
    assert_eq!(r.max_moves, 4);
    assert_eq!(
        r.capped_pairings,
        vec![("starter vs starter".to_string(), 6)]
    );
    c.max_moves = simulate::MAX_MOVES;
    assert_eq!(simulate::simulate(&catalog, &c, &|| {}).capped_games, 0);
}

#[test]
fn a_card_whose_script_always_fails_is_reported_broken_with_its_error_not_dead() {
    let packs = crate::support::TempPacks::new(&[
        (
            "broken/pack.yaml",
            "id: broken\nname: Broken\nversion: 1.0.0\nrequires:\n  - { id: base, version: \"^1\" }\n",
        ),
        (
            "broken/content.yaml",
            "abilities:\n  - id: boom\n    script: scripts/boom.lua\ncards:\n  - id: boomer\n    value: 9\n    ability: boom\n    area: cross\n",
        ),
        (
            "broken/scripts/boom.lua",
            "return {\n  on_place = function(ctx)\n    error(\"boom\")\n  end,\n}\n",
        ),
    ]);
    let loaded = tokensmith::script::load(&tokensmith::content::LoadOptions {
        folders: vec![
            tokensmith::content::PackFolder {
                path: crate::support::root().join("content"),
                required: true,
            },
            tokensmith::content::PackFolder {
                path: packs.path().to_path_buf(),
                required: true,
            },
        ],
        only: Some(vec!["base".into(), "broken".into()]),
        rules_patch: None,
        order: Vec::new(),
    });
    let catalog = loaded
        .catalog
        .expect("loads: the script fails only when run");
    let boomer = catalog.card_named("broken:boomer").expect("card");
    let mut with = deck(&catalog, 0);
    with.stacks[0].insert(0, boomer);
    with.id = "with_boomer".into();
    let mut c = config(&catalog, Level::Greedy, Level::Greedy, 10, 9);
    c.deck_a = with;
    let r = simulate::simulate(&catalog, &c, &|| {});
    let card = r
        .cards
        .iter()
        .find(|s| s.id == "boomer")
        .expect("boomer was offered");
    assert!(card.broken, "{card:?}");
    assert!(!card.dead);
    assert!(card.refused_by_script > 0 && card.refused == card.refused_by_script);
    assert_eq!(card.played, 0, "its moves never went through");
    let first = card.first_error.as_deref().unwrap_or_default();
    assert!(first.contains("scripts/boom.lua:3"), "{first}");
    assert!(first.contains("boom"), "{first}");
    assert_eq!(r.script_refusals, card.refused_by_script);
    assert!(
        r.cards
            .iter()
            .filter(|s| s.id != "boomer")
            .all(|s| !s.broken)
    );
}

#[test]
fn a_card_whose_script_runs_out_of_budget_is_refused_at_once_by_later_look_ahead() {
    let packs = TempPacks::new(&[
        (
            "spin/pack.yaml",
            "id: spin\nname: Spin\nversion: 1.0.0\nrequires:\n  - { id: base, version: \"^1\" }\n",
        ),
        (
            "spin/content.yaml",
            "abilities:\n  - id: spin\n    script: scripts/spin.lua\ncards:\n  - id: spinner\n    value: 3\n    ability: spin\n    area: cross\n",
        ),
        (
            "spin/scripts/spin.lua",
            "return {\n  on_place = function(ctx)\n    while true do end\n  end,\n}\n",
        ),
    ]);
    let loaded = tokensmith::script::load(&tokensmith::content::LoadOptions {
        folders: vec![
            tokensmith::content::PackFolder {
                path: root().join("content"),
                required: true,
            },
            tokensmith::content::PackFolder {
                path: packs.path().to_path_buf(),
                required: true,
            },
        ],
        only: None,
        rules_patch: None,
        order: Vec::new(),
    });
    let catalog = loaded.catalog.expect("loads");
    let spinner = catalog.card_named("spin:spinner").expect("card");
    let scripts = tokensmith::ai::hooks_for(&catalog);
    let brain = scripts.brain(&catalog);
    let mut stacks = catalog.decks()[0].stacks.clone();
    stacks[0].insert(0, spinner);
    let mut events = Vec::new();
    let state = brain
        .engine()
        .new_game([&stacks, &stacks], 1, &mut events)
        .expect("a game");
    let mv = tokensmith::rules::Move {
        seat: Seat::One,
        play: Play::Stack(0),
        cell: tokensmith::rules::Cell::new(0, 0),
    };
    let first = brain
        .play_lookahead(&mut state.clone(), mv)
        .expect_err("runs out");
    assert!(
        first.to_string().contains("spin/scripts/spin.lua:3"),
        "{first}"
    );
    assert!(brain.spent()[spinner.index()].is_some(), "remembered");
    // The same brain refuses it at once, with the same error, without running it; the
    // real engine still runs it (and refuses it the same way).
    assert_eq!(
        brain
            .play_lookahead(&mut state.clone(), mv)
            .expect_err("refused"),
        first
    );
    // A brain is per game: another one has learned nothing, whatever ran on this thread.
    let again = scripts.brain(&catalog);
    assert!(again.spent()[spinner.index()].is_none(), "a fresh brain");
    assert_eq!(
        brain
            .engine()
            .play_quiet(&mut state.clone(), mv)
            .expect_err("runs out"),
        first
    );
    // Other cards are not touched.
    let other = tokensmith::rules::Move {
        play: Play::Stack(1),
        ..mv
    };
    assert!(brain.play_lookahead(&mut state.clone(), other).is_ok());
}

#[test]
fn balance_gives_strong_weak_and_within_noise_verdicts_from_paired_games() {
    use tokensmith::ai::balance::{self, Test, Verdict};
    let packs = TempPacks::new(&[
        (
            "probe/pack.yaml",
            "id: probe\nname: Probe\nversion: 1.0.0\nrequires:\n  - { id: base, version: \"^1\" }\n",
        ),
        (
            "probe/content.yaml",
            "cards:\n  - id: big\n    value: 40\n  - id: tiny\n    value: 1\n  - id: plain_two\n    value: 2\n",
        ),
    ]);
    let loaded = tokensmith::script::load(&tokensmith::content::LoadOptions {
        folders: vec![
            tokensmith::content::PackFolder {
                path: root().join("content"),
                required: true,
            },
            tokensmith::content::PackFolder {
                path: packs.path().to_path_buf(),
                required: true,
            },
        ],
        only: None,
        rules_patch: None,
        order: Vec::new(),
    });
    let catalog = loaded.catalog.expect("loads");
    let card = |n: &str| catalog.card_named(n).expect("card");
    let decks = vec![deck(&catalog, 0), deck(&catalog, 1)];
    let test = |c: &str, control: Option<&str>| Test {
        card: card(c),
        control: control.map(card),
        decks: decks.clone(),
        opponents: decks.clone(),
        games: 40,
        level: Level::Greedy,
        seed: 4,
        threads: 2,
        options: Options::default(),
    };
    let strong = balance::run(&catalog, &test("big", Some("tiny")), &|| {}).expect("runs");
    assert_eq!(strong.verdict, Verdict::Strong, "{strong:?}");
    assert!(strong.ci95[0] > 0.0 && strong.effect > 0.0);
    assert_eq!(strong.pairs, 80);
    let weak = balance::run(&catalog, &test("tiny", Some("big")), &|| {}).expect("runs");
    assert_eq!(weak.verdict, Verdict::Weak, "{weak:?}");
    // A plain card of value 2 against the plain control of value 2 made for the test:
    // the same games exactly, so no difference at all.
    let same = balance::run(&catalog, &test("plain_two", None), &|| {}).expect("runs");
    assert_eq!(same.verdict, Verdict::WithinNoise);
    assert_eq!((same.effect, same.ci95), (0.0, [0.0, 0.0]), "{same:?}");
    assert!(same.decks.iter().all(|d| d.control == "Control (2, plain)"));
}

/// `random-each`: new random-content decks for every pair of games, swapped between the
/// sides: many more cards than one deck holds are offered, the run is reproducible, and
/// identical agents split a pair of games' decks fairly (over many pairs neither side is
/// far ahead).
#[test]
fn random_each_draws_new_decks_per_pair_of_games() {
    let catalog = base_catalog();
    let random_each = DeckChoice {
        id: "random-each".into(),
        stacks: Vec::new(),
        per_game: true,
    };
    let mut cfg = config(&catalog, Level::Greedy, Level::Greedy, 40, 5);
    cfg.deck_a = random_each.clone();
    cfg.decks_b = vec![random_each];
    let a = simulate::simulate(&catalog, &cfg, &|| {});
    assert_eq!(a.games, 40);
    let offered = a.cards.iter().filter(|c| c.offered > 0).count();
    let one_deck = catalog.decks()[0].stacks.iter().flatten().count();
    assert!(offered > one_deck * 2, "only {offered} cards were offered");
    let mut b = simulate::simulate(&catalog, &cfg, &|| {});
    let mut a = a;
    a.games_per_second = 0.0;
    b.games_per_second = 0.0;
    a.totals.seconds = 0.0;
    b.totals.seconds = 0.0;
    assert_eq!(a, b, "the same seed gives the same run");
    assert!(
        a.win_rate_a > 0.2 && a.win_rate_a < 0.8,
        "greedy against itself: {}",
        a.win_rate_a
    );
}
