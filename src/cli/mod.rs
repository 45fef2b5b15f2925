//! The command line: the arguments (`Cli`, `Command`), and `main`, which parses them,
//! makes the run's `Context` once and hands each command to its own module. Only calls
//! inwards.
//!
//! The commands' modules use `context` (what they share: the profile, the pack folders,
//! which packs play), `args` (the options they share) and `cluster` (running on a
//! cluster), never this file or each other.
//!
//! Commands run on a thread with `script::THREAD_STACK`, the stack hooks are given
//! everywhere; the client stays on the main thread for its event loop. `pack new` and the
//! `pack` commands that use indexes are dispatched from here to `new_pack` and `index`.
//! clap stays in this module: no type outside it derives anything of clap (`LevelArg` is
//! the command line's `ai::Level`, converted with `From`), so the other layers do not
//! depend on the command line's parser.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod api;
mod args;
mod balance;
mod client;
mod cluster;
mod context;
mod deck;
mod index;
mod lan;
mod list;
mod new_pack;
mod pack;
mod packset;
mod replay;
mod scenarios;
mod schema;
mod simulate;
mod validate;

pub use args::{Globals, LevelArg};
use context::{Context, quiet_pipe};
pub use deck::DeckCommand;
use pack::PackCommand;
pub use schema::schema_text;
pub use simulate::{SimulateArgs, SimulateCommand, SimulateSub};
pub use validate::summary;

/// Tokensmith: make and balance token-placement board games.
#[derive(Debug, Parser)]
#[command(name = "tokensmith", version, about)]
pub struct Cli {
    /// The options every command takes.
    #[command(flatten)]
    pub globals: Globals,
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
        /// First get the packs a file names in `pack_hashes` that are missing here, by
        /// content hash from the profile's indexes, into a temporary set for the run.
        #[arg(long)]
        sync: bool,
        /// With --sync: keep what was fetched installed, and enable it.
        #[arg(long, requires = "sync")]
        keep: bool,
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
    Pack(PackCommand),
    /// Your author key, which `pack publish` signs with.
    #[command(subcommand)]
    Key(index::KeyCommand),
    /// The pack indexes this profile installs from, in order: add, list, remove.
    #[command(subcommand)]
    Index(index::IndexCommand),
    /// Is a card too strong? Paired games with it and with a control card in its slot,
    /// in several decks and both seats: the win-rate difference with a 95 % interval and
    /// a verdict (`--pack ID`: every card of a pack, sorted by effect). `merge`, `plan`
    /// and `status` split a fixed-size test over machines.
    Balance(balance::BalanceCommand),
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
    let worker = crate::script::threads::spawn("tokensmith", move || finish(run(&cli)));
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

fn run(cli: &Cli) -> anyhow::Result<ExitCode> {
    let ctx = Context::new(&cli.globals);
    let Some(command) = &cli.command else {
        return client::open(&ctx);
    };
    match command {
        Command::Simulate(SimulateCommand {
            sub: Some(SimulateSub::Merge { files, json, out }),
            ..
        }) => simulate::merge_reports(files, *json, out.as_deref()),
        Command::Simulate(SimulateCommand {
            sub: Some(SimulateSub::Plan(plan)),
            ..
        }) => simulate::plan(&ctx, plan),
        Command::Simulate(SimulateCommand {
            sub: Some(SimulateSub::Status { dir, json }),
            ..
        }) => simulate::status(dir, *json),
        Command::Simulate(SimulateCommand { args, .. }) => simulate::run(&ctx, args),
        Command::Deck(command) => deck::run(&ctx, command),
        Command::Pack(command) => pack_command(&ctx, command),
        Command::Key(command) => index::key(&ctx, command),
        Command::Index(command) => index::index(&ctx, command),
        Command::Balance(balance::BalanceCommand { sub: Some(sub), .. }) => balance::sub(&ctx, sub),
        Command::Balance(balance::BalanceCommand { args, .. }) => balance::run(&ctx, args),
        Command::List(args) => list::run(&ctx, args),
        Command::Serve(args) => lan::serve(&ctx, args),
        Command::Join(args) => lan::join(&ctx, args),
        Command::Hosts(args) => lan::hosts(args),
        Command::Replay(args) => replay::run(&ctx, args),
        Command::Api(args) => api::run(args),
        Command::Validate { watch: true, .. } => quiet_pipe(validate::watch(&ctx)),
        Command::Validate { json, .. } => validate::run(&ctx, *json),
        Command::Scenario {
            files,
            events,
            actual,
            sync,
            keep,
        } => {
            let flags = scenarios::ScenarioFlags {
                events: *events,
                actual: *actual,
                sync: *sync,
                keep: *keep,
            };
            scenarios::run(&ctx, files, flags)
        }
        Command::Schema { out } => {
            schema::write(out)?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// `tokensmith pack ...`: the pack commands that use indexes run in `index`, `pack new`
/// in `new_pack`, the others in `pack`.
fn pack_command(ctx: &Context, command: &PackCommand) -> anyhow::Result<ExitCode> {
    match command {
        PackCommand::New { id, scripted } => {
            new_pack::run(ctx.mods(), id, *scripted, &mut std::io::stdout().lock())?;
            Ok(ExitCode::SUCCESS)
        }
        PackCommand::Build { dir, out } => pack::build(ctx, dir, out.as_deref()),
        PackCommand::Install {
            source,
            accept_new_key,
            ..
        } if index::is_index_spec(source) => index::install(
            ctx,
            &[source.to_string_lossy().into_owned()],
            false,
            *accept_new_key,
        ),
        PackCommand::Install {
            source, replace, ..
        } => pack::install(ctx, source, *replace),
        PackCommand::Publish {
            dir,
            index,
            expires_days,
        } => index::publish_pack(ctx, dir, index, *expires_days),
        PackCommand::Yank {
            pack,
            index,
            undo,
            expires_days,
        } => index::yank_pack(ctx, pack, index, *undo, *expires_days),
        PackCommand::Rollback { id } => index::rollback(ctx, id),
        PackCommand::Lock { out } => packset::lock(ctx, out.as_deref()),
        PackCommand::Sync { file } => packset::sync(ctx, file),
        PackCommand::Why { id } => packset::why(ctx, id),
        PackCommand::Bisect {
            replay,
            scenario,
            good,
        } => {
            let test = match (replay, scenario) {
                (Some(f), _) => packset::BisectTest::Replay(f),
                (None, Some(f)) => packset::BisectTest::Scenario(f),
                (None, None) => packset::BisectTest::Validate,
            };
            packset::bisect(ctx, test, good)
        }
        PackCommand::Tree => packset::tree(ctx),
        PackCommand::Orphans { remove } => packset::orphans(ctx, *remove),
        PackCommand::Search { words, json } => index::search(ctx, words, *json),
        PackCommand::Outdated { json } => index::outdated(ctx, *json),
        PackCommand::Update {
            ids,
            accept_new_key,
        } => index::install(ctx, ids, true, *accept_new_key),
        PackCommand::List { json } => pack::list(ctx, *json),
        PackCommand::Enable { id } => pack::enable(ctx, id),
        PackCommand::Disable {
            id,
            with_dependants,
        } => pack::disable(ctx, id, *with_dependants),
        PackCommand::Order { ids } => pack::order(ctx, ids),
        PackCommand::Remove { id } => pack::remove(ctx, id),
        PackCommand::Cache { action } => pack::cache(ctx, action.as_ref()),
        PackCommand::Conflicts { json } => pack::conflicts(ctx, *json),
    }
}
