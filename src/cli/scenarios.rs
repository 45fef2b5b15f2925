//! `tokensmith scenario FILE...`: run scenario files and report each as pass or fail.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use super::context::Context;
use super::packset::get_needed;
use crate::content::yaml::Loc;
use crate::content::yaml::Located;
use crate::index::needs::{Gotten, Needed};
use crate::rules::describe;
use crate::scenario::{self, PackPaths, ScenarioOutcome};

/// How to run the files: what to print besides pass or fail, and whether to get their
/// packs first.
#[derive(Clone, Copy, Debug, Default)]
pub struct ScenarioFlags {
    /// Print every event of each game.
    pub events: bool,
    /// Print the `expect:` block each game really ended with.
    pub actual: bool,
    /// Get the packs each file names in `pack_hashes` that are missing here first.
    pub sync: bool,
    /// With `sync`: keep them installed and enabled.
    pub keep: bool,
}

/// Run each file; exit 0 when all pass, 1 on a failure, 2 when one cannot be run.
pub fn run(ctx: &Context, files: &[PathBuf], flags: ScenarioFlags) -> anyhow::Result<ExitCode> {
    let ScenarioFlags {
        events,
        actual,
        sync,
        keep,
    } = flags;
    let mut out = std::io::stdout().lock();
    let paths = PackPaths {
        content: ctx.content().to_path_buf(),
        mods: ctx.mods().to_path_buf(),
    };
    let (mut passed, mut failed, mut unreadable) = (0usize, 0usize, 0usize);
    for file in files {
        let run = if sync {
            match scenario::read(file) {
                Ok(mut doc) => {
                    // Held until the run is over: the temporary set lives in it.
                    let gotten = synced(ctx, file, &doc, keep, &mut out)?;
                    doc.pack_dirs.extend(gotten.folders.iter().map(|f| {
                        Located::new(f.path.to_string_lossy().into_owned(), Loc::default())
                    }));
                    scenario::run_doc(file, &doc, &paths, actual)
                }
                Err(e) => Err(e),
            }
        } else if actual {
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

/// Get the packs `doc` names in `pack_hashes` that neither the base content, `mods/` nor
/// its own `pack_dirs` hold at that hash (see [`get_needed`]).
fn synced(
    ctx: &Context,
    file: &Path,
    doc: &scenario::ScenarioDoc,
    keep: bool,
    out: &mut dyn Write,
) -> anyhow::Result<Gotten> {
    let base = file.parent().unwrap_or(Path::new("."));
    let own: Vec<crate::content::PackFolder> = doc
        .pack_dirs
        .iter()
        .map(|d| crate::content::PackFolder {
            path: base.join(&d.value),
            required: false,
        })
        .collect();
    let mut diags = crate::content::Diagnostics::default();
    let found = crate::content::discover::discover(&own, &mut diags);
    let needed: Vec<Needed> = doc
        .pack_hashes
        .iter()
        .filter(|(id, hash)| {
            !found.packs.iter().any(|p| {
                p.id() == id.as_str()
                    && crate::packs::hash(&p.dir).is_ok_and(|h| h == hash.as_str())
            })
        })
        .map(|(id, hash)| Needed {
            id: id.clone(),
            version: None,
            hash: Some(hash.clone()),
        })
        .collect();
    get_needed(ctx, &needed, file, keep, out)
}
