//! Live reload's save-to-applied latency: from a file write until a clean catalog with
//! the change is ready, over 60 saves, for the base pack alone and with a generated pack
//! of 1,000 cards. Prints p50 and p95, and the load alone for comparison.
//!
//! Run with `cargo bench --bench reload`.

use std::path::Path;
use std::time::{Duration, Instant};

use support::{BULK_PACK, bulk_cards};
use tokensmith::content::LoadOptions;
use tokensmith::reload::{DEBOUNCE, Watcher};

#[path = "support.rs"]
mod support;

const SAVES: usize = 60;

fn copy_base(to: &Path) {
    let from = Path::new(env!("CARGO_MANIFEST_DIR")).join("content/base");
    let dest = to.join("content/base");
    std::fs::create_dir_all(&dest).unwrap_or_else(|e| panic!("{e}"));
    for entry in std::fs::read_dir(&from).unwrap_or_else(|e| panic!("{e}")) {
        let path = entry.unwrap_or_else(|e| panic!("{e}")).path();
        if let Some(name) = path.file_name().filter(|_| path.is_file()) {
            std::fs::copy(&path, dest.join(name)).unwrap_or_else(|e| panic!("{e}"));
        }
    }
    std::fs::create_dir_all(to.join("mods")).unwrap_or_else(|e| panic!("{e}"));
}

fn percentile(sorted: &[Duration], p: usize) -> f64 {
    let i = ((sorted.len() * p).div_ceil(100))
        .saturating_sub(1)
        .min(sorted.len() - 1);
    sorted[i].as_secs_f64() * 1000.0
}

fn run(name: &str, bulk: bool) {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    copy_base(dir.path());
    let base_cards = dir.path().join("content/base/cards.yaml");
    let original = std::fs::read_to_string(&base_cards).unwrap_or_else(|e| panic!("{e}"));
    let bulk_file = dir.path().join("mods/bulk/cards.yaml");
    if bulk {
        std::fs::create_dir_all(dir.path().join("mods/bulk")).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(dir.path().join("mods/bulk/pack.yaml"), BULK_PACK)
            .unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(&bulk_file, bulk_cards(1)).unwrap_or_else(|e| panic!("{e}"));
    }
    let options = LoadOptions::standard(&dir.path().join("content"), &dir.path().join("mods"));
    let w = Watcher::start(options, DEBOUNCE, || {}).unwrap_or_else(|e| panic!("{e}"));
    std::thread::sleep(Duration::from_millis(300));
    let (mut latency, mut load) = (Vec::new(), Vec::new());
    let mut cards = 0;
    for i in 0..SAVES {
        let value = 10 + i32::try_from(i).unwrap_or(0);
        let (file, text, card) = if bulk {
            (&bulk_file, bulk_cards(value), "bulk:card_0000")
        } else {
            let text = original.replacen(
                "name: Row Weakener\n    value: 3",
                &format!("name: Row Weakener\n    value: {value}"),
                1,
            );
            (&base_cards, text, "base:weaken_row")
        };
        let t = Instant::now();
        std::fs::write(file, text).unwrap_or_else(|e| panic!("{e}"));
        loop {
            let Some(r) = w.wait(Duration::from_secs(10)) else {
                panic!("{name}: no reload for save {i}");
            };
            let Some(c) = r.loaded.catalog.as_ref() else {
                continue;
            };
            let Ok(id) = c.card_named(card) else { continue };
            if c.card(id).value == value {
                latency.push(t.elapsed());
                load.push(r.took);
                cards = c.cards().len();
                break;
            }
        }
        std::thread::sleep(Duration::from_millis(30));
    }
    latency.sort();
    load.sort();
    println!(
        "{name} ({cards} cards): save to applied p50 {:.1} ms, p95 {:.1} ms; the load alone p50 {:.1} ms, p95 {:.1} ms; {SAVES} saves, debounce {} ms",
        percentile(&latency, 50),
        percentile(&latency, 95),
        percentile(&load, 50),
        percentile(&load, 95),
        DEBOUNCE.as_millis()
    );
}

fn main() {
    // `cargo bench` passes `--bench`; a filter argument picks one case.
    let filter: Option<String> = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    for (name, bulk) in [("base pack", false), ("base + generated pack", true)] {
        if filter.as_deref().is_none_or(|f| name.contains(f)) {
            run(name, bulk);
        }
    }
}
