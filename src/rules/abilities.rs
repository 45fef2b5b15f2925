//! Built-in ability effects, each one implementation over the [`Effects`] primitives.
//!
//! The order rules of docs/rules.md live here: targets off the board are skipped; within one
//! ability a token moves at most once; `push` and `flip` visit targets farthest from the
//! placed token first (Chebyshev distance), ties in the order the area lists them.

use super::defs::{Amount, Effect};
use super::effects::Hooks;
use super::effects::{Effects, MoveResult};
use super::hooks::HookError;
use super::ids::Cell;
use super::never::never;

/// Cells whose token already moved during the current ability.
#[derive(Default)]
struct Moved([u64; 3]);

impl Moved {
    fn set(&mut self, index: usize) {
        if let Some(word) = self.0.get_mut(index / 64) {
            *word |= 1 << (index % 64);
        }
    }

    fn has(&self, index: usize) -> bool {
        self.0
            .get(index / 64)
            .is_some_and(|w| w & (1 << (index % 64)) != 0)
    }
}

/// Resolve `effect` over the area of `fx` (centred on the placed token).
pub(crate) fn resolve(
    fx: &mut Effects<'_>,
    hooks: &dyn Hooks,
    effect: &Effect,
) -> Result<(), HookError> {
    match *effect {
        Effect::Damage { amount } => damage(fx, amount),
        Effect::Push => displace(fx, Swaps::Never, |origin, target| {
            Cell::new(
                target.x + (target.x - origin.x).signum(),
                target.y + (target.y - origin.y).signum(),
            )
        }),
        Effect::Flip => displace(fx, Swaps::WithUnmovedTargets, |origin, target| {
            Cell::new(2 * origin.x - target.x, 2 * origin.y - target.y)
        }),
        Effect::Spawn { owner, value, kind } => {
            let seat = owner.seat(fx.mover());
            for cell in fx.targets() {
                if fx.state().board().get(cell).is_none() {
                    fx.spawn(cell, seat, value, kind)?;
                }
            }
            Ok(())
        }
        Effect::ExtraTurn { player, area_full } => {
            if !area_full || is_area_full(fx) {
                fx.extra_turn(player.seat(fx.mover()));
            }
            Ok(())
        }
        Effect::SwapWithLast => {
            // `last_placed` follows the placed token and is gone when it is: a placed token
            // destroyed at once swaps with nothing.
            if let (Some(here), Some(prev)) = (fx.state().last_placed, fx.state().prev_placed)
                && here != prev
            {
                fx.swap_indices(usize::from(here), usize::from(prev));
            }
            Ok(())
        }
        Effect::Transform { into, max_value } => {
            for cell in fx.targets() {
                let eligible = fx
                    .state()
                    .board()
                    .get(cell)
                    .is_some_and(|t| max_value.is_none_or(|m| t.value <= m));
                if eligible {
                    fx.set_type(cell, into)?;
                }
            }
            Ok(())
        }
        Effect::NextTokenBonus { amount } => {
            fx.next_token_bonus(fx.mover(), amount);
            Ok(())
        }
        Effect::Script(script) => hooks.on_place(script, fx),
    }
}

fn damage(fx: &mut Effects<'_>, amount: Amount) -> Result<(), HookError> {
    let amount = match amount {
        Amount::Fixed(n) => n,
        Amount::FriendlyInArea => {
            let mover = fx.mover();
            let board = fx.state().board();
            let count = fx
                .targets()
                .filter(|&c| board.get(c).is_some_and(|t| t.seat == mover))
                .count();
            // At most MAX_CELLS tokens.
            i32::try_from(count).unwrap_or_else(|_| never!(i32::MAX, "{count} tokens in an area"))
        }
    };
    if amount == 0 {
        return Ok(());
    }
    for cell in fx.targets() {
        fx.damage(cell, amount)?;
    }
    Ok(())
}

fn is_area_full(fx: &Effects<'_>) -> bool {
    let board = fx.state().board();
    fx.area()
        .cells_from(fx.origin())
        .all(|c| board.get(c).is_some())
}

/// Whether a displaced token blocked by another target swaps with it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Swaps {
    Never,
    WithUnmovedTargets,
}

/// Push and flip: move each target token to `destination(origin, target)`, farthest
/// targets first; with [`Swaps::WithUnmovedTargets`] a token blocked by another target
/// that has not moved yet swaps with it.
fn displace(
    fx: &mut Effects<'_>,
    swaps: Swaps,
    destination: impl Fn(Cell, Cell) -> Cell,
) -> Result<(), HookError> {
    let origin = fx.origin();
    let area = fx.area();
    let is_target = |cell: Cell| area.covers(origin, cell);
    let mut moved = Moved::default();
    for target in area.cells_farthest_first(origin) {
        let Some(index) = fx.state().board().index(target) else {
            continue;
        };
        if fx.state().board().at(index).is_none() || moved.has(index) {
            continue;
        }
        let dest = destination(origin, target);
        match fx.move_index(index, dest) {
            MoveResult::Moved => {
                if let Some(d) = fx.state().board().index(dest) {
                    moved.set(d);
                }
            }
            MoveResult::Blocked if swaps == Swaps::WithUnmovedTargets && is_target(dest) => {
                if let Some(d) = fx.state().board().index(dest)
                    && !moved.has(d)
                {
                    fx.swap_indices(index, d);
                    moved.set(index);
                    moved.set(d);
                }
            }
            MoveResult::Blocked | MoveResult::Removed | MoveResult::NoToken => {}
        }
    }
    Ok(())
}
