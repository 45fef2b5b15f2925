//! Script memory past one pack: what all the packs of a content set may hold together,
//! and what all the script hosts of the process (one per thread that runs scripts) may
//! reserve together.
//!
//! Each pack's Lua state is capped by its own `scripts.memory_kb`. A [`ScriptHost`]
//! reserves, from a pool shared by the whole process, the sum of its packs' caps, at most
//! [`CONTENT_SET_MEMORY`]; past that sum the packs share the content set's total (a
//! meter every hook call reads). A host that cannot reserve its share is not made, so
//! however many threads run scripts, their Lua states never hold more than
//! [`PROCESS_MEMORY`] between them; `simulate` runs as many workers as fit.
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
}
