//! The one room of `src/script` where `unsafe` code lives: every call into Lua's C API
//! (`mlua::ffi`), the C functions Lua calls back, the signal handler of the watchdog, and
//! the engine's `Effects` lent to `ctx` for the length of a hook call.
//!
//! Everything this module gives the rest of the host is safe to call: each function's
//! preconditions are kept by the types here (a [`MainThread`] keeps its state alive, a
//! lent target is reachable only inside the closure it was lent for, a fast entry is
//! installed at most once per state, a running state is noted only for the length of a
//! closure), never by its callers' discipline. Every `unsafe` block says why it holds.
//! The rest of the crate denies `unsafe` (src/lib.rs), and a tidy test
//! (tests/integration/layers.rs) keeps it so.
//!
//! Must not: use any other module of `src/script` (it is the room below them all), or
//! hand out a raw pointer of Lua's.
//!
//! Relies on mlua's internals (the state's extra space is free for the host, how a Rust
//! function's error reaches the stack, `Lua::get_or_init_from_ptr`): mlua is pinned
//! exactly in Cargo.toml.

mod call;
pub(super) mod fast;
mod lend;
mod load;
mod place;
mod stack;
mod thread;
pub(super) mod watchdog;

pub(super) use call::{Args, Caller, Me, hook_keys};
pub(super) use lend::{Change, Lender, Now, Target};
pub(super) use load::{Parsed, new_lua_with_inspect, parse};
pub(super) use place::{fast_caller, fast_caller_line, outside_fast_call};
pub(super) use stack::{NameOut, TokenOut, cell_list, keep_names, token_list};
pub(super) use thread::MainThread;

/// The processor time this thread has used, where it can be read.
#[cfg(test)]
pub(super) fn thread_cpu_time() -> Option<std::time::Duration> {
    #[cfg(unix)]
    {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: a valid clock id and a pointer to a live timespec.
        if unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &raw mut ts) } == 0 {
            return Some(std::time::Duration::new(
                u64::try_from(ts.tv_sec).unwrap_or(0),
                u32::try_from(ts.tv_nsec).unwrap_or(0),
            ));
        }
    }
    None
}
