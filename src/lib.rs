//! Tokensmith: a rules engine, content packs and tools for token-placement duels.
//!
//! Layers, each depending only on the ones above it in this list:
//! [`rules`] (the pure core) → [`content`] (YAML packs into a catalog) →
//! [`scenario`] (rules tests as data) → [`cli`], the command line at the edge.

pub mod ai;
#[cfg(feature = "client")]
pub mod app;
pub mod cli;
pub mod content;
pub mod fsutil;
pub mod profile;
pub mod reload;
pub mod rules;
pub mod scenario;
pub mod script;
