//! Lending the engine's `Effects` (or, for a read-only hook, a `GameView`) to the `ctx`
//! functions for the length of one hook call.
//!
//! The `ctx` functions are called from Lua, so they cannot be handed a borrow: the
//! [`Lender`] keeps the lent target as a pointer whose lifetime is erased, and gives it out
//! again only inside a closure, with a lifetime no longer than that closure's and no
//! longer than the one [`Lender::lend`] lent it for. Nothing outside this file sees the
//! pointer. What it guarantees by construction:
//!
//! - a target is reachable only while the closure given to [`Lender::lend`] runs (the
//!   previous one is put back when it returns or unwinds);
//! - reads of lent effects may nest, a change excludes everything else: a read inside a
//!   change, or a change inside a read, finds the target [`Now::Busy`] instead of a
//!   second borrow. A hook nested in a change (an `on_destroyed` inside `ctx:damage`) is
//!   lent the effects the change passed it, which are its own to lend.

use std::cell::Cell;
use std::ptr::NonNull;

use crate::rules::{Effects, GameView};

/// What a hook call lends to `ctx`.
pub(in crate::script) enum Target<'a, 'b> {
    /// A hook that may change the game.
    Effects(&'a mut Effects<'b>),
    /// The read-only `income` and `evaluate` hooks.
    View(&'a GameView<'b>),
}

/// What is lent now. The pointers' lifetimes are erased: they are only ever turned back
/// into borrows handed to closures that cannot name them (see [`Lender::read`]).
#[derive(Clone, Copy)]
enum Lent {
    /// No hook call is under way.
    Idle,
    /// Effects, not reached by any `ctx` function now.
    Effects(NonNull<Effects<'static>>),
    /// Effects read by a `ctx` function now: more reads may nest, no change may.
    Reading(NonNull<Effects<'static>>),
    /// Effects changed by a `ctx` function now: nothing else may reach them.
    Writing,
    /// A read-only view.
    View(NonNull<GameView<'static>>),
}

/// What a `ctx` function finds when it reads.
pub(in crate::script) enum Now<'a, 'b> {
    /// No hook call is under way: `ctx` is used outside its call.
    Idle,
    /// The effects of a hook that may change the game.
    Effects(&'a Effects<'b>),
    /// The view of a read-only hook.
    View(&'a GameView<'b>),
    /// A change is under way (only a bug of the host reads then).
    Busy,
}

/// What a `ctx` function finds when it changes the game.
pub(in crate::script) enum Change<'a, 'b> {
    /// No hook call is under way.
    Idle,
    /// The effects, its alone until the closure returns.
    Effects(&'a mut Effects<'b>),
    /// A read-only hook: nothing may change.
    View,
    /// A read or a change is under way (only a bug of the host changes then).
    Busy,
}

/// Where a hook call's target is lent to its `ctx` functions.
pub(in crate::script) struct Lender {
    lent: Cell<Lent>,
}

impl Default for Lender {
    fn default() -> Self {
        Lender {
            lent: Cell::new(Lent::Idle),
        }
    }
}

/// Puts back what was lent before, also when the closure unwinds.
struct Restore<'a> {
    lender: &'a Lender,
    previous: Lent,
}

impl Drop for Restore<'_> {
    fn drop(&mut self) {
        self.lender.lent.set(self.previous);
    }
}

impl Lender {
    /// Lend `target` to the `ctx` functions while `f` runs. Nested lends (a hook inside a
    /// `ctx` call) lend their own target and put this one back when they end.
    #[inline]
    pub fn lend<R>(&self, target: &mut Target<'_, '_>, f: impl FnOnce() -> R) -> R {
        let lent = match target {
            Target::Effects(fx) => Lent::Effects(NonNull::from(&mut **fx).cast()),
            Target::View(view) => Lent::View(NonNull::from(&**view).cast()),
        };
        let _restore = Restore {
            lender: self,
            previous: self.lent.replace(lent),
        };
        f()
    }

    /// `f` of what is lent now, read only.
    #[inline]
    pub fn read<R>(&self, f: impl FnOnce(Now<'_, '_>) -> R) -> R {
        match self.lent.get() {
            Lent::Idle => f(Now::Idle),
            Lent::Writing => f(Now::Busy),
            Lent::Effects(p) => {
                self.lent.set(Lent::Reading(p));
                // SAFETY: `p` was made by `lend` from a `&mut Effects` that `lend` keeps
                // borrowed while its closure runs, and `lend` puts the previous state back
                // before it returns, so `p` points at live effects now. No `&mut` to them
                // is out (the state was not `Writing`), and until this read ends a change
                // finds `Reading` and gets nothing. The borrow's lifetimes are the
                // closure's own (it cannot name the erased one).
                let result = f(Now::Effects(unsafe { p.as_ref() }));
                self.lent.set(Lent::Effects(p));
                result
            }
            // SAFETY: as above: a nested read of effects read already (shared borrows).
            Lent::Reading(p) => f(Now::Effects(unsafe { p.as_ref() })),
            // SAFETY: made by `lend` from a shared borrow it holds while its closure runs.
            Lent::View(p) => f(Now::View(unsafe { p.as_ref() })),
        }
    }

    /// `f` of what is lent now, to change the game.
    #[inline]
    pub fn change<R>(&self, f: impl FnOnce(Change<'_, '_>) -> R) -> R {
        match self.lent.get() {
            Lent::Idle => f(Change::Idle),
            Lent::View(_) => f(Change::View),
            Lent::Reading(_) | Lent::Writing => f(Change::Busy),
            Lent::Effects(mut p) => {
                self.lent.set(Lent::Writing);
                // SAFETY: `p` points at live effects (see `read`) that no other borrow
                // reaches now: the state was neither `Reading` nor `Writing`, and until
                // this change ends every read and change finds `Writing` and gets nothing
                // (a hook nested in the change is lent the effects the change passes it,
                // reborrowed from this one). The lifetimes are the closure's own.
                let result = f(Change::Effects(unsafe { p.as_mut() }));
                self.lent.set(Lent::Effects(p));
                result
            }
        }
    }
}
