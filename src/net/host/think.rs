//! The host's AI decisions share the machine: at most [`HostConfig::ai_workers`]
//! (super::HostConfig::ai_workers) decide at once, whatever the number of games, and a
//! free place goes to the waiting decision whose address was served longest ago (round
//! robin over addresses), so one address's many games get no more of the AI's time than
//! another's one game. A game's own thread still receives and plays its players' moves
//! while another game's AI thinks: only thinking waits here.
//!
//! Must not: hold a place past its guard (a panicking decision gives it back too), or
//! keep a waiting game after the host stops.

use std::collections::{HashMap, VecDeque};
use std::net::IpAddr;
use std::sync::{Condvar, Mutex, MutexGuard};

/// The addresses remembered for their turn, at most (the oldest forgotten first): an
/// address forgotten simply counts as never served.
const REMEMBERED: usize = 4096;

/// The decisions allowed to think at once.
pub(super) struct Gate {
    places: usize,
    state: Mutex<State>,
    changed: Condvar,
}

#[derive(Default)]
struct State {
    busy: usize,
    closed: bool,
    next_ticket: u64,
    /// Waiting decisions: their ticket and address, oldest first.
    waiting: VecDeque<(u64, Option<IpAddr>)>,
    /// When each address was last let in (a ticket number).
    served: HashMap<Option<IpAddr>, u64>,
}

/// A place to think; given back when dropped.
pub(super) struct Place<'a> {
    gate: &'a Gate,
}

impl Drop for Place<'_> {
    fn drop(&mut self) {
        let mut s = self.gate.lock();
        s.busy = s.busy.saturating_sub(1);
        drop(s);
        self.gate.changed.notify_all();
    }
}

impl Gate {
    /// A gate letting `places` decisions think at once (at least one).
    pub(super) fn new(places: usize) -> Gate {
        Gate {
            places: places.max(1),
            state: Mutex::new(State::default()),
            changed: Condvar::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Wait for a place for a decision of a game of `owner`; `None` when the host is
    /// stopping.
    pub(super) fn enter(&self, owner: Option<IpAddr>) -> Option<Place<'_>> {
        let mut s = self.lock();
        let ticket = s.next_ticket;
        s.next_ticket += 1;
        s.waiting.push_back((ticket, owner));
        loop {
            if s.closed {
                s.waiting.retain(|&(t, _)| t != ticket);
                return None;
            }
            if s.busy < self.places && next_in(&s) == Some(ticket) {
                s.waiting.retain(|&(t, _)| t != ticket);
                s.busy += 1;
                if s.served.len() >= REMEMBERED && !s.served.contains_key(&owner) {
                    // Forget the address served longest ago.
                    if let Some(oldest) = s.served.iter().min_by_key(|(_, t)| **t).map(|(a, _)| *a)
                    {
                        s.served.remove(&oldest);
                    }
                }
                s.served.insert(owner, ticket);
                drop(s);
                // Another waiting decision may fit a second place.
                self.changed.notify_all();
                return Some(Place { gate: self });
            }
            s = self
                .changed
                .wait(s)
                .unwrap_or_else(std::sync::PoisonError::into_inner);
        }
    }

    /// The host stops: every waiting decision gives up, and no new one waits.
    pub(super) fn close(&self) {
        self.lock().closed = true;
        self.changed.notify_all();
    }

    /// Decisions waiting now.
    #[cfg(test)]
    fn waiting(&self) -> usize {
        self.lock().waiting.len()
    }
}

/// The waiting decision to let in next: of the address served longest ago (never served
/// first), its oldest.
fn next_in(s: &State) -> Option<u64> {
    s.waiting
        .iter()
        .min_by_key(|(ticket, owner)| (s.served.get(owner).copied(), *ticket))
        .map(|(ticket, _)| *ticket)
}

/// The places by default: half the machine's cores (each `hard` decision searches two
/// trees at once), at least one, so the games' own threads always find a core.
#[must_use]
pub fn default_workers() -> usize {
    std::thread::available_parallelism().map_or(1, |n| (n.get() / 2).max(1))
}

#[cfg(test)]
mod tests {
    use super::Gate;
    use std::net::{IpAddr, Ipv4Addr};
    use std::sync::{Arc, Mutex};
    use std::time::Duration;

    fn ip(last: u8) -> Option<IpAddr> {
        Some(IpAddr::V4(Ipv4Addr::new(127, 0, 0, last)))
    }

    fn wait_until(what: &str, done: impl Fn() -> bool) {
        let start = std::time::Instant::now();
        while !done() {
            assert!(start.elapsed() < Duration::from_secs(10), "{what}");
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    #[test]
    fn an_address_with_one_game_is_served_before_another_addresss_many() {
        let gate = Arc::new(Gate::new(1));
        let order = Arc::new(Mutex::new(Vec::new()));
        // A decision of address 2 holds the one place while others line up: six of
        // address 2's games, then one of address 3.
        let first = gate.enter(ip(2));
        let mut threads = Vec::new();
        for (i, owner) in [2, 2, 2, 2, 2, 2, 3].into_iter().enumerate() {
            let (g, o) = (Arc::clone(&gate), Arc::clone(&order));
            threads.push(std::thread::spawn(move || {
                if let Some(_place) = g.enter(ip(owner)) {
                    o.lock().map(|mut o| o.push(owner)).ok();
                    std::thread::sleep(Duration::from_millis(2));
                }
            }));
            let gate = Arc::clone(&gate);
            wait_until("the decision waits", move || gate.waiting() == i + 1);
        }
        drop(first);
        for t in threads {
            t.join().ok();
        }
        let order = order.lock().map(|o| o.clone()).unwrap_or_default();
        assert_eq!(order.first(), Some(&3), "address 3 goes next: {order:?}");
        assert_eq!(order.len(), 7);
    }

    #[test]
    fn no_more_than_its_places_think_at_once_and_closing_frees_the_waiting() {
        let gate = Arc::new(Gate::new(2));
        let a = gate.enter(ip(2));
        let b = gate.enter(ip(3));
        assert!(a.is_some() && b.is_some());
        let waiting = {
            let gate = Arc::clone(&gate);
            std::thread::spawn(move || gate.enter(ip(4)).is_some())
        };
        let g = Arc::clone(&gate);
        wait_until("the third waits", move || g.waiting() == 1);
        gate.close();
        assert_eq!(waiting.join().ok(), Some(false), "closing sends it away");
        drop((a, b));
        assert!(gate.enter(ip(5)).is_none(), "a closed gate lets nothing in");
    }
}
