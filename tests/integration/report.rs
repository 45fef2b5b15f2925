//! `--report FILE.html`: `balance` (one card, `--pack`, `--sequential`, `--tune`,
//! `--variants`) and `simulate` write one self-contained page whose charts are all drawn
//! in a real browser, with hostile card and variant names shown as text, never as markup.

use std::path::{Path, PathBuf};

use crate::index::{browser, headless};
use crate::support::{TempPacks, tokensmith};

/// What breaks out of a script and runs code if a page pastes it as markup.
const PAYLOAD: &str = "</script><img src=x onerror=document.title='owned'>";

/// Base, and a pack whose one card is named [`PAYLOAD`].
fn packs() -> TempPacks {
    TempPacks::new(&[
        (
            "evil/pack.yaml",
            "id: evil\nname: Evil\nversion: 1.0.0\nrequires:\n  - { id: base, version: \"^1\" }\n",
        ),
        (
            "evil/content.yaml",
            &format!("cards:\n  - id: sneaky\n    name: \"{PAYLOAD}\"\n    value: 2\n"),
        ),
    ])
}

/// Run the binary with `args` after the pack options; the report must be written.
fn report(mods: &Path, file: &Path, args: &[&str]) {
    let mut all = vec![
        "--mods",
        mods.to_str().expect("utf-8"),
        "--packs",
        "base,evil",
    ];
    all.extend_from_slice(args);
    let file_arg = file.to_str().expect("utf-8");
    all.extend_from_slice(&["--report", file_arg]);
    let out = tokensmith(&all).output().expect("runs");
    assert!(
        out.status.success(),
        "{args:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("report written to"),
        "{args:?}"
    );
}

#[test]
fn reports_draw_every_chart_and_show_hostile_names_as_text() {
    let packs = packs();
    let dir = tempfile::tempdir().expect("temp");
    let variants = dir.path().join("variants.yaml");
    std::fs::write(
        &variants,
        format!(
            "variants:\n  - name: \"{PAYLOAD}\"\n  - name: value 1\n    cards:\n      - {{ id: base:booster, value: 1 }}\n"
        ),
    )
    .expect("writes");
    let two_decks = ["--deck", "starter", "--deck", "shifters", "--threads", "2"];
    let with = |extra: &[&'static str]| -> Vec<&'static str> {
        let mut v: Vec<&str> = extra.to_vec();
        v.extend_from_slice(&two_decks);
        v
    };
    let variants_arg = variants.to_str().expect("utf-8").to_string();
    // (file, arguments, the charts it has)
    let runs: Vec<(&str, Vec<&str>, usize)> = vec![
        (
            "card.html",
            with(&["balance", "booster", "--control", "sneaky", "--games", "20"]),
            2,
        ),
        (
            "pack.html",
            with(&["balance", "--pack", "evil", "--games", "20"]),
            1,
        ),
        (
            "sequential.html",
            with(&["balance", "booster", "--sequential", "--games", "40"]),
            2,
        ),
        (
            "tune.html",
            with(&[
                "balance",
                "booster",
                "--tune",
                "value",
                "--range",
                "1..3",
                "--games",
                "40",
                "--check-ai",
                "random",
            ]),
            2,
        ),
        (
            "race.html",
            {
                let mut v = with(&["balance", "booster", "--control", "sneaky", "--games", "40"]);
                v.push("--variants");
                v.push(variants_arg.as_str());
                v
            },
            1,
        ),
        (
            "simulate.html",
            vec![
                "simulate",
                "--deck-a",
                "starter",
                "--deck-b",
                "shifters",
                "--games",
                "40",
                "--threads",
                "2",
            ],
            4,
        ),
    ];
    let mut pages: Vec<(PathBuf, usize)> = Vec::new();
    for (name, args, charts) in &runs {
        let file = dir.path().join("out").join(name);
        report(packs.path(), &file, args);
        let html = std::fs::read_to_string(&file).expect("reads");
        assert!(html.starts_with("<!DOCTYPE html>"), "{name}");
        assert!(
            html.contains(&format!("data-charts=\"{charts}\"")),
            "{name}: {charts} charts"
        );
        // Self-contained: no file or network fetched.
        for outside in ["src=\"http", "href=\"http", "<link", "src=\"//"] {
            assert!(!html.contains(outside), "{name}: {outside}");
        }
        // The hostile name never becomes markup: no `<img` anywhere, and the name is
        // shown escaped where the page shows it.
        assert!(!html.to_ascii_lowercase().contains("<img"), "{name}");
        pages.push((file, *charts));
    }
    for name in ["card.html", "race.html"] {
        let html = std::fs::read_to_string(dir.path().join("out").join(name)).expect("reads");
        assert!(
            html.contains(
                "&lt;/script&gt;&lt;img src=x onerror=document.title=&#39;owned&#39;&gt;"
            ),
            "{name}: the name is shown, as text"
        );
    }

    let Some(browser) = browser() else {
        assert!(
            std::env::var_os("TOKENSMITH_REQUIRE_BROWSER").is_none(),
            "TOKENSMITH_REQUIRE_BROWSER is set but no chromium was found"
        );
        eprintln!("no chromium on this machine: the reports were checked without a browser");
        return;
    };
    for (i, (file, charts)) in pages.iter().enumerate() {
        let url = format!("file://{}", file.display());
        let data = dir.path().join(format!("chrome{i}"));
        let dom = headless(
            &browser,
            &data,
            &url,
            &["--dump-dom", "--virtual-time-budget=5000"],
        );
        assert!(
            dom.contains(&format!("data-charts=\"{charts}\" data-drawn=\"{charts}\"")),
            "{}: every chart drawn: {}",
            file.display(),
            dom.lines()
                .find(|l| l.contains("<body"))
                .unwrap_or("no body")
        );
        assert!(
            dom.contains(&format!("{charts} of {charts} charts drawn.")),
            "{}",
            file.display()
        );
        assert!(
            !dom.contains("<img"),
            "{}: no image element",
            file.display()
        );
        assert!(!dom.contains("<title>owned"), "{}", file.display());
    }
    // Screenshots of the race and the simulation: copied into the folder
    // TOKENSMITH_SCREENSHOTS names, when it is set, for a look.
    for name in ["race.html", "simulate.html"] {
        let shot = dir.path().join(name.replace(".html", ".png"));
        headless(
            &browser,
            &dir.path().join("shots"),
            &format!("file://{}", dir.path().join("out").join(name).display()),
            &[&format!("--screenshot={}", shot.display())],
        );
        assert!(shot.is_file(), "the screenshot of {name} was written");
        if let Some(keep) = std::env::var_os("TOKENSMITH_SCREENSHOTS") {
            let keep = PathBuf::from(keep).join(name.replace(".html", ".png"));
            std::fs::copy(&shot, &keep).expect("copies");
            eprintln!("screenshot of {name}: {}", keep.display());
        }
    }
}
