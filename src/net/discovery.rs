//! Finding hosts on the local network by UDP broadcast: a joiner broadcasts a probe to
//! the discovery port, and each host listening there answers it directly with what it
//! offers. Joining by address never needs this. Datagrams are small, malformed ones are
//! ignored. A host answers probes only: a datagram is a probe when it decodes as one with
//! no byte left over, so an answer (which starts like a probe) is never taken for one and
//! two hosts cannot be made to answer each other. It answers at most
//! [`MAX_ANSWERS_PER_SENDER`] probes a second to one sender and [`MAX_ANSWERS`] in all, so
//! one flooding sender cannot hide it from the others. Half of that is kept for senders
//! that probed within the last [`REPEAT_WINDOW`] too: a searcher probes several times
//! while it waits, so a flood of probes forged from ever new addresses (one each) spends
//! only the other half and cannot hide the host from a real searcher.
//!
//! [`Beacon::start_at`] answers from the address the host listens on, so a searcher lists
//! only an address the host accepts.

use std::net::{IpAddr, Ipv4Addr, SocketAddr, SocketAddrV4, UdpSocket};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::protocol::{MAGIC, PROTOCOL, clean};

/// The UDP port hosts listen on for probes.
pub const DISCOVERY_PORT: u16 = 47_319;

/// Largest datagram read or sent, in bytes.
pub const MAX_DATAGRAM: usize = 1_200;

/// Most probes a host answers in one second, all senders together.
pub const MAX_ANSWERS: usize = 200;

/// Most probes a host answers in one second to one sender (address).
pub const MAX_ANSWERS_PER_SENDER: usize = 4;

/// Most senders counted in one second (more: the rest wait for the next second).
const MAX_SENDERS: usize = 4_096;

/// A sender that probed within this long before probes again as a repeat prober.
pub const REPEAT_WINDOW: Duration = Duration::from_secs(3);

/// Senders remembered as recent probers (the newest; older ones are forgotten first).
const REMEMBERED: usize = 65_536;

/// How often a searcher probes again while it waits for answers.
pub const PROBE_AGAIN: Duration = Duration::from_millis(100);

/// Whether `datagram` is a probe of this protocol: exactly a `Probe`, nothing after it.
fn is_probe(datagram: &[u8]) -> bool {
    matches!(
        postcard::take_from_bytes::<Probe>(datagram),
        Ok((probe, rest)) if rest.is_empty() && probe.magic == MAGIC && probe.protocol == PROTOCOL
    )
}

/// The answers given in the current second, per sender and in all, and the senders that
/// probed lately.
#[derive(Default)]
struct AnswerQuota {
    second: Option<Instant>,
    /// Answers this second to first-time and to repeat probers.
    first: usize,
    repeat: usize,
    per: std::collections::HashMap<IpAddr, usize>,
    /// When each remembered sender last probed, and the order they came in (oldest
    /// first, with the time each was noted, so a sender seen again is not forgotten by
    /// its older entry).
    seen: std::collections::HashMap<IpAddr, Instant>,
    order: std::collections::VecDeque<(IpAddr, Instant)>,
}

impl AnswerQuota {
    /// Whether a probe from `from` may be answered now (and count it).
    fn take(&mut self, from: IpAddr, now: Instant) -> bool {
        if self
            .second
            .is_none_or(|s| now.duration_since(s) >= Duration::from_secs(1))
        {
            self.second = Some(now);
            self.first = 0;
            self.repeat = 0;
            self.per.clear();
        }
        let repeat = self
            .seen
            .get(&from)
            .is_some_and(|t| now.duration_since(*t) <= REPEAT_WINDOW);
        self.remember(from, now);
        let (spent, share) = if repeat {
            (self.repeat, MAX_ANSWERS - MAX_ANSWERS / 2)
        } else {
            (self.first, MAX_ANSWERS / 2)
        };
        if spent >= share {
            return false;
        }
        if !self.per.contains_key(&from) && self.per.len() >= MAX_SENDERS {
            return false;
        }
        let n = self.per.entry(from).or_default();
        if *n >= MAX_ANSWERS_PER_SENDER {
            return false;
        }
        *n += 1;
        if repeat {
            self.repeat += 1;
        } else {
            self.first += 1;
        }
        true
    }

    /// Note that `from` probed at `now`, forgetting the oldest sender past [`REMEMBERED`].
    fn remember(&mut self, from: IpAddr, now: Instant) {
        self.seen.insert(from, now);
        self.order.push_back((from, now));
        while self.order.len() > REMEMBERED {
            if let Some((old, at)) = self.order.pop_front()
                && self.seen.get(&old) == Some(&at)
            {
                self.seen.remove(&old);
            }
        }
    }
}

#[derive(Debug, Serialize, Deserialize)]
struct Probe {
    magic: String,
    protocol: u32,
}

/// What a host says of itself.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Announce {
    /// The host's name.
    pub name: String,
    /// Its game port (TCP).
    pub port: u16,
    /// Its packs: id and version.
    pub packs: Vec<(String, String)>,
    /// Seats a joiner could take now.
    pub seats_free: u8,
}

impl Announce {
    /// The packs as `id version, …`.
    #[must_use]
    pub fn packs_text(&self) -> String {
        let packs: Vec<String> = self
            .packs
            .iter()
            .map(|(id, v)| format!("{id} {v}"))
            .collect();
        packs.join(", ")
    }
}

#[derive(Debug, Serialize, Deserialize)]
struct Answer {
    magic: String,
    protocol: u32,
    announce: Announce,
}

/// A host found on the network.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Found {
    /// Where to join it.
    pub addr: SocketAddr,
    /// What it offers.
    pub announce: Announce,
}

/// A host's answering of probes; stops when dropped.
pub struct Beacon {
    stop: Arc<AtomicBool>,
    port: u16,
}

impl Beacon {
    /// Answer probes on `port` (0: any free port, for tests) with `announce()`, for a
    /// host listening on every address.
    pub fn start(
        port: u16,
        announce: impl Fn() -> Announce + Send + 'static,
    ) -> std::io::Result<Beacon> {
        Beacon::start_at(port, IpAddr::V4(Ipv4Addr::UNSPECIFIED), announce)
    }

    /// [`Beacon::start`] for a host listening on `listen` only. A searcher joins the
    /// address an answer comes from, so answers are sent from `listen` itself: a host on
    /// 127.0.0.1 is found on this machine as 127.0.0.1 (and never as another interface's
    /// address, which it does not accept), one on a LAN address as that address. A host
    /// on one IPv6 address only cannot be found (discovery speaks IPv4): an error says so.
    pub fn start_at(
        port: u16,
        listen: IpAddr,
        announce: impl Fn() -> Announce + Send + 'static,
    ) -> std::io::Result<Beacon> {
        let socket = UdpSocket::bind(SocketAddrV4::new(Ipv4Addr::UNSPECIFIED, port))?;
        let reply = match listen {
            ip if ip.is_unspecified() => socket.try_clone()?,
            IpAddr::V4(ip) => UdpSocket::bind(SocketAddrV4::new(ip, 0))?,
            IpAddr::V6(ip) => match ip.to_ipv4_mapped() {
                Some(v4) => UdpSocket::bind(SocketAddrV4::new(v4, 0))?,
                None => {
                    return Err(std::io::Error::other(format!(
                        "the host listens on the IPv6 address {ip} only, and discovery speaks \
                         IPv4"
                    )));
                }
            },
        };
        let port = socket.local_addr()?.port();
        socket.set_read_timeout(Some(Duration::from_millis(300)))?;
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        crate::script::threads::spawn_light("lan-beacon", move || {
            let mut buf = [0u8; MAX_DATAGRAM];
            let mut budget = AnswerQuota::default();
            while !flag.load(Ordering::SeqCst) {
                let Ok((n, from)) = socket.recv_from(&mut buf) else {
                    continue;
                };
                if !is_probe(&buf[..n]) || !budget.take(from.ip(), Instant::now()) {
                    continue;
                }
                let mut announce = announce();
                // Keep the answer inside one datagram.
                while announce.packs.len() > 1
                    && postcard::to_stdvec(&announce).map_or(0, |b| b.len()) > MAX_DATAGRAM - 64
                {
                    announce.packs.pop();
                }
                let answer = Answer {
                    magic: MAGIC.into(),
                    protocol: PROTOCOL,
                    announce,
                };
                if let Ok(bytes) = postcard::to_stdvec(&answer)
                    && bytes.len() <= MAX_DATAGRAM
                {
                    // A reply socket bound to a loopback address cannot reach
                    // another machine: that prober is not answered.
                    let _ = reply.send_to(&bytes, from);
                }
            }
        })?;
        Ok(Beacon { stop, port })
    }

    /// The port it answers on.
    #[must_use]
    pub fn port(&self) -> u16 {
        self.port
    }
}

impl Drop for Beacon {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
    }
}

/// Probe `targets` (the broadcast address and this machine, by default: see
/// [`default_targets`]) and collect the answers that arrive within `wait`.
pub fn discover(targets: &[SocketAddr], wait: Duration) -> std::io::Result<Vec<Found>> {
    let socket = UdpSocket::bind(SocketAddrV4::new(Ipv4Addr::UNSPECIFIED, 0))?;
    socket.set_broadcast(true)?;
    let probe = postcard::to_stdvec(&Probe {
        magic: MAGIC.into(),
        protocol: PROTOCOL,
    })
    .map_err(std::io::Error::other)?;
    let send = || {
        for target in targets {
            // An unreachable target (no broadcast route) is skipped.
            let _ = socket.send_to(&probe, target);
        }
    };
    send();
    // Probing again while waiting makes this a repeat prober, whom a host answers from
    // a share no flood of one-off forged probes can spend.
    let mut again = Instant::now() + PROBE_AGAIN;
    let until = Instant::now() + wait;
    let mut found: Vec<Found> = Vec::new();
    let mut buf = [0u8; MAX_DATAGRAM];
    loop {
        let now = Instant::now();
        let left = until.saturating_duration_since(now);
        if left.is_zero() || found.len() >= 64 {
            break;
        }
        if now >= again {
            send();
            again = now + PROBE_AGAIN;
        }
        socket.set_read_timeout(Some(
            left.min(again.saturating_duration_since(now))
                .max(Duration::from_millis(1)),
        ))?;
        let Ok((n, from)) = socket.recv_from(&mut buf) else {
            continue;
        };
        let Ok(answer) = postcard::from_bytes::<Answer>(&buf[..n]) else {
            continue;
        };
        if answer.magic != MAGIC || answer.protocol != PROTOCOL {
            continue;
        }
        let mut announce = answer.announce;
        announce.name = clean(&announce.name);
        announce.packs.truncate(64);
        for (id, version) in &mut announce.packs {
            *id = clean(id);
            *version = clean(version);
        }
        let addr = SocketAddr::new(from.ip(), announce.port);
        if !found.iter().any(|f| f.addr == addr) {
            found.push(Found { addr, announce });
        }
    }
    Ok(one_per_host(found, is_this_machine))
}

/// Whether `ip` is one of this machine's addresses (a socket can be bound to it).
fn is_this_machine(ip: std::net::IpAddr) -> bool {
    ip.is_loopback() || UdpSocket::bind(SocketAddr::new(ip, 0)).is_ok()
}

/// One entry per host: a host on this machine answers both the probe to 127.0.0.1 and
/// the broadcast (from its network address). Answers from this machine's addresses with
/// the same game port are one host (one port, one listener); the network address is
/// kept, since the other players can join it too.
#[must_use]
pub fn one_per_host(found: Vec<Found>, local: impl Fn(std::net::IpAddr) -> bool) -> Vec<Found> {
    let mut out: Vec<Found> = Vec::with_capacity(found.len());
    for f in found {
        let same = out
            .iter_mut()
            .find(|o| o.addr.port() == f.addr.port() && local(o.addr.ip()) && local(f.addr.ip()));
        match same {
            Some(o) => {
                if o.addr.ip().is_loopback() && !f.addr.ip().is_loopback() {
                    *o = f;
                }
            }
            None => out.push(f),
        }
    }
    out
}

/// Where a joiner probes by default: the local broadcast address and this machine.
#[must_use]
pub fn default_targets(port: u16) -> Vec<SocketAddr> {
    vec![
        SocketAddr::from((Ipv4Addr::BROADCAST, port)),
        SocketAddr::from((Ipv4Addr::LOCALHOST, port)),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(addr: &str, name: &str) -> Found {
        Found {
            addr: addr.parse().unwrap_or_else(|e| panic!("{e}")),
            announce: Announce {
                name: name.into(),
                port: 47_320,
                packs: Vec::new(),
                seats_free: 1,
            },
        }
    }

    #[test]
    fn a_host_on_this_machine_is_listed_once_by_its_network_address() {
        let local = |ip: std::net::IpAddr| {
            ip.is_loopback() || ip == "192.168.1.20".parse::<std::net::IpAddr>().unwrap_or(ip)
        };
        let list = one_per_host(
            vec![
                found("127.0.0.1:47320", "ann on desk"),
                found("192.168.1.20:47320", "ann on desk"),
                found("192.168.1.30:47320", "bob on laptop"),
                found("192.168.1.20:47321", "ann's second game"),
            ],
            local,
        );
        let addrs: Vec<String> = list.iter().map(|f| f.addr.to_string()).collect();
        assert_eq!(
            addrs,
            [
                "192.168.1.20:47320",
                "192.168.1.30:47320",
                "192.168.1.20:47321"
            ]
        );
        // Another machine's host on the same port is another host.
        let two = one_per_host(
            vec![
                found("192.168.1.30:47320", "a"),
                found("192.168.1.31:47320", "b"),
            ],
            local,
        );
        assert_eq!(two.len(), 2);
    }
}
