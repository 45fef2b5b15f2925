//! A connection to a host: the handshake, pack sync, taking a seat, sending intents
//! and receiving what the seat may see. Blocking, with every read bounded; the desktop
//! client runs it on a thread of its own.
//!
//! A client connects again for a while to a host that turns it away because it is full,
//! `fetch`es the host's packs it lacks, and after a drop [`Client::reconnect`]s with its
//! seat's token and a growing back-off. [`play_with_ai`] is `join --ai`.

use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use crate::ai::{self, Level};
use crate::observe::{History, Observation};
use crate::packs::{CAPS, PackError};
use crate::rules::{Catalog, Cell, Move, Play, Seat};

use super::frame::{self, FrameError};
use super::host::GameResult;
use super::protocol::{
    HOST_FULL, MAGIC, PROTOCOL, PackRef, Played, Seen, SessionToken, ToClient, ToHost, clean,
    other_version, seat_of, welcome_version,
};
use super::sync::{Cache, Plan, bad_ref};

/// Most packs a host may list.
pub const MAX_PACKS: usize = 256;

/// How often a waiting client says it is still there.
pub const PING_EVERY: Duration = Duration::from_secs(5);

/// Why talking to a host failed.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// No connection could be made to the host.
    #[error("cannot reach {addr}: {reason}{}", unreachable_hint(*.kind, *.addr))]
    Unreachable {
        /// The host's address.
        addr: SocketAddr,
        /// What the system said.
        reason: String,
        /// Its kind (for the hint and for retrying).
        kind: std::io::ErrorKind,
    },
    /// The connection failed or broke.
    #[error(transparent)]
    Frame(#[from] FrameError),
    /// The host closed the connection, saying why.
    #[error("the host closed the connection: {0}")]
    Bye(String),
    /// The host sent something the protocol does not allow here.
    #[error("the host broke the protocol: {0}")]
    Protocol(String),
    /// The host speaks another version of the protocol.
    #[error("{0}")]
    Version(String),
    /// A pack from the host was refused.
    #[error(transparent)]
    Pack(#[from] PackError),
    /// Reconnecting stopped: the host kept refusing or dropping the connection.
    #[error(
        "gave up reconnecting to {addr} after {attempts} attempt(s) in {secs} s: {last}{}",
        if *.resumed > 0 { " (the host took the seat back each time, then dropped it)" } else { "" }
    )]
    GaveUp {
        /// The host's address.
        addr: SocketAddr,
        /// Connections tried since the connection was last steady.
        attempts: u32,
        /// How many of them the host accepted before dropping them again.
        resumed: u32,
        /// Seconds since the first drop.
        secs: u64,
        /// The last failure.
        last: String,
    },
}

/// What to try when a host cannot be reached.
fn unreachable_hint(kind: std::io::ErrorKind, addr: SocketAddr) -> String {
    use std::io::ErrorKind as K;
    match kind {
        K::ConnectionRefused => format!(
            " (is a game hosted there? `tokensmith serve` listens on port {} unless told \
             otherwise: check the port, that the host is running, and that no firewall \
             blocks it)",
            super::GAME_PORT
        ),
        K::TimedOut | K::WouldBlock => format!(
            " (no answer: check the address, and that no firewall on the host blocks TCP \
             port {})",
            addr.port()
        ),
        K::HostUnreachable | K::NetworkUnreachable | K::AddrNotAvailable => {
            " (check that both machines are on the same network)".to_string()
        }
        _ => String::new(),
    }
}

impl ClientError {
    /// Whether the connection dropped (worth reconnecting), rather than being refused.
    #[must_use]
    pub fn is_disconnect(&self) -> bool {
        match self {
            ClientError::Unreachable { .. } => true,
            ClientError::Frame(e) => e.is_disconnect() || matches!(e, FrameError::Idle),
            _ => false,
        }
    }
}

/// How long a reconnected connection must hold, or the game must move on, before a
/// later drop starts afresh (counting attempts and time from zero).
pub const STEADY: Duration = Duration::from_secs(20);

/// How long a reconnected connection must hold, with the game moved on, to count as
/// steady.
pub const MOVED_STEADY: Duration = Duration::from_secs(2);

/// Most connections tried after a drop before giving up (those the host accepts and
/// drops again count too).
pub const MAX_RECONNECTS: u32 = 8;

/// The wait before the first reconnection attempt; it doubles with each attempt, up to
/// [`RECONNECT_CAP`].
pub const RECONNECT_FIRST: Duration = Duration::from_millis(100);

/// The longest wait between two reconnection attempts.
pub const RECONNECT_CAP: Duration = Duration::from_secs(5);

/// How long a client keeps connecting again to a host that turns it away because it is
/// full (the host lets an address it turned away in before new connections for 30 s).
pub const FULL_PATIENCE: Duration = Duration::from_secs(20);

/// The pause before connecting again to a host that was full.
pub const FULL_AGAIN: Duration = Duration::from_millis(200);

/// The reconnection attempts since the connection was last steady.
#[derive(Clone, Copy, Debug)]
struct Streak {
    /// When the first drop happened.
    since: Instant,
    /// Connections tried.
    attempts: u32,
    /// How many of them the host accepted.
    resumed: u32,
    /// The moves played when the streak began.
    moves: Option<u32>,
}

/// The host's answer to the handshake.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Welcome {
    /// The host's name.
    pub host: String,
    /// The game's packs, in load order.
    pub packs: Vec<PackRef>,
    /// Whether the host sends its packs.
    pub sends_packs: bool,
    /// The seat's token (keep it to reconnect).
    pub token: SessionToken,
    /// The seat taken back, when the handshake resumed one.
    pub resumed: Option<Seat>,
}

/// What the host said.
#[derive(Clone, Debug, PartialEq)]
pub enum Update {
    /// Seated; the game starts when the other seat is taken.
    Seated(Seat),
    /// The seat's view now, the play that led to it and its events.
    State {
        /// The view.
        seen: Box<Seen>,
        /// The play.
        last: Option<Played>,
        /// Its events.
        events: Vec<super::events::WireEvent>,
    },
    /// A move was refused; the state is unchanged.
    MoveRefused {
        /// Its number.
        seq: u32,
        /// Why.
        reason: String,
    },
    /// The deck was refused: send another.
    DeckRefused(String),
    /// The opponent dropped; the game waits.
    Paused,
    /// The opponent is back.
    Resumed,
}

/// A connection to a host.
pub struct Client {
    stream: TcpStream,
    welcome: Welcome,
    seq: u32,
    seat: Option<Seat>,
    last_sent: Instant,
    addr: SocketAddr,
    name: String,
    last_seen: Option<Box<Seen>>,
    /// When this connection was made.
    connected: Instant,
    /// The reconnection attempts that led to it, while it has not proved steady.
    streak: Option<Streak>,
}

impl Client {
    /// Connect to `addr` and shake hands as `name`; `resume` takes a seat back. A host
    /// that turns the connection away because it is full is asked again every
    /// [`FULL_AGAIN`] for up to [`FULL_PATIENCE`]: it lets a joiner who comes back in
    /// before new connections.
    pub fn connect(
        addr: SocketAddr,
        name: &str,
        resume: Option<SessionToken>,
        timeout: Duration,
    ) -> Result<Client, ClientError> {
        let started = Instant::now();
        loop {
            match Client::connect_once(addr, name, resume, timeout) {
                Err(ClientError::Bye(reason))
                    if reason.starts_with(HOST_FULL) && started.elapsed() < FULL_PATIENCE =>
                {
                    std::thread::sleep(FULL_AGAIN);
                }
                other => return other,
            }
        }
    }

    fn connect_once(
        addr: SocketAddr,
        name: &str,
        resume: Option<SessionToken>,
        timeout: Duration,
    ) -> Result<Client, ClientError> {
        let mut stream =
            TcpStream::connect_timeout(&addr, timeout).map_err(|e| ClientError::Unreachable {
                addr,
                reason: e.to_string(),
                kind: e.kind(),
            })?;
        stream.set_nodelay(true).map_err(FrameError::Io)?;
        stream
            .set_write_timeout(Some(Duration::from_secs(10)))
            .map_err(FrameError::Io)?;
        frame::write(
            &mut stream,
            &ToHost::Hello {
                magic: MAGIC.into(),
                protocol: PROTOCOL,
                name: clean(name),
                resume,
            },
        )?;
        let body = frame::read_body(&mut stream, Some(timeout), frame::FRAME_DEADLINE)?;
        // The version first: a host of another version may have changed any field after
        // it, and the player is told to update rather than that a message is malformed.
        if let Some(theirs) = welcome_version(&body)
            && theirs != PROTOCOL
        {
            return Err(ClientError::Version(other_version(theirs, "host")));
        }
        let welcome = match frame::decode(&body)? {
            ToClient::Welcome {
                protocol,
                host,
                packs,
                sends_packs,
                token,
                resumed,
                ..
            } => {
                if protocol != PROTOCOL {
                    return Err(ClientError::Version(other_version(protocol, "host")));
                }
                if packs.len() > MAX_PACKS {
                    return Err(ClientError::Protocol(format!("{} packs", packs.len())));
                }
                if let Some(why) = packs.iter().find_map(bad_ref) {
                    return Err(ClientError::Protocol(why));
                }
                Welcome {
                    host: clean(&host),
                    packs,
                    sends_packs,
                    token,
                    resumed: resumed.and_then(seat_of),
                }
            }
            ToClient::Bye { reason } => return Err(ClientError::Bye(clean(&reason))),
            other => return Err(unexpected(&other)),
        };
        let seat = welcome.resumed;
        Ok(Client {
            stream,
            welcome,
            seq: 0,
            seat,
            last_sent: Instant::now(),
            addr,
            name: clean(name),
            last_seen: None,
            connected: Instant::now(),
            streak: None,
        })
    }

    /// The handshake's answer.
    #[must_use]
    pub fn welcome(&self) -> &Welcome {
        &self.welcome
    }

    /// The seat, once taken.
    #[must_use]
    pub fn seat(&self) -> Option<Seat> {
        self.seat
    }

    /// The last view the host sent.
    #[must_use]
    pub fn last_seen(&self) -> Option<&Seen> {
        self.last_seen.as_deref()
    }

    /// Continue numbering moves after `seq` (a resumed seat: the host remembers the last).
    pub fn set_seq(&mut self, seq: u32) {
        self.seq = seq;
    }

    /// Fetch the packs `plan` lacks into `cache`, checking each against its announced
    /// hash; `progress(received, total)` is called as bytes arrive. On success every
    /// pack of the plan has a folder.
    pub fn fetch(
        &mut self,
        plan: &mut Plan,
        cache: &Cache,
        mut progress: impl FnMut(u64, u64),
    ) -> Result<(), ClientError> {
        let ids = plan.to_fetch();
        if ids.is_empty() {
            return Ok(());
        }
        if !self.welcome.sends_packs {
            return Err(ClientError::Bye(
                "this host does not send its packs; get them from its owner".into(),
            ));
        }
        // Every pack the game loads from the cache: kept by the quota's trimming, and
        // together held to the quota.
        let needed: Vec<String> = plan
            .packs
            .iter()
            .filter(|s| {
                s.dir.is_none() || s.dir.as_ref().is_some_and(|d| d.starts_with(cache.root()))
            })
            .map(|s| s.pack.hash.clone())
            .collect();
        let needed: Vec<&str> = needed.iter().map(String::as_str).collect();
        let result = match cache.check_fits(&needed, 0) {
            Ok(()) => self.fetch_each(ids, plan, cache, &needed, &mut progress),
            Err(e) => Err(e.into()),
        };
        // Whether or not every pack came, the cache is held to its quota (the game's
        // packs kept): failed joins do not pile packs up.
        cache.trim(&needed);
        result
    }

    /// The body of [`Client::fetch`]: ask for `ids` and store each as it arrives.
    fn fetch_each(
        &mut self,
        ids: Vec<String>,
        plan: &mut Plan,
        cache: &Cache,
        needed: &[&str],
        progress: &mut impl FnMut(u64, u64),
    ) -> Result<(), ClientError> {
        frame::write(&mut self.stream, &ToHost::WantPacks(ids.clone()))?;
        self.last_sent = Instant::now();
        for id in ids {
            let r = plan
                .packs
                .iter()
                .find(|s| s.pack.id == id)
                .map(|s| s.pack.clone())
                .ok_or_else(|| ClientError::Protocol(format!("no pack {id}")))?;
            let mut bytes: Vec<u8> = Vec::new();
            let mut expected: Option<u64> = None;
            loop {
                match frame::read(&mut self.stream, Some(Duration::from_secs(30)))? {
                    ToClient::PackChunk {
                        id: got,
                        total,
                        offset,
                        bytes: chunk,
                    } => {
                        if got != id {
                            return Err(ClientError::Protocol(format!(
                                "sent pack '{}' when '{id}' was due",
                                clean(&got)
                            )));
                        }
                        if total > CAPS.archive_bytes {
                            return Err(PackError::TooBig {
                                what: format!(
                                    "the host's archive of '{id}' is {total} bytes, over the {}-byte cap",
                                    CAPS.archive_bytes
                                ),
                            }
                            .into());
                        }
                        if expected.is_some_and(|t| t != total) || offset != bytes.len() as u64 {
                            return Err(ClientError::Protocol(format!(
                                "pieces of '{id}' out of order"
                            )));
                        }
                        expected = Some(total);
                        bytes.extend_from_slice(&chunk);
                        if bytes.len() as u64 > total {
                            return Err(ClientError::Protocol(format!(
                                "more bytes of '{id}' than announced"
                            )));
                        }
                        progress(bytes.len() as u64, total);
                        if bytes.len() as u64 == total {
                            break;
                        }
                    }
                    ToClient::Bye { reason } => return Err(ClientError::Bye(clean(&reason))),
                    other => return Err(unexpected(&other)),
                }
            }
            let dir = cache.store(&r, bytes)?;
            if let Err(e) = cache.check_fits(needed, 0) {
                let _ = cache.remove(&r.hash);
                return Err(e.into());
            }
            if let Some(s) = plan.packs.iter_mut().find(|s| s.pack.id == id) {
                s.dir = Some(dir);
            }
        }
        Ok(())
    }

    /// Ask for a seat with `deck` (card keys, top first): the answer comes as an
    /// [`Update::Seated`] or [`Update::DeckRefused`].
    pub fn join(&mut self, deck: &[Vec<String>]) -> Result<(), ClientError> {
        self.join_as(deck, None)
    }

    /// [`Client::join`] asking for `seat`.
    pub fn join_as(&mut self, deck: &[Vec<String>], seat: Option<Seat>) -> Result<(), ClientError> {
        frame::write(
            &mut self.stream,
            &ToHost::Join {
                deck: deck.to_vec(),
                seat: seat.map(Seat::number),
            },
        )?;
        self.last_sent = Instant::now();
        Ok(())
    }

    /// Give up the game: the host ends it, the other seat winning, and says so with a
    /// `Bye`.
    pub fn concede(&mut self) -> Result<(), ClientError> {
        frame::write(&mut self.stream, &ToHost::Concede)?;
        self.last_sent = Instant::now();
        Ok(())
    }

    /// Send a move: the top card of `stack` on `cell`. Its number.
    pub fn play(&mut self, stack: u8, cell: Cell) -> Result<u32, ClientError> {
        let seat = self
            .seat
            .ok_or_else(|| ClientError::Protocol("no seat yet".into()))?;
        self.seq += 1;
        frame::write(
            &mut self.stream,
            &ToHost::Intent {
                seq: self.seq,
                seat: seat.number(),
                stack,
                x: cell.x,
                y: cell.y,
            },
        )?;
        self.last_sent = Instant::now();
        Ok(self.seq)
    }

    /// Tell the host this client is still there when it has sent nothing for
    /// [`PING_EVERY`] (while a player answers a question before joining, say).
    pub fn keep_alive(&mut self) -> Result<(), ClientError> {
        if self.last_sent.elapsed() >= PING_EVERY {
            frame::write(&mut self.stream, &ToHost::Ping)?;
            self.last_sent = Instant::now();
        }
        Ok(())
    }

    /// The next thing the host says, waiting at most `wait` (`None` when nothing came);
    /// pings the host while waiting.
    pub fn next(&mut self, wait: Duration) -> Result<Option<Update>, ClientError> {
        if self.last_sent.elapsed() >= PING_EVERY {
            frame::write(&mut self.stream, &ToHost::Ping)?;
            self.last_sent = Instant::now();
        }
        let message = match frame::read(&mut self.stream, Some(wait.min(PING_EVERY))) {
            Ok(m) => m,
            Err(FrameError::Idle) => return Ok(None),
            Err(e) => return Err(e.into()),
        };
        Ok(Some(match message {
            ToClient::Seated { seat } => {
                let seat =
                    seat_of(seat).ok_or_else(|| ClientError::Protocol("no such seat".into()))?;
                self.seat = Some(seat);
                Update::Seated(seat)
            }
            ToClient::State { seen, last, events } => {
                if self.seat.is_some_and(|s| s.number() != seen.seat) {
                    return Err(ClientError::Protocol("a view for the other seat".into()));
                }
                self.seat = seat_of(seen.seat);
                let seen = Box::new(seen);
                self.last_seen = Some(seen.clone());
                Update::State { seen, last, events }
            }
            ToClient::MoveRefused { seq, reason } => Update::MoveRefused {
                seq,
                reason: clean(&reason),
            },
            ToClient::DeckRefused { reason } => Update::DeckRefused(clean(&reason)),
            ToClient::Paused => Update::Paused,
            ToClient::Resumed => Update::Resumed,
            ToClient::Bye { reason } => return Err(ClientError::Bye(clean(&reason))),
            other => return Err(unexpected(&other)),
        }))
    }
}

fn unexpected(message: &ToClient) -> ClientError {
    let what = match message {
        ToClient::Welcome { .. } => "Welcome",
        ToClient::PackChunk { .. } => "PackChunk",
        ToClient::DeckRefused { .. } => "DeckRefused",
        ToClient::Seated { .. } => "Seated",
        ToClient::State { .. } => "State",
        ToClient::MoveRefused { .. } => "MoveRefused",
        ToClient::Paused => "Paused",
        ToClient::Resumed => "Resumed",
        ToClient::Bye { .. } => "Bye",
    };
    ClientError::Protocol(format!("an unexpected {what}"))
}

/// How [`play_with_ai`] reports.
pub trait Report {
    /// A line for the log.
    fn line(&mut self, text: &str);
}

impl<F: FnMut(&str)> Report for F {
    fn line(&mut self, text: &str) {
        self(text);
    }
}

/// Play a seat to the end of its game with the AI at `level` over `catalog` (the
/// game's content), reconnecting with the seat's token for up to `reconnect` after a
/// drop. The game's result as the host reported it.
pub fn play_with_ai(
    client: &mut Client,
    catalog: &Catalog,
    player: &AiPlayer,
    report: &mut dyn Report,
) -> Result<GameResult, ClientError> {
    let AiPlayer {
        level,
        options,
        reconnect,
    } = *player;
    let scripts = ai::hooks_for(catalog);
    let brain = scripts.brain(catalog);
    let mut moved_at: Option<u32> = None;
    // Other legal moves of the last position, tried in turn when the host refuses one.
    let mut fallbacks: Vec<Move> = Vec::new();
    // A view already received (say, on reconnecting) is acted on first.
    let mut pending = client.last_seen.clone();
    // The opponent's plays, with the position each was made from where the state just
    // before it was seen (what it passed over tells the AI what it holds).
    let mut history = if level.fills_in() {
        History::new()
    } else {
        History::plays_only()
    };
    let mut before: Option<crate::rules::GameState> = None;
    loop {
        let next = match pending.take() {
            Some(seen) => Ok(Some(Update::State {
                seen,
                last: None,
                events: Vec::new(),
            })),
            None => client.next(Duration::from_secs(1)),
        };
        let update = match next {
            Ok(u) => u,
            Err(e) if e.is_disconnect() => {
                // One line per run of drops, not per attempt.
                if client.is_steady() {
                    report.line(&format!("connection lost ({e}); reconnecting"));
                }
                *client = client.reconnect(reconnect)?;
                moved_at = None;
                continue;
            }
            Err(e) => return Err(e),
        };
        let Some(update) = update else { continue };
        match update {
            Update::State { seen, .. } => {
                let (state, plays) = seen
                    .restore(catalog)
                    .map_err(|e| ClientError::Protocol(e.to_string()))?;
                history.follow(before.as_ref(), &state, plays);
                if history.keeps() {
                    before = Some(state.clone());
                }
                if seen.over {
                    return Ok(GameResult {
                        scores: seen.scores,
                        winner: seen.winner.and_then(seat_of),
                        moves: seen.moves,
                    });
                }
                let seat = seen.seat();
                if state.turn() != seat || moved_at == Some(seen.moves) {
                    continue;
                }
                let obs = Observation::new(&state, seat, &history, false);
                let seed = u64::from(seen.moves) ^ 0x5EED;
                let mut agent = ai::agent(level, seed, options);
                let chosen = agent.choose(&brain, &obs);
                fallbacks = brain.engine().legal_moves(obs.state());
                fallbacks.retain(|m| Some(*m) != chosen);
                fallbacks.reverse();
                if let Some(mv) = chosen.or_else(|| fallbacks.pop()) {
                    send(client, mv)?;
                    moved_at = Some(seen.moves);
                }
            }
            Update::MoveRefused { reason, .. } => {
                report.line(&format!("move refused: {reason}"));
                if let Some(mv) = fallbacks.pop() {
                    send(client, mv)?;
                }
            }
            Update::DeckRefused(reason) => return Err(ClientError::Bye(reason)),
            Update::Paused => report.line("the opponent dropped; waiting for them"),
            Update::Resumed => report.line("the opponent is back"),
            Update::Seated(seat) => {
                report.line(&format!("seated as seat {seat}; waiting for an opponent"));
            }
        }
    }
}

fn send(client: &mut Client, mv: Move) -> Result<(), ClientError> {
    if let Play::Stack(stack) = mv.play {
        client.play(stack, mv.cell)?;
    }
    Ok(())
}

/// How [`play_with_ai`] plays.
#[derive(Clone, Copy, Debug)]
pub struct AiPlayer {
    /// The AI's level.
    pub level: Level,
    /// How it thinks.
    pub options: ai::Options,
    /// How long to keep trying to reconnect after a drop.
    pub reconnect: Duration,
}

impl Client {
    /// Whether this connection has proved steady: it has held for [`STEADY`], or for
    /// [`MOVED_STEADY`] with the game moved on since the drop that led to it (a host
    /// faking progress still gets at most one reconnection per [`MOVED_STEADY`]).
    #[must_use]
    pub fn is_steady(&self) -> bool {
        let Some(streak) = self.streak else {
            return true;
        };
        let held = self.connected.elapsed();
        let moved = self
            .last_seen
            .as_ref()
            .is_some_and(|seen| seen.moves > streak.moves.unwrap_or(0));
        held >= STEADY || (moved && held >= MOVED_STEADY)
    }

    /// Connect again to the same host with this seat's token: a new connection holding
    /// the same seat. Attempts back off exponentially ([`RECONNECT_FIRST`] doubling up to
    /// [`RECONNECT_CAP`]) and stop after [`MAX_RECONNECTS`] or `within`, counted from
    /// the first drop since the connection was last steady: a host that takes the seat
    /// back and drops it again at once does not restart the count.
    pub fn reconnect(&self, within: Duration) -> Result<Client, ClientError> {
        let mut streak = match self.streak {
            Some(s) if !self.is_steady() => s,
            _ => Streak {
                since: Instant::now(),
                attempts: 0,
                resumed: 0,
                moves: self.last_seen.as_ref().map(|s| s.moves),
            },
        };
        let until = streak.since + within;
        let mut last = "the connection was lost".to_string();
        loop {
            let delay = backoff(streak.attempts);
            let now = Instant::now();
            if streak.attempts >= MAX_RECONNECTS || now + delay > until {
                return Err(ClientError::GaveUp {
                    addr: self.addr,
                    attempts: streak.attempts,
                    resumed: streak.resumed,
                    secs: streak.since.elapsed().as_secs(),
                    last,
                });
            }
            std::thread::sleep(delay);
            streak.attempts += 1;
            match Client::connect(
                self.addr,
                &self.name,
                Some(self.welcome.token),
                Duration::from_secs(2).min(until.saturating_duration_since(Instant::now())),
            ) {
                Ok(mut c) => {
                    streak.resumed += 1;
                    c.set_seq(self.seq);
                    c.streak = Some(streak);
                    return Ok(c);
                }
                Err(e) if e.is_disconnect() => last = e.to_string(),
                Err(e) => return Err(e),
            }
        }
    }
}

/// The wait before reconnection attempt `n + 1`.
fn backoff(n: u32) -> Duration {
    RECONNECT_FIRST
        .saturating_mul(1u32 << n.min(16))
        .min(RECONNECT_CAP)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_chain_prints_each_message_once() {
        let io = std::io::Error::new(std::io::ErrorKind::ConnectionReset, "reset by peer");
        let e = anyhow::Error::new(ClientError::from(FrameError::Io(io)));
        assert_eq!(format!("{e:#}"), "reset by peer");
        let pack = ClientError::from(PackError::Refused("entry x compressed 1028:1".into()));
        let shown = format!("{:#}", anyhow::Error::new(pack).context("cannot join"));
        assert_eq!(shown.matches("1028:1").count(), 1, "{shown}");
        let refused = ClientError::Unreachable {
            addr: "127.0.0.1:9".parse().expect("addr"),
            reason: "Connection refused (os error 111)".into(),
            kind: std::io::ErrorKind::ConnectionRefused,
        };
        let shown = format!("{:#}", anyhow::Error::new(refused));
        assert_eq!(shown.matches("os error 111").count(), 1, "{shown}");
        assert!(shown.contains("is a game hosted there?"), "{shown}");
    }

    #[test]
    fn reconnection_waits_double_up_to_the_cap_and_stop_after_the_last_attempt() {
        let waits: Vec<Duration> = (0..MAX_RECONNECTS).map(backoff).collect();
        assert_eq!(waits[0], RECONNECT_FIRST);
        assert_eq!(waits[1], RECONNECT_FIRST * 2);
        assert!(waits.iter().all(|w| *w <= RECONNECT_CAP));
        assert_eq!(backoff(40), RECONNECT_CAP);
        let total: Duration = waits.iter().sum();
        // 0.1 + 0.2 + 0.4 + 0.8 + 1.6 + 3.2 + 5 + 5 s.
        assert_eq!(total, Duration::from_millis(16_300));
    }
}
