//! "Play on LAN": host a game (this player's seat and deck, the enabled packs, sent to a
//! joiner who lacks them) or join one (found on the network or by address), then play
//! it on the usual game screen.
//!
//! Hosting runs a `net::Host` that the player joins over loopback like anyone; then a
//! `Session::remote` on the usual game screen, whose moves go to the host through
//! `net::link` and whose steps are the host's (`Timeline::record`).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;

use egui::{RichText, Ui};

use crate::net::client::Update;
use crate::net::discovery::{Beacon, DISCOVERY_PORT, Found, default_targets, discover};
use crate::net::link::{DeckFor, JoinRequest, Link, LinkEvent};
use crate::net::sync::Cache;
use crate::net::{Content, GAME_PORT, Host, HostConfig};
use crate::packs::Folders;
use crate::profile::SavedDeck;
use crate::rules::{Catalog, Seat};

use super::session::Session;
use super::{Library, theme};

/// Where the screen's games get their packs and decks.
pub struct LanContext {
    /// This player's pack folders.
    pub folders: Folders,
    /// Where the host's packs are kept (`PROFILE/lan-packs`).
    pub cache: PathBuf,
    /// This player's saved decks.
    pub saved: Vec<SavedDeck>,
    /// This player's name.
    pub name: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Tab {
    Host,
    Join,
}

/// A deck to play: a ready deck of the packs (by key), a saved one, or one of the game's
/// decks picked once its packs are known (a joiner who lacks the host's packs has not
/// seen their decks yet).
#[derive(Clone, Debug, PartialEq, Eq)]
enum DeckChoice {
    Shipped { key: String, name: String },
    Saved(SavedDeck),
    Later,
}

/// What the deck picker calls [`DeckChoice::Later`].
const LATER: &str = "Choose when connected";

impl DeckChoice {
    fn name(&self) -> &str {
        match self {
            DeckChoice::Shipped { name, .. } => name,
            DeckChoice::Saved(d) => &d.name,
            DeckChoice::Later => LATER,
        }
    }

    /// The deck, resolved once the game's content is known; when the game has no such
    /// deck (or not all its cards), the player is asked to choose one of the game's.
    fn resolver(&self) -> DeckFor {
        let choice = self.clone();
        Box::new(move |catalog: &Catalog| Ok(choice.stacks_in(catalog)))
    }

    /// The stacks in `catalog`, if it has the deck whole.
    fn stacks_in(&self, catalog: &Catalog) -> Option<Vec<Vec<crate::rules::CardId>>> {
        match self {
            DeckChoice::Shipped { key, .. } => catalog
                .deck_named(key)
                .ok()
                .map(|id| catalog.deck(id).stacks.clone()),
            DeckChoice::Saved(deck) => {
                let r = deck.resolve(catalog);
                r.missing.is_empty().then_some(r.stacks)
            }
            DeckChoice::Later => None,
        }
    }

    /// Why the player is asked to choose a deck of `catalog`.
    fn why_choose(&self, catalog: &Catalog) -> String {
        match self {
            DeckChoice::Shipped { name, .. } => {
                format!("The game's packs have no deck '{name}': choose one of theirs.")
            }
            DeckChoice::Saved(deck) => format!(
                "Your deck '{}' has cards this game lacks ({}): choose another.",
                deck.name,
                deck.resolve(catalog).missing.join(", ")
            ),
            DeckChoice::Later => "Choose your deck from the game's packs.".to_string(),
        }
    }
}

/// A joiner choosing a deck of the game's packs.
struct Choosing {
    /// Why they are asked.
    note: String,
    /// The decks on offer: the game's, then the player's saved decks it has whole.
    offer: Vec<(String, Vec<Vec<crate::rules::CardId>>)>,
    /// The one picked.
    pick: Option<usize>,
}

enum Phase {
    Setup,
    Connecting(Box<Connecting>),
}

struct Connecting {
    link: Link,
    /// What to tell the other player (when hosting).
    hosting: Option<String>,
    host: Option<String>,
    differences: Vec<String>,
    asking: bool,
    progress: Option<(u64, u64)>,
    status: String,
    catalog: Option<Arc<Catalog>>,
    /// Asking for a deck of the game's packs.
    choosing: Option<Choosing>,
    /// The deck chosen when connected.
    deck_name: Option<String>,
}

/// What the screen asks of the app.
pub enum LanAction {
    /// Stay.
    Stay,
    /// Back to the menu.
    Back,
    /// The game has started: play it.
    Start(Box<Session>),
}

/// The "Play on LAN" screen.
pub struct LanScreen {
    context: LanContext,
    tab: Tab,
    deck: Option<DeckChoice>,
    seat: Seat,
    port: String,
    send_packs: bool,
    discoverable: bool,
    address: String,
    found: Vec<Found>,
    finding: Option<Receiver<Vec<Found>>>,
    phase: Phase,
    problem: Option<String>,
}

impl LanScreen {
    /// The screen, with the first ready deck picked.
    #[must_use]
    pub fn new(context: LanContext, library: &Library) -> LanScreen {
        let deck = library.catalog.as_ref().and_then(|c| {
            c.decks().first().map(|d| DeckChoice::Shipped {
                key: d.meta.key(),
                name: d.meta.name.clone(),
            })
        });
        LanScreen {
            context,
            tab: Tab::Host,
            deck,
            seat: Seat::One,
            port: GAME_PORT.to_string(),
            send_packs: true,
            discoverable: true,
            address: String::new(),
            found: Vec::new(),
            finding: None,
            phase: Phase::Setup,
            problem: None,
        }
    }

    /// Draw the screen.
    pub fn show(&mut self, ui: &mut Ui, library: &Library) -> LanAction {
        let mut action = LanAction::Stay;
        if let Some(rx) = &self.finding
            && let Ok(found) = rx.try_recv()
        {
            self.found = found;
            self.finding = None;
        }
        if let Phase::Connecting(_) = self.phase {
            ui.ctx().request_repaint_after(Duration::from_millis(50));
            if let Some(session) = self.poll() {
                return LanAction::Start(session);
            }
        }
        egui::CentralPanel::default_margins().show(ui, |ui| {
            ui.horizontal(|ui| {
                if ui.button("◀ Menu").clicked() {
                    action = LanAction::Back;
                }
                ui.heading("Play on LAN");
            });
            ui.add_space(8.0);
            if let Some(p) = &self.problem {
                ui.colored_label(theme::DANGER, p);
            }
            match &mut self.phase {
                Phase::Setup => self.setup(ui, library),
                Phase::Connecting(c) => {
                    if Self::connecting(ui, c) {
                        self.phase = Phase::Setup;
                    }
                }
            }
        });
        action
    }

    fn setup(&mut self, ui: &mut Ui, library: &Library) {
        ui.horizontal(|ui| {
            ui.selectable_value(&mut self.tab, Tab::Host, "Host a game");
            if ui
                .selectable_value(&mut self.tab, Tab::Join, "Join a game")
                .clicked()
                && self.found.is_empty()
            {
                self.refresh();
            }
        });
        ui.separator();
        self.deck_picker(ui, library);
        ui.add_space(6.0);
        match self.tab {
            Tab::Host => self.host_form(ui, library),
            Tab::Join => self.join_form(ui),
        }
    }

    fn deck_picker(&mut self, ui: &mut Ui, library: &Library) {
        let Some(catalog) = library.catalog.as_ref() else {
            ui.colored_label(theme::DANGER, "The packs have errors: fix them first.");
            return;
        };
        ui.horizontal(|ui| {
            let label = ui.label("Your deck");
            let shown = self
                .deck
                .as_ref()
                .map_or("(none)", DeckChoice::name)
                .to_string();
            egui::ComboBox::from_id_salt("lan-deck")
                .width(220.0)
                .selected_text(shown)
                .show_ui(ui, |ui| {
                    for d in catalog.decks() {
                        let choice = DeckChoice::Shipped {
                            key: d.meta.key(),
                            name: d.meta.name.clone(),
                        };
                        let on = self.deck.as_ref() == Some(&choice);
                        if ui.selectable_label(on, &d.meta.name).clicked() {
                            self.deck = Some(choice);
                        }
                    }
                    for d in &self.context.saved {
                        let choice = DeckChoice::Saved(d.clone());
                        let on = self.deck.as_ref() == Some(&choice);
                        if ui
                            .selectable_label(on, format!("{} (saved)", d.name))
                            .clicked()
                        {
                            self.deck = Some(choice);
                        }
                    }
                    if self.tab == Tab::Join {
                        let on = self.deck == Some(DeckChoice::Later);
                        if ui
                            .selectable_label(on, LATER)
                            .on_hover_text("Pick one of the game's decks once its packs are here (a host's pack may bring decks you do not have).")
                            .clicked()
                        {
                            self.deck = Some(DeckChoice::Later);
                        }
                    }
                })
                .response
                .labelled_by(label.id);
        });
    }

    fn host_form(&mut self, ui: &mut Ui, library: &Library) {
        ui.horizontal(|ui| {
            ui.label("Your seat");
            ui.selectable_value(&mut self.seat, Seat::One, "Seat 1 (moves first)");
            ui.selectable_value(&mut self.seat, Seat::Two, "Seat 2");
        });
        ui.horizontal(|ui| {
            let label = ui.label("Port");
            ui.add(egui::TextEdit::singleline(&mut self.port).desired_width(80.0))
                .labelled_by(label.id);
        });
        ui.checkbox(
            &mut self.send_packs,
            "Send my packs to a player who lacks them",
        );
        ui.checkbox(
            &mut self.discoverable,
            "Show this game to players on the network",
        );
        let packs: Vec<String> = library
            .packs
            .iter()
            .map(|p| format!("{} {}", p.name, p.version))
            .collect();
        ui.weak(format!("Packs: {}", packs.join(", ")));
        ui.add_space(6.0);
        if ui.button(RichText::new("Host").size(18.0)).clicked() {
            match self.start_hosting(library) {
                Ok(c) => {
                    self.problem = None;
                    self.phase = Phase::Connecting(Box::new(c));
                }
                Err(e) => self.problem = Some(e),
            }
        }
    }

    fn join_form(&mut self, ui: &mut Ui) {
        ui.horizontal(|ui| {
            ui.strong("Games on the network");
            if self.finding.is_some() {
                ui.spinner();
            } else if ui.button("Refresh").clicked() {
                self.refresh();
            }
        });
        if self.found.is_empty() && self.finding.is_none() {
            ui.weak("None found (a host may not show its game, or the network blocks it: join by address).");
        }
        let mut join_at = None;
        for f in &self.found {
            ui.horizontal(|ui| {
                ui.label(format!(
                    "{} — {} — {} seat(s) free — {}",
                    f.announce.name,
                    f.addr,
                    f.announce.seats_free,
                    f.announce.packs_text()
                ));
                if ui.button("Join").clicked() {
                    join_at = Some(f.addr);
                }
            });
        }
        ui.add_space(6.0);
        ui.horizontal(|ui| {
            let label = ui.label("Address");
            ui.add(
                egui::TextEdit::singleline(&mut self.address)
                    .hint_text("192.168.1.20:47320")
                    .desired_width(200.0),
            )
            .labelled_by(label.id);
            if ui.button("Join by address").clicked() {
                match crate::net::address(&self.address) {
                    Ok(a) => join_at = Some(a),
                    Err(e) => self.problem = Some(e.to_string()),
                }
            }
        });
        if let Some(addr) = join_at {
            match self.start_joining(addr, None, None) {
                Ok(c) => {
                    self.problem = None;
                    self.phase = Phase::Connecting(Box::new(c));
                }
                Err(e) => self.problem = Some(e),
            }
        }
    }

    fn refresh(&mut self) {
        let (tx, rx) = channel();
        self.finding = Some(rx);
        let _ = crate::script::threads::spawn("lan-discover", move || {
            let found = discover(&default_targets(DISCOVERY_PORT), Duration::from_millis(800))
                .unwrap_or_default();
            let _ = tx.send(found);
        });
    }

    fn start_hosting(&self, library: &Library) -> Result<Connecting, String> {
        let catalog = library
            .catalog
            .clone()
            .ok_or("the packs have errors: fix them first")?;
        let port: u16 = self
            .port
            .trim()
            .parse()
            .map_err(|_| format!("'{}' is not a port (1 to 65535)", self.port.trim()))?;
        let content = Content::new(catalog, &library.options.folders).map_err(|e| e.to_string())?;
        let mut config = HostConfig::new(
            &host_name(&self.context.name, machine_name().as_deref()),
            SocketAddr::from(([0, 0, 0, 0], port)),
        );
        config.games = Some(1);
        config.max_tables = 1;
        config.sends_packs = self.send_packs;
        let host =
            Host::start(config, content).map_err(|e| format!("cannot host on port {port}: {e}"))?;
        let local = SocketAddr::from(([127, 0, 0, 1], host.addr().port()));
        let beacon = if self.discoverable {
            Beacon::start(DISCOVERY_PORT, host.announcer()).ok()
        } else {
            None
        };
        let shown = if self.discoverable && beacon.is_none() {
            " (another game on this machine answers on the network: join by address)"
        } else {
            ""
        };
        let port = host.addr().port();
        let addresses: Vec<String> = crate::net::network_addresses()
            .iter()
            .map(|ip| SocketAddr::new(*ip, port).to_string())
            .collect();
        let hosting = if addresses.is_empty() {
            format!(
                "Hosting on port {port}: the other player joins this machine's address, port {port} (no network address was found here: look it up in the network settings){shown}."
            )
        } else {
            format!(
                "Hosting on port {port}: give the other player {}{shown}.",
                addresses.join(" or ")
            )
        };
        let mut c = self.start_joining(local, Some(self.seat), Some(hosting))?;
        c.link.hold(Box::new(host));
        if let Some(b) = beacon {
            c.link.hold(Box::new(b));
        }
        Ok(c)
    }

    fn start_joining(
        &self,
        addr: SocketAddr,
        seat: Option<Seat>,
        hosting: Option<String>,
    ) -> Result<Connecting, String> {
        let deck = self.deck.as_ref().ok_or("pick a deck first")?;
        let link = Link::join(JoinRequest {
            addr,
            name: self.context.name.clone(),
            folders: self.context.folders.clone(),
            cache: Cache::new(&self.context.cache),
            deck: deck.resolver(),
            seat,
        });
        Ok(Connecting {
            link,
            hosting,
            host: None,
            differences: Vec::new(),
            asking: false,
            progress: None,
            status: format!("Connecting to {addr}…"),
            catalog: None,
            choosing: None,
            deck_name: None,
        })
    }

    /// Take the link's news; the session once the game has started.
    fn poll(&mut self) -> Option<Box<Session>> {
        let Phase::Connecting(c) = &mut self.phase else {
            return None;
        };
        while let Some(event) = c.link.poll() {
            match event {
                LinkEvent::Welcome {
                    host,
                    differences,
                    needs_packs,
                } => {
                    c.status = if needs_packs {
                        format!("{host}'s packs differ from yours:")
                    } else {
                        format!("Connected to {host}.")
                    };
                    c.host = Some(host);
                    c.differences = differences;
                    c.asking = needs_packs;
                }
                LinkEvent::Fetching { received, total } => c.progress = Some((received, total)),
                LinkEvent::ChooseDeck(catalog) => {
                    let choice = self.deck.clone().unwrap_or(DeckChoice::Later);
                    let mut offer: Vec<(String, Vec<Vec<crate::rules::CardId>>)> = catalog
                        .decks()
                        .iter()
                        .map(|d| (d.meta.name.clone(), d.stacks.clone()))
                        .collect();
                    for d in &self.context.saved {
                        if let Some(stacks) = DeckChoice::Saved(d.clone()).stacks_in(&catalog) {
                            offer.push((format!("{} (saved)", d.name), stacks));
                        }
                    }
                    c.status = "The game's packs are here.".into();
                    c.differences.clear();
                    c.progress = None;
                    c.choosing = Some(Choosing {
                        note: choice.why_choose(&catalog),
                        pick: (!offer.is_empty()).then_some(0),
                        offer,
                    });
                }
                LinkEvent::Ready(catalog) => {
                    c.status = "Taking a seat…".into();
                    c.progress = None;
                    c.catalog = Some(catalog);
                }
                LinkEvent::Update(Update::Seated(seat)) => {
                    c.status = format!(
                        "Seated as {}: waiting for the other player…",
                        theme::seat_name(seat)
                    );
                }
                LinkEvent::Update(Update::DeckRefused(reason)) => {
                    self.problem = Some(format!("The host refused your deck: {reason}"));
                    self.phase = Phase::Setup;
                    return None;
                }
                LinkEvent::Update(Update::State { seen, events, .. }) => {
                    let Some(catalog) = c.catalog.clone() else {
                        continue;
                    };
                    let deck = c.deck_name.clone().unwrap_or_else(|| {
                        self.deck.as_ref().map_or("", DeckChoice::name).to_string()
                    });
                    let Phase::Connecting(c) = std::mem::replace(&mut self.phase, Phase::Setup)
                    else {
                        return None;
                    };
                    return match Session::remote(catalog, c.link, &seen, &events, &deck) {
                        Ok(s) => Some(Box::new(s)),
                        Err(e) => {
                            self.problem = Some(e.to_string());
                            None
                        }
                    };
                }
                LinkEvent::Closed(why) => {
                    self.problem = Some(format!("The game ended before it began: {why}"));
                    self.phase = Phase::Setup;
                    return None;
                }
                LinkEvent::Lost(why) => {
                    c.status = format!("Connection lost ({why}): reconnecting…")
                }
                LinkEvent::Back => c.status = "Reconnected.".into(),
                LinkEvent::Update(_) => {}
            }
        }
        None
    }

    /// The connecting view; true when the player cancels.
    fn connecting(ui: &mut Ui, c: &mut Connecting) -> bool {
        if let Some(h) = &c.hosting {
            ui.label(RichText::new(h).strong());
        }
        ui.label(&c.status);
        for d in &c.differences {
            ui.label(format!("  • {d}"));
        }
        if let Some((got, total)) = c.progress {
            let per_mille = (got.saturating_mul(1000) / total.max(1)).min(1000);
            let share = f32::from(u16::try_from(per_mille).unwrap_or(1000)) / 1000.0;
            ui.add(egui::ProgressBar::new(share).text(format!("{got} / {total} bytes")));
        }
        if let Some(ch) = &mut c.choosing {
            ui.label(&ch.note);
            if ch.offer.is_empty() {
                ui.colored_label(
                    theme::DANGER,
                    "The game's packs have no ready deck, and none of your saved decks fits them.",
                );
            }
            let mut play = None;
            ui.horizontal(|ui| {
                let label = ui.label("Deck for this game");
                let shown = ch
                    .pick
                    .and_then(|i| ch.offer.get(i))
                    .map_or("(none)", |(name, _)| name.as_str())
                    .to_string();
                egui::ComboBox::from_id_salt("lan-game-deck")
                    .width(220.0)
                    .selected_text(shown)
                    .show_ui(ui, |ui| {
                        for (i, (name, _)) in ch.offer.iter().enumerate() {
                            if ui.selectable_label(ch.pick == Some(i), name).clicked() {
                                ch.pick = Some(i);
                            }
                        }
                    })
                    .response
                    .labelled_by(label.id);
                if ui
                    .add_enabled(ch.pick.is_some(), egui::Button::new("Play with this deck"))
                    .clicked()
                {
                    play = ch.pick.and_then(|i| ch.offer.get(i)).cloned();
                }
            });
            if let Some((name, stacks)) = play {
                c.link.choose_deck(stacks);
                c.deck_name = Some(name.trim_end_matches(" (saved)").to_string());
                c.choosing = None;
                c.status = "Taking a seat…".into();
            }
        }
        let mut cancel = false;
        ui.horizontal(|ui| {
            if c.asking {
                if ui.button("Use the host's packs for this game").clicked() {
                    c.link.accept_packs();
                    c.asking = false;
                    c.status = "Getting the host's packs…".into();
                }
                ui.weak("They are checked, kept apart from your own packs, and your own set is not changed.");
            } else if c.choosing.is_none() {
                ui.spinner();
            }
        });
        if ui.button("Cancel").clicked() {
            c.link.leave();
            cancel = true;
        }
        cancel
    }
}

/// The name a host shows on the network: the player's name and the machine's
/// (`ann on desk-pc`), so two hosts run by a "player" can be told apart.
fn host_name(player: &str, machine: Option<&str>) -> String {
    match machine.map(str::trim).filter(|m| !m.is_empty()) {
        Some(m) if !m.eq_ignore_ascii_case(player) => format!("{player} on {m}"),
        _ => player.to_string(),
    }
}

/// This machine's name, when the system tells it (at most 40 characters).
fn machine_name() -> Option<String> {
    let name = std::env::var("HOSTNAME")
        .or_else(|_| std::env::var("COMPUTERNAME"))
        .ok()
        .or_else(|| {
            let mut text = String::new();
            std::io::Read::read_to_string(
                &mut std::io::Read::take(std::fs::File::open("/etc/hostname").ok()?, 256),
                &mut text,
            )
            .ok()?;
            Some(text)
        })?;
    let name: String = name
        .trim()
        .chars()
        .filter(|c| !c.is_control())
        .take(40)
        .collect();
    (!name.is_empty()).then_some(name)
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_host_is_named_by_its_player_and_machine() {
        assert_eq!(super::host_name("ann", Some("desk-pc\n")), "ann on desk-pc");
        assert_eq!(super::host_name("ann", None), "ann");
        assert_eq!(super::host_name("desk", Some("desk")), "desk");
    }
}
