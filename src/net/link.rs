//! A connection to a host on a thread of its own, for a program that must never block
//! (the desktop client): the handshake, pack sync after the player accepts, loading the
//! game's content, taking a seat, then moves out and views in — and reconnecting with
//! the seat's token after a drop.
//!
//! While it waits for the player (to accept the host's packs, to choose a deck of the
//! game's), the host keeps hearing pings.

use std::any::Any;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::mpsc::{Receiver, Sender, TryRecvError, channel};
use std::time::Duration;

use crate::packs::Folders;
use crate::rules::{CardId, Catalog, Cell, Seat};

use super::client::{Client, ClientError, Update};
use super::sync::{Cache, plan};

/// What the link reports.
#[derive(Debug)]
pub enum LinkEvent {
    /// Connected; the host's name, and the packs that differ from the player's own
    /// (one line each). When some must be fetched, the link waits for
    /// [`Link::accept_packs`] (or [`Link::leave`]).
    Welcome {
        /// The host's name.
        host: String,
        /// The differences, for people.
        differences: Vec<String>,
        /// Whether packs must be fetched before playing.
        needs_packs: bool,
    },
    /// Bytes of the host's packs received so far.
    Fetching {
        /// Received.
        received: u64,
        /// Of.
        total: u64,
    },
    /// The game's content is loaded, and the deck the player picked before joining is not
    /// one of it (or they chose to pick when connected): the link waits for
    /// [`Link::choose_deck`] (or [`Link::leave`]), the host hearing pings meanwhile.
    ChooseDeck(Arc<Catalog>),
    /// The game's content is loaded and the deck sent.
    Ready(Arc<Catalog>),
    /// The host said something.
    Update(Update),
    /// The connection dropped; reconnecting.
    Lost(String),
    /// Reconnected: the seat is held again.
    Back,
    /// The link ended, and why (the host's reason, an error, or the game's end).
    Closed(String),
}

enum Command {
    AcceptPacks,
    Deck(Vec<Vec<CardId>>),
    Play(u8, Cell),
    Concede,
    Leave,
}

/// The deck to join with, resolved once the game's content is known: its stacks, `None`
/// to ask the player ([`LinkEvent::ChooseDeck`]), or why the link should end.
pub type DeckFor = Box<dyn FnOnce(&Catalog) -> Result<Option<Vec<Vec<CardId>>>, String> + Send>;

/// Where and how to join.
pub struct JoinRequest {
    /// The host.
    pub addr: SocketAddr,
    /// The player's name.
    pub name: String,
    /// The player's own pack folders.
    pub folders: Folders,
    /// The cache for the host's packs.
    pub cache: Cache,
    /// The deck.
    pub deck: DeckFor,
    /// The seat wanted.
    pub seat: Option<Seat>,
}

/// A running connection. Dropping it leaves the game (the host keeps the seat for a
/// reconnect).
pub struct Link {
    commands: Sender<Command>,
    events: Receiver<LinkEvent>,
    held: Vec<Box<dyn Any + Send>>,
    /// The thread has ended and said so (a closed channel is reported once).
    ended: std::cell::Cell<bool>,
}

impl Link {
    /// Start joining.
    #[must_use]
    pub fn join(request: JoinRequest) -> Link {
        let (commands, command_rx) = channel();
        let (event_tx, events) = channel();
        let spawned = crate::script::threads::spawn("lan-link", {
            let event_tx = event_tx.clone();
            move || {
                let end = match run(request, &command_rx, &event_tx) {
                    Ok(why) => why,
                    Err(e) => e.to_string(),
                };
                let _ = event_tx.send(LinkEvent::Closed(end));
            }
        });
        if let Err(e) = spawned {
            let _ = event_tx.send(LinkEvent::Closed(format!("cannot start: {e}")));
        }
        Link {
            commands,
            events,
            held: Vec::new(),
            ended: std::cell::Cell::new(false),
        }
    }

    /// Keep `thing` alive as long as the link (a host this player runs).
    pub fn hold(&mut self, thing: Box<dyn Any + Send>) {
        self.held.push(thing);
    }

    /// Fetch the host's packs.
    pub fn accept_packs(&self) {
        let _ = self.commands.send(Command::AcceptPacks);
    }

    /// Join with these stacks (of the catalog [`LinkEvent::ChooseDeck`] gave).
    pub fn choose_deck(&self, stacks: Vec<Vec<CardId>>) {
        let _ = self.commands.send(Command::Deck(stacks));
    }

    /// Send a move.
    pub fn play(&self, stack: u8, cell: Cell) {
        let _ = self.commands.send(Command::Play(stack, cell));
    }

    /// Give up the game (the host ends it; the other seat wins).
    pub fn concede(&self) {
        let _ = self.commands.send(Command::Concede);
    }

    /// Leave.
    pub fn leave(&self) {
        let _ = self.commands.send(Command::Leave);
    }

    /// The next event, if one has come. After [`LinkEvent::Closed`], none ever.
    #[must_use]
    pub fn poll(&self) -> Option<LinkEvent> {
        if self.ended.get() {
            return None;
        }
        let event = match self.events.try_recv() {
            Ok(e) => e,
            Err(TryRecvError::Empty) => return None,
            Err(TryRecvError::Disconnected) => LinkEvent::Closed("the link stopped".into()),
        };
        if matches!(event, LinkEvent::Closed(_)) {
            self.ended.set(true);
        }
        Some(event)
    }

    /// Wait up to `wait` for the next event (tests).
    pub fn wait(&self, wait: Duration) -> Option<LinkEvent> {
        self.events.recv_timeout(wait).ok()
    }
}

impl Drop for Link {
    fn drop(&mut self) {
        let _ = self.commands.send(Command::Leave);
    }
}

/// Wait for the player's answer (the command `answer` takes), reading the connection
/// meanwhile so the host hears pings; `None` when the player left.
fn wait_for_player<T>(
    client: &mut Client,
    commands: &Receiver<Command>,
    answer: impl Fn(Command) -> Option<T>,
) -> Result<Option<T>, ClientError> {
    loop {
        match commands.recv_timeout(Duration::from_secs(2)) {
            Ok(Command::Leave) | Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                return Ok(None);
            }
            Ok(command) => {
                if let Some(t) = answer(command) {
                    return Ok(Some(t));
                }
            }
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                client.next(Duration::from_millis(1))?;
            }
        }
    }
}

fn run(
    request: JoinRequest,
    commands: &Receiver<Command>,
    events: &Sender<LinkEvent>,
) -> Result<String, ClientError> {
    let JoinRequest {
        addr,
        name,
        folders,
        cache,
        deck,
        seat,
    } = request;
    let mut client = Client::connect(addr, &name, None, Duration::from_secs(10))?;
    let mut plan = plan(&client.welcome().packs, &folders, &cache);
    // The packs this join receives: if the game does not load, only these leave the
    // cache (packs cached before, for this host or another, loaded then).
    let fetched = plan.to_fetch();
    let needs_packs = !fetched.is_empty();
    let _ = events.send(LinkEvent::Welcome {
        host: client.welcome().host.clone(),
        differences: plan.describe(),
        needs_packs,
    });
    if needs_packs {
        let accepted = wait_for_player(&mut client, commands, |c| {
            matches!(c, Command::AcceptPacks).then_some(())
        })?;
        if accepted.is_none() {
            return Ok("left before the game".into());
        }
        client.fetch(&mut plan, &cache, |received, total| {
            let _ = events.send(LinkEvent::Fetching { received, total });
        })?;
    }
    let options = plan
        .load_options()
        .ok_or_else(|| ClientError::Protocol("a pack is still missing".into()))?;
    let loaded = crate::script::load(&options);
    let Some(catalog) = loaded.catalog else {
        // Packs received from the host that do not load are not kept.
        for r in plan.cached(&cache) {
            if fetched.contains(&r.id) {
                let _ = cache.remove(&r.hash);
            }
        }
        let first = loaded
            .diagnostics
            .iter()
            .find(|d| d.is_error())
            .map(ToString::to_string)
            .unwrap_or_default();
        return Ok(format!("the game's packs do not load here: {first}"));
    };
    let catalog = Arc::new(catalog);
    let stacks = match deck(&catalog) {
        Ok(Some(s)) => s,
        Ok(None) => {
            let _ = events.send(LinkEvent::ChooseDeck(Arc::clone(&catalog)));
            let chosen = wait_for_player(&mut client, commands, |c| match c {
                Command::Deck(stacks) => Some(stacks),
                _ => None,
            })?;
            match chosen {
                Some(stacks) => stacks,
                None => return Ok("left before the game".into()),
            }
        }
        Err(e) => return Ok(e),
    };
    client.join_as(&super::protocol::deck_keys(&catalog, &stacks), seat)?;
    let _ = events.send(LinkEvent::Ready(Arc::clone(&catalog)));
    loop {
        loop {
            match commands.try_recv() {
                Ok(Command::Play(stack, cell)) => {
                    // A drop shows at the next read, which reconnects.
                    if let Err(e) = client.play(stack, cell)
                        && !e.is_disconnect()
                    {
                        return Err(e);
                    }
                }
                Ok(Command::Concede) => {
                    if let Err(e) = client.concede()
                        && !e.is_disconnect()
                    {
                        return Err(e);
                    }
                }
                Ok(Command::Leave) | Err(TryRecvError::Disconnected) => {
                    return Ok("left the game".into());
                }
                Ok(Command::AcceptPacks | Command::Deck(_)) => {}
                Err(TryRecvError::Empty) => break,
            }
        }
        match client.next(Duration::from_millis(30)) {
            Ok(Some(update)) => {
                let over = matches!(&update, Update::State { seen, .. } if seen.over);
                let _ = events.send(LinkEvent::Update(update));
                if over {
                    return Ok("the game is over".into());
                }
            }
            Ok(None) => {}
            Err(e) if e.is_disconnect() => {
                // Once per run of drops, not per attempt.
                if client.is_steady() {
                    let _ = events.send(LinkEvent::Lost(e.to_string()));
                }
                client = client.reconnect(Duration::from_secs(60))?;
                let _ = events.send(LinkEvent::Back);
            }
            Err(e) => return Err(e),
        }
    }
}
