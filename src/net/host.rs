//! The host: the only place a network game's rules run.
//!
//! One thread accepts connections and one thread serves each connection. Games
//! ("tables") sit behind their own lock; a move is checked and played by the engine on
//! the thread of the connection that sent it, and each seat is then sent what it may
//! see ([`Seen`]). A seat played by the host's AI moves on the same thread right after.
//! A misbehaving connection is closed with a logged reason; nothing it sends can stop
//! the host or another game.

use std::collections::{HashMap, HashSet};
use std::io::Write as _;
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::ai::{self, Level, Observation, PublicPlay, Scripts};
use crate::rules::{CardId, Catalog, Cell, Event, GameState, Move, Play, Seat, Whose};

use super::frame::{self, FrameError};
use super::protocol::{
    MAGIC, PROTOCOL, PackRef, Seen, SessionToken, ToClient, ToHost, clean, played,
};

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
    /// The host AI's deck.
    pub ai_deck: Vec<Vec<CardId>>,
    /// Stop after this many finished games (`None`: run until stopped).
    pub games: Option<u32>,
    /// Whether joiners may fetch the game's packs.
    pub sends_packs: bool,
    /// Where games are saved after each move, to resume after a restart.
    pub save_dir: Option<PathBuf>,
    /// A connection silent this long is taken as dropped (clients ping well within it).
    pub idle: Duration,
    /// How long a started frame may take to arrive in full.
    pub frame_deadline: Duration,
    /// Most connections served at once.
    pub max_connections: usize,
    /// Most games held at once.
    pub max_tables: usize,
}

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
            games: None,
            sends_packs: true,
            save_dir: None,
            idle: Duration::from_secs(30),
            frame_deadline: frame::FRAME_DEADLINE,
            max_connections: 256,
            max_tables: 128,
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

impl Content {
    /// The content of `catalog`, whose packs are found in `folders` (the load options'
    /// folders; the first pack found with each id, as the loader takes them).
    pub fn new(
        catalog: Arc<Catalog>,
        folders: &[crate::content::PackFolder],
    ) -> Result<Content, String> {
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
                .ok_or_else(|| {
                    format!(
                        "pack '{}' is loaded but not found in the pack folders",
                        info.id
                    )
                })?;
            let built = crate::packs::build(&dir, |_| Vec::new())
                .map_err(|e| format!("cannot pack '{}' for joiners: {e}", info.id))?;
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
    tables: Mutex<Vec<Arc<Mutex<Table>>>>,
    stopped: AtomicBool,
    finished: AtomicU32,
    connections: AtomicUsize,
    next_id: AtomicU64,
    events: Mutex<Sender<HostEvent>>,
    addr: SocketAddr,
}

#[derive(Debug)]
struct Player {
    name: String,
    token: SessionToken,
    conn: Option<Conn>,
    last_seq: u32,
}

#[derive(Debug)]
struct Conn {
    id: u64,
    stream: TcpStream,
}

#[derive(Debug)]
enum Slot {
    Empty,
    Ai(Level),
    Player(Player),
}

#[derive(Debug)]
struct Table {
    id: u64,
    seed: u64,
    seats: [Slot; 2],
    decks: [Option<Vec<Vec<CardId>>>; 2],
    state: Option<GameState>,
    history: Vec<PublicPlay>,
    moves: Vec<SavedMove>,
    done: bool,
}

/// A move as saved: seat, stack, cell.
type SavedMove = (u8, u8, i32, i32);

/// A game as saved after each move.
#[derive(Debug, Serialize, Deserialize)]
struct SavedGame {
    format_version: u32,
    packs: Vec<PackRef>,
    seed: u64,
    decks: [Vec<Vec<String>>; 2],
    seats: [SavedSeat; 2],
    moves: Vec<SavedMove>,
}

#[derive(Debug, Serialize, Deserialize)]
enum SavedSeat {
    Ai(String),
    Player { name: String, token: String },
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    bytes.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

fn unhex(text: &str) -> Option<SessionToken> {
    let mut out = [0u8; 16];
    if text.len() != 32 {
        return None;
    }
    for (i, slot) in out.iter_mut().enumerate() {
        *slot = u8::from_str_radix(text.get(2 * i..2 * i + 2)?, 16).ok()?;
    }
    Some(out)
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
            tables: Mutex::new(Vec::new()),
            stopped: AtomicBool::new(false),
            finished: AtomicU32::new(0),
            connections: AtomicUsize::new(0),
            next_id: AtomicU64::new(1),
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
        lock(&self.shared.tables).len()
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

impl Shared {
    fn log(&self, line: String) {
        let _ = lock(&self.events).send(HostEvent::Log(line));
    }

    fn announce(&self) -> super::discovery::Announce {
        let tables = lock(&self.tables);
        let room = tables.len() < self.config.max_tables;
        let waiting = tables
            .iter()
            .filter_map(|t| {
                let t = lock(t);
                (t.state.is_none() && !t.done)
                    .then(|| t.seats.iter().filter(|s| matches!(s, Slot::Empty)).count())
            })
            .sum::<usize>();
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
        for table in lock(&self.tables).iter() {
            let t = lock(table);
            for slot in &t.seats {
                if let Slot::Player(Player { conn: Some(c), .. }) = slot {
                    let _ = c.stream.shutdown(Shutdown::Both);
                }
            }
        }
        let _ = lock(&self.events).send(HostEvent::Stopped);
    }

    fn accept(self: Arc<Self>, listener: &TcpListener) {
        for stream in listener.incoming() {
            if self.stopped.load(Ordering::SeqCst) {
                break;
            }
            let Ok(mut stream) = stream else { continue };
            let _ = stream.set_nodelay(true);
            let _ = stream.set_write_timeout(Some(Duration::from_secs(5)));
            let peer = stream
                .peer_addr()
                .map_or_else(|_| "?".to_string(), |a| a.to_string());
            if self.connections.load(Ordering::SeqCst) >= self.config.max_connections {
                let _ = frame::write(
                    &mut stream,
                    &ToClient::Bye {
                        reason: "the host is full".into(),
                    },
                );
                self.log(format!("{peer}: refused, the host is full"));
                continue;
            }
            self.connections.fetch_add(1, Ordering::SeqCst);
            let me = Arc::clone(&self);
            let spawned = std::thread::Builder::new()
                .name("lan-conn".into())
                .spawn(move || {
                    me.serve(stream, &peer);
                    me.connections.fetch_sub(1, Ordering::SeqCst);
                });
            if spawned.is_err() {
                self.connections.fetch_sub(1, Ordering::SeqCst);
            }
        }
    }

    /// Serve one connection until it closes.
    fn serve(self: &Arc<Self>, mut stream: TcpStream, peer: &str) {
        let id = self.next_id.fetch_add(1, Ordering::SeqCst);
        let mut session = Session {
            id,
            peer: peer.to_string(),
            seat: None,
            sent_packs: HashSet::new(),
            recent: Vec::new(),
        };
        let result = self.converse(&mut stream, &mut session);
        if let Err(Close(reason)) = result {
            if !self.stopped.load(Ordering::SeqCst) {
                self.log(format!("{peer}: closed: {reason}"));
            }
            let _ = frame::write(&mut stream, &ToClient::Bye { reason });
        }
        let _ = stream.shutdown(Shutdown::Both);
        if let Some((table, seat)) = session.seat.take() {
            self.detach(&table, seat, id);
        }
    }

    fn converse(self: &Arc<Self>, stream: &mut TcpStream, s: &mut Session) -> Result<(), Close> {
        let hello: ToHost = frame::read_within(
            stream,
            Some(Duration::from_secs(10)),
            self.config.frame_deadline,
        )?;
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
        let (token, resumed) = match resume {
            Some(token) => match self.reattach(token, stream, s) {
                Some(seat) => (token, Some(seat)),
                None => {
                    return Err(Close(
                        "that game is no longer held by this host; join anew".into(),
                    ));
                }
            },
            None => (rand::random::<SessionToken>(), None),
        };
        self.log(format!(
            "{}: {name} {}",
            s.peer,
            if resumed.is_some() {
                "is back"
            } else {
                "connected"
            }
        ));
        frame::write(
            stream,
            &ToClient::Welcome {
                protocol: PROTOCOL,
                host: self.config.name.clone(),
                packs: self.content.packs.clone(),
                sends_packs: self.config.sends_packs,
                token,
                resumed: resumed.map(Seat::number),
            },
        )?;
        if let Some((table, seat)) = &s.seat {
            let t = lock(table);
            self.send_state(&t, *seat, None, &[]);
            self.notify_other(&t, *seat, &ToClient::Resumed);
        }
        // This thread's scripts, made when a deck or move first needs the engine.
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
            let message: ToHost = match frame::read_within(
                stream,
                Some(self.config.idle),
                self.config.frame_deadline,
            ) {
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
            s.count()?;
            match message {
                ToHost::Hello { .. } => return Err(Close("a second Hello".into())),
                ToHost::Ping => {}
                ToHost::WantPacks(ids) => self.send_packs(stream, s, &ids)?,
                ToHost::Join { deck, seat } => {
                    let wanted = seat.and_then(super::protocol::seat_of);
                    self.join(stream, s, &brain(), (&name, token), &deck, wanted)?;
                }
                ToHost::Intent {
                    seq,
                    seat,
                    stack,
                    x,
                    y,
                } => self.intent(s, &brain(), seq, seat, stack, Cell::new(x, y))?,
            }
        }
    }

    fn send_packs(
        &self,
        stream: &mut TcpStream,
        s: &mut Session,
        ids: &[String],
    ) -> Result<(), Close> {
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
            let total = bytes.len() as u64;
            let chunk = frame::MAX_FRAME / 2;
            let mut offset = 0usize;
            loop {
                let end = (offset + chunk).min(bytes.len());
                frame::write(
                    stream,
                    &ToClient::PackChunk {
                        id: id.clone(),
                        total,
                        offset: offset as u64,
                        bytes: bytes[offset..end].to_vec(),
                    },
                )?;
                offset = end;
                if offset >= bytes.len() {
                    break;
                }
            }
            self.log(format!("{}: sent pack {id} ({total} bytes)", s.peer));
        }
        Ok(())
    }

    fn resolve_deck(&self, deck: &[Vec<String>]) -> Result<Vec<Vec<CardId>>, String> {
        let catalog = &self.content.catalog;
        let mut stacks = Vec::with_capacity(deck.len().min(16));
        for stack in deck.iter().take(crate::rules::MAX_STACKS + 1) {
            let mut cards = Vec::with_capacity(stack.len().min(64));
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
        stream: &mut TcpStream,
        s: &mut Session,
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
                frame::write(stream, &ToClient::DeckRefused { reason })?;
                return Ok(());
            }
        };
        if let Err(e) = engine.check_deck(Seat::One, &stacks) {
            frame::write(
                stream,
                &ToClient::DeckRefused {
                    reason: e.message(Whose::Deck),
                },
            )?;
            return Ok(());
        }
        let conn = Conn {
            id: s.id,
            stream: stream.try_clone().map_err(|e| Close(e.to_string()))?,
        };
        let player = Player {
            name: name.to_string(),
            token,
            conn: Some(conn),
            last_seq: 0,
        };
        let (table, seat) = self.seat(player, stacks, wanted)?;
        s.seat = Some((Arc::clone(&table), seat));
        let mut t = lock(&table);
        self.log(format!(
            "{}: {name} sits at game {} as seat {seat}",
            s.peer, t.id
        ));
        if let Slot::Player(Player { conn: Some(c), .. }) = &mut t.seats[seat.index()] {
            let _ = frame::write(
                &mut c.stream,
                &ToClient::Seated {
                    seat: seat.number(),
                },
            );
        }
        if t.state.is_none() && t.decks.iter().all(Option::is_some) {
            let decks = [
                t.decks[0].clone().unwrap_or_default(),
                t.decks[1].clone().unwrap_or_default(),
            ];
            let mut events = Vec::new();
            match engine.new_game([&decks[0], &decks[1]], t.seed, &mut events) {
                Ok(state) => t.state = Some(state),
                Err(e) => return Err(Close(e.to_string())),
            }
            self.save(&t);
            let opening = super::events::to_wire(&self.content.catalog, &events);
            for seat in Seat::BOTH {
                self.send_state(&t, seat, None, &opening);
            }
            self.drive(&mut t, engine);
        }
        Ok(())
    }

    /// Put `player` at a table: a new one against the host's AI, or the first table
    /// waiting for a second player.
    fn seat(
        &self,
        player: Player,
        deck: Vec<Vec<CardId>>,
        wanted: Option<Seat>,
    ) -> Result<(Arc<Mutex<Table>>, Seat), Close> {
        let mut tables = lock(&self.tables);
        tables.retain(|x| !lock(x).done);
        if self.config.ai.is_none() {
            for table in tables.iter() {
                let mut t = lock(table);
                if t.state.is_some() || t.done {
                    continue;
                }
                if let Some(seat) = Seat::BOTH
                    .into_iter()
                    .filter(|s| wanted.is_none_or(|w| w == *s))
                    .find(|s| matches!(t.seats[s.index()], Slot::Empty))
                {
                    t.seats[seat.index()] = Slot::Player(player);
                    t.decks[seat.index()] = Some(deck);
                    return Ok((Arc::clone(table), seat));
                }
            }
        }
        if tables.len() >= self.config.max_tables {
            return Err(Close("the host holds as many games as it can".into()));
        }
        let mut table = Table {
            id: self.next_id.fetch_add(1, Ordering::SeqCst),
            seed: rand::random(),
            seats: [Slot::Empty, Slot::Empty],
            decks: [None, None],
            state: None,
            history: Vec::new(),
            moves: Vec::new(),
            done: false,
        };
        let seat = match self.config.ai {
            Some(level) => {
                let ai = self.config.ai_seat;
                table.seats[ai.index()] = Slot::Ai(level);
                table.decks[ai.index()] = Some(self.config.ai_deck.clone());
                ai.other()
            }
            None => wanted.unwrap_or(Seat::One),
        };
        table.seats[seat.index()] = Slot::Player(player);
        table.decks[seat.index()] = Some(deck);
        let table = Arc::new(Mutex::new(table));
        tables.push(Arc::clone(&table));
        Ok((table, seat))
    }

    fn reattach(&self, token: SessionToken, stream: &TcpStream, s: &mut Session) -> Option<Seat> {
        let tables = lock(&self.tables);
        for table in tables.iter() {
            let mut t = lock(table);
            if t.done {
                continue;
            }
            for seat in Seat::BOTH {
                if let Slot::Player(p) = &mut t.seats[seat.index()]
                    && p.token == token
                {
                    if let Some(old) = p.conn.take() {
                        let _ = old.stream.shutdown(Shutdown::Both);
                    }
                    p.conn = Some(Conn {
                        id: s.id,
                        stream: stream.try_clone().ok()?,
                    });
                    s.seat = Some((Arc::clone(table), seat));
                    return Some(seat);
                }
            }
        }
        None
    }

    fn detach(&self, table: &Arc<Mutex<Table>>, seat: Seat, conn_id: u64) {
        let mut t = lock(table);
        let Slot::Player(p) = &mut t.seats[seat.index()] else {
            return;
        };
        // A newer connection may hold the seat already.
        if p.conn.as_ref().is_none_or(|c| c.id != conn_id) {
            return;
        }
        p.conn = None;
        let name = p.name.clone();
        if t.done {
            return;
        }
        if t.state.is_some() {
            self.log(format!(
                "game {}: {name} (seat {seat}) dropped; the game is paused",
                t.id
            ));
            self.notify_other(&t, seat, &ToClient::Paused);
        } else {
            // Nobody waits on a game that never started.
            t.seats[seat.index()] = Slot::Empty;
            t.decks[seat.index()] = None;
            let id = t.id;
            drop(t);
            lock(&self.tables).retain(|x| lock(x).id != id || !Arc::ptr_eq(x, table));
        }
    }

    fn intent(
        &self,
        s: &mut Session,
        engine: &ai::Brain<'_>,
        seq: u32,
        seat_no: u8,
        stack: u8,
        cell: Cell,
    ) -> Result<(), Close> {
        let Some((table, seat)) = s.seat.clone() else {
            return Err(Close("a move before taking a seat".into()));
        };
        if seat_no != seat.number() {
            return Err(Close(format!(
                "a move for seat {seat_no} from seat {seat}'s connection"
            )));
        }
        let mut t = lock(&table);
        let Slot::Player(p) = &mut t.seats[seat.index()] else {
            return Err(Close("the seat is not this player's".into()));
        };
        if seq <= p.last_seq {
            return Err(Close(format!("move #{seq} again (a replay)")));
        }
        p.last_seq = seq;
        let Some(state) = &t.state else {
            return Err(Close("a move before the game started".into()));
        };
        if state.is_over() {
            return Err(Close("a move after the game ended".into()));
        }
        if state.turn() != seat {
            return Err(Close(format!(
                "a move out of turn (seat {} is to move)",
                state.turn()
            )));
        }
        if let Some(away) = t.away() {
            let reason = format!("the game is paused until seat {away} is back");
            self.reply(&mut t, seat, &ToClient::MoveRefused { seq, reason });
            return Ok(());
        }
        let mv = Move {
            seat,
            play: Play::Stack(stack),
            cell,
        };
        if let Err(e) = self.play(&mut t, engine, mv) {
            self.reply(
                &mut t,
                seat,
                &ToClient::MoveRefused {
                    seq,
                    reason: e.to_string(),
                },
            );
            return Ok(());
        }
        self.drive(&mut t, engine);
        Ok(())
    }

    /// Play `mv` at `t`, record, save and tell both seats.
    fn play(
        &self,
        t: &mut Table,
        engine: &ai::Brain<'_>,
        mv: Move,
    ) -> Result<(), crate::rules::MoveError> {
        let Some(state) = t.state.as_mut() else {
            return Err(crate::rules::MoveError::GameOver);
        };
        let mut events: Vec<Event> = Vec::new();
        engine.play(state, mv, &mut events)?;
        let mark = t.history.len();
        ai::observe::record(&mut t.history, &events);
        let last = t.history.get(mark).copied();
        let stack = match mv.play {
            Play::Stack(s) => s,
            Play::Card(_) => 0,
        };
        t.moves
            .push((mv.seat.number(), stack, mv.cell.x, mv.cell.y));
        let catalog = &self.content.catalog;
        let wire = last.map(|p| played(catalog, p, Some(mv.cell)));
        let events = super::events::to_wire(catalog, &events);
        for seat in Seat::BOTH {
            self.send_state(t, seat, wire.clone(), &events);
        }
        self.save(t);
        self.finish_if_over(t);
        Ok(())
    }

    /// Let the host's AI move while it is to move.
    fn drive(&self, t: &mut Table, engine: &ai::Brain<'_>) {
        while let Some(state) = &t.state {
            if state.is_over() || t.done {
                return;
            }
            let seat = state.turn();
            let Slot::Ai(level) = t.seats[seat.index()] else {
                return;
            };
            let obs = Observation::new(state, seat, &t.history, false);
            let seed = t.seed ^ u64::from(state.moves_played()).wrapping_mul(0x9E37_79B9_7F4A_7C15);
            let mut agent = ai::agent(level, seed, self.config.ai_options);
            let chosen = agent.choose(engine, &obs);
            let legal = engine.legal_moves(state);
            let ok = chosen
                .into_iter()
                .chain(legal)
                .any(|mv| self.play(t, engine, mv).is_ok());
            if !ok {
                // No move can be played: end the game as it stands.
                self.log(format!("game {}: seat {seat} has no playable move", t.id));
                t.done = true;
                return;
            }
        }
    }

    fn finish_if_over(&self, t: &mut Table) {
        let Some(state) = &t.state else { return };
        let Some(outcome) = state.outcome() else {
            return;
        };
        if t.done {
            return;
        }
        t.done = true;
        let result = GameResult {
            scores: [state.score(Seat::One), state.score(Seat::Two)],
            winner: outcome.winner,
            moves: state.moves_played(),
        };
        self.log(format!("game {}: {result}", t.id));
        if let Some(dir) = &self.config.save_dir {
            let _ = std::fs::remove_file(dir.join(format!("game-{}.json", t.id)));
        }
        let _ = lock(&self.events).send(HostEvent::Finished(result));
        // The table leaves the list at the next seating (the list's lock comes before a
        // table's, and this one's is held).
        let done = self.finished.fetch_add(1, Ordering::SeqCst) + 1;
        if self.config.games.is_some_and(|n| done >= n) {
            // Let the last states reach the players before the connections close.
            for slot in &mut t.seats {
                if let Slot::Player(Player { conn: Some(c), .. }) = slot {
                    let _ = c.stream.flush();
                }
            }
            self.stop_later();
        }
    }

    fn stop_later(&self) {
        self.stopped.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_millis(200));
        let _ = lock(&self.events).send(HostEvent::Stopped);
    }

    fn send_state(
        &self,
        t: &Table,
        seat: Seat,
        last: Option<super::protocol::Played>,
        events: &[super::events::WireEvent],
    ) {
        let Some(state) = &t.state else { return };
        let Slot::Player(Player { conn: Some(c), .. }) = &t.seats[seat.index()] else {
            return;
        };
        let seen = Seen::of(&self.content.catalog, state, seat, &t.history);
        let mut stream = &c.stream;
        let message = ToClient::State {
            seen,
            last,
            events: events.to_vec(),
        };
        if frame::write(&mut stream, &message).is_err() {
            let _ = c.stream.shutdown(Shutdown::Both);
        }
    }

    fn reply(&self, t: &mut Table, seat: Seat, message: &ToClient) {
        if let Slot::Player(Player { conn: Some(c), .. }) = &mut t.seats[seat.index()] {
            let _ = frame::write(&mut c.stream, message);
        }
    }

    fn notify_other(&self, t: &Table, seat: Seat, message: &ToClient) {
        if let Slot::Player(Player { conn: Some(c), .. }) = &t.seats[seat.other().index()] {
            let mut stream = &c.stream;
            let _ = frame::write(&mut stream, message);
        }
    }

    fn save(&self, t: &Table) {
        let Some(dir) = &self.config.save_dir else {
            return;
        };
        let catalog = &self.content.catalog;
        let keys = |d: &Option<Vec<Vec<CardId>>>| -> Vec<Vec<String>> {
            d.as_deref()
                .map(|d| super::protocol::deck_keys(catalog, d))
                .unwrap_or_default()
        };
        let seat = |slot: &Slot| match slot {
            Slot::Ai(level) => SavedSeat::Ai(level.name().to_string()),
            Slot::Player(p) => SavedSeat::Player {
                name: p.name.clone(),
                token: hex(&p.token),
            },
            Slot::Empty => SavedSeat::Ai(String::new()),
        };
        let saved = SavedGame {
            format_version: 1,
            packs: self.content.packs.clone(),
            seed: t.seed,
            decks: [keys(&t.decks[0]), keys(&t.decks[1])],
            seats: [seat(&t.seats[0]), seat(&t.seats[1])],
            moves: t.moves.clone(),
        };
        let result = serde_json::to_vec_pretty(&saved)
            .map_err(std::io::Error::other)
            .and_then(|bytes| {
                std::fs::create_dir_all(dir)?;
                crate::fsutil::write_atomic(&dir.join(format!("game-{}.json", t.id)), &bytes)
            });
        if let Err(e) = result {
            self.log(format!("game {}: cannot save: {e}", t.id));
        }
    }

    /// Take up the unfinished games saved in the save folder.
    fn resume_saved(&self) {
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
            match self.restore(&engine, id, &path) {
                Ok(table) => {
                    self.log(format!(
                        "game {id}: resumed from {} after {} moves; waiting for the players",
                        crate::fsutil::shown(&path),
                        table.moves.len()
                    ));
                    self.next_id.fetch_max(id + 1, Ordering::SeqCst);
                    lock(&self.tables).push(Arc::new(Mutex::new(table)));
                }
                Err(why) => self.log(format!(
                    "cannot resume {}: {why}",
                    crate::fsutil::shown(&path)
                )),
            }
        }
    }

    fn restore(
        &self,
        engine: &ai::Brain<'_>,
        id: u64,
        path: &std::path::Path,
    ) -> Result<Table, String> {
        let bytes =
            crate::fsutil::read_capped(path, 4 << 20, "a saved game").map_err(|e| e.to_string())?;
        let saved: SavedGame = serde_json::from_slice(&bytes).map_err(|e| e.to_string())?;
        if saved.format_version != 1 {
            return Err(format!("format_version {} is not 1", saved.format_version));
        }
        if saved.packs != self.content.packs {
            return Err("it was played with other packs than this host's".into());
        }
        let mut decks: [Option<Vec<Vec<CardId>>>; 2] = [None, None];
        for (i, deck) in saved.decks.iter().enumerate() {
            decks[i] = Some(self.resolve_deck(deck)?);
        }
        let d0 = decks[0].clone().unwrap_or_default();
        let d1 = decks[1].clone().unwrap_or_default();
        let mut events = Vec::new();
        let mut state = engine
            .new_game([&d0, &d1], saved.seed, &mut events)
            .map_err(|e| e.to_string())?;
        let mut history = Vec::new();
        let mut last_seq = [0u32; 2];
        for &(seat, stack, x, y) in &saved.moves {
            let seat = super::protocol::seat_of(seat).ok_or("a move by no seat")?;
            events.clear();
            engine
                .play(
                    &mut state,
                    Move {
                        seat,
                        play: Play::Stack(stack),
                        cell: Cell::new(x, y),
                    },
                    &mut events,
                )
                .map_err(|e| format!("a saved move no longer plays: {e}"))?;
            ai::observe::record(&mut history, &events);
            last_seq[seat.index()] += 1;
        }
        let seat = |s: &SavedSeat, i: usize| -> Result<Slot, String> {
            match s {
                SavedSeat::Ai(level) => Level::ALL
                    .into_iter()
                    .find(|l| l.name() == level)
                    .map(Slot::Ai)
                    .ok_or_else(|| format!("no AI level '{}'", clean(level))),
                SavedSeat::Player { name, token } => Ok(Slot::Player(Player {
                    name: clean(name),
                    token: unhex(token).ok_or("a bad session token")?,
                    conn: None,
                    last_seq: last_seq[i],
                })),
            }
        };
        Ok(Table {
            id,
            seed: saved.seed,
            seats: [seat(&saved.seats[0], 0)?, seat(&saved.seats[1], 1)?],
            decks,
            state: Some(state),
            history,
            moves: saved.moves,
            done: false,
        })
    }
}

impl Table {
    /// A seat whose player is away (the game waits for them).
    fn away(&self) -> Option<Seat> {
        Seat::BOTH
            .into_iter()
            .find(|s| matches!(&self.seats[s.index()], Slot::Player(p) if p.conn.is_none()))
    }
}

/// One connection's own state.
struct Session {
    id: u64,
    peer: String,
    seat: Option<(Arc<Mutex<Table>>, Seat)>,
    sent_packs: HashSet<String>,
    /// When the last messages arrived (for the flood limit).
    recent: Vec<Instant>,
}

/// Most messages a connection may send in one second.
pub const FLOOD_LIMIT: usize = 100;

impl Session {
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
