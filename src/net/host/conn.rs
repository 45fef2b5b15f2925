//! Connections: each has one writer (a thread draining a bounded queue), so a game's
//! owner never writes to a socket itself and two threads never write to one socket; and
//! the host's register of open connections, with the limits per address and the rule
//! that a connection holding no seat gives way to one that comes for a seat.
//!
//! A writer's queue is bounded: a client that does not read is cut, and pack archives go out
//! one [`PACK_CHUNK`] (64 KiB) at a time. The register spares a new connection while it
//! settles ([`SETTLING`]), closes a seatless one that has not asked for packs before one
//! fetching them, and lets an address turned away for fullness in before new connections
//! ([`RETURN_WINDOW`]).

use std::collections::{HashMap, VecDeque};
use std::io::Write as _;
use std::net::{IpAddr, Shutdown, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, TrySendError, sync_channel};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use super::super::frame;
use super::super::protocol::{HOST_FULL, ToClient};
use super::lock;

/// Frames one connection may have waiting to be written; a peer that lets more pile up
/// is not reading and is cut.
pub const QUEUE: usize = 64;

/// How long one write may block before the peer is taken as gone.
pub const WRITE_TIMEOUT: Duration = Duration::from_secs(5);

enum Out {
    Frame(Vec<u8>),
    /// A pack archive, cut into chunks by the writer (one chunk in memory at a time).
    Pack(String, Arc<Vec<u8>>),
    Bye(String),
}

/// How long a pack transfer waits for a place among the host's transfers before the
/// peer is told to try again (the joiner waits 30 s for each frame).
pub const TRANSFER_WAIT: Duration = Duration::from_secs(20);

/// The host's pack transfers under way: at most `cap` at once, so the memory and upload
/// they take stay bounded whatever the number of joiners fetching.
pub struct Transfers {
    cap: usize,
    state: Mutex<(usize, bool)>,
    freed: Condvar,
}

/// A place among the transfers; given back when dropped.
pub struct Transfer<'a>(&'a Transfers);

impl Drop for Transfer<'_> {
    fn drop(&mut self) {
        let mut s = lock(&self.0.state);
        s.0 = s.0.saturating_sub(1);
        drop(s);
        self.0.freed.notify_one();
    }
}

impl Transfers {
    /// At most `cap` transfers at once (at least one).
    #[must_use]
    pub fn new(cap: usize) -> Transfers {
        Transfers {
            cap: cap.max(1),
            state: Mutex::new((0, false)),
            freed: Condvar::new(),
        }
    }

    /// A place, waiting at most `wait`; `None` when none came free or the host stops.
    fn begin(&self, wait: Duration) -> Option<Transfer<'_>> {
        let until = Instant::now() + wait;
        let mut s = lock(&self.state);
        loop {
            if s.1 {
                return None;
            }
            if s.0 < self.cap {
                s.0 += 1;
                return Some(Transfer(self));
            }
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return None;
            }
            s = self
                .freed
                .wait_timeout(s, left)
                .map_or_else(|e| e.into_inner().0, |(g, _)| g);
        }
    }

    /// The host stops: no transfer starts, and none waits.
    pub fn close(&self) {
        lock(&self.state).1 = true;
        self.freed.notify_all();
    }
}

/// A connection's writer: cheap to clone; every message to the peer goes through it.
#[derive(Clone, Debug)]
pub struct Writer {
    /// The connection's number.
    pub id: u64,
    tx: SyncSender<Out>,
    stream: Arc<TcpStream>,
}

impl std::fmt::Debug for Out {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Out")
    }
}

/// A count of live threads of one kind (the host waits for its writers and games to end
/// when it stops).
#[derive(Default)]
pub struct Live {
    live: Mutex<usize>,
    idle: Condvar,
}

impl Live {
    /// One more.
    pub fn up(&self) {
        *lock(&self.live) += 1;
    }

    /// One fewer.
    pub fn down(&self) {
        let mut live = lock(&self.live);
        *live = live.saturating_sub(1);
        self.idle.notify_all();
    }

    /// Wait until every one has finished, at most `wait`.
    pub fn drain(&self, wait: Duration) {
        let until = Instant::now() + wait;
        let mut live = lock(&self.live);
        while *live > 0 {
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return;
            }
            live = self
                .idle
                .wait_timeout(live, left)
                .map_or_else(|e| e.into_inner().0, |(g, _)| g);
        }
    }
}

impl Writer {
    /// Start the writer of `stream`.
    pub fn start(
        id: u64,
        stream: &TcpStream,
        writers: &Arc<Live>,
        transfers: &Arc<Transfers>,
    ) -> std::io::Result<Writer> {
        let (tx, rx) = sync_channel(QUEUE);
        let stream = Arc::new(stream.try_clone()?);
        stream.set_write_timeout(Some(WRITE_TIMEOUT))?;
        let out = Arc::clone(&stream);
        let watch = Arc::clone(writers);
        let transfers = Arc::clone(transfers);
        watch.up();
        let spawned = crate::script::threads::spawn_light("lan-write", move || {
            drain(&out, &rx, &transfers);
            let _ = out.shutdown(Shutdown::Both);
            watch.down();
        });
        if let Err(e) = spawned {
            writers.down();
            return Err(e);
        }
        Ok(Writer { id, tx, stream })
    }

    /// Queue `message`; a peer whose queue is full is cut. Returns whether it was queued.
    pub fn send(&self, message: &ToClient) -> bool {
        match frame::encode(message) {
            Ok(bytes) => self.queue(Out::Frame(bytes)),
            Err(_) => false,
        }
    }

    /// Queue a pack's archive, sent in chunks.
    pub fn send_pack(&self, id: &str, bytes: Arc<Vec<u8>>) -> bool {
        self.queue(Out::Pack(id.to_string(), bytes))
    }

    /// Send `Bye{reason}` after what is queued, then close.
    pub fn bye(&self, reason: &str) {
        if !self.queue(Out::Bye(reason.to_string())) {
            self.cut();
        }
    }

    /// Close at once (the reader sees the end).
    pub fn cut(&self) {
        let _ = self.stream.shutdown(Shutdown::Both);
    }

    fn queue(&self, out: Out) -> bool {
        match self.tx.try_send(out) {
            Ok(()) => true,
            Err(TrySendError::Full(_)) => {
                // Not reading: cut rather than hold its frames.
                self.cut();
                false
            }
            Err(TrySendError::Disconnected(_)) => false,
        }
    }
}

fn drain(mut out: &TcpStream, rx: &Receiver<Out>, transfers: &Transfers) {
    for item in rx {
        let ok = match item {
            Out::Frame(bytes) => out.write_all(&bytes).is_ok(),
            Out::Pack(id, bytes) => match transfers.begin(TRANSFER_WAIT) {
                Some(_place) => write_pack(out, &id, &bytes),
                None => {
                    let reason = format!(
                        "the host is sending packs to {} players already: join again in a minute",
                        transfers.cap
                    );
                    let _ = frame::write(&mut out, &ToClient::Bye { reason });
                    return;
                }
            },
            Out::Bye(reason) => {
                let _ = frame::write(&mut out, &ToClient::Bye { reason });
                return;
            }
        };
        if !ok {
            return;
        }
    }
}

/// The bytes of an archive one `PackChunk` carries: small, since each transfer holds
/// one chunk (and its encoded frame) while a slow reader takes it.
pub const PACK_CHUNK: usize = 64 * 1024;

fn write_pack(mut out: &TcpStream, id: &str, bytes: &[u8]) -> bool {
    let total = bytes.len() as u64;
    let chunk = PACK_CHUNK;
    let mut offset = 0usize;
    loop {
        let end = (offset + chunk).min(bytes.len());
        let sent = frame::write(
            &mut out,
            &ToClient::PackChunk {
                id: id.to_string(),
                total,
                offset: offset as u64,
                bytes: bytes[offset..end].to_vec(),
            },
        );
        if sent.is_err() {
            return false;
        }
        offset = end;
        if offset >= bytes.len() {
            return true;
        }
    }
}

/// How long a new connection is spared by default: a joiner reading the welcome,
/// answering the packs question and fetching a pack takes seconds, and is not cut for a
/// newcomer then.
pub const SETTLING: Duration = Duration::from_secs(10);

/// How long an address turned away because the host was full counts as coming back: its
/// next connection within this time goes before first-time connections still settling.
pub const RETURN_WINDOW: Duration = Duration::from_secs(30);

/// Addresses remembered as turned away (the newest), so the memory stays bounded under a
/// flood from ever new addresses.
pub const TURNED_AWAY_MAX: usize = 4_096;

/// The connection to close to make room, of those holding no seat and older than
/// `settling`: one that has not asked for packs before one that has; of those, from the
/// address holding the most; then the oldest. When every other connection holds a seat or
/// is still settling, a newcomer from an address turned away for fullness within
/// [`RETURN_WINDOW`] (`returning`) still gets the place of a settling first-time
/// connection that has not asked for packs (of the address holding the most, the newest):
/// a churn of connections from ever new addresses, each new, cannot keep out a joiner who
/// comes back. `None` (the newcomer is refused) otherwise: a burst of new connections
/// cannot push out a joiner who came a moment before it, and a connection that came back
/// or is fetching is never closed for a newcomer while it settles.
fn pick_victim(
    conns: &HashMap<u64, Entry>,
    now: Instant,
    settling: Duration,
    returning: bool,
) -> Option<u64> {
    let mut per: HashMap<IpAddr, usize> = HashMap::new();
    for e in conns.values().filter(|e| !e.seated) {
        *per.entry(e.ip).or_default() += 1;
    }
    let settled = conns
        .iter()
        .filter(|(_, e)| !e.seated && now.saturating_duration_since(e.since) >= settling)
        .max_by_key(|(_, e)| {
            (
                !e.fetching,
                per.get(&e.ip).copied().unwrap_or(0),
                std::cmp::Reverse(e.since),
            )
        })
        .map(|(id, _)| *id);
    if settled.is_some() || !returning {
        return settled;
    }
    conns
        .iter()
        .filter(|(_, e)| !e.seated && !e.fetching && !e.returning)
        .max_by_key(|(_, e)| (per.get(&e.ip).copied().unwrap_or(0), e.since))
        .map(|(id, _)| *id)
}

/// Addresses lately turned away because the host was full, the newest
/// [`TURNED_AWAY_MAX`].
#[derive(Default)]
struct TurnedAway {
    order: VecDeque<(IpAddr, Instant)>,
    at: HashMap<IpAddr, Instant>,
}

impl TurnedAway {
    fn note(&mut self, ip: IpAddr, now: Instant) {
        self.at.insert(ip, now);
        self.order.push_back((ip, now));
        while self.order.len() > TURNED_AWAY_MAX {
            if let Some((old, at)) = self.order.pop_front()
                && self.at.get(&old) == Some(&at)
            {
                self.at.remove(&old);
            }
        }
    }

    /// Whether `ip` was turned away within [`RETURN_WINDOW`].
    fn returning(&self, ip: IpAddr, now: Instant) -> bool {
        self.at
            .get(&ip)
            .is_some_and(|at| now.saturating_duration_since(*at) < RETURN_WINDOW)
    }

    /// `ip` is let in: its coming back is used up.
    fn forget(&mut self, ip: IpAddr) {
        self.at.remove(&ip);
    }
}

/// Every connection of the host: the register of those open, their writers' threads and
/// the pack transfers they share.
pub struct Connections {
    /// The connections open now, with the limits applied on admission.
    pub register: Register,
    /// The writers' threads (the host waits for them when it stops).
    writers: Arc<Live>,
    /// The pack transfers under way.
    transfers: Arc<Transfers>,
}

impl Connections {
    /// No connection yet; at most `max_transfers` pack transfers at once.
    #[must_use]
    pub fn new(max_transfers: usize) -> Connections {
        Connections {
            register: Register::default(),
            writers: Arc::new(Live::default()),
            transfers: Arc::new(Transfers::new(max_transfers)),
        }
    }

    /// Start the writer of connection `id`, and register it for closing.
    pub fn writer(&self, id: u64, stream: &TcpStream) -> std::io::Result<Writer> {
        let writer = Writer::start(id, stream, &self.writers, &self.transfers)?;
        self.register.set_writer(id, &writer);
        Ok(writer)
    }

    /// Connections open now.
    pub fn open(&self) -> usize {
        self.register.count.load(Ordering::SeqCst)
    }

    /// The host stops: no pack transfer starts or waits, and every connection is told
    /// `reason` and closed.
    pub fn close_all(&self, reason: &str) {
        self.transfers.close();
        self.register.close_all(reason);
    }

    /// Wait until every writer has sent its last frames, at most `wait`.
    pub fn drain(&self, wait: Duration) {
        self.writers.drain(wait);
    }
}

/// The host's open connections.
#[derive(Default)]
pub struct Register {
    inner: Mutex<Open>,
    /// Connections open now.
    pub count: AtomicUsize,
}

#[derive(Default)]
struct Open {
    conns: HashMap<u64, Entry>,
    turned_away: TurnedAway,
}

struct Entry {
    ip: IpAddr,
    since: Instant,
    seated: bool,
    /// It asked for the game's packs (a joiner on its way to a seat).
    fetching: bool,
    /// It came from an address turned away for fullness (see [`pick_victim`]).
    returning: bool,
    writer: Option<Writer>,
    stream: Arc<TcpStream>,
}

/// Why a new connection is turned away.
pub enum Refusal {
    /// Its address holds as many connections as one address may.
    Address(usize),
    /// Every connection holds a seat.
    Full,
}

/// The limits the register applies.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Most connections at once.
    pub total: usize,
    /// Most connections from one address.
    pub per_address: usize,
    /// How long a connection without a seat is spared before it may be closed to make
    /// room.
    pub settling: Duration,
}

impl Register {
    /// Admit a connection from `ip`: when the host is full, a connection that holds no
    /// seat is closed to make room ([`pick_victim`]).
    pub fn admit(
        &self,
        id: u64,
        ip: IpAddr,
        stream: &TcpStream,
        limits: Limits,
    ) -> Result<Option<IpAddr>, Refusal> {
        let stream = Arc::new(stream.try_clone().map_err(|_| Refusal::Full)?);
        let mut open = lock(&self.inner);
        let mine = open.conns.values().filter(|e| e.ip == ip).count();
        if mine >= limits.per_address {
            return Err(Refusal::Address(limits.per_address));
        }
        let now = Instant::now();
        let returning = open.turned_away.returning(ip, now);
        let mut evicted = None;
        if open.conns.len() >= limits.total {
            let Some(victim) = pick_victim(&open.conns, now, limits.settling, returning) else {
                open.turned_away.note(ip, now);
                return Err(Refusal::Full);
            };
            if let Some(e) = open.conns.remove(&victim) {
                match &e.writer {
                    Some(w) => w.bye(&format!(
                        "{HOST_FULL}: connections without a seat make room for joiners"
                    )),
                    None => {
                        let _ = e.stream.shutdown(Shutdown::Both);
                    }
                }
                // Turned away too: if it comes back, it goes before new connections.
                open.turned_away.note(e.ip, now);
                evicted = Some(e.ip);
            }
        }
        if returning {
            open.turned_away.forget(ip);
        }
        open.conns.insert(
            id,
            Entry {
                ip,
                since: now,
                seated: false,
                fetching: false,
                returning,
                writer: None,
                stream,
            },
        );
        self.count.store(open.conns.len(), Ordering::SeqCst);
        Ok(evicted)
    }

    /// The connection's writer, for closing it.
    pub fn set_writer(&self, id: u64, writer: &Writer) {
        if let Some(e) = lock(&self.inner).conns.get_mut(&id) {
            e.writer = Some(writer.clone());
        }
    }

    /// Whether the connection holds a seat (then it is not closed to make room).
    pub fn set_seated(&self, id: u64, seated: bool) {
        if let Some(e) = lock(&self.inner).conns.get_mut(&id) {
            e.seated = seated;
        }
    }

    /// The connection asked for the game's packs: it is making its way to a seat, and
    /// is closed to make room only when no idle connection is left.
    pub fn set_fetching(&self, id: u64) {
        if let Some(e) = lock(&self.inner).conns.get_mut(&id) {
            e.fetching = true;
        }
    }

    /// The connection closed.
    pub fn remove(&self, id: u64) {
        let mut open = lock(&self.inner);
        open.conns.remove(&id);
        self.count.store(open.conns.len(), Ordering::SeqCst);
    }

    /// Say `reason` to every connection and close it.
    pub fn close_all(&self, reason: &str) {
        let open = lock(&self.inner);
        for e in open.conns.values() {
            match &e.writer {
                Some(w) => w.bye(reason),
                None => {
                    let _ = e.stream.shutdown(Shutdown::Both);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A flood from ever new addresses keeps only the newest turned away in memory, and
    /// an address counts as coming back only within the window and until it is let in.
    #[test]
    fn turned_away_addresses_are_bounded_and_used_once() {
        let mut away = TurnedAway::default();
        let now = Instant::now();
        let ip = |i: u32| IpAddr::from(std::net::Ipv4Addr::from(0x7f00_0000 + i));
        for i in 0..10_000 {
            away.note(ip(i), now);
        }
        assert!(away.order.len() <= TURNED_AWAY_MAX && away.at.len() <= TURNED_AWAY_MAX);
        assert!(!away.returning(ip(0), now), "the oldest are forgotten");
        assert!(away.returning(ip(9_999), now));
        assert!(!away.returning(ip(9_999), now + RETURN_WINDOW));
        away.forget(ip(9_999));
        assert!(!away.returning(ip(9_999), now));
    }
}
