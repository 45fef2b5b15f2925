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
