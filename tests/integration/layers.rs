//! Tidy checks on the source tree (in the spirit of rust-analyzer's): the layers of
//! ARCHITECTURE.md hold — no module imports from a layer above it, the rules core names
//! no file system, network, clock, Lua or UI, and the modules inside one layer use each
//! other without circles — and the codemap names only files that exist. A file or folder
//! that cannot be read fails the check (it never reads as empty).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::support::root;

/// Each top-level module's layer, lowest first. A module may use its own layer's
/// modules only when listed in `SIBLINGS`, and any lower layer, except that `rules` uses
/// nothing (the pure core: no file system, no Lua, no UI).
const LAYERS: &[(&str, u8)] = &[
    ("rules", 0),
    ("fsutil", 1),
    ("timeline", 1),
    ("observe", 1),
    ("content", 2),
    ("script", 3),
    ("scenario", 4),
    ("ai", 4),
    ("reload", 4),
    ("profile", 4),
    ("packs", 4),
    ("replay", 5),
    ("net", 6),
    ("index", 6),
    ("app", 7),
    ("cli", 8),
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
    let entries =
        std::fs::read_dir(dir).unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()));
    for entry in entries {
        let path = entry
            .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()))
            .path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Every source file under `src/`, sorted, with its text.
fn sources() -> Vec<(PathBuf, String)> {
    let src = root().join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    assert!(!files.is_empty(), "no source files under {}", src.display());
    files
        .into_iter()
        .map(|file| {
            let text = std::fs::read_to_string(&file)
                .unwrap_or_else(|e| panic!("cannot read {}: {e}", file.display()));
            (file, text)
        })
        .collect()
}

/// The text without its comments (`//` to the end of a line), so documentation that
/// mentions a path is not a use of it. Naive about `//` inside strings, which only hides
/// more.
fn code(text: &str) -> String {
    text.lines()
        .map(|line| line.split_once("//").map_or(line, |(code, _)| code))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The top-level modules a source text names through `crate::`: `crate::rules::Cell`,
/// and each member of `crate::{rules::Cell, content}`.
fn crate_uses(text: &str) -> BTreeSet<String> {
    uses_after(text, "crate::")
}

/// The first name after each `prefix` in `text` (`prefix` not preceded by more of a
/// path or a longer name), and each member's first name in a group: `prefix{a::X, b}`.
fn uses_after(text: &str, prefix: &str) -> BTreeSet<String> {
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect()
    };
    let mut found = BTreeSet::new();
    for (at, _) in text.match_indices(prefix) {
        // Not `tokensmith_crate::` or a longer name ending in `crate`.
        if text[..at]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':')
        {
            continue;
        }
        let rest = &text[at + prefix.len()..];
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
    let mut problems = Vec::new();
    let mut modules_seen = BTreeSet::new();
    for (file, text) in &sources() {
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
        for used in crate_uses(&code(text)) {
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

/// What the rules core must not name: the file system, the network, clocks, Lua, the UI.
const FORBIDDEN_IN_RULES: &[&str] = &[
    "std::fs",
    "std::net",
    "std::time",
    "Instant",
    "SystemTime",
    "mlua",
    "egui",
    "eframe",
];

/// Where `text` names `word` as a whole path or name (not inside a longer name).
fn names(text: &str, word: &str) -> bool {
    let is_name = |c: char| c.is_alphanumeric() || c == '_';
    text.match_indices(word).any(|(at, _)| {
        !text[..at].chars().next_back().is_some_and(is_name)
            && !text[at + word.len()..].chars().next().is_some_and(is_name)
    })
}

/// The forbidden names each file under `src/rules/` uses (comments left out).
fn rules_problems(files: &[(PathBuf, String)]) -> Vec<String> {
    let rules = root().join("src").join("rules");
    let mut problems = Vec::new();
    for (file, text) in files.iter().filter(|(f, _)| f.starts_with(&rules)) {
        let code = code(text);
        for word in FORBIDDEN_IN_RULES {
            if names(&code, word) {
                problems.push(format!(
                    "{}: the rules core names `{word}` (no file system, network, clock, Lua \
                     or UI in src/rules)",
                    file.display()
                ));
            }
        }
    }
    problems
}

#[test]
fn the_rules_core_names_no_file_system_network_clock_lua_or_ui() {
    let files = sources();
    assert!(
        files
            .iter()
            .any(|(f, _)| f.starts_with(root().join("src/rules"))),
        "no files under src/rules"
    );
    let problems = rules_problems(&files);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_rules_check_sees_forbidden_names_but_not_comments_or_longer_names() {
    let file = |text: &str| vec![(root().join("src/rules/x.rs"), text.to_string())];
    assert_eq!(rules_problems(&file("use std::fs::File;")).len(), 1);
    assert_eq!(
        rules_problems(&file("let t = std::time::Instant::now();")).len(),
        2
    );
    assert_eq!(rules_problems(&file("fn f(l: &mlua::Lua) {}")).len(), 1);
    assert!(rules_problems(&file("// std::fs is not used here\nlet instant_win = 1;")).is_empty());
    let elsewhere = vec![(root().join("src/reload/x.rs"), "use std::fs;".to_string())];
    assert!(rules_problems(&elsewhere).is_empty());
}

/// The module inside its top-level module that a file under `src/` belongs to, and that
/// top-level module: `src/content/compile/grid.rs` is `compile` in `content`. `None` for
/// the top-level module's own file (`mod.rs`, or `src/x.rs`), which may use its children
/// and be used by them.
fn inner_module(rel: &Path) -> Option<(String, String)> {
    let parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    match parts.as_slice() {
        [top, file] if file != "mod.rs" => {
            Some((top.clone(), file.trim_end_matches(".rs").to_string()))
        }
        [top, folder, _, ..] => Some((top.clone(), folder.clone())),
        _ => None,
    }
}

/// The inner modules `text` (a file of `inner` in `top`, `depth` folders below `src/top/`)
/// uses: through `crate::top::x`, or `super::x` from a file at the first level, or
/// `super::super::x` from one a folder down. Only names in `siblings` count.
fn inner_uses(
    text: &str,
    top: &str,
    depth: usize,
    inner: &str,
    siblings: &BTreeSet<String>,
) -> BTreeSet<String> {
    let mut used = uses_after(text, &format!("crate::{top}::"));
    let up = "super::".repeat(depth + 1);
    used.extend(uses_after(text, &up));
    used.retain(|m| m != inner && siblings.contains(m));
    used
}

/// The circles of a graph, each as its nodes in order (one per strongly connected part
/// with more than one node, or a node that uses itself).
fn circles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    // Which nodes reach which (the graphs are small: a plain closure is enough).
    let reach = |from: &String| -> BTreeSet<String> {
        let mut seen = BTreeSet::new();
        let mut todo: Vec<&String> = graph.get(from).into_iter().flatten().collect();
        while let Some(n) = todo.pop() {
            if seen.insert(n.clone()) {
                todo.extend(graph.get(n).into_iter().flatten());
            }
        }
        seen
    };
    let reaches: BTreeMap<&String, BTreeSet<String>> =
        graph.keys().map(|n| (n, reach(n))).collect();
    let mut done = BTreeSet::new();
    let mut found = Vec::new();
    for n in graph.keys() {
        if done.contains(n) || !reaches[n].contains(n) {
            continue;
        }
        let part: Vec<String> = graph
            .keys()
            .filter(|m| reaches[n].contains(*m) && reaches[*m].contains(n))
            .cloned()
            .collect();
        done.extend(part.iter().cloned());
        found.push(part);
    }
    found
}

/// Every circle of uses between the modules inside one top-level module.
fn inner_circles(files: &[(PathBuf, String)]) -> Vec<String> {
    let src = root().join("src");
    // Each top-level module's inner modules, then the uses between them.
    let mut inner: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (file, _) in files {
        let rel = file.strip_prefix(&src).unwrap_or(file);
        if let Some((top, name)) = inner_module(rel) {
            inner.entry(top).or_default().insert(name);
        }
    }
    let mut graphs: BTreeMap<String, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
    for (file, text) in files {
        let rel = file.strip_prefix(&src).unwrap_or(file);
        let Some((top, name)) = inner_module(rel) else {
            continue;
        };
        // Tests are not the layering: a test module may drive its module through a
        // sibling (the host's tests through a real client).
        let test_file = rel
            .file_stem()
            .and_then(|s| s.to_str())
            .is_some_and(|s| s == "tests" || s.ends_with("_tests"));
        if test_file {
            continue;
        }
        let code = code(text);
        let code = code
            .split("#[cfg(test)]\nmod tests")
            .next()
            .unwrap_or_default();
        let depth = rel.components().count() - 2;
        let used = inner_uses(code, &top, depth, &name, &inner[&top]);
        graphs
            .entry(top)
            .or_default()
            .entry(name)
            .or_default()
            .extend(used);
    }
    let mut problems = Vec::new();
    for (top, graph) in &graphs {
        for circle in circles(graph) {
            problems.push(format!(
                "src/{top}: {} use each other in a circle (move the shared piece into a \
                 module below them, or turn one use around)",
                circle.join(", ")
            ));
        }
    }
    problems
}

#[test]
fn modules_inside_a_layer_use_each_other_without_circles() {
    let problems = inner_circles(&sources());
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_circle_check_finds_a_circle_through_super_crate_and_a_folder() {
    let file = |rel: &str, text: &str| (root().join("src").join(rel), text.to_string());
    let files = vec![
        file("net/a.rs", "use super::b::X;"),
        file("net/b.rs", "use crate::net::{c::Y, frame};"),
        file("net/c/mod.rs", "fn f() { super::super::a::z(); }"),
        file("net/c/d.rs", ""),
        file("net/frame.rs", "use std::io; // super::c::W"),
        file("net/mod.rs", "use self::a::Z; mod a; mod b;"),
    ];
    let problems = inner_circles(&files);
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(
        problems[0].contains("a, b, c use each other"),
        "{problems:?}"
    );
    // Cut the circle: no more.
    let mut cut = files.clone();
    cut[2] = file("net/c/mod.rs", "");
    assert!(inner_circles(&cut).is_empty());
    // A test module's uses are not the layering.
    let mut tests = cut.clone();
    tests.push(file("net/b/tests.rs", "use crate::net::a::X;"));
    tests.push(file(
        "net/c/d.rs",
        "fn f() {}\n#[cfg(test)]\nmod tests {\n    use super::super::a::X;\n}",
    ));
    assert!(inner_circles(&tests).is_empty());
    tests.push(file("net/c/e.rs", "use super::super::a::X;"));
    assert_eq!(inner_circles(&tests).len(), 1);
}

#[test]
fn the_codemap_names_only_files_that_exist() {
    let path = root().join("ARCHITECTURE.md");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    assert!(
        text.contains("## Codemap"),
        "{} has no codemap section",
        path.display()
    );
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

/// Where `unsafe` code may be: the one room of the script host, and the one `syncfs` call of
/// `fsutil::sync_dir`. Everything else denies it (`#![deny(unsafe_code)]` in src/lib.rs and src/main.rs).
const UNSAFE_ALLOWED: &[&str] = &["src/script/raw/", "src/fsutil/mod.rs"];

/// The text without string and character literals (each left as `""`), so a message
/// that says "unsafe" is not code. Naive about raw strings across lines, which only
/// hides more.
fn without_strings(code: &str) -> String {
    let mut out = String::with_capacity(code.len());
    let mut chars = code.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '"' {
            out.push(c);
            continue;
        }
        out.push_str("\"\"");
        while let Some(c) = chars.next() {
            match c {
                '\\' => {
                    chars.next();
                }
                '"' => break,
                _ => {}
            }
        }
    }
    out
}

/// `file:line` of each `unsafe` in `files` outside [`UNSAFE_ALLOWED`], and of each
/// `allow(unsafe_code)` outside it except the one on `mod raw`.
fn unsafe_problems(files: &[(PathBuf, String)]) -> Vec<String> {
    let src = root().join("src");
    let mut problems = Vec::new();
    for (file, text) in files {
        let rel = file.strip_prefix(root()).unwrap_or(file);
        let rel_text = rel.to_string_lossy().replace('\\', "/");
        let allowed = UNSAFE_ALLOWED.iter().any(|a| rel_text.starts_with(a));
        if !file.starts_with(&src) || allowed {
            continue;
        }
        let code = without_strings(&code(text));
        let lines: Vec<&str> = code.lines().collect();
        for (n, line) in lines.iter().enumerate() {
            if names(line, "unsafe") {
                problems.push(format!(
                    "{}:{}: `unsafe` outside src/script/raw (put the call behind a safe \
                     function there)",
                    file.display(),
                    n + 1
                ));
            }
            let next = lines.get(n + 1).map_or("", |l| l.trim());
            if line.contains("allow(unsafe_code)")
                && !(rel_text == "src/script/mod.rs" && next == "mod raw;")
            {
                problems.push(format!(
                    "{}:{}: `allow(unsafe_code)` outside src/script/raw",
                    file.display(),
                    n + 1
                ));
            }
        }
    }
    problems
}

#[test]
fn unsafe_code_lives_only_in_the_raw_room() {
    let files = sources();
    let problems = unsafe_problems(&files);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    for top in ["src/lib.rs", "src/main.rs"] {
        let text = &files
            .iter()
            .find(|(f, _)| f.ends_with(top))
            .unwrap_or_else(|| panic!("{top} is missing"))
            .1;
        assert!(
            text.contains("#![deny(unsafe_code)]"),
            "{top} must deny `unsafe` (`#![deny(unsafe_code)]`)"
        );
    }
}

#[test]
fn the_unsafe_check_sees_code_but_not_comments_strings_or_the_room() {
    let file = |rel: &str, text: &str| vec![(root().join(rel), text.to_string())];
    assert_eq!(
        unsafe_problems(&file("src/ai/x.rs", "let p = unsafe { *q };")).len(),
        1
    );
    assert_eq!(
        unsafe_problems(&file("src/net/x.rs", "pub unsafe fn f() {}")).len(),
        1
    );
    assert_eq!(
        unsafe_problems(&file("src/app/x.rs", "#[allow(unsafe_code)]\nfn f() {}")).len(),
        1
    );
    assert!(
        unsafe_problems(&file(
            "src/packs/x.rs",
            "/// An unsafe name.\nlet m = \"an unsafe \\\" name\"; // unsafe"
        ))
        .is_empty()
    );
    assert!(unsafe_problems(&file("src/script/raw/x.rs", "unsafe { f() }")).is_empty());
    assert!(
        unsafe_problems(&file(
            "src/script/mod.rs",
            "#[allow(unsafe_code)]\nmod raw;"
        ))
        .is_empty()
    );
    assert_eq!(
        unsafe_problems(&file(
            "src/script/mod.rs",
            "#[allow(unsafe_code)]\nmod ctx;"
        ))
        .len(),
        1
    );
}

/// Printing and the process's surroundings the rules core may not use: what a rule does
/// depends on the state and the move alone, and it says nothing on its own. The one
/// exception is `never!` (src/rules/never.rs), which a release build uses to report a
/// bug once on stderr instead of giving a wrong answer silently.
const FORBIDDEN_EFFECTS_IN_RULES: &[&str] = &[
    "println!",
    "print!",
    "eprintln!",
    "eprint!",
    "dbg!",
    "std::env",
    "std::process",
    "std::thread",
];

/// `file:line` of each printing macro or process access under `src/rules/` (strings and
/// comments left out), `never.rs` aside.
fn rules_effect_problems(files: &[(PathBuf, String)]) -> Vec<String> {
    let rules = root().join("src").join("rules");
    let mut problems = Vec::new();
    for (file, text) in files.iter().filter(|(f, _)| f.starts_with(&rules)) {
        if file.ends_with("never.rs") {
            continue;
        }
        let code = without_strings(&code(text));
        for (n, line) in code.lines().enumerate() {
            for word in FORBIDDEN_EFFECTS_IN_RULES {
                if names(line, word) {
                    problems.push(format!(
                        "{}:{}: the rules core uses `{word}` (no printing, environment, \
                         process or threads in src/rules: return what happened as events or \
                         errors)",
                        file.display(),
                        n + 1
                    ));
                }
            }
        }
    }
    problems
}

#[test]
fn the_rules_core_prints_nothing_and_reads_no_environment() {
    let problems = rules_effect_problems(&sources());
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_rules_effect_check_sees_macros_but_not_strings_comments_or_never() {
    let file = |rel: &str, text: &str| vec![(root().join(rel), text.to_string())];
    assert_eq!(
        rules_effect_problems(&file("src/rules/x.rs", "fn f() { println!(\"{}\", 1); }")).len(),
        1
    );
    assert_eq!(
        rules_effect_problems(&file("src/rules/x.rs", "let v = std::env::var(\"X\");")).len(),
        1
    );
    assert_eq!(
        rules_effect_problems(&file("src/rules/x.rs", "let s = \"println!\"; // dbg!(x)")).len(),
        0
    );
    assert_eq!(
        rules_effect_problems(&file("src/rules/never.rs", "eprintln!(\"bug\");")).len(),
        0
    );
    assert_eq!(
        rules_effect_problems(&file("src/ai/x.rs", "println!(\"fine here\");")).len(),
        0
    );
}

/// The error type of a `-> Result<T, E>` return in `signature`, when there is one.
fn result_error(signature: &str) -> Option<String> {
    let at = signature.find("-> Result<")? + "-> Result<".len();
    let mut depth = 0usize;
    let mut args = vec![String::new()];
    for c in signature[at..].chars() {
        match c {
            '<' | '(' | '[' => depth += 1,
            '>' | ')' | ']' if depth == 0 => break,
            '>' | ')' | ']' => depth -= 1,
            ',' if depth == 0 => {
                args.push(String::new());
                continue;
            }
            _ => {}
        }
        if let Some(last) = args.last_mut() {
            last.push(c);
        }
    }
    (args.len() >= 2).then(|| {
        args.last()
            .map(|a| a.trim().to_string())
            .unwrap_or_default()
    })
}

/// `file:line` of each public function of the library (outside the command line and the
/// client, its edges) whose error is a bare `String`.
fn string_error_problems(files: &[(PathBuf, String)]) -> Vec<String> {
    let src = root().join("src");
    let edges = [src.join("cli"), src.join("app"), src.join("main.rs")];
    let mut problems = Vec::new();
    for (file, text) in files {
        if !file.starts_with(&src) || edges.iter().any(|e| file.starts_with(e)) {
            continue;
        }
        let code = without_strings(&code(text));
        for (at, _) in code.match_indices("pub fn ") {
            let rest = &code[at..];
            let end = rest.find(['{', ';']).unwrap_or(rest.len());
            let signature = rest[..end].split(" where").next().unwrap_or_default();
            if result_error(signature).as_deref() == Some("String") {
                problems.push(format!(
                    "{}:{}: a public function returns `Result<_, String>`: give it a typed \
                     error (thiserror) that says what went wrong and where",
                    file.display(),
                    code[..at].lines().count()
                ));
            }
        }
    }
    problems
}

#[test]
fn no_public_library_function_returns_a_string_error() {
    let problems = string_error_problems(&sources());
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_string_error_check_reads_signatures_over_lines_and_generics() {
    let file = |rel: &str, text: &str| vec![(root().join(rel), text.to_string())];
    assert_eq!(
        string_error_problems(&file(
            "src/net/x.rs",
            "pub fn f(\n    a: u8,\n) -> Result<(Vec<u8>, String), String> {\n    todo!()\n}"
        ))
        .len(),
        1
    );
    assert_eq!(
        string_error_problems(&file(
            "src/net/x.rs",
            "pub fn f() -> Result<HashMap<String, String>, Error> {}"
        ))
        .len(),
        0
    );
    assert_eq!(
        string_error_problems(&file("src/cli/x.rs", "pub fn f() -> Result<(), String> {}")).len(),
        0,
        "the command line is an edge"
    );
    assert_eq!(
        string_error_problems(&file(
            "src/ai/x.rs",
            "pub fn f<T>(x: T) -> Result<T, String> where T: Clone {}"
        ))
        .len(),
        1
    );
}

/// `file:line` of each code block in a doc comment that rustdoc would take for Rust (no
/// language, or `rust`): with doc tests off (Cargo.toml), such an example would never run.
fn doc_code_problems(files: &[(PathBuf, String)]) -> Vec<String> {
    let mut problems = Vec::new();
    for (file, text) in files {
        let mut open = false;
        for (n, line) in text.lines().enumerate() {
            let t = line.trim_start();
            let Some(doc) = t.strip_prefix("///").or_else(|| t.strip_prefix("//!")) else {
                continue;
            };
            let Some(lang) = doc.trim().strip_prefix("```") else {
                continue;
            };
            if open {
                open = false;
                continue;
            }
            open = true;
            let lang = lang.trim();
            if lang.is_empty() || lang.split(',').any(|l| l.trim() == "rust") {
                problems.push(format!(
                    "{}:{}: a Rust code block in a doc comment would never run (doc tests are \
                     off): mark it `text`, or make it a test",
                    file.display(),
                    n + 1
                ));
            }
        }
    }
    problems
}

#[test]
fn no_doc_comment_holds_an_example_that_would_not_run() {
    let problems = doc_code_problems(&sources());
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_doc_code_check_sees_rust_blocks_but_not_text_or_closing_fences() {
    let file = |text: &str| vec![(root().join("src/ai/x.rs"), text.to_string())];
    assert_eq!(
        doc_code_problems(&file("/// ```\n/// let x = 1;\n/// ```\n")).len(),
        1
    );
    assert_eq!(
        doc_code_problems(&file("//! ```rust,no_run\n//! f();\n//! ```\n")).len(),
        1
    );
    assert_eq!(
        doc_code_problems(&file(
            "/// ```text\n/// a layout\n/// ```\n/// ```sh\n/// ls\n/// ```\n"
        ))
        .len(),
        0
    );
}

/// Where threads may be started directly: the one helper, and the watchdog's own tiny
/// thread (it never runs Lua). Simulations' rayon pools are built in `ai::simulate`.
const THREADS_ALLOWED: &[&str] = &["src/script/threads.rs", "src/script/raw/watchdog.rs"];

/// `file:line` of each thread started outside [`THREADS_ALLOWED`] (test modules aside),
/// and of each rayon pool built outside `ai::simulate`.
fn thread_problems(files: &[(PathBuf, String)]) -> Vec<String> {
    let src = root().join("src");
    let mut problems = Vec::new();
    for (file, text) in files {
        let rel = file.strip_prefix(root()).unwrap_or(file);
        let rel_text = rel.to_string_lossy().replace('\\', "/");
        if !file.starts_with(&src) || THREADS_ALLOWED.contains(&rel_text.as_str()) {
            continue;
        }
        let code = without_strings(&code(text));
        let code = code
            .split("#[cfg(test)]\nmod tests")
            .next()
            .unwrap_or_default();
        for (n, line) in code.lines().enumerate() {
            let started = ["thread::Builder", "thread::spawn", "spawn_scoped("]
                .iter()
                .any(|w| line.contains(w))
                && !line.contains("script::threads::");
            if started {
                problems.push(format!(
                    "{}:{}: a thread started by hand: use crate::script::threads::spawn (it \
                     names the thread and gives it the stack a hook needs)",
                    file.display(),
                    n + 1
                ));
            }
            if line.contains("ThreadPoolBuilder") && rel_text != "src/ai/simulate.rs" {
                problems.push(format!(
                    "{}:{}: a rayon pool built outside ai::simulate (build pools there, with \
                     script::THREAD_STACK)",
                    file.display(),
                    n + 1
                ));
            }
        }
    }
    problems
}

#[test]
fn every_thread_is_started_with_the_stack_hooks_need() {
    let problems = thread_problems(&sources());
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_thread_check_sees_bare_spawns_but_not_the_helper_or_tests() {
    let file = |rel: &str, text: &str| vec![(root().join(rel), text.to_string())];
    assert_eq!(
        thread_problems(&file(
            "src/net/x.rs",
            "let h = std::thread::spawn(move || 1);"
        ))
        .len(),
        1
    );
    assert_eq!(
        thread_problems(&file(
            "src/app/x.rs",
            "std::thread::Builder::new()\n    .name(\"x\".into())\n    .spawn(f);"
        ))
        .len(),
        1
    );
    assert_eq!(
        thread_problems(&file(
            "src/app/x.rs",
            "let h = crate::script::threads::spawn(\"x\", f);\n#[cfg(test)]\nmod tests {\n    fn t() { std::thread::spawn(|| 1); }\n}"
        ))
        .len(),
        0
    );
    assert_eq!(
        thread_problems(&file("src/ai/x.rs", "rayon::ThreadPoolBuilder::new()")).len(),
        1
    );
}
