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
pub mod balance;
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
    /// Per card, with scripts loaded: its scripts ran out of their budget in a simulated
    /// play of this brain's (or of a brain sharing the list: a search's other tree), so
    /// look-ahead refuses it at once from then on.
    spent: Spent,
}

/// Per card, the error its scripts gave when they ran out of budget in a look-ahead:
/// shared by the brains of a thread over one catalog, and by a search's trees on other
/// threads.
pub type Spent = std::sync::Arc<Vec<std::sync::OnceLock<crate::rules::HookError>>>;

impl<'a> std::ops::Deref for Brain<'a> {
    type Target = Engine<'a>;

    fn deref(&self) -> &Engine<'a> {
        &self.engine
    }
}

impl Brain<'_> {
    /// Play `mv` for look-ahead, as [`Engine::play_quiet`] does, except that a card whose
    /// scripts once ran out of their budget (instructions, time, memory, depth or events)
    /// in a look-ahead on this thread over this catalog is refused at once afterwards,
    /// with the same error, without running them: a runaway script costs one budget per
    /// thread, not one per simulated play. The real game never goes through this: it
    /// plays every move with the engine.
    #[inline]
    pub fn play_quiet(
        &self,
        state: &mut crate::rules::GameState,
        mv: crate::rules::Move,
    ) -> Result<(), crate::rules::MoveError> {
        if self.spent.is_empty() {
            return self.engine.play_quiet(state, mv);
        }
        let card = self.engine.card_played(state, mv).ok();
        let slot = card.and_then(|c| self.spent.get(c.index()));
        if let Some(e) = slot.and_then(std::sync::OnceLock::get) {
            return Err(crate::rules::MoveError::Script(e.clone()));
        }
        let result = self.engine.play_quiet(state, mv);
        if let (Err(crate::rules::MoveError::Script(e)), Some(slot)) = (&result, slot)
            && e.kind == crate::rules::HookErrorKind::Limit
        {
            let _ = slot.set(e.clone());
        }
        result
    }

    /// The list of cards whose scripts ran out of budget, to share with another brain
    /// of the same search ([`Scripts::brain_sharing`]).
    #[must_use]
    pub fn spent(&self) -> Spent {
        std::sync::Arc::clone(&self.spent)
    }

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
    host: Option<std::rc::Rc<ScriptHost>>,
    spent: Spent,
}

impl Scripts {
    /// The hooks the engine calls.
    #[must_use]
    pub fn hooks(&self) -> &dyn Hooks {
        match &self.host {
            Some(host) => &**host,
            None => &NoHooks,
        }
    }

    /// An engine over `catalog` with these scripts, and their heuristics.
    #[must_use]
    pub fn brain<'a>(&'a self, catalog: &'a Catalog) -> Brain<'a> {
        self.brain_sharing(catalog, &self.spent)
    }

    /// [`Scripts::brain`] remembering runaway cards in `spent` (another brain's list).
    #[must_use]
    pub fn brain_sharing<'a>(&'a self, catalog: &'a Catalog, spent: &Spent) -> Brain<'a> {
        let spent = if self.host.is_some() && spent.len() == catalog.cards().len() {
            std::sync::Arc::clone(spent)
        } else {
            std::sync::Arc::new(Vec::new())
        };
        Brain {
            engine: Engine::new(catalog, self.hooks()),
            host: self.host.as_deref(),
            spent,
        }
    }
}

/// Script hosts this thread made lately, by catalog stamp: a host is reused for the same
/// catalog (each move starts from the scripts' loaded state, so what ran before leaves
/// nothing behind). Two are kept: the catalog in play and the one before a reload.
const KEPT_HOSTS: usize = 2;

thread_local! {
    static HOSTS: std::cell::RefCell<Vec<(u64, std::rc::Rc<ScriptHost>, Spent)>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// The scripts of `catalog` for the calling thread: made once per thread and catalog,
/// then shared (starting a Lua state and compiling every script costs about a
/// millisecond, far more than a game of built-in cards).
#[must_use]
pub fn hooks_for(catalog: &Catalog) -> Scripts {
    let none = || Scripts {
        host: None,
        spent: std::sync::Arc::new(Vec::new()),
    };
    if catalog.scripts().is_empty() {
        return none();
    }
    let stamp = catalog.stamp();
    let cached = HOSTS.with(|h| {
        h.borrow()
            .iter()
            .find(|(s, _, _)| *s == stamp)
            .map(|(_, host, spent)| (std::rc::Rc::clone(host), std::sync::Arc::clone(spent)))
    });
    if let Some((host, spent)) = cached {
        return Scripts {
            host: Some(host),
            spent,
        };
    }
    // The catalog's scripts compiled when it was loaded, so this only fails if a script
    // file changed on disk since; moves that need it are then refused.
    let Some(host) = ScriptHost::new(catalog).ok().map(std::rc::Rc::new) else {
        return none();
    };
    let spent: Spent = std::sync::Arc::new(
        (0..catalog.cards().len())
            .map(|_| std::sync::OnceLock::new())
            .collect(),
    );
    HOSTS.with(|h| {
        let mut h = h.borrow_mut();
        h.retain(|(s, _, _)| *s != stamp);
        h.insert(
            0,
            (
                stamp,
                std::rc::Rc::clone(&host),
                std::sync::Arc::clone(&spent),
            ),
        );
        h.truncate(KEPT_HOSTS);
    });
    Scripts {
        host: Some(host),
        spent,
    }
}
