//! LAN play: a host that keeps the only true game state, clients that send intents and
//! see only what their seat may, and the host's packs synced to joiners.
//!
//! - [`frame`]: length-prefixed frames with a size cap and a per-frame deadline.
//! - [`protocol`]: the messages and the per-seat view ([`protocol::Seen`]).
//! - [`events`]: a move's events on the wire.
//! - [`host`]: the authoritative server (`tokensmith serve`, the client's Host).
//! - [`client`]: a connection to a host (`tokensmith join`, the client's Join).
//! - [`link`]: a connection on its own thread, for the desktop client.
//! - [`sync`]: which of the host's packs the joiner has, and the cache for the rest.
//! - [`discovery`]: finding hosts on the local network.

pub mod client;
pub mod discovery;
pub mod events;
pub mod frame;
pub mod host;
pub mod link;
pub mod protocol;
pub mod sync;

pub use client::{Client, ClientError, Update};
pub use host::{Content, GameResult, Host, HostConfig, HostEvent};
pub use protocol::{PackRef, Seen};

/// `text` cut to [`protocol::MAX_TEXT`] bytes (at a character boundary) with control
/// characters escaped: what a peer's names and reasons are shown as.
#[must_use]
pub fn clean(text: &str) -> String {
    let max = protocol::MAX_TEXT;
    let mut end = text.len().min(max);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    crate::rules::echo_within(&text[..end], max)
}

/// The seat numbered `n` (1 or 2), as messages and events number seats.
#[must_use]
pub fn seat_of(n: u8) -> Option<crate::rules::Seat> {
    crate::rules::Seat::from_number(i64::from(n))
}

/// The game port a host listens on unless told otherwise.
pub const GAME_PORT: u16 = 47_320;

/// Why a typed address names no host.
#[derive(Debug, thiserror::Error)]
pub enum AddressError {
    /// The part after the last `:` is not a port.
    #[error(
        "'{}': '{}' is not a port (a number from 1 to 65535; games use {GAME_PORT} unless the host chose another)",
        crate::rules::echo(text),
        crate::rules::echo(port)
    )]
    NotAPort {
        /// What was typed.
        text: String,
        /// The part that should be a port.
        port: String,
    },
    /// Only a port.
    #[error("'{}' names no host: type IP:PORT or NAME:PORT, say 192.168.1.20:{GAME_PORT}", crate::rules::echo(.0))]
    NoHost(String),
    /// The name was not found (or found no address).
    #[error(
        "could not find host '{}': check the name, or type the host's IP address, say 192.168.1.20:{GAME_PORT} (`tokensmith hosts` lists games on this network)",
        crate::rules::echo(name)
    )]
    NotFound {
        /// The name.
        name: String,
        /// The lookup's error, if it failed rather than finding nothing.
        #[source]
        source: Option<std::io::Error>,
    },
}

/// The address `text` names: `IP:PORT`, `NAME:PORT`, or an IP or name (which get
/// [`GAME_PORT`]). Names are looked up (`ToSocketAddrs`); an IPv4 answer is preferred.
pub fn address(text: &str) -> Result<std::net::SocketAddr, AddressError> {
    use std::net::ToSocketAddrs as _;
    let text = text.trim();
    if let Ok(a) = text.parse::<std::net::SocketAddr>() {
        return Ok(a);
    }
    if let Ok(ip) = text.parse::<std::net::IpAddr>() {
        return Ok(std::net::SocketAddr::new(ip, GAME_PORT));
    }
    let (name, port) = match text.rsplit_once(':') {
        Some((name, port)) => {
            let port = port.parse::<u16>().map_err(|_| AddressError::NotAPort {
                text: text.to_string(),
                port: port.to_string(),
            })?;
            (name, port)
        }
        None => (text, GAME_PORT),
    };
    let name = name.trim_start_matches('[').trim_end_matches(']');
    if name.is_empty() {
        return Err(AddressError::NoHost(text.to_string()));
    }
    let not_found = |source| AddressError::NotFound {
        name: name.to_string(),
        source,
    };
    let found: Vec<std::net::SocketAddr> = (name, port)
        .to_socket_addrs()
        .map_err(|e| not_found(Some(e)))?
        .collect();
    found
        .iter()
        .find(|a| a.is_ipv4())
        .or_else(|| found.first())
        .copied()
        .ok_or_else(|| not_found(None))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_names_ports_and_unknown_names() {
        assert_eq!(
            address("127.0.0.1:9").map(|a| a.port()).ok(),
            Some(9),
            "IP:PORT"
        );
        assert_eq!(address("127.0.0.1").map(|a| a.port()).ok(), Some(GAME_PORT));
        let local = address("localhost:7").expect("localhost resolves");
        assert!(local.ip().is_loopback() && local.port() == 7);
        let e = address("no-such-host.invalid")
            .expect_err("unknown")
            .to_string();
        assert!(
            e.starts_with("could not find host 'no-such-host.invalid'"),
            "{e}"
        );
        assert!(!e.contains("not an address"), "{e}");
        let e = address("localhost:http").expect_err("bad port").to_string();
        assert!(e.contains("'http' is not a port"), "{e}");
    }
}

/// This machine's addresses another machine on the network would reach it at, as far as
/// the routing table tells (a socket "connected" to a far address sends nothing and
/// shows the local address it would use): the private-network routes first, then the
/// default route. Empty when the machine has no route off itself.
#[must_use]
pub fn network_addresses() -> Vec<std::net::IpAddr> {
    let mut out = Vec::new();
    for far in [
        "10.255.255.254:9",
        "172.31.255.254:9",
        "192.168.255.254:9",
        "192.0.2.1:9",
    ] {
        let Ok(socket) = std::net::UdpSocket::bind("0.0.0.0:0") else {
            continue;
        };
        if socket.connect(far).is_err() {
            continue;
        }
        if let Ok(local) = socket.local_addr() {
            let ip = local.ip();
            if !ip.is_loopback() && !ip.is_unspecified() && !out.contains(&ip) {
                out.push(ip);
            }
        }
    }
    out
}

#[cfg(test)]
mod address_tests {
    #[test]
    fn network_addresses_are_never_this_machine_alone() {
        for ip in super::network_addresses() {
            assert!(!ip.is_loopback() && !ip.is_unspecified(), "{ip}");
        }
    }
}
