//! The frame thread never waits: the hover preview is worked out on a worker thread (it
//! shows once the worker has answered, and a hovered move whose script runs to its limit
//! leaves the window drawing and answering meanwhile), so is the sandbox's AI hint, and
//! the Mods screen reads the packs again on a worker after a change, saying so while it
//! does.

use std::time::{Duration, Instant};

use egui::Key;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use tokensmith::app::App;
use tokensmith::rules::Cell;

use super::client::{
    base_library, cell_label, harness_for, mods_read, pick_card, run_until, sandbox_over,
};
use super::support::{TempPacks, root};

#[test]
fn a_game_s_hover_preview_shows_once_the_worker_has_answered() {
    let mut h = harness_for(App::new(base_library()));
    h.run();
    h.get_by_label("Hotseat").click();
    h.run();
    h.get_by_label("Start").click();
    h.run();
    h.key_press(Key::Num1);
    h.run();
    let empty = h.get_all_by_label_contains(": empty").next().map(|n| {
        n.hover();
    });
    assert!(empty.is_some(), "an empty cell to hover");
    h.step();
    run_until(&mut h, "the preview", |h| {
        h.query_by_label_contains("— preview: places").is_some()
    });
    assert!(
        h.query_by_label("Working out this move…").is_none(),
        "a quick preview shows without a word"
    );
}

/// A pack whose one card's ability runs until the move's time limit stops it.
fn slow_pack() -> TempPacks {
    TempPacks::new(&[
        (
            "slow/pack.yaml",
            "id: slow\nname: Slow\nversion: 1.0.0\nrequires:\n  - { id: base, version: \"^1\" }\nscripts: { instructions: 50000000 }\n",
        ),
        (
            "slow/abilities.yaml",
            "abilities:\n  - id: spin\n    name: Spin\n    description: Thinks for as long as it may.\n    script: scripts/spin.lua\n",
        ),
        (
            "slow/cards.yaml",
            "cards:\n  - id: spinner\n    name: Spinner\n    value: 2\n    ability: spin\n    area: row\n",
        ),
        (
            "slow/scripts/spin.lua",
            "return {\n  on_place = function(ctx)\n    local s = string.rep('x', 1000000)\n    while true do local t = s .. 'y' end\n  end,\n}\n",
        ),
    ])
}

/// The frames' times while a worker answered `what` in `took`, printed; the slowest,
/// which must be a small part of `took` (no frame waited for the worker).
fn no_frame_waited(what: &str, frames: &mut [Duration], took: Duration) -> Duration {
    frames.sort();
    let slowest = frames.last().copied().unwrap_or_default();
    let median = frames[frames.len() / 2];
    eprintln!(
        "{what}: answered after {took:?}, {} frames meanwhile, median {median:?}, slowest {slowest:?}",
        frames.len()
    );
    assert!(
        slowest * 4 < took,
        "no frame waits for the worker: the slowest took {slowest:?} of {took:?}"
    );
    slowest
}

/// The sandbox's content, the state a move of the seat to move is played on, that seat,
/// and the slow pack's card.
fn spinner_position(
    h: &Harness<'_, App>,
) -> (
    std::sync::Arc<tokensmith::rules::Catalog>,
    tokensmith::rules::GameState,
    tokensmith::rules::Seat,
    tokensmith::rules::CardId,
) {
    let screen = h
        .state()
        .sandbox()
        .unwrap_or_else(|| panic!("the sandbox is open"));
    let catalog = std::sync::Arc::clone(screen.sandbox.catalog());
    let seat = screen.sandbox.state().turn();
    let card = catalog
        .card_named("slow:spinner")
        .unwrap_or_else(|e| panic!("{e}"));
    let base = screen.sandbox.base_for(seat);
    (catalog, base, seat, card)
}

#[test]
fn a_hovered_move_whose_script_runs_to_its_limit_does_not_stall_the_frames() {
    let mods = slow_pack();
    let mut h = sandbox_over(mods.path());
    // A move to take back later, while the slow preview is worked out.
    pick_card(&mut h, "weaken_row", "Row Weakener");
    h.get_by_label_contains("cell (0, 5): empty").click();
    h.run();
    assert!(!cell_label(&h, Cell::new(0, 5)).contains("empty"));
    pick_card(&mut h, "spinner", "Spinner");
    h.get_by_label_contains("cell (5, 0): empty").hover();

    let asked = Instant::now();
    let mut frames = Vec::new();
    let mut undone_at = None;
    let mut working_seen = false;
    let refused = |h: &Harness<'_, App>| {
        h.query_by_label_contains("This move will be refused")
            .is_some()
    };
    while !refused(&h) {
        assert!(
            asked.elapsed() < Duration::from_secs(60),
            "the preview never came"
        );
        let started = Instant::now();
        h.step();
        frames.push(started.elapsed());
        working_seen |= h.query_by_label("Working out this move…").is_some();
        if undone_at.is_none() && asked.elapsed() > Duration::from_millis(300) {
            // The window still answers: the arrow key takes the first move back now.
            assert!(
                !refused(&h),
                "the preview came before the key was pressed: the script was not slow"
            );
            h.key_press(Key::ArrowLeft);
            h.step();
            assert!(
                cell_label(&h, Cell::new(0, 5)).contains("empty"),
                "the key took the move back while the preview was worked out: {}",
                cell_label(&h, Cell::new(0, 5))
            );
            undone_at = Some(asked.elapsed());
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let took = asked.elapsed();
    assert!(undone_at.is_some(), "the key was pressed while waiting");
    assert!(working_seen, "the line under the board said it was working");
    let slowest = no_frame_waited("slow preview", &mut frames, took);
    // What the frame did before it had a worker: work the same preview out itself.
    let (catalog, base, seat, card) = spinner_position(&h);
    let mv = tokensmith::app::Sandbox::move_for(seat, card, Cell::new(5, 0));
    let scripts = tokensmith::ai::hooks_for(&catalog);
    let engine = tokensmith::rules::Engine::new(&catalog, scripts.hooks());
    let inline = Instant::now();
    let here = tokensmith::app::preview::preview(&engine, &base, mv);
    let inline = inline.elapsed();
    eprintln!("the same preview worked out on the frame's thread: {inline:?}");
    assert!(here.is_err(), "refused there too");
    assert!(
        slowest * 4 < inline,
        "a frame now takes at most {slowest:?}, against {inline:?} before"
    );
    let line = cell_label(&h, Cell::new(5, 0));
    assert!(
        line.contains("refused") && line.contains("slow/scripts/spin.lua"),
        "the hovered cell says why, naming the script: {line}"
    );
}

#[test]
fn the_sandbox_s_ai_hint_over_a_script_that_runs_to_its_limit_does_not_stall_the_frames() {
    let mods = slow_pack();
    let mut h = sandbox_over(mods.path());
    pick_card(&mut h, "spinner", "Spinner");
    h.get_by_label("AI hint").click();
    let asked = Instant::now();
    let mut frames = Vec::new();
    let mut working_seen = false;
    let working = |h: &Harness<'_, App>| h.query_by_label("Working out the hint…").is_some();
    loop {
        assert!(
            asked.elapsed() < Duration::from_secs(60),
            "the hint never came"
        );
        let started = Instant::now();
        h.step();
        frames.push(started.elapsed());
        let now = working(&h);
        working_seen |= now;
        if working_seen && !now {
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let took = asked.elapsed();
    assert!(
        took >= Duration::from_millis(500),
        "the hint came in {took:?}: the script was not slow"
    );
    let slowest = no_frame_waited("slow hint", &mut frames, took);
    // Every spinner move runs out of its time: the hint ranks none, and says nothing wrong.
    assert!(h.query_by_label_contains("#1 Spinner at").is_none());
    // What the frame did before it had a worker: work the same hint out itself.
    let (catalog, base, seat, card) = spinner_position(&h);
    let scripts = tokensmith::ai::hooks_for(&catalog);
    let brain = scripts.brain(&catalog);
    let inline = Instant::now();
    let here = tokensmith::app::preview::hint(&brain, &base, seat, &[card], 5);
    let inline = inline.elapsed();
    eprintln!("the same hint worked out on the frame's thread: {inline:?}");
    assert!(here.is_empty(), "no spinner move ranked there either");
    assert!(
        slowest * 4 < inline,
        "a frame now takes at most {slowest:?}, against {inline:?} before"
    );
    // Another card: its hint comes.
    pick_card(&mut h, "weaken_row", "Row Weakener");
    run_until(&mut h, "the new card's hint", |h| {
        h.query_by_label_contains("#1 Row Weakener at").is_some()
    });
}

#[test]
fn the_mods_screen_reads_the_packs_again_on_a_worker_after_a_toggle() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let profile_dir = dir.path().join("profile");
    let app = super::client::app_in_profile(&profile_dir, root().join("mods"));
    let mut h = harness_for(app);
    h.run();
    h.get_by_label("Mods").click();
    h.run();
    let frost_on = |h: &Harness<'_, App>| {
        h.state()
            .mods()
            .is_some_and(|m| m.listed().iter().any(|l| l.id == "frost" && l.enabled))
    };
    assert!(!frost_on(&h));
    h.get_by_label("frost on").click();
    let started = Instant::now();
    h.step();
    let toggle_frame = started.elapsed();
    assert!(frost_on(&h), "the toggle says at once that the pack is on");
    assert!(
        h.state().mods().is_some_and(|m| m.reading().is_some()),
        "the packs are read again on a worker, not in the frame"
    );
    let mut frames = Vec::new();
    let mut said = false;
    // A frame drawn while the read has run well past the 150 ms after which the screen
    // says so (read just after the frame, so the margin covers the frame's own time).
    let mut late = false;
    while h.state().mods().is_some_and(|m| m.reading().is_some()) {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the read never came"
        );
        let t = Instant::now();
        h.step();
        frames.push(t.elapsed());
        let shown = h.query_by_label("Reading the packs again…").is_some();
        said |= shown;
        if h.state()
            .mods()
            .and_then(|m| m.reading())
            .is_some_and(|t| t >= Duration::from_millis(200))
        {
            late = true;
            assert!(shown, "a read under way for 200 ms is shown as under way");
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    let read = started.elapsed();
    mods_read(&mut h);
    frames.sort();
    let median = frames.get(frames.len() / 2).copied().unwrap_or_default();
    let slowest = frames.last().copied().unwrap_or_default();
    eprintln!(
        "mods read: the toggle's frame took {toggle_frame:?}, the read {read:?}, {} frames meanwhile, median {median:?}, slowest {slowest:?}, said so: {said}",
        frames.len()
    );
    assert!(!late || said, "a read of {read:?} is shown as under way");
    assert!(frost_on(&h), "the new reading has frost on");
    assert!(
        h.state().pack_set().is_some_and(|s| s.is_enabled("frost")),
        "the set has it"
    );
}
