//! Tokensmith: a rules engine, content packs and tools for token-placement duels.
//!
//! Layers, each using only the ones before it (ARCHITECTURE.md; a test enforces it):
//! [`rules`] (the pure core) → [`fsutil`] (bounded file reads, atomic writes),
//! [`timeline`] (a game's moves, undo and redo) and [`observe`] (what one seat may see)
//! → [`content`] (YAML packs into a catalog) → [`script`] (the Lua host) → [`scenario`],
//! [`ai`], [`reload`], [`profile`] and [`packs`] (one layer, none using another) → [`net`]
//! (LAN play) → `app` (the desktop client, with the default-on `client` feature) →
//! [`cli`], the command line.

#![deny(unsafe_code)]

pub mod ai;
#[cfg(feature = "client")]
pub mod app;
pub mod cli;
pub mod content;
pub mod fsutil;
pub mod index;
pub mod net;
pub mod observe;
pub mod packs;
pub mod profile;
pub mod reload;
pub mod replay;
pub mod rules;
pub mod scenario;
pub mod script;
pub mod timeline;
