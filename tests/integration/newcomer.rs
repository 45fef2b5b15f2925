//! The client where new users stopped or guessed: the sandbox game kept across the main
//! menu, a failed reload's errors shown in the sandbox (selectable), the reload panel
//! with room for a replay's result, a move the content will refuse said so on hover, the
//! Mods screen's rows staying put when a pack is toggled, and a LAN host listed once by
//! its name.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use egui_kittest::Harness;
use egui_kittest::kittest::{NodeT as _, Queryable};
use tokensmith::app::{App, ClientSettings, Library};
use tokensmith::content::LoadOptions;
use tokensmith::reload::DEBOUNCE;
use tokensmith::rules::Cell;

use super::client::{
    base_library, cell_label, harness_for, mods_read, open_sandbox, pick_card, sandbox_over,
};
use super::support::{TempPacks, copy_tree, root};

#[test]
fn the_sandbox_game_is_kept_across_the_menu_and_reset_starts_over() {
    let mut h = harness_for(App::new(base_library()));
    h.run();
    open_sandbox(&mut h);
    pick_card(&mut h, "weaken_row", "Row Weakener");
    h.get_by_label_contains("cell (0, 5): empty").click();
    h.run();
    assert!(!cell_label(&h, Cell::new(0, 5)).contains("empty"));
    h.get_by_label("◀ Menu").click();
    h.run();
    assert!(h.state().sandbox().is_none(), "back on the menu");
    open_sandbox(&mut h);
    assert!(
        !cell_label(&h, Cell::new(0, 5)).contains("empty"),
        "Sandbox resumes the game"
    );
    assert!(h.query_by_label("Undo").is_some());
    assert_eq!(
        h.state().sandbox().map(|s| s.sandbox.steps().len()),
        Some(1)
    );
    h.get_by_label("Reset").click();
    h.run();
    assert!(
        cell_label(&h, Cell::new(0, 5)).contains("empty"),
        "Reset starts over"
    );
}

/// A temporary copy of the base pack with an empty mods folder, and the client over it
/// with live reload on, in a 1280×800 window.
struct Live {
    dir: tempfile::TempDir,
}

impl Live {
    fn new() -> Live {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("a temporary folder: {e}"));
        copy_tree(
            &root().join("content/base"),
            &dir.path().join("content/base"),
        );
        std::fs::create_dir_all(dir.path().join("mods")).unwrap_or_else(|e| panic!("{e}"));
        Live { dir }
    }

    fn harness(&self) -> Harness<'static, App> {
        let options = LoadOptions::standard(
            &self.dir.path().join("content"),
            &self.dir.path().join("mods"),
        );
        let mut app = App::new(Library::load(options));
        app.settings = ClientSettings {
            animations: false,
            ..ClientSettings::default()
        };
        app.enable_live_reload(DEBOUNCE);
        let mut h = Harness::builder()
            .with_size(egui::vec2(1280.0, 800.0))
            .build_ui_state(|ui, app: &mut App| app.show(ui), app);
        h.run();
        assert!(h.state().watching());
        h
    }

    fn file(&self, name: &str) -> PathBuf {
        self.dir.path().join("content/base").join(name)
    }

    /// Replace `from` by `to` once in the base pack's file `name`.
    fn edit(&self, name: &str, from: &str, to: &str) {
        let path = self.file(name);
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{e}"));
        assert!(text.contains(from), "{from} in {name}");
        std::fs::write(&path, text.replacen(from, to, 1)).unwrap_or_else(|e| panic!("{e}"));
    }
}

/// Step frames until a label containing `part` shows (at most 5 s).
fn wait_label(h: &mut Harness<'_, App>, part: &str) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while h.query_by_label_contains(part).is_none() {
        assert!(
            Instant::now() < deadline,
            "waited for a label with {part:?}"
        );
        h.step();
        std::thread::sleep(Duration::from_millis(20));
    }
    h.run();
}

#[test]
fn the_reload_panel_shows_its_errors_and_replay_in_view_and_drops_stale_results() {
    let live = Live::new();
    let mut h = live.harness();
    open_sandbox(&mut h);
    pick_card(&mut h, "weaken_row", "Row Weakener");
    h.get_by_label_contains("cell (0, 0): empty").click();
    h.run();
    std::thread::sleep(Duration::from_millis(150));
    live.edit(
        "cards.yaml",
        "name: Row Weakener\n    value: 3",
        "name: Row Weakener\n    value: 7",
    );
    wait_label(&mut h, "card base:weaken_row: value 3 → 7");
    h.get_by_label("Replay with new rules").click();
    h.run();
    // The replay's result is in view, inside the window, not below the panel's fold.
    let result = h.get_by_label("Move 1 now plays differently:").rect();
    let panel_top = h.get_by_label("Replay with new rules").rect().top();
    assert!(
        result.top() > panel_top && result.bottom() < 800.0,
        "the replay result at {result:?} shows in the panel (top {panel_top})"
    );
    // The hover preview's line stays above the panel.
    h.get_by_label_contains("cell (5, 5): empty").hover();
    h.run();
    let preview = h.get_by_label_contains("Preview: income").rect();
    assert!(
        preview.bottom() <= panel_top,
        "the preview line {preview:?} is not under the panel (top {panel_top})"
    );

    // A broken save: the error itself, file:line:col, shows in the sandbox, and the
    // replay made for the earlier content is gone.
    let line = std::fs::read_to_string(live.file("cards.yaml"))
        .unwrap_or_default()
        .lines()
        .position(|l| l.contains("name: Row Weakener"))
        .unwrap_or(0)
        + 2;
    live.edit(
        "cards.yaml",
        "name: Row Weakener\n    value: 7",
        "name: Row Weakener\n    value: seven",
    );
    wait_label(&mut h, "Reload failed");
    let at = format!("cards.yaml:{line}:");
    assert!(
        h.query_by_label_contains(&at).is_some(),
        "the error at {at} shows in the sandbox"
    );
    assert!(
        h.query_by_label_contains("now plays differently").is_none(),
        "the replay result of the earlier reload is cleared"
    );
    h.get_by_label("Copy errors").click();
    h.step();
    let copied = h.output().platform_output.commands.iter().any(
        |c| matches!(c, egui::OutputCommand::CopyText(t) if t.contains(&at) && t.contains("error")),
    );
    assert!(copied, "Copy errors puts the messages on the clipboard");
}

#[test]
fn two_saves_in_a_row_show_both_files_changes() {
    let live = Live::new();
    let mut h = live.harness();
    open_sandbox(&mut h);
    std::thread::sleep(Duration::from_millis(150));
    live.edit(
        "cards.yaml",
        "name: Row Weakener\n    value: 3",
        "name: Row Weakener\n    value: 7",
    );
    wait_label(&mut h, "card base:weaken_row: value 3 → 7");
    std::thread::sleep(Duration::from_millis(600));
    live.edit("abilities.yaml", "name: Weaken\n", "name: Weaken Hard\n");
    wait_label(&mut h, "ability base:weaken: name Weaken → Weaken Hard");
    assert!(
        h.query_by_label_contains("card base:weaken_row: value 3 → 7")
            .is_some(),
        "the first save's change still shows"
    );
    assert!(h.query_by_label_contains("2 saves").is_some());
}

#[test]
fn a_move_whose_script_fails_says_on_hover_that_it_will_be_refused_and_why() {
    let mods = TempPacks::new(&[
        (
            "dry/pack.yaml",
            "id: dry\nname: Dry\nversion: 1.0.0\nrequires:\n  - { id: base, version: \"^1\" }\n",
        ),
        (
            "dry/abilities.yaml",
            "abilities:\n  - id: dry_up\n    name: Dry Up\n    description: Fails.\n    script: scripts/dry.lua\n",
        ),
        (
            "dry/cards.yaml",
            "cards:\n  - id: dry_well\n    name: Dry Well\n    value: 2\n    ability: dry_up\n    area: row\n",
        ),
        (
            "dry/scripts/dry.lua",
            "return {\n  on_place = function(ctx)\n    error(\"the well is dry\")\n  end,\n}\n",
        ),
    ]);
    let mut h = sandbox_over(mods.path());
    pick_card(&mut h, "dry_well", "Dry Well");
    h.get_by_label_contains("cell (5, 5): empty").hover();
    h.run();
    let cell = cell_label(&h, Cell::new(5, 5));
    assert!(
        cell.contains("refused") && cell.contains("the well is dry"),
        "the hovered cell says why: {cell}"
    );
    assert!(
        h.get_all_by_label_contains("This move will be refused: ")
            .any(|n| text(&n).contains("the well is dry")),
        "the line under the board says why: {:?}",
        h.get_all_by_label_contains("This move will be refused")
            .map(|n| text(&n))
            .collect::<Vec<_>>()
    );
    // A playable card hovered on the same cell previews as before.
    pick_card(&mut h, "weaken_row", "Row Weakener");
    h.get_by_label_contains("cell (5, 5): empty").hover();
    h.run();
    assert!(!cell_label(&h, Cell::new(5, 5)).contains("refused"));
    assert!(
        h.query_by_label_contains("This move will be refused")
            .is_none()
    );
}

/// A node's text: its label, or its value (plain labels keep their text there).
fn text(node: &egui_kittest::Node<'_>) -> String {
    let n = node.accesskit_node();
    n.label()
        .filter(|l| !l.is_empty())
        .or_else(|| n.value())
        .unwrap_or_default()
}

#[test]
fn toggling_a_pack_keeps_every_row_where_it_is() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let profile_dir = dir.path().join("profile");
    let app = super::client::app_in_profile(&profile_dir, root().join("mods"));
    let mut h = harness_for(app);
    h.run();
    h.get_by_label("Mods").click();
    h.run();
    let rows = |h: &Harness<'_, App>| -> Vec<String> {
        h.state()
            .mods()
            .map(|m| m.listed().iter().map(|l| l.id.clone()).collect())
            .unwrap_or_default()
    };
    let before = rows(&h);
    assert!(before.len() >= 4, "{before:?}");
    for id in ["classic_rebalance", "frost", "classic_rebalance", "frost"] {
        let label = format!("{id} on");
        let at = h.get_by_label(&label).rect();
        let was_on = h.state().pack_set().is_some_and(|s| s.is_enabled(id));
        h.get_by_label(&label).click();
        h.step();
        mods_read(&mut h);
        assert_ne!(
            h.state().pack_set().is_some_and(|s| s.is_enabled(id)),
            was_on,
            "{id} toggled"
        );
        assert_eq!(
            rows(&h),
            before,
            "the rows stay in place after toggling {id}"
        );
        assert_eq!(
            h.get_by_label(&label).rect(),
            at,
            "{id}'s toggle stays under the pointer"
        );
    }
}

#[test]
fn red_s_hand_shows_red_tokens() {
    let mut h = harness_for(App::new(base_library()));
    h.run();
    h.get_by_label("Hotseat").click();
    h.run();
    h.get_by_label("Start").click();
    h.run();
    let mover = h.state().game().map(|g| g.session.state().turn());
    let first = mover.map_or("Blue", |s| tokensmith::app::theme::seat_name(s));
    assert!(
        h.get_all_by_label_contains(&format!("({first} token)"))
            .next()
            .is_some(),
        "{first}'s hand shows {first} tokens"
    );
    h.key_press(egui::Key::Num1);
    h.step();
    h.get_all_by_label_contains(": empty")
        .next()
        .unwrap_or_else(|| panic!("an empty cell"))
        .click();
    h.run();
    let second = if first == "Blue" { "Red" } else { "Blue" };
    assert!(
        h.get_all_by_label_contains(&format!("({second} token)"))
            .next()
            .is_some(),
        "{second}'s hand shows {second} tokens"
    );
    assert!(
        h.query_all_by_label_contains(&format!("({first} token)"))
            .next()
            .is_none()
    );
}
