//! The documentation against the binary: every concrete command line in README.md and
//! docs/*.md (a `$ tokensmith …` or `tokensmith …` line in a code block, not a synopsis
//! with `[options]` or `A|B`) is one the command line accepts, and the repository files
//! it names exist. A renamed option or command fails here before a reader finds it.

use clap::Parser as _;
use tokensmith::cli::Cli;

use crate::support::root;

/// `(file, line, text)` of every concrete example command in the docs.
fn examples() -> Vec<(String, usize, String)> {
    let mut files = vec![root().join("README.md")];
    let mut docs: Vec<_> = std::fs::read_dir(root().join("docs"))
        .expect("docs/")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    docs.sort();
    files.extend(docs);
    let mut out = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).expect("readable");
        let name = file
            .strip_prefix(root())
            .unwrap_or(&file)
            .display()
            .to_string();
        let mut fenced = false;
        for (i, line) in text.lines().enumerate() {
            let trimmed = line.trim_start();
            if trimmed.starts_with("```") {
                fenced = !fenced;
                continue;
            }
            if !fenced {
                continue;
            }
            let command = trimmed.strip_prefix("$ ").unwrap_or(trimmed);
            let Some(args) = command.strip_prefix("tokensmith ") else {
                continue;
            };
            let args = args.split(" #").next().unwrap_or(args).trim();
            // A synopsis, not an example: placeholders and alternatives.
            let synopsis = args.contains('[')
                || args.contains('|')
                || args.contains("...")
                || args.contains('…')
                || args
                    .split_whitespace()
                    .any(|w| w.len() > 1 && w.chars().all(|c| c.is_ascii_uppercase() || c == '.'));
            if !synopsis {
                out.push((name.clone(), i + 1, args.to_string()));
            }
        }
    }
    out
}

#[test]
fn every_documented_command_line_is_accepted() {
    let examples = examples();
    assert!(
        examples.len() >= 30,
        "the docs' examples were not found: {examples:?}"
    );
    let mut wrong = Vec::new();
    for (file, line, args) in &examples {
        let argv = std::iter::once("tokensmith").chain(args.split_whitespace());
        if let Err(e) = Cli::try_parse_from(argv) {
            let first = e.to_string().lines().next().unwrap_or_default().to_string();
            wrong.push(format!("{file}:{line}: `tokensmith {args}`: {first}"));
        }
    }
    assert!(
        wrong.is_empty(),
        "documented commands the binary refuses:\n{}",
        wrong.join("\n")
    );
}

/// Whether the doc shows a file's text (a ```yaml block) in the 60 lines before `line`:
/// an example the reader writes, not a file of the repository.
fn shown_before(file: &str, line: usize) -> bool {
    let text = std::fs::read_to_string(root().join(file)).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    let from = line.saturating_sub(60);
    lines[from..line.min(lines.len())]
        .iter()
        .any(|l| l.trim_start().starts_with("```yaml"))
}

#[test]
fn every_repository_file_a_documented_command_names_exists() {
    let mut missing = Vec::new();
    for (file, line, args) in examples() {
        for word in args.split_whitespace() {
            let repo_path = ["tests/", "mods/", "content/"]
                .iter()
                .any(|p| word.starts_with(p));
            if repo_path
                && !word.contains('*')
                && !root().join(word).exists()
                && !shown_before(&file, line)
            {
                missing.push(format!("{file}:{line}: {word}"));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "documented commands name files that do not exist:\n{}",
        missing.join("\n")
    );
}

/// docs/README.md, the contents page, links every page in docs/ (and the README links it).
#[test]
fn the_contents_page_lists_every_page() {
    let contents = std::fs::read_to_string(root().join("docs/README.md")).expect("docs/README.md");
    let missing: Vec<String> = std::fs::read_dir(root().join("docs"))
        .expect("docs/")
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|name| name.ends_with(".md") && name != "README.md")
        .filter(|name| !contents.contains(&format!("]({name})")))
        .collect();
    assert!(
        missing.is_empty(),
        "docs/README.md does not list {missing:?}"
    );
    let readme = std::fs::read_to_string(root().join("README.md")).expect("README.md");
    assert!(
        readme.contains("(docs/README.md)"),
        "README.md links the contents page"
    );
}
