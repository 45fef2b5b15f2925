//! Every scenario under `tests/scenarios/` passes through the real engine.

use tokensmith::scenario::{self, Outcome, PackPaths};

use crate::support::root;

#[test]
fn every_scenario_passes() {
    let dir = root().join("tests/scenarios");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("tests/scenarios exists")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    assert!(
        files.len() >= 40,
        "expected the full scenario suite, found {}",
        files.len()
    );
    let paths = PackPaths {
        content: root().join("content"),
        mods: root().join("mods"),
    };
    let mut problems = Vec::new();
    for file in &files {
        match scenario::run_file(file, &paths) {
            Ok(run) => {
                if let Outcome::Fail(report) = run.outcome {
                    problems.push(format!("FAIL {}:\n{report}", file.display()));
                }
            }
            Err(e) => problems.push(format!(
                "cannot run {}:\n{}",
                file.display(),
                e.diagnostics
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join("\n")
            )),
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}
