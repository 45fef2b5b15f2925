//! A game and its owner: one thread per game holds the game's whole state and receives
//! what happens to it (a player sits, moves, drops, comes back; the host evicts or stops
//! it) over a channel. Nothing else touches the state, so no lock is held while the AI
//! thinks, the save is written or frames are queued for the players. A panic while
//! handling a message ends that game alone: it is saved as of its last move and both
//! players are told.
//!
//! The game is a [`Timeline`]; its save is a replay ([`crate::replay`]) with the seats
//! added, written after every move and read back through the replay's own checks when
//! the host restarts. A finished game's replay, without the seats' tokens, is kept in
//! the save folder's `finished/`.
//!
//! The owner keeps the move clock: a player to move who lets it run out loses, and so does
//! one who concedes.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
#[cfg(test)]
use std::sync::atomic::AtomicU32;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use rand::{RngExt as _, SeedableRng as _};

use crate::ai::{self, Level};
use crate::observe::{History, Observation};
use crate::replay::{PackStamp, Replay, ReplayError, SeatRecord};
use crate::rules::{CardId, Cell, GameState, Move, Play, Seat};
use crate::timeline::Timeline;

use super::super::protocol::{Seen, SessionToken, ToClient, clean, played};
use super::conn::{Live, Writer};
use super::lobby::Lobby;
use super::think::Gate;
use super::{AiDeck, Common, GameResult};

/// The most finished games' replays kept in the save folder's `finished/`; the oldest
/// go first.
pub const MAX_FINISHED: usize = 200;

/// The host's games' threads, and the few places their AI decisions think in.
pub(super) struct Tables {
    /// The games' threads (the host waits for them when it stops).
    live: Arc<Live>,
    /// Where the games' AI decisions wait for a place to think.
    thinking: Gate,
    /// Tests only: the first game to reach this many moves fails inside (0: none).
    #[cfg(test)]
    fault_after: AtomicU32,
}

impl Tables {
    /// No game yet; `ai_workers` AI decisions may think at once.
    pub(super) fn new(ai_workers: usize) -> Tables {
        Tables {
            live: Arc::new(Live::default()),
            thinking: Gate::new(ai_workers),
            #[cfg(test)]
            fault_after: AtomicU32::new(0),
        }
    }

    /// Run `game` on a thread of its own, counted until it ends; whether it started.
    pub(super) fn spawn(&self, game: impl FnOnce() + Send + 'static) -> bool {
        self.live.up();
        let live = Arc::clone(&self.live);
        let spawned = crate::script::threads::spawn("lan-game", move || {
            game();
            live.down();
        });
        if spawned.is_err() {
            self.live.down();
        }
        spawned.is_ok()
    }

    /// No AI decision waits for a place any more (the host stops).
    pub(super) fn close(&self) {
        self.thinking.close();
    }

    /// Wait until every game's thread has ended, at most `wait`.
    pub(super) fn drain(&self, wait: Duration) {
        self.live.drain(wait);
    }

    /// Tests: the first game to reach `moves` moves fails inside, once.
    #[cfg(test)]
    pub(super) fn fail_after(&self, moves: u32) {
        self.fault_after.store(moves, Ordering::SeqCst);
    }

    /// Tests: whether a game that has just played its `moves`-th move fails now.
    #[cfg(test)]
    fn faults_at(&self, moves: u32) -> bool {
        moves > 0
            && self
                .fault_after
                .compare_exchange(moves, 0, Ordering::SeqCst, Ordering::SeqCst)
                .is_ok()
    }

    #[cfg(not(test))]
    #[allow(clippy::unused_self)]
    fn faults_at(&self, _moves: u32) -> bool {
        false
    }
}

/// What happens to a game.
pub(super) enum ToGame {
    /// A player takes `seat` with `deck`.
    Sit {
        seat: Seat,
        player: Player,
        deck: Vec<Vec<CardId>>,
    },
    /// A player's move; `taken` is cleared when the game takes it (before any answer),
    /// so the connection may send its next.
    Intent {
        taken: Arc<AtomicBool>,
        conn: u64,
        seat: Seat,
        seq: u32,
        stack: u8,
        cell: Cell,
    },
    /// A player is back on a new connection.
    Back { seat: Seat, writer: Writer },
    /// A player's connection closed.
    Gone { seat: Seat, conn: u64 },
    /// The player of `seat` (on connection `conn`) gives up the game.
    Concede { seat: Seat, conn: u64 },
    /// End the game now and forget it (its save is removed), telling the players why.
    Expire(String),
    /// The host stops: end here and keep the save.
    Stop,
}

#[derive(Debug)]
pub(super) struct Player {
    pub name: String,
    pub peer: String,
    pub token: SessionToken,
    pub conn: Option<Writer>,
    pub last_seq: u32,
}

#[derive(Debug)]
pub(super) enum Occupant {
    Empty,
    Ai(Level),
    Player(Player),
}

#[derive(Debug)]
pub(super) struct HostedGame {
    pub id: u64,
    pub seed: u64,
    pub seats: [Occupant; 2],
    pub decks: [Option<Vec<Vec<CardId>>>; 2],
    /// The game, once both decks are in: its start and every move with its events.
    pub timeline: Option<Timeline>,
    /// What has been played, as both seats saw it (hidden cards stay hidden).
    pub history: History,
    pub done: bool,
    /// Since when a player is away (the game waits for them until it expires).
    pub paused_since: Option<Instant>,
    /// The address that opened it (none for a game taken up from a save): its AI's
    /// decisions take their turn to think as that address's.
    pub owner: Option<std::net::IpAddr>,
}

/// Why a saved game could not be taken up again.
#[derive(Debug, thiserror::Error)]
pub(super) enum ResumeError {
    /// The save is not a replay this build reads.
    #[error(transparent)]
    Replay(#[from] ReplayError),
    /// The replay has no seats: it is not a LAN game's save.
    #[error("it is a replay without seats, not a LAN game's save")]
    NoSeats,
    /// Its packs are not the host's.
    #[error("it was played with other packs than this host's")]
    OtherPacks,
    /// A saved move does not play with the host's content.
    #[error("saved move {0} no longer plays: {1}")]
    Refused(usize, String),
    /// A seat's session token is not 32 hex digits.
    #[error("seat {0}: its session token is not 32 hex digits")]
    Token(usize),
    /// A seat names no AI level.
    #[error("seat {0}: no AI level '{1}'")]
    Level(usize, String),
}

/// A game's history: with the position of every play only when an AI seat will read
/// what its opponent passed over (see [`Level::fills_in`]); otherwise the plays alone.
fn kept_history(seats: &[Occupant; 2]) -> History {
    if seats
        .iter()
        .any(|s| matches!(s, Occupant::Ai(level) if level.fills_in()))
    {
        History::new()
    } else {
        History::plays_only()
    }
}

impl HostedGame {
    /// A table with no one seated yet.
    pub fn new(id: u64) -> HostedGame {
        HostedGame {
            id,
            seed: rand::random(),
            seats: [Occupant::Empty, Occupant::Empty],
            decks: [None, None],
            timeline: None,
            history: History::plays_only(),
            done: false,
            paused_since: None,
            owner: None,
        }
    }

    /// The game's position, once it started.
    pub fn state(&self) -> Option<&GameState> {
        self.timeline.as_ref().map(Timeline::state)
    }

    /// How many moves have been played.
    pub fn moves(&self) -> usize {
        self.timeline.as_ref().map_or(0, |t| t.steps().len())
    }

    /// A seat whose player is away (the game waits for them).
    fn away(&self) -> Option<Seat> {
        Seat::BOTH
            .into_iter()
            .find(|s| matches!(&self.seats[s.index()], Occupant::Player(p) if p.conn.is_none()))
    }

    fn writer(&self, seat: Seat) -> Option<&Writer> {
        match &self.seats[seat.index()] {
            Occupant::Player(Player { conn: Some(w), .. }) => Some(w),
            _ => None,
        }
    }
}

enum Flow {
    Go,
    End,
}

struct Game<'a> {
    common: &'a Common,
    lobby: &'a Lobby,
    t: HostedGame,
    engine: &'a ai::Brain<'a>,
    /// Since when the seat to move has had the move (the move clock's start): reset by
    /// every move and by a paused game going on.
    turn_since: Instant,
}

/// Own `table` until its game ends: the body of the game's thread. Everything the
/// thread does runs inside a panic guard: a panic while handling a message ends the game
/// with a goodbye to its players (and a save), and one anywhere else still takes the
/// game out of the lobby, so no entry outlives its thread.
pub(super) fn run(lobby: &Lobby, table: HostedGame, rx: &Receiver<ToGame>) {
    let id = table.id;
    if catch_unwind(AssertUnwindSafe(|| play(lobby, table, rx))).is_err() {
        lobby.common().log(format!(
            "game {id}: stopped: the host hit an internal error in this game and ended it"
        ));
    }
    lobby.leave(id);
}

/// When a game paused at `since` expires: `None` when `expiry` reaches past any time
/// the clock can tell (the game waits for as long as the host runs).
fn expires_at(since: Instant, expiry: Duration) -> Option<Instant> {
    since.checked_add(expiry)
}

fn play(lobby: &Lobby, table: HostedGame, rx: &Receiver<ToGame>) {
    let common = lobby.common();
    let catalog = Arc::clone(&common.content.catalog);
    let scripts = ai::hooks_for(&catalog);
    let engine = scripts.brain(&catalog);
    let mut game = Game {
        common,
        lobby,
        t: table,
        engine: &engine,
        turn_since: Instant::now(),
    };
    let expiry = common.config.pause_expiry;
    loop {
        let step = catch_unwind(AssertUnwindSafe(|| {
            let paused = game.t.paused_since.and_then(|s| expires_at(s, expiry));
            let clock = game.move_clock_ends();
            let deadline = match (paused, clock) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            let message = match deadline {
                Some(at) => match rx.recv_timeout(at.saturating_duration_since(Instant::now())) {
                    Ok(m) => m,
                    Err(RecvTimeoutError::Timeout) if clock == Some(at) => {
                        return game.out_of_time();
                    }
                    Err(RecvTimeoutError::Timeout) => ToGame::Expire(format!(
                        "the game waited {} s for a player who did not come back; it is over",
                        expiry.as_secs()
                    )),
                    Err(RecvTimeoutError::Disconnected) => return Flow::End,
                },
                None => match rx.recv() {
                    Ok(m) => m,
                    Err(_) => return Flow::End,
                },
            };
            game.handle(message)
        }));
        match step {
            Ok(Flow::Go) => {}
            Ok(Flow::End) => break,
            Err(_) => {
                game.crashed();
                break;
            }
        }
    }
}

impl Game<'_> {
    fn config(&self) -> &super::HostConfig {
        &self.common.config
    }

    /// When the player to move runs out of the move clock: `None` when no player's
    /// clock runs (no game yet, over, paused, or the AI to move).
    fn move_clock_ends(&self) -> Option<Instant> {
        let state = self.t.state()?;
        if self.t.done || state.is_over() || self.t.paused_since.is_some() {
            return None;
        }
        if !matches!(self.t.seats[state.turn().index()], Occupant::Player(_)) {
            return None;
        }
        self.turn_since.checked_add(self.config().move_clock)
    }

    /// The player to move let the move clock run out: the game is over, the other seat
    /// wins.
    fn out_of_time(&mut self) -> Flow {
        let Some(state) = self.t.state() else {
            return Flow::Go;
        };
        let (late, other) = (state.turn(), state.turn().other());
        let reason = format!(
            "seat {late} did not move within the move clock ({} s): the game is over and seat {other} wins",
            self.config().move_clock.as_secs()
        );
        self.lost(late, &reason)
    }

    /// The player of `seat` gives up: the game is over, the other seat wins. From a
    /// connection the seat has since left, or before the game started, nothing happens.
    fn concede(&mut self, seat: Seat, conn: u64) -> Flow {
        let Occupant::Player(p) = &self.t.seats[seat.index()] else {
            return Flow::Go;
        };
        if p.conn.as_ref().is_none_or(|w| w.id != conn)
            || self.t.state().is_none_or(GameState::is_over)
            || self.t.done
        {
            return Flow::Go;
        }
        let reason = format!(
            "seat {seat} conceded: the game is over and seat {} wins",
            seat.other()
        );
        self.lost(seat, &reason)
    }

    /// End the game now with `loser` losing, for `reason` (told to both players): the
    /// result is counted like any finished game's, and the save removed.
    fn lost(&mut self, loser: Seat, reason: &str) -> Flow {
        let Some(state) = self.t.state() else {
            return Flow::Go;
        };
        let result = GameResult {
            scores: [state.score(Seat::One), state.score(Seat::Two)],
            winner: Some(loser.other()),
            moves: state.moves_played(),
        };
        self.t.done = true;
        self.common
            .log(format!("game {}: {reason}; {result}", self.t.id));
        for seat in Seat::BOTH {
            if let Some(w) = self.t.writer(seat) {
                w.bye(reason);
            }
        }
        self.remove_save();
        self.lobby.finished(result);
        Flow::End
    }

    fn handle(&mut self, message: ToGame) -> Flow {
        match message {
            ToGame::Sit { seat, player, deck } => self.sit(seat, player, deck),
            ToGame::Intent {
                taken,
                conn,
                seat,
                seq,
                stack,
                cell,
            } => {
                taken.store(false, Ordering::SeqCst);
                self.intent(conn, seat, seq, stack, cell);
                if self.t.done { Flow::End } else { Flow::Go }
            }
            ToGame::Back { seat, writer } => {
                self.back(seat, writer);
                Flow::Go
            }
            ToGame::Gone { seat, conn } => self.gone(seat, conn),
            ToGame::Concede { seat, conn } => self.concede(seat, conn),
            ToGame::Expire(reason) => {
                self.common
                    .log(format!("game {}: ended: {reason}", self.t.id));
                for seat in Seat::BOTH {
                    if let Some(w) = self.t.writer(seat) {
                        w.bye(&reason);
                    }
                }
                self.remove_save();
                Flow::End
            }
            ToGame::Stop => Flow::End,
        }
    }

    fn sit(&mut self, seat: Seat, player: Player, deck: Vec<Vec<CardId>>) -> Flow {
        if let Some(w) = &player.conn {
            w.send(&ToClient::Seated {
                seat: seat.number(),
            });
        }
        self.common.log(format!(
            "{}: {} sits at game {} as seat {seat}",
            player.peer, player.name, self.t.id
        ));
        self.t.seats[seat.index()] = Occupant::Player(player);
        self.t.decks[seat.index()] = Some(deck);
        for s in Seat::BOTH {
            if let Occupant::Ai(_) = self.t.seats[s.index()]
                && self.t.decks[s.index()].is_none()
            {
                self.t.decks[s.index()] = Some(self.ai_deck(s));
            }
        }
        let [Some(d0), Some(d1)] = &self.t.decks else {
            return Flow::Go;
        };
        if self.t.timeline.is_some() {
            return Flow::Go;
        }
        let mut events = Vec::new();
        match self
            .engine
            .engine()
            .new_game([d0, d1], self.t.seed, &mut events)
        {
            Ok(state) => {
                let catalog = Arc::clone(&self.common.content.catalog);
                self.t.timeline = Some(Timeline::new(state, events.clone(), catalog));
                self.t.history = kept_history(&self.t.seats);
            }
            Err(e) => {
                let reason = format!("the game cannot start: {e}");
                self.common.log(format!("game {}: {reason}", self.t.id));
                for s in Seat::BOTH {
                    if let Some(w) = self.t.writer(s) {
                        w.bye(&reason);
                    }
                }
                return Flow::End;
            }
        }
        let now = Instant::now();
        self.lobby.update(self.t.id, |e| {
            e.started = true;
            e.active_at = now;
        });
        self.turn_since = now;
        self.save();
        let opening = super::super::events::to_wire(&self.common.content.catalog, &events);
        for s in Seat::BOTH {
            self.send_state(s, None, &opening);
        }
        self.drive();
        if self.t.done { Flow::End } else { Flow::Go }
    }

    /// The host AI's deck for this game (see [`AiDeck`]).
    fn ai_deck(&self, seat: Seat) -> Vec<Vec<CardId>> {
        let config = self.config();
        let catalog = &self.common.content.catalog;
        let loaded = if config.ai_deck.is_empty() {
            catalog
                .deck_named("starter")
                .ok()
                .map(|d| catalog.deck(d).stacks.clone())
                .or_else(|| catalog.decks().first().map(|d| d.stacks.clone()))
                .unwrap_or_default()
        } else {
            config.ai_deck.clone()
        };
        let seed = self.t.seed ^ 0x5DEE_CE66_D1CE_5EED;
        match config.ai_deck_kind {
            AiDeck::Chosen(_) => loaded,
            AiDeck::Random => match ai::decks::random_content(self.engine, seed) {
                Ok(d) if self.engine.engine().check_deck(seat, &d).is_ok() => d,
                _ => shuffled(loaded, seed),
            },
            AiDeck::Shuffled => shuffled(loaded, seed),
        }
    }

    fn intent(&mut self, conn: u64, seat: Seat, seq: u32, stack: u8, cell: Cell) {
        let Occupant::Player(p) = &mut self.t.seats[seat.index()] else {
            return;
        };
        let Some(w) = p.conn.clone().filter(|w| w.id == conn) else {
            // From a connection the seat has since left.
            return;
        };
        let peer = p.peer.clone();
        let close = |reason: String| {
            self.common.log(format!("{peer}: closed: {reason}"));
            w.bye(&reason);
        };
        if seq <= p.last_seq {
            return close(format!("move #{seq} again (a replay)"));
        }
        p.last_seq = seq;
        let Some(state) = self.t.state() else {
            return close("a move before the game started".into());
        };
        if state.is_over() || self.t.done {
            return close("a move after the game ended".into());
        }
        if state.turn() != seat {
            return close(format!(
                "a move out of turn (seat {} is to move)",
                state.turn()
            ));
        }
        if let Some(away) = self.t.away() {
            let reason = format!("the game is paused until seat {away} is back");
            w.send(&ToClient::MoveRefused { seq, reason });
            return;
        }
        let mv = Move {
            seat,
            play: Play::Stack(stack),
            cell,
        };
        if let Err(e) = self.play(mv) {
            w.send(&ToClient::MoveRefused {
                seq,
                reason: e.to_string(),
            });
            return;
        }
        self.drive();
    }

    fn back(&mut self, seat: Seat, writer: Writer) {
        let Occupant::Player(p) = &mut self.t.seats[seat.index()] else {
            writer.bye("that seat is not a player's");
            return;
        };
        if let Some(old) = p.conn.replace(writer) {
            old.cut();
        }
        if self.t.away().is_none() {
            let now = Instant::now();
            if self.t.paused_since.take().is_some() {
                // The clock starts afresh for the player to move.
                self.turn_since = now;
            }
            self.lobby.update(self.t.id, |e| {
                e.paused_since = None;
                e.active_at = now;
            });
        }
        self.send_state(seat, None, &[]);
        if let Some(w) = self.t.writer(seat.other()) {
            w.send(&ToClient::Resumed);
        }
    }

    fn gone(&mut self, seat: Seat, conn: u64) -> Flow {
        let Occupant::Player(p) = &mut self.t.seats[seat.index()] else {
            return Flow::Go;
        };
        // A newer connection may hold the seat already.
        if p.conn.as_ref().is_none_or(|c| c.id != conn) {
            return Flow::Go;
        }
        p.conn = None;
        let name = p.name.clone();
        if self.t.done {
            return Flow::End;
        }
        if self.t.timeline.is_some() {
            self.common.log(format!(
                "game {}: {name} (seat {seat}) dropped; the game is paused",
                self.t.id
            ));
            if self.t.paused_since.is_none() {
                let now = Instant::now();
                self.t.paused_since = Some(now);
                self.lobby.update(self.t.id, |e| e.paused_since = Some(now));
            }
            if let Some(w) = self.t.writer(seat.other()) {
                w.send(&ToClient::Paused);
            }
            return Flow::Go;
        }
        // Nobody waits on a game that never started: the seat is free again, and the
        // table goes when no player is left (unless a joiner took a seat meanwhile).
        self.t.seats[seat.index()] = Occupant::Empty;
        self.t.decks[seat.index()] = None;
        let mut empty = false;
        self.lobby.update(self.t.id, |e| {
            e.taken[seat.index()] = false;
            e.tokens[seat.index()] = None;
            empty = !e.taken.iter().any(|t| *t);
        });
        let players = self
            .t
            .seats
            .iter()
            .any(|s| matches!(s, Occupant::Player(_)));
        if empty || !players {
            return Flow::End;
        }
        Flow::Go
    }

    /// Play `mv`, record, save and tell both seats.
    fn play(&mut self, mv: Move) -> Result<(), crate::rules::MoveError> {
        let Some(timeline) = self.t.timeline.as_mut() else {
            return Err(crate::rules::MoveError::GameOver);
        };
        let catalog = &self.common.content.catalog;
        let state = timeline.state().clone();
        let from = self.t.history.position_of(&state);
        let step = timeline.play(self.engine.engine(), catalog, state, mv)?;
        let now = Instant::now();
        self.turn_since = now;
        self.lobby.update(self.t.id, |e| e.active_at = now);
        let moves_played = step.after.moves_played();
        let mark = self.t.history.plays().len();
        self.t.history.record(from, &step.events);
        let last = self.t.history.plays().get(mark).copied();
        let wire = last.map(|p| played(catalog, p, Some(mv.cell)));
        let events = super::super::events::to_wire(catalog, &step.events);
        self.save();
        if self.lobby.tables().faults_at(moves_played) {
            panic!("a fault injected after move {moves_played}");
        }
        for seat in Seat::BOTH {
            self.send_state(seat, wire.clone(), &events);
        }
        self.finish_if_over();
        Ok(())
    }

    /// Let the host's AI move while it is to move.
    fn drive(&mut self) {
        while let Some(state) = self.t.state() {
            if state.is_over() || self.t.done {
                return;
            }
            let seat = state.turn();
            let Occupant::Ai(level) = self.t.seats[seat.index()] else {
                return;
            };
            let obs = Observation::new(state, seat, &self.t.history, false);
            let seed =
                self.t.seed ^ u64::from(state.moves_played()).wrapping_mul(0x9E37_79B9_7F4A_7C15);
            let config = self.config();
            let mut agent = ai::agent_within(level, seed, config.ai_options, config.ai_memory);
            let Some(place) = self.lobby.tables().thinking.enter(self.t.owner) else {
                // The host is stopping.
                return;
            };
            let chosen = agent.choose(self.engine, &obs);
            drop(place);
            let legal = self.engine.engine().legal_moves(state);
            let ok = chosen
                .into_iter()
                .chain(legal)
                .any(|mv| self.play(mv).is_ok());
            if !ok {
                // No move can be played: end the game as it stands.
                self.common.log(format!(
                    "game {}: seat {seat} has no playable move",
                    self.t.id
                ));
                self.t.done = true;
                return;
            }
        }
    }

    fn finish_if_over(&mut self) {
        let Some(state) = self.t.state() else { return };
        let Some(outcome) = state.outcome() else {
            return;
        };
        if self.t.done {
            return;
        }
        let result = GameResult {
            scores: [state.score(Seat::One), state.score(Seat::Two)],
            winner: outcome.winner,
            moves: state.moves_played(),
        };
        self.t.done = true;
        self.common.log(format!("game {}: {result}", self.t.id));
        self.keep_finished();
        self.remove_save();
        self.lobby.finished(result);
    }

    /// A panic while handling a message: the game ends here, saved as of its last move.
    fn crashed(&mut self) {
        let saved = self.config().save_dir.is_some()
            && catch_unwind(AssertUnwindSafe(|| self.save())).is_ok();
        let reason = if saved {
            "the host hit an internal error in this game and ended it; it is saved as of its last move and resumes when the host restarts"
        } else {
            "the host hit an internal error in this game and ended it"
        };
        self.common
            .log(format!("game {}: stopped: {reason}", self.t.id));
        for seat in Seat::BOTH {
            if let Some(w) = self.t.writer(seat) {
                w.bye(reason);
            }
        }
    }

    fn send_state(
        &self,
        seat: Seat,
        last: Option<super::super::protocol::Played>,
        events: &[super::super::events::WireEvent],
    ) {
        let Some(state) = self.t.state() else { return };
        let Some(w) = self.t.writer(seat) else {
            return;
        };
        let seen = Seen::of(
            &self.common.content.catalog,
            state,
            seat,
            self.t.history.plays(),
        );
        w.send(&ToClient::State {
            seen,
            last,
            events: events.to_vec(),
        });
    }

    /// The game as a replay: every move with its events, and the result so far.
    fn replay(&self) -> Option<Replay> {
        let timeline = self.t.timeline.as_ref()?;
        let packs = stamps(&self.common.content);
        let catalog = &self.common.content.catalog;
        Some(crate::replay::record(
            timeline,
            catalog,
            self.t.seed,
            packs,
            None,
        ))
    }

    /// Save the game as a replay with its seats, so that a restarted host takes it up.
    fn save(&self) {
        let Some(dir) = &self.config().save_dir else {
            return;
        };
        let Some(replay) = self.replay() else { return };
        let seat = |slot: &Occupant| match slot {
            Occupant::Ai(level) => SeatRecord::Ai {
                level: level.name().to_string(),
            },
            Occupant::Player(p) => SeatRecord::Player {
                name: p.name.clone(),
                token: hex::encode(p.token),
            },
            Occupant::Empty => SeatRecord::Ai {
                level: String::new(),
            },
        };
        let replay = replay.with_table([seat(&self.t.seats[0]), seat(&self.t.seats[1])]);
        let result = std::fs::create_dir_all(dir).and_then(|()| {
            crate::fsutil::write_atomic(
                &save_path(dir, self.t.id),
                crate::replay::to_text(&replay).as_bytes(),
            )
        });
        if let Err(e) = result {
            self.common
                .log(format!("game {}: cannot save: {e}", self.t.id));
        }
    }

    /// Keep the finished game's replay (without the seats' tokens) in `finished/`, the
    /// newest [`MAX_FINISHED`] only.
    fn keep_finished(&self) {
        let Some(dir) = &self.config().save_dir else {
            return;
        };
        let Some(replay) = self.replay() else { return };
        let finished = dir.join("finished");
        match crate::replay::save(&finished, &format!("game-{}", self.t.id), &replay) {
            Ok(path) => {
                self.common.log(format!(
                    "game {}: its replay is {}",
                    self.t.id,
                    crate::fsutil::shown(&path)
                ));
                prune(&finished, MAX_FINISHED);
            }
            Err(e) => self
                .common
                .log(format!("game {}: cannot keep its replay: {e}", self.t.id)),
        }
    }

    fn remove_save(&self) {
        if let Some(dir) = &self.config().save_dir {
            let _ = std::fs::remove_file(save_path(dir, self.t.id));
        }
    }
}

/// Where game `id` is saved in `dir`.
pub(super) fn save_path(dir: &std::path::Path, id: u64) -> std::path::PathBuf {
    dir.join(format!("game-{id}.json"))
}

/// `deck` with its stacks in a random order and each stack's cards shuffled.
fn shuffled(mut deck: Vec<Vec<CardId>>, seed: u64) -> Vec<Vec<CardId>> {
    let mut rng = rand_pcg::Pcg32::seed_from_u64(seed);
    for stack in &mut deck {
        for i in (1..stack.len()).rev() {
            stack.swap(i, rng.random_range(0..=i));
        }
    }
    for i in (1..deck.len()).rev() {
        deck.swap(i, rng.random_range(0..=i));
    }
    deck
}

/// The host's packs as a replay records them.
fn stamps(content: &super::Content) -> Vec<PackStamp> {
    content
        .packs
        .iter()
        .map(|p| PackStamp {
            id: p.id.clone(),
            version: p.version.clone(),
            hash: Some(p.hash.clone()),
        })
        .collect()
}

/// Remove the oldest `.json` files of `dir` past the newest `keep`.
fn prune(dir: &std::path::Path, keep: usize) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut files: Vec<(std::time::SystemTime, std::path::PathBuf)> = entries
        .filter_map(Result::ok)
        .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
        .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
        .collect();
    if files.len() <= keep {
        return;
    }
    files.sort();
    for (_, path) in &files[..files.len() - keep] {
        let _ = std::fs::remove_file(path);
    }
}

/// A saved game taken up again: read as a replay, played through the engine into its
/// timeline; both players away.
pub(super) fn restore(
    common: &Common,
    engine: &ai::Brain<'_>,
    id: u64,
    path: &std::path::Path,
) -> Result<HostedGame, ResumeError> {
    let replay = crate::replay::read(path)?;
    let table = replay.table.clone().ok_or(ResumeError::NoSeats)?;
    if replay.packs != stamps(&common.content) {
        return Err(ResumeError::OtherPacks);
    }
    let catalog = &common.content.catalog;
    let played = crate::replay::timeline(&replay, engine.engine(), catalog)?;
    if let Some((n, why)) = played.refused {
        return Err(ResumeError::Refused(n, why));
    }
    let timeline = played.timeline;
    let mut last_seq = [0u32; 2];
    for step in timeline.steps() {
        if let Some((mv, _)) = step.played() {
            last_seq[mv.seat.index()] += 1;
        }
    }
    let seat = |s: &SeatRecord, i: usize| -> Result<Occupant, ResumeError> {
        match s {
            SeatRecord::Ai { level } => Level::ALL
                .into_iter()
                .find(|l| l.name() == level)
                .map(Occupant::Ai)
                .ok_or_else(|| ResumeError::Level(i + 1, clean(level))),
            SeatRecord::Player { name, token } => Ok(Occupant::Player(Player {
                name: clean(name),
                peer: "?".into(),
                token: crate::replay::session_token(token).ok_or(ResumeError::Token(i + 1))?,
                conn: None,
                last_seq: last_seq[i],
            })),
        }
    };
    let seats = [seat(&table[0], 0)?, seat(&table[1], 1)?];
    let mut history = kept_history(&seats);
    let mut before = timeline.start();
    for step in timeline.steps() {
        history.record(history.position_of(before), &step.events);
        before = &step.after;
    }
    let start = timeline.start();
    let decks = Seat::BOTH.map(|s| Some(start.seat(s).stack_cards()));
    Ok(HostedGame {
        id,
        seed: replay.seed,
        seats,
        decks,
        timeline: Some(timeline),
        history,
        done: false,
        paused_since: Some(Instant::now()),
        owner: None,
    })
}

/// How long `path` has been left alone (its last write), for a resumed game's expiry.
pub(super) fn age(path: &std::path::Path) -> Duration {
    std::fs::metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.elapsed().ok())
        .unwrap_or_default()
}
