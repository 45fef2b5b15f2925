//! Pack indexes on the command line: `key new`, `index add|list|remove`, and the `pack`
//! commands that use indexes (`publish`, `yank`, `search`, `install ID[@REQ]`,
//! `outdated`, `update`).

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context as _;
use clap::Subcommand;

use super::context::{Context, lock_profile};
use crate::index::{keys, player, publish};
use crate::packs::Store;
use crate::profile::Access;

/// `tokensmith key ...`.
#[derive(Debug, Subcommand)]
pub enum KeyCommand {
    /// Make your author key (ed25519), kept in the profile (`keys/author.key`): `pack
    /// publish` signs with it. Never replaces an existing one.
    New,
    /// Print your author key's id and public half.
    Show,
}

/// `tokensmith index ...`.
#[derive(Debug, Subcommand)]
pub enum IndexCommand {
    /// List an index folder, under a name of yours, after those listed already (the
    /// first index that has a pack is the one it comes from).
    Add {
        /// Its name here (lowercase letters, digits and `_`).
        name: String,
        /// The index folder (with `index.json`).
        location: PathBuf,
    },
    /// The listed indexes, in order.
    List,
    /// Stop using an index (installed packs stay).
    Remove {
        /// Its name.
        name: String,
    },
}

/// Run a `key` command.
pub fn key(ctx: &Context, command: &KeyCommand) -> anyhow::Result<ExitCode> {
    let dir = ctx.profile()?;
    let mut out = std::io::stdout().lock();
    let public = match command {
        KeyCommand::New => {
            let _lock = lock_profile(dir, Access::Write)?;
            let public = keys::new_key(dir)?;
            writeln!(
                out,
                "made your author key: {}",
                crate::fsutil::shown(&keys::key_file(dir))
            )?;
            writeln!(
                out,
                "keep it private and back it up: packs you publish are tied to it"
            )?;
            public
        }
        KeyCommand::Show => keys::author_key(dir)?.verifying_key(),
    };
    writeln!(out, "key {}", keys::key_id(&public))?;
    writeln!(out, "public {}", keys::public_hex(&public))?;
    Ok(ExitCode::SUCCESS)
}

/// Run an `index` command.
pub fn index(ctx: &Context, command: &IndexCommand) -> anyhow::Result<ExitCode> {
    let dir = ctx.profile()?;
    let mut out = std::io::stdout().lock();
    match command {
        IndexCommand::Add { name, location } => {
            let _lock = lock_profile(dir, Access::Write)?;
            let source = player::Sources::add(dir, name, location)?;
            writeln!(out, "added index '{}': {}", source.name, source.location)?;
        }
        IndexCommand::List => {
            let sources = player::Sources::open(dir)?;
            if sources.indexes.is_empty() {
                writeln!(
                    out,
                    "no index is listed: `tokensmith index add NAME FOLDER` adds one"
                )?;
            }
            for s in &sources.indexes {
                writeln!(out, "{}  {}", s.name, s.location)?;
            }
        }
        IndexCommand::Remove { name } => {
            let _lock = lock_profile(dir, Access::Write)?;
            if player::Sources::remove(dir, name)? {
                writeln!(out, "removed index '{name}'")?;
            } else {
                anyhow::bail!("no index is named '{name}' (`tokensmith index list`)");
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `pack publish DIR --index FOLDER`.
pub fn publish_pack(ctx: &Context, dir: &Path, index: &Path) -> anyhow::Result<ExitCode> {
    let profile = ctx.profile()?;
    let key = keys::author_key(profile)?;
    let validate = ctx.validator(dir);
    let built = match crate::packs::build(dir, validate) {
        Ok(b) => b,
        Err(crate::packs::PackError::Invalid(lines)) => {
            for l in &lines {
                eprintln!("{l}");
            }
            eprintln!("error: the pack has errors; nothing was published");
            return Ok(ExitCode::from(1));
        }
        Err(e) => return Err(e.into()),
    };
    for w in &built.warnings {
        eprintln!("{w}");
    }
    let manifest = crate::packs::manifest(dir)?;
    let requires = manifest
        .manifest
        .requires
        .iter()
        .map(|r| crate::index::Requires {
            id: r.value.id.value.clone(),
            version: r
                .value
                .version
                .as_ref()
                .map_or_else(|| "*".to_string(), |v| v.value.0.clone()),
        })
        .collect();
    let release = publish::Release {
        built: &built,
        name: manifest
            .manifest
            .name
            .clone()
            .unwrap_or_else(|| built.id.clone()),
        description: manifest.manifest.description.clone().unwrap_or_default(),
        requires,
    };
    let done = publish::publish(index, &release, &key)?;
    let mut out = std::io::stdout().lock();
    if done.already {
        writeln!(
            out,
            "{} {} is published already with this content: nothing changed",
            done.id, done.version
        )?;
    } else {
        writeln!(
            out,
            "published {} {} to {} ({} bytes, signed by key {})",
            done.id,
            done.version,
            crate::fsutil::shown(index),
            done.entry.size,
            done.entry.key
        )?;
    }
    writeln!(out, "hash {}", done.entry.hash)?;
    Ok(ExitCode::SUCCESS)
}

/// The profile's indexes, opened; a note on standard error for each read from its last
/// copy or left out.
fn opened(profile: &Path) -> anyhow::Result<Vec<player::Opened>> {
    let (indexes, notes) = player::open_all(profile)?;
    for n in &notes {
        eprintln!("note: {n}");
    }
    Ok(indexes)
}

/// Split `ID@VERSION` (or `ID`).
fn split_at(spec: &str) -> (&str, Option<&str>) {
    match spec.split_once('@') {
        Some((id, v)) => (id, Some(v)),
        None => (spec, None),
    }
}

/// `pack yank ID@VERSION --index FOLDER [--undo]`.
pub fn yank_pack(ctx: &Context, spec: &str, index: &Path, undo: bool) -> anyhow::Result<ExitCode> {
    let (id, Some(version)) = split_at(spec) else {
        anyhow::bail!("give the version to yank: `tokensmith pack yank {spec}@VERSION`");
    };
    let key = keys::author_key(ctx.profile()?)?;
    let changed = publish::yank(index, id, version, undo, &key)?;
    let mut out = std::io::stdout().lock();
    match (changed, undo) {
        (true, false) => writeln!(
            out,
            "yanked {id} {version}: no new install or update takes it; installed copies stay"
        )?,
        (true, true) => writeln!(out, "{id} {version} is offered again")?,
        (false, false) => writeln!(out, "{id} {version} was yanked already")?,
        (false, true) => writeln!(out, "{id} {version} was not yanked")?,
    }
    Ok(ExitCode::SUCCESS)
}

/// `pack search [WORDS] [--json]`.
pub fn search(ctx: &Context, words: &[String], json: bool) -> anyhow::Result<ExitCode> {
    let indexes = opened(ctx.profile()?)?;
    let mut summaries = Vec::new();
    for index in &indexes {
        match index.summary() {
            Ok(s) => summaries.push((index.name.clone(), s)),
            Err(e) => eprintln!("note: index '{}' is left out: {e}", index.name),
        }
    }
    let found = player::search(&summaries, words);
    let mut out = std::io::stdout().lock();
    if json {
        writeln!(out, "{}", serde_json::to_string_pretty(&found)?)?;
        return Ok(ExitCode::SUCCESS);
    }
    if found.is_empty() {
        writeln!(out, "no pack found")?;
    }
    for f in &found {
        let latest = f.pack.latest.as_deref().unwrap_or("(every version yanked)");
        writeln!(
            out,
            "{} {}  {}  [{}]",
            f.pack.id,
            latest,
            crate::index::clean(&f.pack.name),
            f.index
        )?;
        if !f.pack.description.is_empty() {
            writeln!(out, "    {}", crate::index::clean(&f.pack.description))?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Whether `source` names a pack in an index (`ID` or `ID@REQ`) rather than an archive or
/// folder: it is not a path that exists, and it reads as an id.
#[must_use]
pub fn is_index_spec(source: &Path) -> bool {
    if source.exists() {
        return false;
    }
    let text = source.to_string_lossy();
    let (id, _) = split_at(&text);
    crate::content::discover::valid_id(id)
}

/// `pack install ID[@REQ]` (or `pack update [ID]` with `update`): plan, fetch and check
/// every archive, then install them all.
pub fn install(
    ctx: &Context,
    specs: &[String],
    update: bool,
    accept_new_key: bool,
) -> anyhow::Result<ExitCode> {
    let dir = ctx.profile()?;
    let folders = ctx.pack_folders();
    let store = Store::new(dir);
    let mut out = std::io::stdout().lock();
    for line in store.recover() {
        writeln!(out, "note: {line}")?;
    }
    let indexes = opened(dir)?;
    let mut wants = Vec::new();
    if update && specs.is_empty() {
        for o in player::outdated(&indexes, folders)? {
            wants.push((o.id, semver::VersionReq::STAR));
        }
    }
    for spec in specs {
        let (id, req) = split_at(spec);
        let req = match req {
            None => semver::VersionReq::STAR,
            Some(r) => semver::VersionReq::parse(r).with_context(|| {
                format!("'{r}' is not a version requirement (e.g. 1.2.0, ^1, >=0.3)")
            })?,
        };
        wants.push((id.to_string(), req));
    }
    let plan = player::plan(&indexes, folders, &wants, update)?;
    for n in &plan.notes {
        writeln!(out, "{n}")?;
    }
    if plan.steps.is_empty() {
        if update && specs.is_empty() {
            writeln!(out, "every installed pack is up to date")?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    writeln!(out, "plan:")?;
    for line in plan.lines() {
        writeln!(out, "  {line}")?;
    }
    let pins = keys::Pins::open(dir)?;
    let temp = tempfile::tempdir().context("make a temporary folder for the archives")?;
    let fetched = player::fetch(&plan, &pins, accept_new_key, temp.path())?;
    let done = player::install(dir, &store, &fetched, folders)?;
    for line in &done {
        writeln!(out, "{line}")?;
    }
    let set = crate::packs::PackSet::open(dir);
    let off: Vec<&str> = fetched
        .iter()
        .filter(|f| f.step.replaces.is_none() && !set.is_enabled(&f.step.id))
        .map(|f| f.step.id.as_str())
        .collect();
    if let Some(first) = plan.steps.last().filter(|_| !off.is_empty()) {
        writeln!(
            out,
            "new packs start off: `tokensmith pack enable {}` turns it on with what it requires",
            first.id
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `pack outdated [--json]`.
pub fn outdated(ctx: &Context, json: bool) -> anyhow::Result<ExitCode> {
    let indexes = opened(ctx.profile()?)?;
    let list = player::outdated(&indexes, ctx.pack_folders())?;
    let mut out = std::io::stdout().lock();
    if json {
        writeln!(out, "{}", serde_json::to_string_pretty(&list)?)?;
        return Ok(ExitCode::SUCCESS);
    }
    if list.is_empty() {
        writeln!(out, "every installed pack is up to date")?;
    }
    for o in &list {
        writeln!(
            out,
            "{} {} -> {} (index '{}')",
            o.id, o.installed, o.newest, o.index
        )?;
    }
    Ok(ExitCode::SUCCESS)
}
