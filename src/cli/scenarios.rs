//! `tokensmith scenario FILE...`: run scenario files and report each as pass or fail.

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use super::context::Context;
use crate::rules::describe;
use crate::scenario::{self, PackPaths, ScenarioOutcome};

/// Run each file; exit 0 when all pass, 1 on a failure, 2 when one cannot be run.
pub fn run(
    ctx: &Context,
    files: &[PathBuf],
    events: bool,
    actual: bool,
) -> std::io::Result<ExitCode> {
    let mut out = std::io::stdout().lock();
    let paths = PackPaths {
        content: ctx.content().to_path_buf(),
        mods: ctx.mods().to_path_buf(),
    };
    let (mut passed, mut failed, mut unreadable) = (0usize, 0usize, 0usize);
    for file in files {
        let run = if actual {
            scenario::run_file_actual(file, &paths)
        } else {
            scenario::run_file(file, &paths)
        };
        match run {
            Ok(run) => {
                match &run.outcome {
                    ScenarioOutcome::Pass => {
                        passed += 1;
                        writeln!(out, "pass  {} ({})", run.name, file.display())?;
                    }
                    ScenarioOutcome::Fail(report) => {
                        failed += 1;
                        writeln!(out, "FAIL  {} ({})", run.name, file.display())?;
                        for line in report.lines() {
                            writeln!(out, "      {line}")?;
                        }
                    }
                }
                if let Some(block) = &run.actual {
                    // Unindented, so it can be pasted over the file's block as it is.
                    write!(out, "{block}")?;
                }
                if events {
                    for (i, e) in run.events.iter().enumerate() {
                        writeln!(
                            out,
                            "      {:>4}  {}",
                            i + 1,
                            describe::event(&run.catalog, e)
                        )?;
                    }
                }
            }
            Err(e) => {
                unreadable += 1;
                writeln!(out, "ERROR {} cannot be run:", file.display())?;
                for d in &e.diagnostics {
                    writeln!(out, "      {d}")?;
                }
            }
        }
    }
    writeln!(out, "{passed} passed, {} failed", failed + unreadable)?;
    Ok(if unreadable > 0 {
        ExitCode::from(2)
    } else if failed > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
