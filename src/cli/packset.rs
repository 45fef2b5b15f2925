//! Pack sets on the command line: `pack lock`, `pack sync FILE` (a set shared and
//! reproduced exactly), and the dependency views `pack why ID`, `pack tree`, `pack
//! orphans [--remove]`.

use std::io::Write as _;
use std::path::Path;
use std::process::ExitCode;

use anyhow::Context as _;

use super::context::{Context, lock_profile};
use crate::index::{keys, lock, player};
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
    let folders = ctx.pack_folders();
    let locked = lock::read(file)?;
    let store = Store::new(dir);
    let mut out = std::io::stdout().lock();
    for line in store.recover() {
        writeln!(out, "note: {line}")?;
    }
    let needs_index = locked.packs.iter().any(|p| p.source == "installed");
    let indexes = if needs_index {
        let (indexes, notes) = player::open_all(dir).unwrap_or_default();
        for n in &notes {
            eprintln!("note: {n}");
        }
        indexes
    } else {
        Vec::new()
    };
    let set = PackSet::open(dir);
    let plan = lock::plan(&indexes, folders, &set, &locked)
        .map_err(|e| anyhow::anyhow!("{e}; nothing was changed"))?;
    writeln!(out, "plan:")?;
    for line in plan.lines() {
        writeln!(out, "  {line}")?;
    }
    let pins = keys::Pins::open(dir)?;
    let temp = tempfile::tempdir().context("make a temporary folder for the archives")?;
    let fetched = player::fetch(&plan.install, &pins, false, temp.path())
        .map_err(|e| anyhow::anyhow!("{e}; nothing was changed"))?;
    let _lock = lock_profile(dir, Access::Write)?;
    for line in player::install(dir, &store, &fetched, folders, false)? {
        writeln!(out, "{line}")?;
    }
    let mut set = PackSet::open(dir);
    let wanted: Vec<String> = locked
        .packs
        .iter()
        .filter(|p| p.source != "base")
        .map(|p| p.id.clone())
        .collect();
    set.set_enabled(wanted);
    set.set_order(plan.order.clone());
    set.save()?;
    writeln!(
        out,
        "the profile matches {}: {} packs play, in its order",
        crate::fsutil::shown(file),
        locked.packs.len()
    )?;
    Ok(ExitCode::SUCCESS)
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
