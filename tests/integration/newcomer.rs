//! The client where new users stopped or guessed: the sandbox game kept across the main
//! menu, a failed reload's errors shown in the sandbox (selectable), the reload panel
//! with room for a replay's result, a move the content will refuse said so on hover, the
//! Mods screen's rows staying put when a pack is toggled, and a LAN host listed once by
//! its name.

use egui_kittest::kittest::Queryable;
use tokensmith::rules::Cell;

use super::client::{base_library, cell_label, harness_for, open_sandbox, pick_card};
use tokensmith::app::App;

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
