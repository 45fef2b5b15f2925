//! The AI: agents that choose moves by simulating them through the real engine, so any
//! card — built-in or scripted — is understood without AI code of its own; and balance
//! simulation of AI-versus-AI games.
//!
//! Levels, weakest first: `random`, `easy`, `greedy` (the reference: the original game's
//! one-ply income-swing AI), `normal` (two plies with a generic evaluation) and `hard`
//! (information-set MCTS). Every agent sees only an [`Observation`]: never the opponent's
//! hidden stack order unless `omniscient` is set.
//!
//! Must not: read files, touch the UI, or special-case any ability or token type.

mod agents;
pub mod decks;
mod eval;
mod mcts;
pub mod observe;
pub mod simulate;

use std::time::Duration;

use rand::SeedableRng;
use rand_pcg::Pcg32;

pub use agents::{EasyAgent, GreedyAgent, NormalAgent, RandomAgent};
pub use eval::evaluate;
pub use mcts::{Budget, HardAgent};
pub use observe::{Observation, PublicPlay};

use crate::rules::{Catalog, Engine, Hooks, Move, NoHooks};
use crate::script::ScriptHost;

/// A move with what an agent thinks of it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rated {
    /// The move.
    pub mv: Move,
    /// Its value for the mover (each agent's own scale: income swing, evaluation, or
    /// mean reward in [0, 1] for `hard`).
    pub value: f64,
    /// Search visits (`hard` only; 0 otherwise).
    pub visits: u32,
}

/// A player.
pub trait Agent {
    /// The move to play, or `None` when there is none.
    fn choose(&mut self, engine: &Brain<'_>, obs: &Observation) -> Option<Move>;

    /// Every move the agent considered, with its value (and visits): the sandbox hint.
    fn rate(&mut self, engine: &Brain<'_>, obs: &Observation) -> Vec<Rated>;
}

/// The `k` best moves by an agent's own measure (visits first for `hard`, then value).
pub fn top_moves(
    agent: &mut dyn Agent,
    engine: &Brain<'_>,
    obs: &Observation,
    k: usize,
) -> Vec<Rated> {
    let mut rated = agent.rate(engine, obs);
    rated.sort_by(|a, b| b.visits.cmp(&a.visits).then(b.value.total_cmp(&a.value)));
    rated.truncate(k);
    rated
}

/// The AI levels.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, clap::ValueEnum)]
pub enum Level {
    /// A uniformly random legal move.
    Random,
    /// Greedy's ranking with a rank-weighted random pick.
    Easy,
    /// The best immediate income swing (the reference).
    Greedy,
    /// Looks at the opponent's best reply.
    Normal,
    /// Monte Carlo tree search.
    Hard,
}

impl Level {
    /// Every level, weakest first.
    pub const ALL: [Level; 5] = [
        Level::Random,
        Level::Easy,
        Level::Greedy,
        Level::Normal,
        Level::Hard,
    ];

    /// The level's name.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Level::Random => "random",
            Level::Easy => "easy",
            Level::Greedy => "greedy",
            Level::Normal => "normal",
            Level::Hard => "hard",
        }
    }
}

/// How `hard` thinks, and whether agents may see hidden cards.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    /// `hard`'s budget per move.
    pub budget: Budget,
    /// Let agents see the opponent's stacks (tests and measurements only).
    pub omniscient: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            budget: Budget::Time(Duration::from_secs(1)),
            omniscient: false,
        }
    }
}

/// An agent of `level` with its own generator.
#[must_use]
pub fn agent(level: Level, seed: u64, options: Options) -> Box<dyn Agent> {
    let rng = Pcg32::seed_from_u64(seed);
    match level {
        Level::Random => Box::new(RandomAgent { rng }),
        Level::Easy => Box::new(EasyAgent { rng, k: 2.0 }),
        Level::Greedy => Box::new(GreedyAgent { rng }),
        Level::Normal => Box::new(NormalAgent { rng }),
        Level::Hard => Box::new(HardAgent {
            rng,
            budget: options.budget,
            exploration: 0.15,
        }),
    }
}

/// What the AI thinks with: the engine it simulates moves through, and the packs' own
/// heuristics (`ai.lua`), which are an AI concern the engine never calls. Dereferences to
/// the [`Engine`].
pub struct Brain<'a> {
    engine: Engine<'a>,
    host: Option<&'a ScriptHost>,
}

impl<'a> std::ops::Deref for Brain<'a> {
    type Target = Engine<'a>;

    fn deref(&self) -> &Engine<'a> {
        &self.engine
    }
}

impl Brain<'_> {
    /// The engine alone.
    #[must_use]
    pub fn engine(&self) -> &Engine<'_> {
        &self.engine
    }

    /// What the packs' `ai.lua` heuristics think of `state` for `seat`: nothing when no
    /// pack has one, and nothing when one fails (a failing heuristic must not stop the AI).
    #[must_use]
    pub fn heuristics(&self, state: &crate::rules::GameState, seat: crate::rules::Seat) -> f64 {
        let Some(host) = self.host else { return 0.0 };
        if !self
            .engine
            .catalog
            .packs()
            .iter()
            .any(|p| p.ai_script.is_some())
        {
            return 0.0;
        }
        let view = crate::rules::GameView {
            state,
            catalog: self.engine.catalog,
        };
        host.heuristics(&view, seat).unwrap_or(0.0)
    }
}

/// The scripts of a catalog on one thread: a [`ScriptHost`] when the catalog has scripts
/// (a Lua state cannot be shared between threads), nothing otherwise.
pub struct Scripts {
    host: Option<ScriptHost>,
}

impl Scripts {
    /// The hooks the engine calls.
    #[must_use]
    pub fn hooks(&self) -> &dyn Hooks {
        match &self.host {
            Some(host) => host,
            None => &NoHooks,
        }
    }

    /// An engine over `catalog` with these scripts, and their heuristics.
    #[must_use]
    pub fn brain<'a>(&'a self, catalog: &'a Catalog) -> Brain<'a> {
        Brain {
            engine: Engine::new(catalog, self.hooks()),
            host: self.host.as_ref(),
        }
    }
}

/// The scripts of `catalog` for the calling thread.
#[must_use]
pub fn hooks_for(catalog: &Catalog) -> Scripts {
    // The catalog's scripts compiled when it was loaded, so this only fails if a script
    // file changed on disk since; moves that need it are then refused.
    let host = if catalog.scripts().is_empty() {
        None
    } else {
        ScriptHost::new(catalog).ok()
    };
    Scripts { host }
}
