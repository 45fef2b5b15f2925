//! The lobby: each game as the host knows it between its owner thread and the
//! connections (its seats, tokens, owner address, whether it is paused), behind one lock
//! held only to decide. Seating and reconnects, fair eviction of paused games, what
//! discovery announces, starting a game's owner thread ([`Tables`]), taking up the saved
//! games when the host starts, and counting the finished games toward `--games` (then it
//! asks the host to stop).
//!
//! Eviction ends a game that does not move (paused since a player dropped, or with no move
//! for a while), of the address holding the most games first, an idle game before a paused
//! one.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::ai;
use crate::rules::{CardId, Seat};

use super::super::protocol::SessionToken;
use super::peer::Close;
use super::table::{self, HostedGame, Occupant, Player, Tables, ToGame};
use super::{Common, GameResult, HostEvent, lock};

/// A game as the lobby knows it (its owner thread keeps the rest).
pub(super) struct Entry {
    pub(super) id: u64,
    pub(super) tx: Sender<ToGame>,
    /// The address that opened it (`None`: resumed from a save).
    pub(super) owner: Option<IpAddr>,
    pub(super) started: bool,
    pub(super) paused_since: Option<Instant>,
    /// When it last moved on: opened, started, a move played, a paused game going on.
    pub(super) active_at: Instant,
    /// Seats held by a player or the AI.
    pub(super) taken: [bool; 2],
    pub(super) tokens: [Option<SessionToken>; 2],
}

/// The host's games as the lobby knows them, and the threads that own them.
pub(super) struct Lobby {
    common: Arc<Common>,
    entries: Mutex<Vec<Entry>>,
    next_table: AtomicU64,
    /// `--games` reached: no new game is taken.
    closing: AtomicBool,
    /// Games finished so far.
    finished: AtomicU32,
    tables: Tables,
    /// Asks the host to stop, once `--games` games are played and none is in progress.
    stop: Sender<()>,
}

impl Lobby {
    /// No game yet; `stop` asks the host to stop.
    pub(super) fn new(common: Arc<Common>, stop: Sender<()>) -> Arc<Lobby> {
        let tables = Tables::new(common.config.ai_workers);
        Arc::new(Lobby {
            common,
            entries: Mutex::new(Vec::new()),
            next_table: AtomicU64::new(1),
            closing: AtomicBool::new(false),
            finished: AtomicU32::new(0),
            tables,
            stop,
        })
    }

    /// Games held now (waiting, playing or paused).
    pub(super) fn len(&self) -> usize {
        lock(&self.entries).len()
    }

    /// The games' threads and the places their AI decisions think in.
    pub(super) fn tables(&self) -> &Tables {
        &self.tables
    }

    /// What every part of the host reads.
    pub(super) fn common(&self) -> &Common {
        &self.common
    }

    /// Change game `id`'s lobby entry (if it is still there).
    pub(super) fn update(&self, id: u64, change: impl FnOnce(&mut Entry)) {
        if let Some(e) = lock(&self.entries).iter_mut().find(|e| e.id == id) {
            change(e);
        }
    }

    /// Game `id`'s owner is done with it.
    pub(super) fn leave(&self, id: u64) {
        lock(&self.entries).retain(|e| e.id != id);
        self.stop_when_done();
    }

    /// A game is over with `result`: told to whoever listens, and counted toward
    /// `--games`.
    pub(super) fn finished(&self, result: GameResult) {
        self.common.tell(HostEvent::Finished(result));
        let done = self.finished.fetch_add(1, Ordering::SeqCst) + 1;
        if self.common.config.games.is_some_and(|n| done >= n) {
            self.closing.store(true, Ordering::SeqCst);
        }
    }

    /// The host stops: every game is told to end (keeping its save), and an AI decision
    /// waiting for a place to think stops waiting.
    pub(super) fn stop_games(&self) {
        for e in lock(&self.entries).iter() {
            let _ = e.tx.send(ToGame::Stop);
        }
        self.tables.close();
    }

    /// The game and seat holding `token`.
    pub(super) fn find_token(&self, token: SessionToken) -> Option<(Sender<ToGame>, Seat)> {
        let lobby = lock(&self.entries);
        lobby.iter().find_map(|e| {
            Seat::BOTH
                .into_iter()
                .find(|s| e.tokens[s.index()] == Some(token))
                .map(|s| (e.tx.clone(), s))
        })
    }

    /// Once `--games` is reached: end the games that never started, and stop when no
    /// game is left in progress.
    pub(super) fn stop_when_done(&self) {
        if !self.closing.load(Ordering::SeqCst) {
            return;
        }
        let in_progress = {
            let lobby = lock(&self.entries);
            for e in lobby.iter().filter(|e| !e.started) {
                let _ = e.tx.send(ToGame::Expire(
                    "the host has played its games and takes no new ones".into(),
                ));
            }
            lobby.iter().filter(|e| e.started).count()
        };
        if in_progress == 0 {
            let _ = self.stop.send(());
        }
    }

    pub(super) fn announce(&self) -> super::super::discovery::Announce {
        let (room, waiting) = {
            let lobby = lock(&self.entries);
            let room =
                lobby.len() < self.common.config.max_tables && !self.closing.load(Ordering::SeqCst);
            let waiting = lobby
                .iter()
                .filter(|e| !e.started)
                .map(|e| e.taken.iter().filter(|t| !**t).count())
                .sum::<usize>();
            (room, waiting)
        };
        let config = &self.common.config;
        let fresh = match (room, config.ai) {
            (false, _) => 0,
            (true, Some(_)) => 1,
            (true, None) => 2,
        };
        let free = if config.ai.is_none() && waiting > 0 {
            waiting
        } else {
            fresh
        };
        super::super::discovery::Announce {
            name: config.name.clone(),
            port: self.common.addr.port(),
            packs: self
                .common
                .content
                .packs
                .iter()
                .map(|p| (p.id.clone(), p.version.clone()))
                .collect(),
            seats_free: u8::try_from(free).unwrap_or(u8::MAX),
        }
    }

    /// Put `player` at a table: the first game waiting for a second player, or a new one
    /// (against the host's AI when it has one). Decided under the lobby's lock; the game
    /// itself hears of it over its channel.
    pub(super) fn seat(
        self: &Arc<Self>,
        ip: IpAddr,
        player: Player,
        deck: Vec<Vec<CardId>>,
        wanted: Option<Seat>,
    ) -> Result<(Sender<ToGame>, Seat), Close> {
        let token = player.token;
        let config = &self.common.config;
        let mut lobby = lock(&self.entries);
        if self.closing.load(Ordering::SeqCst) || self.common.stopping() {
            return Err(Close(
                "the host has played its games and takes no new ones".into(),
            ));
        }
        if config.ai.is_none() {
            let free = lobby.iter_mut().find_map(|e| {
                if e.started {
                    return None;
                }
                Seat::BOTH
                    .into_iter()
                    .filter(|s| wanted.is_none_or(|w| w == *s))
                    .find(|s| !e.taken[s.index()])
                    .map(|s| (e, s))
            });
            if let Some((e, seat)) = free {
                e.taken[seat.index()] = true;
                e.tokens[seat.index()] = Some(token);
                let tx = e.tx.clone();
                if tx.send(ToGame::Sit { seat, player, deck }).is_ok() {
                    return Ok((tx, seat));
                }
                return Err(Close("that game has just ended; join again".into()));
            }
        }
        let mine = lobby.iter().filter(|e| e.owner == Some(ip)).count();
        if mine >= config.max_tables_per_address
            && !Self::evict(
                &mut lobby,
                Some(ip),
                config.idle_game(),
                "its address opened more games than any other while this one waited",
            )
        {
            return Err(Close(format!(
                "your address holds {mine} games, the most one address may"
            )));
        }
        if lobby.len() >= config.max_tables
            && !Self::evict(
                &mut lobby,
                None,
                config.idle_game(),
                "the host needed its place for a new game while it waited",
            )
        {
            return Err(Close("the host holds as many games as it can".into()));
        }
        let id = self.next_table.fetch_add(1, Ordering::SeqCst);
        let mut table = HostedGame::new(id);
        table.owner = Some(ip);
        let mut taken = [false; 2];
        let seat = match config.ai {
            Some(level) => {
                let ai = config.ai_seat;
                table.seats[ai.index()] = Occupant::Ai(level);
                taken[ai.index()] = true;
                ai.other()
            }
            None => wanted.unwrap_or(Seat::One),
        };
        taken[seat.index()] = true;
        let mut tokens = [None, None];
        tokens[seat.index()] = Some(token);
        let (tx, rx) = channel();
        let _ = tx.send(ToGame::Sit { seat, player, deck });
        lobby.push(Entry {
            id,
            tx: tx.clone(),
            owner: Some(ip),
            started: false,
            paused_since: None,
            active_at: Instant::now(),
            taken,
            tokens,
        });
        drop(lobby);
        if !self.spawn_game(table, rx) {
            lock(&self.entries).retain(|e| e.id != id);
            return Err(Close("the host cannot start another game now".into()));
        }
        Ok((tx, seat))
    }

    /// Make room by ending a game that is not moving: paused (a player dropped), or
    /// with no move for `idle` (seated players who do not play, or a seat waiting
    /// for an opponent). Among those of `only` (or all): the one whose address holds the
    /// most games; of those, an idle game before a paused one (a player who dropped may
    /// come back; one who sits and does not play is holding a place); then the one still
    /// longest. Whether one was ended.
    pub(super) fn evict(
        lobby: &mut Vec<Entry>,
        only: Option<IpAddr>,
        idle: Duration,
        why: &str,
    ) -> bool {
        let mut per: HashMap<Option<IpAddr>, usize> = HashMap::new();
        for e in lobby.iter() {
            *per.entry(e.owner).or_default() += 1;
        }
        let now = Instant::now();
        let victim = lobby
            .iter()
            .enumerate()
            .filter(|(_, e)| only.is_none_or(|ip| e.owner == Some(ip)))
            .filter_map(|(i, e)| {
                let still = now.saturating_duration_since(e.active_at) >= idle;
                match e.paused_since {
                    Some(since) => Some((i, e, 0u8, since)),
                    None if still => Some((i, e, 1u8, e.active_at)),
                    None => None,
                }
            })
            .max_by_key(|(_, e, idle, since)| {
                (
                    per.get(&e.owner).copied().unwrap_or(0),
                    *idle,
                    std::cmp::Reverse(*since),
                )
            })
            .map(|(i, _, idle, _)| (i, idle));
        let Some((i, idle)) = victim else {
            return false;
        };
        let e = lobby.swap_remove(i);
        let what = if idle == 1 {
            "the game, with no move for a while, was ended"
        } else {
            "the paused game was ended"
        };
        let _ = e.tx.send(ToGame::Expire(format!("{what}: {why}")));
        true
    }

    fn spawn_game(self: &Arc<Self>, table: HostedGame, rx: Receiver<ToGame>) -> bool {
        let me = Arc::clone(self);
        self.tables.spawn(move || table::run(&me, table, &rx))
    }

    /// Take up the unfinished games saved in the save folder; a save whose game has
    /// waited longer than [`HostConfig::pause_expiry`] is removed instead.
    pub(super) fn resume_saved(self: &Arc<Self>) {
        let config = &self.common.config;
        let Some(dir) = &config.save_dir else {
            return;
        };
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        let catalog = Arc::clone(&self.common.content.catalog);
        let scripts = ai::hooks_for(&catalog);
        let engine = scripts.brain(&catalog);
        // Only the names this host writes (`game-N.json`, N without leading zeros): two
        // names for one number would resume as one game and overwrite each other.
        let mut saves: Vec<(u64, std::path::PathBuf)> = Vec::new();
        for entry in entries.filter_map(Result::ok) {
            let path = entry.path();
            let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
                continue;
            };
            let Some(id) = name
                .strip_prefix("game-")
                .and_then(|n| n.strip_suffix(".json"))
                .and_then(|n| n.parse::<u64>().ok())
            else {
                continue;
            };
            if table::save_path(dir, id) != path {
                self.common.log(format!(
                    "{} is not a name this host saves under (game-{id}.json); left alone",
                    crate::fsutil::shown(&path)
                ));
                continue;
            }
            saves.push((id, path));
        }
        saves.sort_unstable_by_key(|(id, _)| *id);
        // A new game never takes the number of a save, resumed or left alone.
        if let Some((last, _)) = saves.last() {
            self.next_table
                .fetch_max(last.saturating_add(1), Ordering::SeqCst);
        }
        let mut resumed = 0usize;
        for (id, path) in saves {
            if resumed >= config.max_tables {
                self.common.log(format!(
                    "game {id}: not resumed: the host holds at most {} games; its save is kept for a restart",
                    config.max_tables
                ));
                continue;
            }
            let age = table::age(&path);
            if age >= config.pause_expiry {
                let _ = std::fs::remove_file(&path);
                self.common.log(format!(
                    "game {id}: its save waited {} s, longer than the {} s a paused game is kept; removed",
                    age.as_secs(),
                    config.pause_expiry.as_secs()
                ));
                continue;
            }
            match table::restore(&self.common, &engine, id, &path) {
                Ok(mut table) => {
                    resumed += 1;
                    self.common.log(format!(
                        "game {id}: resumed from {} after {} moves; waiting for the players",
                        crate::fsutil::shown(&path),
                        table.moves()
                    ));
                    self.next_table.fetch_max(id + 1, Ordering::SeqCst);
                    // The wait counts from the last save.
                    let since = Instant::now().checked_sub(age).unwrap_or_else(Instant::now);
                    table.paused_since = Some(since);
                    let mut tokens = [None, None];
                    let mut taken = [false; 2];
                    for seat in Seat::BOTH {
                        match &table.seats[seat.index()] {
                            Occupant::Player(p) => {
                                tokens[seat.index()] = Some(p.token);
                                taken[seat.index()] = true;
                            }
                            Occupant::Ai(_) => taken[seat.index()] = true,
                            Occupant::Empty => {}
                        }
                    }
                    let (tx, rx) = channel();
                    lock(&self.entries).push(Entry {
                        id,
                        tx,
                        owner: None,
                        started: true,
                        paused_since: Some(since),
                        active_at: since,
                        taken,
                        tokens,
                    });
                    if !self.spawn_game(table, rx) {
                        lock(&self.entries).retain(|e| e.id != id);
                    }
                }
                Err(why) => self.common.log(format!(
                    "cannot resume {}: {why}",
                    crate::fsutil::shown(&path)
                )),
            }
        }
    }
}
