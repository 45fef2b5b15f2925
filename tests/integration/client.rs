//! The desktop client, driven headless through its accessibility labels (egui_kittest):
//! a whole game against the AI with clicks and keys, stack selection with keys 1–4, the
//! hover preview of a push, the sandbox's place, undo and redo, tooltips, the content
//! browser, and broken packs shown on the main menu.

use std::time::{Duration, Instant};

use egui::Key;
use egui_kittest::Harness;
use egui_kittest::kittest::{NodeT as _, Queryable};
use tokensmith::app::{App, ClientSettings, Library};
use tokensmith::content::LoadOptions;
use tokensmith::rules::Cell;

use super::support::{TempPacks, root};

pub fn base_library() -> Library {
    Library::load(LoadOptions {
        only: Some(vec!["base".into()]),
        ..LoadOptions::standard(&root().join("content"), &root().join("mods"))
    })
}

/// The app over the base pack with instant AI moves and no animations.
fn harness(library: Library) -> Harness<'static, App> {
    harness_for(App::new(library))
}

/// `app` in a test window, with instant AI moves and no animations.
pub fn harness_for(mut app: App) -> Harness<'static, App> {
    app.settings = ClientSettings {
        animations: false,
        ..ClientSettings::default()
    };
    app.settings.ai.delay = Duration::ZERO;
    Harness::builder()
        .with_size(egui::vec2(1280.0, 860.0))
        .with_max_steps(20)
        .build_ui_state(|ui, app: &mut App| app.show(ui), app)
}

/// The client over the base content, `mods` and the packs of the profile at `profile`,
/// with that profile (decks, settings and the enabled set).
pub fn app_in_profile(profile: &std::path::Path, mods: std::path::PathBuf) -> App {
    use tokensmith::app::mods::Packs;
    use tokensmith::packs::{PackSet, set::Folders};
    let opened = tokensmith::profile::Profile::open(profile).map_err(|e| e.to_string());
    let packs = Packs {
        folders: Folders {
            content: root().join("content"),
            mods,
            installed: Some(profile.join("packs")),
        },
        set: PackSet::open(profile),
        profile: Some(profile.to_path_buf()),
    };
    App::with_profile(Library::load(packs.options()), opened).with_packs(packs)
}

/// Run frames until `done` holds, waiting for the AI's thread in real time.
pub fn run_until(h: &mut Harness<'_, App>, what: &str, done: impl Fn(&Harness<'_, App>) -> bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !done(h) {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        h.step();
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// Run frames until the Mods screen has read the packs again after a change and the
/// client has loaded the changed set's content (each on a worker thread), then until
/// the window settles.
pub fn mods_read(h: &mut Harness<'_, App>) {
    run_until(h, "the packs read again and the changed set applied", |h| {
        h.state().mods().is_none_or(|m| m.reading().is_none()) && h.state().applying_for().is_none()
    });
    h.run();
}

pub fn cell_label(h: &Harness<'_, App>, cell: Cell) -> String {
    let prefix = format!("cell {cell}:");
    h.get_by_label_contains(&prefix)
        .accesskit_node()
        .label()
        .unwrap_or_default()
}

fn start_hotseat(h: &mut Harness<'_, App>) {
    h.get_by_label("Hotseat").click();
    h.run();
    h.get_by_label("Start").click();
    h.run();
}

pub fn open_sandbox(h: &mut Harness<'_, App>) {
    h.get_by_label("Sandbox").click();
    h.run();
    assert!(h.state().sandbox().is_some(), "the sandbox opens");
}

/// The client over the base content and `mods` (which must load without an error), with
/// the sandbox open.
pub fn sandbox_over(mods: &std::path::Path) -> Harness<'static, App> {
    let library = Library::load(LoadOptions::standard(&root().join("content"), mods));
    assert_eq!(library.errors(), 0, "{:?}", library.diagnostics);
    let mut h = harness_for(App::new(library));
    h.run();
    open_sandbox(&mut h);
    h
}

pub fn pick_card(h: &mut Harness<'_, App>, search: &str, name: &str) {
    h.get_by_label("Search cards").click();
    h.run();
    h.key_press_modifiers(egui::Modifiers::COMMAND, Key::A);
    h.run();
    h.get_by_label("Search cards").type_text(search);
    h.run();
    h.get_by_label_contains(&format!("{name} ·")).click();
    h.run();
}

#[test]
fn a_whole_game_against_the_ai_is_played_with_clicks_and_keys() {
    let mut h = harness(base_library());
    h.run();
    h.get_by_label("Play vs AI").click();
    h.run();
    h.get_by_label("Seed (optional)").click();
    h.run();
    h.get_by_label("Seed (optional)").type_text("7");
    h.run();
    h.get_by_label("Start").click();
    h.run();
    assert!(h.state().game().is_some(), "the game screen opens");
    let keys = [Key::Num1, Key::Num2, Key::Num3, Key::Num4];
    let mut human_moves = 0;
    for turn in 0..200 {
        let over = h.query_by_label("Play again").is_some();
        if over {
            break;
        }
        let game = h
            .state()
            .game()
            .map(|g| (g.session.human_to_move(), g.session.played().len()));
        let Some((human, before)) = game else {
            panic!("the game screen closed");
        };
        if human {
            h.key_press(keys[turn % 4]);
            h.step();
            assert!(
                h.state().game().and_then(|g| g.selected()).is_some(),
                "a key selects a stack"
            );
            h.get_all_by_label_contains(": empty")
                .next()
                .map(|n| n.click())
                .unwrap_or_else(|| panic!("an empty cell to play on"));
            h.step();
            h.step();
            // The click plays the move (and the AI, with no delay, may answer at once).
            let after = h.state().game().map_or(0, |g| g.session.played().len());
            assert!(after > before, "the click plays the move");
            human_moves += 1;
        } else {
            run_until(&mut h, "the AI's move", |h| {
                h.state()
                    .game()
                    .is_none_or(|g| g.session.played().len() > before || g.session.is_over())
            });
        }
    }
    h.step();
    h.step();
    assert!(
        human_moves >= 10,
        "the game took {human_moves} moves of ours"
    );
    let game = h
        .state()
        .game()
        .unwrap_or_else(|| panic!("still on the game screen"));
    assert!(game.session.is_over(), "the game ended");
    assert!(h.query_by_label_contains(" wins").is_some() || h.query_by_label("A draw").is_some());
    h.get_by_label("Play again").click();
    h.run();
    let game = h.state().game().unwrap_or_else(|| panic!("a new game"));
    assert!(game.session.played().is_empty() && !game.session.is_over());
}

#[test]
fn keys_one_to_four_select_stacks_and_clicking_a_card_selects_it() {
    let mut h = harness(base_library());
    h.run();
    start_hotseat(&mut h);
    let selected = |h: &Harness<'_, App>| h.state().game().and_then(|g| g.selected());
    assert_eq!(selected(&h), None);
    h.key_press(Key::Num3);
    h.run();
    assert_eq!(selected(&h), Some(2));
    h.key_press(Key::Num1);
    h.run();
    assert_eq!(selected(&h), Some(0));
    h.get_by_label_contains("stack 4:").click();
    h.run();
    assert_eq!(selected(&h), Some(3));
}

#[test]
fn hovering_a_cell_previews_a_push_before_the_click() {
    let mut h = harness(base_library());
    h.run();
    open_sandbox(&mut h);
    // A token to push: a plain weakener at (1, 0), far from the opening cells.
    pick_card(&mut h, "weaken_row", "Row Weakener");
    h.get_by_label_contains("cell (1, 0): empty").click();
    h.run();
    assert!(
        cell_label(&h, Cell::new(1, 0)).contains("Basic 3"),
        "{}",
        cell_label(&h, Cell::new(1, 0))
    );
    // The pusher on (0, 0) pushes it to (2, 0).
    pick_card(&mut h, "push_row", "Row Pusher");
    h.get_by_label_contains("cell (0, 0): empty").hover();
    h.run();
    let dest = cell_label(&h, Cell::new(2, 0));
    assert!(
        dest.contains("empty"),
        "the board itself is unchanged: {dest}"
    );
    assert!(dest.contains("preview: moves here from (1, 0)"), "{dest}");
    let placed = cell_label(&h, Cell::new(0, 0));
    assert!(placed.contains("preview: places Resilient 2"), "{placed}");
    // The prediction is what the click does.
    h.get_by_label_contains("cell (0, 0): empty").click();
    h.run();
    assert!(cell_label(&h, Cell::new(2, 0)).contains("Basic 3"));
    assert!(cell_label(&h, Cell::new(1, 0)).contains("empty"));
}

/// A sandbox game becomes a scenario file in one click: the file is written where the
/// form says, runs, passes, and holds the moves and the present outcome.
#[test]
fn the_sandbox_saves_its_game_as_a_passing_scenario() {
    let mut h = harness(base_library());
    h.run();
    open_sandbox(&mut h);
    pick_card(&mut h, "push_column", "Column Pusher");
    h.get_by_label_contains("cell (5, 5): empty").click();
    h.run();
    pick_card(&mut h, "weaken_row", "Row Weakener");
    h.get_by_label_contains("cell (4, 5): empty").click();
    h.run();
    h.get_by_label("Save as scenario…").click();
    h.run();
    let dir = tempfile::tempdir().expect("temp dir");
    h.get_by_label("Scenario folder").click();
    h.run();
    h.key_press_modifiers(egui::Modifiers::COMMAND, Key::A);
    h.run();
    h.get_by_label("Scenario folder")
        .type_text(&dir.path().display().to_string());
    h.run();
    h.get_by_label("Save").click();
    h.run();
    assert!(
        h.query_by_label("It runs and passes.").is_some(),
        "the saved scenario is checked and passes"
    );
    let path = dir.path().join("sandbox_game_of_2_moves.yaml");
    let text = std::fs::read_to_string(&path).expect("the scenario is written");
    assert!(
        text.contains("card: push_column, at: [5, 5], sandbox: true"),
        "{text}"
    );
    assert!(
        text.contains("card: weaken_row, at: [4, 5], sandbox: true"),
        "{text}"
    );
    assert!(text.contains("expect:"), "{text}");
    // A second save never overwrites the first.
    h.get_by_label("Save").click();
    h.run();
    assert!(dir.path().join("sandbox_game_of_2_moves-2.yaml").is_file());
    assert_eq!(
        std::fs::read_to_string(&path).ok().as_deref(),
        Some(text.as_str())
    );
}

/// A finished game is saved as a replay, listed on the Replays screen, watched step by
/// step in the sandbox (the same board as the game's after each move), and checked
/// against the content loaded now.
#[test]
fn a_finished_game_is_saved_watched_step_by_step_and_checked() {
    let dir = tempfile::tempdir().expect("temp dir");
    let profile = tokensmith::profile::Profile::open(dir.path()).map_err(|e| e.to_string());
    let mut h = harness_for(App::with_profile(base_library(), profile));
    h.run();
    start_hotseat(&mut h);
    let mut boards = Vec::new();
    for cell in [Cell::new(0, 0), Cell::new(5, 5), Cell::new(0, 5)] {
        h.key_press(Key::Num1);
        h.run();
        h.get_by_label_contains(&format!("cell {cell}: empty"))
            .click();
        h.run();
        let game = h.state().game().expect("the game screen");
        boards.push(game.session.state().board().clone());
    }
    h.get_by_label("Menu (Esc)").click();
    h.run();
    h.get_by_label("Concede").click();
    h.run();
    h.get_by_label("Save replay").click();
    h.run();
    assert!(
        h.query_by_label_contains("Replay saved:").is_some(),
        "the save is confirmed"
    );
    assert!(
        h.query_by_label("Saved").is_some() && h.query_by_label("Save replay").is_none(),
        "the button stays in its place, done"
    );
    let saved: Vec<_> = std::fs::read_dir(dir.path().join("replays"))
        .expect("the folder")
        .flatten()
        .collect();
    assert_eq!(saved.len(), 1, "one replay file");
    let name = saved[0]
        .path()
        .file_stem()
        .expect("a name")
        .to_string_lossy()
        .into_owned();
    assert!(name.starts_with("game-20"), "{name}");
    h.get_by_label("Main menu").click();
    h.run();
    h.get_by_label("Replays").click();
    h.run();
    assert!(
        h.query_by_label_contains("3 moves").is_some(),
        "the replay is listed with its moves"
    );
    h.get_by_label(&format!("Check {name}")).click();
    h.run();
    assert!(
        h.query_by_label("every move does exactly what it did")
            .is_some(),
        "the same content plays it the same"
    );
    h.get_by_label(&format!("Watch {name}")).click();
    h.run();
    assert!(
        h.query_by_label("move 0 of 3").is_some(),
        "the replay starts at the start"
    );
    for (n, board) in boards.iter().enumerate() {
        h.key_press(Key::ArrowRight);
        h.run();
        let sandbox = h.state().sandbox().expect("the sandbox shows the replay");
        assert_eq!(
            sandbox.sandbox.state().board(),
            board,
            "after move {}",
            n + 1
        );
    }
    assert!(h.query_by_label("move 3 of 3").is_some());
    h.key_press(Key::ArrowLeft);
    h.run();
    assert!(h.query_by_label("move 2 of 3").is_some(), "and back");
}

/// The position editor: tokens put and removed by clicks, each an undoable step shown
/// in the event log; a card played after them; and the edited game saved as a scenario
/// that passes.
#[test]
fn the_position_editor_puts_and_removes_tokens_as_undoable_steps() {
    let mut h = harness(base_library());
    h.run();
    open_sandbox(&mut h);
    h.get_by_label("Position editor").click();
    h.run();
    h.get_by_label("Put token").click();
    h.run();
    h.get_by_label_contains("cell (0, 0): empty").click();
    h.run();
    assert!(
        cell_label(&h, Cell::new(0, 0)).contains("Basic 1"),
        "{}",
        cell_label(&h, Cell::new(0, 0))
    );
    assert!(
        h.query_by_label_contains("edit: put seat 1 Basic 1 at (0, 0)")
            .is_some(),
        "the edit is in the event log"
    );
    h.get_by_label("Undo").click();
    h.run();
    assert!(cell_label(&h, Cell::new(0, 0)).contains("empty"), "undone");
    h.get_by_label("Redo").click();
    h.run();
    assert!(
        cell_label(&h, Cell::new(0, 0)).contains("Basic 1"),
        "redone"
    );
    h.get_by_label_contains("cell (5, 0): empty").click();
    h.run();
    h.get_by_label("Remove token").click();
    h.run();
    h.get_by_label_contains("cell (5, 0):").click();
    h.run();
    assert!(cell_label(&h, Cell::new(5, 0)).contains("empty"), "removed");
    assert!(
        h.query_by_label_contains("edit: removed the token at (5, 0)")
            .is_some()
    );
    h.get_by_label("Play cards").click();
    h.run();
    pick_card(&mut h, "push_row", "Row Pusher");
    h.get_by_label_contains("cell (1, 0): empty").click();
    h.run();
    assert!(
        cell_label(&h, Cell::new(0, 0)).contains("empty"),
        "the put token was pushed off"
    );
    let steps = h.state().sandbox().map(|s| s.sandbox.steps().len());
    assert_eq!(steps, Some(4), "three edits and a move");
    // Saved: the position after the last edit is the scenario's start.
    h.get_by_label("Save as scenario…").click();
    h.run();
    let dir = tempfile::tempdir().expect("temp dir");
    h.get_by_label("Scenario folder").click();
    h.run();
    h.key_press_modifiers(egui::Modifiers::COMMAND, Key::A);
    h.run();
    h.get_by_label("Scenario folder")
        .type_text(&dir.path().display().to_string());
    h.run();
    h.get_by_label("Save").click();
    h.run();
    assert!(
        h.query_by_label("It runs and passes.").is_some(),
        "the edited game replays as a scenario"
    );
}

#[test]
fn the_preview_reads_predicted_values_of_damage() {
    let mut h = harness(base_library());
    h.run();
    open_sandbox(&mut h);
    pick_card(&mut h, "push_column", "Column Pusher");
    h.get_by_label_contains("cell (5, 5): empty").click();
    h.run();
    pick_card(&mut h, "weaken_row", "Row Weakener");
    h.get_by_label_contains("cell (4, 5): empty").hover();
    h.run();
    let target = cell_label(&h, Cell::new(5, 5));
    assert!(target.contains("preview: 2 → 1"), "{target}");
}

#[test]
fn the_sandbox_places_undoes_and_redoes() {
    let mut h = harness(base_library());
    h.run();
    open_sandbox(&mut h);
    pick_card(&mut h, "weaken_row", "Row Weakener");
    h.get_by_label_contains("cell (0, 5): empty").click();
    h.run();
    assert!(!cell_label(&h, Cell::new(0, 5)).contains("empty"));
    h.get_by_label("Undo").click();
    h.run();
    assert!(
        cell_label(&h, Cell::new(0, 5)).contains("empty"),
        "undo takes it back"
    );
    h.get_by_label("Redo").click();
    h.run();
    assert!(
        !cell_label(&h, Cell::new(0, 5)).contains("empty"),
        "redo plays it again"
    );
    h.key_press_modifiers(egui::Modifiers::COMMAND, Key::Z);
    h.run();
    assert!(
        cell_label(&h, Cell::new(0, 5)).contains("empty"),
        "Ctrl+Z undoes"
    );
    // A new move drops the redo.
    h.get_by_label_contains("cell (5, 0): empty").click();
    h.run();
    assert!(h.query_by_label("Redo").is_some());
    assert!(!h.state().sandbox().is_some_and(|s| s.sandbox.can_redo()));
    h.get_by_label("Reset").click();
    h.run();
    assert!(
        cell_label(&h, Cell::new(5, 0)).contains("empty"),
        "reset clears the board"
    );
}

#[test]
fn hovering_a_card_opens_its_tooltip_with_descriptions_and_packs() {
    let mut h = harness(base_library());
    h.run();
    start_hotseat(&mut h);
    h.get_by_label_contains("stack 1:").hover();
    for _ in 0..30 {
        h.step();
        std::thread::sleep(Duration::from_millis(20));
    }
    h.run();
    assert!(
        h.query_by_label_contains("Lowers the tokens left and right of it by 1.")
            .is_some(),
        "the card's description shows"
    );
    assert!(
        h.query_by_label_contains("card base:weaken_row").is_some(),
        "and where it comes from"
    );
}

#[test]
fn the_browser_lists_entries_with_where_they_are_defined() {
    let mut h = harness(base_library());
    h.run();
    h.get_by_label("Cards").click();
    h.run();
    h.get_by_label_contains("Token types (").click();
    h.run();
    h.get_by_label_contains("Golden  ·  base:golden").click();
    h.run();
    assert!(
        h.query_by_label_contains("defined in pack 'base', content/base/token_types.yaml:")
            .is_some()
    );
    assert!(h.query_by_label_contains("Income × 2").is_some());
}

#[test]
fn a_broken_pack_shows_on_the_main_menu_and_play_is_disabled() {
    let packs = TempPacks::new(&[
        (
            "broken/pack.yaml",
            "id: broken\nname: Broken\nversion: 1.0.0\n",
        ),
        ("broken/cards.yaml", "cards:\n  - id: x\n    value: [\n"),
    ]);
    let library = Library::load(LoadOptions::standard(
        packs.path(),
        &packs.path().join("none"),
    ));
    let mut h = harness(library);
    h.run();
    assert!(h.query_by_label_contains("error(s)").is_some());
    assert!(
        h.query_by_label_contains("cards.yaml:").is_some(),
        "the diagnostic is listed"
    );
    h.get_by_label("Play vs AI").click();
    h.run();
    assert!(
        h.state().game().is_none(),
        "nothing to play with broken packs"
    );
    assert!(h.query_by_label("Start").is_none());
}

#[test]
fn the_event_log_says_which_script_line_caused_a_change() {
    let library = Library::load(LoadOptions {
        only: Some(vec!["base".into(), "example_scripted".into()]),
        ..LoadOptions::standard(&root().join("content"), &root().join("mods"))
    });
    let mut h = harness(library);
    h.run();
    open_sandbox(&mut h);
    pick_card(&mut h, "base:weaken_row", "Row Weakener");
    h.get_by_label_contains("cell (0, 0): empty").click();
    h.run();
    pick_card(&mut h, "scripted", "Scripted Row Weakener");
    h.get_by_label_contains("cell (1, 0): empty").click();
    h.run();
    assert!(
        cell_label(&h, Cell::new(0, 0)).contains("Basic 2"),
        "the script damaged it"
    );
    h.get_by_label_contains("damaged (0, 0) by 1 to 2").click();
    h.run();
    assert!(
        h.query_by_label_contains("Script example_scripted/scripts/scripted_weaken.lua, line 11")
            .is_some(),
        "the cause names the script and line"
    );
    assert!(
        h.query_by_label_contains("ctx:damage(x, y, 1)").is_some(),
        "and shows the line"
    );
    // A card's placement names the card and where it is defined.
    h.get_by_label_contains("placed seat 1 basic 3 at (0, 0)")
        .click();
    h.run();
    assert!(h.query_by_label("Card: Row Weakener").is_some());
    assert!(
        h.query_by_label_contains("card base:weaken_row · content/base/cards.yaml:")
            .is_some()
    );
}

#[test]
fn the_sandbox_hint_ranks_moves_on_the_board() {
    let mut h = harness(base_library());
    h.run();
    open_sandbox(&mut h);
    pick_card(&mut h, "weaken_row", "Row Weakener");
    h.get_by_label("AI hint").click();
    // Worked out on the preview worker, shown once it has come.
    run_until(&mut h, "the hint", |h| {
        h.query_by_label_contains("#1 Row Weakener at").is_some()
    });
    assert!(
        h.query_by_label_contains("#5 Row Weakener at").is_some(),
        "five moves ranked"
    );
}

/// A dropped file, as the window system hands it over.
#[derive(Debug)]
struct Dropped(std::path::PathBuf);

impl egui::DroppedFile for Dropped {
    fn path(&self) -> &std::path::Path {
        &self.0
    }

    fn bytes(&self) -> Result<Vec<u8>, String> {
        std::fs::read(&self.0).map_err(|e| e.to_string())
    }
}

#[test]
fn a_pack_dropped_on_the_window_installs_turns_on_shows_its_card_and_conflict_then_off() {
    use tokensmith::packs::PackSet;

    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let source = dir.path().join("src/sparks");
    std::fs::create_dir_all(&source).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(
        source.join("pack.yaml"),
        "id: sparks\nname: Sparks\nversion: 1.0.0\nrequires: [{ id: base }]\n",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(
        source.join("cards.yaml"),
        "cards:\n  - id: sparkler\n    name: Sparkler\n    value: 2\n    token: base:basic\n    ability: base:weaken\n    area: base:row\n  - id: base:gift\n    value: 9\n",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let built = tokensmith::packs::build(&source, |_| Vec::new()).unwrap_or_else(|e| panic!("{e}"));
    let zip = dir.path().join("sparks-1.0.0.zip");
    std::fs::write(&zip, &built.bytes).unwrap_or_else(|e| panic!("{e}"));

    let profile_dir = dir.path().join("profile");
    let app = app_in_profile(&profile_dir, dir.path().join("no-mods"));
    let mut h = harness_for(app);
    h.run();
    let has_card = |h: &Harness<'_, App>, name: &str| {
        h.state()
            .library()
            .catalog
            .as_ref()
            .is_some_and(|c| c.cards().iter().any(|card| card.meta.name == name))
    };
    assert!(!has_card(&h, "Sparkler"));

    h.input_mut()
        .dropped_files
        .push(std::sync::Arc::new(Dropped(zip.clone())));
    h.step();
    // Installed on a worker thread: the Mods screen says so, then what happened.
    run_until(&mut h, "the install", |h| {
        h.state()
            .mods()
            .and_then(|m| m.status.as_ref())
            .is_some_and(|(_, line)| line != "Installing…")
    });
    mods_read(&mut h);
    let status = h
        .state()
        .mods()
        .and_then(|m| m.status.clone())
        .unwrap_or_else(|| panic!("the Mods screen opens with what the drop did"));
    assert!(
        status.0 && status.1.contains("Installed sparks 1.0.0"),
        "{status:?}"
    );
    assert!(profile_dir.join("packs/sparks/pack.yaml").is_file());
    assert!(!has_card(&h, "Sparkler"), "installed packs start off");

    h.get_by_label("sparks on").click();
    h.step();
    mods_read(&mut h);
    assert!(h.state().pack_set().is_some_and(|s| s.is_enabled("sparks")));
    assert!(has_card(&h, "Sparkler"), "on without a restart");
    assert!(
        h.query_by_label_contains("card base:gift: value").is_some(),
        "the conflict is listed"
    );
    assert!(h.query_by_label_contains("wins: sparks sets 9").is_some());
    // Kept in the profile for the next start.
    assert!(PackSet::open(&profile_dir).is_enabled("sparks"));

    h.get_by_label("◀ Menu").click();
    h.run();
    h.get_by_label("Cards").click();
    h.run();
    assert!(
        h.query_by_label_contains("Sparkler").is_some(),
        "the Cards screen shows it"
    );
    h.get_by_label("◀ Menu").click();
    h.run();
    h.get_by_label("Mods").click();
    h.run();
    h.get_by_label("sparks on").click();
    h.step();
    mods_read(&mut h);
    assert!(!has_card(&h, "Sparkler"), "off again");
    assert!(!PackSet::open(&profile_dir).is_enabled("sparks"));
    assert!(h.query_by_label_contains("No conflicts").is_some());
}

/// The text of the first label containing `part`.
fn label_text(h: &Harness<'_, App>, part: &str) -> String {
    let node = h.get_by_label_contains(part);
    let node = node.accesskit_node();
    node.label()
        .filter(|l| !l.is_empty())
        .or_else(|| node.value())
        .unwrap_or_default()
}

/// Host a LAN game from the menu on any free port; the port and the hosting line.
fn host_on_any_port(host: &mut Harness<'_, App>) -> (u16, String) {
    host.run();
    host.get_by_label("Play on LAN").click();
    host.run();
    // Any free port: clear the default and type 0.
    host.get_by_label("Port").click();
    host.run();
    host.key_press(Key::End);
    for _ in 0..8 {
        host.key_press(Key::Backspace);
    }
    host.get_by_label("Port").type_text("0");
    host.run();
    host.get_by_label("Host").click();
    run_until(host, "the host waiting", |h| {
        h.query_by_label_contains("waiting for the other player")
            .is_some()
    });
    let hosting = label_text(host, "Hosting on port");
    let port: u16 = hosting
        .trim_start_matches("Hosting on port ")
        .split(':')
        .next()
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("a port in '{hosting}'"));
    (port, hosting)
}

#[test]
fn two_clients_play_a_whole_lan_game_by_clicks_and_see_the_same_result() {
    let mut host = harness(base_library());
    let mut guest = harness(base_library());
    let (port, hosting) = host_on_any_port(&mut host);
    // The addresses to give a friend, where the machine has any.
    for ip in tokensmith::net::network_addresses() {
        assert!(
            hosting.contains(&std::net::SocketAddr::new(ip, port).to_string()),
            "{hosting}"
        );
    }

    guest.run();
    guest.get_by_label("Play on LAN").click();
    guest.run();
    // (The list of games found keeps a spinner turning: step, do not settle.)
    guest.get_by_label("Join a game").click();
    guest.run_steps(3);
    guest.get_by_label("Address").click();
    guest
        .get_by_label("Address")
        .type_text(&format!("127.0.0.1:{port}"));
    guest.run_steps(3);
    guest.get_by_label("Join by address").click();
    let deadline = Instant::now() + Duration::from_secs(60);
    while host.state().game().is_none() || guest.state().game().is_none() {
        assert!(Instant::now() < deadline, "both game screens open");
        host.step();
        guest.step();
        std::thread::sleep(Duration::from_millis(5));
    }
    let keys = [Key::Num1, Key::Num2, Key::Num3, Key::Num4];
    let mut clicks = [0usize; 2];
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        assert!(Instant::now() < deadline, "the game ends");
        let over = [&host, &guest]
            .iter()
            .all(|h| h.state().game().is_some_and(|g| g.session.is_over()));
        if over {
            break;
        }
        for (i, h) in [&mut host, &mut guest].into_iter().enumerate() {
            h.step();
            let mine = h.state().game().is_some_and(|g| g.session.human_to_move());
            if mine {
                h.key_press(keys[clicks[i] % 4]);
                h.step();
                h.get_all_by_label_contains(": empty")
                    .next()
                    .map(|n| n.click())
                    .unwrap_or_else(|| panic!("an empty cell to play on"));
                h.step();
                clicks[i] += 1;
            }
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    assert!(
        clicks[0] >= 5 && clicks[1] >= 5,
        "both played by clicks: {clicks:?}"
    );
    let end = |h: &Harness<'_, App>| {
        let g = h.state().game().unwrap_or_else(|| panic!("a game"));
        let s = g.session.state();
        (
            s.score(tokensmith::rules::Seat::One),
            s.score(tokensmith::rules::Seat::Two),
            g.session.winner(),
            s.moves_played(),
        )
    };
    assert_eq!(
        end(&host),
        end(&guest),
        "both players saw the host's result"
    );
    host.run();
    assert!(
        host.query_by_label_contains(" wins").is_some() || host.query_by_label("A draw").is_some()
    );
}

/// A pack only the host has: a card and a ready deck with it.
fn rush_pack(mods: &std::path::Path) {
    let dir = mods.join("lanrush");
    std::fs::create_dir_all(&dir).expect("mkdir");
    std::fs::write(
        dir.join("pack.yaml"),
        "id: lanrush\nname: LAN rush\nversion: 1.0.0\nrequires:\n  - { id: base, version: \"^1\" }\n",
    )
    .expect("write");
    std::fs::write(
        dir.join("content.yaml"),
        "cards:\n  - id: rusher\n    name: Rusher\n    value: 3\ndecks:\n  - id: rush\n    name: LAN Rush\n    stacks:\n      - [rusher, weaken_row]\n      - [push_row, spawn_row]\n      - [booster, flip_cross]\n      - [weaken_cross, gift]\n",
    )
    .expect("write");
}

#[test]
fn a_joiner_without_the_hosts_pack_chooses_its_deck_once_connected() {
    let host_mods = tempfile::tempdir().expect("tmp");
    rush_pack(host_mods.path());
    let host_library = Library::load(LoadOptions::standard(
        &root().join("content"),
        host_mods.path(),
    ));
    assert!(
        host_library.catalog.is_some(),
        "{:?}",
        host_library.diagnostics
    );
    let guest_profile = tempfile::tempdir().expect("tmp");
    let profile = tokensmith::profile::Profile::open(guest_profile.path()).expect("profile");
    let mut host = harness(host_library);
    let mut guest = harness_for(App::with_profile(base_library(), Ok(profile)));
    let (port, _) = host_on_any_port(&mut host);

    guest.run();
    guest.get_by_label("Play on LAN").click();
    guest.run();
    guest.get_by_label("Join a game").click();
    guest.run_steps(3);
    // The host's deck is not on offer before joining: the guest picks it once connected.
    guest.get_by_label("Your deck").click();
    guest.run_steps(3);
    assert!(guest.query_by_label("LAN Rush").is_none());
    guest.get_by_label("Choose when connected").click();
    guest.run_steps(3);
    guest.get_by_label("Address").click();
    guest
        .get_by_label("Address")
        .type_text(&format!("127.0.0.1:{port}"));
    guest.run_steps(3);
    guest.get_by_label("Join by address").click();
    let step_both = |host: &mut Harness<'_, App>, guest: &mut Harness<'_, App>| {
        host.step();
        guest.step();
        std::thread::sleep(Duration::from_millis(5));
    };
    let deadline = Instant::now() + Duration::from_secs(60);
    while guest
        .query_by_label("Use the host's packs for this game")
        .is_none()
    {
        assert!(Instant::now() < deadline, "asked to use the host's packs");
        step_both(&mut host, &mut guest);
    }
    guest
        .get_by_label("Use the host's packs for this game")
        .click();
    while guest.query_by_label("Deck for this game").is_none() {
        assert!(Instant::now() < deadline, "asked for a deck of the game's");
        step_both(&mut host, &mut guest);
    }
    assert!(
        guest
            .query_by_label_contains("Choose your deck from the game's packs")
            .is_some()
    );
    guest.get_by_label("Deck for this game").click();
    guest.run_steps(3);
    guest.get_by_label("LAN Rush").click();
    guest.run_steps(3);
    guest.get_by_label("Play with this deck").click();
    while host.state().game().is_none() || guest.state().game().is_none() {
        assert!(Instant::now() < deadline, "both game screens open");
        step_both(&mut host, &mut guest);
    }
    guest.run_steps(3);
    assert!(
        guest.query_by_label_contains("Rusher").is_some(),
        "the guest plays the host pack's deck"
    );
}
