//! A game and its owner: one thread per game holds the game's whole state and receives
//! what happens to it (a player sits, moves, drops, comes back; the host evicts or stops
//! it) over a channel. Nothing else touches the state, so no lock is held while the AI
//! thinks, the save is written or frames are queued for the players. A panic while
//! handling a message ends that game alone: it is saved as of its last move and both
//! players are told.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use rand::{RngExt as _, SeedableRng as _};
use serde::{Deserialize, Serialize};

use crate::ai::{self, Level, Observation, PublicPlay};
use crate::rules::{CardId, Cell, Event, GameState, Move, Play, Seat};

use super::super::protocol::{PackRef, Seen, SessionToken, ToClient, clean, played};
use super::conn::Writer;
use super::{AiDeck, GameResult, HostEvent, Shared, hex, lock, unhex};

/// What happens to a game.
pub(super) enum ToGame {
    /// A player takes `seat` with `deck`.
    Sit {
        seat: Seat,
        player: Player,
        deck: Vec<Vec<CardId>>,
    },
    /// A player's move.
    Intent {
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
    pub state: Option<GameState>,
    pub history: Vec<PublicPlay>,
    pub moves: Vec<SavedMove>,
    pub done: bool,
    /// Since when a player is away (the game waits for them until it expires).
    pub paused_since: Option<Instant>,
}

/// A move as saved: seat, stack, cell.
pub(super) type SavedMove = (u8, u8, i32, i32);

/// A game as saved after each move.
#[derive(Debug, Serialize, Deserialize)]
struct SavedGame {
    format_version: u32,
    packs: Vec<PackRef>,
    seed: u64,
    decks: [Vec<Vec<String>>; 2],
    seats: [SavedSeat; 2],
    moves: Vec<SavedMove>,
}

#[derive(Debug, Serialize, Deserialize)]
enum SavedSeat {
    Ai(String),
    Player { name: String, token: String },
}

impl HostedGame {
    /// A table with no one seated yet.
    pub fn new(id: u64) -> HostedGame {
        HostedGame {
            id,
            seed: rand::random(),
            seats: [Occupant::Empty, Occupant::Empty],
            decks: [None, None],
            state: None,
            history: Vec::new(),
            moves: Vec::new(),
            done: false,
            paused_since: None,
        }
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
    shared: &'a Arc<Shared>,
    t: HostedGame,
    engine: &'a ai::Brain<'a>,
}

/// Own `table` until its game ends: the body of the game's thread.
pub(super) fn run(shared: &Arc<Shared>, table: HostedGame, rx: &Receiver<ToGame>) {
    let catalog = Arc::clone(&shared.content.catalog);
    let scripts = ai::hooks_for(&catalog);
    let engine = scripts.brain(&catalog);
    let mut game = Game {
        shared,
        t: table,
        engine: &engine,
    };
    let expiry = shared.config.pause_expiry;
    loop {
        let message = match game.t.paused_since {
            Some(since) => {
                let left = (since + expiry).saturating_duration_since(Instant::now());
                match rx.recv_timeout(left) {
                    Ok(m) => m,
                    Err(RecvTimeoutError::Timeout) => ToGame::Expire(format!(
                        "the game waited {} s for a player who did not come back; it is over",
                        expiry.as_secs()
                    )),
                    Err(RecvTimeoutError::Disconnected) => break,
                }
            }
            None => match rx.recv() {
                Ok(m) => m,
                Err(_) => break,
            },
        };
        match catch_unwind(AssertUnwindSafe(|| game.handle(message))) {
            Ok(Flow::Go) => {}
            Ok(Flow::End) => break,
            Err(_) => {
                game.crashed();
                break;
            }
        }
    }
    let id = game.t.id;
    drop(game);
    shared.leave(id);
}

impl Game<'_> {
    fn config(&self) -> &super::HostConfig {
        &self.shared.config
    }

    fn handle(&mut self, message: ToGame) -> Flow {
        match message {
            ToGame::Sit { seat, player, deck } => self.sit(seat, player, deck),
            ToGame::Intent {
                conn,
                seat,
                seq,
                stack,
                cell,
            } => {
                self.intent(conn, seat, seq, stack, cell);
                if self.t.done { Flow::End } else { Flow::Go }
            }
            ToGame::Back { seat, writer } => {
                self.back(seat, writer);
                Flow::Go
            }
            ToGame::Gone { seat, conn } => self.gone(seat, conn),
            ToGame::Expire(reason) => {
                self.shared
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
        self.shared.log(format!(
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
        if self.t.state.is_some() || !self.t.decks.iter().all(Option::is_some) {
            return Flow::Go;
        }
        let d0 = self.t.decks[0].clone().unwrap_or_default();
        let d1 = self.t.decks[1].clone().unwrap_or_default();
        let mut events = Vec::new();
        match self
            .engine
            .engine()
            .new_game([&d0, &d1], self.t.seed, &mut events)
        {
            Ok(state) => self.t.state = Some(state),
            Err(e) => {
                let reason = format!("the game cannot start: {e}");
                self.shared.log(format!("game {}: {reason}", self.t.id));
                for s in Seat::BOTH {
                    if let Some(w) = self.t.writer(s) {
                        w.bye(&reason);
                    }
                }
                return Flow::End;
            }
        }
        self.shared.update(self.t.id, |e| e.started = true);
        self.save();
        let opening = super::super::events::to_wire(&self.shared.content.catalog, &events);
        for s in Seat::BOTH {
            self.send_state(s, None, &opening);
        }
        self.drive();
        if self.t.done { Flow::End } else { Flow::Go }
    }

    /// The host AI's deck for this game (see [`AiDeck`]).
    fn ai_deck(&self, seat: Seat) -> Vec<Vec<CardId>> {
        let config = self.config();
        let catalog = &self.shared.content.catalog;
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
            self.shared.log(format!("{peer}: closed: {reason}"));
            w.bye(&reason);
        };
        if seq <= p.last_seq {
            return close(format!("move #{seq} again (a replay)"));
        }
        p.last_seq = seq;
        let Some(state) = &self.t.state else {
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
            self.t.paused_since = None;
            self.shared.update(self.t.id, |e| e.paused_since = None);
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
        if self.t.state.is_some() {
            self.shared.log(format!(
                "game {}: {name} (seat {seat}) dropped; the game is paused",
                self.t.id
            ));
            if self.t.paused_since.is_none() {
                let now = Instant::now();
                self.t.paused_since = Some(now);
                self.shared
                    .update(self.t.id, |e| e.paused_since = Some(now));
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
        self.shared.update(self.t.id, |e| {
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
        let Some(state) = self.t.state.as_mut() else {
            return Err(crate::rules::MoveError::GameOver);
        };
        let mut events: Vec<Event> = Vec::new();
        self.engine.engine().play(state, mv, &mut events)?;
        let moves_played = state.moves_played();
        let mark = self.t.history.len();
        ai::observe::record(&mut self.t.history, &events);
        let last = self.t.history.get(mark).copied();
        let stack = match mv.play {
            Play::Stack(s) => s,
            Play::Card(_) => 0,
        };
        self.t
            .moves
            .push((mv.seat.number(), stack, mv.cell.x, mv.cell.y));
        let catalog = &self.shared.content.catalog;
        let wire = last.map(|p| played(catalog, p, Some(mv.cell)));
        let events = super::super::events::to_wire(catalog, &events);
        self.save();
        if self.config().fault_after_moves == Some(moves_played)
            && !self.shared.fault_used.swap(true, Ordering::SeqCst)
        {
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
        while let Some(state) = &self.t.state {
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
            let mut agent = ai::agent(level, seed, self.config().ai_options);
            let chosen = agent.choose(self.engine, &obs);
            let legal = self.engine.engine().legal_moves(state);
            let ok = chosen
                .into_iter()
                .chain(legal)
                .any(|mv| self.play(mv).is_ok());
            if !ok {
                // No move can be played: end the game as it stands.
                self.shared.log(format!(
                    "game {}: seat {seat} has no playable move",
                    self.t.id
                ));
                self.t.done = true;
                return;
            }
        }
    }

    fn finish_if_over(&mut self) {
        let Some(state) = &self.t.state else { return };
        let Some(outcome) = state.outcome() else {
            return;
        };
        if self.t.done {
            return;
        }
        self.t.done = true;
        let result = GameResult {
            scores: [state.score(Seat::One), state.score(Seat::Two)],
            winner: outcome.winner,
            moves: state.moves_played(),
        };
        self.shared.log(format!("game {}: {result}", self.t.id));
        self.remove_save();
        let _ = lock(&self.shared.events).send(HostEvent::Finished(result));
        let done = self.shared.finished.fetch_add(1, Ordering::SeqCst) + 1;
        if self.config().games.is_some_and(|n| done >= n) {
            self.shared.closing.store(true, Ordering::SeqCst);
        }
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
        self.shared
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
        let Some(state) = &self.t.state else { return };
        let Some(w) = self.t.writer(seat) else {
            return;
        };
        let seen = Seen::of(&self.shared.content.catalog, state, seat, &self.t.history);
        w.send(&ToClient::State {
            seen,
            last,
            events: events.to_vec(),
        });
    }

    fn save(&self) {
        let Some(dir) = &self.config().save_dir else {
            return;
        };
        let catalog = &self.shared.content.catalog;
        let keys = |d: &Option<Vec<Vec<CardId>>>| -> Vec<Vec<String>> {
            d.as_deref()
                .map(|d| super::super::protocol::deck_keys(catalog, d))
                .unwrap_or_default()
        };
        let seat = |slot: &Occupant| match slot {
            Occupant::Ai(level) => SavedSeat::Ai(level.name().to_string()),
            Occupant::Player(p) => SavedSeat::Player {
                name: p.name.clone(),
                token: hex(&p.token),
            },
            Occupant::Empty => SavedSeat::Ai(String::new()),
        };
        let t = &self.t;
        let saved = SavedGame {
            format_version: 1,
            packs: self.shared.content.packs.clone(),
            seed: t.seed,
            decks: [keys(&t.decks[0]), keys(&t.decks[1])],
            seats: [seat(&t.seats[0]), seat(&t.seats[1])],
            moves: t.moves.clone(),
        };
        let result = serde_json::to_vec_pretty(&saved)
            .map_err(std::io::Error::other)
            .and_then(|bytes| {
                std::fs::create_dir_all(dir)?;
                crate::fsutil::write_atomic(&save_path(dir, t.id), &bytes)
            });
        if let Err(e) = result {
            self.shared.log(format!("game {}: cannot save: {e}", t.id));
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

/// A saved game taken up again: replayed through the engine; both players away.
pub(super) fn restore(
    shared: &Shared,
    engine: &ai::Brain<'_>,
    id: u64,
    path: &std::path::Path,
) -> Result<HostedGame, String> {
    let bytes =
        crate::fsutil::read_capped(path, 4 << 20, "a saved game").map_err(|e| e.to_string())?;
    let saved: SavedGame = serde_json::from_slice(&bytes).map_err(|e| e.to_string())?;
    if saved.format_version != 1 {
        return Err(format!("format_version {} is not 1", saved.format_version));
    }
    if saved.packs != shared.content.packs {
        return Err("it was played with other packs than this host's".into());
    }
    let mut decks: [Option<Vec<Vec<CardId>>>; 2] = [None, None];
    for (i, deck) in saved.decks.iter().enumerate() {
        decks[i] = Some(shared.resolve_deck(deck)?);
    }
    let d0 = decks[0].clone().unwrap_or_default();
    let d1 = decks[1].clone().unwrap_or_default();
    let mut events = Vec::new();
    let mut state = engine
        .engine()
        .new_game([&d0, &d1], saved.seed, &mut events)
        .map_err(|e| e.to_string())?;
    let mut history = Vec::new();
    let mut last_seq = [0u32; 2];
    for &(seat, stack, x, y) in &saved.moves {
        let seat = super::super::protocol::seat_of(seat).ok_or("a move by no seat")?;
        events.clear();
        engine
            .engine()
            .play(
                &mut state,
                Move {
                    seat,
                    play: Play::Stack(stack),
                    cell: Cell::new(x, y),
                },
                &mut events,
            )
            .map_err(|e| format!("a saved move no longer plays: {e}"))?;
        ai::observe::record(&mut history, &events);
        last_seq[seat.index()] += 1;
    }
    let seat = |s: &SavedSeat, i: usize| -> Result<Occupant, String> {
        match s {
            SavedSeat::Ai(level) => Level::ALL
                .into_iter()
                .find(|l| l.name() == level)
                .map(Occupant::Ai)
                .ok_or_else(|| format!("no AI level '{}'", clean(level))),
            SavedSeat::Player { name, token } => Ok(Occupant::Player(Player {
                name: clean(name),
                peer: "?".into(),
                token: unhex(token).ok_or("a bad session token")?,
                conn: None,
                last_seq: last_seq[i],
            })),
        }
    };
    Ok(HostedGame {
        id,
        seed: saved.seed,
        seats: [seat(&saved.seats[0], 0)?, seat(&saved.seats[1], 1)?],
        decks,
        state: Some(state),
        history,
        moves: saved.moves,
        done: false,
        paused_since: Some(Instant::now()),
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
