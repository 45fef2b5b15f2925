//! Running hooks: [`ScriptHost`] implements the rules core's [`Hooks`], each call made
//! with `ctx` pointing at the engine's effects or a read-only view, within the move's
//! budget, and a failure turned into a [`HookError`].
//!
//! Must not: compile scripts or make states (that is [`super::host`]).
//!
//! A call lends `ctx` its target (the engine's `Effects`, or a `GameView` for `income` and
//! `evaluate`) and runs within the move's budget and the pack's memory; a failure becomes a
//! `HookError` with its kind and its place. A script's state is put back (the `restore` of
//! its upvalues) before the first hook call of that script in each move after its hooks
//! ran, and before each hook call made outside a move, counted against that move's budget
//! and clock; a failure putting it back refuses that move only. Hook calls continue on a
//! fresh stack segment (`stacker::maybe_grow`, `STACK_RED_ZONE`, `STACK_SEGMENT`) when the
//! thread's stack is low (the client's main thread, whose size is the system's choice).
//! `ScriptHost::heuristics` calls a pack's `ai.lua` (`evaluate`): not part of `rules::Hooks`,
//! since the engine never calls it.

use mlua::Value;

use super::host::{Hook, PackState, Script, ScriptHost};
use super::message::{is_memory, lua_place, message};
use super::raw::{self as call, Target};
use super::{STACK_RED_ZONE, STACK_SEGMENT, budget, ctx, memo, memory, sandbox};
use crate::rules::{
    Cell, Effects, GameView, HookError, HookErrorKind, Hooks, ScriptId, ScriptPlace, Token,
};

/// What a hook call is passed besides its script, hook and `ctx` fields, for naming it
/// to replay it (`memo.rs`): its `self` token and its number. `None`: never replayed.
type Passed = Option<(Option<(Cell, Token)>, Option<i64>)>;

impl Script {
    /// Where `hook` of this script starts, when it is a function of the script's own (a
    /// hook may be one of the sandbox's, such as `tostring`).
    fn first_line(&self, hook: Hook) -> Option<ScriptPlace> {
        let info = self.hooks[hook as usize].as_ref()?.info();
        let from = info.source.as_deref()?.trim_start_matches(['@', '=']);
        let line = u32::try_from(info.line_defined?).ok()?;
        (from == self.name).then(|| ScriptPlace {
            script: self.name.clone(),
            line,
        })
    }
}

/// A hook error of `hook` of script `s`. A text Lua gave already says where
/// (`file:line: `) or at least which script; any other is put in this script and hook.
fn failure(
    s: &Script,
    hook: Hook,
    kind: HookErrorKind,
    place: Option<ScriptPlace>,
    text: String,
) -> HookError {
    let from_lua = lua_place(&text);
    if from_lua.is_some() || text.starts_with(&s.name) {
        HookError::at(kind, place.or(from_lua), text)
    } else {
        let text = format!("{}: in {}: {text}", s.name, hook.name());
        HookError::at(kind, place, text)
    }
}

/// A hook call made ready to run: its script, the script's state and the function.
struct Ready<'h> {
    script: ScriptId,
    s: &'h Script,
    state: &'h PackState,
    function: &'h mlua::RegistryKey,
    /// Whether no other hook call of this state is under way (a hook nested in another
    /// of the same pack, an on_destroyed inside ctx:damage, shares the ctx table).
    outermost: bool,
}

/// What a hook call that ran in Lua left besides its result: the record to keep (its
/// key, the `ctx` calls and what they cost) when the call may be replayed.
type Recorded = Option<(memo::Key, Box<[memo::Op]>, u64)>;

impl ScriptHost {
    /// Run `hook` of `script` with `target` lent to `ctx`. `passed` names the call for
    /// replaying it.
    ///
    /// The steps: [`ScriptHost::prepare`] finds the hook and puts the script's state
    /// back; the budget is entered; a recorded call is replayed when it can be
    /// ([`ScriptHost::replay`]); else the hook runs in Lua ([`ScriptHost::run_lua`]) and
    /// its outcome becomes the call's result or a [`HookError`]
    /// ([`ScriptHost::classify`]).
    #[allow(clippy::too_many_arguments)]
    fn call(
        &self,
        script: ScriptId,
        hook: Hook,
        fields: (crate::rules::Seat, Option<Cell>),
        passed: Passed,
        args: call::Args,
        mut target: Target<'_, '_>,
    ) -> Result<Option<Value>, HookError> {
        let Some(ready) = self.prepare(script, hook)? else {
            return Ok(None);
        };
        self.budget
            .enter(hook.name(), ready.state.instructions)
            .map_err(|e| failure(ready.s, hook, HookErrorKind::Limit, None, e.to_string()))?;
        let outermost = ready.outermost;
        // Only an outermost call of a script without state is replayed or recorded: its
        // count starts from zero, and it depends on nothing but its arguments and ctx.
        let key = passed
            .filter(|_| outermost && ready.s.snapshot.is_none() && self.memo.enabled())
            .map(|(me, number)| memo::Key::new(script, hook as u8, fields, me, number));
        if let Some(k) = &key
            && let Some(done) = self.replay(&ready, hook, k, &mut target)
        {
            return done;
        }
        // A nested call gives the outer call its fields back afterwards.
        let saved = (!outermost).then(|| ready.state.slot.fields.get());
        let (result, recorded) = self.run_lua(&ready, hook, fields, key, args, &mut target);
        self.budget.leave();
        let result = self.classify(&ready, hook, result, recorded);
        if let Some(fields) = saved {
            ready.state.slot.fields.set(fields);
        }
        result
    }

    /// Find `hook` of `script` (`None`: the script has no such hook) and put the
    /// script's state back when an earlier move's hooks left it changed.
    fn prepare(&self, script: ScriptId, hook: Hook) -> Result<Option<Ready<'_>>, HookError> {
        if !self.memo.starting() {
            // A change a replay made again would start this hook: the replay is undone
            // and its call runs in Lua instead (nothing of this one has run).
            return Err(HookError::of(
                HookErrorKind::Host,
                format!("{} would run during a replay", hook.name()),
            ));
        }
        let Some(Some(s)) = self.scripts.get(script.index()) else {
            return Err(HookError::of(
                HookErrorKind::Host,
                format!("script #{} is not loaded", script.0),
            ));
        };
        let Some(function) = &s.keys[hook as usize] else {
            return Ok(None);
        };
        if self.budget.starts_episode() {
            // A call outside any move starts from the scripts' loaded state too.
            self.serial.set(self.serial.get() + 1);
        }
        let state = &self.states[s.state];
        if let Some(snapshot) = &s.snapshot
            && s.serial.get() != self.serial.get()
        {
            if s.dirty.get() {
                self.put_back(s, state, snapshot)?;
            }
            s.serial.set(self.serial.get());
        }
        Ok(Some(Ready {
            script,
            s,
            state,
            function,
            outermost: state.depth.get() == 0,
        }))
    }

    /// Play the call named `key` back from one of its records, when one goes as
    /// recorded (`memo.rs`): the call's result, the budget left. `None`: no record
    /// went, nothing of the call has run, and the budget is still entered.
    fn replay(
        &self,
        ready: &Ready<'_>,
        hook: Hook,
        key: &memo::Key,
        target: &mut Target<'_, '_>,
    ) -> Option<Result<Option<Value>, HookError>> {
        let variants = self.memo.get(key)?;
        let state = ready.state;
        let replayed = state.slot.lend(target, ready.script, || {
            state.slot.replay(
                &state.lua,
                &variants,
                |cost| self.budget.affords(cost),
                &mut self.memo.replaying(),
            )
        });
        self.memo.replayed(replayed.is_some());
        let entry = replayed.and_then(|i| {
            self.memo.promote(key, i);
            variants.0[i].as_ref()
        })?;
        let charged = self.budget.charge_whole(entry.cost);
        self.budget.leave();
        Some(match charged {
            Ok(()) => Ok(Some(entry.returned.value())),
            Err(o) => {
                // Replayed, the call ran no line of its own: the overrun (the move's
                // clock, whose last reading came before) is put at the hook's first line.
                let place = ready.s.first_line(hook);
                let text = match &place {
                    Some(p) => format!("{}:{}: {}", p.script, p.line, o.describe()),
                    None => o.describe(),
                };
                Err(failure(ready.s, hook, HookErrorKind::Limit, place, text))
            }
        })
    }

    /// Run the hook in Lua (recording its `ctx` calls when `key` names it): its result,
    /// and the record to keep if it may be replayed. The budget stays entered.
    fn run_lua(
        &self,
        ready: &Ready<'_>,
        hook: Hook,
        fields: (crate::rules::Seat, Option<Cell>),
        key: Option<memo::Key>,
        args: call::Args,
        target: &mut Target<'_, '_>,
    ) -> (mlua::Result<Value>, Recorded) {
        let (s, state) = (ready.s, ready.state);
        let outermost = ready.outermost;
        let before = (self.budget.used(), self.memo.calls(), self.budget.caught());
        if key.is_some() {
            state.slot.memo.start();
        }
        state.depth.set(state.depth.get() + 1);
        if s.snapshot.is_some() {
            s.dirty.set(true);
        }
        // However deep hooks nest, across however many packs, the call never runs out of
        // native stack: it continues on a fresh segment when the thread's is low.
        let result = state.slot.lend(target, ready.script, || {
            stacker::maybe_grow(STACK_RED_ZONE, STACK_SEGMENT, || {
                // ctx's fields for this call; an outermost call also counts its
                // instructions from zero, whatever ran before it in this state.
                let counted = state.ctx.set_fields(&state.slot, fields, outermost);
                if !counted {
                    sandbox::install_hook(&state.lua, &state.budget)?;
                }
                // The hook's own ctx calls find their own lines, not those of a ctx call
                // this hook runs inside.
                call::outside_fast_call(|| {
                    // `income` and `evaluate` give a value back; the other hooks' results
                    // are ignored.
                    let wants = matches!(hook, Hook::Income | Hook::Evaluate);
                    self.budget.guard(state.ctx.main(), || {
                        state.caller.call(ready.function, args, wants)
                    })
                })
            })
        });
        state.depth.set(state.depth.get() - 1);
        let recorded = key
            .and_then(|k| Some((k, state.slot.memo.stop()?)))
            // Not a call that started another, nor one that caught an error (it may have
            // run out of memory, which depends on more than its arguments).
            .filter(|_| self.memo.calls() == before.1 && self.budget.caught() == before.2)
            .map(|(k, ops)| (k, ops, self.budget.used().saturating_sub(before.0)));
        (result, recorded)
    }

    /// What a hook call that ran in Lua gives: its value (keeping its record), or the
    /// error that fails it. A bad `ctx` call the script caught still fails the hook
    /// (read-only hooks too), and so does a spent budget, whatever the script did with
    /// the error.
    fn classify(
        &self,
        ready: &Ready<'_>,
        hook: Hook,
        result: mlua::Result<Value>,
        recorded: Recorded,
    ) -> Result<Option<Value>, HookError> {
        let state = ready.state;
        let exceeded = self.budget.exceeded();
        let failure_kept = state.slot.take_failure();
        let result = match result {
            // The common case: the hook ran to its end and nothing failed.
            Ok(value) if failure_kept.is_none() && exceeded.is_none() => {
                if let Some((k, ops, cost)) = recorded {
                    self.memo.keep(k, ops, cost, &value);
                }
                return Ok(Some(value));
            }
            other => other,
        };
        // A bad ctx call fails the hook whatever the script did with its error: its kind
        // and place are the hook's.
        let (result, known, place) = match (result, failure_kept, exceeded) {
            (Ok(_), Some(failure), _) => (
                Err(mlua::Error::RuntimeError(failure.message)),
                Some(failure.kind),
                failure.place,
            ),
            (Ok(_), None, Some(o)) => (
                Err(mlua::Error::RuntimeError(o.describe())),
                Some(HookErrorKind::Limit),
                None,
            ),
            (result, failure, _) => (
                result,
                failure.as_ref().map(|f| f.kind),
                failure.and_then(|f| f.place),
            ),
        };
        result.map(Some).map_err(|e| {
            let kind = if is_memory(&e) || exceeded.is_some() {
                HookErrorKind::Limit
            } else {
                known.unwrap_or(HookErrorKind::Script)
            };
            let memory_out = exceeded == Some(budget::Overrun::Memory);
            // Running out of memory that a `pcall` caught (and re-raised) says so, not
            // what the script's error handling made of it.
            let mut text = if memory_out && !is_memory(&e) {
                budget::Overrun::Memory.describe()
            } else {
                message(&e)
            };
            if self.shared.is_some() && (is_memory(&e) || memory_out) {
                text.push_str(&format!(
                    " (its share of the {} MiB all packs' scripts hold together: {} MiB)",
                    memory::mib(memory::CONTENT_SET_MEMORY),
                    memory::mib(state.cap)
                ));
            }
            failure(ready.s, hook, kind, place, text)
        })
    }

    /// Put back the upvalues `s`'s top level left (its hooks ran in an earlier move),
    /// counted against this move's budget and clock like a hook: the work grows with what
    /// the top level captured (capped at load), and a failure is this move's and this
    /// script's alone (the next move tries again; other scripts never see it).
    fn put_back(
        &self,
        s: &Script,
        state: &PackState,
        snapshot: &mlua::Table,
    ) -> Result<(), HookError> {
        let fail = |kind: HookErrorKind, text: String| {
            HookError::of(
                kind,
                format!(
                    "{}: putting back the script's state before this move: {text}",
                    s.name
                ),
            )
        };
        self.budget
            .enter("putting back the script's state", u64::MAX)
            .map_err(|e| fail(HookErrorKind::Limit, e.to_string()))?;
        let result = state.freeze.restore(snapshot);
        self.budget.leave();
        match (result, self.budget.exceeded()) {
            (_, Some(o)) => Err(fail(HookErrorKind::Limit, o.describe())),
            (Ok(()), None) => {
                s.dirty.set(false);
                Ok(())
            }
            (Err(e), None) => Err(fail(
                if is_memory(&e) {
                    HookErrorKind::Limit
                } else {
                    HookErrorKind::Host
                },
                message(&e),
            )),
        }
    }
}

impl Hooks for ScriptHost {
    fn begin_step(&self, step: crate::rules::BudgetStep) {
        if step == crate::rules::BudgetStep::Move {
            self.serial.set(self.serial.get() + 1);
        }
        self.budget.begin_step(step);
    }

    fn end_move(&self) {
        self.budget.end_move();
    }

    fn begin_look(&self) {
        self.budget.begin_look();
    }

    fn end_look(&self) {
        self.budget.end_look();
    }

    fn on_place(&self, script: ScriptId, fx: &mut Effects<'_>) -> Result<(), HookError> {
        let (mover, origin) = (fx.mover(), fx.origin());
        self.call(
            script,
            Hook::OnPlace,
            (mover, Some(origin)),
            Some((None, None)),
            call::Args::CTX,
            Target::Effects(fx),
        )
        .map(|_| ())
    }

    fn between_turns(
        &self,
        script: ScriptId,
        fx: &mut Effects<'_>,
        cell: Cell,
    ) -> Result<(), HookError> {
        let mover = fx.mover();
        let token = fx.state().board().get(cell);
        let view_token = token.map(|t| (cell, t));
        self.call(
            script,
            Hook::BetweenTurns,
            (mover, Some(cell)),
            Some((view_token, None)),
            call::Args {
                me: Some(match view_token {
                    Some((at, t)) => call::Me::Token(ctx::TokenOut::new(at, t)),
                    None => call::Me::Nil,
                }),
                number: None,
            },
            Target::Effects(fx),
        )
        .map(|_| ())
    }

    fn income(
        &self,
        script: ScriptId,
        view: &GameView<'_>,
        cell: Cell,
        income: i64,
    ) -> Result<i64, HookError> {
        let token = view.state.board().get(cell);
        let seat = token.map_or(crate::rules::Seat::One, |t| t.seat);
        let result = self.call(
            script,
            Hook::Income,
            (seat, Some(cell)),
            Some((token.map(|t| (cell, t)), Some(income))),
            call::Args {
                me: Some(match token {
                    Some(t) => call::Me::Token(ctx::TokenOut::new(cell, t)),
                    None => call::Me::Nil,
                }),
                number: Some(income),
            },
            Target::View(view),
        )?;
        match result {
            None => Ok(income),
            Some(Value::Integer(n)) => Ok(n),
            Some(Value::Number(f)) if f.fract() == 0.0 && f.abs() < 9.0e15 => {
                // An integral float such as 2.0 counts as that integer.
                #[allow(clippy::cast_possible_truncation)]
                Ok(f as i64)
            }
            Some(other) => Err(HookError::of(
                HookErrorKind::Return,
                format!(
                    "{}: in income: the hook must return a whole number, got {}",
                    self.script_name(script),
                    ctx::describe_value(&other)
                ),
            )),
        }
    }

    fn on_destroyed(
        &self,
        script: ScriptId,
        fx: &mut Effects<'_>,
        cell: Cell,
        token: Token,
    ) -> Result<(), HookError> {
        self.call(
            script,
            Hook::OnDestroyed,
            (token.seat, Some(cell)),
            Some((Some((cell, token)), None)),
            call::Args {
                me: Some(call::Me::Token(ctx::TokenOut::new(cell, token))),
                number: None,
            },
            Target::Effects(fx),
        )
        .map(|_| ())
    }
}

impl ScriptHost {
    /// Every pack heuristic's (`ai.lua`) opinion of the position for `seat`, summed. The
    /// engine never calls this: it is for the AI.
    pub fn heuristics(
        &self,
        view: &GameView<'_>,
        seat: crate::rules::Seat,
    ) -> Result<f64, HookError> {
        let mut total = 0.0;
        for p in view.catalog.packs() {
            let Some(script) = p.ai_script else { continue };
            let value = self.call(
                script,
                Hook::Evaluate,
                (seat, None),
                None,
                call::Args {
                    me: None,
                    number: Some(seat.number().into()),
                },
                Target::View(view),
            )?;
            total += match value {
                Some(Value::Integer(n)) => {
                    #[allow(clippy::cast_precision_loss)]
                    let n = n as f64;
                    n
                }
                Some(Value::Number(f)) if f.is_finite() => f,
                None | Some(Value::Nil) => 0.0,
                Some(other) => {
                    return Err(HookError::of(
                        HookErrorKind::Return,
                        format!(
                            "{}: in evaluate: the hook must return a number, got {}",
                            self.script_name(script),
                            ctx::describe_value(&other)
                        ),
                    ));
                }
            };
        }
        Ok(total)
    }
}
