//! A connection to a host: the handshake, pack sync, taking a seat, sending intents
//! and receiving what the seat may see. Blocking, with every read bounded; the desktop
//! client runs it on a thread of its own.

use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use crate::ai::{self, Level, Observation};
use crate::packs::{CAPS, PackError};
use crate::rules::{Catalog, Cell, Move, Play, Seat};

use super::frame::{self, FrameError};
use super::host::GameResult;
use super::protocol::{
    MAGIC, PROTOCOL, PackRef, Played, Seen, SessionToken, ToClient, ToHost, clean, seat_of,
};
use super::sync::{Cache, Plan, bad_ref};

/// Most packs a host may list.
pub const MAX_PACKS: usize = 256;

/// How often a waiting client says it is still there.
pub const PING_EVERY: Duration = Duration::from_secs(5);

/// Why talking to a host failed.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The connection failed or broke.
    #[error("{0}")]
    Frame(#[from] FrameError),
    /// The host closed the connection, saying why.
    #[error("the host closed the connection: {0}")]
    Bye(String),
    /// The host sent something the protocol does not allow here.
    #[error("the host broke the protocol: {0}")]
    Protocol(String),
    /// A pack from the host was refused.
    #[error("{0}")]
    Pack(#[from] PackError),
}

impl ClientError {
    /// Whether the connection dropped (worth reconnecting), rather than being refused.
    #[must_use]
    pub fn is_disconnect(&self) -> bool {
        matches!(self, ClientError::Frame(e) if e.is_disconnect() || matches!(e, FrameError::Idle))
    }
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
}

impl Client {
    /// Connect to `addr` and shake hands as `name`; `resume` takes a seat back.
    pub fn connect(
        addr: SocketAddr,
        name: &str,
        resume: Option<SessionToken>,
        timeout: Duration,
    ) -> Result<Client, ClientError> {
        let mut stream = TcpStream::connect_timeout(&addr, timeout).map_err(FrameError::Io)?;
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
        let welcome = match frame::read(&mut stream, Some(timeout))? {
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
                    return Err(ClientError::Protocol(format!(
                        "it speaks protocol {protocol}, this copy {PROTOCOL}"
                    )));
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
                report.line(&format!("connection lost ({e}); reconnecting"));
                *client = client.reconnect(reconnect)?;
                moved_at = None;
                continue;
            }
            Err(e) => return Err(e),
        };
        let Some(update) = update else { continue };
        match update {
            Update::State { seen, .. } => {
                let (state, history) = seen.restore(catalog).map_err(ClientError::Protocol)?;
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
                fallbacks = brain.legal_moves(obs.state());
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
    /// Connect again to the same host with this seat's token, trying for up to
    /// `within`: a new connection holding the same seat.
    pub fn reconnect(&self, within: Duration) -> Result<Client, ClientError> {
        let until = Instant::now() + within;
        loop {
            match Client::connect(
                self.addr,
                &self.name,
                Some(self.welcome.token),
                Duration::from_secs(2),
            ) {
                Ok(mut c) => {
                    c.set_seq(self.seq);
                    return Ok(c);
                }
                Err(e) if e.is_disconnect() && Instant::now() < until => {
                    std::thread::sleep(Duration::from_millis(300));
                }
                Err(e) => return Err(e),
            }
        }
    }
}
