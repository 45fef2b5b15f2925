//! The budget all of a host's pack states share (`ScriptBudget`): what a move's steps,
//! a hook call, a load and an AI decision may spend, in instructions and in time, and
//! how the watchdog learns the deadline. Every charge point (the instruction hook,
//! charged library calls, `ctx` calls) goes through `ScriptBudget::charge`.
//!
//! Three parts: the count and clocks of a step, a call and a load (`ScriptBudget`'s own
//! fields); the meter of an AI decision under way (`DecisionMeter`); and what the
//! watchdog was told (`WatchdogLink`).
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
//!
//! Must not: read the clock at every charge (it costs more than a short `ctx` call), or
//! let a `pcall` swallow an overrun.

use std::cell::{Cell, RefCell};
use std::time::{Duration, Instant};

use super::raw::{MainThread, watchdog};
use crate::rules::{BudgetStep, MoveLimits};

/// How often the budget hook runs, in VM instructions. Small enough that work one
/// instruction can do without being counted (a `..` of two long strings) adds up to little
/// between two looks at the clock.
pub(super) const HOOK_EVERY: u32 = 500;
/// How many hook calls of an AI decision may start between two reads of its deadline.
const DECISION_LOOK_EVERY: u32 = 8;

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
    /// The meter of the AI decision under way, if any.
    decision: DecisionMeter,
    /// Errors scripts caught with `pcall` or `xpcall` so far.
    caught: Cell<u64>,
    /// What the watchdog was told.
    watchdog: WatchdogLink,
}

/// One AI decision: what all the hooks and `evaluate` calls of its simulated moves may
/// spend together.
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

/// The meter of the AI decision under way: every charge also counts toward it while one
/// is under way ([`ScriptBudget::begin_decision`] to [`ScriptBudget::end_decision`]).
///
/// It lives here, in the host's budget, rather than with the AI that starts it: every
/// charge of every hook call reads it (its `on` flag first), and those calls reach the
/// host through the engine's `Hooks`, which carry no meter. The AI scopes it instead:
/// `ai::Brain::decide` returns a guard that borrows the host and ends the decision when
/// dropped, and a decision started while one is under way is refused, so a meter can
/// neither outlive its decision nor be shared by two.
#[derive(Debug, Default)]
struct DecisionMeter {
    current: Cell<Option<Decision>>,
    /// Whether `current` holds one (read at every charge; cheaper than the whole meter).
    on: Cell<bool>,
    /// Hook calls started since its deadline was last read.
    unread_starts: Cell<u32>,
}

impl DecisionMeter {
    /// Start one; false, changing nothing, when one is under way.
    fn begin(&self, limit: u64, deadline: Instant, wall: Duration) -> bool {
        if self.current.get().is_some() {
            return false;
        }
        self.on.set(true);
        self.current.set(Some(Decision {
            used: 0,
            limit,
            deadline,
            ms: wall.as_millis(),
            spent: false,
        }));
        true
    }

    /// End it: the instructions it spent and whether it ran out.
    fn end(&self) -> (u64, bool) {
        self.on.set(false);
        self.current
            .take()
            .map_or((0, false), |d| (d.used, d.spent))
    }

    fn on(&self) -> bool {
        self.on.get()
    }

    fn used(&self) -> Option<(u64, u64)> {
        self.current.get().map(|d| (d.used, d.limit))
    }

    fn spent(&self) -> bool {
        self.current.get().is_some_and(|d| d.spent)
    }

    /// Checked when a hook call starts: an error once it ran out. Its deadline is read
    /// at every [`DECISION_LOOK_EVERY`]th start (and whenever a charge reads the clock,
    /// in [`ScriptBudget::check`]): the AI makes hundreds of hook calls a decision, most
    /// of them replays of a few hundred instructions, and a clock read at each cost
    /// about 3 % of the time. A call started past the deadline before the next read is
    /// bounded by its own caps and stopped by the watchdog.
    fn open(&self) -> Result<(), Overrun> {
        let Some(mut d) = self.current.get() else {
            return Ok(());
        };
        let starts = self.unread_starts.get().saturating_add(1);
        let due = starts >= DECISION_LOOK_EVERY;
        self.unread_starts.set(if due { 0 } else { starts });
        if !d.spent && (d.used > d.limit || (due && Instant::now() >= d.deadline)) {
            d.spent = true;
            self.current.set(Some(d));
        }
        if d.spent { Err(d.overrun()) } else { Ok(()) }
    }

    /// Count `cost` toward it, when one is under way.
    fn count(&self, cost: u64) {
        if !self.on.get() {
            return;
        }
        if let Some(mut d) = self.current.get() {
            d.used = d.used.saturating_add(cost);
            self.current.set(Some(d));
        }
    }

    /// At a charge: spent once over its instructions, or past its deadline when the
    /// clock is read (`now`).
    fn check(&self, now: Option<Instant>) -> Option<Overrun> {
        let mut d = self.current.get()?;
        if !d.spent && (d.used > d.limit || now.is_some_and(|t| t >= d.deadline)) {
            d.spent = true;
            self.current.set(Some(d));
        }
        d.spent.then(|| d.overrun())
    }

    /// The deadline the watchdog must keep for it: none when none is under way or it
    /// ran out already.
    fn deadline(&self) -> Option<Instant> {
        if !self.on.get() {
            return None;
        }
        self.current.get().filter(|d| !d.spent).map(|d| d.deadline)
    }

    /// Whether `cost` more instructions fit in it (true without one).
    fn affords(&self, cost: u64) -> bool {
        match self.current.get() {
            Some(d) => !d.spent && d.used.saturating_add(cost) <= d.limit,
            None => true,
        }
    }

    /// The count below which charges cannot run it out, from `used` (`Some(0)`: it ran
    /// out; `None`: no decision).
    fn quiet_until(&self, used: u64) -> Option<u64> {
        let d = self.current.get()?;
        if d.spent {
            return Some(0);
        }
        Some(used.saturating_add(d.limit.saturating_sub(d.used)))
    }
}

/// What this budget last told the watchdog about this thread's deadline.
#[derive(Debug, Default)]
struct WatchdogLink {
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
}

impl WatchdogLink {
    /// Tell the watchdog `deadline`, which includes a move's or call's clock if `call`,
    /// noting what was told.
    fn tell(&self, deadline: Option<Instant>, call: bool) {
        self.told_call.set(call);
        watchdog::publish(deadline);
        self.told_at.set(watchdog::changes());
    }

    /// Whether what the watchdog holds is still what this budget told it without a
    /// move's or call's clock (nothing else told it otherwise since).
    fn holds_no_call(&self) -> bool {
        !self.told_call.get() && watchdog::changes() == self.told_at.get()
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
            decision: DecisionMeter::default(),
            caught: Cell::new(0),
            watchdog: WatchdogLink::default(),
        }
    }

    /// An AI decision starts: until [`ScriptBudget::end_decision`], everything charged counts
    /// toward `limit` instructions as well, and nothing may run after `deadline`
    /// (`wall` from the decision's start). False, changing nothing, when one is already
    /// under way.
    pub fn begin_decision(&self, limit: u64, deadline: Instant, wall: Duration) -> bool {
        if !self.decision.begin(limit, deadline, wall) {
            return false;
        }
        self.quiet_until.set(0);
        self.publish();
        true
    }

    /// The decision is over: the instructions it spent and whether its meter ran out.
    pub fn end_decision(&self) -> (u64, bool) {
        let spent = self.decision.end();
        self.publish();
        spent
    }

    /// The decision under way's instructions spent so far and its limit (`None` without
    /// one).
    pub fn decision_used(&self) -> Option<(u64, u64)> {
        self.decision.used()
    }

    /// Whether the decision under way has spent its meter.
    pub fn decision_spent(&self) -> bool {
        self.decision.spent()
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
        self.decision.open().map_err(EnterError::Spent)?;
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
        } else if let Some(o) = self.decision.check(Some(now)) {
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
        self.watchdog.untold.set(false);
        if self.decision.on() && self.load.get().is_none() && self.watchdog.holds_no_call() {
            // What the watchdog holds is the decision's deadline already (told when the
            // decision began, or since, and nothing else told it otherwise): the AI's
            // candidate moves whose hooks ran no Lua tell it nothing at all.
            return;
        }
        if self.decision.on() || self.load.get().is_some() {
            self.publish();
        } else {
            self.watchdog.tell(None, false);
        }
    }

    /// Run `f`, which runs Lua code of `main`'s state on this thread: the watchdog is told
    /// the deadline of the clocks running now if it was not yet, and notes the state while
    /// `f` runs (see [`watchdog::running_on`]).
    pub fn guard<R>(&self, main: &MainThread, f: impl FnOnce() -> R) -> R {
        if self.watchdog.untold.replace(false) {
            self.publish();
        }
        watchdog::running_on(main, f)
    }

    fn publish(&self) {
        self.watchdog.untold.set(false);
        if self.load.get().is_some() {
            self.watchdog.tell(self.load_deadline(), false);
        } else {
            let call = self
                .started
                .get()
                .filter(|_| self.in_move.get() || !self.frames.borrow().is_empty())
                .map(|t| t + self.wall);
            let decision = self.decision.deadline();
            let deadline = match (call, decision) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            self.watchdog.tell(deadline, call.is_some());
        }
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
        self.decision.affords(cost)
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
            self.decision.count(u64::MAX);
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
        self.decision.count(cost);
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
        if let Some(room) = self.decision.quiet_until(used) {
            if room == 0 {
                return 0;
            }
            until = until.min(room);
        }
        until
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
        if let Some(o) = self.decision.check(None) {
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
                    self.watchdog.untold.set(true);
                }
                self.decision.check(Some(now))
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
                self.decision.check(Some(now))
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
