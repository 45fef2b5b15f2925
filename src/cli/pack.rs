//! `tokensmith pack ...`: build, install, list, enable, disable, order, remove, conflicts.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Subcommand;

use super::context::{Context, lock_profile};
use crate::packs::set;
use crate::packs::{PackSet, Selection, Store};
use crate::profile::Access;

/// `tokensmith pack ...`.
#[derive(Debug, Subcommand)]
pub enum PackCommand {
    /// Make a new pack in the folder of mods (`--mods`): a token type, a card, a deck and a
    /// scenario beside it, all valid at once; with `--scripted`, also a scripted ability
    /// and token type, and editor definitions for the scripts. Never overwrites.
    New {
        /// The pack's id (lowercase letters, digits and `_`).
        id: String,
        /// Add a scripted ability and a scripted token type.
        #[arg(long)]
        scripted: bool,
    },
    /// Validate the pack in DIR and write it as one reproducible `.zip` (refused when the
    /// pack has errors). Prints the archive's path and the pack's content hash.
    Build {
        /// The pack's folder (the one with `pack.yaml`).
        dir: PathBuf,
        /// Where to write the archive (default: `ID-VERSION.zip` here).
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
    },
    /// Install a pack archive or pack folder into the profile (`PROFILE/packs/ID`),
    /// after checking every entry. It starts disabled: `pack enable ID` turns it on.
    Install {
        /// A `.zip` made by `pack build`, a pack folder, or `ID[@REQ]`: a pack from the
        /// listed indexes (the newest version matching REQ, with what it requires).
        source: PathBuf,
        /// Replace an installed pack with the same id (the old one stays until the new
        /// one is fully in place).
        #[arg(long)]
        replace: bool,
        /// Install from an index even when a pack is signed by another key than the
        /// one it was first installed with (its author changed keys).
        #[arg(long)]
        accept_new_key: bool,
    },
    /// Sign the pack in DIR with your author key (`tokensmith key new`) and publish it
    /// into an index folder (made when new): its archive, its signed entry, your public
    /// key and the index's summary. A version published with other content is refused.
    Publish {
        /// The pack's folder.
        dir: PathBuf,
        /// The index folder (a folder: to publish on the web, sync it to the server).
        #[arg(long, value_name = "FOLDER")]
        index: PathBuf,
        /// When you own the index: the days its new timestamp stays valid (players
        /// refuse an index whose timestamp expired more than a week ago).
        #[arg(long, value_name = "DAYS", default_value_t = crate::index::fresh::DEFAULT_EXPIRY_DAYS,
              value_parser = clap::value_parser!(u64).range(1..=crate::index::fresh::MAX_EXPIRY_DAYS))]
        expires_days: u64,
    },
    /// Withdraw a published version (ID@VERSION): no new install or update takes it,
    /// installed copies stay. Only the key that signed it may.
    Yank {
        /// `ID@VERSION`.
        pack: String,
        /// The index folder.
        #[arg(long, value_name = "FOLDER")]
        index: PathBuf,
        /// Offer the version again.
        #[arg(long)]
        undo: bool,
        /// When you own the index: the days its new timestamp stays valid.
        #[arg(long, value_name = "DAYS", default_value_t = crate::index::fresh::DEFAULT_EXPIRY_DAYS,
              value_parser = clap::value_parser!(u64).range(1..=crate::index::fresh::MAX_EXPIRY_DAYS))]
        expires_days: u64,
    },
    /// Write the packs that play, exactly (id, version, content hash, the index and key
    /// each came from, the load order), as a lock file another profile can `pack sync`.
    Lock {
        /// Where to write it (default: print it).
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
    },
    /// Make this profile's packs match a lock file: install its exact versions from the
    /// listed indexes (every check of `pack install`, and each content hash the lock's),
    /// then enable, disable and order. Prints the plan first; nothing changes if a step
    /// would fail.
    Sync {
        /// The lock file (`pack lock` writes one).
        file: PathBuf,
    },
    /// Find the enabled pack that breaks something: the packs that play are added in
    /// their load order to the good set (base content, and `--good` packs) and a binary
    /// search finds the first whose set fails: `validate` has errors (the default), or
    /// `--replay FILE` plays differently, or `--scenario FILE` fails. At most
    /// ⌈log2 n⌉ + 1 runs, each printed.
    Bisect {
        /// A replay that plays as saved with the good set and differently with yours.
        #[arg(long, value_name = "FILE", conflicts_with = "scenario")]
        replay: Option<PathBuf>,
        /// A scenario that passes with the good set and fails with yours (each run
        /// loads the scenario's own packs and the set being tried).
        #[arg(long, value_name = "FILE")]
        scenario: Option<PathBuf>,
        /// Packs known good, with the base content (comma-separated).
        #[arg(long, value_name = "ID,ID", value_delimiter = ',')]
        good: Vec<String>,
    },
    /// Which enabled packs require a pack, and through what.
    Why {
        /// The pack's id.
        id: String,
    },
    /// The packs that play and what each requires, as a tree.
    Tree,
    /// Installed packs that nothing enabled requires and that were installed only as a
    /// requirement; `--remove` moves them to `packs-removed/`.
    Orphans {
        /// Remove them.
        #[arg(long)]
        remove: bool,
    },
    /// Put back the version of an installed pack that its last update, downgrade or
    /// replace took out (kept in `PROFILE/packs-previous`); a second rollback undoes it.
    Rollback {
        /// The pack's id.
        id: String,
    },
    /// Search the listed indexes: packs whose id, name or description hold every word.
    Search {
        /// Words to look for (none: every pack).
        words: Vec<String>,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Installed packs that an index has a newer version of, or whose installed version
    /// its author yanked (with the way out).
    Outdated {
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Replace installed packs by their newest version from the indexes (all outdated
    /// ones, or these), with what the new versions require.
    Update {
        /// Pack ids (none: every outdated pack).
        ids: Vec<String>,
        /// Accept a pack signed by another key than the one it was first installed with.
        #[arg(long)]
        accept_new_key: bool,
    },
    /// List every pack found: id, version, where it is, enabled, hash, problems.
    List {
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Enable a pack for games, and the packs it requires.
    Enable {
        /// The pack's id.
        id: String,
    },
    /// Disable a pack (refused while enabled packs require it).
    Disable {
        /// The pack's id.
        id: String,
        /// Also disable the enabled packs that require it.
        #[arg(long)]
        with_dependants: bool,
    },
    /// Show the load order, or put the given packs first in it, in the order given
    /// (a pack still loads after the packs it requires).
    Order {
        /// Pack ids to load first.
        ids: Vec<String>,
    },
    /// Remove an installed pack: it is moved to `PROFILE/packs-removed`, not deleted.
    Remove {
        /// The pack's id.
        id: String,
    },
    /// The packs received from LAN hosts (`PROFILE/lan-packs`, kept apart from your
    /// own): list them with their sizes and last use, or remove them.
    Cache {
        /// What to do (default: list).
        #[command(subcommand)]
        action: Option<CacheAction>,
    },
    /// Before playing: every field several enabled packs set, which value wins, and
    /// requirements or ids that clash. Exit 0 when there is nothing to report, 1 otherwise.
    Conflicts {
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
}

/// `tokensmith pack cache ...`.
#[derive(Debug, Subcommand)]
pub enum CacheAction {
    /// List the cached packs, least recently used first (the default).
    List,
    /// Remove every cached pack (a later game fetches what it needs again).
    Clear,
    /// Remove the cached packs with this id, or this content hash (or its first 8+
    /// characters).
    Remove {
        /// A pack id or content hash.
        pack: String,
    },
}

/// `pack install PATH`: an archive or a pack folder into the profile's store.
pub fn install(ctx: &Context, source: &Path, replace: bool) -> anyhow::Result<ExitCode> {
    let mut out = std::io::stdout().lock();
    let store = Store::new(ctx.profile()?);
    for line in store.recover() {
        writeln!(out, "note: {line}")?;
    }
    let done = store.install(source, replace, set::outside_store(ctx.pack_folders()))?;
    match &done.replaced {
        Some(old) => writeln!(
            out,
            "replaced {} {} with {} ({})",
            done.id,
            old,
            done.version,
            crate::fsutil::shown(&done.dir)
        )?,
        None => writeln!(
            out,
            "installed {} {} ({})",
            done.id,
            done.version,
            crate::fsutil::shown(&done.dir)
        )?,
    }
    writeln!(out, "hash {}", done.hash)?;
    let set = PackSet::open(ctx.profile()?);
    if !set.is_enabled(&done.id) {
        writeln!(
            out,
            "it is off: `tokensmith pack enable {}` turns it on",
            done.id
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `pack enable ID`: with the packs it requires.
pub fn enable(ctx: &Context, id: &str) -> anyhow::Result<ExitCode> {
    let mut out = std::io::stdout().lock();
    let dir = ctx.profile()?;
    let _lock = lock_profile(dir, Access::Write)?;
    let mut set = PackSet::open(dir);
    let done = set::enable(&mut set, ctx.pack_folders(), id)?;
    set.save()?;
    for r in &done.requirements {
        writeln!(out, "enabled {r} (required by {id})")?;
    }
    if done.changed {
        writeln!(out, "enabled {id}")?;
    } else {
        writeln!(out, "{id} was enabled already")?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `pack disable ID [--with-dependants]`.
pub fn disable(ctx: &Context, id: &str, with_dependants: bool) -> anyhow::Result<ExitCode> {
    let mut out = std::io::stdout().lock();
    let dir = ctx.profile()?;
    let _lock = lock_profile(dir, Access::Write)?;
    let mut set = PackSet::open(dir);
    let gone = set::disable(&mut set, ctx.pack_folders(), id, with_dependants)?;
    set.save()?;
    if gone.is_empty() {
        writeln!(out, "{id} was off already")?;
    }
    for g in &gone {
        writeln!(out, "disabled {g}")?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `pack order [ID...]`: put these first, then show the load order.
pub fn order(ctx: &Context, ids: &[String]) -> anyhow::Result<ExitCode> {
    let mut out = std::io::stdout().lock();
    let folders = ctx.pack_folders();
    let dir = ctx.profile()?;
    let access = if ids.is_empty() {
        Access::Read
    } else {
        Access::Write
    };
    let _lock = lock_profile(dir, access)?;
    let mut set = PackSet::open(dir);
    if !ids.is_empty() {
        let (found, _) = set::find(folders);
        for id in ids {
            if !found.iter().any(|f| f.pack.id() == id) {
                return Err(crate::packs::PackError::Unknown {
                    id: id.clone(),
                    hint: crate::rules::nearest(id, found.iter().map(|f| f.pack.id())),
                }
                .into());
            }
        }
        set.put_first(ids);
        set.save()?;
    }
    let loaded = crate::content::load(&set::load_options(folders, &Selection::Set(set)));
    writeln!(out, "load order of the packs that play:")?;
    for (i, p) in loaded.packs.iter().enumerate() {
        writeln!(out, "  {}. {} {}", i + 1, p.id, p.version)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `pack remove ID`: moved aside, and forgotten by the enabled set.
pub fn remove(ctx: &Context, id: &str) -> anyhow::Result<ExitCode> {
    let dir = ctx.profile()?;
    let store = Store::new(dir);
    let to = store.remove(id)?;
    let _lock = lock_profile(dir, Access::Write)?;
    let mut set = PackSet::open(dir);
    if set.forget(id) {
        set.save()?;
    }
    writeln!(
        std::io::stdout().lock(),
        "removed {id}: moved to {}",
        crate::fsutil::shown(&to)
    )?;
    Ok(ExitCode::SUCCESS)
}

/// `pack conflicts [--json]`: exit 0 when there is nothing to report, 1 otherwise.
pub fn conflicts(ctx: &Context, json: bool) -> anyhow::Result<ExitCode> {
    let mut out = std::io::stdout().lock();
    let report = crate::packs::conflicts::report(ctx.pack_folders(), ctx.selection());
    if json {
        serde_json::to_writer_pretty(&mut out, &report)?;
        writeln!(out)?;
    } else {
        if !report.has_conflicts() {
            writeln!(out, "no conflicts among the enabled packs")?;
        }
        write!(out, "{}", report.to_text())?;
    }
    Ok(if !report.has_conflicts() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// `pack build DIR [--out FILE]`: refused (exit 1) when the pack has errors.
pub fn build(ctx: &Context, dir: &Path, file: Option<&Path>) -> anyhow::Result<ExitCode> {
    let mut out = std::io::stdout().lock();
    let validate = ctx.validator(dir);
    match crate::packs::build_to(dir, file, validate) {
        Ok((built, path)) => {
            for w in &built.warnings {
                eprintln!("{w}");
            }
            writeln!(
                out,
                "built {} {}: {} ({} files, {} bytes)",
                built.id,
                built.version,
                crate::fsutil::shown(&path),
                built.files,
                built.bytes.len()
            )?;
            writeln!(out, "hash {}", built.hash)?;
            Ok(ExitCode::SUCCESS)
        }
        Err(crate::packs::PackError::Invalid(lines)) => {
            for l in &lines {
                eprintln!("{l}");
            }
            eprintln!("error: the pack has errors; nothing was written");
            Ok(ExitCode::from(1))
        }
        Err(e) => Err(e.into()),
    }
}

/// `pack list [--json]`: every pack found.
pub fn list(ctx: &Context, json: bool) -> anyhow::Result<ExitCode> {
    let mut out = std::io::stdout().lock();
    let folders = ctx.pack_folders();
    let dir = ctx.profile_dir();
    let mut recovered = Vec::new();
    let (set, _lock) = match &dir {
        Some(d) => {
            recovered = Store::new(d).recover();
            // Shared: other readers (the client) go on; a change waits for the list.
            let lock = lock_profile(d, Access::Read)?;
            (PackSet::open(d), Some(lock))
        }
        None => (PackSet::default(), None),
    };
    for line in &recovered {
        eprintln!("note: {line}");
    }
    for note in &set.notes {
        eprintln!("note: {note}");
    }
    let loaded = crate::script::load(&set::list_options(folders, &set));
    let listed = set::list(folders, &set, &loaded);
    if listed.is_empty() {
        // Nothing to list is never a quiet success: say where packs were looked for.
        for d in &loaded.diagnostics {
            eprintln!("{d}");
        }
        eprintln!(
            "error: no pack found: looked in the content folder {}, the mods folder {}{}; give the base content with --content DIR",
            crate::fsutil::shown(&folders.content),
            crate::fsutil::shown(&folders.mods),
            folders
                .installed
                .as_deref()
                .map(|p| format!(" and the installed packs {}", crate::fsutil::shown(p)))
                .unwrap_or_default()
        );
        return Ok(ExitCode::from(2));
    }
    let yanked = dir.map_or_else(Default::default, |d| {
        let installed: Vec<(String, semver::Version)> = listed
            .iter()
            .filter(|l| l.source == crate::packs::PackSource::Installed)
            .filter_map(|l| Some((l.id.clone(), semver::Version::parse(&l.version).ok()?)))
            .collect();
        crate::index::player::yank_marks(d, &installed)
    });
    if json {
        let packs: Vec<serde_json::Value> = listed
            .iter()
            .map(|l| {
                serde_json::json!({
                    "id": l.id,
                    "name": l.name,
                    "version": l.version,
                    "authors": l.authors,
                    "description": l.description,
                    "source": l.source,
                    "dir": crate::fsutil::shown(&l.dir),
                    "enabled": l.enabled,
                    "hash": l.hash.as_ref().ok(),
                    "hash_error": l.hash.as_ref().err(),
                    "requires": l.requires,
                    "errors": l.errors,
                    "warnings": l.warnings,
                    "yanked": yanked.get(&l.id),
                })
            })
            .collect();
        serde_json::to_writer_pretty(&mut out, &serde_json::json!({ "packs": packs }))?;
        writeln!(out)?;
    } else {
        for l in &listed {
            let on = if l.enabled { "on " } else { "off" };
            let hash = match &l.hash {
                Ok(h) => crate::packs::short(h).to_string(),
                Err(_) => "no hash".into(),
            };
            writeln!(
                out,
                "{on} {:<20} {:<9} {:<9} {hash}  {}",
                l.id,
                l.version,
                l.source.label(),
                crate::fsutil::shown(&l.dir)
            )?;
            if !l.requires.is_empty() {
                writeln!(out, "      requires {}", l.requires.join(", "))?;
            }
            if let Some(line) = yanked.get(&l.id) {
                writeln!(out, "      yanked: {line}")?;
            }
            if let Err(e) = &l.hash {
                writeln!(out, "      hash: {e}")?;
            }
            for e in &l.errors {
                writeln!(out, "      {e}")?;
            }
            for w in &l.warnings {
                writeln!(out, "      {w}")?;
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Bytes for people: `512 B`, `12.3 KiB`, `4.0 MiB`.
fn size_text(bytes: u64) -> String {
    #[allow(clippy::cast_precision_loss)] // for display only
    let b = bytes as f64;
    if bytes < 1024 {
        format!("{bytes} B")
    } else if bytes < 1024 * 1024 {
        format!("{:.1} KiB", b / 1024.0)
    } else {
        format!("{:.1} MiB", b / (1024.0 * 1024.0))
    }
}

/// How long ago `when` was, for people.
fn ago(when: std::time::SystemTime) -> String {
    let secs = when.elapsed().map_or(0, |d| d.as_secs());
    match secs {
        0..60 => "just now".into(),
        60..3_600 => format!("{} min ago", secs / 60),
        3_600..86_400 => format!("{} h ago", secs / 3_600),
        _ => format!("{} days ago", secs / 86_400),
    }
}

/// `tokensmith pack cache [list|clear|remove PACK]`.
pub fn cache(ctx: &Context, action: Option<&CacheAction>) -> anyhow::Result<ExitCode> {
    let mut out = std::io::stdout().lock();
    let cache = crate::net::sync::Cache::new(ctx.profile()?);
    let quota = cache.quota();
    match action {
        None | Some(CacheAction::List) => {
            let entries = cache.entries();
            let total: u64 = entries.iter().map(|e| e.bytes).sum();
            writeln!(
                out,
                "{}: {} pack(s), {} (quota: {} packs, {})",
                crate::fsutil::shown(cache.root()),
                entries.len(),
                size_text(total),
                quota.entries,
                size_text(quota.bytes)
            )?;
            for e in &entries {
                writeln!(
                    out,
                    "  {} {}  {}  {}  used {}",
                    e.id,
                    e.version.as_deref().unwrap_or("(no readable manifest)"),
                    crate::packs::short(&e.hash),
                    size_text(e.bytes),
                    ago(e.used)
                )?;
            }
            Ok(ExitCode::SUCCESS)
        }
        Some(CacheAction::Clear) => {
            let n = cache.clear()?;
            writeln!(out, "removed {n} cached pack(s)")?;
            Ok(ExitCode::SUCCESS)
        }
        Some(CacheAction::Remove { pack }) => {
            let wanted = pack.trim().to_ascii_lowercase();
            let matches: Vec<_> = cache
                .entries()
                .into_iter()
                .filter(|e| {
                    e.id == pack.trim() || (wanted.len() >= 8 && e.hash.starts_with(&wanted))
                })
                .collect();
            anyhow::ensure!(
                !matches.is_empty(),
                "no cached pack has the id or hash '{}' (`tokensmith pack cache` lists them)",
                crate::rules::echo(pack)
            );
            for e in &matches {
                cache.remove(&e.hash)?;
                writeln!(
                    out,
                    "removed {} {} ({}) from the cache",
                    e.id,
                    e.version.as_deref().unwrap_or("?"),
                    crate::packs::short(&e.hash)
                )?;
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}
