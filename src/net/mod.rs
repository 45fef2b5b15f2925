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

/// The game port a host listens on unless told otherwise.
pub const GAME_PORT: u16 = 47_320;

/// The address `text` names: `IP:PORT`, `NAME:PORT`, or an IP or name (which get
/// [`GAME_PORT`]).
pub fn address(text: &str) -> Result<std::net::SocketAddr, String> {
    use std::net::ToSocketAddrs as _;
    let text = text.trim();
    if let Ok(a) = text.parse::<std::net::SocketAddr>() {
        return Ok(a);
    }
    if let Ok(ip) = text.parse::<std::net::IpAddr>() {
        return Ok(std::net::SocketAddr::new(ip, GAME_PORT));
    }
    let with_port = if text.contains(':') {
        text.to_string()
    } else {
        format!("{text}:{GAME_PORT}")
    };
    with_port
        .to_socket_addrs()
        .ok()
        .and_then(|mut a| a.next())
        .ok_or_else(|| {
            format!(
                "'{}' is not an address: type IP:PORT, say 192.168.1.20:{GAME_PORT}",
                crate::rules::echo(text)
            )
        })
}
