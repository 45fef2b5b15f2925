//! The host: the only place a network game's rules run. This file holds its settings,
//! its content, the [`Host`] handle and what every part reads (`Common`: the settings,
//! the content, the log, whether it is stopping). Each part owns its own state:
//!
//! - [`listener`]: one thread waits for connections and for the host to stop (a poll
//!   woken by either); it numbers each connection and admits it through the
//!   [`conn::Register`], which applies the limits per address and makes connections that
//!   hold no seat give way to joiners.
//! - [`peer`]: one connection, on a reader thread of its own: the handshake, frames capped
//!   at [`MAX_TO_HOST_FRAME`](super::protocol::MAX_TO_HOST_FRAME) and decoded within the
//!   protocol's limits, the flood limit, the deck check, pack sending; it writes only
//!   through its [`conn::Writer`]. [`conn::Connections`] are the register, the writers
//!   and the pack transfers of all of them.
//! - [`lobby`] (one lock, held only to decide) knows each game's seats, tokens, owner
//!   address and whether it is paused: seating, reconnects, eviction and discovery read
//!   it and never wait on a game; it starts the games and takes the saved ones up at
//!   start, and counts the finished ones toward `--games`.
//! - [`table`]: each game has one owner, a thread receiving what happens to it over a
//!   channel: no lock is held while the AI thinks, a save is written or frames go out.
//!   [`table::Tables`] counts the games' threads and holds the [`think`] gate: the AI
//!   decisions of all games share a few places to think, given out in turn by address.
//!
//! The host's own thread waits on a channel: a message from [`Host::stop`] (or the
//! lobby, once `--games` games are played), or every sender gone, and then stops the
//! parts in order (`shut_down`). Nothing connects to the host to wake it.
//!
//! A misbehaving connection is closed with a logged reason; nothing it sends can stop the
//! host or another game, and a game that fails inside ends alone.

mod conn;
mod listener;
mod lobby;
mod peer;
mod table;
mod think;

use std::collections::HashMap;
use std::net::{SocketAddr, TcpListener};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Duration;

use crate::ai::{self, Level};
use crate::rules::{CardId, Catalog, Seat};

use super::frame;
use super::protocol::{PackRef, clean};
use conn::Connections;
use lobby::Lobby;

pub use peer::FLOOD_LIMIT;
pub use think::default_workers;

/// What the host's AI seat plays.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AiDeck {
    /// A random-content deck made for each game (the default: a joiner cannot know it).
    /// If the content cannot make one, [`HostConfig::ai_deck`] (or `starter`) shuffled.
    Random,
    /// [`HostConfig::ai_deck`] (or `starter`) with its stacks in a random order and each
    /// stack's cards shuffled, for each game.
    Shuffled,
    /// [`HostConfig::ai_deck`] as it is: the host's choice, named here for the welcome.
    Chosen(String),
}

impl AiDeck {
    /// What the welcome says of it.
    #[must_use]
    pub fn describe(&self) -> String {
        match self {
            AiDeck::Random => "a random-content deck, new for each game".into(),
            AiDeck::Shuffled => "a deck of the game's content, shuffled for each game".into(),
            AiDeck::Chosen(name) => format!("the host's deck '{}'", clean(name)),
        }
    }
}

/// How a host runs.
#[derive(Clone, Debug)]
pub struct HostConfig {
    /// The name joiners see.
    pub name: String,
    /// Where to listen (port 0: any free port).
    pub addr: SocketAddr,
    /// The AI playing the host's own seat at every table (`None`: two joiners share a
    /// table).
    pub ai: Option<Level>,
    /// How the AI thinks.
    pub ai_options: ai::Options,
    /// The host AI's seat.
    pub ai_seat: Seat,
    /// The host AI's deck, as [`HostConfig::ai_deck_kind`] uses it (empty: `starter`).
    pub ai_deck: Vec<Vec<CardId>>,
    /// What the host AI plays (default: [`AiDeck::Random`]).
    pub ai_deck_kind: AiDeck,
    /// Stop after this many finished games (`None`: run until stopped). Once reached,
    /// no new game is taken and the games in progress play to their end.
    pub games: Option<u32>,
    /// Whether joiners may fetch the game's packs.
    pub sends_packs: bool,
    /// Where games are saved after each move, to resume after a restart.
    pub save_dir: Option<PathBuf>,
    /// A connection silent this long is taken as dropped (clients ping well within it).
    pub idle: Duration,
    /// How long a started frame may take to arrive in full.
    pub frame_deadline: Duration,
    /// How long a new connection has to start its `Hello` (and again to finish it).
    pub handshake: Duration,
    /// How long a paused game waits for its missing player before it ends and its save
    /// is removed.
    pub pause_expiry: Duration,
    /// How long a player to move may take over one move (the game not paused): past it,
    /// the game is over and the other seat wins.
    pub move_clock: Duration,
    /// Most connections served at once (when full, a connection holding no seat is
    /// closed to make room).
    pub max_connections: usize,
    /// Most connections from one address.
    pub max_connections_per_address: usize,
    /// How long a connection without a seat is spared before it may be closed to make
    /// room for a newcomer (when none is that old, the newcomer is turned away).
    pub settling: Duration,
    /// Most games held at once.
    pub max_tables: usize,
    /// Most games one address may hold (counted by the address that opened each game).
    pub max_tables_per_address: usize,
    /// AI decisions that may think at once, all games together (at least 1; the others
    /// wait their turn, given out by address: see [`default_workers`]).
    pub ai_workers: usize,
    /// Bytes one AI decision's search may hold ([`ai::DECISION_MEMORY`]): with at most
    /// `ai_workers` decisions at once, the host's AI search holds at most their product.
    pub ai_memory: usize,
    /// Pack transfers at once, all connections together (at least 1): a joiner beyond
    /// them waits up to 20 s for its turn, then is told to join again.
    pub max_transfers: usize,
}

/// How long a paused game waits by default: long enough to restart a crashed client or
/// walk back to a machine, short enough that abandoned games do not pile up.
pub const PAUSE_EXPIRY: Duration = Duration::from_secs(600);

/// How long a player may take over one move by default: ample for thinking, short enough
/// that a seat nobody plays does not hold a table for long.
pub const MOVE_CLOCK: Duration = Duration::from_secs(180);

/// How long a new connection has by default to start its `Hello`.
pub const HANDSHAKE: Duration = Duration::from_secs(5);

impl HostConfig {
    /// How long a game must have made no move before it may be ended to make room for a
    /// new one: a third of the move clock, at most a minute.
    #[must_use]
    pub fn idle_game(&self) -> Duration {
        (self.move_clock / 3).min(Duration::from_secs(60))
    }

    /// A host on `addr` with the defaults: no AI, sends packs, no saves.
    #[must_use]
    pub fn new(name: &str, addr: SocketAddr) -> HostConfig {
        HostConfig {
            name: name.to_string(),
            addr,
            ai: None,
            ai_options: ai::Options::default(),
            ai_seat: Seat::One,
            ai_deck: Vec::new(),
            ai_deck_kind: AiDeck::Random,
            games: None,
            sends_packs: true,
            save_dir: None,
            idle: Duration::from_secs(30),
            frame_deadline: frame::FRAME_DEADLINE,
            handshake: HANDSHAKE,
            pause_expiry: PAUSE_EXPIRY,
            move_clock: MOVE_CLOCK,
            max_connections: 256,
            max_connections_per_address: 32,
            settling: conn::SETTLING,
            max_tables: 128,
            max_tables_per_address: 32,
            ai_workers: think::default_workers(),
            ai_memory: ai::DECISION_MEMORY,
            max_transfers: 8,
        }
    }
}

/// A game's content as the host offers it: the catalog, its packs in load order with
/// their hashes, and each pack's archive for joiners who lack it.
#[derive(Clone, Debug)]
pub struct Content {
    /// The catalog every table plays with.
    pub catalog: Arc<Catalog>,
    /// Its packs, in load order.
    pub packs: Vec<PackRef>,
    archives: HashMap<String, Arc<Vec<u8>>>,
}

/// Why a host cannot offer its content to joiners.
#[derive(Debug, thiserror::Error)]
pub enum ContentError {
    /// A loaded pack's folder was not found.
    #[error("pack '{0}' is loaded but not found in the pack folders")]
    NotFound(String),
    /// A pack could not be made into the archive joiners get.
    #[error("cannot pack '{id}' for joiners: {source}")]
    Pack {
        /// The pack.
        id: String,
        /// Why.
        #[source]
        source: crate::packs::PackError,
    },
}

impl Content {
    /// The content of `catalog`, whose packs are found in `folders` (the load options'
    /// folders; the first pack found with each id, as the loader takes them).
    pub fn new(
        catalog: Arc<Catalog>,
        folders: &[crate::content::PackFolder],
    ) -> Result<Content, ContentError> {
        let mut diags = crate::content::Diagnostics::default();
        let found = crate::content::discover::discover(folders, &mut diags);
        let mut packs = Vec::new();
        let mut archives = HashMap::new();
        for info in catalog.packs() {
            let dir = found
                .packs
                .iter()
                .find(|p| p.id() == info.id)
                .map(|p| p.dir.clone())
                .ok_or_else(|| ContentError::NotFound(info.id.clone()))?;
            let built =
                crate::packs::build(&dir, |_| Vec::new()).map_err(|source| ContentError::Pack {
                    id: info.id.clone(),
                    source,
                })?;
            packs.push(PackRef {
                id: info.id.clone(),
                version: info.version.clone(),
                hash: built.hash.clone(),
            });
            archives.insert(info.id.clone(), Arc::new(built.bytes));
        }
        Ok(Content {
            catalog,
            packs,
            archives,
        })
    }

    /// Replace the archive sent for `id` (tests: a host whose bytes do not match its
    /// announced hash).
    pub fn set_archive(&mut self, id: &str, bytes: Vec<u8>) {
        self.archives.insert(id.to_string(), Arc::new(bytes));
    }
}

/// A finished game.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GameResult {
    /// Final scores, seat 1 first.
    pub scores: [i64; 2],
    /// The winner, or `None` for a draw.
    pub winner: Option<Seat>,
    /// Moves played.
    pub moves: u32,
}

impl std::fmt::Display for GameResult {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let winner = self
            .winner
            .map_or_else(|| "draw".to_string(), |s| format!("seat {s}"));
        write!(
            f,
            "result: seat 1 {}, seat 2 {}, winner {winner}",
            self.scores[0], self.scores[1]
        )
    }
}

/// What a host reports as it runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HostEvent {
    /// A line for the log: connections, refusals and why a connection was closed.
    Log(String),
    /// A game ended.
    Finished(GameResult),
    /// The host stopped (after `--games` games, or when asked).
    Stopped,
}

/// A running host. Dropping it stops it.
pub struct Host {
    addr: SocketAddr,
    events: Receiver<HostEvent>,
    lobby: Arc<Lobby>,
    conns: Arc<Connections>,
    /// Asks the host's own thread to stop (a message, or every sender gone).
    stop: Sender<()>,
    /// The host's own thread, which stops every part in order and then ends.
    running: Mutex<Option<JoinHandle<()>>>,
}

/// What every part of the host reads and none owns: its settings, its content, its log
/// and whether it is stopping.
struct Common {
    config: HostConfig,
    content: Content,
    events: Mutex<Sender<HostEvent>>,
    /// The address it listens on (what discovery announces).
    addr: SocketAddr,
    /// Set first when the host stops: connections end their reading, and no one is
    /// seated any more.
    stopped: AtomicBool,
}

impl Common {
    /// Report `event` to whoever listens (nobody may: then it is dropped).
    fn tell(&self, event: HostEvent) {
        let _ = lock(&self.events).send(event);
    }

    fn log(&self, line: String) {
        self.tell(HostEvent::Log(line));
    }

    fn stopping(&self) -> bool {
        self.stopped.load(Ordering::SeqCst)
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Host {
    /// Bind `config.addr`, resume the saved games in `config.save_dir`, and serve.
    pub fn start(config: HostConfig, content: Content) -> std::io::Result<Host> {
        let listener = TcpListener::bind(config.addr)?;
        let addr = listener.local_addr()?;
        let (tx, rx) = channel();
        let (stop, stop_rx) = channel();
        let common = Arc::new(Common {
            config,
            content,
            events: Mutex::new(tx),
            addr,
            stopped: AtomicBool::new(false),
        });
        let conns = Arc::new(Connections::new(common.config.max_transfers));
        let lobby = Lobby::new(Arc::clone(&common), stop.clone());
        lobby.resume_saved();
        let listening = listener::Listening::start(
            listener,
            Arc::clone(&common),
            Arc::clone(&conns),
            Arc::clone(&lobby),
        )?;
        let parts = (Arc::clone(&common), Arc::clone(&lobby), Arc::clone(&conns));
        let running = crate::script::threads::spawn_light("lan-host", move || {
            // A message or every sender gone: either way the host stops.
            let _ = stop_rx.recv();
            let (common, lobby, conns) = parts;
            shut_down(&common, &lobby, &conns, listening);
        })?;
        Ok(Host {
            addr,
            events: rx,
            lobby,
            conns,
            stop,
            running: Mutex::new(Some(running)),
        })
    }

    /// The address it listens on.
    #[must_use]
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// What it reports.
    #[must_use]
    pub fn events(&self) -> &Receiver<HostEvent> {
        &self.events
    }

    /// Games held now (waiting, playing or paused).
    #[must_use]
    pub fn tables(&self) -> usize {
        self.lobby.len()
    }

    /// Connections open now.
    #[must_use]
    pub fn connections(&self) -> usize {
        self.conns.open()
    }

    /// What the host says of itself to a discovery probe (for a [`super::discovery::Beacon`]).
    pub fn announcer(&self) -> impl Fn() -> super::discovery::Announce + Send + 'static {
        let lobby = Arc::clone(&self.lobby);
        move || lobby.announce()
    }

    /// Stop accepting and close every connection; returns once the host has stopped.
    pub fn stop(&self) {
        let _ = self.stop.send(());
        if let Some(running) = lock(&self.running).take() {
            let _ = running.join();
        }
    }

    /// Tests: the next game to reach `moves` moves fails inside (a panic), once.
    #[cfg(test)]
    fn fail_a_game_after(&self, moves: u32) {
        self.lobby.tables().fail_after(moves);
    }
}

impl Drop for Host {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Stop every part, in order: the listener (its channel closed, its poll woken), the
/// games (told to stop), the AI decisions and pack transfers waiting for a place, the
/// connections; then let the games end (a save being written is finished) and the last
/// frames (a game's final state) reach the players.
fn shut_down(common: &Common, lobby: &Lobby, conns: &Connections, listening: listener::Listening) {
    common.stopped.store(true, Ordering::SeqCst);
    listening.close();
    lobby.stop_games();
    conns.close_all("the host is stopping");
    lobby.tables().drain(Duration::from_secs(2));
    conns.drain(Duration::from_secs(2));
    common.tell(HostEvent::Stopped);
}

#[cfg(test)]
mod tests;
