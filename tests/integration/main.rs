//! The integration tests, one crate (built once) with a module per area.
//!
//! - `adversarial`: hostile packs, scripts and files (`tests/adversarial/`) are refused
//!   cleanly and quickly, in the library, the command line, simulation workers and the
//!   client's threads; runs give byte-identical events.
//! - `scenarios`: the scenario runner itself (each scenario file is its own test in
//!   `tests/scenarios.rs`).
//! - `packs`: every shipped pack loads with zero diagnostics.
//! - `diagnostics`: each kind of bad input is reported at its exact place.
//! - `docs`: every command line the README and docs show is one the binary accepts.
//! - `index`: pack indexes end to end (publish, search, install with requirements,
//!   update, yank) and the attacks on what an index holds.
//! - `installed`: the binary alone, run from an empty folder with its own home, plays
//!   from the base content shipped inside it; the client opens with play enabled.
//! - `packsets`: lock files shared and synced exactly, hostile lock files, `pack why`,
//!   `pack tree` and `pack orphans`.
//! - `packsets_sync`: "get what this needs": a replay's packs fetched by content hash into
//!   a temporary set or kept, and hostile pack lists refused with nothing changed.
//! - `index_trust`: what an index install promises, attacked: archives that are not their
//!   signed entry, raced and killed installs, wide plans, links, old, frozen and mixed
//!   listings, unsigned yanks; downgrade, rollback and key moves.
//! - `lua_docs`: every Lua example in docs/lua.md runs and does what the page says.
//! - `lan_host`: the LAN host attacked for exhaustion and concurrency (abandoned games,
//!   connection slots, allocation, `--games`, a failing game, discovery floods, the AI's
//!   deck), each attack followed by an honest game.
//! - `layers`: tidy checks: no module imports from a layer above it; the codemap names
//!   only files that exist.
//! - `ai`: hidden information, determinizations, reproducible simulation, level ladder.
//! - `observe`: what one seat may see: positions with nothing hidden, a history followed
//!   one state at a time.
//! - `balance_science`: sequential paired tests that stop when the verdict is known.
//! - `balance_screen`: the client's Balance screen (judge, tune, live chart, Stop).
//! - `balance_race`: variants raced on shared control games and ranked; the variants
//!   file refused at its place when bad or hostile.
//! - `report`: `--report FILE.html` of balance and simulate: every chart drawn in
//!   headless Chromium, hostile names shown as text.
//! - `ai_scripts`: the AI against hostile scripts: a script budget per decision, runaway
//!   cards remembered per game (the same report for any thread count).
//! - `cluster`: `simulate plan`'s job files: its shards merge into the one-machine report,
//!   a real single-node Slurm runs its array job and dependent merge, the Kubernetes
//!   manifests pass Kubernetes' published schema.
//! - `cli`: the command line's output formats and exit codes.
//! - `client`: the desktop client driven through its accessibility labels.
//! - `decks`: the deck editor (drag and drop, click-to-place, refusals), saved and random
//!   decks in games, settings kept in the profile.
//! - `frames`: the client's frame thread never waits: the hover preview worked out on a
//!   worker (a script that runs to its limit does not stall the frames), the Mods
//!   screen's packs read again on a worker after a change.
//! - `newcomer`: the client's dead ends a new user hit: a sandbox kept across the menu,
//!   reload errors and replays shown in the sandbox, refused moves said on hover, steady
//!   Mods rows, LAN hosts listed once.
//! - `reload`: live reload of packs, and the sandbox keeping its game across one.
//! - `profile`: saved decks and settings: fixture formats, migration, set-aside files,
//!   atomic saves (a saving process killed half-way leaves one whole deck).
//! - `timeline`: the game timeline: moves, undo/redo, carry-over to changed content.
//! - `remap`: a game carried over to changed content.
//! - `replay`: saved games re-run under the same and changed content, hostile replay files.
//! - `properties`: random legal games keep the engine's invariants.
//! - `hostile_packs`: crafted archives (ZIP64, local headers, names twice, Unicode and
//!   Windows names, depth, long ids) and hostile profiles (links, concurrent commands).
//! - `scripts`: the Lua sandbox, its limits, script errors, determinism and threads.
//! - `script_state`: script state between moves (frozen load-time tables, upvalues put
//!   back within the move's budget), failures kept to their pack, the load's budget.

mod adversarial;
mod ai;
mod ai_scripts;
mod balance_race;
mod balance_science;
#[cfg(feature = "client")]
mod balance_screen;
mod cli;
#[cfg(feature = "client")]
mod client;
mod cluster;
#[cfg(feature = "client")]
mod decks;
mod diagnostics;
mod docs;
mod editor;
#[cfg(feature = "client")]
mod frames;
mod hostile_packs;
mod index;
mod index_trust;
mod installed;
mod lan;
mod lan_host;
mod layers;
mod lua_docs;
#[cfg(feature = "client")]
mod newcomer;
mod observe;
mod pack_life;
mod packs;
mod packsets;
mod packsets_sync;
mod profile;
mod properties;
mod reload;
mod remap;
mod replay;
mod replays;
mod report;
mod scenarios;
mod script_state;
mod scripts;
mod support;
mod timeline;
