//! The host: the only place a network game's rules run.
//!
//! - One thread accepts connections; the [`conn::Register`] applies the limits per
//!   address and makes connections that hold no seat give way to joiners.
//! - Each connection has a reader thread (frames are capped at
//!   [`MAX_TO_HOST_FRAME`](super::protocol::MAX_TO_HOST_FRAME) and decoded within the
//!   protocol's limits) and one writer ([`conn::Writer`]).
//! - Each game has one owner, a thread receiving what happens to it over a channel
//!   ([`table`]): no lock is held while the AI thinks, a save is written or frames go out.
//! - The lobby (one lock, held only to decide) knows each game's seats, tokens, owner
//!   address and whether it is paused: seating, reconnects and discovery read it and never
//!   wait on a game.
//!
//! A misbehaving connection is closed with a logged reason; nothing it sends can stop the
//! host or another game, and a game that fails inside ends alone.

mod conn;
mod table;

use std::collections::{HashMap, HashSet};
use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::ai::{self, Level, Scripts};
use crate::rules::{CardId, Catalog, Cell, Seat, Whose};

use super::frame::{self, FrameError};
use super::protocol::{
    MAGIC, MAX_TO_HOST_FRAME, PROTOCOL, PackRef, SessionToken, ToClient, ToHost, clean,
};
use conn::{Limits, Live, Refusal, Register, Writer};
use table::{HostedGame, Occupant, Player, ToGame};

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
    /// Most connections served at once (when full, a connection holding no seat is
    /// closed to make room).
    pub max_connections: usize,
    /// Most connections from one address.
    pub max_connections_per_address: usize,
    /// Most games held at once.
    pub max_tables: usize,
    /// Most games one address may hold (counted by the address that opened each game).
    pub max_tables_per_address: usize,
    /// Tests only: panic inside a game after this many moves (once per host).
    #[doc(hidden)]
    pub fault_after_moves: Option<u32>,
}

/// How long a paused game waits by default: long enough to restart a crashed client or
/// walk back to a machine, short enough that abandoned games do not pile up.
pub const PAUSE_EXPIRY: Duration = Duration::from_secs(600);

/// How long a new connection has by default to start its `Hello`.
pub const HANDSHAKE: Duration = Duration::from_secs(5);

impl HostConfig {
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
            max_connections: 256,
            max_connections_per_address: 32,
            max_tables: 128,
            max_tables_per_address: 32,
            fault_after_moves: None,
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
    shared: Arc<Shared>,
}

struct Shared {
    config: HostConfig,
    content: Content,
    lobby: Mutex<Vec<Entry>>,
    conns: Register,
    writers: Arc<Live>,
    games: Arc<Live>,
    stopped: AtomicBool,
    /// `--games` reached: no new game is taken.
    closing: AtomicBool,
    finished: AtomicU32,
    /// Whether [`HostConfig::fault_after_moves`] has struck (it strikes once).
    fault_used: AtomicBool,
    next_conn: AtomicU64,
    next_table: AtomicU64,
    events: Mutex<Sender<HostEvent>>,
    addr: SocketAddr,
}

/// A game as the lobby knows it (its owner thread keeps the rest).
struct Entry {
    id: u64,
    tx: Sender<ToGame>,
    /// The address that opened it (`None`: resumed from a save).
    owner: Option<IpAddr>,
    started: bool,
    paused_since: Option<Instant>,
    /// Seats held by a player or the AI.
    taken: [bool; 2],
    tokens: [Option<SessionToken>; 2],
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
        let shared = Arc::new(Shared {
            config,
            content,
            lobby: Mutex::new(Vec::new()),
            conns: Register::default(),
            writers: Arc::new(Live::default()),
            games: Arc::new(Live::default()),
            stopped: AtomicBool::new(false),
            closing: AtomicBool::new(false),
            finished: AtomicU32::new(0),
            fault_used: AtomicBool::new(false),
            next_conn: AtomicU64::new(1),
            next_table: AtomicU64::new(1),
            events: Mutex::new(tx),
            addr,
        });
        shared.resume_saved();
        let accept = Arc::clone(&shared);
        std::thread::Builder::new()
            .name("lan-accept".into())
            .spawn(move || accept.accept(&listener))?;
        Ok(Host {
            addr,
            events: rx,
            shared,
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
        lock(&self.shared.lobby).len()
    }

    /// Connections open now.
    #[must_use]
    pub fn connections(&self) -> usize {
        self.shared.conns.count.load(Ordering::SeqCst)
    }

    /// What the host says of itself to a discovery probe (for a [`super::discovery::Beacon`]).
    pub fn announcer(&self) -> impl Fn() -> super::discovery::Announce + Send + 'static {
        let shared = Arc::clone(&self.shared);
        move || shared.announce()
    }

    /// Stop accepting and close every connection.
    pub fn stop(&self) {
        self.shared.stop();
    }
}

impl Drop for Host {
    fn drop(&mut self) {
        self.shared.stop();
    }
}

/// Why a connection is closed (logged, and sent to the peer in a `Bye`).
struct Close(String);

impl From<FrameError> for Close {
    fn from(e: FrameError) -> Close {
        Close(e.to_string())
    }
}

/// One connection's own state.
struct Peer {
    id: u64,
    peer: String,
    ip: IpAddr,
    writer: Writer,
    /// The game and seat it plays.
    seat: Option<(Sender<ToGame>, Seat)>,
    sent_packs: HashSet<String>,
    /// When the last messages arrived (for the flood limit).
    recent: Vec<Instant>,
}

/// Most messages a connection may send in one second (moves aside: they pace themselves,
/// one per turn).
pub const FLOOD_LIMIT: usize = 100;

impl Peer {
    fn count(&mut self) -> Result<(), Close> {
        let now = Instant::now();
        self.recent
            .retain(|t| now.duration_since(*t) < Duration::from_secs(1));
        self.recent.push(now);
        if self.recent.len() > FLOOD_LIMIT {
            return Err(Close(format!(
                "more than {FLOOD_LIMIT} messages in a second (flooding)"
            )));
        }
        Ok(())
    }
}

impl Shared {
    fn log(&self, line: String) {
        let _ = lock(&self.events).send(HostEvent::Log(line));
    }

    /// Change game `id`'s lobby entry (if it is still there).
    fn update(&self, id: u64, change: impl FnOnce(&mut Entry)) {
        if let Some(e) = lock(&self.lobby).iter_mut().find(|e| e.id == id) {
            change(e);
        }
    }

    /// Game `id`'s owner is done with it.
    fn leave(&self, id: u64) {
        lock(&self.lobby).retain(|e| e.id != id);
        self.stop_when_done();
    }

    /// Once `--games` is reached: end the games that never started, and stop when no
    /// game is left in progress.
    fn stop_when_done(&self) {
        if !self.closing.load(Ordering::SeqCst) {
            return;
        }
        let in_progress = {
            let lobby = lock(&self.lobby);
            for e in lobby.iter().filter(|e| !e.started) {
                let _ = e.tx.send(ToGame::Expire(
                    "the host has played its games and takes no new ones".into(),
                ));
            }
            lobby.iter().filter(|e| e.started).count()
        };
        if in_progress == 0 {
            self.stop();
        }
    }

    fn announce(&self) -> super::discovery::Announce {
        let (room, waiting) = {
            let lobby = lock(&self.lobby);
            let room = lobby.len() < self.config.max_tables && !self.closing.load(Ordering::SeqCst);
            let waiting = lobby
                .iter()
                .filter(|e| !e.started)
                .map(|e| e.taken.iter().filter(|t| !**t).count())
                .sum::<usize>();
            (room, waiting)
        };
        let fresh = match (room, self.config.ai) {
            (false, _) => 0,
            (true, Some(_)) => 1,
            (true, None) => 2,
        };
        let free = if self.config.ai.is_none() && waiting > 0 {
            waiting
        } else {
            fresh
        };
        super::discovery::Announce {
            name: self.config.name.clone(),
            port: self.addr.port(),
            packs: self
                .content
                .packs
                .iter()
                .map(|p| (p.id.clone(), p.version.clone()))
                .collect(),
            seats_free: u8::try_from(free).unwrap_or(u8::MAX),
        }
    }

    fn stop(&self) {
        if self.stopped.swap(true, Ordering::SeqCst) {
            return;
        }
        // Wake the accept loop.
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_millis(200));
        for e in lock(&self.lobby).iter() {
            let _ = e.tx.send(ToGame::Stop);
        }
        self.conns.close_all("the host is stopping");
        // Let the games end (a save being written is finished) and the last frames (a
        // game's final state) reach the players.
        self.games.drain(Duration::from_secs(2));
        self.writers.drain(Duration::from_secs(2));
        let _ = lock(&self.events).send(HostEvent::Stopped);
    }

    fn accept(self: Arc<Self>, listener: &TcpListener) {
        let limits = Limits {
            total: self.config.max_connections,
            per_address: self.config.max_connections_per_address,
        };
        for stream in listener.incoming() {
            if self.stopped.load(Ordering::SeqCst) {
                break;
            }
            let Ok(mut stream) = stream else { continue };
            let _ = stream.set_nodelay(true);
            let _ = stream.set_write_timeout(Some(Duration::from_secs(1)));
            let Ok(peer) = stream.peer_addr() else {
                continue;
            };
            let id = self.next_conn.fetch_add(1, Ordering::SeqCst);
            let refusal = match self.conns.admit(id, peer.ip(), &stream, limits) {
                Ok(None) => None,
                Ok(Some(ip)) => {
                    self.log(format!(
                        "{peer}: the host is full; closed a connection without a seat from {ip} to make room"
                    ));
                    None
                }
                Err(Refusal::Address(n)) => Some(format!(
                    "your address has {n} connections open, the most one address may"
                )),
                Err(Refusal::Full) => Some("the host is full".to_string()),
            };
            if let Some(reason) = refusal {
                // A fresh socket's buffer takes this small frame without blocking.
                let _ = frame::write(
                    &mut stream,
                    &ToClient::Bye {
                        reason: reason.clone(),
                    },
                );
                self.log(format!("{peer}: refused: {reason}"));
                continue;
            }
            let me = Arc::clone(&self);
            let spawned = std::thread::Builder::new()
                .name("lan-conn".into())
                .spawn(move || {
                    me.serve(stream, peer, id);
                    me.conns.remove(id);
                });
            if spawned.is_err() {
                self.conns.remove(id);
            }
        }
    }

    /// Serve one connection until it closes.
    fn serve(self: &Arc<Self>, mut stream: TcpStream, peer: SocketAddr, id: u64) {
        let Ok(writer) = Writer::start(id, &stream, &self.writers) else {
            return;
        };
        self.conns.set_writer(id, &writer);
        let mut session = Peer {
            id,
            peer: peer.to_string(),
            ip: peer.ip(),
            writer,
            seat: None,
            sent_packs: HashSet::new(),
            recent: Vec::new(),
        };
        let result = self.converse(&mut stream, &mut session);
        match result {
            Err(Close(reason)) => {
                if !self.stopped.load(Ordering::SeqCst) {
                    self.log(format!("{peer}: closed: {reason}"));
                }
                session.writer.bye(&reason);
            }
            // A stopping host's writers close after their last frames.
            Ok(()) if !self.stopped.load(Ordering::SeqCst) => session.writer.cut(),
            Ok(()) => {}
        }
        if let Some((tx, seat)) = session.seat.take() {
            let _ = tx.send(ToGame::Gone { seat, conn: id });
        }
    }

    fn read(
        &self,
        stream: &mut TcpStream,
        idle: Duration,
        deadline: Duration,
    ) -> Result<ToHost, FrameError> {
        frame::read_within_max(stream, Some(idle), deadline, MAX_TO_HOST_FRAME)
    }

    fn converse(self: &Arc<Self>, stream: &mut TcpStream, s: &mut Peer) -> Result<(), Close> {
        let handshake = self.config.handshake;
        let hello = match self.read(stream, handshake, handshake.min(self.config.frame_deadline)) {
            Ok(m) => m,
            Err(FrameError::Idle) => {
                return Err(Close(format!(
                    "no Hello within {} s of connecting",
                    handshake.as_secs_f32()
                )));
            }
            Err(e) => return Err(e.into()),
        };
        let ToHost::Hello {
            magic,
            protocol,
            name,
            resume,
        } = hello
        else {
            return Err(Close("the first message must be a Hello".into()));
        };
        if magic != MAGIC {
            return Err(Close("not a Tokensmith client".into()));
        }
        if protocol != PROTOCOL {
            return Err(Close(format!(
                "protocol {protocol} is not this host's {PROTOCOL}: update one of the two copies"
            )));
        }
        let name = clean(&name);
        let token = resume.unwrap_or_else(rand::random::<SessionToken>);
        let back = match resume {
            Some(token) => Some(self.find_token(token).ok_or_else(|| {
                Close("that game is no longer held by this host; join anew".into())
            })?),
            None => None,
        };
        self.log(format!(
            "{}: {name} {}",
            s.peer,
            if back.is_some() {
                "is back"
            } else {
                "connected"
            }
        ));
        s.writer.send(&ToClient::Welcome {
            protocol: PROTOCOL,
            host: self.config.name.clone(),
            packs: self.content.packs.clone(),
            sends_packs: self.config.sends_packs,
            token,
            resumed: back.as_ref().map(|(_, seat)| seat.number()),
            ai_deck: self.config.ai.map(|_| self.config.ai_deck_kind.describe()),
        });
        if let Some((tx, seat)) = back {
            if tx
                .send(ToGame::Back {
                    seat,
                    writer: s.writer.clone(),
                })
                .is_err()
            {
                return Err(Close(
                    "that game is no longer held by this host; join anew".into(),
                ));
            }
            self.conns.set_seated(s.id, true);
            s.seat = Some((tx, seat));
        }
        // This thread's scripts, made when a deck first needs the engine.
        let catalog = Arc::clone(&self.content.catalog);
        let scripts: std::cell::OnceCell<Scripts> = std::cell::OnceCell::new();
        let brain = || {
            scripts
                .get_or_init(|| ai::hooks_for(&catalog))
                .brain(&catalog)
        };
        loop {
            if self.stopped.load(Ordering::SeqCst) {
                return Ok(());
            }
            let message = match self.read(stream, self.config.idle, self.config.frame_deadline) {
                Ok(m) => m,
                Err(FrameError::Closed) => return Ok(()),
                Err(FrameError::Idle) => {
                    return Err(Close(format!(
                        "silent for {} s",
                        self.config.idle.as_secs()
                    )));
                }
                Err(e) => return Err(e.into()),
            };
            // Moves pace themselves (one per turn; a move out of turn closes the
            // connection): a quick AI may send more than the flood limit in a second.
            if !matches!(message, ToHost::Intent { .. }) {
                s.count()?;
            }
            match message {
                ToHost::Hello { .. } => return Err(Close("a second Hello".into())),
                ToHost::Ping => {}
                ToHost::WantPacks(ids) => self.send_packs(s, &ids)?,
                ToHost::Join { deck, seat } => {
                    let wanted = seat.and_then(super::protocol::seat_of);
                    self.join(s, &brain(), (&name, token), &deck, wanted)?;
                }
                ToHost::Intent {
                    seq,
                    seat,
                    stack,
                    x,
                    y,
                } => {
                    let Some((tx, mine)) = &s.seat else {
                        return Err(Close("a move before taking a seat".into()));
                    };
                    if seat != mine.number() {
                        return Err(Close(format!(
                            "a move for seat {seat} from seat {mine}'s connection"
                        )));
                    }
                    let sent = tx.send(ToGame::Intent {
                        conn: s.id,
                        seat: *mine,
                        seq,
                        stack,
                        cell: Cell::new(x, y),
                    });
                    if sent.is_err() {
                        return Err(Close("a move after the game ended".into()));
                    }
                }
            }
        }
    }

    /// The game and seat holding `token`.
    fn find_token(&self, token: SessionToken) -> Option<(Sender<ToGame>, Seat)> {
        let lobby = lock(&self.lobby);
        lobby.iter().find_map(|e| {
            Seat::BOTH
                .into_iter()
                .find(|s| e.tokens[s.index()] == Some(token))
                .map(|s| (e.tx.clone(), s))
        })
    }

    fn send_packs(&self, s: &mut Peer, ids: &[String]) -> Result<(), Close> {
        if !self.config.sends_packs {
            return Err(Close("this host does not send packs".into()));
        }
        for id in ids {
            let Some(bytes) = self.content.archives.get(id) else {
                return Err(Close(format!(
                    "asked for pack '{}', which this game does not use",
                    clean(id)
                )));
            };
            if !s.sent_packs.insert(id.clone()) {
                return Err(Close(format!("asked for pack '{}' twice", clean(id))));
            }
            s.writer.send_pack(id, Arc::clone(bytes));
            self.log(format!(
                "{}: sent pack {id} ({} bytes)",
                s.peer,
                bytes.len()
            ));
        }
        Ok(())
    }

    fn resolve_deck(&self, deck: &[Vec<String>]) -> Result<Vec<Vec<CardId>>, String> {
        let catalog = &self.content.catalog;
        let mut stacks = Vec::with_capacity(deck.len().min(crate::rules::MAX_STACKS + 1));
        for stack in deck.iter().take(crate::rules::MAX_STACKS + 1) {
            let mut cards = Vec::with_capacity(stack.len().min(crate::rules::MAX_STACK_CARDS + 1));
            for key in stack.iter().take(crate::rules::MAX_STACK_CARDS + 1) {
                let card = catalog
                    .card_named(key)
                    .map_err(|_| format!("card '{}' is not in this game's content", clean(key)))?;
                cards.push(card);
            }
            stacks.push(cards);
        }
        Ok(stacks)
    }

    fn join(
        self: &Arc<Self>,
        s: &mut Peer,
        engine: &ai::Brain<'_>,
        (name, token): (&str, SessionToken),
        deck: &[Vec<String>],
        wanted: Option<Seat>,
    ) -> Result<(), Close> {
        if s.seat.is_some() {
            return Err(Close("a Join from a seated player".into()));
        }
        let stacks = match self.resolve_deck(deck) {
            Ok(stacks) => stacks,
            Err(reason) => {
                s.writer.send(&ToClient::DeckRefused { reason });
                return Ok(());
            }
        };
        if let Err(e) = engine.engine().check_deck(Seat::One, &stacks) {
            s.writer.send(&ToClient::DeckRefused {
                reason: e.message(Whose::Deck),
            });
            return Ok(());
        }
        let player = Player {
            name: name.to_string(),
            peer: s.peer.clone(),
            token,
            conn: Some(s.writer.clone()),
            last_seq: 0,
        };
        let (tx, seat) = self.seat(s.ip, player, stacks, wanted)?;
        self.conns.set_seated(s.id, true);
        s.seat = Some((tx, seat));
        Ok(())
    }

    /// Put `player` at a table: the first game waiting for a second player, or a new one
    /// (against the host's AI when it has one). Decided under the lobby's lock; the game
    /// itself hears of it over its channel.
    fn seat(
        self: &Arc<Self>,
        ip: IpAddr,
        player: Player,
        deck: Vec<Vec<CardId>>,
        wanted: Option<Seat>,
    ) -> Result<(Sender<ToGame>, Seat), Close> {
        let token = player.token;
        let mut lobby = lock(&self.lobby);
        if self.closing.load(Ordering::SeqCst) || self.stopped.load(Ordering::SeqCst) {
            return Err(Close(
                "the host has played its games and takes no new ones".into(),
            ));
        }
        if self.config.ai.is_none() {
            let free = lobby.iter_mut().find_map(|e| {
                if e.started {
                    return None;
                }
                Seat::BOTH
                    .into_iter()
                    .filter(|s| wanted.is_none_or(|w| w == *s))
                    .find(|s| !e.taken[s.index()])
                    .map(|s| (e, s))
            });
            if let Some((e, seat)) = free {
                e.taken[seat.index()] = true;
                e.tokens[seat.index()] = Some(token);
                let tx = e.tx.clone();
                if tx.send(ToGame::Sit { seat, player, deck }).is_ok() {
                    return Ok((tx, seat));
                }
                return Err(Close("that game has just ended; join again".into()));
            }
        }
        let mine = lobby.iter().filter(|e| e.owner == Some(ip)).count();
        if mine >= self.config.max_tables_per_address
            && !Self::evict(
                &mut lobby,
                Some(ip),
                "its address opened more games than any other while this one waited",
            )
        {
            return Err(Close(format!(
                "your address holds {mine} games, the most one address may"
            )));
        }
        if lobby.len() >= self.config.max_tables
            && !Self::evict(
                &mut lobby,
                None,
                "the host needed its place for a new game while it waited",
            )
        {
            return Err(Close("the host holds as many games as it can".into()));
        }
        let id = self.next_table.fetch_add(1, Ordering::SeqCst);
        let mut table = HostedGame::new(id);
        let mut taken = [false; 2];
        let seat = match self.config.ai {
            Some(level) => {
                let ai = self.config.ai_seat;
                table.seats[ai.index()] = Occupant::Ai(level);
                taken[ai.index()] = true;
                ai.other()
            }
            None => wanted.unwrap_or(Seat::One),
        };
        taken[seat.index()] = true;
        let mut tokens = [None, None];
        tokens[seat.index()] = Some(token);
        let (tx, rx) = channel();
        let _ = tx.send(ToGame::Sit { seat, player, deck });
        lobby.push(Entry {
            id,
            tx: tx.clone(),
            owner: Some(ip),
            started: false,
            paused_since: None,
            taken,
            tokens,
        });
        drop(lobby);
        if !self.spawn_game(table, rx) {
            lock(&self.lobby).retain(|e| e.id != id);
            return Err(Close("the host cannot start another game now".into()));
        }
        Ok((tx, seat))
    }

    /// Make room by ending a paused game: among those of `only` (or all), the one whose
    /// address holds the most games, paused longest. Whether one was ended.
    fn evict(lobby: &mut Vec<Entry>, only: Option<IpAddr>, why: &str) -> bool {
        let mut per: HashMap<Option<IpAddr>, usize> = HashMap::new();
        for e in lobby.iter() {
            *per.entry(e.owner).or_default() += 1;
        }
        let victim = lobby
            .iter()
            .enumerate()
            .filter(|(_, e)| only.is_none_or(|ip| e.owner == Some(ip)))
            .filter_map(|(i, e)| e.paused_since.map(|since| (i, e, since)))
            .max_by_key(|(_, e, since)| {
                (
                    per.get(&e.owner).copied().unwrap_or(0),
                    std::cmp::Reverse(*since),
                )
            })
            .map(|(i, _, _)| i);
        let Some(i) = victim else {
            return false;
        };
        let e = lobby.swap_remove(i);
        let _ =
            e.tx.send(ToGame::Expire(format!("the paused game was ended: {why}")));
        true
    }

    fn spawn_game(self: &Arc<Self>, table: HostedGame, rx: Receiver<ToGame>) -> bool {
        let me = Arc::clone(self);
        self.games.up();
        let spawned = std::thread::Builder::new()
            .name("lan-game".into())
            .spawn(move || {
                table::run(&me, table, &rx);
                me.games.down();
            });
        if spawned.is_err() {
            self.games.down();
        }
        spawned.is_ok()
    }

    /// Take up the unfinished games saved in the save folder; a save whose game has
    /// waited longer than [`HostConfig::pause_expiry`] is removed instead.
    fn resume_saved(self: &Arc<Self>) {
        let Some(dir) = &self.config.save_dir else {
            return;
        };
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        let catalog = Arc::clone(&self.content.catalog);
        let scripts = ai::hooks_for(&catalog);
        let engine = scripts.brain(&catalog);
        for entry in entries.filter_map(Result::ok).take(self.config.max_tables) {
            let path = entry.path();
            let Some(id) = path
                .file_name()
                .and_then(|n| n.to_str())
                .and_then(|n| n.strip_prefix("game-"))
                .and_then(|n| n.strip_suffix(".json"))
                .and_then(|n| n.parse::<u64>().ok())
            else {
                continue;
            };
            let age = table::age(&path);
            if age >= self.config.pause_expiry {
                let _ = std::fs::remove_file(&path);
                self.log(format!(
                    "game {id}: its save waited {} s, longer than the {} s a paused game is kept; removed",
                    age.as_secs(),
                    self.config.pause_expiry.as_secs()
                ));
                continue;
            }
            match table::restore(self, &engine, id, &path) {
                Ok(mut table) => {
                    self.log(format!(
                        "game {id}: resumed from {} after {} moves; waiting for the players",
                        crate::fsutil::shown(&path),
                        table.moves()
                    ));
                    self.next_table.fetch_max(id + 1, Ordering::SeqCst);
                    // The wait counts from the last save.
                    let since = Instant::now().checked_sub(age).unwrap_or_else(Instant::now);
                    table.paused_since = Some(since);
                    let mut tokens = [None, None];
                    let mut taken = [false; 2];
                    for seat in Seat::BOTH {
                        match &table.seats[seat.index()] {
                            Occupant::Player(p) => {
                                tokens[seat.index()] = Some(p.token);
                                taken[seat.index()] = true;
                            }
                            Occupant::Ai(_) => taken[seat.index()] = true,
                            Occupant::Empty => {}
                        }
                    }
                    let (tx, rx) = channel();
                    lock(&self.lobby).push(Entry {
                        id,
                        tx,
                        owner: None,
                        started: true,
                        paused_since: Some(since),
                        taken,
                        tokens,
                    });
                    if !self.spawn_game(table, rx) {
                        lock(&self.lobby).retain(|e| e.id != id);
                    }
                }
                Err(why) => self.log(format!(
                    "cannot resume {}: {why}",
                    crate::fsutil::shown(&path)
                )),
            }
        }
    }
}
