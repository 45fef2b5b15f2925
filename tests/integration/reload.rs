//! Live reload on a temporary copy of the base pack: saved changes go live within a
//! second, broken edits keep the last good catalog and say where, fixes apply (also for
//! a file broken at start-up), editor-style saves work, new pack folders are picked up,
//! temp and swap files are ignored, and the sandbox keeps its board across a reload.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use tokensmith::content::LoadOptions;
use tokensmith::reload::{DEBOUNCE, Reload, Watcher};

use super::support::{copy_tree, root};

/// A temporary `content/base` copy and an empty `mods` folder.
struct Packs {
    dir: tempfile::TempDir,
}

impl Packs {
    fn new() -> Packs {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("a temporary folder: {e}"));
        copy_tree(
            &root().join("content/base"),
            &dir.path().join("content/base"),
        );
        std::fs::create_dir_all(dir.path().join("mods")).unwrap_or_else(|e| panic!("{e}"));
        Packs { dir }
    }

    fn options(&self) -> LoadOptions {
        LoadOptions::standard(
            &self.dir.path().join("content"),
            &self.dir.path().join("mods"),
        )
    }

    fn cards(&self) -> PathBuf {
        self.dir.path().join("content/base/cards.yaml")
    }

    fn mods(&self) -> PathBuf {
        self.dir.path().join("mods")
    }

    /// The cards file with Row Weakener's value set to `value`.
    fn cards_with_value(&self, value: i32) -> String {
        let text = std::fs::read_to_string(root().join("content/base/cards.yaml"))
            .unwrap_or_else(|e| panic!("{e}"));
        text.replacen(
            "name: Row Weakener\n    value: 3",
            &format!("name: Row Weakener\n    value: {value}"),
            1,
        )
    }
}

fn write(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
}

fn watch(packs: &Packs) -> Watcher {
    let w = Watcher::start(packs.options(), DEBOUNCE, || {}).unwrap_or_else(|e| panic!("{e}"));
    // Let the watches settle before the first change.
    std::thread::sleep(Duration::from_millis(150));
    w
}

/// Wait (at most 5 s) for a reload that `wanted` accepts; how long after `since` it came.
fn wait_for(
    w: &Watcher,
    since: Instant,
    wanted: impl Fn(&Reload) -> bool,
) -> Option<(Reload, Duration)> {
    let deadline = since + Duration::from_secs(5);
    while Instant::now() < deadline {
        if let Some(r) = w.wait(Duration::from_millis(50))
            && wanted(&r)
        {
            return Some((r, since.elapsed()));
        }
    }
    None
}

fn weaken_row_value(r: &Reload) -> Option<i32> {
    let c = r.loaded.catalog.as_ref()?;
    let id = c.card_named("weaken_row").ok()?;
    Some(c.card(id).value)
}

#[test]
fn a_saved_value_goes_live() {
    let packs = Packs::new();
    let w = watch(&packs);
    let t = Instant::now();
    write(&packs.cards(), &packs.cards_with_value(7));
    let (r, after) = wait_for(&w, t, |r| weaken_row_value(r) == Some(7))
        .unwrap_or_else(|| panic!("no reload with the new value"));
    // The one-second target is measured by `cargo bench --bench reload`; here only a
    // reload that never comes, or comes far too late, fails (a loaded machine must not).
    assert!(after < Duration::from_secs(10), "took {after:?}");
    assert!(r.summary().starts_with("reloaded in "), "{}", r.summary());
    assert!(
        r.paths.iter().any(|p| p.ends_with("cards.yaml")),
        "{:?}",
        r.paths
    );
}

#[test]
fn a_broken_edit_keeps_the_last_catalog_says_where_and_the_fix_applies() {
    let packs = Packs::new();
    let w = watch(&packs);
    let good = packs.cards_with_value(3);
    let line = good
        .lines()
        .position(|l| l.contains("name: Row Weakener"))
        .unwrap_or(0)
        + 2;
    let broken = good.replacen(
        "name: Row Weakener\n    value: 3",
        "name: Row Weakener\n    value: three",
        1,
    );
    let t = Instant::now();
    write(&packs.cards(), &broken);
    let (r, _) = wait_for(&w, t, |r| r.loaded.catalog.is_none())
        .unwrap_or_else(|| panic!("no failed reload reported"));
    assert!(r.summary().starts_with("error in "), "{}", r.summary());
    let d = r
        .loaded
        .diagnostics
        .iter()
        .find(|d| d.is_error())
        .unwrap_or_else(|| panic!("an error"));
    assert!(d.path.ends_with("content/base/cards.yaml"), "{d}");
    assert_eq!(d.line, u32::try_from(line).unwrap_or(0), "{d}");
    assert!(d.column > 0, "{d}");
    let t = Instant::now();
    write(&packs.cards(), &packs.cards_with_value(4));
    assert!(
        wait_for(&w, t, |r| weaken_row_value(r) == Some(4)).is_some(),
        "the fix applies"
    );
}

#[test]
fn a_file_broken_at_start_reloads_once_fixed() {
    let packs = Packs::new();
    write(&packs.cards(), "cards:\n  - id: x\n    value: [\n");
    let at_start = tokensmith::script::load(&packs.options());
    assert!(at_start.catalog.is_none(), "broken at start");
    let w = watch(&packs);
    let t = Instant::now();
    write(&packs.cards(), &packs.cards_with_value(5));
    assert!(wait_for(&w, t, |r| weaken_row_value(r) == Some(5)).is_some());
}

#[test]
fn atomic_and_vim_style_saves_reload() {
    let packs = Packs::new();
    let w = watch(&packs);
    // Atomic: write a temp file beside it, then rename over it.
    let temp = packs.cards().with_file_name(".cards.yaml.tmp1234");
    write(&temp, &packs.cards_with_value(6));
    let t = Instant::now();
    std::fs::rename(&temp, packs.cards()).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        wait_for(&w, t, |r| weaken_row_value(r) == Some(6)).is_some(),
        "an atomic save reloads"
    );
    // Vim: move the file to `cards.yaml~`, write a new one, remove the backup.
    let backup = packs.cards().with_file_name("cards.yaml~");
    let t = Instant::now();
    std::fs::rename(packs.cards(), &backup).unwrap_or_else(|e| panic!("{e}"));
    write(&packs.cards(), &packs.cards_with_value(8));
    std::fs::remove_file(&backup).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        wait_for(&w, t, |r| weaken_row_value(r) == Some(8)).is_some(),
        "a vim-style save reloads"
    );
}

#[test]
fn a_pack_created_while_running_is_loaded() {
    let packs = Packs::new();
    let w = watch(&packs);
    let t = Instant::now();
    let pack = packs.mods().join("late");
    std::fs::create_dir_all(&pack).unwrap_or_else(|e| panic!("{e}"));
    write(
        &pack.join("pack.yaml"),
        "id: late\nname: Late\nversion: 1.0.0\nrequires:\n  - { id: base, version: \"^1\" }\n",
    );
    write(
        &pack.join("cards.yaml"),
        "cards:\n  - id: latecomer\n    name: Latecomer\n    value: 2\n    description: Added while running.\n",
    );
    let found = wait_for(&w, t, |r| {
        r.loaded
            .catalog
            .as_ref()
            .is_some_and(|c| c.card_named("late:latecomer").is_ok())
    });
    assert!(found.is_some(), "the new pack's card is loaded");
}

#[test]
fn temp_and_swap_files_do_not_reload() {
    let packs = Packs::new();
    let w = watch(&packs);
    let folder = packs.cards().with_file_name("");
    write(&folder.join(".cards.yaml.swp"), "junk");
    write(&folder.join("cards.yaml~"), "junk");
    write(&folder.join("4913"), "");
    write(&folder.join("notes.txt"), "not content");
    assert!(
        w.wait(Duration::from_millis(400)).is_none(),
        "nothing to reload"
    );
}

/// The sandbox screen across a reload (needs the `client` feature).
#[cfg(feature = "client")]
mod in_the_sandbox {
    use egui_kittest::Harness;
    use egui_kittest::kittest::Queryable;
    use tokensmith::app::{App, ClientSettings, Library};

    use super::*;

    #[test]
    fn the_sandbox_picks_up_a_changed_value_and_keeps_its_board() {
        let packs = Packs::new();
        let mut app = App::new(Library::load(packs.options()));
        app.settings = ClientSettings {
            animations: false,
            ..ClientSettings::default()
        };
        app.enable_live_reload(DEBOUNCE);
        let mut h = Harness::builder()
            .with_size(egui::vec2(1280.0, 900.0))
            .build_ui_state(|ui, app: &mut App| app.show(ui), app);
        h.run();
        assert!(h.state().watching());
        h.get_by_label("Sandbox").click();
        h.run();
        let pick = |h: &mut Harness<'_, App>| {
            h.get_by_label("Search cards").click();
            h.run();
            h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::A);
            h.run();
            h.get_by_label("Search cards").type_text("weaken_row");
            h.run();
            h.get_by_label_contains("Row Weakener ·").click();
            h.run();
        };
        pick(&mut h);
        h.get_by_label_contains("cell (0, 0): empty").click();
        h.run();
        assert!(
            h.query_by_label_contains("cell (0, 0): Blue Basic 3")
                .is_some()
        );
        std::thread::sleep(Duration::from_millis(150));
        write(&packs.cards(), &packs.cards_with_value(7));
        let deadline = Instant::now() + Duration::from_secs(5);
        while h
            .query_by_label_contains("card base:weaken_row: value 3 → 7")
            .is_none()
        {
            assert!(
                Instant::now() < deadline,
                "the reload shows with what changed"
            );
            h.step();
            std::thread::sleep(Duration::from_millis(20));
        }
        h.run();
        assert!(
            h.query_by_label_contains("cell (0, 0): Blue Basic 3")
                .is_some(),
            "the board is kept; the token placed before keeps its value"
        );
        pick(&mut h);
        h.get_by_label_contains("cell (5, 5): empty").click();
        h.run();
        assert!(
            h.query_by_label_contains("cell (5, 5): Red Basic 7")
                .is_some(),
            "the card plays with its new value"
        );
        h.get_by_label("Undo").click();
        h.run();
        h.get_by_label("Undo").click();
        h.run();
        assert!(
            h.query_by_label_contains("cell (0, 0): empty").is_some(),
            "undo history kept"
        );
    }
}

#[test]
fn a_lua_edit_reloads_and_a_lua_error_keeps_the_last_catalog_with_its_line() {
    let packs = Packs::new();
    // The scripted example pack beside the base copy.
    let to = packs.mods().join("example_scripted");
    copy_tree(&root().join("mods/example_scripted"), &to);
    let script = to.join("scripts/scripted_weaken.lua");
    let good = std::fs::read_to_string(&script).unwrap_or_else(|e| panic!("{e}"));
    let w = watch(&packs);
    // A syntax error: the reload fails at the script's line, the last catalog stays.
    let t = Instant::now();
    write(
        &script,
        &good.replace("ctx:damage(x, y, 1)", "ctx:damage(x, y, 1"),
    );
    let (r, _) = wait_for(&w, t, |r| r.loaded.catalog.is_none())
        .unwrap_or_else(|| panic!("the Lua error is reported"));
    let d = r
        .loaded
        .diagnostics
        .iter()
        .find(|d| d.is_error())
        .unwrap_or_else(|| panic!("an error"));
    assert!(d.path.ends_with("scripts/scripted_weaken.lua"), "{d}");
    let line = good
        .lines()
        .position(|l| l.contains("ctx:damage(x, y, 1)"))
        .unwrap_or(0);
    assert!(d.line as usize >= line, "{d}");
    // Fixed with a change of behaviour: the new script is in the new catalog.
    let t = Instant::now();
    write(
        &script,
        &good.replace("ctx:damage(x, y, 1)", "ctx:damage(x, y, 2)"),
    );
    let (r, _) = wait_for(&w, t, |r| {
        r.loaded.catalog.as_ref().is_some_and(|c| {
            c.scripts()
                .iter()
                .any(|s| s.source.contains("ctx:damage(x, y, 2)"))
        })
    })
    .unwrap_or_else(|| panic!("the fixed script reloads"));
    assert!(r.summary().starts_with("reloaded"), "{}", r.summary());
}

/// `validate --watch` prints what each clean reload changed, entry by entry, as the
/// client's reload panel does.
#[test]
fn validate_watch_prints_the_changes_of_each_reload() {
    use std::io::BufRead as _;
    let packs = Packs::new();
    let content = packs.dir.path().join("content");
    let mods = packs.mods();
    let mut command = super::support::tokensmith([
        "--content".as_ref(),
        content.as_os_str(),
        "--mods".as_ref(),
        mods.as_os_str(),
        "validate".as_ref(),
        "--watch".as_ref(),
    ]);
    command.stdout(std::process::Stdio::piped());
    let mut child = command
        .spawn()
        .unwrap_or_else(|e| panic!("the binary runs: {e}"));
    let stdout = child.stdout.take().unwrap_or_else(|| panic!("its output"));
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
        {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let until = |wanted: &str| -> Vec<String> {
        let deadline = Instant::now() + Duration::from_secs(20);
        let mut seen = Vec::new();
        while let Some(left) = deadline.checked_duration_since(Instant::now()) {
            match rx.recv_timeout(left) {
                Ok(line) => {
                    let done = line.contains(wanted);
                    seen.push(line);
                    if done {
                        return seen;
                    }
                }
                Err(_) => break,
            }
        }
        panic!("no line with {wanted:?} in {seen:#?}");
    };
    until("watching");
    // Let the watches settle before the change.
    std::thread::sleep(Duration::from_millis(300));
    write(&packs.cards(), &packs.cards_with_value(5));
    let lines = until("card base:weaken_row");
    let _ = child.kill();
    let _ = child.wait();
    let last = lines.last().map(String::as_str).unwrap_or_default();
    assert_eq!(last, "  card base:weaken_row: value 3 → 5", "{lines:#?}");
    assert!(
        lines.iter().any(|l| l.starts_with("reloaded in")),
        "{lines:#?}"
    );
}
