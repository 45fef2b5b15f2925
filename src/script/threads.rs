//! The one way Tokensmith starts a thread: with a name and the stack a script hook needs
//! ([`THREAD_STACK`]), or, for a thread that only moves bytes, a small one
//! ([`spawn_light`]). Any thread may come to run a hook — an AI decision, a content load
//! with load-time scripts, a deck checked against scripted cards — so none is left with
//! the platform's default stack (2 MiB for Rust's threads, less on some systems), where a
//! deep but legal hook would overflow before the script's own depth limit stops it.
//!
//! Must not: be bypassed. A tidy test (tests/integration/layers.rs) fails on a
//! `std::thread::Builder`, `thread::spawn` or `spawn_scoped` anywhere else in `src/`, the
//! watchdog's tiny thread in `raw/` aside (it never runs Lua); simulations' rayon pools are
//! built in one place (`ai::simulate`) with the same stack.

use std::thread::{JoinHandle, Scope, ScopedJoinHandle};

use super::THREAD_STACK;

/// Start `f` on a new thread called `name` with the stack hooks need.
///
/// # Errors
/// When the system refuses the thread (out of threads or memory).
pub fn spawn<F, T>(name: &str, f: F) -> std::io::Result<JoinHandle<T>>
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    std::thread::Builder::new()
        .name(name.to_string())
        .stack_size(THREAD_STACK)
        .spawn(f)
}

/// The stack of a thread that never runs a hook ([`spawn_light`]).
pub const LIGHT_STACK: usize = 1024 * 1024;

/// Start `f` on a new thread called `name` with a small stack ([`LIGHT_STACK`]): for the
/// many threads that only move bytes and never run a hook or load content (a LAN
/// connection's writer, the accept loop, the discovery beacon, a reader of stdin), so a
/// host with hundreds of them does not reserve a hook stack for each.
///
/// # Errors
/// When the system refuses the thread.
pub fn spawn_light<F, T>(name: &str, f: F) -> std::io::Result<JoinHandle<T>>
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    std::thread::Builder::new()
        .name(name.to_string())
        .stack_size(LIGHT_STACK)
        .spawn(f)
}

/// Start `f` on a new thread of `scope` called `name` with the stack hooks need.
///
/// # Errors
/// When the system refuses the thread.
pub fn spawn_scoped<'scope, F, T>(
    scope: &'scope Scope<'scope, '_>,
    name: &str,
    f: F,
) -> std::io::Result<ScopedJoinHandle<'scope, T>>
where
    F: FnOnce() -> T + Send + 'scope,
    T: Send + 'scope,
{
    std::thread::Builder::new()
        .name(name.to_string())
        .stack_size(THREAD_STACK)
        .spawn_scoped(scope, f)
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_thread_gets_its_name_and_a_deep_stack() {
        let handle = super::spawn("deep", || {
            // 8 MiB on the stack: more than a default thread has, well within ours.
            let big = [7u8; 8 * 1024 * 1024];
            (
                std::thread::current().name().map(str::to_string),
                std::hint::black_box(&big)
                    .iter()
                    .map(|&b| u64::from(b))
                    .sum::<u64>(),
            )
        });
        let (name, sum) = handle.ok().and_then(|h| h.join().ok()).unwrap_or_default();
        assert_eq!(name.as_deref(), Some("deep"));
        assert_eq!(sum, 7 * 8 * 1024 * 1024);
    }
}
