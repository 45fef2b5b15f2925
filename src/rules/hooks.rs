//! What a script hook's failure is ([`HookError`]: its kind, its place, its text) and the
//! steps of a move that each get a fresh script budget ([`BudgetStep`]). The hooks themselves
//! are the [`Hooks`](super::Hooks) trait, beside the `Effects` they receive.
//!
//! A `HookError`'s place ([`ScriptPlace`]) is given by whoever makes it, when known;
//! callers match on its kind, never on its text.

/// A script failed: the move is refused and the state stays as it was. Callers match on
/// [`HookError::kind`] and read [`HookError::place`]; `message` is the text to show.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct HookError {
    /// What went wrong, for callers to match on.
    pub kind: HookErrorKind,
    /// The script file and line it happened at, when known.
    pub place: Option<ScriptPlace>,
    /// Where and what, ready to show (`pack/scripts/file.lua:12: message`): the place is
    /// in the text too, as users read it.
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
    /// A script error ([`HookErrorKind::Script`]) with this message and no place.
    pub fn new(message: impl Into<String>) -> HookError {
        HookError::of(HookErrorKind::Script, message)
    }

    /// An error of `kind` with this message and no place (a limit of the move, the host).
    pub fn of(kind: HookErrorKind, message: impl Into<String>) -> HookError {
        HookError::at(kind, None, message)
    }

    /// An error of `kind` at `place` (the script and line it happened at, when known),
    /// with this message.
    pub fn at(
        kind: HookErrorKind,
        place: Option<ScriptPlace>,
        message: impl Into<String>,
    ) -> HookError {
        HookError {
            kind,
            place,
            message: message.into(),
        }
    }
}

/// The parts of a move that each get a fresh script budget
/// ([`Hooks::begin_step`](super::Hooks::begin_step)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BudgetStep {
    /// Placing the token and its ability (`on_place`, and every hook it triggers).
    Move,
    /// Between turns and scoring (`between_turns`, `income`, and what they trigger).
    BetweenTurns,
}
