//! Loading the shipped packs for the benchmarks.

use std::path::PathBuf;

use tokensmith::content::{LoadOptions, PackFolder};
use tokensmith::rules::Catalog;

/// The shipped content and mods, only `pack` and what it requires, scripts checked.
pub fn load(pack: &str) -> Catalog {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let loaded = tokensmith::script::load(&LoadOptions {
        folders: vec![
            PackFolder {
                path: root.join("content"),
                required: true,
            },
            PackFolder {
                path: root.join("mods"),
                required: true,
            },
        ],
        only: Some(vec![pack.to_string()]),
        rules_patch: None,
    });
    match loaded.catalog {
        Some(c) => c,
        None => panic!("{pack} does not load: {:?}", loaded.diagnostics),
    }
}
