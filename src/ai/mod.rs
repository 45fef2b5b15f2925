//! The AI: agents that choose moves by simulating them through the real engine, so any
//! card — built-in or scripted — is understood without AI code of its own; and balance
//! simulation of AI-versus-AI games.
//!
//! Levels, weakest first: `random`, `easy`, `greedy` (the reference: the original game's
//! one-ply income-swing AI), `normal` (two plies with a generic evaluation) and `hard`
//! (information-set MCTS). Every agent sees only an [`Observation`]: never the opponent's
//! hidden stack order unless `omniscient` is set. `normal` and `hard` fill in the hidden
//! cards with full states drawn from it ([`Worlds`], one per decision), by what the plays
//! and the cards passed over say of the opponent's deck (`belief.rs`).
//!
//! [`hooks_for`] gives a catalog's [`Scripts`] for the calling thread (a host made once per
//! thread and catalog, since a Lua state cannot be shared between threads); a [`Brain`] is
//! the engine plus the packs' `ai.lua` heuristics, and remembers runaway cards for its own
//! life (one game), never per thread, so results do not depend on the thread count.
//! [`ScriptLimits`] is one decision's script budget; a decision that spends it counts as
//! cut. A test checks that every level decides alike whatever the hidden order.
//!
//! Must not: read files, touch the UI, or special-case any ability or token type.

mod agents;
pub mod balance;
mod belief;
pub mod decks;
mod eval;
mod mcts;
pub mod quality;
pub mod race;
pub mod report;
pub mod sequential;
pub mod simulate;
pub mod tune;
pub mod variants;
mod worlds;

use std::time::Duration;

use rand::SeedableRng;
use rand_pcg::Pcg32;

pub use agents::{EasyAgent, GreedyAgent, NormalAgent, RandomAgent};
pub use eval::evaluate;
pub use mcts::{Budget, DECISION_MEMORY, HardAgent};
pub use worlds::Worlds;

use crate::observe::Observation;
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
    fn choose(&mut self, brain: &Brain<'_>, obs: &Observation) -> Option<Move>;

    /// Every move the agent considered, with its value (and visits): the sandbox hint.
    fn rate(&mut self, brain: &Brain<'_>, obs: &Observation) -> Vec<Rated>;
}

/// The `k` best moves by an agent's own measure (visits first for `hard`, then value).
pub fn top_moves(
    agent: &mut dyn Agent,
    brain: &Brain<'_>,
    obs: &Observation,
    k: usize,
) -> Vec<Rated> {
    let mut rated = agent.rate(brain, obs);
    rated.sort_by(|a, b| b.visits.cmp(&a.visits).then(b.value.total_cmp(&a.value)));
    rated.truncate(k);
    rated
}

/// The AI levels.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
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

    /// Whether the level fills in the opponent's hidden cards (`normal`, `hard`): only
    /// those read what the opponent passed over, from the positions a
    /// [`History`](crate::observe::History) keeps.
    #[must_use]
    pub fn fills_in(self) -> bool {
        matches!(self, Level::Normal | Level::Hard)
    }
}

/// How `hard` thinks, and whether agents may see hidden cards.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    /// `hard`'s budget per move.
    pub budget: Budget,
    /// Let agents see the opponent's stacks (tests and measurements only).
    pub omniscient: bool,
    /// What one decision's look-ahead may spend on scripts.
    pub scripts: ScriptLimits,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            budget: Budget::Time(Duration::from_secs(1)),
            omniscient: false,
            scripts: ScriptLimits::DEFAULT,
        }
    }
}

/// An agent of `level` with its own generator.
#[must_use]
pub fn agent(level: Level, seed: u64, options: Options) -> Box<dyn Agent> {
    agent_within(level, seed, options, DECISION_MEMORY)
}

/// An agent of `level` whose decisions' search holds at most `memory` bytes (`hard`'s
/// trees; the other levels hold a move list and need no bound).
#[must_use]
pub fn agent_within(level: Level, seed: u64, options: Options, memory: usize) -> Box<dyn Agent> {
    let rng = Pcg32::seed_from_u64(seed);
    match level {
        Level::Random => Box::new(RandomAgent { rng }),
        Level::Easy => Box::new(EasyAgent {
            rng,
            k: 2.0,
            scripts: options.scripts,
        }),
        Level::Greedy => Box::new(GreedyAgent {
            rng,
            scripts: options.scripts,
        }),
        Level::Normal => Box::new(NormalAgent {
            rng,
            scripts: options.scripts,
        }),
        Level::Hard => Box::new(HardAgent {
            rng,
            budget: options.budget,
            exploration: 0.15,
            scripts: options.scripts,
            memory,
        }),
    }
}

/// What one AI decision's look-ahead may spend on scripts: every hook of every move it
/// simulates and every `ai.lua` `evaluate` call, all together. Once spent, the decision
/// finishes with the moves it has rated (moves that run no script are still rated) and
/// counts as cut ([`Brain::cuts`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScriptLimits {
    /// Lua instructions (and charged library work) per decision: the meter that decides,
    /// the same on every machine.
    pub instructions: u64,
    /// Wall time per decision, in milliseconds: a backstop for work the count cannot
    /// see; reaching it makes the decision depend on the machine.
    pub wall_ms: u32,
}

impl ScriptLimits {
    /// The defaults: 20,000,000 instructions and 1,000 ms per decision.
    pub const DEFAULT: ScriptLimits = ScriptLimits {
        instructions: 20_000_000,
        wall_ms: 1_000,
    };
}

impl Default for ScriptLimits {
    fn default() -> Self {
        ScriptLimits::DEFAULT
    }
}

/// What the AI thinks with: the engine it simulates moves through, and the packs' own
/// heuristics (`ai.lua`), which are an AI concern the engine never calls. Look-ahead plays
/// through [`Brain::play_lookahead`]; everything else of the engine is [`Brain::engine`].
///
/// A brain remembers what its look-ahead learned (cards whose scripts ran out of their
/// budget, a heuristic that did): make one per game, so what it remembers depends only
/// on the game, never on the thread or on earlier games.
pub struct Brain<'a> {
    engine: Engine<'a>,
    host: Option<&'a ScriptHost>,
    /// Per card, with scripts loaded: the error its scripts gave when they ran out of
    /// their budget in a simulated play of this brain's, so look-ahead refuses it at
    /// once from then on.
    spent: std::cell::RefCell<Spent>,
    /// The packs' `evaluate` ran out of its budget once: not called again.
    heuristics_off: std::cell::Cell<bool>,
    /// Decisions whose script meter ran out.
    cuts: std::cell::Cell<u64>,
}

/// Per card, the error its scripts gave when they ran out of budget in a look-ahead.
pub type Spent = Vec<Option<crate::rules::HookError>>;

/// One AI decision under way on a brain's script host ([`Brain::decide`]); when dropped,
/// the decision ends and a spent meter is counted as a cut.
pub struct Deciding<'b> {
    host: Option<&'b ScriptHost>,
    cuts: &'b std::cell::Cell<u64>,
}

impl Drop for Deciding<'_> {
    fn drop(&mut self) {
        if let Some(host) = self.host
            && host.end_decision().1
        {
            self.cuts.set(self.cuts.get() + 1);
        }
    }
}

impl<'a> Brain<'a> {
    /// The engine it simulates moves through.
    #[must_use]
    pub fn engine(&self) -> &Engine<'a> {
        &self.engine
    }

    /// Play `mv` for look-ahead, as [`Engine::play_quiet`] does, except that a card whose
    /// scripts once ran out of their budget (instructions, time, memory, depth or events)
    /// in a look-ahead of this brain is refused at once afterwards, with the same error,
    /// without running them: a runaway card costs one budget per game, not one per
    /// simulated play. Running out of the decision's own meter ([`ScriptLimits`]) says
    /// nothing about the card and is not remembered. The real game never goes through
    /// this: it plays every move with the engine.
    #[inline]
    pub fn play_lookahead(
        &self,
        state: &mut crate::rules::GameState,
        mv: crate::rules::Move,
    ) -> Result<(), crate::rules::MoveError> {
        if self.host.is_none() {
            return self.engine.play_quiet(state, mv);
        }
        let index = self.engine.card_played(state, mv).ok().map(|c| c.index());
        if let Some(e) = index.and_then(|i| self.spent.borrow().get(i).cloned().flatten()) {
            return Err(crate::rules::MoveError::Script(e));
        }
        let result = self.engine.play_quiet(state, mv);
        if let (Err(crate::rules::MoveError::Script(e)), Some(i)) = (&result, index)
            && e.kind == crate::rules::HookErrorKind::Limit
            && !self.decision_spent()
            && let Some(slot) = self.spent.borrow_mut().get_mut(i)
            && slot.is_none()
        {
            *slot = Some(e.clone());
        }
        result
    }

    /// The cards whose scripts ran out of budget so far, to start another brain of the
    /// same search from ([`Scripts::brain_sharing`]).
    #[must_use]
    pub fn spent(&self) -> Spent {
        self.spent.borrow().clone()
    }

    /// Remember what another brain of the same search learned (its [`Brain::spent`]);
    /// what this brain knew first is kept.
    pub fn learn(&self, other: &Spent) {
        let mut mine = self.spent.borrow_mut();
        for (slot, theirs) in mine.iter_mut().zip(other) {
            if slot.is_none() {
                slot.clone_from(theirs);
            }
        }
    }

    /// Start a decision with `limits` for its scripts (nothing to do without scripts, or
    /// when one is already under way on this thread's host): it lasts until the returned
    /// guard is dropped.
    #[must_use]
    pub fn decide(&self, limits: ScriptLimits) -> Deciding<'_> {
        self.decide_part(limits, 1, std::time::Instant::now())
    }

    /// [`Brain::decide`] for one of `parts` searches sharing a decision that started at
    /// `started`: its share of the instructions, and the decision's deadline.
    #[must_use]
    pub fn decide_part(
        &self,
        limits: ScriptLimits,
        parts: u64,
        started: std::time::Instant,
    ) -> Deciding<'_> {
        let wall = Duration::from_millis(limits.wall_ms.into());
        let host = self
            .host
            .filter(|h| h.begin_decision(limits.instructions / parts.max(1), started + wall, wall));
        Deciding {
            host,
            cuts: &self.cuts,
        }
    }

    /// Whether the decision under way ran out of its script budget: from then on every
    /// move that would run a script is refused at once, and `evaluate` is not called.
    #[must_use]
    pub fn decision_spent(&self) -> bool {
        self.host.is_some_and(ScriptHost::decision_spent)
    }

    /// Whether the decision under way has spent at least `share` of its script
    /// instructions (or all its budget): false without scripts.
    #[must_use]
    pub fn decision_past(&self, share: f64) -> bool {
        self.decision_spent()
            || self
                .host
                .and_then(ScriptHost::decision_used)
                .is_some_and(|(used, limit)| {
                    #[allow(clippy::cast_precision_loss)]
                    let past = used as f64 >= share * limit as f64;
                    past
                })
    }

    /// Decisions of this brain whose script budget ran out.
    #[must_use]
    pub fn cuts(&self) -> u64 {
        self.cuts.get()
    }

    /// Count `n` decisions cut elsewhere (a search's other tree).
    pub fn add_cuts(&self, n: u64) {
        self.cuts.set(self.cuts.get() + n);
    }

    /// What the packs' `ai.lua` heuristics think of `state` for `seat`: nothing when no
    /// pack has one, and nothing when one fails (a failing heuristic must not stop the AI).
    /// One that ran out of its budget is not called again by this brain, nor any once
    /// the decision's script budget is spent.
    #[must_use]
    pub fn heuristics(&self, state: &crate::rules::GameState, seat: crate::rules::Seat) -> f64 {
        let Some(host) = self.host else { return 0.0 };
        if self.heuristics_off.get()
            || !self
                .engine
                .catalog()
                .packs()
                .iter()
                .any(|p| p.ai_script.is_some())
            || host.decision_spent()
        {
            return 0.0;
        }
        let view = crate::rules::GameView {
            state,
            catalog: self.engine.catalog(),
        };
        match host.heuristics(&view, seat) {
            Ok(value) => value,
            Err(e) => {
                if e.kind == crate::rules::HookErrorKind::Limit && !host.decision_spent() {
                    self.heuristics_off.set(true);
                }
                0.0
            }
        }
    }
}

/// The scripts of a catalog on one thread: a [`ScriptHost`] when the catalog has scripts
/// (a Lua state cannot be shared between threads), nothing otherwise.
pub struct Scripts {
    host: Option<std::rc::Rc<ScriptHost>>,
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

    /// Whether a script host is there (false without scripts, and when none could be
    /// made: the process's script memory was taken).
    #[must_use]
    pub fn loaded(&self) -> bool {
        self.host.is_some()
    }

    /// An engine over `catalog` with these scripts, and their heuristics: a fresh brain,
    /// which remembers nothing yet.
    #[must_use]
    pub fn brain<'a>(&'a self, catalog: &'a Catalog) -> Brain<'a> {
        self.brain_sharing(catalog, &Vec::new())
    }

    /// [`Scripts::brain`] that starts out remembering the runaway cards of `spent`
    /// (another brain's list).
    #[must_use]
    pub fn brain_sharing<'a>(&'a self, catalog: &'a Catalog, spent: &Spent) -> Brain<'a> {
        let spent = if self.host.is_none() {
            Vec::new()
        } else if spent.len() == catalog.cards().len() {
            spent.clone()
        } else {
            vec![None; catalog.cards().len()]
        };
        Brain {
            engine: Engine::new(catalog, self.hooks()),
            host: self.host.as_deref(),
            spent: std::cell::RefCell::new(spent),
            heuristics_off: std::cell::Cell::new(false),
            cuts: std::cell::Cell::new(0),
        }
    }
}

/// Script hosts this thread made lately, by catalog stamp: a host is reused for the same
/// catalog (each move starts from the scripts' loaded state, so what ran before leaves
/// nothing behind). Two are kept: the catalog in play and the one before a reload.
const KEPT_HOSTS: usize = 2;

thread_local! {
    static HOSTS: std::cell::RefCell<Vec<(u64, std::rc::Rc<ScriptHost>)>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// The scripts of `catalog` for the calling thread: made once per thread and catalog,
/// then shared (starting a Lua state and compiling every script costs about a
/// millisecond, far more than a game of built-in cards).
#[must_use]
pub fn hooks_for(catalog: &Catalog) -> Scripts {
    if catalog.scripts().is_empty() {
        return Scripts { host: None };
    }
    let stamp = catalog.stamp();
    let cached = HOSTS.with(|h| {
        h.borrow()
            .iter()
            .find(|(s, _)| *s == stamp)
            .map(|(_, host)| std::rc::Rc::clone(host))
    });
    if let Some(host) = cached {
        return Scripts { host: Some(host) };
    }
    // The catalog keeps its scripts' sources, which compiled when it was loaded, so this
    // fails only when the process's script memory is spent (too many hosts at once) or a
    // top level now runs past its load budget; moves that need scripts are then refused.
    let Some(host) = ScriptHost::new(catalog).ok().map(std::rc::Rc::new) else {
        return Scripts { host: None };
    };
    HOSTS.with(|h| {
        let mut h = h.borrow_mut();
        h.retain(|(s, _)| *s != stamp);
        h.insert(0, (stamp, std::rc::Rc::clone(&host)));
        h.truncate(KEPT_HOSTS);
    });
    Scripts { host: Some(host) }
}

/// Drop this thread's script hosts (giving back their share of the process's script
/// memory), for a thread that runs no more scripts while others will.
pub fn release_hosts() {
    HOSTS.with(|h| h.borrow_mut().clear());
}
