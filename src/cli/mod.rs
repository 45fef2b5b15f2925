//! The command line: `validate`, `scenario`, `schema`. Only calls inwards.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context as _;
use clap::{Parser, Subcommand};

mod api;
mod balance;
mod index;
mod lan;
mod list;
mod new_pack;
mod pack;
mod replay;

use crate::content::{LoadOptions, Loaded};
use crate::rules::describe;
use crate::scenario::{self, PackPaths, ScenarioOutcome};

/// An AI level as the command line takes it (`--ai-a LEVEL` and the like): the
/// [`ai::Level`](crate::ai::Level)s, each with the help its value shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum LevelArg {
    /// A uniformly random legal move.
    Random,
    /// Greedy's ranking with a rank-weighted random pick.
    Easy,
    /// The best immediate income swing (the reference).
    Greedy,
    /// Looks at the opponent's best reply.
    Normal,
    /// Monte Carlo tree search.
    Hard,
}

impl From<LevelArg> for crate::ai::Level {
    fn from(arg: LevelArg) -> crate::ai::Level {
        use crate::ai::Level;
        match arg {
            LevelArg::Random => Level::Random,
            LevelArg::Easy => Level::Easy,
            LevelArg::Greedy => Level::Greedy,
            LevelArg::Normal => Level::Normal,
            LevelArg::Hard => Level::Hard,
        }
    }
}

/// Tokensmith: make and balance token-placement board games.
#[derive(Debug, Parser)]
#[command(name = "tokensmith", version, about)]
pub struct Cli {
    /// Folder with the base content packs.
    #[arg(long, global = true, default_value = "content", value_name = "DIR")]
    pub content: PathBuf,
    /// Folder with mod packs (may be missing).
    #[arg(long, global = true, default_value = "mods", value_name = "DIR")]
    pub mods: PathBuf,
    /// The profile folder with saved decks, installed packs and the enabled set
    /// (default: the platform's data folder).
    #[arg(long, global = true, value_name = "DIR")]
    pub profile: Option<PathBuf>,
    /// For this run, play with the base content and exactly these packs (and what they
    /// require) instead of the profile's enabled set.
    #[arg(
        long,
        global = true,
        value_name = "ID,ID",
        value_delimiter = ',',
        conflicts_with = "all_packs"
    )]
    pub packs: Option<Vec<String>>,
    /// For this run, play with every pack found (base, mods and installed).
    #[arg(long, global = true)]
    pub all_packs: bool,
    /// What to do; with none, the desktop client opens.
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Load every pack and print every diagnostic as `path:line:col: severity: message`.
    /// Exit 0 when clean or warnings only, 1 on errors.
    Validate {
        /// Print one JSON object instead of text.
        #[arg(long, conflicts_with = "watch")]
        json: bool,
        /// Keep watching the pack folders: after every change, print the diagnostics
        /// and a line starting with `reloaded` or `error`, with the time taken.
        #[arg(long)]
        watch: bool,
    },
    /// Run scenario files and report each as pass or fail.
    /// Exit 0 when all pass, 1 on a failure, 2 when a scenario cannot be read.
    Scenario {
        /// Scenario files (YAML).
        #[arg(required = true, value_name = "FILE")]
        files: Vec<PathBuf>,
        /// Also print every event of each game, with its cause.
        #[arg(long)]
        events: bool,
        /// Also print the `expect:` block each game really ended with, to review and paste
        /// into the file after an intended rules change.
        #[arg(long)]
        actual: bool,
    },
    /// Play AI-versus-AI games and report win rates and per-card statistics.
    /// A takes seat 1 in even games and seat 2 in odd ones; the result is the same for a
    /// seed whatever the thread count (for `hard`, with --iterations rather than a time).
    Simulate(SimulateCommand),
    /// Saved decks: list, show, import, export; `random` prints a random-content deck.
    #[command(subcommand)]
    Deck(DeckCommand),
    /// Packs: build an archive, install, list, enable, disable, order, remove, and the
    /// conflict report.
    #[command(subcommand)]
    Pack(pack::PackCommand),
    /// Your author key, which `pack publish` signs with.
    #[command(subcommand)]
    Key(index::KeyCommand),
    /// The pack indexes this profile installs from, in order: add, list, remove.
    #[command(subcommand)]
    Index(index::IndexCommand),
    /// Is a card too strong? Paired games with it and with a control card in its slot,
    /// in several decks and both seats: the win-rate difference with a 95 % interval and
    /// a verdict (`--pack ID`: every card of a pack, sorted by effect).
    Balance(balance::BalanceArgs),
    /// The ids of the loaded content (the enabled packs; `--packs`, `--all-packs`) with
    /// their key fields and where each is defined: cards, abilities, token-types, areas
    /// or decks.
    List(list::ListArgs),
    /// Host LAN games (headless): each joiner gets a seat; with `--ai` the host's seat is
    /// played by the AI. Prints a `result:` line per finished game.
    Serve(lan::ServeArgs),
    /// Join a LAN game at ADDR and play it (by itself with `--ai`). Prints a `result:`
    /// line per finished game.
    Join(lan::JoinArgs),
    /// List the games hosts offer on the local network.
    Hosts(lan::HostsArgs),
    /// Play a saved game (a replay file) again under the content loaded now: the first
    /// move whose events differ, moves refused now, and both final results. Exit 0 when
    /// it plays the same, 1 when it differs, 2 when it cannot be re-run.
    Replay(replay::ReplayArgs),
    /// The script API: every ctx field and function, hook, token field, global and limit
    /// (`--json`: as data; `--luals DIR`: as LuaLS / EmmyLua editor definitions).
    Api(api::ApiArgs),
    /// Write the JSON Schemas of pack.yaml, content documents and scenarios.
    Schema {
        /// The folder to write them to.
        #[arg(long, default_value = "schemas", value_name = "DIR")]
        out: PathBuf,
    },
}

/// `tokensmith deck ...`.
#[derive(Debug, Subcommand)]
pub enum DeckCommand {
    /// List the saved decks with their stack sizes and any card the loaded packs lack.
    List,
    /// Print a saved deck as YAML.
    Show {
        /// The deck's id.
        id: String,
    },
    /// Save a deck file (a saved deck's YAML) to the profile, after checking it against
    /// the loaded content: every card must exist and the stacks must follow the rules.
    Import {
        /// The deck file.
        file: PathBuf,
        /// Save it under this id instead of the file's.
        #[arg(long = "as", value_name = "ID")]
        as_id: Option<String>,
        /// Replace a saved deck with the same id (without it, such an import is refused).
        #[arg(long)]
        replace: bool,
    },
    /// Print a saved deck as a shareable YAML file (to standard output, or `--out`).
    Export {
        /// The deck's id.
        id: String,
        /// Write it here instead.
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
    },
    /// Print a random-content deck (docs/rules.md "Random decks") as a YAML deck entry: the
    /// same seed gives the same deck for the same content.
    Random {
        /// The seed (default: from the clock, printed in the deck's name).
        #[arg(long)]
        seed: Option<u64>,
    },
}

/// Run the command line with these arguments.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    if cli.command.is_none() {
        // The window's event loop belongs on the main thread; hooks the client runs there
        // continue on new stack segments when they nest deep.
        return finish(run(&cli));
    }
    // Commands run on a thread with the stack script hooks are given everywhere (the main
    // thread's size is the system's choice).
    let worker = std::thread::Builder::new()
        .name("tokensmith".into())
        .stack_size(crate::script::THREAD_STACK)
        .spawn(move || finish(run(&cli)));
    match worker {
        Ok(handle) => handle.join().unwrap_or_else(|_| ExitCode::from(101)),
        Err(e) => {
            eprintln!("error: cannot start the command's thread: {e}");
            ExitCode::from(2)
        }
    }
}

fn finish(result: anyhow::Result<ExitCode>) -> ExitCode {
    match result {
        Ok(code) => code,
        // The reader went away (`tokensmith ... | head`): stop quietly, as command-line
        // tools do.
        Err(e) if closed_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}

/// Whether an error is a write to a closed pipe, wherever in its chain (a plain I/O
/// error, or one inside a JSON writer's error).
fn closed_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
            || c.downcast_ref::<serde_json::Error>()
                .is_some_and(|j| j.io_error_kind() == Some(std::io::ErrorKind::BrokenPipe))
    })
}

/// `tokensmith simulate`: a run, or `simulate merge`.
#[derive(Debug, clap::Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct SimulateCommand {
    /// `merge`.
    #[command(subcommand)]
    pub sub: Option<SimulateSub>,
    /// A run's options.
    #[command(flatten)]
    pub args: SimulateArgs,
}

/// `tokensmith simulate merge`.
#[derive(Debug, Subcommand)]
pub enum SimulateSub {
    /// Add up the `--json` reports of a run's shards (`--shard K/N`, every K once) into
    /// the report the whole run gives.
    Merge {
        /// The shard reports.
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
    },
}

/// Options of `tokensmith simulate`.
#[derive(Debug, clap::Args)]
pub struct SimulateArgs {
    /// Side A's deck: a deck id of the loaded packs, a saved deck's id, `random` (random
    /// content, drawn once from the seed) or `random-each` (new random content for every
    /// pair of games, the two decks swapped between the sides).
    #[arg(long, value_name = "ID", required = true)]
    pub deck_a: Option<String>,
    /// Side B's deck (the same kinds); repeat to play A against several decks in turn.
    #[arg(long, value_name = "ID", required = true)]
    pub deck_b: Vec<String>,
    /// Side A's AI level.
    #[arg(long, value_enum, default_value = "greedy")]
    pub ai_a: LevelArg,
    /// Side B's AI level.
    #[arg(long, value_enum, default_value = "greedy")]
    pub ai_b: LevelArg,
    /// Number of games.
    #[arg(long, default_value_t = 400)]
    pub games: u32,
    /// Seed of the whole run.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Worker threads (default: every core).
    #[arg(long, default_value_t = 0)]
    pub threads: usize,
    /// Thinking time per move for `hard`, in milliseconds (default 1000).
    #[arg(long, value_name = "MS", conflicts_with = "iterations")]
    pub move_time: Option<u64>,
    /// Search iterations per move for `hard` instead of a time (reproducible).
    #[arg(long, value_name = "N")]
    pub iterations: Option<u32>,
    /// Let the agents see the opponent's stacks (for measuring, not for play).
    #[arg(long)]
    pub omniscient: bool,
    /// Lua instructions one AI decision's look-ahead may spend on scripts, all its
    /// simulated moves and `evaluate` calls together.
    #[arg(long, value_name = "N", default_value_t = crate::ai::ScriptLimits::DEFAULT.instructions,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub ai_script_instructions: u64,
    /// Wall time one AI decision's look-ahead may spend on scripts, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = crate::ai::ScriptLimits::DEFAULT.wall_ms,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub ai_script_ms: u32,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
    /// Stop a game after this many moves and report it as capped.
    #[arg(long, value_name = "N", default_value_t = crate::ai::simulate::MAX_MOVES)]
    pub max_moves: u32,
    /// Play only shard K of N of the games (K from 1): game g when g % N = K − 1. Merge
    /// the shards' `--json` reports with `simulate merge`.
    #[arg(long, value_name = "K/N", value_parser = parse_shard)]
    pub shard: Option<(u32, u32)>,
}

fn parse_shard(text: &str) -> Result<(u32, u32), String> {
    let (k, n) = text
        .split_once('/')
        .ok_or_else(|| format!("'{text}' is not K/N (say 2/4)"))?;
    let k: u32 = k
        .trim()
        .parse()
        .map_err(|_| format!("'{k}' is not a shard number"))?;
    let n: u32 = n
        .trim()
        .parse()
        .map_err(|_| format!("'{n}' is not a shard count"))?;
    if n == 0 || k == 0 || k > n {
        return Err(format!("shard {k}/{n}: K must be from 1 to N"));
    }
    Ok((k, n))
}

fn run(cli: &Cli) -> anyhow::Result<ExitCode> {
    let Some(command) = &cli.command else {
        return open_client(cli);
    };
    match command {
        Command::Simulate(SimulateCommand {
            sub: Some(SimulateSub::Merge { files, json }),
            ..
        }) => merge_reports(files, *json),
        Command::Simulate(SimulateCommand { args, .. }) => simulate(cli, args),
        Command::Deck(command) => deck_command(cli, command),
        Command::Pack(command) => pack::run(cli, command),
        Command::Key(command) => index::key(cli, command),
        Command::Index(command) => index::index(cli, command),
        Command::Balance(args) => balance::run(cli, args),
        Command::List(args) => list::run(cli, args),
        Command::Serve(args) => lan::serve(cli, args),
        Command::Join(args) => lan::join(cli, args),
        Command::Hosts(args) => lan::hosts(args),
        Command::Replay(args) => replay::run(cli, args),
        Command::Api(args) => api::run(args),
        Command::Validate { watch: true, .. } => quiet_pipe(validate_watch(cli)),
        Command::Validate { json, .. } => validate(cli, *json),
        Command::Scenario {
            files,
            events,
            actual,
        } => quiet_pipe(run_scenarios(cli, files, *events, *actual)),
        Command::Schema { out } => {
            write_schemas(out)?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// No command: the desktop client.
#[cfg(feature = "client")]
fn open_client(cli: &Cli) -> anyhow::Result<ExitCode> {
    let set = match selection(cli) {
        crate::packs::Selection::Set(set) => set,
        crate::packs::Selection::All => profile_dir(cli)
            .map_or_else(crate::packs::PackSet::default, |d| {
                crate::packs::PackSet::open(&d)
            }),
    };
    let packs = crate::app::mods::Packs {
        folders: pack_folders(cli),
        set,
        profile: profile_dir(cli),
    };
    crate::app::run(play_options(cli), packs, cli.profile.clone())?;
    Ok(ExitCode::SUCCESS)
}

/// No command, in a build without the desktop client: say so and how to get it.
#[cfg(not(feature = "client"))]
fn open_client(_cli: &Cli) -> anyhow::Result<ExitCode> {
    eprintln!(
        "this tokensmith was built without the desktop client (cargo feature `client`);\n\
         run a command (see `tokensmith --help`), or build with `cargo build --features client`"
    );
    Ok(ExitCode::from(2))
}

/// A closed pipe (`tokensmith ... | head`) ends the output quietly instead of failing.
fn quiet_pipe(result: std::io::Result<ExitCode>) -> anyhow::Result<ExitCode> {
    match result {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(ExitCode::SUCCESS),
        other => Ok(other?),
    }
}

fn validate(cli: &Cli, json: bool) -> anyhow::Result<ExitCode> {
    let loaded = crate::script::load(&every_pack(cli));
    let mut out = std::io::stdout().lock();
    if json {
        serde_json::to_writer_pretty(&mut out, &validation_json(&loaded))?;
        writeln!(out)?;
    } else {
        for d in &loaded.diagnostics {
            writeln!(out, "{d}")?;
        }
        writeln!(out, "{}", summary(&loaded))?;
    }
    Ok(if loaded.error_count() > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// The profile folder: `--profile`, else the platform's data folder (if there is one).
fn profile_dir(cli: &Cli) -> Option<PathBuf> {
    cli.profile
        .clone()
        .or_else(crate::profile::Profile::default_dir)
}

/// The check `pack build` and `pack publish` run on the pack in `dir`: it loads with
/// everything it could require (base, mods and installed), found first in its folder;
/// its diagnostics as `(is_error, line)` (warnings of other packs left out).
pub(crate) fn validator(
    cli: &Cli,
    dir: &std::path::Path,
) -> impl FnOnce(&str) -> Vec<(bool, String)> {
    let folders = crate::packs::Folders {
        content: cli.content.clone(),
        mods: cli.mods.clone(),
        installed: profile_dir(cli).map(|d| crate::packs::Store::new(&d).root().to_path_buf()),
    };
    let dir = dir.to_path_buf();
    move |id: &str| {
        let mut options = crate::packs::set::load_options(
            &folders,
            &crate::packs::Selection::Set(crate::packs::PackSet::default()),
        );
        if let Some(only) = &mut options.only {
            only.push(id.to_string());
        }
        options.folders.insert(
            0,
            crate::content::PackFolder {
                path: dir.clone(),
                required: true,
            },
        );
        let loaded = crate::script::load(&options);
        let canonical = dir.canonicalize().unwrap_or_else(|_| dir.clone());
        loaded
            .diagnostics
            .iter()
            .filter(|d| {
                d.severity == crate::content::Severity::Error
                    || d.path
                        .canonicalize()
                        .is_ok_and(|p| p.starts_with(&canonical))
            })
            .map(|d| (d.severity == crate::content::Severity::Error, d.to_string()))
            .collect()
    }
}

/// The pack folders: base content, mods, and the profile's installed packs.
fn pack_folders(cli: &Cli) -> crate::packs::Folders {
    crate::packs::Folders {
        content: cli.content.clone(),
        mods: cli.mods.clone(),
        installed: profile_dir(cli).map(|d| crate::packs::Store::new(&d).root().to_path_buf()),
    }
}

/// Which packs the commands that play use: `--packs`, `--all-packs`, or the profile's
/// enabled set (base content only without one).
fn selection(cli: &Cli) -> crate::packs::Selection {
    use crate::packs::{PackSet, Selection};
    if cli.all_packs {
        return Selection::All;
    }
    if let Some(ids) = &cli.packs {
        return Selection::Set(PackSet::only(ids));
    }
    let set = profile_dir(cli).map_or_else(PackSet::default, |d| {
        crate::packs::Store::new(&d).recover();
        PackSet::open(&d)
    });
    for note in &set.notes {
        eprintln!("note: {note}");
    }
    Selection::Set(set)
}

/// The load options of a command that plays.
fn play_options(cli: &Cli) -> LoadOptions {
    crate::packs::set::load_options(&pack_folders(cli), &selection(cli))
}

/// The load options of `validate`: every pack found.
fn every_pack(cli: &Cli) -> LoadOptions {
    crate::packs::set::load_options(&pack_folders(cli), &crate::packs::Selection::All)
}

/// The profile the command line uses.
fn open_profile(cli: &Cli) -> anyhow::Result<crate::profile::Profile> {
    let dir = match &cli.profile {
        Some(d) => d.clone(),
        None => crate::profile::Profile::default_dir()
            .context("no data folder on this system: give --profile DIR")?,
    };
    let profile = crate::profile::Profile::open(&dir).map_err(|e| anyhow::anyhow!(e))?;
    Ok(profile)
}

/// Lock the profile in `dir` (waiting a bounded time; see `profile::lock`).
pub(crate) fn lock_profile(
    dir: &std::path::Path,
    access: crate::profile::Access,
) -> anyhow::Result<crate::profile::ProfileLock> {
    crate::profile::ProfileLock::acquire(dir, access).map_err(|e| anyhow::anyhow!(e))
}

/// `deck list|show|import|export`.
fn deck_command(cli: &Cli, command: &DeckCommand) -> anyhow::Result<ExitCode> {
    if let DeckCommand::Random { seed } = command {
        // Random content needs no profile.
        return quiet_pipe(random_deck(cli, *seed));
    }
    let mut profile = open_profile(cli)?;
    // Reading decks may migrate or set files aside: the profile is locked for a change
    // while they are read (and while one is imported).
    let lock = lock_profile(profile.dir(), crate::profile::Access::Write)?;
    let decks = profile.decks();
    if !matches!(command, DeckCommand::Import { .. }) {
        drop(lock);
    }
    for note in &profile.notes {
        eprintln!("note: {note}");
    }
    let mut out = std::io::stdout().lock();
    match command {
        DeckCommand::List => {
            let loaded = crate::script::load(&play_options(cli));
            if decks.is_empty() {
                writeln!(out, "no saved decks in {}", profile.dir().display())?;
            }
            for d in &decks {
                let sizes: Vec<String> = d.stacks.iter().map(|s| s.len().to_string()).collect();
                let status = match &loaded.catalog {
                    Some(c) => {
                        let r = d.resolve(c);
                        if r.missing.is_empty() {
                            "ok".to_string()
                        } else {
                            format!("not in the loaded packs: {}", r.missing.join(", "))
                        }
                    }
                    None => "not checked (the packs have errors)".to_string(),
                };
                writeln!(
                    out,
                    "{}\t{}\tstacks {}\t{status}",
                    d.id,
                    d.name,
                    sizes.join("+")
                )?;
            }
            Ok(ExitCode::SUCCESS)
        }
        DeckCommand::Show { id } | DeckCommand::Export { id, out: None } => {
            let deck = find_deck(&decks, id)?;
            write!(out, "{}", deck.to_yaml())?;
            Ok(ExitCode::SUCCESS)
        }
        DeckCommand::Export {
            id,
            out: Some(file),
        } => {
            let deck = find_deck(&decks, id)?;
            crate::fsutil::write_atomic(file, deck.to_yaml().as_bytes())
                .with_context(|| format!("cannot write {}", file.display()))?;
            writeln!(out, "exported deck {id} to {}", file.display())?;
            Ok(ExitCode::SUCCESS)
        }
        DeckCommand::Import {
            file,
            as_id,
            replace,
        } => import_deck(cli, &profile, file, as_id.as_deref(), *replace),
        DeckCommand::Random { seed } => quiet_pipe(random_deck(cli, *seed)),
    }
}

fn find_deck<'a>(
    decks: &'a [crate::profile::SavedDeck],
    id: &str,
) -> anyhow::Result<&'a crate::profile::SavedDeck> {
    decks.iter().find(|d| d.id == id).with_context(|| {
        let hint = crate::rules::nearest(id, decks.iter().map(|d| d.id.as_str()))
            .map(|n| format!(" (did you mean '{n}'?)"))
            .unwrap_or_default();
        format!("no saved deck '{id}'{hint}; `tokensmith deck list` shows them")
    })
}

/// `deck import FILE [--as ID] [--replace]`: check a deck file against the loaded
/// content, then save it; a saved deck of the same id is replaced only when asked.
fn import_deck(
    cli: &Cli,
    profile: &crate::profile::Profile,
    file: &Path,
    as_id: Option<&str>,
    replace: bool,
) -> anyhow::Result<ExitCode> {
    let text = crate::fsutil::read_text(file, crate::fsutil::MAX_PROFILE_FILE, "a deck file")
        .with_context(|| format!("cannot read {}", crate::fsutil::shown(file)))?;
    let stem = file
        .file_stem()
        .map(|s| s.to_string_lossy().to_string())
        .unwrap_or_default();
    let (mut deck, _) = crate::profile::parse_deck(&text, &stem)
        .map_err(|e| anyhow::anyhow!("{}: {e}", file.display()))?;
    if let Some(id) = as_id {
        deck.id = id.to_string();
    }
    if !replace && profile.is_taken(&deck.id) {
        let free = crate::profile::id_for(&deck.id, |id| profile.is_taken(id));
        anyhow::bail!(
            "a deck '{}' is saved already; import with --replace to overwrite it, or --as {free} to keep both",
            deck.id
        );
    }
    let loaded = crate::script::load(&play_options(cli));
    let Some(catalog) = loaded.catalog else {
        anyhow::bail!("the packs have errors; fix them first (see `tokensmith validate`)");
    };
    let resolved = deck.resolve(&catalog);
    if !resolved.missing.is_empty() {
        anyhow::bail!(
            "{}: cards not in the loaded packs: {}",
            file.display(),
            resolved.missing.join(", ")
        );
    }
    crate::rules::Engine::new(&catalog, &crate::rules::NoHooks)
        .check_deck(crate::rules::Seat::One, &resolved.stacks)
        .map_err(|e| {
            anyhow::anyhow!(
                "{}: {}",
                file.display(),
                e.message(crate::rules::Whose::Deck)
            )
        })?;
    let saved = if replace {
        profile.save(&deck)
    } else {
        profile.create(&deck)
    };
    let path = saved.map_err(|e| anyhow::anyhow!(e))?;
    writeln!(
        std::io::stdout().lock(),
        "imported deck {} ({}) to {}",
        deck.id,
        deck.name,
        path.display()
    )?;
    Ok(ExitCode::SUCCESS)
}

/// `deck random`: a random-content deck as YAML, or why none can be made.
fn random_deck(cli: &Cli, seed: Option<u64>) -> std::io::Result<ExitCode> {
    let loaded = crate::script::load(&play_options(cli));
    let Some(catalog) = loaded.catalog else {
        for d in &loaded.diagnostics {
            eprintln!("{d}");
        }
        eprintln!("error: the packs have errors; fix them first");
        return Ok(ExitCode::from(1));
    };
    let seed = seed.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_secs())
    });
    let scripts = crate::ai::hooks_for(&catalog);
    let engine = scripts.brain(&catalog);
    match crate::ai::decks::random_content(&engine, seed) {
        Ok(stacks) => {
            let mut out = std::io::stdout().lock();
            writeln!(out, "decks:")?;
            writeln!(out, "  - id: random_{seed}")?;
            writeln!(out, "    name: Random deck {seed}")?;
            writeln!(
                out,
                "    description: Random content (tokensmith deck random --seed {seed})."
            )?;
            writeln!(out, "    stacks:")?;
            for stack in &stacks {
                let ids: Vec<String> = stack.iter().map(|&c| catalog.card(c).meta.key()).collect();
                writeln!(out, "      - [{}]", ids.join(", "))?;
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            eprintln!("error: {e}");
            Ok(ExitCode::from(1))
        }
    }
}

/// `validate --watch`: validate, then again after every change, until interrupted.
fn validate_watch(cli: &Cli) -> std::io::Result<ExitCode> {
    let options = every_pack(cli);
    let started = std::time::Instant::now();
    let loaded = crate::script::load(&options);
    let mut out = std::io::stdout().lock();
    for d in &loaded.diagnostics {
        writeln!(out, "{d}")?;
    }
    let verb = if loaded.catalog.is_some() {
        "loaded"
    } else {
        "error"
    };
    writeln!(
        out,
        "{verb} in {} ms: {}",
        started.elapsed().as_millis(),
        loaded.summary()
    )?;
    let watcher = match crate::reload::Watcher::start(options, crate::reload::DEBOUNCE, || {}) {
        Ok(w) => w,
        Err(e) => {
            eprintln!("error: {e}");
            return Ok(ExitCode::from(2));
        }
    };
    let folders: Vec<String> = watcher
        .folders
        .iter()
        .map(|f| f.display().to_string())
        .collect();
    writeln!(out, "watching {} (Ctrl+C stops)", folders.join(", "))?;
    out.flush()?;
    loop {
        if let Some(reload) = watcher.wait(std::time::Duration::from_secs(3600)) {
            for d in &reload.loaded.diagnostics {
                writeln!(out, "{d}")?;
            }
            writeln!(out, "{}", reload.summary())?;
            out.flush()?;
        }
    }
}

/// One line on a load: packs and cards loaded, errors and warnings.
#[must_use]
pub fn summary(loaded: &Loaded) -> String {
    loaded.summary()
}

fn validation_json(loaded: &Loaded) -> serde_json::Value {
    let packs: Vec<serde_json::Value> = loaded
        .packs
        .iter()
        .map(|p| serde_json::json!({ "id": p.id, "name": p.name, "version": p.version }))
        .collect();
    let counts = loaded.catalog.as_ref().map(|c| {
        serde_json::json!({
            "areas": c.areas().len(),
            "token_types": c.token_types().len(),
            "abilities": c.abilities().len(),
            "cards": c.cards().len(),
            "decks": c.decks().len(),
        })
    });
    serde_json::json!({
        "ok": loaded.error_count() == 0,
        "errors": loaded.error_count(),
        "warnings": loaded.warning_count(),
        "packs": packs,
        "counts": counts,
        "diagnostics": loaded.diagnostics,
    })
}

fn run_scenarios(
    cli: &Cli,
    files: &[PathBuf],
    events: bool,
    actual: bool,
) -> std::io::Result<ExitCode> {
    let mut out = std::io::stdout().lock();
    let paths = PackPaths {
        content: cli.content.clone(),
        mods: cli.mods.clone(),
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

fn simulate(cli: &Cli, args: &SimulateArgs) -> anyhow::Result<ExitCode> {
    use crate::ai::simulate::{self, Config, DeckChoice};
    use crate::ai::{Budget, Options};

    let loaded = crate::script::load(&play_options(cli));
    let Some(catalog) = loaded.catalog else {
        for d in &loaded.diagnostics {
            eprintln!("{d}");
        }
        anyhow::bail!("the packs have errors; fix them first (see `tokensmith validate`)");
    };
    let saved = saved_decks(cli)?;
    let scripts = crate::ai::hooks_for(&catalog);
    let engine = scripts.brain(&catalog);
    let mut draws = 0u64;
    let mut deck = |name: &str| -> anyhow::Result<DeckChoice> {
        if name == "random" {
            draws += 1;
            let seed = args
                .seed
                .wrapping_mul(0x9E37_79B9_7F4A_7C15)
                .wrapping_add(draws);
            let stacks = crate::ai::decks::random_content(&engine, seed)?;
            return Ok(DeckChoice {
                id: format!("random#{draws}"),
                stacks,
                per_game: false,
            });
        }
        if name == "random-each" {
            // Checked once here, so a content that cannot make a random deck is said now.
            crate::ai::decks::random_content(&engine, args.seed)?;
            return Ok(DeckChoice {
                id: "random-each".to_string(),
                stacks: Vec::new(),
                per_game: true,
            });
        }
        Ok(DeckChoice {
            id: name.to_string(),
            stacks: named_deck(&catalog, &saved, name).map_err(|e| {
                anyhow::anyhow!("{e}; `random` draws random content, `random-each` new random content every two games")
            })?,
            per_game: false,
        })
    };
    let budget = match (args.iterations, args.move_time) {
        (Some(n), _) => Budget::Iterations(n.max(1)),
        (None, Some(ms)) => Budget::Time(std::time::Duration::from_millis(ms.max(1))),
        (None, None) => Budget::Time(std::time::Duration::from_secs(1)),
    };
    let config = Config {
        deck_a: deck(args.deck_a.as_deref().unwrap_or_default())?,
        decks_b: args
            .deck_b
            .iter()
            .map(|d| deck(d))
            .collect::<anyhow::Result<_>>()?,
        ai_a: args.ai_a.into(),
        ai_b: args.ai_b.into(),
        games: args.games,
        seed: args.seed,
        threads: args.threads,
        options: Options {
            budget,
            omniscient: args.omniscient,
            scripts: crate::ai::ScriptLimits {
                instructions: args.ai_script_instructions,
                wall_ms: args.ai_script_ms,
            },
        },
        max_moves: args.max_moves.max(1),
        shard: args.shard,
    };
    let bar = if std::io::IsTerminal::is_terminal(&std::io::stderr()) {
        let bar = indicatif::ProgressBar::new(u64::from(args.games));
        if let Ok(style) = indicatif::ProgressStyle::with_template(
            "{bar:40} {pos}/{len} games {per_sec} eta {eta}",
        ) {
            bar.set_style(style);
        }
        bar
    } else {
        indicatif::ProgressBar::hidden()
    };
    // This thread runs no games: its script host goes back to the pool the workers'
    // hosts come from.
    drop(engine);
    drop(scripts);
    crate::ai::release_hosts();
    if let (_, Some(note)) = simulate::workers(&catalog, config.threads) {
        eprintln!("note: {note}");
    }
    let report = simulate::simulate(&catalog, &config, &|| bar.inc(1));
    bar.finish_and_clear();
    let mut out = std::io::stdout().lock();
    if args.json {
        serde_json::to_writer_pretty(&mut out, &report)?;
        writeln!(out)?;
    } else {
        write_report(&mut out, &report)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The profile's saved decks (none without a profile).
fn saved_decks(cli: &Cli) -> anyhow::Result<Vec<crate::profile::SavedDeck>> {
    Ok(match &cli.profile {
        Some(_) => {
            let mut p = open_profile(cli)?;
            let _lock = lock_profile(p.dir(), crate::profile::Access::Write)?;
            p.decks()
        }
        None => crate::profile::Profile::default_dir()
            .filter(|d| d.is_dir())
            .and_then(|d| crate::profile::Profile::open(&d).ok())
            .and_then(|mut p| {
                let _lock = lock_profile(p.dir(), crate::profile::Access::Write).ok()?;
                Some(p.decks())
            })
            .unwrap_or_default(),
    })
}

/// The deck called `name`: a deck of the loaded packs, else a saved deck.
fn named_deck(
    catalog: &crate::rules::Catalog,
    saved: &[crate::profile::SavedDeck],
    name: &str,
) -> anyhow::Result<Vec<Vec<crate::rules::CardId>>> {
    if let Ok(id) = catalog.deck_named(name) {
        return Ok(catalog.deck(id).stacks.clone());
    }
    if let Some(d) = saved.iter().find(|d| d.id == name) {
        let r = d.resolve(catalog);
        anyhow::ensure!(
            r.missing.is_empty(),
            "saved deck '{name}' names cards the loaded packs lack: {}",
            r.missing.join(", ")
        );
        return Ok(r.stacks);
    }
    let known = catalog
        .decks()
        .iter()
        .map(|d| d.meta.id.as_str())
        .chain(saved.iter().map(|d| d.id.as_str()));
    let hint = crate::rules::nearest(name, known)
        .map(|n| format!(" (did you mean '{n}'?)"))
        .unwrap_or_default();
    anyhow::bail!("no deck '{name}' in the loaded packs or the saved decks{hint}")
}

fn write_report(
    out: &mut impl std::io::Write,
    r: &crate::ai::simulate::Report,
) -> std::io::Result<()> {
    let pct = |x: f64| format!("{:.1}%", 100.0 * x);
    if let Some(run) = &r.totals.run {
        let shards = if run.shards > 1 {
            let list: Vec<String> = r.totals.shards.iter().map(ToString::to_string).collect();
            format!(" (shard {} of {})", list.join(", "), run.shards)
        } else {
            String::new()
        };
        writeln!(
            out,
            "{} games{shards}: A ({} with {}) vs B ({} with {})",
            r.games,
            run.ai_a,
            run.deck_a,
            run.ai_b,
            run.decks_b.join(", ")
        )?;
    }
    writeln!(
        out,
        "A won {}, B won {}, {} draws",
        r.wins_a, r.wins_b, r.draws
    )?;
    writeln!(
        out,
        "A's win rate {} (95% CI {} to {}); first seat's win rate {}",
        pct(r.win_rate_a),
        pct(r.ci95_a[0]),
        pct(r.ci95_a[1]),
        pct(r.first_seat_win_rate)
    )?;
    writeln!(
        out,
        "average margin for A {:+.1}; {:.1} moves a game; {:.0} games/s",
        r.avg_margin_a, r.avg_moves, r.games_per_second
    )?;
    if r.capped_games > 0 {
        let pairs: Vec<String> = r
            .capped_pairings
            .iter()
            .map(|(p, n)| format!("{p}: {n}"))
            .collect();
        writeln!(
            out,
            "warning: {} of {} games reached the {}-move cap and count as draws ({}); these decks may never finish a game (--max-moves stops them sooner)",
            r.capped_games,
            r.games,
            r.max_moves,
            pairs.join(", ")
        )?;
    }
    if r.decisions_cut > 0 {
        writeln!(
            out,
            "warning: {} AI decisions ran out of their script budget and chose among the moves rated by then (--ai-script-instructions, --ai-script-ms)",
            r.decisions_cut
        )?;
    }
    if r.script_refusals > 0 {
        let broken = r.cards.iter().filter(|c| c.broken).count();
        writeln!(
            out,
            "warning: scripts refused {} moves ({broken} broken card(s), below); each was replaced by another legal move",
            r.script_refusals
        )?;
    }
    if r.engine_refusals > 0 {
        writeln!(
            out,
            "note: the engine refused {} moves the AI chose",
            r.engine_refusals
        )?;
    }
    writeln!(out)?;
    writeln!(
        out,
        "{:<22} {:>7} {:>7} {:>6} {:>8} {:>9} {:>7}",
        "card", "played", "offered", "pick", "swing", "win rate", "refused"
    )?;
    let mut cards = r.cards.clone();
    cards.sort_by(|a, b| b.win_rate_when_played.total_cmp(&a.win_rate_when_played));
    for c in &cards {
        let verdict = if c.broken {
            format!(
                "  broken: {}",
                c.first_error.as_deref().unwrap_or("its script failed")
            )
        } else if c.dead {
            "  dead: almost never chosen".to_string()
        } else {
            String::new()
        };
        writeln!(
            out,
            "{:<22} {:>7} {:>7} {:>6} {:>8.1} {:>9} {:>7}{verdict}",
            c.id,
            c.played,
            c.offered,
            pct(c.pick_rate),
            c.avg_income_swing,
            pct(c.win_rate_when_played),
            c.refused
        )?;
    }
    if cards.iter().any(|c| c.dead) {
        writeln!(
            out,
            "dead: the AI rarely chose the card when it could; that is not how much it wins when played: `tokensmith balance CARD` measures that"
        )?;
    }
    Ok(())
}

/// `simulate merge`.
fn merge_reports(files: &[PathBuf], json: bool) -> anyhow::Result<ExitCode> {
    let mut parts = Vec::with_capacity(files.len());
    for f in files {
        let text = crate::fsutil::read_text(f, 64 << 20, "a simulation report")
            .with_context(|| format!("cannot read {}", crate::fsutil::shown(f)))?;
        #[derive(serde::Deserialize)]
        struct Shard {
            totals: crate::ai::simulate::Totals,
        }
        let shard: Shard = serde_json::from_str(&text).with_context(|| {
            format!(
                "{} is not a `simulate --json` report",
                crate::fsutil::shown(f)
            )
        })?;
        parts.push(shard.totals);
    }
    let report = crate::ai::simulate::merge(&parts).map_err(|e| {
        let name = |i: usize| files.get(i).map(|f| crate::fsutil::shown(f));
        match e.report().and_then(|i| name(i - 1)) {
            Some(file) => {
                let first = name(0).unwrap_or_default();
                let text = e.to_string().replace("the first report", &first);
                anyhow::anyhow!("cannot merge {file}: it {text}")
            }
            None => anyhow::anyhow!("cannot merge: {e}"),
        }
    })?;
    let mut out = std::io::stdout().lock();
    if json {
        serde_json::to_writer_pretty(&mut out, &report)?;
        writeln!(out)?;
    } else {
        write_report(&mut out, &report)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The text of a schema file as `schema` writes it.
pub fn schema_text(schema: &schemars::Schema) -> anyhow::Result<String> {
    Ok(serde_json::to_string_pretty(schema)? + "\n")
}

fn write_schemas(out: &Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
    for (name, schema) in scenario::schemas() {
        let path = out.join(name);
        crate::fsutil::write_atomic(&path, schema_text(&schema)?.as_bytes())
            .with_context(|| format!("cannot write {}", path.display()))?;
        writeln!(std::io::stdout().lock(), "wrote {}", path.display())?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::LevelArg;
    use crate::ai::Level;
    use clap::ValueEnum as _;

    /// The command line takes every level, by the level's own name.
    #[test]
    fn level_args_are_the_levels_by_name() {
        let levels: Vec<Level> = LevelArg::value_variants()
            .iter()
            .map(|&a| Level::from(a))
            .collect();
        assert_eq!(levels, Level::ALL);
        for &arg in LevelArg::value_variants() {
            let shown = arg.to_possible_value().map(|v| v.get_name().to_string());
            assert_eq!(shown.as_deref(), Some(Level::from(arg).name()));
        }
    }
}
