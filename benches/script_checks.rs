//! `validate` with the static script checks against without, on the shipped packs (base
//! and mods/), in the same run: the median of several loads each, interleaved.
//! `cargo bench --bench script_checks`.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use tokensmith::content::{LoadOptions, PackFolder};

const RUNS: usize = 15;

fn options() -> LoadOptions {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    LoadOptions {
        folders: ["content", "mods"]
            .iter()
            .map(|d| PackFolder {
                path: root.join(d),
                required: true,
            })
            .collect(),
        ..LoadOptions::default()
    }
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    let options = options();
    let (mut with, mut without) = (Vec::new(), Vec::new());
    for _ in 0..RUNS {
        // Without: the content, then every script compiled and its top level run.
        let start = Instant::now();
        let loaded = tokensmith::content::load(&options);
        let catalog = loaded.catalog.expect("the shipped packs load");
        let host = tokensmith::script::ScriptHost::new(&catalog);
        assert!(host.is_ok());
        drop(host);
        without.push(start.elapsed());
        // With: what `validate` does, the static checks included.
        let start = Instant::now();
        let loaded = tokensmith::script::load(&options);
        assert!(loaded.catalog.is_some());
        with.push(start.elapsed());
    }
    let (w, wo) = (median(with), median(without));
    println!(
        "validate on the shipped packs, median of {RUNS}: with checks {:.2} ms, without {:.2} ms, ratio {:.3}",
        w.as_secs_f64() * 1e3,
        wo.as_secs_f64() * 1e3,
        w.as_secs_f64() / wo.as_secs_f64()
    );
}
