//! One sandboxed Lua state: only `string`, `table`, `math` (without `random`) and the safe
//! base functions; an instruction budget per hook call that `pcall` cannot swallow; a
//! memory cap; deterministic iteration, sorting and printing (see `prelude.lua`).
//!
//! The state is deterministic (sorted `pairs`/`next`, a stable `table.sort`, no addresses,
//! NaN printed one way) and read-only; a script's globals are frozen after its top level;
//! the prelude's `capture`/`restore` save and put back what hooks can reach. The debug
//! library is loaded only for the prelude and removed before any pack script runs. Garbage
//! collection is generational (the incremental collector falls behind the pattern of a
//! move: a little garbage each time state is put back). `__index`/`__newindex` chains are at
//! most 8 tables (`setmetatable` refuses longer ones), since Lua follows them inside one
//! instruction.
//!
//! `ScriptBudget` holds the instruction counts and clocks of a move's steps and of a load:
//! one instruction count per step of a move shared by every pack's hooks, a per-call cap, a
//! clock per move and a nesting depth across packs (the caps on events and log text are
//! `rules::Effects`'). The counts are read at every charge point; the clock at a move's
//! first charge and then after each fixed amount of charged work (a clock read costs more
//! than a short `ctx` call), and an AI decision's deadline also at every eighth hook call's
//! start. Library calls are charged by their worst case before they run, and work the host
//! does for a script is bounded by its argument's size first. An overrun is sticky through
//! `pcall`/`xpcall`: the script cannot catch it and go on.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::time::{Duration, Instant};

use mlua::{HookTriggers, Lua, Table, VmState};

use super::raw::{MainThread, watchdog};

use crate::rules::{BudgetStep, MoveLimits};

/// How often the budget hook runs, in VM instructions. Small enough that work one
/// instruction can do without being counted (a `..` of two long strings) adds up to little
/// between two looks at the clock.
pub(super) const HOOK_EVERY: u32 = 500;
/// How many hook calls of an AI decision may start between two reads of its deadline.
const DECISION_LOOK_EVERY: u32 = 8;

/// Base functions removed from the sandbox: they reach files, load code or depend on when
/// memory is collected.
const REMOVED_GLOBALS: &[&str] = &[
    "dofile",
    "loadfile",
    "load",
    "loadstring",
    "require",
    "collectgarbage",
    "print",
    "module",
    "package",
    "io",
    "os",
    "debug",
    "coroutine",
    "utf8",
    "warn",
];

/// One hook call under way: where its own count started and its cap.
#[derive(Clone, Copy, Debug)]
struct Frame {
    mark: u64,
    limit: u64,
    hook: &'static str,
}

/// Why a script was stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Overrun {
    /// One hook call spent its pack's `scripts.instructions`.
    Call { limit: u64, hook: &'static str },
    /// All hooks of a step together spent `rules.limits.instructions`.
    Step { limit: u64 },
    /// The move's hooks ran past `rules.limits.wall_ms`.
    Late { ms: u128 },
    /// The top levels of a pack's scripts (and freezing their state) together spent
    /// [`LoadLimits::instructions`].
    LoadSteps { limit: u64 },
    /// Loading a pack's scripts ran past [`LoadLimits::pack`], or loading all packs'
    /// scripts past [`LoadLimits::set`] (`all` says which).
    LoadLate { ms: u128, all: bool },
    /// An AI decision's look-ahead spent its script budget (instructions or time, all
    /// its simulated moves and `evaluate` calls together).
    Decision { instructions: u64, ms: u128 },
    /// A script ran out of its pack's script memory. Like a spent budget, no `pcall` can
    /// catch that: what a script could count by catching it would depend on garbage
    /// earlier moves left, not only on the game state and the move.
    Memory,
}

/// One budget for loading a pack's scripts (every top level, and freezing what they
/// built), within one for loading all the packs of a content set.
#[derive(Clone, Copy, Debug)]
pub(super) struct LoadLimits {
    /// Instructions all top levels of one pack may run together.
    pub instructions: u64,
    /// Wall time loading one pack's scripts may take.
    pub pack: Duration,
    /// When loading all packs' scripts must be over, and how long that was.
    pub deadline: Instant,
    pub set: Duration,
}

/// Why a hook call may not start ([`ScriptBudget::enter`]).
#[derive(Clone, Copy, Debug, thiserror::Error)]
pub(super) enum EnterError {
    /// The AI decision under way spent its script budget.
    #[error("{}", .0.describe())]
    Spent(Overrun),
    /// Hooks are nested as deep as the rules allow already.
    #[error("hooks triggered each other more than {allowed} deep (rules.limits.hook_depth)")]
    TooDeep {
        /// The nesting the rules allow (`rules.limits.hook_depth`).
        allowed: usize,
    },
}

impl Overrun {
    /// What happened, for the message after `file:line:`.
    pub fn describe(self) -> String {
        match self {
            Overrun::Call { limit, hook } => format!(
                "{hook} spent the instruction budget of {limit} per hook call (scripts.instructions in pack.yaml); is there an endless loop?"
            ),
            Overrun::Step { limit } => format!(
                "the hooks of this move spent their shared budget of {limit} instructions (rules.limits.instructions); is there an endless loop, or hooks that keep triggering each other?"
            ),
            Overrun::Late { ms } => {
                format!("the hooks of this move ran for more than {ms} ms (rules.limits.wall_ms)")
            }
            Overrun::LoadSteps { limit } => format!(
                "loading the pack's scripts spent their budget of {limit} instructions (all top levels of a pack together); is there an endless loop at the top level?"
            ),
            Overrun::LoadLate { ms, all: false } => format!(
                "loading the pack's scripts ran for more than {ms} ms (all top levels of a pack together); is there an endless loop at the top level?"
            ),
            Overrun::LoadLate { ms, all: true } => format!(
                "loading the scripts of all packs ran for more than {ms} ms (all packs together)"
            ),
            Overrun::Decision { instructions, ms } => format!(
                "the AI's look-ahead spent its script budget for one decision ({instructions} instructions or {ms} ms, all simulated moves and evaluate calls together)"
            ),
            Overrun::Memory => format!(
                "{} (too much data in its scripts)",
                super::message::MEMORY_MESSAGE
            ),
        }
    }
}

/// The budget all the host's pack states share: one count per step of a move (or per
/// hook call made outside a move), a clock per move, and each call's own cap. Every
/// charge point (the instruction hook, charged library calls, `ctx` calls) goes through
/// [`ScriptBudget::charge`], which also reads the clock whenever [`HOOK_EVERY`] instructions'
/// worth of work was charged since it last did, so no call outlives the limit by more
/// than that much work.
#[derive(Debug)]
pub(super) struct ScriptBudget {
    /// Instructions all hooks of a step may run together.
    step_limit: u64,
    /// Wall time a move's hooks may take.
    wall: Duration,
    /// Hook calls that may be under way at once, all packs together.
    max_depth: usize,
    /// Instructions counted in this step.
    used: Cell<u64>,
    /// Set once any limit is passed; stays set until the next step (or outermost call)
    /// starts, so no `pcall` inside a script can catch the overrun.
    exceeded: Cell<Option<Overrun>>,
    /// When the move's first charge came (a short hook never reads the clock).
    started: Cell<Option<Instant>>,
    /// The count when the clock was last read: it is read again once another
    /// [`HOOK_EVERY`] instructions' worth of work was charged, not at every `ctx` call.
    clock_at: Cell<u64>,
    /// Below this count no limit can be reached and the clock is not due: a charge that
    /// stays under it only adds (see [`ScriptBudget::charge`]). Zero when unknown; set by each
    /// full check, cleared by whatever changes a limit.
    quiet_until: Cell<u64>,
    /// Whether a move is under way ([`ScriptBudget::begin_step`] until [`ScriptBudget::end_move`]).
    in_move: Cell<bool>,
    /// Looks at the game under way ([`ScriptBudget::begin_look`]): outside a move, their
    /// hook calls share one count and clock.
    looks: Cell<u32>,
    /// The hook calls under way, innermost last.
    frames: RefCell<Vec<Frame>>,
    /// Set while a pack's scripts load ([`ScriptBudget::begin_load`]): one count and clock for
    /// all its top levels instead of the move's.
    load: Cell<Option<LoadLimits>>,
    /// An AI decision under way: every charge also counts toward its meter.
    decision: Cell<Option<Decision>>,
    /// Errors scripts caught with `pcall` or `xpcall` so far.
    caught: Cell<u64>,
    /// Whether `decision` holds one (read at every charge; cheaper than the whole meter).
    deciding: Cell<bool>,
    /// Whether the clock of the move or call under way started and the watchdog was not
    /// told yet: it is told when Lua code is about to run ([`ScriptBudget::guard`]), the
    /// only thing it can stop. A step whose hooks all replay (no Lua) tells it nothing.
    untold: Cell<bool>,
    /// Whether the deadline the watchdog was last told includes a move's or call's clock
    /// (else it is the decision's or loading's, or none).
    told_call: Cell<bool>,
    /// The thread's count of deadline changes ([`watchdog::changes`]) just after
    /// this budget last told the watchdog.
    told_at: Cell<u64>,
    /// Hook calls started in a decision since its deadline was last read.
    unread_starts: Cell<u32>,
}

/// The meter of one AI decision: what all the hooks and `evaluate` calls of its
/// simulated moves may spend together.
#[derive(Clone, Copy, Debug)]
struct Decision {
    used: u64,
    limit: u64,
    deadline: Instant,
    ms: u128,
    spent: bool,
}

impl Decision {
    fn overrun(&self) -> Overrun {
        Overrun::Decision {
            instructions: self.limit,
            ms: self.ms,
        }
    }
}

impl ScriptBudget {
    /// A budget enforcing `limits`.
    pub fn new(limits: &MoveLimits) -> ScriptBudget {
        ScriptBudget {
            step_limit: limits.instructions,
            wall: Duration::from_millis(limits.wall_ms.into()),
            // Each nesting level of hooks is one hook call, plus the outermost call.
            max_depth: usize::from(limits.hook_depth) + 1,
            used: Cell::new(0),
            exceeded: Cell::new(None),
            started: Cell::new(None),
            clock_at: Cell::new(0),
            quiet_until: Cell::new(0),
            in_move: Cell::new(false),
            looks: Cell::new(0),
            frames: RefCell::new(Vec::new()),
            load: Cell::new(None),
            decision: Cell::new(None),
            deciding: Cell::new(false),
            caught: Cell::new(0),
            untold: Cell::new(false),
            told_call: Cell::new(false),
            told_at: Cell::new(0),
            unread_starts: Cell::new(0),
        }
    }

    /// An AI decision starts: until [`ScriptBudget::end_decision`], everything charged counts
    /// toward `limit` instructions as well, and nothing may run after `deadline`
    /// (`wall` from the decision's start). False, changing nothing, when one is already
    /// under way.
    pub fn begin_decision(&self, limit: u64, deadline: Instant, wall: Duration) -> bool {
        if self.decision.get().is_some() {
            return false;
        }
        self.quiet_until.set(0);
        self.deciding.set(true);
        self.decision.set(Some(Decision {
            used: 0,
            limit,
            deadline,
            ms: wall.as_millis(),
            spent: false,
        }));
        self.publish();
        true
    }

    /// The decision is over: the instructions it spent and whether its meter ran out.
    pub fn end_decision(&self) -> (u64, bool) {
        self.deciding.set(false);
        let spent = self
            .decision
            .take()
            .map_or((0, false), |d| (d.used, d.spent));
        self.publish();
        spent
    }

    /// The decision under way's instructions spent so far and its limit (`None` without
    /// one).
    pub fn decision_used(&self) -> Option<(u64, u64)> {
        self.decision.get().map(|d| (d.used, d.limit))
    }

    /// Whether the decision under way has spent its meter.
    pub fn decision_spent(&self) -> bool {
        self.decision.get().is_some_and(|d| d.spent)
    }

    /// The decision's meter, checked when a hook call starts: an error once it ran out.
    /// Its deadline is read at every [`DECISION_LOOK_EVERY`]th start (and whenever a
    /// charge reads the clock, in [`ScriptBudget::check`]): the AI makes hundreds of hook
    /// calls a decision, most of them replays of a few hundred instructions, and a clock
    /// read at each cost about 3 % of the time. A call started past the deadline before
    /// the next read is bounded by its own caps and stopped by the watchdog.
    fn decision_open(&self) -> Result<(), Overrun> {
        let Some(mut d) = self.decision.get() else {
            return Ok(());
        };
        let starts = self.unread_starts.get().saturating_add(1);
        let due = starts >= DECISION_LOOK_EVERY;
        self.unread_starts.set(if due { 0 } else { starts });
        if !d.spent && (d.used > d.limit || (due && Instant::now() >= d.deadline)) {
            d.spent = true;
            self.decision.set(Some(d));
        }
        if d.spent { Err(d.overrun()) } else { Ok(()) }
    }

    fn fresh(&self) {
        self.quiet_until.set(0);
        self.used.set(0);
        self.clock_at.set(0);
        self.exceeded.set(None);
    }

    /// A step of a move starts: a fresh count; [`BudgetStep::Move`] also restarts the clock.
    pub fn begin_step(&self, step: BudgetStep) {
        self.fresh();
        if step == BudgetStep::Move {
            self.started.set(None);
        }
        self.in_move.set(true);
        if step == BudgetStep::Move {
            self.publish_none();
        }
    }

    /// A pack's scripts start loading: one fresh count and clock under `limits` for all
    /// their top levels, until [`ScriptBudget::end_load`].
    pub fn begin_load(&self, limits: LoadLimits) {
        self.fresh();
        self.started.set(Some(Instant::now()));
        self.load.set(Some(limits));
        self.publish();
    }

    /// The pack's scripts are loaded.
    pub fn end_load(&self) {
        self.load.set(None);
        self.fresh();
        self.started.set(None);
        self.publish();
    }

    /// The limit loading is past already, if any: checked before each script is
    /// parsed (parsing is one call no count sees, bounded by the caps on sources).
    pub fn load_overrun(&self) -> Option<Overrun> {
        let l = self.load.get()?;
        if let Some(o) = self.exceeded.get() {
            return Some(o);
        }
        self.load_late(l)
    }

    /// When loading must stop: the pack's clock or the set's, whichever ends first.
    pub fn load_deadline(&self) -> Option<Instant> {
        let l = self.load.get()?;
        let pack = self.started.get().map(|t| t + l.pack);
        Some(pack.map_or(l.deadline, |p| p.min(l.deadline)))
    }

    /// Forget an overrun of one call's own cap (a top level that spent its pack's
    /// `scripts.instructions`): the next top level of the pack starts clean, within what
    /// is left of the pack's load budget.
    pub fn clear_call_overrun(&self) {
        if matches!(self.exceeded.get(), Some(Overrun::Call { .. })) {
            self.exceeded.set(None);
        }
    }

    /// The move is over.
    pub fn end_move(&self) {
        self.in_move.set(false);
        self.publish_none();
    }

    /// A look at the game starts: outside a move, every hook call until the matching
    /// [`ScriptBudget::end_look`] shares one fresh count and clock. Looks nest.
    pub fn begin_look(&self) {
        if self.looks.get() == 0 && self.outside() {
            self.fresh();
            self.started.set(None);
        }
        self.looks.set(self.looks.get().saturating_add(1));
    }

    /// The look is over; the last one stops its clock.
    pub fn end_look(&self) {
        self.looks.set(self.looks.get().saturating_sub(1));
        if self.looks.get() == 0 && self.outside() {
            self.publish_none();
        }
    }

    /// No move, no call and no load under way.
    fn outside(&self) -> bool {
        !self.in_move.get() && self.frames.borrow().is_empty() && self.load.get().is_none()
    }

    /// Whether the next call starts an episode of its own (no move, no call under way).
    pub fn starts_episode(&self) -> bool {
        !self.in_move.get() && self.frames.borrow().is_empty()
    }

    /// A hook call starts, capped at `limit` instructions of its own. Outside a move the
    /// outermost call starts a fresh count and clock. Refused when hooks are nested
    /// deeper than the rules allow.
    pub fn enter(&self, hook: &'static str, limit: u64) -> Result<(), EnterError> {
        let mut frames = self.frames.borrow_mut();
        if frames.is_empty()
            && !self.in_move.get()
            && self.load.get().is_none()
            && self.looks.get() == 0
        {
            self.fresh();
            self.started.set(None);
        }
        self.decision_open().map_err(EnterError::Spent)?;
        if frames.len() >= self.max_depth {
            return Err(EnterError::TooDeep {
                allowed: self.max_depth - 1,
            });
        }
        // The new call's cap may be nearer than every limit the quiet count was set
        // under; nothing else got nearer.
        let used = self.used.get();
        self.quiet_until
            .set(self.quiet_until.get().min(used.saturating_add(limit)));
        frames.push(Frame {
            mark: used,
            limit,
            hook,
        });
        Ok(())
    }

    /// A hook call ends.
    pub fn leave(&self) {
        let outermost = {
            let mut frames = self.frames.borrow_mut();
            frames.pop();
            frames.is_empty()
        };
        if !outermost {
            // The outer call's cap may be nearer than the inner one's (the quiet count
            // was set under the inner one's alone). With no call left, the step's,
            // the clock's and the decision's limits it was set under still hold.
            self.quiet_until.set(0);
        }
        if outermost && self.looks.get() == 0 && self.outside() {
            // A call outside a move (and outside a look) is over: its clock no longer
            // runs.
            self.publish_none();
        }
    }

    /// Whether a clock has run out (the move's, the decision's, loading's), read now;
    /// an overrun found is kept like any other.
    pub fn overdue(&self) -> Option<Overrun> {
        if let Some(o) = self.exceeded.get() {
            return Some(o);
        }
        let now = Instant::now();
        let late = if let Some(l) = self.load.get() {
            self.load_late(l)
        } else if let Some(o) = self.decision_check(Some(now)) {
            Some(o)
        } else {
            self.started
                .get()
                .filter(|t| now.duration_since(*t) > self.wall)
                .map(|_| Overrun::Late {
                    ms: self.wall.as_millis(),
                })
        };
        if late.is_some() {
            self.exceeded.set(late);
        }
        late
    }

    /// Tell the watchdog when this thread's scripts must stop: the earliest of the
    /// clocks running now (loading's; else the move's or the call's, once started, and
    /// the decision's).
    /// [`Budget::publish`] where no move or call clock runs (a move starts or ends, a
    /// call outside a move ends): only a decision's or loading's clock may.
    fn publish_none(&self) {
        self.untold.set(false);
        if self.deciding.get()
            && self.load.get().is_none()
            && !self.told_call.get()
            && watchdog::changes() == self.told_at.get()
        {
            // What the watchdog holds is the decision's deadline already (told when the
            // decision began, or since, and nothing else told it otherwise): the AI's
            // candidate moves whose hooks ran no Lua tell it nothing at all.
            return;
        }
        if self.deciding.get() || self.load.get().is_some() {
            self.publish();
        } else {
            self.tell(None, false);
        }
    }

    /// Run `f`, which runs Lua code of `main`'s state on this thread: the watchdog is told
    /// the deadline of the clocks running now if it was not yet, and notes the state while
    /// `f` runs (see [`watchdog::running_on`]).
    pub fn guard<R>(&self, main: &MainThread, f: impl FnOnce() -> R) -> R {
        if self.untold.replace(false) {
            self.publish();
        }
        watchdog::running_on(main, f)
    }

    fn publish(&self) {
        self.untold.set(false);
        if self.load.get().is_some() {
            self.tell(self.load_deadline(), false);
        } else {
            let call = self
                .started
                .get()
                .filter(|_| self.in_move.get() || !self.frames.borrow().is_empty())
                .map(|t| t + self.wall);
            let decision = if self.deciding.get() {
                self.decision.get().filter(|d| !d.spent).map(|d| d.deadline)
            } else {
                None
            };
            let deadline = match (call, decision) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            self.tell(deadline, call.is_some());
        }
    }

    /// Tell the watchdog `deadline`, which includes a move's or call's clock if `call`,
    /// noting what was told.
    fn tell(&self, deadline: Option<Instant>, call: bool) {
        self.told_call.set(call);
        watchdog::publish(deadline);
        self.told_at.set(watchdog::changes());
    }

    /// The instructions counted in this step so far.
    pub fn used(&self) -> u64 {
        self.used.get()
    }

    /// Whether `cost` more instructions could be charged now without passing a limit
    /// (the call's cap, the step's, the decision's): a recorded hook call that cost that
    /// much is replayed only when running it again could not have been stopped by a
    /// count. Loading never replays.
    pub fn affords(&self, cost: u64) -> bool {
        if self.exceeded.get().is_some() || self.load.get().is_some() {
            return false;
        }
        if self
            .count_limit(self.used.get().saturating_add(cost))
            .is_some()
        {
            return false;
        }
        match self.decision.get() {
            Some(d) => !d.spent && d.used.saturating_add(cost) <= d.limit,
            None => true,
        }
    }

    /// A script caught an error (the sandbox's `pcall` and `xpcall` tell); running out
    /// of memory is kept as an overrun, which no `pcall` can swallow.
    pub(super) fn note_caught(&self, memory: bool) {
        self.caught.set(self.caught.get().wrapping_add(1));
        if memory && self.exceeded.get().is_none() {
            self.exceeded.set(Some(Overrun::Memory));
        }
    }

    /// Errors scripts caught so far: a hook call during which this moved may have caught
    /// running out of memory, so it is not recorded for replaying (`memo.rs`).
    pub(super) fn caught(&self) -> u64 {
        self.caught.get()
    }

    /// Whether any limit was passed in this step.
    pub fn exceeded(&self) -> Option<Overrun> {
        self.exceeded.get()
    }

    /// Count `cost` instructions of work (the instruction hook's tick, or a library or
    /// `ctx` call charged by its worst case) and look at the clock: an error once any
    /// limit is passed, and from then on until the step ends.
    pub fn charge(&self, cost: f64) -> Result<(), Overrun> {
        if let Some(o) = self.exceeded.get() {
            return Err(o);
        }
        if cost.is_finite() && cost > 0.0 {
            // Float to integer saturates, which is what a huge cost should do.
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            let cost = cost.min(1.0e15) as u64;
            return self.charge_whole(cost);
        } else if cost.is_infinite() {
            self.used.set(u64::MAX);
            self.count_decision(u64::MAX);
        }
        self.look()
    }

    /// [`ScriptBudget::charge`] of a whole number of instructions (a `ctx` call's fixed cost,
    /// the instruction hook's tick): the same count and checks, no conversion.
    pub fn charge_whole(&self, cost: u64) -> Result<(), Overrun> {
        if let Some(o) = self.exceeded.get() {
            return Err(o);
        }
        let used = self.used.get().saturating_add(cost);
        self.used.set(used);
        self.count_decision(cost);
        if used < self.quiet_until.get() {
            // No limit within reach and the clock not due: nothing to look at.
            return Ok(());
        }
        self.look()
    }

    /// Check every limit (and the clock when due) after a charge.
    fn look(&self) -> Result<(), Overrun> {
        let overrun = self.check();
        if let Some(o) = overrun {
            self.exceeded.set(Some(o));
            return Err(o);
        }
        self.quiet_until.set(self.quiet_limit());
        Ok(())
    }

    /// The count below which the next charges need no check: the nearest of the call's
    /// cap, the step's, the next look at the clock and what the decision has left. Zero
    /// (always check) while loading or before the clock started.
    fn quiet_limit(&self) -> u64 {
        if self.load.get().is_some() || self.started.get().is_none() {
            return 0;
        }
        let used = self.used.get();
        let mut until = self
            .step_limit
            .min(self.clock_at.get().saturating_add(u64::from(HOOK_EVERY)));
        if let Some(f) = self.frames.borrow().last() {
            until = until.min(f.mark.saturating_add(f.limit));
        }
        if let Some(d) = self.decision.get() {
            if d.spent {
                return 0;
            }
            until = until.min(used.saturating_add(d.limit.saturating_sub(d.used)));
        }
        until
    }

    fn count_decision(&self, cost: u64) {
        if !self.deciding.get() {
            return;
        }
        if let Some(mut d) = self.decision.get() {
            d.used = d.used.saturating_add(cost);
            self.decision.set(Some(d));
        }
    }

    /// The decision's meter at a charge: spent once over its instructions, or past its
    /// deadline when the clock is read (`now`).
    fn decision_check(&self, now: Option<Instant>) -> Option<Overrun> {
        let mut d = self.decision.get()?;
        if !d.spent && (d.used > d.limit || now.is_some_and(|t| t >= d.deadline)) {
            d.spent = true;
            self.decision.set(Some(d));
        }
        d.spent.then(|| d.overrun())
    }

    /// The count limit `used` instructions would pass: the call's cap, then the step's.
    fn count_limit(&self, used: u64) -> Option<Overrun> {
        if let Some(f) = self.frames.borrow().last()
            && used.saturating_sub(f.mark) > f.limit
        {
            return Some(Overrun::Call {
                limit: f.limit,
                hook: f.hook,
            });
        }
        (used > self.step_limit).then_some(Overrun::Step {
            limit: self.step_limit,
        })
    }

    fn check(&self) -> Option<Overrun> {
        let used = self.used.get();
        if let Some(o) = self.decision_check(None) {
            return Some(o);
        }
        if let Some(l) = self.load.get() {
            return self.check_load(used, l);
        }
        if let Some(o) = self.count_limit(used) {
            return Some(o);
        }
        match self.started.get() {
            None => {
                let now = Instant::now();
                self.started.set(Some(now));
                self.clock_at.set(used);
                // The watchdog only stops Lua code: it learns of this clock now if Lua
                // runs (this charge is one of its instructions or `ctx` calls), else
                // when Lua is about to run (`guard`).
                if watchdog::running() {
                    self.publish();
                } else {
                    self.untold.set(true);
                }
                self.decision_check(Some(now))
            }
            // Reading the clock costs more than a short `ctx` call: look again only once
            // as much work as the instruction hook's interval was charged since.
            Some(_) if used.saturating_sub(self.clock_at.get()) < u64::from(HOOK_EVERY) => None,
            Some(t) => {
                self.clock_at.set(used);
                let now = Instant::now();
                if now.duration_since(t) > self.wall {
                    return Some(Overrun::Late {
                        ms: self.wall.as_millis(),
                    });
                }
                self.decision_check(Some(now))
            }
        }
    }
}

impl ScriptBudget {
    /// Whether loading is past its clocks: the content set's deadline, then the pack's.
    fn load_late(&self, l: LoadLimits) -> Option<Overrun> {
        let now = Instant::now();
        if now >= l.deadline {
            return Some(Overrun::LoadLate {
                ms: l.set.as_millis(),
                all: true,
            });
        }
        match self.started.get() {
            Some(t) if now.duration_since(t) > l.pack => Some(Overrun::LoadLate {
                ms: l.pack.as_millis(),
                all: false,
            }),
            _ => None,
        }
    }

    /// [`ScriptBudget::check`] while a pack's scripts load.
    fn check_load(&self, used: u64, l: LoadLimits) -> Option<Overrun> {
        if let Some(f) = self.frames.borrow().last()
            && used.saturating_sub(f.mark) > f.limit
        {
            return Some(Overrun::Call {
                limit: f.limit,
                hook: f.hook,
            });
        }
        if used > l.instructions {
            return Some(Overrun::LoadSteps {
                limit: l.instructions,
            });
        }
        if used.saturating_sub(self.clock_at.get()) < u64::from(HOOK_EVERY) {
            return None;
        }
        self.clock_at.set(used);
        self.load_late(l)
    }
}

/// A fresh sandboxed state with `budget` enforced and `memory` bytes at most, and the
/// prelude's functions the host calls (freezing globals, capturing and restoring a
/// script's state).
pub(super) fn new_state(budget: &Rc<ScriptBudget>, memory: usize) -> mlua::Result<(Lua, Freezer)> {
    // The five functions of the debug library the prelude captures into locals no script
    // can reach, to find and restore a script's state between moves.
    let (lua, inspect) = super::raw::new_lua_with_inspect()?;
    let globals = lua.globals();
    for name in REMOVED_GLOBALS {
        globals.raw_set(*name, mlua::Value::Nil)?;
    }
    let string: Table = globals.get("string")?;
    for name in ["dump", "pack", "unpack", "packsize"] {
        string.raw_set(name, mlua::Value::Nil)?;
    }
    // The pattern functions, metered (before the prelude, which builds on them).
    let meter = Rc::clone(budget);
    let charge: Rc<dyn Fn(f64) -> Result<(), String>> =
        Rc::new(move |cost| meter.charge(cost).map_err(Overrun::describe));
    super::pattern::install(&lua, &string, &charge, memory)?;
    let math: Table = globals.get("math")?;
    math.raw_set("random", mlua::Value::Nil)?;
    math.raw_set("randomseed", mlua::Value::Nil)?;

    let flag = Rc::clone(budget);
    // An error a script caught: whether it must be raised again (a spent budget), and
    // the message of a host error object, without the host's wording and traceback.
    let caught = lua.create_function(move |lua, e: mlua::Value| {
        flag.note_caught(is_memory_value(&e));
        let text = match &e {
            mlua::Value::Error(error) => Some(lua.create_string(error_text(&error.to_string()))?),
            _ => None,
        };
        Ok((flag.exceeded().is_some(), text))
    })?;
    let account = Rc::clone(budget);
    let charge = lua.create_function(move |lua, (cost, what): (f64, Option<String>)| {
        account.charge(cost).map_err(|o| {
            let place = super::place::script_place(lua);
            let what = what.map(|w| format!("{w}: ")).unwrap_or_default();
            mlua::Error::RuntimeError(format!("{place}{what}{}", o.describe()))
        })
    })?;
    let largest = i64::try_from(memory).unwrap_or(i64::MAX);
    let (move_globals, refuse, capture, restore): (
        mlua::Function,
        mlua::Function,
        mlua::Function,
        mlua::Function,
    ) = lua
        .load(include_str!("prelude.lua"))
        .set_name("=sandbox")
        .call((
            caught,
            charge,
            largest,
            inspect.getupvalue,
            inspect.setupvalue,
            inspect.getmetatable,
            inspect.setmetatable,
            inspect.getinfo,
        ))?;
    let freeze = Freezer {
        move_globals,
        refuse,
        capture,
        restore,
    };

    // Generational collection: every move leaves a little garbage while putting script
    // state back writes the same old tables again, which keeps the incremental collector
    // re-marking them; it falls ever further behind until each allocation meets the
    // memory cap and runs a full collection (milliseconds a move). Young collections
    // keep up with that pattern at any length of play.
    lua.gc_set_mode(mlua::prelude::LuaGcMode::Generational(Default::default()));
    install_hook(&lua, budget)?;
    lua.set_memory_limit(memory)?;
    Ok((lua, freeze))
}

/// The message of a host error's text: what comes before its traceback, after
/// mlua's "runtime error: ".
fn error_text(text: &str) -> &str {
    let text = text
        .split_once("\nstack traceback:")
        .map_or(text, |(message, _)| message);
    text.split_once("runtime error: ")
        .map_or(text, |(_, message)| message)
}

/// Whether an error value a script caught is running out of memory: Lua's own (its
/// message, which Lua keeps for that) or a host call's.
fn is_memory_value(e: &mlua::Value) -> bool {
    match e {
        mlua::Value::String(s) => s.as_bytes().as_ref() == b"not enough memory",
        mlua::Value::Error(e) => super::message::is_memory(e),
        _ => false,
    }
}

/// (Re)install the budget hook. Installing it also restarts Lua's own instruction
/// countdown, so each outermost hook call is counted from zero exactly, whatever ran
/// before it in this state.
pub(super) fn install_hook(lua: &Lua, budget: &Rc<ScriptBudget>) -> mlua::Result<()> {
    let counter = Rc::clone(budget);
    lua.set_hook(
        HookTriggers::new().every_nth_instruction(HOOK_EVERY),
        move |_, debug| match charge_tick(&counter) {
            Ok(()) => Ok(VmState::Continue),
            Err(o) => {
                let place = debug
                    .source()
                    .source
                    .map(|s| s.trim_start_matches(['@', '=']).to_string())
                    .unwrap_or_default();
                let line = debug.current_line().unwrap_or(0);
                Err(mlua::Error::RuntimeError(format!(
                    "{place}:{line}: {}",
                    o.describe()
                )))
            }
        },
    )?;
    Ok(())
}

/// The instruction hook's charge: [`HOOK_EVERY`] instructions, or, when the watchdog
/// made the hook fire early because the thread is past its deadline, a look at the clock
/// (and the countdown set back to its interval).
fn charge_tick(budget: &ScriptBudget) -> Result<(), Overrun> {
    if watchdog::take_forced(i32::try_from(HOOK_EVERY).unwrap_or(i32::MAX)) {
        budget.overdue().map_or(Ok(()), Err)
    } else {
        budget.charge_whole(u64::from(HOOK_EVERY))
    }
}

/// The prelude's functions the host calls on a state.
pub(super) struct Freezer {
    move_globals: mlua::Function,
    refuse: mlua::Function,
    capture: mlua::Function,
    restore: mlua::Function,
}

impl Freezer {
    /// Make `env` read-only: its globals move to a table it reads through, and setting a
    /// new global is an error.
    pub fn freeze(&self, lua: &Lua, env: &Table) -> mlua::Result<()> {
        let frozen: Table = self.move_globals.call((env, lua.globals()))?;
        let meta = lua.create_table()?;
        meta.raw_set("__index", frozen)?;
        meta.raw_set("__newindex", &self.refuse)?;
        meta.raw_set("__metatable", false)?;
        env.set_metatable(Some(meta))?;
        Ok(())
    }

    /// Everything a loaded script can change later (the upvalues of its functions, the
    /// tables they reach, whatever it made its `_ENV`), recorded as it is now, and whether
    /// that is nothing at all (its functions capture only `_ENV` and reach no table a
    /// script can write). Tables a script set as `_ENV` are frozen like its globals.
    pub fn capture(&self, hooks: &Table, env: &Table) -> mlua::Result<(Table, bool)> {
        self.capture.call((hooks, env))
    }

    /// Put everything [`Freezer::capture`] recorded back as it was.
    pub fn restore(&self, snapshot: &Table) -> mlua::Result<()> {
        self.restore.call(snapshot)
    }
}

/// A new environment for one script: its own globals, reading the sandbox's.
pub(super) fn script_env(lua: &Lua) -> mlua::Result<Table> {
    let env = lua.create_table()?;
    let meta = lua.create_table()?;
    meta.raw_set("__index", lua.globals())?;
    meta.raw_set("__metatable", false)?;
    env.set_metatable(Some(meta))?;
    Ok(env)
}

#[cfg(test)]
#[path = "cost_tests.rs"]
mod cost_tests;

#[cfg(test)]
#[path = "compat_tests.rs"]
mod compat_tests;
