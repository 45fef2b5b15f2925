//! One test per rules scenario under `tests/scenarios/`, named after its file, so
//! `cargo test push_off_board` runs one and a failure names its file. Each runs the file
//! through the real engine with the shipped packs, as `tokensmith scenario` does.
//!
//! The attack scenarios under `tests/adversarial/scenarios/` (hostile packs, written by
//! `tests/adversarial/generate.py`) run here too, one test each named `adversarial::FILE`:
//! each must pass (every attack refused cleanly) within a generous time bound.
//!
//! After an intended rules change, `tokensmith scenario --actual FILE` prints the
//! `expect:` block the scenario's moves now give, to review and paste into the file
//! (docs/scenarios.md, "When a rule changes").

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use libtest_mimic::{Arguments, Failed, Trial};
use tokensmith::scenario::{self, PackPaths, ScenarioOutcome};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Run one scenario file: a pass, or its report (or why it cannot run) as the failure.
/// A pass also checks the rewrite path: the file with its `expect:` block replaced by the
/// block the game really ended with (what `--actual` prints) passes too.
fn check(file: &Path) -> Result<(), Failed> {
    let paths = PackPaths {
        content: root().join("content"),
        mods: root().join("mods"),
    };
    match scenario::run_file_actual(file, &paths) {
        Ok(run) => match run.outcome {
            ScenarioOutcome::Pass => match run.actual.as_deref() {
                Some(actual) => rewritten_passes(file, actual, &paths),
                None => Err(format!("{}: no `expect:` block was written", file.display()).into()),
            },
            ScenarioOutcome::Fail(report) => Err(format!("{}:\n{report}", file.display()).into()),
        },
        Err(e) => Err(format!(
            "{} cannot be run:\n{}",
            file.display(),
            e.diagnostics
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("\n")
        )
        .into()),
    }
}

/// The scenario with its `expect:` block (the last top-level key of every file here)
/// replaced by `actual`, run from a copy in the same folder (scenarios may name packs
/// relative to themselves): it must pass.
fn rewritten_passes(file: &Path, actual: &str, paths: &PackPaths) -> Result<(), Failed> {
    let text = std::fs::read_to_string(file).map_err(|e| format!("{}: {e}", file.display()))?;
    let Some(at) = text.find("\nexpect:") else {
        return Err(format!("{}: no top-level `expect:` block", file.display()).into());
    };
    // Beside the original (not named `.yaml`, so no listing of the suite picks it up);
    // removed when dropped.
    let dir = file.parent().unwrap_or(Path::new("."));
    let mut copy = tempfile::Builder::new()
        .prefix(".rewritten-")
        .suffix(".tmp")
        .tempfile_in(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?;
    copy.write_all(format!("{}\n{actual}", &text[..at]).as_bytes())
        .map_err(|e| format!("{}: {e}", copy.path().display()))?;
    match scenario::run_file(copy.path(), paths) {
        Ok(run) if run.outcome == ScenarioOutcome::Pass => Ok(()),
        Ok(run) => Err(format!(
            "{}: the rewritten expectations do not pass:\n{actual}\n{:?}",
            file.display(),
            run.outcome
        )
        .into()),
        Err(e) => Err(format!(
            "{}: the rewritten scenario cannot run: {:?}\n{actual}",
            file.display(),
            e.diagnostics
        )
        .into()),
    }
}

/// Generous: a loaded 2-core machine in a debug build never reaches it, while a hang
/// (the attacks run for hours or forever unchecked) always does.
const ATTACK_BOUND: Duration = Duration::from_secs(60);

/// Run one attack scenario: it passes (the attack is refused as the file expects) within
/// [`ATTACK_BOUND`].
fn check_attack(file: &Path) -> Result<(), Failed> {
    let paths = PackPaths {
        content: root().join("content"),
        mods: root().join("mods"),
    };
    let started = Instant::now();
    let result = match scenario::run_file(file, &paths) {
        Ok(run) => match run.outcome {
            ScenarioOutcome::Pass => Ok(()),
            ScenarioOutcome::Fail(report) => Err(format!("{}:\n{report}", file.display()).into()),
        },
        Err(e) => Err(format!("cannot run {}: {:?}", file.display(), e.diagnostics).into()),
    };
    let took = started.elapsed();
    if took >= ATTACK_BOUND {
        return Err(format!("{} took {took:?}", file.display()).into());
    }
    result
}

/// The `*.yaml` files of `dir`, sorted.
fn yaml_files(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut files = Vec::new();
    for entry in entries {
        let path = entry.map_err(|e| format!("{}: {e}", dir.display()))?.path();
        if path.extension().is_some_and(|e| e == "yaml") {
            files.push(path);
        }
    }
    files.sort();
    Ok(files)
}

fn stem(file: &Path) -> String {
    file.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// A test that fails unless a suite has at least `least` files: a suite that lost its
/// files (a moved folder, a bad glob) must not pass as empty.
fn complete(name: &str, what: &str, count: usize, least: usize) -> Trial {
    let what = what.to_string();
    Trial::test(name, move || {
        if count >= least {
            Ok(())
        } else {
            Err(format!("expected the full {what} ({least} or more files), found {count}").into())
        }
    })
}

fn main() -> std::process::ExitCode {
    let args = Arguments::from_args();
    let (files, attacks) = match (
        yaml_files(&root().join("tests/scenarios")),
        yaml_files(&root().join("tests/adversarial/scenarios")),
    ) {
        (Ok(files), Ok(attacks)) => (files, attacks),
        (Err(e), _) | (_, Err(e)) => {
            eprintln!("{e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    let (count, attack_count) = (files.len(), attacks.len());
    let mut trials: Vec<Trial> = files
        .into_iter()
        .map(|file| Trial::test(stem(&file), move || check(&file)).with_kind("scenario"))
        .collect();
    trials.extend(attacks.into_iter().map(|file| {
        Trial::test(format!("adversarial::{}", stem(&file)), move || {
            check_attack(&file)
        })
        .with_kind("attack")
    }));
    trials.push(complete(
        "the_suite_is_complete",
        "scenario suite",
        count,
        100,
    ));
    trials.push(complete(
        "adversarial::the_suite_is_complete",
        "attack suite",
        attack_count,
        30,
    ));
    libtest_mimic::run(&args, trials).exit_code()
}
