//! Move resolution in the exact order of the rules: place, ability, cycle, between turns,
//! score, end check, next seat.
//!
//! A move is all or nothing: a refused move changes nothing, and a move whose script hook
//! fails is rolled back (state and events) before the error is returned.
//!
//! The legality check runs before any change. Only a move that may run a hook (a token with
//! a script on the board, or a card that may bring one: `Catalog::may_bring_scripts`)
//! snapshots the state, which a failing hook restores; every other move takes the path of
//! content without scripts. The rules' own fixed steps (placing the played token, scoring,
//! the end check, passing the turn, the opening token) write the state directly rather than
//! through [`Effects`](super::Effects): they run once per move in a fixed order with no hook
//! inside them, so `Effects`' nesting, caps and attribution have nothing to do there.
//!
//! Each rule is written once: the card a move plays is [`Engine::card_played`]; the
//! sandbox's "any seat may play" is [`Engine::play_any_seat`], used by the sandbox, the
//! scenarios, their writer and replays. Whom an aura reaches is decided in two passes kept
//! equal by property tests (tests/integration/properties.rs): the fast one of
//! [`Engine::incomes`] (the board's cached sums and the catalog's reach bitsets) and
//! `for_each_aura_bonus` (token by token, which `income` hooks and boards not of the
//! content's size need). An engine's catalog and hooks are read, never set, so what it works
//! out from them once cannot go stale.

use rand::RngExt;

use super::abilities;
use super::board::{Board, Token, token_income};
use super::board::{WORDS, bits};
use super::catalog::Catalog;
use super::deck::{DeckError, deck_problems};
use super::defs::NO_AREA;
use super::effects::Hooks;
use super::effects::{Effects, MAX_SCORE};
use super::event::{Cause, Event, EventKind};
use super::hooks::{BudgetStep, HookError, HookErrorKind};
use super::ids::MAX_CELLS;
use super::ids::{CardId, Cell, Seat, TokenTypeId};
use super::never::never;
use super::state::{GameState, GameView, Outcome};

/// Record `event` when events are being recorded.
fn push(events: &mut Option<&mut Vec<Event>>, event: Event) {
    if let Some(list) = events {
        list.push(event);
    }
}

/// Which card a move plays.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Play {
    /// The top card of one of the seat's stacks (0-based); it then cycles to the bottom.
    Stack(u8),
    /// Any card of the catalog, stacks untouched (the sandbox).
    Card(CardId),
}

/// A seat's move: a card and an empty cell.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Move {
    /// The seat moving.
    pub seat: Seat,
    /// The card played.
    pub play: Play,
    /// Where its token goes.
    pub cell: Cell,
}

/// Why a move was refused. The state is unchanged.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MoveError {
    /// The game has ended.
    #[error("the game is over")]
    GameOver,
    /// The other seat is to move.
    #[error("it is seat {turn}'s turn, not seat {seat}'s")]
    NotYourTurn {
        /// Who tried to move.
        seat: Seat,
        /// Who is to move.
        turn: Seat,
    },
    /// The cell is not on the board.
    #[error("cell {0} is off the board")]
    OffBoard(Cell),
    /// The cell holds a token.
    #[error("cell {0} is not empty")]
    NotEmpty(Cell),
    /// The stack does not exist or is empty.
    #[error("seat {seat} has no stack {}", .stack + 1)]
    NoSuchStack {
        /// Whose.
        seat: Seat,
        /// Which (0-based).
        stack: u8,
    },
    /// The card is not in the catalog.
    #[error("card #{0} is not in the loaded content")]
    UnknownCard(u16),
    /// A script hook failed; the move was rolled back.
    #[error(transparent)]
    Script(#[from] HookError),
}

/// The rules engine: a catalog and the hooks its scripts run through.
#[derive(Clone, Copy)]
pub struct Engine<'a> {
    /// The content being played.
    catalog: &'a Catalog,
    /// Script hooks ([`NoHooks`](super::NoHooks) for content without scripts).
    hooks: &'a dyn Hooks,
    /// Whether the catalog has scripts, worked out once.
    scripted: bool,
    /// Whether a token type has a script: then a token hook (`on_destroyed`,
    /// `between_turns` or `income`) may run on a move while a token with a script is on
    /// the board, or when the move may bring one. Otherwise only a move whose card has a
    /// scripted ability can run a hook. Every other move takes the path of content
    /// without scripts.
    token_scripts: bool,
}

impl<'a> Engine<'a> {
    /// An engine for `catalog` whose scripts run through `hooks`.
    #[must_use]
    pub fn new(catalog: &'a Catalog, hooks: &'a dyn Hooks) -> Engine<'a> {
        Engine {
            catalog,
            hooks,
            scripted: catalog.has_scripts(),
            token_scripts: catalog.token_types().iter().any(|t| t.script.is_some()),
        }
    }

    /// The content being played (what the engine's caches were made from: an engine
    /// is made anew for other content).
    #[must_use]
    pub fn catalog(&self) -> &'a Catalog {
        self.catalog
    }

    /// The script hooks its moves run.
    #[must_use]
    pub fn hooks(&self) -> &'a dyn Hooks {
        self.hooks
    }

    /// Check a deck against the rules: stack count and sizes, no card twice. The first
    /// problem found, in the order [`Engine::deck_problems`] lists them.
    pub fn check_deck(&self, seat: Seat, stacks: &[Vec<CardId>]) -> Result<(), DeckError> {
        match self.deck_problems(seat, stacks).into_iter().next() {
            Some(problem) => Err(problem),
            None => Ok(()),
        }
    }

    /// Every way a deck breaks the rules, stack by stack: the stack count, then for each
    /// stack its size and any card already in an earlier place of the deck (once per
    /// card). Empty when the deck can be played. The deck editor shows all of them live;
    /// the loader checks a pack's decks with the same [`deck_problems`].
    #[must_use]
    pub fn deck_problems(&self, seat: Seat, stacks: &[Vec<CardId>]) -> Vec<DeckError> {
        let catalog = self.catalog;
        deck_problems(
            Some(catalog.rules()),
            catalog.cards().len(),
            seat,
            stacks,
            &|card| catalog.card(card).meta.id.clone(),
        )
    }

    /// A new game with these decks (seat 1's, seat 2's): the opening token is placed with
    /// the seeded generator, and its event appended to `events`.
    pub fn new_game(
        &self,
        decks: [&[Vec<CardId>]; 2],
        seed: u64,
        events: &mut Vec<Event>,
    ) -> Result<GameState, DeckError> {
        self.check_deck(Seat::One, decks[0])?;
        self.check_deck(Seat::Two, decks[1])?;
        let mut state = GameState::new(self.catalog, decks, seed);
        if let Some(opening) = &self.catalog.rules().opening_token {
            let cells: Vec<usize> = opening
                .cells
                .iter()
                .filter_map(|&c| state.board.index(c))
                .collect();
            if !cells.is_empty() {
                let index = cells[state.rng.random_range(0..cells.len())];
                let token = Token {
                    value: opening.value,
                    kind: opening.kind,
                    card: None,
                    seat: opening.seat,
                };
                state.board.put(index, Some(token), self.catalog);
                events.push(Event {
                    kind: EventKind::Placed {
                        cell: state.board.cell(index),
                        token,
                    },
                    cause: Cause::Rules,
                });
            }
        }
        Ok(state)
    }

    /// Whether `mv` is legal now; the card it would play.
    pub fn check(&self, state: &GameState, mv: Move) -> Result<CardId, MoveError> {
        if state.is_over() {
            return Err(MoveError::GameOver);
        }
        if mv.seat != state.turn {
            return Err(MoveError::NotYourTurn {
                seat: mv.seat,
                turn: state.turn,
            });
        }
        let Some(index) = state.board.index(mv.cell) else {
            return Err(MoveError::OffBoard(mv.cell));
        };
        if state.board.is_occupied(index) {
            return Err(MoveError::NotEmpty(mv.cell));
        }
        self.card_played(state, mv)
    }

    /// The card `mv` plays: the top of the stack it names (as the seat's stacks are now),
    /// or the card it names. Only that: [`Engine::check`] says whether the move is legal.
    pub fn card_played(&self, state: &GameState, mv: Move) -> Result<CardId, MoveError> {
        match mv.play {
            Play::Stack(s) => state
                .seat(mv.seat)
                .stacks()
                .get(usize::from(s))
                .and_then(|st| st.top())
                .ok_or(MoveError::NoSuchStack {
                    seat: mv.seat,
                    stack: s,
                }),
            Play::Card(card) if card.index() < self.catalog.cards().len() => Ok(card),
            Play::Card(card) => Err(MoveError::UnknownCard(card.0)),
        }
    }

    /// Play `mv`, appending its events. On error nothing changed (state and events).
    pub fn play(
        &self,
        state: &mut GameState,
        mv: Move,
        events: &mut Vec<Event>,
    ) -> Result<(), MoveError> {
        let mark = events.len();
        self.play_recording(state, mv, Some(&mut *events))
            .inspect_err(|_| {
                events.truncate(mark);
            })
    }

    /// Play `mv` without recording events: what the AI does to look ahead. On error
    /// nothing changed.
    pub fn play_quiet(&self, state: &mut GameState, mv: Move) -> Result<(), MoveError> {
        self.play_recording(state, mv, None)
    }

    /// The sandbox's rule, written once: any seat may play. `seat` takes the turn in
    /// `state` (which stays otherwise as it was).
    pub fn any_seat_to_move(state: &mut GameState, seat: Seat) {
        state.set_turn(seat);
    }

    /// [`Engine::play`] (or [`Engine::play_quiet`] with no `events`) under the sandbox's
    /// rule: a move that plays any card of the catalog ([`Play::Card`]) may be made by
    /// either seat, which takes the turn for it ([`Engine::any_seat_to_move`]); a stack
    /// move keeps the turn order. A refused move leaves the state as it was, the turn
    /// included.
    pub fn play_any_seat(
        &self,
        state: &mut GameState,
        mv: Move,
        events: Option<&mut Vec<Event>>,
    ) -> Result<(), MoveError> {
        let turn = state.turn();
        if matches!(mv.play, Play::Card(_)) {
            Self::any_seat_to_move(state, mv.seat);
        }
        let played = match events {
            Some(events) => self.play(state, mv, events),
            None => self.play_quiet(state, mv),
        };
        if played.is_err() {
            state.set_turn(turn);
        }
        played
    }

    fn play_recording(
        &self,
        state: &mut GameState,
        mv: Move,
        events: Option<&mut Vec<Event>>,
    ) -> Result<(), MoveError> {
        let card = self.check(state, mv)?;
        if !self.may_run_hooks(state, card) {
            // With no hook to run, nothing after the legality check can fail.
            return self
                .resolve(state, mv, card, events, false)
                .map_err(MoveError::from);
        }
        let snapshot = state.clone();
        self.hooks.begin_step(BudgetStep::Move);
        let result = self.resolve(state, mv, card, events, true);
        self.hooks.end_move();
        result.map_err(|e| {
            *state = snapshot;
            MoveError::from(e)
        })
    }

    /// Whether playing `card` now may run a script hook: a token with a script on the
    /// board, or a card that may bring one or has a scripted ability (one table in the
    /// catalog, `Catalog::may_bring_scripts`).
    fn may_run_hooks(&self, state: &GameState, card: CardId) -> bool {
        self.scripted
            && ((self.token_scripts && state.board.has_scripted())
                || self.catalog.may_bring_scripts(card))
    }

    fn resolve(
        &self,
        state: &mut GameState,
        mv: Move,
        card: CardId,
        mut events: Option<&mut Vec<Event>>,
        hooked: bool,
    ) -> Result<(), HookError> {
        let def = self.catalog.card(card);
        let seat = mv.seat;
        // 1. Place.
        // `check` found the cell on the board before this step.
        let Some(index) = state.board.index(mv.cell) else {
            // Nothing has changed yet: refusing leaves the state as it was.
            let refused = HookError::of(HookErrorKind::Host, "the move's cell is off the board");
            return never!(
                Err(refused),
                "move to {} is off the board after its check",
                mv.cell
            );
        };
        let bonus = std::mem::take(&mut state.seats[seat.index()].bonus);
        let token = Token {
            value: def.value.saturating_add(bonus),
            kind: def.token,
            card: Some(card),
            seat,
        };
        state.board.put(index, Some(token), self.catalog);
        state.prev_placed = state.last_placed;
        state.last_placed = u8::try_from(index).ok();
        push(
            &mut events,
            Event {
                kind: EventKind::Placed {
                    cell: mv.cell,
                    token,
                },
                cause: Cause::Card(card),
            },
        );
        {
            let mut fx = Effects::new(
                state,
                self.catalog,
                self.hooks,
                events.as_deref_mut(),
                Cause::Card(card),
                seat,
                mv.cell,
                &def.area,
            );
            fx.count_events(hooked);
            // A token placed at value 0 or below is destroyed at once.
            fx.settle(index)?;
            // 2. Ability.
            if let Some(ability) = def.ability {
                fx.set_cause(Cause::Ability { card, ability });
                abilities::resolve(&mut fx, self.hooks, &self.catalog.ability(ability).effect)?;
            }
            // 3. Cycle.
            if let Play::Stack(s) = mv.play {
                fx.set_cause(Cause::Card(card));
                fx.cycle(seat, s, card);
            }
            // 4. Between turns.
            if hooked {
                self.hooks.begin_step(BudgetStep::BetweenTurns);
            }
            self.between_turns(&mut fx)?;
            // A script error a script caught (with pcall) still refuses the move.
            if let Some(e) = fx.take_failure() {
                return Err(e);
            }
        }
        // 5. Score.
        let incomes = self.incomes(state)?;
        for seat in Seat::BOTH {
            let income = incomes[seat.index()];
            let score = &mut state.seats[seat.index()].score;
            *score = score.saturating_add(income).clamp(-MAX_SCORE, MAX_SCORE);
            push(
                &mut events,
                Event {
                    kind: EventKind::Scored {
                        seat,
                        income,
                        total: *score,
                    },
                    cause: Cause::Rules,
                },
            );
        }
        state.moves += 1;
        // 6. End check.
        let limit = self.catalog.rules().score_limit;
        let [s1, s2] = [state.score(Seat::One), state.score(Seat::Two)];
        if s1 >= limit || s2 >= limit || state.board.is_full() {
            let winner = match s1.cmp(&s2) {
                std::cmp::Ordering::Greater => Some(Seat::One),
                std::cmp::Ordering::Less => Some(Seat::Two),
                std::cmp::Ordering::Equal => None,
            };
            state.outcome = Some(Outcome { winner });
            push(
                &mut events,
                Event {
                    kind: EventKind::GameOver { winner },
                    cause: Cause::Rules,
                },
            );
            return Ok(());
        }
        // 7. Next.
        let banked = &mut state.seats[seat.index()].extra_turns;
        let (next, extra) = if *banked > 0 {
            *banked -= 1;
            (seat, true)
        } else {
            (seat.other(), false)
        };
        state.turn = next;
        push(
            &mut events,
            Event {
                kind: EventKind::NextTurn { seat: next, extra },
                cause: Cause::Rules,
            },
        );
        Ok(())
    }

    /// Every turret fires (targets chosen first, then all hits land together), then every
    /// scripted token's `between_turns` hook runs, row by row.
    fn between_turns(&self, fx: &mut Effects<'_>) -> Result<(), HookError> {
        let board = fx.state().board();
        let mut turrets = board.turret_cells().peekable();
        let scripted = board.scripted_cells();
        if turrets.peek().is_none() && !board.has_scripted() {
            return Ok(());
        }
        let mut hits: Vec<(usize, i32, Cause)> = Vec::new();
        for index in turrets {
            let (kind, _) = board.kind_seat(index);
            let kind = TokenTypeId(kind);
            let Some(turret) = &self.catalog.token_type(kind).between_turns else {
                continue;
            };
            let from = board.cell(index);
            let cause = Cause::TokenType { kind, cell: from };
            for &dir in &turret.directions {
                let mut cell = from.offset(dir);
                while let Some(i) = board.index(cell) {
                    if board.at(i).is_some() {
                        hits.push((i, turret.amount, cause));
                        break;
                    }
                    cell = cell.offset(dir);
                }
            }
        }
        let scripted: Vec<usize> = scripted.collect();
        let saved = fx.cause();
        for &(index, amount, cause) in &hits {
            fx.set_cause(cause);
            fx.lower(index, amount);
        }
        for &(index, _, cause) in &hits {
            fx.set_cause(cause);
            fx.settle(index)?;
        }
        for index in scripted {
            let Some(token) = fx.state().board().at(index) else {
                continue;
            };
            let def = self.catalog.token_type(token.kind);
            let Some(script) = def.script else {
                continue;
            };
            let cell = fx.state().board().cell(index);
            let cause = Cause::TokenType {
                kind: token.kind,
                cell,
            };
            let hooks = self.hooks;
            fx.scoped(token.seat, cell, &NO_AREA, cause, |fx| {
                hooks.between_turns(script, fx, cell)
            })?;
        }
        fx.set_cause(saved);
        Ok(())
    }

    /// Both seats' income on the current board: for each token
    /// `(value + aura bonuses received) × multiplier`, adjusted by `income` hooks.
    pub fn incomes(&self, state: &GameState) -> Result<[i64; 2], HookError> {
        if self.token_scripts && state.board.has_scripted() {
            // Only a token with a script on the board runs an `income` hook.
            return self.incomes_by_token(state);
        }
        // The common case in one tight pass: the board keeps each seat's sum of
        // `token_income(value, 0, multiplier)`; an aura bonus adds
        // `token_income(0, bonus, multiplier)` to its receiver's seat. The same figures as
        // token by token, since `token_income` is linear in value and bonus and no sum
        // here can reach the clamp (see `token_income`).
        let catalog = self.catalog;
        let board = &state.board;
        let mut totals = board.base_income();
        let rules = catalog.rules();
        if board.width() != i32::from(rules.width) || board.height() != i32::from(rules.height) {
            // A board not of this content's size: the reach bitsets do not apply.
            self.for_each_aura_bonus(board, |_, kind, seat, bonus| {
                let multiplier = catalog.kind(kind).multiplier;
                totals[seat.index()] += token_income(0, i64::from(bonus), multiplier);
            });
            return Ok(totals);
        }
        // Each aura adds `income × multiplier` to each token it reaches: per aura, the
        // receivers are one bitset AND away; only tokens whose multiplier is not 1 are
        // visited one by one.
        let scaled = board.scaled_bits();
        for index in board.aura_cells() {
            let Some((kind, owner)) = board.occupant(index) else {
                continue;
            };
            let (Some(aura), Some(reach)) = (
                &catalog.token_type(kind).aura,
                catalog.aura_reach(kind).get(index),
            ) else {
                continue;
            };
            for receiver in Seat::BOTH {
                if !aura.to.includes(owner, receiver) {
                    continue;
                }
                let mut weight = 0i64;
                let mut others = [0u64; WORDS];
                for w in 0..WORDS {
                    let reached = reach[w] & board.seat_bits(receiver)[w];
                    weight += i64::from((reached & !scaled[w]).count_ones());
                    others[w] = reached & scaled[w];
                }
                for j in bits(others) {
                    let (k, _) = board.kind_seat(j);
                    weight += i64::from(catalog.kind(TokenTypeId(k)).multiplier);
                }
                totals[receiver.index()] += token_income(0, i64::from(aura.income), 1) * weight;
            }
        }
        Ok(totals)
    }

    /// Both seats' income worked out token by token: each token's full income is built
    /// first, so its type's `income` hook sees it and may change it. [`Engine::incomes`]
    /// takes this path when any type has a hook, and gives the same figures faster when
    /// none has.
    pub fn incomes_by_token(&self, state: &GameState) -> Result<[i64; 2], HookError> {
        self.look(|| self.each_token_income(state))
    }

    /// Run `f` as one look at the game ([`Hooks::begin_look`]): the hook calls it makes
    /// outside a move share one budget and clock.
    pub fn look<R>(&self, f: impl FnOnce() -> R) -> R {
        self.hooks.begin_look();
        let result = f();
        self.hooks.end_look();
        result
    }

    fn each_token_income(&self, state: &GameState) -> Result<[i64; 2], HookError> {
        let board = &state.board;
        let mut bonus = [0i64; MAX_CELLS];
        self.for_each_aura_bonus(board, |j, _, _, income| {
            bonus[j] += i64::from(income);
        });
        let mut totals = [0i64; 2];
        for (index, token) in board.indexed() {
            let def = self.catalog.token_type(token.kind);
            let mut income = token_income(token.value, bonus[index], def.income_multiplier);
            if let Some(script) = def.script {
                let view = GameView {
                    state,
                    catalog: self.catalog,
                };
                income = self
                    .hooks
                    .income(script, &view, board.cell(index), income)?;
            }
            let total = &mut totals[token.seat.index()];
            *total = add_income(*total, income);
        }
        Ok(totals)
    }

    /// Call `f(receiver's index, receiver's type, receiver's seat, bonus)` for every aura
    /// bonus a token gives another: the one place that decides whom an aura reaches.
    fn for_each_aura_bonus(&self, board: &Board, mut f: impl FnMut(usize, TokenTypeId, Seat, i32)) {
        for index in board.aura_cells() {
            let Some((kind, owner)) = board.occupant(index) else {
                continue;
            };
            let Some(aura) = &self.catalog.token_type(kind).aura else {
                continue;
            };
            for target in aura.area.cells_from(board.cell(index)) {
                let Some(j) = board.index(target) else {
                    continue;
                };
                if let Some((other_kind, receiver)) = board.occupant(j)
                    && aura.to.includes(owner, receiver)
                {
                    f(j, other_kind, receiver, aura.income);
                }
            }
        }
    }

    /// Every legal move of the seat to move: each hand card on each empty cell.
    pub fn legal_moves(&self, state: &GameState) -> Vec<Move> {
        if state.is_over() {
            return Vec::new();
        }
        let seat = state.turn;
        let hand: Vec<u8> = state.seat(seat).hand().map(|(s, _)| s).collect();
        let mut moves = Vec::with_capacity(hand.len() * state.board.len());
        for cell in state.board.empty_cells() {
            for &s in &hand {
                moves.push(Move {
                    seat,
                    play: Play::Stack(s),
                    cell,
                });
            }
        }
        moves
    }
}

/// A seat's income total with one more token's income, clamped to ±[`MAX_SCORE`].
fn add_income(total: i64, income: i64) -> i64 {
    total.saturating_add(income).clamp(-MAX_SCORE, MAX_SCORE)
}
