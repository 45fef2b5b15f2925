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
    /// Move to a new author key: the old one is kept (`keys/retired/`) and signs the
    /// move, which `pack publish` puts into indexes, so players who pinned the old key
    /// follow it to the new one.
    Rotate,
    /// Withdraw a key of yours (your current key, or one you moved from) in an index:
    /// players refuse everything it signed. Publish again with your current key.
    Revoke {
        /// The key id to revoke.
        key: String,
        /// The index folder.
        #[arg(long, value_name = "FOLDER")]
        index: PathBuf,
    },
}

/// `tokensmith index ...`.
#[derive(Debug, Subcommand)]
pub enum IndexCommand {
    /// List an index folder, under a name of yours, after those listed already (the
    /// first index that has a pack is the one it comes from).
    Add {
        /// Its name here (lowercase letters, digits and `_`).
        name: String,
        /// The index folder (with `index.json`), or its web address.
        location: PathBuf,
        /// The owner key id you were given for it: the index is refused unless its owner
        /// is that key (without it, the owner found now is pinned).
        #[arg(long, value_name = "KEYID")]
        owner: Option<String>,
    },
    /// The listed indexes, in order.
    List,
    /// Stop using an index (installed packs stay).
    Remove {
        /// Its name.
        name: String,
    },
    /// As the index's owner: sign a new snapshot of the index folder (every pack file
    /// as it is now) and a new timestamp. Run after others published into it.
    Sign {
        /// The index folder.
        folder: PathBuf,
        /// The days the new timestamp stays valid.
        #[arg(long, value_name = "DAYS", default_value_t = crate::index::fresh::DEFAULT_EXPIRY_DAYS,
              value_parser = clap::value_parser!(u64).range(1..=crate::index::fresh::MAX_EXPIRY_DAYS))]
        expires_days: u64,
    },
    /// As the index's owner: renew its timestamp alone (cheap; run it from cron well
    /// before the timestamp expires).
    RefreshTimestamp {
        /// The index folder.
        folder: PathBuf,
        /// The days the new timestamp stays valid.
        #[arg(long, value_name = "DAYS", default_value_t = crate::index::fresh::DEFAULT_EXPIRY_DAYS,
              value_parser = clap::value_parser!(u64).range(1..=crate::index::fresh::MAX_EXPIRY_DAYS))]
        expires_days: u64,
    },
    /// As the index's owner: revoke an author's key (one its author lost): players refuse
    /// everything it signed.
    RevokeKey {
        /// The key id.
        key: String,
        /// The index folder.
        folder: PathBuf,
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
        KeyCommand::Rotate => {
            let _lock = lock_profile(dir, Access::Write)?;
            let (old, new) = keys::rotate(dir)?;
            writeln!(
                out,
                "moved from key {} to a new key; the old one is kept in {}",
                keys::key_id(&old),
                crate::fsutil::shown(&dir.join("keys").join("retired"))
            )?;
            writeln!(
                out,
                "your next `pack publish` puts the move into the index: players follow it to the new key"
            )?;
            new
        }
        KeyCommand::Revoke { key, index } => {
            let r = keys::revocation(dir, key)?;
            publish::revoke_key(index, &r)?;
            writeln!(
                out,
                "revoked key {key} in {}: players refuse everything it signed; publish again with your key",
                crate::fsutil::shown(index)
            )?;
            keys::author_key(dir)?.verifying_key()
        }
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
        IndexCommand::Add {
            name,
            location,
            owner,
        } => {
            let _lock = lock_profile(dir, Access::Write)?;
            let (source, notes) = player::Sources::add(dir, name, location, owner.as_deref())?;
            for n in &notes {
                eprintln!("note: {n}");
            }
            writeln!(out, "added index '{}': {}", source.name, source.location)?;
            let seen = crate::index::fresh::Seen::open(dir, name)?;
            if let Some(owner) = seen.owner.as_deref().and_then(crate::index::from_hex::<32>) {
                let id = ed25519_dalek::VerifyingKey::from_bytes(&owner)
                    .map(|k| keys::key_id(&k))
                    .unwrap_or_default();
                writeln!(
                    out,
                    "its owner's key {id} is pinned: a listing it did not sign, or older than one seen, is refused"
                )?;
            }
        }
        IndexCommand::Sign {
            folder,
            expires_days,
        } => {
            let key = keys::author_key(dir)?;
            let (snapshot, timestamp) = crate::index::fresh::sign(folder, &key, *expires_days)?;
            writeln!(
                out,
                "signed snapshot {} of {} ({} packs); its timestamp expires {}",
                snapshot.version,
                crate::fsutil::shown(folder),
                snapshot.packs.len(),
                crate::index::fresh::date(timestamp.expires)
            )?;
        }
        IndexCommand::RefreshTimestamp {
            folder,
            expires_days,
        } => {
            let key = keys::author_key(dir)?;
            let timestamp = crate::index::fresh::renew(folder, &key, *expires_days)?;
            writeln!(
                out,
                "renewed the timestamp of {} (snapshot {}): it expires {}",
                crate::fsutil::shown(folder),
                timestamp.snapshot,
                crate::index::fresh::date(timestamp.expires)
            )?;
        }
        IndexCommand::RevokeKey { key, folder } => {
            let owner = keys::author_key(dir)?;
            if !keys::valid_key_id(key) {
                anyhow::bail!(
                    "'{}' is not a key id (16 hex digits)",
                    crate::index::clean(key)
                );
            }
            let index = crate::index::read_index(&crate::index::Location::folder(folder))?;
            if index.owner.as_deref() != Some(keys::key_id(&owner.verifying_key()).as_str()) {
                anyhow::bail!(
                    "only the index's owner revokes a key in it (its owner is {}); nothing was changed",
                    index
                        .owner
                        .as_deref()
                        .unwrap_or("nobody: publish into it first")
                );
            }
            let added = crate::index::fresh::revoke(
                folder,
                &owner,
                key,
                crate::index::fresh::DEFAULT_EXPIRY_DAYS,
            )?;
            if added {
                writeln!(
                    out,
                    "revoked key {key}: players refuse everything it signed"
                )?;
            } else {
                writeln!(out, "key {key} was revoked already")?;
            }
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
pub fn publish_pack(
    ctx: &Context,
    dir: &Path,
    index: &Path,
    expires_days: u64,
) -> anyhow::Result<ExitCode> {
    let profile = ctx.profile()?;
    if crate::index::is_web(&index.to_string_lossy()) {
        anyhow::bail!(
            "'{}' is a web address: publish into a folder, then copy or sync that folder to the web server (every file is static); nothing was published",
            crate::index::clean(&index.to_string_lossy())
        );
    }
    let key = keys::author_key(profile)?;
    let rotations = keys::profile_rotations(profile)?;
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
    let requires = crate::index::Requires::of(&manifest);
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
    let done = publish::publish(index, &release, &key, &rotations, expires_days)?;
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
    signing_line(&mut out, index, &done.signing)?;
    Ok(ExitCode::SUCCESS)
}

/// What became of the index's snapshot, in words.
fn signing_line(
    out: &mut impl std::io::Write,
    index: &Path,
    signing: &publish::Signing,
) -> std::io::Result<()> {
    match signing {
        publish::Signing::Signed { snapshot, expires } => writeln!(
            out,
            "signed snapshot {snapshot}; its timestamp expires {} (renew it with `tokensmith index refresh-timestamp {}`)",
            crate::index::fresh::date(*expires),
            crate::fsutil::shown(index)
        ),
        publish::Signing::OwnerMustSign { owner } => writeln!(
            out,
            "note: the index is owned by the key {owner}: players refuse this change until its owner runs `tokensmith index sign {}`",
            crate::fsutil::shown(index)
        ),
    }
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
pub fn yank_pack(
    ctx: &Context,
    spec: &str,
    index: &Path,
    undo: bool,
    expires_days: u64,
) -> anyhow::Result<ExitCode> {
    let (id, Some(version)) = split_at(spec) else {
        anyhow::bail!("give the version to yank: `tokensmith pack yank {spec}@VERSION`");
    };
    let key = keys::author_key(ctx.profile()?)?;
    let (changed, signing) = publish::yank(index, id, version, undo, &key, expires_days)?;
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
    signing_line(&mut out, index, &signing)?;
    Ok(ExitCode::SUCCESS)
}

/// `pack search [WORDS] [--json]`.
pub fn search(ctx: &Context, words: &[String], json: bool) -> anyhow::Result<ExitCode> {
    let indexes = opened(ctx.profile()?)?;
    let summaries: Vec<(&str, &crate::index::SummaryFile)> = indexes
        .iter()
        .map(|i| (i.name.as_str(), i.summary()))
        .collect();
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
        wants.push(player::want(spec)?);
    }
    let plan = player::plan(&indexes, folders, &wants, update).map_err(nothing_installed)?;
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
    let pins = keys::Pins::open(dir).map_err(nothing_installed)?;
    let temp = tempfile::tempdir().context("make a temporary folder for the archives")?;
    let fetched =
        player::fetch(&plan, &pins, accept_new_key, temp.path()).map_err(nothing_installed)?;
    let done = player::install(dir, &store, &fetched, folders, accept_new_key)?;
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

/// `e`, a refusal before anything was installed, saying so (every refusal of an install
/// ends with what became of the profile).
fn nothing_installed(e: crate::index::IndexError) -> anyhow::Error {
    let text = e.to_string();
    if text.contains("nothing was installed") {
        anyhow::Error::new(e)
    } else {
        anyhow::anyhow!("{text}; nothing was installed")
    }
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
        writeln!(out, "{}", o.line())?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `pack rollback ID`.
pub fn rollback(ctx: &Context, id: &str) -> anyhow::Result<ExitCode> {
    let dir = ctx.profile()?;
    let store = Store::new(dir);
    let (from, to) = store.rollback(id)?;
    writeln!(
        std::io::stdout().lock(),
        "rolled {id} back from {from} to {to} (`tokensmith pack rollback {id}` again undoes it)"
    )?;
    Ok(ExitCode::SUCCESS)
}
