//! The seam where scripts plug into the engine.
//!
//! The rules core never knows what a script is written in: it calls a [`Hooks`] trait
//! object at four points (an ability's `on_place`, a token type's `between_turns`, `income`
//! and `on_destroyed`), and only for entries whose definition names a script. With no
//! scripts in the catalog the engine never calls it, so [`NoHooks`] costs nothing.

use super::board::Token;
use super::effects::Effects;
use super::ids::{Cell, ScriptId, Seat};
use super::state::GameView;

/// A script failed: the move is refused and the state stays as it was.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct HookError {
    /// Where and what, ready to show (`pack/scripts/file.lua:12: message`).
    pub message: String,
}

impl HookError {
    /// A hook error with this message.
    pub fn new(message: impl Into<String>) -> HookError {
        HookError {
            message: message.into(),
        }
    }
}

/// The parts of a move that each get a fresh script budget ([`Hooks::begin_step`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Placing the token and its ability (`on_place`, and every hook it triggers).
    Move,
    /// Between turns and scoring (`between_turns`, `income`, and what they trigger).
    BetweenTurns,
}

/// Script hooks the engine calls during a move. Implemented by the Lua host.
pub trait Hooks {
    /// A step of a move starts. Every hook of every pack that runs until the next step
    /// shares one budget ([`MoveLimits`](super::MoveLimits)); the move's clock starts
    /// with [`Step::Move`]. Called only for catalogs with scripts.
    fn begin_step(&self, step: Step) {
        let _ = step;
    }

    /// The move is over, played or refused: hook calls made outside a move (an AI's
    /// look at the income, say) get budgets of their own again.
    fn end_move(&self) {}

    /// An ability's script runs at the ability step; `fx` knows the placed cell and area.
    fn on_place(&self, script: ScriptId, fx: &mut Effects<'_>) -> Result<(), HookError>;

    /// A scripted token type's between-turns hook, for the token on `cell`.
    fn between_turns(
        &self,
        script: ScriptId,
        fx: &mut Effects<'_>,
        cell: Cell,
    ) -> Result<(), HookError>;

    /// Adjusts the income of the scripted token on `cell`; returns the new income.
    fn income(
        &self,
        script: ScriptId,
        view: &GameView<'_>,
        cell: Cell,
        income: i64,
    ) -> Result<i64, HookError>;

    /// The packs' AI heuristics (`ai.lua`): how good the position is for `seat`, added to
    /// the AI's own evaluation. The engine never calls this; content without heuristics
    /// adds nothing.
    fn evaluate(&self, view: &GameView<'_>, seat: Seat) -> Result<f64, HookError> {
        let _ = (view, seat);
        Ok(0.0)
    }

    /// A scripted token was destroyed by losing value; `token` is what it was on `cell`.
    fn on_destroyed(
        &self,
        script: ScriptId,
        fx: &mut Effects<'_>,
        cell: Cell,
        token: Token,
    ) -> Result<(), HookError>;
}

/// Hooks for a catalog without scripts: every call is an error, and the engine never
/// makes one unless a definition names a script.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoHooks;

impl NoHooks {
    fn missing(script: ScriptId) -> HookError {
        HookError::new(format!(
            "script #{} cannot run: no script host is loaded",
            script.0
        ))
    }
}

impl Hooks for NoHooks {
    fn on_place(&self, script: ScriptId, _: &mut Effects<'_>) -> Result<(), HookError> {
        Err(Self::missing(script))
    }

    fn between_turns(
        &self,
        script: ScriptId,
        _: &mut Effects<'_>,
        _: Cell,
    ) -> Result<(), HookError> {
        Err(Self::missing(script))
    }

    fn income(
        &self,
        script: ScriptId,
        _: &GameView<'_>,
        _: Cell,
        _: i64,
    ) -> Result<i64, HookError> {
        Err(Self::missing(script))
    }

    fn on_destroyed(
        &self,
        script: ScriptId,
        _: &mut Effects<'_>,
        _: Cell,
        _: Token,
    ) -> Result<(), HookError> {
        Err(Self::missing(script))
    }
}
