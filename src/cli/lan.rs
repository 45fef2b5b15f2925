//! `tokensmith serve`, `join` and `hosts`: LAN play without the desktop client.

use std::io::{BufRead as _, IsTerminal as _, Write as _};
use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;

use super::args::LevelArg;
use super::context::{Context, named_deck};
use crate::ai::{Budget, Level, Options};
use crate::net::client::{AiPlayer, Client, ClientError, Update, play_with_ai};
use crate::net::discovery::{Beacon, DISCOVERY_PORT, default_targets, discover};
use crate::net::host::AiDeck;
use crate::net::sync::{Cache, plan};
use crate::net::{Content, Host, HostConfig, HostEvent};
use crate::rules::{Catalog, Cell, Seat};

/// How long `join` keeps trying to take its seat back after a drop.
const RECONNECT: Duration = Duration::from_secs(30);

/// `tokensmith serve`.
#[derive(Debug, clap::Args)]
pub struct ServeArgs {
    /// Where to listen.
    #[arg(long, default_value = "0.0.0.0:47320", value_name = "IP:PORT")]
    pub addr: SocketAddr,
    /// Stop after this many finished games (0: run until stopped). Once N games have
    /// finished, no new game is taken and the games in progress play to their end.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub games: u32,
    /// Seconds a paused game (a player dropped) waits for its player before it ends and
    /// its save is removed.
    #[arg(long, default_value_t = 600, value_name = "SECONDS")]
    pub pause_expiry: u64,
    /// Seconds a player to move may take over one move: past it, the game is over and
    /// the other seat wins (a seat nobody plays does not hold a table).
    #[arg(long, default_value_t = 180, value_name = "SECONDS", value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub move_clock: u64,
    /// Play the host's seat with the AI at this level, a game for each joiner (without
    /// it, two joiners share each game).
    #[arg(long, value_name = "LEVEL")]
    pub ai: Option<LevelArg>,
    /// The host AI's deck: a deck of the loaded packs or a saved deck (default: a
    /// random-content deck made for each game, which no joiner can know).
    #[arg(long, value_name = "ID")]
    pub deck: Option<String>,
    /// The host AI's seat.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u8).range(1..=2))]
    pub seat: u8,
    /// Milliseconds `hard` thinks per move.
    #[arg(long, value_name = "MS")]
    pub move_time: Option<u64>,
    /// AI decisions that may think at once, all games together; the others wait their
    /// turn, given out by address (default: half the cores, at least 1).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub ai_workers: Option<u32>,
    /// The name joiners see (default: this machine's user).
    #[arg(long)]
    pub name: Option<String>,
    /// Do not answer discovery probes (joining by address still works).
    #[arg(long)]
    pub no_discovery: bool,
    /// The UDP port to answer discovery probes on.
    #[arg(long, default_value_t = DISCOVERY_PORT, value_name = "PORT")]
    pub discovery_port: u16,
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
    pub ai: Option<LevelArg>,
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
    /// The UDP port hosts answer discovery probes on (`serve --discovery-port`).
    #[arg(long, alias = "port", default_value_t = DISCOVERY_PORT, value_name = "PORT")]
    pub discovery_port: u16,
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
pub fn serve(ctx: &Context, args: &ServeArgs) -> anyhow::Result<ExitCode> {
    let options = ctx.play_options();
    let catalog = load(&options)?;
    let content =
        Content::new(Arc::clone(&catalog), &options.folders).map_err(|e| anyhow::anyhow!(e))?;
    let saved = ctx.saved_decks()?;
    let mut config = HostConfig::new(&who(args.name.as_ref()), args.addr);
    config.ai = args.ai.map(Level::from);
    config.ai_options = thinking(args.move_time);
    config.ai_seat = Seat::from_number(i64::from(args.seat)).unwrap_or(Seat::One);
    if args.ai.is_some() {
        match &args.deck {
            Some(name) => {
                config.ai_deck = named_deck(&catalog, &saved, name)?;
                config.ai_deck_kind = AiDeck::Chosen(name.clone());
            }
            // A deck made for each game; `starter`, shuffled, if the content cannot.
            None => config.ai_deck = named_deck(&catalog, &saved, "starter").unwrap_or_default(),
        }
    }
    config.pause_expiry = Duration::from_secs(args.pause_expiry);
    config.move_clock = Duration::from_secs(args.move_clock);
    if let Some(n) = args.ai_workers {
        config.ai_workers = n as usize;
    }
    config.games = (args.games > 0).then_some(args.games);
    config.sends_packs = !args.no_send_packs;
    config.save_dir = if args.no_save {
        None
    } else {
        ctx.profile_dir().map(|d| d.join("lan-games"))
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
        match Beacon::start_at(args.discovery_port, host.addr().ip(), host.announcer()) {
            Ok(b) => Some(b),
            Err(e) => {
                eprintln!(
                    "note: not answering discovery on UDP port {} ({e}); join by address",
                    args.discovery_port
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
pub fn join(ctx: &Context, args: &JoinArgs) -> anyhow::Result<ExitCode> {
    let addr = crate::net::address(&args.addr).map_err(|e| anyhow::anyhow!(e))?;
    let name = who(args.name.as_ref());
    let temp;
    let cache = match ctx.profile_dir() {
        Some(d) => Cache::new(d),
        None => {
            temp = tempfile::tempdir()?;
            Cache::new(temp.path())
        }
    };
    let saved = ctx.saved_decks()?;
    let lines = typed_lines();
    let mut out = std::io::stdout().lock();
    for _ in 0..args.games.max(1) {
        let mut client = match Client::connect(addr, &name, None, Duration::from_secs(10)) {
            Ok(c) => c,
            // It names the address and what to check.
            Err(e @ ClientError::Unreachable { .. }) => return Err(e.into()),
            Err(e) => return Err(anyhow::Error::new(e).context(format!("cannot join {addr}"))),
        };
        let welcome = client.welcome().clone();
        eprintln!("joined {} at {addr}", welcome.host);
        let mut plan = plan(&welcome.packs, ctx.pack_folders(), &cache);
        let differences = plan.describe();
        if !differences.is_empty() {
            eprintln!("the host's packs differ from yours:");
            for line in &differences {
                eprintln!("  {line}");
            }
        }
        // The packs this join receives: if the game does not load, only these leave the
        // cache (packs cached before, for this host or another, loaded then).
        let fetched = plan.to_fetch();
        if !fetched.is_empty() {
            let yes = args.accept_packs
                || ask("Use the host's packs for this game?", &lines, &mut client)?;
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
        let catalog = match load(&options) {
            Ok(c) => c,
            Err(e) => {
                // Packs received from the host that do not load are not kept.
                for r in plan.cached(&cache) {
                    if fetched.contains(&r.id) {
                        let _ = cache.remove(&r.hash);
                    }
                }
                return Err(e);
            }
        };
        let deck = named_deck(&catalog, &saved, deck_name(args.deck.as_ref()))?;
        client.join(&crate::net::protocol::deck_keys(&catalog, &deck))?;
        let result = match args.ai {
            Some(level) => play_with_ai(
                &mut client,
                &catalog,
                &AiPlayer {
                    level: level.into(),
                    options: thinking(args.move_time),
                    reconnect: RECONNECT,
                },
                &mut |line: &str| eprintln!("{line}"),
            )?,
            None => play_by_hand(&mut client, &catalog, &lines, RECONNECT)?,
        };
        writeln!(out, "{result}")?;
        out.flush()?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Ask a yes/no question on the terminal (no terminal: no). The answer is the next of
/// the typed `lines` (the thread reading standard input owns it), and the connection is
/// kept alive while the player thinks.
fn ask(
    question: &str,
    lines: &std::sync::mpsc::Receiver<Option<String>>,
    client: &mut Client,
) -> anyhow::Result<bool> {
    use std::sync::mpsc::RecvTimeoutError;
    if !std::io::stdin().is_terminal() {
        return Ok(false);
    }
    eprint!("{question} [y/N] ");
    std::io::stderr().flush()?;
    loop {
        match lines.recv_timeout(Duration::from_millis(500)) {
            Ok(Some(line)) => return Ok(matches!(line.trim(), "y" | "Y" | "yes")),
            Ok(None) | Err(RecvTimeoutError::Disconnected) => return Ok(false),
            Err(RecvTimeoutError::Timeout) => client.keep_alive()?,
        }
    }
}

/// The lines typed on standard input, read on a thread of their own so the connection
/// keeps being served (pinged, reconnected) while the player thinks; `None` at the end
/// of the input.
fn typed_lines() -> std::sync::mpsc::Receiver<Option<String>> {
    let (tx, rx) = std::sync::mpsc::channel();
    let spawned = crate::script::threads::spawn_light("stdin", move || {
        let stdin = std::io::stdin();
        loop {
            let mut line = String::new();
            match stdin.lock().read_line(&mut line) {
                Ok(0) | Err(_) => {
                    let _ = tx.send(None);
                    return;
                }
                Ok(_) => {
                    if tx.send(Some(line)).is_err() {
                        return;
                    }
                }
            }
        }
    });
    if spawned.is_err() {
        // No thread: the input counts as ended.
        let (tx, rx) = std::sync::mpsc::channel();
        let _ = tx.send(None);
        return rx;
    }
    rx
}

/// A typed move: `STACK X Y` (stack from 1, cells from 0).
fn parse_move(line: &str) -> Option<(u8, Cell)> {
    let parts: Vec<i32> = line
        .split_whitespace()
        .map(str::parse)
        .collect::<Result<_, _>>()
        .ok()?;
    match parts[..] {
        [stack, x, y] => Some((u8::try_from(stack.checked_sub(1)?).ok()?, Cell::new(x, y))),
        _ => None,
    }
}

fn prompt() -> anyhow::Result<()> {
    eprint!("your move (STACK X Y): ");
    std::io::stderr().flush()?;
    Ok(())
}

/// Play a seat by typed moves: `STACK X Y` (stack from 1, cells from 0). After a refused
/// move the player is asked again; the connection is pinged while they think and taken
/// back after a drop (as [`play_with_ai`] does).
fn play_by_hand(
    client: &mut Client,
    catalog: &Catalog,
    lines: &std::sync::mpsc::Receiver<Option<String>>,
    reconnect: Duration,
) -> anyhow::Result<crate::net::GameResult> {
    use std::sync::mpsc::RecvTimeoutError;
    // Whether a move is asked for and not sent yet.
    let mut asking = false;
    loop {
        if asking {
            match lines.recv_timeout(Duration::from_millis(50)) {
                Ok(Some(line)) => match parse_move(&line) {
                    Some((stack, cell)) => match client.play(stack, cell) {
                        Ok(_) => asking = false,
                        // The drop shows at the next read, which reconnects.
                        Err(e) if e.is_disconnect() => asking = false,
                        Err(e) => return Err(e.into()),
                    },
                    None => {
                        eprintln!(
                            "type the stack's number (from 1), then the cell's column (x) and row (y), say `1 2 0`"
                        );
                        prompt()?;
                    }
                },
                Ok(None) | Err(RecvTimeoutError::Disconnected) => {
                    anyhow::bail!("no more input: left the game")
                }
                Err(RecvTimeoutError::Timeout) => {}
            }
        }
        let wait = Duration::from_millis(if asking { 20 } else { 500 });
        let update = match client.next(wait) {
            Ok(Some(update)) => update,
            Ok(None) => continue,
            Err(e) if e.is_disconnect() => {
                if client.is_steady() {
                    eprintln!("connection lost ({e}); reconnecting");
                }
                *client = client.reconnect(reconnect)?;
                asking = false;
                continue;
            }
            Err(e) => return Err(e.into()),
        };
        match update {
            Update::Seated(seat) => eprintln!("seated as seat {seat}; waiting for an opponent"),
            Update::DeckRefused(reason) => anyhow::bail!("the host refused the deck: {reason}"),
            Update::Paused => eprintln!("the opponent dropped; waiting for them"),
            Update::Resumed => eprintln!("the opponent is back"),
            Update::MoveRefused { reason, .. } => {
                eprintln!("refused: {reason}; try again");
                let mine = client
                    .last_seen()
                    .is_some_and(|s| s.turn == s.seat && !s.over);
                if mine {
                    prompt()?;
                    asking = true;
                }
            }
            Update::State { seen, last, .. } => {
                if let Some(p) = &last {
                    let at = p
                        .cell
                        .map(|(x, y)| format!(" on {x} {y}"))
                        .unwrap_or_default();
                    eprintln!("seat {} played {}{at}", p.seat, p.card);
                }
                if seen.over {
                    return Ok(crate::net::GameResult {
                        scores: seen.scores,
                        winner: seen.winner.and_then(crate::net::protocol::seat_of),
                        moves: seen.moves,
                    });
                }
                asking = seen.turn == seen.seat;
                if asking {
                    eprint!("{}", board_text(catalog, &seen));
                    prompt()?;
                }
            }
        }
    }
}

/// A card as text: its name, value, token type, ability and area.
fn card_text(catalog: &Catalog, key: &str) -> String {
    let Ok(id) = catalog.card_named(key) else {
        return crate::rules::echo(key);
    };
    let card = catalog.card(id);
    let kind = &catalog.token_type(card.token).meta.name;
    let ability = card.ability.map_or_else(
        || "no ability".to_string(),
        |a| {
            let a = catalog.ability(a);
            format!("ability {} ({})", a.meta.name, a.effect.name())
        },
    );
    let area = if card.area.offsets().is_empty() {
        "no area".to_string()
    } else {
        let cells: Vec<String> = card
            .area
            .offsets()
            .iter()
            .map(|o| format!("{:+},{:+}", o.dx, o.dy))
            .collect();
        match card.area.id.and_then(|a| catalog.areas().get(a.index())) {
            Some(named) => format!("area {} ({})", named.meta.name, cells.join(" ")),
            None => format!("area {}", cells.join(" ")),
        }
    };
    format!(
        "{} - value {}, {kind}, {ability}, {area}",
        card.meta.name, card.value
    )
}

/// The board (columns and rows numbered as moves type them) and the hand as text.
fn board_text(catalog: &Catalog, seen: &crate::net::Seen) -> String {
    use std::fmt::Write as _;
    const W: usize = 6;
    let rules = catalog.rules();
    let mut text = format!(
        "scores: seat 1 {}, seat 2 {} (you are seat {}; a token shows SEAT:VALUE)\n",
        seen.scores[0], seen.scores[1], seen.seat
    );
    text.push_str(" y\\x ");
    for x in 0..i32::from(rules.width) {
        let _ = write!(text, "{x:^W$}");
    }
    text.push('\n');
    for y in 0..i32::from(rules.height) {
        let _ = write!(text, "{y:>4} ");
        for x in 0..i32::from(rules.width) {
            let cell = match seen.tokens.iter().find(|t| t.x == x && t.y == y) {
                Some(t) => format!("{}:{}", t.seat, t.value),
                None => ".".to_string(),
            };
            let _ = write!(text, "{cell:^W$}");
        }
        text.push('\n');
    }
    for (i, stack) in seen.stacks.iter().enumerate() {
        let top = stack.first().map_or_else(
            || "(empty)".to_string(),
            |k| format!("{} [{} card(s)]", card_text(catalog, k), stack.len()),
        );
        let _ = writeln!(text, "stack {}: {top}", i + 1);
    }
    let theirs: Vec<String> = seen.their_sizes.iter().map(ToString::to_string).collect();
    let _ = writeln!(text, "their stacks hold {} card(s)", theirs.join(", "));
    text
}

/// `tokensmith hosts`: the games answering on the local network.
pub fn hosts(args: &HostsArgs) -> anyhow::Result<ExitCode> {
    let found = discover(
        &default_targets(args.discovery_port),
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
