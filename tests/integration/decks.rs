//! The deck editor and saved decks in the client, driven through accessibility labels:
//! a deck built by drag and drop is found again after a restart on the same profile
//! folder and offered first on the new-game screen; click-to-place; refusals with their
//! reason; duplicate and delete; cards of packs not loaded kept and marked; saved and
//! random decks in a game; settings kept in the profile.

use egui::{Key, Modifiers, Pos2, vec2};
use egui_kittest::Harness;
use egui_kittest::kittest::{NodeT as _, Queryable};
use tokensmith::app::{App, DeckPick};
use tokensmith::profile::Profile;
use tokensmith::rules::Seat;

use super::client::{base_library, harness_for};

fn profile_at(dir: &std::path::Path) -> Result<Profile, String> {
    Profile::open(dir).map_err(|e| e.to_string())
}

/// A profile folder holding one deck file, `name` under `decks/`.
fn profile_with(name: &str, text: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    std::fs::create_dir_all(dir.path().join("decks")).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(dir.path().join("decks").join(name), text).unwrap_or_else(|e| panic!("{e}"));
    dir
}

fn open_editor(dir: &std::path::Path) -> Harness<'static, App> {
    let mut h = harness_for(App::with_profile(base_library(), profile_at(dir)));
    h.run();
    click(&mut h, "Decks");
    assert!(h.state().deck_editor().is_some(), "the deck editor opens");
    h
}

/// The open deck's stacks as written.
fn stacks(h: &Harness<'_, App>) -> Vec<Vec<String>> {
    h.state()
        .deck_editor()
        .and_then(|e| e.draft())
        .map(|d| d.stacks.clone())
        .unwrap_or_default()
}

/// Show only the collection cards matching `text`.
fn search(h: &mut Harness<'_, App>, text: &str) {
    click(h, "Search the collection");
    h.key_press_modifiers(Modifiers::COMMAND, Key::A);
    h.run();
    h.get_by_label("Search the collection").type_text(text);
    h.run();
}

/// Press on `from`, move in steps to `to` and let go there, a frame each.
fn drag(h: &mut Harness<'_, App>, from: &str, to: &str) {
    let start = h.get_by_label(from).rect().center();
    let end = h.get_by_label(to).rect().center();
    drag_points(h, start, end);
}

fn drag_points(h: &mut Harness<'_, App>, start: Pos2, end: Pos2) {
    h.hover_at(start);
    h.step();
    h.drag_at(start);
    h.step();
    for k in [0.25, 0.5, 0.75, 1.0] {
        h.hover_at(start + (end - start) * k + vec2(0.0, 0.5));
        h.step();
    }
    h.hover_at(end);
    h.step();
    h.drop_at(end);
    h.step();
    h.run();
}

/// Drag the collection card `name` onto the add slot of stack `stack` (1-based).
fn drag_in(h: &mut Harness<'_, App>, name: &str, stack: usize) {
    search(h, name);
    drag(h, name, &format!("stack {stack}: add a card"));
}

/// Click the widget labelled `label` and let the frame settle.
fn click(h: &mut Harness<'_, App>, label: &str) {
    h.get_by_label(label).click();
    h.run();
}

/// Whether the collection, searched for `name`, shows it as not in the deck.
fn search_shows(h: &mut Harness<'_, App>, name: &str) -> bool {
    search(h, name);
    h.query_by_label(name).is_some()
}

fn status(h: &Harness<'_, App>, text: &str) -> bool {
    h.query_by_label_contains(text).is_some()
}

#[test]
fn a_deck_built_by_drag_and_drop_is_found_after_a_restart_and_offered_first() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let mut h = open_editor(dir.path());
    assert!(status(&h, "No deck open"), "an empty profile opens no deck");
    click(&mut h, "New deck");
    assert_eq!(stacks(&h), vec![Vec::<String>::new(); 4]);
    assert!(status(&h, "stack 1 has 0 cards; stacks hold 2 to 5"));

    click(&mut h, "Deck name");
    h.key_press_modifiers(Modifiers::COMMAND, Key::A);
    h.run();
    h.get_by_label("Deck name").type_text("Shove It");
    h.run();

    for (name, stack) in [
        ("Row Pusher", 1),
        ("Column Pusher", 1),
        ("Cross Pusher", 2),
        ("Ring Pusher", 2),
        ("Row Flipper", 3),
        ("Gift", 3),
        ("Booster", 4),
        ("Beacon", 4),
    ] {
        drag_in(&mut h, name, stack);
    }
    assert_eq!(
        stacks(&h),
        [
            ["base:push_row", "base:push_column"],
            ["base:push_cross", "base:push_ring"],
            ["base:flip_row", "base:gift"],
            ["base:booster", "base:beacon"],
        ]
    );
    assert!(status(&h, "Ready to play"), "a legal deck is ready");

    // Onto a card: before it. Between stacks, and back out to the collection.
    drag_in(&mut h, "Lure", 1);
    drag(
        &mut h,
        "stack 1, card 3: Lure",
        "stack 1, card 1: Row Pusher",
    );
    assert_eq!(
        stacks(&h)[0],
        ["base:lure", "base:push_row", "base:push_column"]
    );
    drag(&mut h, "stack 1, card 1: Lure", "stack 4: add a card");
    assert_eq!(stacks(&h)[3], ["base:booster", "base:beacon", "base:lure"]);
    let out = h.get_by_label("stack 4, card 3: Lure").rect().center();
    let collection = h.get_by_label("Search the collection").rect().center() + vec2(0.0, 200.0);
    drag_points(&mut h, out, collection);
    assert_eq!(stacks(&h)[3], ["base:booster", "base:beacon"]);
    assert!(status(&h, "took Lure out"));

    click(&mut h, "Set as default");
    // The id (the file name) stays what it was made with; the name changes.
    let file = dir.path().join("decks/new-deck.yaml");
    let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    assert!(text.contains("name: \"Shove It\""), "{text}");
    drop(h);

    // A new client on the same folder finds the deck and offers it first.
    let mut h = open_editor(dir.path());
    let decks = h
        .state()
        .deck_editor()
        .map(|e| e.decks().to_vec())
        .unwrap_or_default();
    assert_eq!(decks.len(), 1);
    assert_eq!(decks[0].name, "Shove It");
    assert_eq!(stacks(&h)[1], ["base:push_cross", "base:push_ring"]);
    assert!(
        h.query_by_label("Shove It (default)").is_some(),
        "marked as the default"
    );
    click(&mut h, "◀ Menu");
    click(&mut h, "Play vs AI");
    let pick = h.state().new_game().map(|n| n.pick(Seat::One).clone());
    assert_eq!(pick, Some(DeckPick::Saved("new-deck".into())));
    click(&mut h, "Start");
    let game = h.state().game().map(|g| g.session.setup.decks[0].clone());
    assert_eq!(game.map(|d| d.name), Some("Shove It".to_string()));
}

#[test]
fn click_to_place_and_refusals_say_why() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let mut h = open_editor(dir.path());
    click(&mut h, "New deck");
    // Click a card, then a slot.
    search(&mut h, "Gift");
    click(&mut h, "Gift");
    click(&mut h, "stack 2: add a card");
    assert_eq!(stacks(&h)[1], ["base:gift"]);
    assert!(h.query_by_label("Gift (in stack 2)").is_some());
    // The same card again is refused, with the reason.
    drag(&mut h, "Gift (in stack 2)", "stack 3: add a card");
    assert!(status(
        &h,
        "Gift is already in stack 2: a card appears at most once"
    ));
    assert_eq!(stacks(&h)[2], Vec::<String>::new());
    // Click a deck card, then another stack's slot: it moves.
    click(&mut h, "stack 2, card 1: Gift");
    click(&mut h, "stack 3: add a card");
    assert_eq!(stacks(&h)[1], Vec::<String>::new());
    assert_eq!(stacks(&h)[2], ["base:gift"]);
    // A full stack takes no more.
    for name in [
        "Row Weakener",
        "Column Weakener",
        "Cross Weakener",
        "Ring Weakener",
    ] {
        drag_in(&mut h, name, 3);
    }
    assert_eq!(stacks(&h)[2].len(), 5);
    assert!(
        h.query_by_label("stack 3: add a card").is_none(),
        "no room left"
    );
    // A card dropped on a card of the full stack takes its place.
    search(&mut h, "Swap");
    drag(&mut h, "Swap", "stack 3, card 1: Gift");
    assert!(status(&h, "Swap took the place of Gift in stack 3"));
    assert_eq!(stacks(&h)[2][0], "base:swap");
    assert!(
        search_shows(&mut h, "Gift"),
        "Gift is back in the collection"
    );
    // × takes a card out.
    click(&mut h, "take Swap out of stack 3");
    assert_eq!(stacks(&h)[2].len(), 4);
    assert!(!stacks(&h)[2].contains(&"base:swap".to_string()));

    // Duplicate, then delete the copy after confirming.
    click(&mut h, "Duplicate");
    let decks = |h: &Harness<'_, App>| {
        h.state()
            .deck_editor()
            .map(|e| e.decks().iter().map(|d| d.id.clone()).collect::<Vec<_>>())
            .unwrap_or_default()
    };
    assert_eq!(decks(&h), ["new-deck", "new-deck-copy"]);
    assert!(dir.path().join("decks/new-deck-copy.yaml").is_file());
    click(&mut h, "Delete");
    assert_eq!(decks(&h).len(), 2, "asks first");
    click(&mut h, "Delete it");
    assert_eq!(decks(&h), ["new-deck"]);
    assert!(!dir.path().join("decks/new-deck-copy.yaml").exists());
}

#[test]
fn cards_of_packs_not_loaded_stay_marked_and_the_deck_is_not_offered() {
    let dir = profile_with(
        "frosty.yaml",
        "format_version: 2\nid: frosty\nname: Frosty\nstacks:\n  - [frost:hailstorm, base:push_row]\n  - [base:gift, base:swap]\n  - [base:lure, base:beacon]\n  - [base:booster, base:flip_row]\n",
    );
    let mut h = open_editor(dir.path());
    assert!(
        h.query_by_label("stack 1, card 1: frost:hailstorm (not loaded)")
            .is_some()
    );
    assert!(status(
        &h,
        "frost:hailstorm is from the pack 'frost', which is not loaded"
    ));
    // An edit keeps the card in the file.
    drag_in(&mut h, "Ring Pusher", 1);
    let text = std::fs::read_to_string(dir.path().join("decks/frosty.yaml"))
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        text.contains("[frost:hailstorm, base:push_row, base:push_ring]"),
        "{text}"
    );
    // The new-game screen does not offer it for play.
    click(&mut h, "◀ Menu");
    click(&mut h, "Hotseat");
    click(&mut h, "Blue's deck");
    let frosty = h.get_by_label("Frosty");
    assert!(
        frosty.accesskit_node().is_disabled(),
        "a deck that cannot be played is greyed"
    );
}

#[test]
fn random_content_and_saved_decks_start_games() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let mut h = open_editor(dir.path());
    click(&mut h, "New from a ready deck ▸");
    click(&mut h, "Shifters");
    assert!(status(&h, "Ready to play"));
    click(&mut h, "◀ Menu");
    click(&mut h, "Play vs AI");
    click(&mut h, "Blue's deck (you)");
    click(&mut h, "Random from my decks");
    assert_eq!(
        h.state().new_game().map(|n| n.pick(Seat::One).clone()),
        Some(DeckPick::RandomSaved)
    );
    click(&mut h, "Red's deck (AI)");
    click(&mut h, "Random content");
    click(&mut h, "Seed (optional)");
    h.get_by_label("Seed (optional)").type_text("11");
    h.run();
    click(&mut h, "Start");
    let decks = h.state().game().map(|g| g.session.setup.decks.clone());
    let Some([mine, theirs]) = decks else {
        panic!("the game starts");
    };
    assert_eq!(mine.name, "Shifters");
    assert_eq!(theirs.name, "Random content");
    assert_eq!(theirs.stacks.len(), 4);
    let dealt: Vec<usize> = h
        .state()
        .game()
        .map(|g| {
            g.session
                .state()
                .seat(Seat::Two)
                .stacks()
                .iter()
                .map(|s| s.cards().count())
                .collect()
        })
        .unwrap_or_default();
    let drawn: Vec<usize> = theirs.stacks.iter().map(Vec::len).collect();
    assert_eq!(dealt, drawn, "the game is dealt the drawn deck");
}

#[test]
fn undo_redo_exchanges_in_full_stacks_and_decks_of_the_wrong_shape() {
    // Five stacks (the rules want four), in a file whose name cannot be an id.
    let dir = profile_with(
        "Five Stacks.yaml",
        "format_version: 2\nid: x\nname: Five\nstacks:\n  - [base:weaken_row, base:weaken_column, base:weaken_cross, base:weaken_ring, base:weaken_corners]\n  - [base:push_row, base:push_column]\n  - [base:gift, base:swap]\n  - [base:lure]\n  - [base:beacon]\n",
    );
    let mut h = open_editor(dir.path());
    assert!(
        dir.path().join("decks/five-stacks.yaml").is_file(),
        "saved under an id"
    );
    assert!(
        dir.path().join("decks/Five Stacks.yaml.orig").is_file(),
        "the original kept"
    );
    assert!(status(&h, "the deck has 5 stacks; the rules want 4"));
    assert_eq!(
        stacks(&h).len(),
        5,
        "shown as it is, not changed behind the user's back"
    );
    click(&mut h, "Fit to 4 stacks");
    assert_eq!(stacks(&h)[3], ["base:lure", "base:beacon"]);
    assert!(status(&h, "Ready to play"));
    // A card dropped on a card of a full stack changes places with it.
    drag(
        &mut h,
        "stack 2, card 1: Row Pusher",
        "stack 1, card 2: Column Weakener",
    );
    assert_eq!(stacks(&h)[0][1], "base:push_row");
    assert_eq!(stacks(&h)[1][0], "base:weaken_column");
    // Undo and redo, by button and by key, saved each time.
    click(&mut h, "Undo");
    assert_eq!(stacks(&h)[0][1], "base:weaken_column");
    h.key_press_modifiers(Modifiers::COMMAND, Key::Y);
    h.run();
    assert_eq!(stacks(&h)[0][1], "base:push_row");
    h.key_press_modifiers(Modifiers::COMMAND, Key::Z);
    h.run();
    h.key_press_modifiers(Modifiers::COMMAND, Key::Z);
    h.run();
    assert_eq!(stacks(&h).len(), 5, "back before the fit");
    let text = std::fs::read_to_string(dir.path().join("decks/five-stacks.yaml"))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(text.matches("\n  - [").count(), 5, "{text}");
    // A run of typing in the name is one step; an emptied name is not saved.
    let name = |h: &Harness<'_, App>| {
        h.state()
            .deck_editor()
            .and_then(|e| e.draft())
            .map(|d| d.name.clone())
    };
    click(&mut h, "Deck name");
    h.key_press_modifiers(Modifiers::COMMAND, Key::A);
    h.run();
    h.key_press(Key::Backspace);
    h.run();
    assert!(status(&h, "Not saved: a deck needs a name."));
    h.get_by_label("Deck name").type_text("Quint");
    h.run();
    assert_eq!(name(&h).as_deref(), Some("Quint"));
    h.key_press(Key::Escape);
    h.run();
    click(&mut h, "Undo");
    assert_eq!(
        name(&h).as_deref(),
        Some("Five"),
        "the whole rename at once"
    );
    let text = std::fs::read_to_string(dir.path().join("decks/five-stacks.yaml"))
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(text.contains("name: \"Five\""), "{text}");
}

#[test]
fn a_new_deck_never_takes_the_file_of_another_and_deleting_the_default_clears_it() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let mut h = open_editor(dir.path());
    // A deck saved behind the editor's back (another window, `tokensmith deck import`).
    let other = "format_version: 2\nid: new-deck\nname: Theirs\nstacks:\n  - [base:gift, base:swap]\n  - []\n  - []\n  - []\n";
    std::fs::write(dir.path().join("decks/new-deck.yaml"), other).unwrap_or_else(|e| panic!("{e}"));
    click(&mut h, "New deck");
    let id = h
        .state()
        .deck_editor()
        .and_then(|e| e.draft())
        .map(|d| d.id.clone());
    assert_eq!(id.as_deref(), Some("new-deck-2"));
    let kept = std::fs::read_to_string(dir.path().join("decks/new-deck.yaml"))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(kept, other, "the other deck's file is untouched");
    click(&mut h, "Set as default");
    assert_eq!(
        h.state().saved_settings().default_deck.as_deref(),
        Some("new-deck-2")
    );
    click(&mut h, "Delete");
    click(&mut h, "Delete it");
    assert_eq!(
        h.state().saved_settings().default_deck,
        None,
        "no default left dangling"
    );
    let settings =
        std::fs::read_to_string(dir.path().join("settings.yaml")).unwrap_or_else(|e| panic!("{e}"));
    assert!(!settings.contains("default_deck"), "{settings}");
}

#[test]
fn settings_are_kept_in_the_profile() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let build = |dir: &std::path::Path| {
        Harness::builder()
            .with_size(egui::vec2(1280.0, 860.0))
            .with_max_steps(20)
            .build_ui_state(
                |ui, app: &mut App| app.show(ui),
                App::with_profile(base_library(), profile_at(dir)),
            )
    };
    let mut h = build(dir.path());
    h.run();
    assert!(h.state().settings.animations, "the defaults at first");
    click(&mut h, "Settings");
    click(&mut h, "Animate moves");
    assert!(!h.state().saved_settings().animations, "saved at once");
    drop(h);
    let h = build(dir.path());
    assert!(
        !h.state().settings.animations,
        "read back on the next start"
    );
    let text =
        std::fs::read_to_string(dir.path().join("settings.yaml")).unwrap_or_else(|e| panic!("{e}"));
    assert!(text.starts_with("format_version: 1\n"), "{text}");
}
