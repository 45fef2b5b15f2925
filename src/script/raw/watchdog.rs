//! The clock's guard for work a single Lua instruction hides.
//!
//! The budget reads the clock at its charge points: every [`HOOK_EVERY`] instructions
//! and every charged library or `ctx` call. Some instructions do work that grows with
//! their operands and pass no charge point: `==` and `<` of two long strings compare them
//! byte by byte, `..` copies them, a long string's first use as a table key hashes all of
//! it. Five hundred of those on strings of tens of megabytes run for seconds between two
//! looks at the clock.
//!
//! So a thread that runs scripts publishes, whenever its budget has a deadline, when that
//! is ([`publish`]); one watchdog thread for the process looks every [`POLL`] and, for a
//! thread past its deadline while running Lua, sends it [`SIGNAL`]. The handler sets the
//! running state's instruction hook to fire at the very next instruction (`lua_sethook`
//! is made to be called from a signal handler); the budget's hook then reads the clock
//! ([`take_forced`]) and stops the script. No instruction can then run past the deadline
//! by more than the poll interval and the instruction itself (one comparison or copy of
//! at most the pack's script memory).
//!
//! Only a thread already past its deadline is ever interrupted, so the instruction count
//! of any script that stays in time is untouched: the count stays deterministic.
//!
//! A thread's deadline is published when a move's clock runs under Lua: by
//! `ScriptBudget::guard` before each Lua call, or at once when the clock starts inside Lua;
//! replays (which run no Lua) need no watchdog. The signal is `SIGURG`.
//!
//! [`HOOK_EVERY`]: crate::script::budget::HOOK_EVERY

use std::cell::Cell;
use std::time::Duration;

use super::thread::MainThread;
#[cfg(not(unix))]
use std::time::Instant;

/// How often the watchdog looks at the threads' deadlines while any is set.
pub const POLL: Duration = Duration::from_millis(5);

thread_local! {
    /// The main thread of the Lua state running a script on this thread, if any: the
    /// state the signal handler stops.
    static RUNNING: Cell<*mut mlua::ffi::lua_State> = const { Cell::new(std::ptr::null_mut()) };
    /// The state whose hook the signal handler made fire early, until the hook sees it.
    static FORCED: Cell<*mut mlua::ffi::lua_State> = const { Cell::new(std::ptr::null_mut()) };
    /// How many times this thread's deadline changed: a budget that skips telling the
    /// watchdog what it told it last checks that no other budget of the thread (another
    /// script host) told it something else since.
    static CHANGES: Cell<u64> = const { Cell::new(0) };
}

/// How many times this thread's published deadline changed so far.
pub(in crate::script) fn changes() -> u64 {
    CHANGES.with(Cell::get)
}

/// Puts back the state noted as running before, also when unwinding.
struct Leave(*mut mlua::ffi::lua_State);

impl Drop for Leave {
    fn drop(&mut self) {
        // The signal may have come after the state's last instruction, so its hook never
        // saw the mark: the mark is dropped here (before the previous state is noted
        // again, so a signal in between marks the state that ended, which
        // `take_forced` then ignores).
        FORCED.with(|f| f.set(std::ptr::null_mut()));
        RUNNING.with(|r| r.set(self.0));
    }
}

/// Run `f`, which runs Lua code of `main`'s state on this thread, with that state noted as
/// the one the signal handler stops; the state noted before is noted again afterwards.
///
/// A mark the signal handler left for a state whose code ended before its hook fired is
/// dropped first: it never names the state that runs now.
pub(in crate::script) fn running_on<R>(main: &MainThread, f: impl FnOnce() -> R) -> R {
    FORCED.with(|f| f.set(std::ptr::null_mut()));
    let _leave = Leave(RUNNING.with(|r| r.replace(main.ptr())));
    f()
}

/// Whether Lua code runs on this thread now (inside [`running_on`]).
pub(in crate::script) fn running() -> bool {
    RUNNING.with(|r| !r.get().is_null())
}

/// Whether the signal handler made the running state's hook fire early (clearing the
/// mark): then its countdown is set back to `count` instructions here, and the hook must
/// read the clock. A mark naming any other state is never acted on: that state may be
/// gone, and this hook tick is an ordinary one to be charged as such.
pub(in crate::script) fn take_forced(count: i32) -> bool {
    let state = FORCED.with(|f| f.replace(std::ptr::null_mut()));
    let running = RUNNING.with(Cell::get);
    if state.is_null() || state != running {
        return false;
    }
    // SAFETY: `state` is the state noted by `running_on`, whose closure runs now (it is
    // cleared before that closure's state can go): its code runs on this thread (this is
    // its hook). These read and set its hook fields only and raise no error.
    unsafe {
        let hook = mlua::ffi::lua_gethook(state);
        let mask = mlua::ffi::lua_gethookmask(state);
        mlua::ffi::lua_sethook(state, hook, mask, count);
    }
    true
}

#[cfg(unix)]
pub(in crate::script) use guard::publish;

/// Without POSIX signals nothing guards between charge points; the budget's own looks
/// at the clock still stop every script.
#[cfg(not(unix))]
pub(in crate::script) fn publish(_deadline: Option<Instant>) {}

#[cfg(unix)]
mod guard {
    use std::cell::Cell;
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    use std::sync::{Arc, Mutex, OnceLock};
    use std::time::Instant;

    use super::{FORCED, POLL, RUNNING};

    /// The signal the watchdog sends: `SIGURG`, which is ignored by default, so a stray
    /// one can never end the process.
    pub const SIGNAL: libc::c_int = libc::SIGURG;

    /// One thread's deadline, as the watchdog reads it.
    struct ThreadDeadline {
        /// Nanoseconds after [`base`] when the thread's budget runs out; 0 for none.
        deadline: AtomicU64,
        thread: libc::pthread_t,
    }

    /// The process's slots, one per thread that ever published a deadline and still runs.
    static SLOTS: Mutex<Vec<Arc<ThreadDeadline>>> = Mutex::new(Vec::new());
    /// The watchdog thread, once started.
    static WATCHDOG: OnceLock<Option<std::thread::Thread>> = OnceLock::new();
    /// Whether the watchdog sleeps until a deadline is published.
    static IDLE: AtomicBool = AtomicBool::new(false);
    /// How long the watchdog sleeps while no deadline is set, at most.
    const IDLE_LOOK: std::time::Duration = std::time::Duration::from_millis(100);

    thread_local! {
        /// This thread's slot, taken out of [`SLOTS`] when the thread ends.
        static MINE: Registered = Registered::new();
        /// This thread's deadline, as the signal handler reads it (it cannot touch
        /// [`MINE`], whose first use allocates).
        static DEADLINE: Cell<u64> = const { Cell::new(0) };
        /// This thread's slot in [`SLOTS`] once registered (null before, and after the
        /// thread's `MINE` is dropped).
        static SLOT: Cell<*const ThreadDeadline> = const { Cell::new(std::ptr::null()) };
    }

    struct Registered(Option<Arc<ThreadDeadline>>);

    impl Registered {
        fn new() -> Registered {
            if !install_handler() {
                return Registered(None);
            }
            // SAFETY: pthread_self has no preconditions.
            let thread = unsafe { libc::pthread_self() };
            let slot = Arc::new(ThreadDeadline {
                deadline: AtomicU64::new(0),
                thread,
            });
            if let Ok(mut slots) = SLOTS.lock() {
                slots.push(Arc::clone(&slot));
            }
            start_watchdog();
            Registered(Some(slot))
        }
    }

    impl Drop for Registered {
        fn drop(&mut self) {
            if let Some(slot) = self.0.take() {
                let _ = SLOT.try_with(|p| p.set(std::ptr::null()));
                // A thread that ended must never be signalled.
                slot.deadline.store(0, Ordering::SeqCst);
                if let Ok(mut slots) = SLOTS.lock() {
                    slots.retain(|s| !Arc::ptr_eq(s, &slot));
                }
            }
        }
    }

    /// The instant deadlines are counted from.
    fn base() -> Instant {
        static BASE: OnceLock<Instant> = OnceLock::new();
        *BASE.get_or_init(Instant::now)
    }

    /// `at` in nanoseconds after [`base`], at least 1 (0 means none).
    fn nanos(at: Instant) -> u64 {
        u64::try_from(at.saturating_duration_since(base()).as_nanos())
            .unwrap_or(u64::MAX)
            .max(1)
    }

    /// This thread's budget runs out at `deadline` (`None`: it has no deadline now).
    /// Called at every move's start and end, so it costs a thread-local read when nothing
    /// changes and one plain store when something does.
    pub fn publish(deadline: Option<Instant>) {
        let value = deadline.map_or(0, nanos);
        if DEADLINE.with(|d| d.replace(value)) == value {
            return;
        }
        super::CHANGES.with(|c| c.set(c.get().wrapping_add(1)));
        publish_changed(value);
    }

    /// Store a changed deadline in this thread's slot (registering it at the first).
    fn publish_changed(value: u64) {
        let mut slot = SLOT.with(Cell::get);
        if slot.is_null() {
            // The first deadline of this thread: register it (once).
            let _ = MINE.try_with(|m| {
                if let Some(s) = &m.0 {
                    SLOT.with(|p| p.set(Arc::as_ptr(s)));
                }
            });
            slot = SLOT.with(Cell::get);
        }
        if slot.is_null() {
            return;
        }
        // SAFETY: SLOT points into this thread's own `MINE`, which lives until the thread
        // ends (its drop clears SLOT first).
        unsafe { &*slot }.deadline.store(value, Ordering::Release);
        if value != 0
            && IDLE.load(Ordering::Relaxed)
            && let Some(Some(watchdog)) = WATCHDOG.get()
        {
            watchdog.unpark();
        }
    }

    /// Install the signal handler once for the process; false if it cannot be.
    fn install_handler() -> bool {
        static INSTALLED: OnceLock<bool> = OnceLock::new();
        *INSTALLED.get_or_init(|| {
            // Make the base instant before any handler could need it.
            let _ = base();
            // SAFETY: a zeroed sigaction is a valid starting value; the handler is an
            // `extern "C"` function that only does what a signal handler may (see
            // `on_signal`); SA_RESTART keeps system calls of the interrupted thread
            // going.
            unsafe {
                let mut action: libc::sigaction = std::mem::zeroed();
                action.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as usize;
                action.sa_flags = libc::SA_RESTART;
                libc::sigemptyset(&raw mut action.sa_mask);
                libc::sigaction(SIGNAL, &raw const action, std::ptr::null_mut()) == 0
            }
        })
    }

    /// The handler: when this thread is past its deadline and running Lua, make the
    /// running state's hook fire at its next instruction.
    extern "C" fn on_signal(_: libc::c_int) {
        let state = RUNNING.with(Cell::get);
        let deadline = DEADLINE.with(Cell::get);
        if state.is_null() || deadline == 0 || nanos(Instant::now()) < deadline {
            return;
        }
        FORCED.with(|f| f.set(state));
        // SAFETY: `state` is the main thread of a live Lua state whose code runs on this
        // thread (it was noted by `running_on` and is cleared before its closure ends,
        // while the state is alive); lua_sethook is documented as safe to call from a
        // signal handler.
        unsafe {
            let hook = mlua::ffi::lua_gethook(state);
            let mask = mlua::ffi::lua_gethookmask(state);
            if hook.is_some() && mask != 0 {
                mlua::ffi::lua_sethook(state, hook, mask, 1);
            }
        }
    }

    /// Start the watchdog thread once for the process.
    fn start_watchdog() {
        let _ = WATCHDOG.get_or_init(|| {
            let spawned = std::thread::Builder::new()
                .name("script-watchdog".into())
                .stack_size(64 * 1024)
                .spawn(watch);
            // Without the thread nothing is signalled; the budget's own looks at the
            // clock still stop every script.
            spawned.ok().map(|handle| handle.thread().clone())
        });
    }

    /// The watchdog: every [`POLL`] while any deadline is set, signal the threads past
    /// theirs; otherwise sleep until one is published.
    fn watch() {
        loop {
            if signal_late() {
                std::thread::sleep(POLL);
                continue;
            }
            IDLE.store(true, Ordering::SeqCst);
            // A deadline published just before IDLE was set is seen here; one whose
            // wake-up raced with it is seen at the next look, at most IDLE_LOOK later.
            if !signal_late() {
                std::thread::park_timeout(IDLE_LOOK);
            }
            IDLE.store(false, Ordering::SeqCst);
        }
    }

    /// Signal every thread past its deadline; whether any deadline is set.
    fn signal_late() -> bool {
        let now = nanos(Instant::now());
        let Ok(slots) = SLOTS.lock() else {
            return false;
        };
        let mut any = false;
        for slot in slots.iter() {
            let deadline = slot.deadline.load(Ordering::Acquire);
            if deadline == 0 {
                continue;
            }
            any = true;
            if now >= deadline {
                // SAFETY: the thread is alive: its slot leaves SLOTS (under this lock)
                // before it ends.
                unsafe {
                    libc::pthread_kill(slot.thread, super::guard::SIGNAL);
                }
            }
        }
        any
    }
}

#[cfg(all(test, unix))]
mod tests {
    use std::time::{Duration, Instant};

    use mlua::{HookTriggers, Lua, VmState};

    use super::super::thread::MainThread;
    use super::{guard::SIGNAL, publish, running_on, take_forced};

    /// A Lua state with an instruction hook (the signal handler only marks a state whose
    /// hook is set) and its main thread.
    fn hooked() -> (Lua, MainThread) {
        let lua = Lua::new();
        lua.set_hook(HookTriggers::new().every_nth_instruction(1_000), |_, _| {
            Ok(VmState::Continue)
        })
        .unwrap();
        let main = MainThread::of(&lua).unwrap();
        (lua, main)
    }

    /// This thread is past a deadline; the signal arrives now (delivered to this thread,
    /// its handler done before `raise` returns).
    fn signal_past_deadline() {
        publish(Some(Instant::now()));
        std::thread::sleep(Duration::from_millis(1));
        // SAFETY: raising a signal whose handler is installed (publish registered this
        // thread) and which is ignored by default.
        assert_eq!(unsafe { libc::raise(SIGNAL) }, 0);
    }

    #[test]
    fn the_running_state_sees_the_mark() {
        let (_lua, main) = hooked();
        let forced = running_on(&main, || {
            signal_past_deadline();
            take_forced(1_000)
        });
        publish(None);
        assert!(forced);
        assert!(!take_forced(1_000));
    }

    #[test]
    fn a_signal_after_the_last_instruction_leaves_no_mark() {
        let (lua, main) = hooked();
        // The signal comes after the state's last instruction: its hook never runs.
        running_on(&main, signal_past_deadline);
        publish(None);
        // The state may now be gone (a host is dropped or evicted)...
        drop(main);
        drop(lua);
        // ...and no later hook tick of this thread may act on it, whichever state runs.
        assert!(!take_forced(1_000));
        let (_other, next) = hooked();
        let stale = running_on(&next, || take_forced(1_000));
        assert!(!stale, "a stale mark reached the next state's hook");
    }

    #[test]
    fn a_mark_for_another_state_is_not_acted_on() {
        let (_a, a) = hooked();
        let (_b, b) = hooked();
        running_on(&a, || {
            signal_past_deadline();
            // Another state runs (nested) before `a`'s hook saw its mark.
            let forced = running_on(&b, || take_forced(1_000));
            assert!(!forced);
        });
        publish(None);
    }
}
