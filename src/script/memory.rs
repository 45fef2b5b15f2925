//! Script memory past one pack: what all the packs of a content set may hold together,
//! and what all the script hosts of the process (one per thread that runs scripts) may
//! reserve together.
//!
//! Each pack's Lua state is capped by its own `scripts.memory_kb`. A [`ScriptHost`]
//! reserves, from a pool shared by the whole process, the sum of its packs' caps, at most
//! [`CONTENT_SET_MEMORY`]; when the caps add up past that total, each pack's cap is scaled
//! down to a fixed share of it ([`fixed_share`]), so what one pack's scripts may hold
//! never depends on what another's hold (nor on the garbage they left). A host that
//! cannot reserve its share is not made, so however many threads run scripts, their Lua
//! states never hold more than [`PROCESS_MEMORY`] between them; `simulate` runs as many
//! workers as fit.
//!
//! *Why:* every thread that runs scripts has its own host, so per-pack caps alone multiply
//! by packs and threads. Running out of memory is an overrun no `pcall` keeps (the prelude's
//! `pcall` tells the budget the error it caught), and buffers the host grows for a script
//! (`gsub`'s result) lower the state's limit while they live.
//!
//! [`ScriptHost`]: super::ScriptHost

use std::sync::atomic::{AtomicUsize, Ordering};

use crate::rules::Catalog;

/// Script memory all the packs of one content set may hold together: 128 MiB.
pub const CONTENT_SET_MEMORY: usize = 128 * 1024 * 1024;

/// Script memory all the script hosts of the process may reserve together: 448 MiB
/// (three hosts of a content set at its total).
pub const PROCESS_MEMORY: usize = 448 * 1024 * 1024;

/// Bytes reserved by the script hosts alive now.
static RESERVED: AtomicUsize = AtomicUsize::new(0);

/// The packs of `catalog` that have scripts, with their memory caps, in the catalog's
/// order of packs.
#[must_use]
pub fn pack_caps(catalog: &Catalog) -> Vec<(String, usize)> {
    catalog
        .packs()
        .iter()
        .filter(|p| catalog.scripts().iter().any(|s| s.pack == p.id))
        .map(|p| (p.id.clone(), p.script_memory))
        .collect()
}

/// What one script host for `catalog` reserves: its packs' caps added up, at most
/// [`CONTENT_SET_MEMORY`] (nothing without scripts).
#[must_use]
pub fn host_share(catalog: &Catalog) -> usize {
    let total: usize = pack_caps(catalog).iter().map(|(_, cap)| *cap).sum();
    total.min(CONTENT_SET_MEMORY)
}

/// A pack's memory cap within a content set whose packs' caps add up to `total`: the cap
/// itself, or, past [`CONTENT_SET_MEMORY`], its share of that total in proportion to the
/// cap (so the shares add up to no more than the total).
#[must_use]
pub fn fixed_share(cap: usize, total: usize) -> usize {
    if total <= CONTENT_SET_MEMORY {
        return cap;
    }
    let share = u128::from(cap as u64) * CONTENT_SET_MEMORY as u128 / total as u128;
    usize::try_from(share).unwrap_or(cap).max(1)
}

/// How the caps are scaled down past [`CONTENT_SET_MEMORY`], for messages: "67 %".
#[must_use]
pub fn share_text(total: usize) -> String {
    let percent = u128::from(CONTENT_SET_MEMORY as u64) * 100 / (total.max(1) as u128);
    format!("{percent} %")
}

/// Bytes of [`PROCESS_MEMORY`] no script host holds now.
#[must_use]
pub fn free() -> usize {
    PROCESS_MEMORY.saturating_sub(RESERVED.load(Ordering::Acquire))
}

/// How many script hosts for `catalog` fit in what is free now (as many as wanted
/// without scripts).
#[must_use]
pub fn hosts_that_fit(catalog: &Catalog) -> usize {
    match host_share(catalog) {
        0 => usize::MAX,
        share => free() / share,
    }
}

/// A share of a pool ([`PROCESS_MEMORY`]), given back when dropped.
#[derive(Debug)]
pub(super) struct Reservation {
    bytes: usize,
    pool: &'static AtomicUsize,
}

impl Reservation {
    /// Reserve `bytes` of [`PROCESS_MEMORY`]; when they are not free, the bytes that are.
    pub(super) fn take(bytes: usize) -> Result<Reservation, usize> {
        Reservation::take_from(&RESERVED, PROCESS_MEMORY, bytes)
    }

    fn take_from(
        pool: &'static AtomicUsize,
        size: usize,
        bytes: usize,
    ) -> Result<Reservation, usize> {
        let mut now = pool.load(Ordering::Acquire);
        loop {
            let Some(after) = now.checked_add(bytes).filter(|a| *a <= size) else {
                return Err(size.saturating_sub(now));
            };
            match pool.compare_exchange_weak(now, after, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => return Ok(Reservation { bytes, pool }),
                Err(seen) => now = seen,
            }
        }
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        self.pool.fetch_sub(self.bytes, Ordering::AcqRel);
    }
}

/// Bytes as MiB for messages, rounded up.
pub(super) fn mib(bytes: usize) -> usize {
    bytes.div_ceil(1024 * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reservation_past_the_pool_is_refused_and_one_dropped_is_given_back() {
        static POOL: AtomicUsize = AtomicUsize::new(0);
        let take = |bytes| Reservation::take_from(&POOL, 100, bytes);
        let first = take(60).unwrap_or_else(|f| panic!("{f}"));
        assert_eq!(take(41).map(|_| ()), Err(40), "what is free is told");
        let second = take(40).unwrap_or_else(|f| panic!("{f}"));
        assert_eq!(take(1).map(|_| ()), Err(0));
        drop(first);
        drop(second);
        assert_eq!(POOL.load(Ordering::Acquire), 0, "every byte given back");
        assert!(take(100).is_ok());
        assert_eq!(take(usize::MAX).map(|_| ()), Err(100), "no overflow");
    }

    #[test]
    fn past_the_content_set_total_each_cap_is_scaled_to_a_fixed_share() {
        let mib = 1024 * 1024;
        assert_eq!(
            fixed_share(64 * mib, 100 * mib),
            64 * mib,
            "under the total"
        );
        let caps = [64 * mib, 64 * mib, 64 * mib];
        let total: usize = caps.iter().sum();
        let shares: Vec<usize> = caps.iter().map(|c| fixed_share(*c, total)).collect();
        assert!(shares.iter().sum::<usize>() <= CONTENT_SET_MEMORY);
        assert!(
            shares
                .iter()
                .all(|s| s.abs_diff(CONTENT_SET_MEMORY / 3) <= 1)
        );
        assert_eq!(share_text(total), "66 %");
        assert_eq!(fixed_share(mib, usize::MAX), 1, "never zero (no limit)");
    }
}
