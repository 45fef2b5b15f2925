//! The program as installed, not a checkout: the binary alone in a folder of its own, run
//! from an empty working folder with its own home, validates, plays a game between AI
//! seats and lists its packs from the base content shipped inside it; with nothing to
//! load, `pack list` says why and fails; and the client opens with play enabled.

use std::path::PathBuf;
use std::process::Output;

/// A binary copied out of the build, an empty working folder and a home of its own.
struct Installed {
    dir: tempfile::TempDir,
}

impl Installed {
    fn new() -> Installed {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        for sub in ["bin", "work", "home"] {
            std::fs::create_dir_all(dir.path().join(sub)).unwrap_or_else(|e| panic!("{e}"));
        }
        std::fs::copy(
            env!("CARGO_BIN_EXE_tokensmith"),
            dir.path().join("bin/tokensmith"),
        )
        .unwrap_or_else(|e| panic!("copy the binary: {e}"));
        Installed { dir }
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    /// Run the installed binary from the empty working folder, with a profile and home
    /// inside the test's folder.
    fn run(&self, args: &[&str]) -> Output {
        let home = self.path("home");
        std::process::Command::new(self.path("bin/tokensmith"))
            .current_dir(self.path("work"))
            .env("HOME", &home)
            .env("XDG_DATA_HOME", home.join("data"))
            .env("XDG_CONFIG_HOME", home.join("config"))
            .env("XDG_CACHE_HOME", home.join("cache"))
            .env("XDG_STATE_HOME", home.join("state"))
            .arg("--profile")
            .arg(self.path("profile"))
            .args(args)
            .output()
            .unwrap_or_else(|e| panic!("the installed binary runs: {e}"))
    }
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

#[test]
fn an_installed_binary_plays_the_classic_game_from_an_empty_folder() {
    let i = Installed::new();
    let out = i.run(&["validate"]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("0 errors"), "{}", text(&out));
    let out = i.run(&[
        "simulate", "--deck-a", "starter", "--deck-b", "starter", "--ai-a", "greedy", "--ai-b",
        "random", "--games", "2", "--seed", "3",
    ]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("2 games"), "{}", text(&out));
    let out = i.run(&["pack", "list"]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("base"), "{}", text(&out));
    // The shipped content went into the cache folder, nowhere else.
    let cache = i.path("home/cache/tokensmith");
    assert!(
        std::fs::read_dir(&cache).is_ok_and(|mut d| d.next().is_some()),
        "unpacked into {}",
        cache.display()
    );
    assert!(
        std::fs::read_dir(i.path("work")).is_ok_and(|mut d| d.next().is_none()),
        "nothing written into the working folder"
    );
    // A designer's own base content still wins.
    let out = i.run(&["--content", "nothing-here", "pack", "list"]);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(2), "{t}");
    assert!(
        t.contains("no pack found") && t.contains("--content DIR"),
        "{t}"
    );
}

#[cfg(feature = "client")]
#[test]
fn the_client_opens_with_play_enabled_on_the_shipped_content() {
    use egui_kittest::kittest::{NodeT as _, Queryable as _};
    use tokensmith::app::mods::Packs;
    use tokensmith::app::{App, Library};
    use tokensmith::packs::{PackSet, set::Folders};

    let cache = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let content =
        tokensmith::content::shipped::unpack(cache.path()).unwrap_or_else(|e| panic!("{e}"));
    let profile = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let packs = Packs {
        folders: Folders {
            content,
            mods: PathBuf::from("no-such-mods-folder"),
            installed: Some(profile.path().join("packs")),
        },
        set: PackSet::open(profile.path()),
        profile: Some(profile.path().to_path_buf()),
    };
    let app = App::new(Library::load(packs.options())).with_packs(packs);
    let mut h = crate::client::harness_for(app);
    h.run();
    assert!(h.query_by_label_contains("0 error(s)").is_some());
    let play = h.get_by_label("Play vs AI");
    assert!(
        !play.accesskit_node().is_disabled(),
        "Play vs AI is enabled"
    );
    play.click();
    h.run();
    assert!(
        h.query_by_label("Start").is_some(),
        "the new-game screen opens"
    );
}
