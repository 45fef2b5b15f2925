//! Each connection, from accept to close: the accept loop (the [`Register`]'s limits per
//! address and in all), then one reader thread per connection that takes the handshake
//! within its deadline, reads frames within the protocol's caps and its flood limit,
//! sends the packs a joiner asks for, and passes seating to the lobby and moves to the
//! game's owner. A misbehaving connection is closed with a logged reason ([`Close`]).

use std::collections::HashSet;
use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Sender;
use std::time::{Duration, Instant};

use crate::rules::{Cell, Seat};

use super::super::frame::{self, FrameError};
use super::super::protocol::{
    HOST_FULL, MAGIC, MAX_TO_HOST_FRAME, PROTOCOL, SessionToken, ToClient, ToHost, clean,
    hello_version, other_version,
};
use super::conn::{Limits, Refusal, Writer};
use super::table::ToGame;
use super::{Shared, lock};

/// Why a connection is closed (logged, and sent to the peer in a `Bye`).
pub(super) struct Close(pub(super) String);

impl From<FrameError> for Close {
    fn from(e: FrameError) -> Close {
        Close(e.to_string())
    }
}

/// One connection's own state.
pub(super) struct Peer {
    pub(super) id: u64,
    pub(super) peer: String,
    pub(super) ip: IpAddr,
    pub(super) writer: Writer,
    /// The game and seat it plays.
    pub(super) seat: Option<(Sender<ToGame>, Seat)>,
    pub(super) sent_packs: HashSet<String>,
    /// When the last messages arrived (for the flood limit).
    pub(super) recent: Vec<Instant>,
    /// Set while a move of this connection waits for its game to take it: a connection
    /// has at most one move queued, whatever its game is doing (an AI thinking).
    pub(super) moving: Arc<AtomicBool>,
}

/// Most messages a connection may send in one second (moves aside: at most one waits for
/// the game at a time, so they are paced by the game's answers).
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
    pub(super) fn accept(self: Arc<Self>, listener: &TcpListener) {
        let limits = Limits {
            total: self.config.max_connections,
            per_address: self.config.max_connections_per_address,
            settling: self.config.settling,
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
                Err(Refusal::Full) => Some(format!(
                    "{HOST_FULL}: connect again within {} s; a joiner who comes back goes before new connections",
                    super::conn::RETURN_WINDOW.as_secs()
                )),
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
            let spawned = crate::script::threads::spawn("lan-conn", move || {
                me.serve(stream, peer, id);
                me.conns.remove(id);
            });
            if spawned.is_err() {
                self.conns.remove(id);
            }
        }
    }

    /// Serve one connection until it closes.
    pub(super) fn serve(self: &Arc<Self>, mut stream: TcpStream, peer: SocketAddr, id: u64) {
        let Ok(writer) = Writer::start(id, &stream, &self.writers, &self.transfers) else {
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
            moving: Arc::new(AtomicBool::new(false)),
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

    pub(super) fn read(
        &self,
        stream: &mut TcpStream,
        idle: Duration,
        deadline: Duration,
    ) -> Result<ToHost, FrameError> {
        frame::read_within_max(stream, Some(idle), deadline, MAX_TO_HOST_FRAME)
    }

    pub(super) fn converse(
        self: &Arc<Self>,
        stream: &mut TcpStream,
        s: &mut Peer,
    ) -> Result<(), Close> {
        let handshake = self.config.handshake;
        let body = match frame::read_body_max(
            stream,
            Some(handshake),
            handshake.min(self.config.frame_deadline),
            MAX_TO_HOST_FRAME,
        ) {
            Ok(b) => b,
            Err(FrameError::Idle) => {
                return Err(Close(format!(
                    "no Hello within {} s of connecting",
                    handshake.as_secs_f32()
                )));
            }
            Err(e) => return Err(e.into()),
        };
        // The version first: a joiner of another version may have changed any field
        // after it, and is told to update rather than that its message is malformed.
        if let Some(theirs) = hello_version(&body)
            && theirs != PROTOCOL
        {
            return Err(Close(other_version(theirs, "joiner")));
        }
        let hello: ToHost = frame::decode(&body).map_err(Close::from)?;
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
            return Err(Close(other_version(protocol, "joiner")));
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
            // Moves are paced by the game instead (one waits for it at a time): a quick
            // AI may send more than the flood limit in a second.
            if !matches!(message, ToHost::Intent { .. }) {
                s.count()?;
            }
            match message {
                ToHost::Hello { .. } => return Err(Close("a second Hello".into())),
                ToHost::Ping => {}
                ToHost::Concede => {
                    let Some((tx, seat)) = &s.seat else {
                        return Err(Close("a concession before taking a seat".into()));
                    };
                    let _ = tx.send(ToGame::Concede {
                        seat: *seat,
                        conn: s.id,
                    });
                }
                ToHost::WantPacks(ids) => {
                    self.conns.set_fetching(s.id);
                    self.send_packs(s, &ids)?;
                }
                ToHost::Join { deck, seat } => {
                    let wanted = seat.and_then(super::super::protocol::seat_of);
                    self.join(s, (&name, token), &deck, wanted)?;
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
                    if s.moving.swap(true, Ordering::SeqCst) {
                        return Err(Close(
                            "a move sent before the host answered the last one".into(),
                        ));
                    }
                    let sent = tx.send(ToGame::Intent {
                        taken: Arc::clone(&s.moving),
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
    pub(super) fn find_token(&self, token: SessionToken) -> Option<(Sender<ToGame>, Seat)> {
        let lobby = lock(&self.lobby);
        lobby.iter().find_map(|e| {
            Seat::BOTH
                .into_iter()
                .find(|s| e.tokens[s.index()] == Some(token))
                .map(|s| (e.tx.clone(), s))
        })
    }

    pub(super) fn send_packs(&self, s: &mut Peer, ids: &[String]) -> Result<(), Close> {
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
}
