//! One connection, from its admission to its close, on a reader thread of its own: it
//! takes the handshake within its deadline, reads frames within the protocol's caps and
//! its flood limit, sends the packs a joiner asks for, checks a joiner's deck with the
//! rules core alone, and passes seating to the lobby and moves to the game's owner. It
//! writes only through its [`Writer`]. A misbehaving connection is closed with a logged
//! reason ([`Close`]).

use std::collections::HashSet;
use std::net::{IpAddr, SocketAddr, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Sender;
use std::time::{Duration, Instant};

use crate::rules::{CardId, Cell, Seat, Whose};

use super::super::frame::{self, FrameError};
use super::super::protocol::{
    MAGIC, MAX_TO_HOST_FRAME, PROTOCOL, SessionToken, ToClient, ToHost, clean, hello_version,
    other_version,
};
use super::Common;
use super::conn::{Connections, Writer};
use super::lobby::Lobby;
use super::table::{Player, ToGame};

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

/// A connection admitted, with what it reaches: the host's settings and log, the other
/// connections (its own entry in the register) and the lobby.
pub(super) struct Connection {
    common: Arc<Common>,
    conns: Arc<Connections>,
    lobby: Arc<Lobby>,
    id: u64,
    peer: SocketAddr,
}

impl Connection {
    /// Connection `id`, from `peer`, admitted.
    pub(super) fn new(
        common: Arc<Common>,
        conns: Arc<Connections>,
        lobby: Arc<Lobby>,
        id: u64,
        peer: SocketAddr,
    ) -> Connection {
        Connection {
            common,
            conns,
            lobby,
            id,
            peer,
        }
    }

    /// Serve one connection until it closes.
    pub(super) fn serve(&self, mut stream: TcpStream) {
        let (id, peer) = (self.id, self.peer);
        let Ok(writer) = self.conns.writer(id, &stream) else {
            return;
        };
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
                if !self.common.stopping() {
                    self.common.log(format!("{peer}: closed: {reason}"));
                }
                session.writer.bye(&reason);
            }
            // A stopping host's writers close after their last frames.
            Ok(()) if !self.common.stopping() => session.writer.cut(),
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

    fn converse(&self, stream: &mut TcpStream, s: &mut Peer) -> Result<(), Close> {
        let config = &self.common.config;
        let handshake = config.handshake;
        let body = match frame::read_body_max(
            stream,
            Some(handshake),
            handshake.min(config.frame_deadline),
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
            Some(token) => Some(self.lobby.find_token(token).ok_or_else(|| {
                Close("that game is no longer held by this host; join anew".into())
            })?),
            None => None,
        };
        self.common.log(format!(
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
            host: config.name.clone(),
            packs: self.common.content.packs.clone(),
            sends_packs: config.sends_packs,
            token,
            resumed: back.as_ref().map(|(_, seat)| seat.number()),
            ai_deck: config.ai.map(|_| config.ai_deck_kind.describe()),
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
            self.conns.register.set_seated(s.id, true);
            s.seat = Some((tx, seat));
        }
        loop {
            if self.common.stopping() {
                return Ok(());
            }
            let message = match self.read(stream, config.idle, config.frame_deadline) {
                Ok(m) => m,
                Err(FrameError::Closed) => return Ok(()),
                Err(FrameError::Idle) => {
                    return Err(Close(format!("silent for {} s", config.idle.as_secs())));
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
                    self.conns.register.set_fetching(s.id);
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

    fn send_packs(&self, s: &mut Peer, ids: &[String]) -> Result<(), Close> {
        if !self.common.config.sends_packs {
            return Err(Close("this host does not send packs".into()));
        }
        for id in ids {
            let Some(bytes) = self.common.content.archives.get(id) else {
                return Err(Close(format!(
                    "asked for pack '{}', which this game does not use",
                    clean(id)
                )));
            };
            if !s.sent_packs.insert(id.clone()) {
                return Err(Close(format!("asked for pack '{}' twice", clean(id))));
            }
            s.writer.send_pack(id, Arc::clone(bytes));
            self.common.log(format!(
                "{}: sent pack {id} ({} bytes)",
                s.peer,
                bytes.len()
            ));
        }
        Ok(())
    }

    /// Seat a joiner with `deck`, checked first: a deck that does not resolve in the
    /// game's content or breaks the deck rules is refused with the reason, and the
    /// joiner may try another.
    fn join(
        &self,
        s: &mut Peer,
        (name, token): (&str, SessionToken),
        deck: &[Vec<String>],
        wanted: Option<Seat>,
    ) -> Result<(), Close> {
        if s.seat.is_some() {
            return Err(Close("a Join from a seated player".into()));
        }
        let catalog = &self.common.content.catalog;
        let stacks = match resolve_deck(catalog, deck) {
            Ok(stacks) => stacks,
            Err(reason) => {
                s.writer.send(&ToClient::DeckRefused { reason });
                return Ok(());
            }
        };
        // The deck rules are the rules core's alone: no script host is made for them (a
        // connection holds none; the game's thread makes the one the game plays with).
        let rules = crate::rules::Engine::new(catalog, &crate::rules::NoHooks);
        if let Err(e) = rules.check_deck(Seat::One, &stacks) {
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
        let (tx, seat) = self.lobby.seat(s.ip, player, stacks, wanted)?;
        self.conns.register.set_seated(s.id, true);
        s.seat = Some((tx, seat));
        Ok(())
    }
}

/// A joiner's deck as card ids, read no further than the deck rules allow (one stack and
/// one card past each limit, so the rules can say what is too many).
fn resolve_deck(
    catalog: &crate::rules::Catalog,
    deck: &[Vec<String>],
) -> Result<Vec<Vec<CardId>>, String> {
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
