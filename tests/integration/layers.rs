//! Tidy checks on the source tree (in the spirit of rust-analyzer's): the layers of
//! ARCHITECTURE.md hold — no module imports from a layer above it — and the codemap names
//! only files that exist.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::support::root;

/// Each top-level module's layer, lowest first. A module may use its own layer's
/// modules only when listed in `SIBLINGS`, and any lower layer, except that `rules` uses
/// nothing (the pure core: no file system, no Lua, no UI).
const LAYERS: &[(&str, u8)] = &[
    ("rules", 0),
    ("fsutil", 1),
    ("timeline", 1),
    ("content", 2),
    ("script", 3),
    ("scenario", 4),
    ("ai", 4),
    ("reload", 4),
    ("profile", 4),
    ("packs", 4),
    ("net", 5),
    ("replay", 5),
    ("app", 6),
    ("cli", 7),
];

/// Uses allowed inside one layer: `(from, to)`.
const SIBLINGS: &[(&str, &str)] = &[];

fn layer(module: &str) -> Option<u8> {
    LAYERS.iter().find(|(m, _)| *m == module).map(|&(_, l)| l)
}

fn allowed(from: &str, to: &str) -> bool {
    if from == to {
        return true;
    }
    if from == "rules" {
        return false;
    }
    match (layer(from), layer(to)) {
        (Some(a), Some(b)) if b < a => true,
        (Some(a), Some(b)) if a == b => SIBLINGS.contains(&(from, to)),
        _ => false,
    }
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The top-level modules a source text names through `crate::`: `crate::rules::Cell`,
/// and each member of `crate::{rules::Cell, content}`.
fn crate_uses(text: &str) -> BTreeSet<String> {
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect()
    };
    let mut found = BTreeSet::new();
    for (at, _) in text.match_indices("crate::") {
        // Not `tokensmith_crate::` or a longer name ending in `crate`.
        if text[..at]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':')
        {
            continue;
        }
        let rest = &text[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let mut depth = 0usize;
            let mut start = true;
            for (i, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => start = true,
                    c if c.is_whitespace() => {}
                    _ if start && depth == 0 => {
                        found.insert(ident(&group[i..]));
                        start = false;
                    }
                    _ => start = false,
                }
            }
        } else {
            found.insert(ident(rest));
        }
    }
    found.retain(|m| !m.is_empty());
    found
}

#[test]
fn no_module_imports_from_a_layer_above_it() {
    let src = root().join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    let mut problems = Vec::new();
    let mut modules_seen = BTreeSet::new();
    for file in &files {
        let rel = file.strip_prefix(&src).unwrap_or(file);
        let first = rel
            .components()
            .next()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .unwrap_or_default();
        let module = first.trim_end_matches(".rs").to_string();
        if module == "lib" || module == "main" {
            continue;
        }
        assert!(
            layer(&module).is_some(),
            "src/{first}: a top-level module missing from LAYERS in tests/integration/layers.rs \
             (and from ARCHITECTURE.md's layer list)"
        );
        modules_seen.insert(module.clone());
        let text = std::fs::read_to_string(file).unwrap_or_default();
        for used in crate_uses(&text) {
            if layer(&used).is_some() && !allowed(&module, &used) {
                problems.push(format!(
                    "{}: `{module}` uses `crate::{used}`, a layer above it or beside it",
                    file.display()
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    for (module, _) in LAYERS {
        assert!(
            modules_seen.contains(*module),
            "LAYERS names `{module}`, which is no longer a module of src/"
        );
    }
}

#[test]
fn the_layer_checker_sees_plain_and_grouped_uses() {
    let uses = crate_uses(
        "use crate::rules::Cell;\nuse crate::{content::{self, X}, script};\nfoo::crate::app;\n\
         let x = crate::ai::level(1);",
    );
    let expected: BTreeSet<String> = ["ai", "content", "rules", "script"]
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(uses, expected);
    assert!(!allowed("rules", "content"));
    assert!(!allowed("rules", "fsutil"));
    assert!(!allowed("content", "script"));
    assert!(!allowed("ai", "scenario"));
    assert!(allowed("cli", "app"));
    assert!(allowed("script", "rules"));
}

#[test]
fn the_codemap_names_only_files_that_exist() {
    let text = std::fs::read_to_string(root().join("ARCHITECTURE.md")).unwrap_or_default();
    let mut problems = Vec::new();
    let mut section: Option<PathBuf> = None;
    for (n, line) in text.lines().enumerate() {
        if let Some(heading) = line.strip_prefix("### ") {
            // `### `src/rules/` — …`: file names below are relative to that folder.
            section = heading
                .split('`')
                .nth(1)
                .filter(|p| p.ends_with('/'))
                .map(PathBuf::from);
            continue;
        }
        for (i, token) in line.split('`').enumerate() {
            if i % 2 == 0 || token.contains(' ') || token.contains('*') {
                continue;
            }
            let path = if [
                "src/", "tests/", "benches/", "docs/", "content/", "mods/", "schemas/",
            ]
            .iter()
            .any(|p| token.starts_with(p))
            {
                Some(PathBuf::from(token))
            } else if token.ends_with(".rs") {
                section.as_ref().map(|s| s.join(token))
            } else {
                None
            };
            if let Some(path) = path
                && !root().join(&path).exists()
            {
                problems.push(format!(
                    "ARCHITECTURE.md:{}: `{token}` names {}, which does not exist",
                    n + 1,
                    path.display()
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
