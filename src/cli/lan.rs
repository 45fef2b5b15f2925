//! `tokensmith serve`, `join` and `hosts`: LAN play without the desktop client.

use std::io::{BufRead as _, IsTerminal as _, Write as _};
use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;

use super::{Cli, named_deck, pack_folders, play_options, profile_dir, saved_decks};
use crate::ai::{Budget, Level, Options};
use crate::net::client::{AiPlayer, Client, Update, play_with_ai};
use crate::net::discovery::{Beacon, DISCOVERY_PORT, default_targets, discover};
use crate::net::sync::{Cache, plan};
use crate::net::{Content, Host, HostConfig, HostEvent};
use crate::rules::{Catalog, Cell, Seat};

/// `tokensmith serve`.
#[derive(Debug, clap::Args)]
pub struct ServeArgs {
    /// Where to listen.
    #[arg(long, default_value = "0.0.0.0:47320", value_name = "IP:PORT")]
    pub addr: SocketAddr,
    /// Stop after this many finished games (0: run until stopped).
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub games: u32,
    /// Play the host's seat with the AI at this level, a game for each joiner (without
    /// it, two joiners share each game).
    #[arg(long, value_name = "LEVEL")]
    pub ai: Option<Level>,
    /// The host AI's deck: a deck of the loaded packs or a saved deck (default: `starter`).
    #[arg(long, value_name = "ID")]
    pub deck: Option<String>,
    /// The host AI's seat.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u8).range(1..=2))]
    pub seat: u8,
    /// Milliseconds `hard` thinks per move.
    #[arg(long, value_name = "MS")]
    pub move_time: Option<u64>,
    /// The name joiners see (default: this machine's user).
    #[arg(long)]
    pub name: Option<String>,
    /// Do not answer discovery probes (joining by address still works).
    #[arg(long)]
    pub no_discovery: bool,
    /// Do not send the game's packs to joiners who lack them.
    #[arg(long)]
    pub no_send_packs: bool,
    /// Do not save games to the profile (they cannot be resumed after a restart).
    #[arg(long)]
    pub no_save: bool,
}

/// `tokensmith join`.
#[derive(Debug, clap::Args)]
pub struct JoinArgs {
    /// The host: `IP:PORT`, `NAME:PORT`, or an IP or name (port 47320).
    pub addr: String,
    /// Play by itself with the AI at this level (without it, moves are typed in).
    #[arg(long, value_name = "LEVEL")]
    pub ai: Option<Level>,
    /// The deck: a deck of the game's packs or one of your saved decks (default:
    /// `starter`).
    #[arg(long, value_name = "ID")]
    pub deck: Option<String>,
    /// Games to play in a row.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub games: u32,
    /// Take the host's packs when yours differ, without asking.
    #[arg(long)]
    pub accept_packs: bool,
    /// Milliseconds `hard` thinks per move.
    #[arg(long, value_name = "MS")]
    pub move_time: Option<u64>,
    /// Your name, as the host sees it (default: this machine's user).
    #[arg(long)]
    pub name: Option<String>,
}

/// `tokensmith hosts`.
#[derive(Debug, clap::Args)]
pub struct HostsArgs {
    /// How long to listen for answers, in milliseconds.
    #[arg(long, default_value_t = 1_000, value_name = "MS")]
    pub wait: u64,
    /// The discovery port.
    #[arg(long, default_value_t = DISCOVERY_PORT)]
    pub port: u16,
}

fn who(name: Option<&String>) -> String {
    name.cloned()
        .or_else(|| std::env::var("USER").ok())
        .or_else(|| std::env::var("USERNAME").ok())
        .unwrap_or_else(|| "player".into())
}

fn thinking(move_time: Option<u64>) -> Options {
    Options {
        budget: Budget::Time(Duration::from_millis(move_time.unwrap_or(1_000).max(1))),
        omniscient: false,
        scripts: crate::ai::ScriptLimits::DEFAULT,
    }
}

fn load(options: &crate::content::LoadOptions) -> anyhow::Result<Arc<Catalog>> {
    let loaded = crate::script::load(options);
    match loaded.catalog {
        Some(c) => Ok(Arc::new(c)),
        None => {
            for d in &loaded.diagnostics {
                eprintln!("{d}");
            }
            anyhow::bail!("the game's packs have errors (see above)")
        }
    }
}

fn deck_name(deck: Option<&String>) -> &str {
    deck.map_or("starter", String::as_str)
}

/// `tokensmith serve`.
pub fn serve(cli: &Cli, args: &ServeArgs) -> anyhow::Result<ExitCode> {
    let options = play_options(cli);
    let catalog = load(&options)?;
    let content =
        Content::new(Arc::clone(&catalog), &options.folders).map_err(|e| anyhow::anyhow!(e))?;
    let saved = saved_decks(cli)?;
    let mut config = HostConfig::new(&who(args.name.as_ref()), args.addr);
    config.ai = args.ai;
    config.ai_options = thinking(args.move_time);
    config.ai_seat = Seat::from_number(i64::from(args.seat)).unwrap_or(Seat::One);
    if args.ai.is_some() {
        config.ai_deck = named_deck(&catalog, &saved, deck_name(args.deck.as_ref()))?;
    }
    config.games = (args.games > 0).then_some(args.games);
    config.sends_packs = !args.no_send_packs;
    config.save_dir = if args.no_save {
        None
    } else {
        profile_dir(cli).map(|d| d.join("lan-games"))
    };
    let packs: Vec<String> = content
        .packs
        .iter()
        .map(|p| format!("{} {}", p.id, p.version))
        .collect();
    let host =
        Host::start(config, content).with_context(|| format!("cannot listen on {}", args.addr))?;
    eprintln!("hosting on {} with {}", host.addr(), packs.join(", "));
    let _beacon = if args.no_discovery {
        None
    } else {
        match Beacon::start(DISCOVERY_PORT, host.announcer()) {
            Ok(b) => Some(b),
            Err(e) => {
                eprintln!(
                    "note: not answering discovery on UDP port {DISCOVERY_PORT} ({e}); join by address"
                );
                None
            }
        }
    };
    let mut out = std::io::stdout().lock();
    for event in host.events() {
        match event {
            HostEvent::Log(line) => eprintln!("{line}"),
            HostEvent::Finished(result) => {
                writeln!(out, "{result}")?;
                out.flush()?;
            }
            HostEvent::Stopped => break,
        }
    }
    // Let the last frames go out before the process ends.
    std::thread::sleep(Duration::from_millis(100));
    Ok(ExitCode::SUCCESS)
}

/// `tokensmith join`.
pub fn join(cli: &Cli, args: &JoinArgs) -> anyhow::Result<ExitCode> {
    let addr = crate::net::address(&args.addr).map_err(|e| anyhow::anyhow!(e))?;
    let name = who(args.name.as_ref());
    let temp;
    let cache = match profile_dir(cli) {
        Some(d) => Cache::new(&d),
        None => {
            temp = tempfile::tempdir()?;
            Cache::new(temp.path())
        }
    };
    let saved = saved_decks(cli)?;
    let mut out = std::io::stdout().lock();
    for _ in 0..args.games.max(1) {
        let mut client = Client::connect(addr, &name, None, Duration::from_secs(10))
            .with_context(|| format!("cannot join {addr}"))?;
        let welcome = client.welcome().clone();
        eprintln!("joined {} at {addr}", welcome.host);
        let mut plan = plan(&welcome.packs, &pack_folders(cli), &cache);
        let differences = plan.describe();
        if !differences.is_empty() {
            eprintln!("the host's packs differ from yours:");
            for line in &differences {
                eprintln!("  {line}");
            }
        }
        if !plan.to_fetch().is_empty() {
            let yes = args.accept_packs || ask("Use the host's packs for this game?")?;
            anyhow::ensure!(
                yes,
                "the game needs the host's packs: rerun with --accept-packs to take them (your own packs are not changed)"
            );
            client.fetch(&mut plan, &cache, |_, _| {})?;
            eprintln!("got the host's packs (kept apart from yours, for games with this host)");
        }
        let options = plan
            .load_options()
            .context("a pack of the host's is still missing")?;
        let catalog = load(&options)?;
        let deck = named_deck(&catalog, &saved, deck_name(args.deck.as_ref()))?;
        client.join(&crate::net::protocol::deck_keys(&catalog, &deck))?;
        let result = match args.ai {
            Some(level) => play_with_ai(
                &mut client,
                &catalog,
                &AiPlayer {
                    level,
                    options: thinking(args.move_time),
                    reconnect: Duration::from_secs(30),
                },
                &mut |line: &str| eprintln!("{line}"),
            )?,
            None => play_by_hand(&mut client, &catalog)?,
        };
        writeln!(out, "{result}")?;
        out.flush()?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Ask a yes/no question on the terminal (no terminal: no).
fn ask(question: &str) -> anyhow::Result<bool> {
    if !std::io::stdin().is_terminal() {
        return Ok(false);
    }
    eprint!("{question} [y/N] ");
    std::io::stderr().flush()?;
    let mut line = String::new();
    std::io::stdin().lock().read_line(&mut line)?;
    Ok(matches!(line.trim(), "y" | "Y" | "yes"))
}

/// Play a seat by typed moves: `STACK X Y` (stack from 1, cells from 0).
fn play_by_hand(client: &mut Client, catalog: &Catalog) -> anyhow::Result<crate::net::GameResult> {
    let stdin = std::io::stdin();
    loop {
        let Some(update) = client.next(Duration::from_secs(1))? else {
            continue;
        };
        match update {
            Update::Seated(seat) => eprintln!("seated as seat {seat}; waiting for an opponent"),
            Update::DeckRefused(reason) => anyhow::bail!("the host refused the deck: {reason}"),
            Update::Paused => eprintln!("the opponent dropped; waiting for them"),
            Update::Resumed => eprintln!("the opponent is back"),
            Update::MoveRefused { reason, .. } => eprintln!("refused: {reason}; try again"),
            Update::State { seen, last, .. } => {
                if let Some(p) = &last {
                    eprintln!("seat {} played {}", p.seat, p.card);
                }
                if seen.over {
                    return Ok(crate::net::GameResult {
                        scores: seen.scores,
                        winner: seen.winner.and_then(crate::net::protocol::seat_of),
                        moves: seen.moves,
                    });
                }
                if seen.turn != seen.seat {
                    continue;
                }
                eprint!("{}", board_text(catalog, &seen));
                loop {
                    eprint!("your move (STACK X Y): ");
                    std::io::stderr().flush()?;
                    let mut line = String::new();
                    if stdin.lock().read_line(&mut line)? == 0 {
                        anyhow::bail!("no more input: left the game");
                    }
                    let parts: Vec<i32> = line
                        .split_whitespace()
                        .filter_map(|w| w.parse().ok())
                        .collect();
                    if let [stack, x, y] = parts[..]
                        && let Ok(stack) = u8::try_from(stack - 1)
                    {
                        client.play(stack, Cell::new(x, y))?;
                        break;
                    }
                    eprintln!("type the stack number (from 1) and the cell's column and row");
                }
            }
        }
    }
}

/// The board and hand as text.
fn board_text(catalog: &Catalog, seen: &crate::net::Seen) -> String {
    use std::fmt::Write as _;
    let rules = catalog.rules();
    let mut text = format!(
        "scores: seat 1 {}, seat 2 {} (you are seat {})\n",
        seen.scores[0], seen.scores[1], seen.seat
    );
    for y in 0..i32::from(rules.height) {
        for x in 0..i32::from(rules.width) {
            match seen.tokens.iter().find(|t| t.x == x && t.y == y) {
                Some(t) => {
                    let _ = write!(text, " {}:{:<4}", t.seat, t.value);
                }
                None => text.push_str("   .   "),
            }
        }
        text.push('\n');
    }
    for (i, stack) in seen.stacks.iter().enumerate() {
        let top = stack
            .first()
            .and_then(|k| catalog.card_named(k).ok())
            .map_or_else(
                || "(empty)".to_string(),
                |c| catalog.card(c).meta.name.clone(),
            );
        let _ = writeln!(text, "stack {}: {top}", i + 1);
    }
    text
}

/// `tokensmith hosts`: the games answering on the local network.
pub fn hosts(args: &HostsArgs) -> anyhow::Result<ExitCode> {
    let found = discover(
        &default_targets(args.port),
        Duration::from_millis(args.wait),
    )?;
    let mut out = std::io::stdout().lock();
    if found.is_empty() {
        writeln!(
            out,
            "no games found (a host may have discovery off: join it by address)"
        )?;
    }
    for f in found {
        writeln!(
            out,
            "{}  {}  {} seat(s) free  packs: {}",
            f.addr,
            f.announce.name,
            f.announce.seats_free,
            f.announce.packs_text()
        )?;
    }
    Ok(ExitCode::SUCCESS)
}
