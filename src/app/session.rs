//! A game being played in the client: the state, who controls each seat, the moves so
//! far with their events, and the AI thinking on its own thread.
//!
//! Nothing here draws; the game screen reads a [`Session`] and sends it moves.
//!
//! `Table` is a catalog with this thread's script hooks, shared by games and the sandbox;
//! `Setup` holds each seat's `SeatDeck`; a `Session` has its `Timeline` and controllers. The
//! AI chooses on its own thread and the frame only polls a channel, so the UI thread never
//! runs a search.

use std::sync::Arc;
use std::sync::mpsc::{self, Receiver, TryRecvError};
use std::time::{Duration, Instant};

use crate::ai::{self, Budget, Level};
use crate::net::Seen;
use crate::net::client::Update;
use crate::net::events::WireEvent;
use crate::net::link::{Link, LinkEvent};
use crate::observe::{History, Observation};
use crate::rules::{
    CardId, Catalog, Cell, DeckId, Engine, Event, EventKind, GameState, Move, Play, Seat,
};
use crate::timeline::{Step, Timeline};

/// Why a game in the client cannot go on as asked: a move refused, a hook that failed,
/// decks that cannot be dealt, or a LAN host that said something this client cannot use.
/// `Display` is the line the player sees.
#[derive(Debug, PartialEq, thiserror::Error)]
pub enum SessionError {
    /// The engine refused the move (the state is unchanged).
    #[error(transparent)]
    Move(#[from] crate::rules::MoveError),
    /// A script hook failed outside a move (an income hook of a preview).
    #[error(transparent)]
    Hook(#[from] crate::rules::HookError),
    /// A seat's deck cannot be played with the loaded rules.
    #[error(transparent)]
    Deck(#[from] crate::rules::DeckError),
    /// The host's view of the game does not fit the content loaded here.
    #[error(transparent)]
    View(#[from] crate::net::protocol::ViewError),
    /// The host's events name something the content loaded here lacks.
    #[error(transparent)]
    Wire(#[from] crate::net::events::WireError),
    /// The game has ended (a seat conceded).
    #[error("the game is over")]
    Over,
    /// A LAN game's move played a card from outside the stacks.
    #[error("a LAN game plays from the stacks")]
    NotFromStacks,
    /// The host announced a move without a seat.
    #[error("the host named no seat")]
    NoSeat,
    /// The host played a card this client's content lacks.
    #[error("the host played an unknown card {0}")]
    UnknownCard(String),
    /// The host refused this player's move.
    #[error("the host refused the move: {0}")]
    HostRefused(String),
    /// The sandbox's deck is not in the content.
    #[error("the sandbox's deck is not in the loaded content")]
    NoDeck,
    /// The AI's thread ended without an answer.
    #[error("the AI stopped without a move")]
    AiStopped,
    /// The preview's thread ended (or could not start) without an answer.
    #[error("the preview could not be worked out: {0}")]
    PreviewStopped(String),
}

/// Who plays a seat.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Controller {
    /// A person at this screen.
    Human,
    /// The AI at a level.
    Ai(Level),
    /// A player on another machine (a LAN game).
    Remote,
}

/// A seat's deck for one game: its stacks, top card first, and what to call it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SeatDeck {
    /// Where it came from, for the player ("Starter", "My deck", "Random content").
    pub name: String,
    /// The stacks, top card first.
    pub stacks: Vec<Vec<CardId>>,
}

impl SeatDeck {
    /// A deck shipped in the loaded packs (`None` when `id` is not one).
    #[must_use]
    pub fn shipped(catalog: &Catalog, id: DeckId) -> Option<SeatDeck> {
        catalog.decks().get(id.index()).map(|d| SeatDeck {
            name: d.meta.name.clone(),
            stacks: d.stacks.clone(),
        })
    }
}

/// How a game is set up: "play again" starts the same setup (the same decks, random ones
/// included) with a new seed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Setup {
    /// Each seat's deck.
    pub decks: [SeatDeck; 2],
    /// Each seat's player.
    pub controllers: [Controller; 2],
    /// The game's seed.
    pub seed: u64,
}

/// The AI working out a move on another thread.
struct Thinking {
    seat: Seat,
    since: Instant,
    answer: Receiver<Option<Move>>,
    ready: Option<Option<Move>>,
}

/// How the AI plays in the client.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AiSettings {
    /// The shortest time between the AI's turn starting and its move showing.
    pub delay: Duration,
    /// `hard`'s thinking time per move.
    pub think: Duration,
}

impl Default for AiSettings {
    /// The profile's defaults (one place for the numbers).
    fn default() -> Self {
        super::ClientSettings::default().ai
    }
}

/// Content and the script hooks that run it on this thread: what a game or the
/// sandbox plays with.
pub struct Table {
    catalog: Arc<Catalog>,
    scripts: ai::Scripts,
}

impl Table {
    /// `catalog` with its own script host.
    #[must_use]
    pub fn new(catalog: Arc<Catalog>) -> Table {
        let scripts = ai::hooks_for(&catalog);
        Table { catalog, scripts }
    }

    /// The content.
    #[must_use]
    pub fn catalog(&self) -> &Arc<Catalog> {
        &self.catalog
    }

    /// The engine over the content and its scripts.
    #[must_use]
    pub fn engine(&self) -> Engine<'_> {
        Engine::new(&self.catalog, self.scripts.hooks())
    }

    /// The engine with the packs' AI heuristics, for hints and evaluations.
    #[must_use]
    pub fn brain(&self) -> ai::Brain<'_> {
        self.scripts.brain(&self.catalog)
    }

    /// A new game with these decks (seat 1's, seat 2's): the state and the opening
    /// token's events, or why the decks cannot be played.
    pub fn deal(
        &self,
        decks: [&[Vec<CardId>]; 2],
        seed: u64,
    ) -> Result<(GameState, Vec<Event>), SessionError> {
        let mut opening = Vec::new();
        let state = self.engine().new_game(decks, seed, &mut opening)?;
        Ok((state, opening))
    }
}

/// A game in progress (or finished).
pub struct Session {
    /// The setup it started from.
    pub setup: Setup,
    table: Table,
    timeline: Timeline,
    public: History,
    thinking: Option<Thinking>,
    conceded: Option<Seat>,
    remote: Option<Remote>,
}

/// A LAN game's side of a session: the link to the host and how it stands.
struct Remote {
    link: Link,
    /// A move was sent and its answer has not come.
    waiting: bool,
    status: Connection,
}

/// How a LAN game's connection stands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Connection {
    /// Connected, both players present.
    Connected,
    /// The opponent dropped; the host waits for them.
    OpponentAway,
    /// This player's connection dropped; reconnecting.
    Reconnecting(String),
    /// The connection ended.
    Closed(String),
}

impl Session {
    /// Start a game, or say why the decks cannot be played.
    pub fn start(catalog: Arc<Catalog>, setup: Setup) -> Result<Session, SessionError> {
        let table = Table::new(Arc::clone(&catalog));
        let decks = [&setup.decks[0].stacks[..], &setup.decks[1].stacks[..]];
        let (state, opening) = table.deal(decks, setup.seed)?;
        Ok(Session {
            setup,
            table,
            timeline: Timeline::new(state, opening, catalog),
            public: History::new(),
            thinking: None,
            conceded: None,
            remote: None,
        })
    }

    /// A LAN game: `seen` is this player's first view from the host (with the opening's
    /// `events`), `deck` what this player calls its deck, and moves go through `link`.
    pub fn remote(
        catalog: Arc<Catalog>,
        link: Link,
        seen: &Seen,
        events: &[WireEvent],
        deck: &str,
    ) -> Result<Session, SessionError> {
        let (state, public) = seen.restore(&catalog)?;
        let opening = crate::net::events::from_wire(&catalog, events)?;
        let me = seen.seat();
        let mut decks = [
            SeatDeck {
                name: deck.to_string(),
                stacks: Vec::new(),
            },
            SeatDeck {
                name: "their own".to_string(),
                stacks: Vec::new(),
            },
        ];
        let mut controllers = [Controller::Human, Controller::Remote];
        if me == Seat::Two {
            decks.swap(0, 1);
            controllers.swap(0, 1);
        }
        Ok(Session {
            setup: Setup {
                decks,
                controllers,
                seed: 0,
            },
            table: Table::new(Arc::clone(&catalog)),
            timeline: Timeline::new(state, opening, catalog),
            public: History::from_plays(public),
            thinking: None,
            conceded: None,
            remote: Some(Remote {
                link,
                waiting: false,
                status: Connection::Connected,
            }),
        })
    }

    /// Whether this is a LAN game.
    #[must_use]
    pub fn is_remote(&self) -> bool {
        self.remote.is_some()
    }

    /// A LAN game's connection.
    #[must_use]
    pub fn connection(&self) -> Option<&Connection> {
        self.remote.as_ref().map(|r| &r.status)
    }

    /// Play `mv` here, or in a LAN game send it to the host (`None`: sent; its step comes
    /// from [`Session::poll_ai`] once the host has played it).
    pub fn submit(&mut self, mv: Move) -> Result<Option<Step>, SessionError> {
        let Some(remote) = &mut self.remote else {
            return self.play(mv).map(|s| Some(s.clone()));
        };
        // Refuse at once what the host would refuse (a taken cell, an empty stack).
        Engine::new(self.table.catalog(), &crate::rules::NoHooks)
            .check(self.timeline.state(), mv)?;
        let Play::Stack(stack) = mv.play else {
            return Err(SessionError::NotFromStacks);
        };
        remote.link.play(stack, mv.cell);
        remote.waiting = true;
        Ok(None)
    }

    /// Take what the host said: the next move played (one a call, for its animation).
    fn poll_remote(&mut self) -> Result<Option<&Step>, SessionError> {
        let Some(remote) = &mut self.remote else {
            return Ok(None);
        };
        while let Some(event) = remote.link.poll() {
            match event {
                LinkEvent::Update(Update::State { seen, last, events }) => {
                    let catalog = Arc::clone(self.table.catalog());
                    let (state, public) = seen.restore(&catalog)?;
                    remote.status = Connection::Connected;
                    let Some(played) = last else {
                        // A snapshot (after a reconnect): take it as the position.
                        if state.moves_played() != self.timeline.state().moves_played()
                            || state != *self.timeline.state()
                        {
                            self.timeline = Timeline::new(state, Vec::new(), catalog);
                            self.public = History::from_plays(public);
                        }
                        remote.waiting = false;
                        continue;
                    };
                    let seat =
                        crate::net::protocol::seat_of(played.seat).ok_or(SessionError::NoSeat)?;
                    if seat == seen.seat() {
                        remote.waiting = false;
                    }
                    let card = catalog
                        .card_named(&played.card)
                        .map_err(|_| SessionError::UnknownCard(played.card.clone()))?;
                    let (x, y) = played.cell.unwrap_or_default();
                    let step = Step {
                        action: crate::timeline::Action::Move {
                            mv: Move {
                                seat,
                                play: Play::Stack(played.stack),
                                cell: Cell::new(x, y),
                            },
                            card,
                        },
                        events: crate::net::events::from_wire(&catalog, &events)?,
                        after: state,
                        catalog,
                    };
                    self.public = History::from_plays(public);
                    return Ok(Some(self.timeline.record(step)));
                }
                LinkEvent::Update(Update::MoveRefused { reason, .. }) => {
                    remote.waiting = false;
                    return Err(SessionError::HostRefused(reason));
                }
                LinkEvent::Update(Update::Paused) => remote.status = Connection::OpponentAway,
                LinkEvent::Update(Update::Resumed) | LinkEvent::Back => {
                    remote.status = Connection::Connected;
                }
                LinkEvent::Lost(why) => remote.status = Connection::Reconnecting(why),
                LinkEvent::Closed(why) => {
                    if !self.timeline.state().is_over() {
                        remote.status = Connection::Closed(why);
                    }
                }
                LinkEvent::Update(_)
                | LinkEvent::Welcome { .. }
                | LinkEvent::Fetching { .. }
                | LinkEvent::ChooseDeck(_)
                | LinkEvent::Ready(_) => {}
            }
        }
        Ok(None)
    }

    /// The content being played.
    #[must_use]
    pub fn catalog(&self) -> &Arc<Catalog> {
        self.table.catalog()
    }

    /// The engine over the session's content and scripts.
    #[must_use]
    pub fn engine(&self) -> Engine<'_> {
        self.table.engine()
    }

    /// The current state.
    #[must_use]
    pub fn state(&self) -> &GameState {
        self.timeline.state()
    }

    /// The game's moves (a game only ever adds to it).
    #[must_use]
    pub fn timeline(&self) -> &Timeline {
        &self.timeline
    }

    /// The moves so far, oldest first.
    #[must_use]
    pub fn played(&self) -> &[Step] {
        self.timeline.steps()
    }

    /// The opening token's events.
    #[must_use]
    pub fn opening(&self) -> &[Event] {
        self.timeline.opening()
    }

    /// Who controls `seat`.
    #[must_use]
    pub fn controller(&self, seat: Seat) -> Controller {
        self.setup.controllers[seat.index()]
    }

    /// Whether the game has ended (by the rules or a concession).
    #[must_use]
    pub fn is_over(&self) -> bool {
        self.timeline.state().is_over() || self.conceded.is_some()
    }

    /// The seat that conceded, if one did.
    #[must_use]
    pub fn conceded(&self) -> Option<Seat> {
        self.conceded
    }

    /// The winner (`None` for a draw or a game still going).
    #[must_use]
    pub fn winner(&self) -> Option<Seat> {
        if let Some(seat) = self.conceded {
            return Some(seat.other());
        }
        self.timeline.state().outcome().and_then(|o| o.winner)
    }

    /// Whether a person is to move now (in a LAN game: this player, connected, with no
    /// move of theirs on its way).
    #[must_use]
    pub fn human_to_move(&self) -> bool {
        let free = self
            .remote
            .as_ref()
            .is_none_or(|r| !r.waiting && r.status == Connection::Connected);
        free && !self.is_over()
            && self.controller(self.timeline.state().turn()) == Controller::Human
    }

    /// Each seat's score after every move, from 0–0 before the first.
    #[must_use]
    pub fn score_trail(&self) -> Vec<[i64; 2]> {
        self.timeline.score_trail()
    }

    /// The move that plays stack `stack` on `cell` for the seat to move (what the hover
    /// preview asks about; see [`super::hover::Previews`]).
    #[must_use]
    pub fn move_of(&self, stack: u8, cell: Cell) -> Move {
        Move {
            seat: self.timeline.state().turn(),
            play: Play::Stack(stack),
            cell,
        }
    }

    /// Play a move for the seat to move.
    pub fn play(&mut self, mv: Move) -> Result<&Step, SessionError> {
        // Whatever happens, a pending AI answer is for the position before this move.
        self.thinking = None;
        if self.conceded.is_some() {
            return Err(SessionError::Over);
        }
        let state = self.timeline.state().clone();
        let from = self.public.position_of(&state);
        let engine = self.table.engine();
        let played = self
            .timeline
            .play(&engine, self.table.catalog(), state, mv)?;
        self.public.record(from, &played.events);
        self.thinking = None;
        Ok(played)
    }

    /// Concede for `seat`.
    pub fn concede(&mut self, seat: Seat) {
        if !self.is_over() {
            if let Some(r) = &self.remote {
                // The host ends the game for both players.
                r.link.concede();
            }
            self.conceded = Some(seat);
            self.thinking = None;
        }
    }

    /// Whether the AI is working on a move.
    #[must_use]
    pub fn ai_thinking(&self) -> bool {
        self.thinking.is_some()
    }

    /// Drive the AI: start it when it is its turn, and play its answer once it has come
    /// and `settings.delay` has passed since its turn began. Returns the move played.
    /// Never blocks.
    pub fn poll_ai(&mut self, settings: AiSettings) -> Result<Option<&Step>, SessionError> {
        if self.remote.is_some() {
            return self.poll_remote();
        }
        if self.is_over() {
            return Ok(None);
        }
        let seat = self.timeline.state().turn();
        let Controller::Ai(level) = self.controller(seat) else {
            return Ok(None);
        };
        if self.thinking.as_ref().is_none_or(|t| t.seat != seat) {
            self.thinking = Some(self.think(seat, level, settings.think));
        }
        let Some(thinking) = self.thinking.as_mut() else {
            return Ok(None);
        };
        if thinking.ready.is_none() {
            match thinking.answer.try_recv() {
                Ok(answer) => thinking.ready = Some(answer),
                Err(TryRecvError::Empty) => return Ok(None),
                Err(TryRecvError::Disconnected) => {
                    self.thinking = None;
                    return Err(SessionError::AiStopped);
                }
            }
        }
        if thinking.since.elapsed() < settings.delay {
            return Ok(None);
        }
        match thinking.ready {
            Some(Some(mv)) => self.play(mv).map(Some),
            _ => {
                // No legal move: the board is full, which ends the game by the rules.
                self.thinking = None;
                Ok(None)
            }
        }
    }

    /// How long until the AI's move may show, if it is waiting on the delay.
    #[must_use]
    pub fn ai_wait(&self, settings: AiSettings) -> Option<Duration> {
        self.thinking
            .as_ref()
            .map(|t| settings.delay.saturating_sub(t.since.elapsed()))
    }

    fn think(&self, seat: Seat, level: Level, think: Duration) -> Thinking {
        let (tx, rx) = mpsc::channel();
        let catalog = Arc::clone(self.table.catalog());
        let obs = Observation::new(self.timeline.state(), seat, &self.public, false);
        let seed = self.setup.seed
            ^ u64::from(self.timeline.state().moves_played()).wrapping_mul(0x9E37_79B9_7F4A_7C15)
            ^ u64::from(seat.number());
        // If the thread cannot start, the sender is dropped with it and the next poll
        // reports "the AI stopped without a move".
        let _ = crate::script::threads::spawn("tokensmith-ai", move || {
            let scripts = ai::hooks_for(&catalog);
            let engine = scripts.brain(&catalog);
            let options = ai::Options {
                budget: Budget::Time(think),
                omniscient: false,
                scripts: crate::ai::ScriptLimits::DEFAULT,
            };
            let mut agent = ai::agent(level, seed, options);
            // The receiver may be gone (a new game, a concession): nothing to do then.
            let _ = tx.send(agent.choose(&engine, &obs));
        });
        Thinking {
            seat,
            since: Instant::now(),
            answer: rx,
            ready: None,
        }
    }

    /// The cells an event touches, for highlighting.
    #[must_use]
    pub fn event_cells(event: &Event) -> Vec<Cell> {
        match &event.kind {
            EventKind::Placed { cell, .. }
            | EventKind::Damaged { cell, .. }
            | EventKind::ValueSet { cell, .. }
            | EventKind::Removed { cell, .. }
            | EventKind::Spawned { cell, .. }
            | EventKind::Transformed { cell, .. } => vec![*cell],
            EventKind::Moved { from, to } => vec![*from, *to],
            EventKind::Swapped { a, b } => vec![*a, *b],
            _ => Vec::new(),
        }
    }
}
