//! Pack sets on the command line: `pack lock`, `pack sync FILE` (a set shared and
//! reproduced exactly), the dependency views `pack why ID`, `pack tree`, `pack
//! orphans [--remove]`, and "get what this needs" ([`get_needed`]) for `replay FILE
//! --sync` and `scenario FILE --sync`.

use std::io::Write as _;
use std::path::Path;
use std::process::ExitCode;

use anyhow::Context as _;

use super::context::{Context, lock_profile};
use crate::index::needs::{self, Gotten, Needed};
use crate::index::{keys, lock};
use crate::packs::deps::Graph;
use crate::packs::{PackSet, Store};
use crate::profile::Access;

/// `pack lock [--out FILE]`.
pub fn lock(ctx: &Context, out: Option<&Path>) -> anyhow::Result<ExitCode> {
    let dir = ctx.profile()?;
    let _lock = lock_profile(dir, Access::Read)?;
    let set = PackSet::open(dir);
    let file = lock::lock(dir, ctx.pack_folders(), &set)?;
    let mut text = serde_json::to_string_pretty(&file)?;
    text.push('\n');
    match out {
        Some(path) => {
            crate::fsutil::write_atomic(path, text.as_bytes())
                .with_context(|| format!("write {}", crate::fsutil::shown(path)))?;
            let unknown = file
                .packs
                .iter()
                .filter(|p| p.source == "installed" && p.index.is_none())
                .count();
            writeln!(
                std::io::stdout().lock(),
                "wrote {} ({} packs){}",
                crate::fsutil::shown(path),
                file.packs.len(),
                if unknown > 0 {
                    format!(
                        "; {unknown} installed pack(s) did not come from an index and cannot be fetched by `pack sync`"
                    )
                } else {
                    String::new()
                }
            )?;
        }
        None => std::io::stdout().lock().write_all(text.as_bytes())?,
    }
    Ok(ExitCode::SUCCESS)
}

/// `pack sync FILE`: plan everything, fetch and check every archive, then install, then
/// change the set; a refusal at any step before the installs changes nothing.
pub fn sync(ctx: &Context, file: &Path) -> anyhow::Result<ExitCode> {
    let dir = ctx.profile()?;
    let locked = lock::read(file)?;
    let mut out = std::io::stdout().lock();
    let mut written = Ok(());
    let mut say = |line: String| {
        if written.is_ok() {
            written = writeln!(out, "{line}");
        }
    };
    let result = lock::apply(dir, ctx.pack_folders(), &locked, &mut say);
    written?;
    result?;
    writeln!(
        out,
        "the profile matches {}: {} packs play, in its order",
        crate::fsutil::shown(file),
        locked.packs.len()
    )?;
    Ok(ExitCode::SUCCESS)
}

/// Get the packs `needed` (named by `file`) that this profile lacks at their content
/// hash ([`needs::get`]), the plan and what was done written to `out`; a refusal says
/// that nothing was changed.
pub fn get_needed(
    ctx: &Context,
    needed: &[Needed],
    file: &Path,
    keep: bool,
    out: &mut dyn std::io::Write,
) -> anyhow::Result<Gotten> {
    let dir = ctx.profile()?;
    let shown = crate::fsutil::shown(file);
    writeln!(out, "get what {shown} needs:")?;
    let mut written = Ok(());
    let mut say = |line: String| {
        if written.is_ok() {
            written = writeln!(out, "  {line}");
        }
    };
    let gotten = needs::get(dir, ctx.pack_folders(), needed, keep, &mut say)
        .map_err(|e| anyhow::anyhow!("{shown}: {e}; nothing was changed"))?;
    written?;
    Ok(gotten)
}

/// `pack why ID`.
pub fn why(ctx: &Context, id: &str) -> anyhow::Result<ExitCode> {
    let dir = ctx.profile_dir();
    let set = dir.map(PackSet::open).unwrap_or_default();
    let graph = Graph::of(ctx.pack_folders());
    let mut out = std::io::stdout().lock();
    if !graph.packs.contains_key(id) {
        anyhow::bail!(
            "no pack '{id}' is found{}",
            crate::rules::nearest(id, graph.packs.keys().map(String::as_str))
                .map(|n| format!(" (did you mean '{n}'?)"))
                .unwrap_or_default()
        );
    }
    let roots = graph.roots(&set);
    let chains = graph.why(&roots, id);
    if chains.is_empty() {
        let state = if roots.iter().any(|r| r == id) {
            "it plays because it is enabled (or base content)"
        } else {
            "it is not enabled"
        };
        writeln!(out, "nothing that plays requires {id}: {state}")?;
    }
    for c in &chains {
        writeln!(out, "{}", c.join(" requires "))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `pack tree`.
pub fn tree(ctx: &Context) -> anyhow::Result<ExitCode> {
    let set = ctx.profile_dir().map(PackSet::open).unwrap_or_default();
    let graph = Graph::of(ctx.pack_folders());
    let mut out = std::io::stdout().lock();
    for line in graph.tree(&graph.tops(&graph.roots(&set))) {
        writeln!(out, "{line}")?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `pack orphans [--remove]`.
pub fn orphans(ctx: &Context, remove: bool) -> anyhow::Result<ExitCode> {
    let dir = ctx.profile()?;
    let _lock = lock_profile(dir, if remove { Access::Write } else { Access::Read })?;
    let set = PackSet::open(dir);
    let pins = keys::Pins::open(dir)?;
    let graph = Graph::of(ctx.pack_folders());
    let orphans = graph.orphans(&set, |id| {
        pins.origins.get(id).is_some_and(|o| o.requirement)
    });
    let mut out = std::io::stdout().lock();
    if orphans.is_empty() {
        writeln!(
            out,
            "no orphans: every pack installed as a requirement is still needed"
        )?;
    }
    let store = Store::new(dir);
    let mut set = set;
    for id in &orphans {
        if remove {
            let to = store.remove(id)?;
            if set.forget(id) {
                set.save()?;
            }
            writeln!(out, "removed {id} (moved to {})", crate::fsutil::shown(&to))?;
        } else {
            writeln!(
                out,
                "{id}: installed as a requirement, and nothing enabled needs it now"
            )?;
        }
    }
    if !remove && !orphans.is_empty() {
        writeln!(
            out,
            "`tokensmith pack orphans --remove` moves them to packs-removed/"
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

/// What `pack bisect` runs for each set it tries.
pub enum BisectTest<'a> {
    /// `validate`: the set fails when it has errors.
    Validate,
    /// A replay: the set fails when it plays differently.
    Replay(&'a Path),
    /// A scenario: the set fails when the scenario fails or cannot run.
    Scenario(&'a Path),
}

/// `pack bisect [--replay FILE | --scenario FILE] [--good ID,...]`.
pub fn bisect(ctx: &Context, test: BisectTest<'_>, good: &[String]) -> anyhow::Result<ExitCode> {
    let folders = ctx.pack_folders();
    let set = ctx.profile_dir().map(PackSet::open).unwrap_or_default();
    let replay = match test {
        BisectTest::Replay(f) => Some(
            crate::replay::read(f)
                .map(|r| (f, r))
                .map_err(|e| anyhow::anyhow!("{e}"))?,
        ),
        _ => None,
    };
    let scenario = match test {
        BisectTest::Scenario(f) => Some((
            f,
            crate::scenario::read(f).map_err(|e| {
                let lines: Vec<String> = e.diagnostics.iter().map(ToString::to_string).collect();
                anyhow::anyhow!("{}", lines.join("\n"))
            })?,
        )),
        _ => None,
    };
    // The packs that play, in their load order, less the good ones.
    let all = crate::content::load(&crate::packs::set::load_options(
        folders,
        &crate::packs::Selection::Set(set.clone()),
    ));
    let graph = Graph::of(folders);
    let candidates: Vec<(String, String)> = all
        .packs
        .iter()
        .filter(|p| {
            !good.contains(&p.id)
                && graph
                    .packs
                    .get(&p.id)
                    .is_some_and(|(_, source, _)| *source != crate::packs::PackSource::Base)
        })
        .map(|p| (p.id.clone(), p.version.to_string()))
        .collect();
    let mut out = std::io::stdout().lock();
    if candidates.is_empty() {
        writeln!(
            out,
            "no pack to bisect: only base content and the good packs play"
        )?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut runs = 0usize;
    let mut run = |k: usize, out: &mut std::io::StdoutLock<'_>| -> anyhow::Result<bool> {
        runs += 1;
        let mut ids: Vec<String> = good.to_vec();
        ids.extend(candidates[..k].iter().map(|(id, _)| id.clone()));
        let options = crate::packs::set::load_options(
            folders,
            &crate::packs::Selection::Set(PackSet::only(&ids)),
        );
        let (fails, why) = match (&replay, &scenario) {
            (_, Some((file, doc))) => scenario_fails(ctx, file, doc, &ids),
            (None, None) => {
                let loaded = crate::content::load(&options);
                let errors = loaded
                    .diagnostics
                    .iter()
                    .filter(|d| d.severity == crate::content::Severity::Error)
                    .count();
                (errors > 0, format!("{errors} error(s)"))
            }
            (Some((file, r)), None) => replay_fails(&options, r, file)?,
        };
        let last = candidates[..k].last().map_or("", |(id, _)| id.as_str());
        writeln!(
            out,
            "run {runs}: {k} of {} packs (up to {last}): {}",
            candidates.len(),
            if fails {
                format!("fails ({why})")
            } else {
                format!("passes ({why})")
            }
        )?;
        Ok(fails)
    };
    let mut error = None;
    let found = crate::packs::deps::bisect(candidates.len(), |k| match run(k, &mut out) {
        Ok(f) => f,
        Err(e) => {
            error.get_or_insert(e);
            false
        }
    });
    if let Some(e) = error {
        return Err(e);
    }
    match found {
        None => {
            writeln!(
                out,
                "every pack that plays passes: nothing to find ({})",
                if replay.is_some() {
                    "the replay plays as saved"
                } else if scenario.is_some() {
                    "the scenario passes"
                } else {
                    "validate finds no error"
                }
            )?;
            Ok(ExitCode::SUCCESS)
        }
        Some(k) => {
            let (id, version) = &candidates[k - 1];
            writeln!(
                out,
                "the first pack whose set fails: {id} {version} (after {runs} runs; the packs before it in the load order, with the good ones, pass)"
            )?;
            Ok(ExitCode::from(1))
        }
    }
}

/// Whether the scenario `doc` fails with the packs `ids` loaded besides its own (found
/// in the base content, `mods/`, its own `pack_dirs` and the profile's installed packs),
/// and in words.
fn scenario_fails(
    ctx: &Context,
    file: &Path,
    doc: &crate::scenario::ScenarioDoc,
    ids: &[String],
) -> (bool, String) {
    use crate::content::yaml::{Loc, Located};
    let mut doc = doc.clone();
    let mut packs = doc
        .packs
        .take()
        .unwrap_or_else(|| vec![Located::new("base".to_string(), Loc::default())]);
    packs.extend(
        ids.iter()
            .map(|id| Located::new(id.clone(), Loc::default())),
    );
    doc.packs = Some(packs);
    if let Some(dir) = ctx.pack_folders().installed.as_ref().filter(|d| d.is_dir()) {
        doc.pack_dirs.push(Located::new(
            dir.to_string_lossy().into_owned(),
            Loc::default(),
        ));
    }
    let paths = crate::scenario::PackPaths {
        content: ctx.content().to_path_buf(),
        mods: ctx.mods().to_path_buf(),
    };
    match crate::scenario::run_doc(file, &doc, &paths, false) {
        Ok(run) => match run.outcome {
            crate::scenario::ScenarioOutcome::Pass => (false, "the scenario passes".into()),
            crate::scenario::ScenarioOutcome::Fail(report) => (
                true,
                format!(
                    "the scenario fails: {}",
                    report.lines().next().unwrap_or_default().trim()
                ),
            ),
        },
        Err(e) => (
            true,
            format!(
                "the scenario cannot run: {}",
                e.diagnostics
                    .first()
                    .map(|d| d.message.clone())
                    .unwrap_or_default()
            ),
        ),
    }
}

/// Whether the replay plays differently under the packs of `options`, and in words.
fn replay_fails(
    options: &crate::content::LoadOptions,
    replay: &crate::replay::Replay,
    file: &Path,
) -> anyhow::Result<(bool, String)> {
    let loaded = crate::script::load(options);
    let Some(catalog) = loaded.catalog else {
        return Ok((true, "the packs do not load".into()));
    };
    let catalog = std::sync::Arc::new(catalog);
    let scripts = crate::ai::hooks_for(&catalog);
    let engine = crate::rules::Engine::new(&catalog, scripts.hooks());
    let now = crate::replay::stamps(&catalog, &options.folders);
    match crate::replay::rerun(replay, &engine, &catalog, &now) {
        Ok(r) if r.same() => Ok((false, "plays as saved".into())),
        Ok(r) => Ok((
            true,
            r.first_difference.as_ref().map_or_else(
                || "plays differently".into(),
                |d| format!("move {} differs", d.number),
            ),
        )),
        Err(e) => Ok((true, format!("{}: {e}", crate::fsutil::shown(file)))),
    }
}
