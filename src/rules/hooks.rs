//! The seam where scripts plug into the engine.
//!
//! The rules core never knows what a script is written in: it calls a [`Hooks`] trait
//! object at four points (an ability's `on_place`, a token type's `between_turns`, `income`
//! and `on_destroyed`), and only for entries whose definition names a script. With no
//! scripts in the catalog the engine never calls it, so [`NoHooks`] costs nothing.

use super::board::Token;
use super::effects::Effects;
use super::ids::{Cell, ScriptId};
use super::state::GameView;

/// A script failed: the move is refused and the state stays as it was. Callers match on
/// [`HookError::kind`] and read [`HookError::place`]; `message` is the text to show.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct HookError {
    /// What went wrong, for callers to match on.
    pub kind: HookErrorKind,
    /// The script file and line it happened at, when known.
    pub place: Option<ScriptPlace>,
    /// Where and what, ready to show (`pack/scripts/file.lua:12: message`).
    pub message: String,
}

/// What kind of failure a [`HookError`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum HookErrorKind {
    /// The script raised an error, or called `ctx` wrongly (a cell off the board, an
    /// unknown token type, a bad argument).
    Script,
    /// A limit of the move or the call was passed: instructions, the move's clock, hook
    /// nesting, events or log text (`rules.limits`, `scripts.instructions`), or memory.
    Limit,
    /// A hook returned a value of the wrong type (`income` must give a whole number,
    /// `evaluate` a number).
    Return,
    /// The host could not run the hook at all (no script host, a script not loaded, a
    /// script's state that could not be put back).
    Host,
}

/// A place in a script: `pack/path.lua` and a line (1-based).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ScriptPlace {
    /// The script, as messages name it (`pack/scripts/file.lua`).
    pub script: String,
    /// The line.
    pub line: u32,
}

impl HookError {
    /// A script error ([`HookErrorKind::Script`]) with this message; its place is read
    /// from a leading `pack/file.lua:LINE: ` if it has one.
    pub fn new(message: impl Into<String>) -> HookError {
        HookError::of(HookErrorKind::Script, message)
    }

    /// An error of `kind` with this message (its place read as for [`HookError::new`]).
    pub fn of(kind: HookErrorKind, message: impl Into<String>) -> HookError {
        let message = message.into();
        HookError {
            kind,
            place: ScriptPlace::leading(&message),
            message,
        }
    }
}

impl ScriptPlace {
    /// The place a message starts with (`pack/scripts/file.lua:12: …`), if any.
    #[must_use]
    pub fn leading(message: &str) -> Option<ScriptPlace> {
        let (place, _) = split_place(message)?;
        let (script, line) = place.rsplit_once(':')?;
        Some(ScriptPlace {
            script: script.to_string(),
            line: line.parse().ok()?,
        })
    }
}

/// `pack/file.lua:LINE: rest` → (`pack/file.lua:LINE`, `rest`): the one reading of the
/// place Lua and the host put at the start of a script's error.
#[must_use]
pub fn split_place(text: &str) -> Option<(&str, &str)> {
    let lua_end = text.find(".lua:")? + ".lua:".len();
    let after = &text[lua_end..];
    let digits = after.find(|c: char| !c.is_ascii_digit())?;
    if digits == 0 || !after[digits..].starts_with(": ") {
        return None;
    }
    Some((&text[..lua_end + digits], &after[digits + 2..]))
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
        HookError::of(
            HookErrorKind::Host,
            format!("script #{} cannot run: no script host is loaded", script.0),
        )
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
