//! The host attacked for exhaustion and for its concurrency: abandoned games, connection
//! slots, allocation by a huge `Join`, `--games`, an AI that thinks while others sit
//! down, discovery floods and forged answers, and the AI seat's deck (a game failing
//! inside, which no player can cause, is tested inside: `net::host::tests`). Every attack runs over loopback, is bounded in count and time, and is followed by
//! an honest game that must finish. Attackers that need addresses of their own bind
//! 127.0.0.2 and up (Linux routes all of 127/8 to loopback).

use std::net::{Ipv4Addr, SocketAddr, TcpStream, UdpSocket};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokensmith::ai::{Budget, Level, Options};
use tokensmith::net::client::{AiPlayer, Client, Update, play_with_ai};
use tokensmith::net::frame;
use tokensmith::net::host::AiDeck;
use tokensmith::net::protocol::{MAGIC, PROTOCOL, SessionToken, ToClient, ToHost};
use tokensmith::net::{Content, GameResult, Host, HostConfig, HostEvent};
use tokensmith::packs::Folders;
use tokensmith::rules::Catalog;

use crate::support::{base_catalog, root};

const WAIT: Duration = Duration::from_secs(20);

fn content() -> Content {
    let folders = Folders {
        content: root().join("content"),
        mods: root().join("no-mods-here"),
        installed: None,
    };
    Content::new(Arc::new(base_catalog()), &folders.all()).expect("base content")
}

fn keys(catalog: &Catalog, name: &str) -> Vec<Vec<String>> {
    let id = catalog.deck_named(name).expect("deck");
    tokensmith::net::protocol::deck_keys(catalog, &catalog.deck(id).stacks)
}

/// A host whose seat 1 is greedy, as `serve --ai greedy` sets it up.
fn config(catalog: &Catalog) -> HostConfig {
    let mut c = HostConfig::new("test host", "127.0.0.1:0".parse().expect("addr"));
    c.ai = Some(Level::Greedy);
    c.ai_deck = catalog
        .deck(catalog.deck_named("starter").expect("starter"))
        .stacks
        .clone();
    c.frame_deadline = Duration::from_secs(2);
    c
}

fn greedy() -> AiPlayer {
    AiPlayer {
        level: Level::Greedy,
        options: Options::default(),
        reconnect: Duration::from_secs(5),
    }
}

/// An honest joiner plays a whole game.
fn honest(host: &Host, catalog: &Catalog) -> GameResult {
    let mut c = Client::connect(host.addr(), "honest", None, WAIT).expect("connect");
    c.join(&keys(catalog, "shifters")).expect("join");
    let r = play_with_ai(&mut c, catalog, &greedy(), &mut |_: &str| {}).expect("an honest game");
    assert!(r.moves > 10, "{r:?}");
    r
}

/// Wait for a host log line containing `text`.
fn wait_log(host: &Host, text: &str) -> String {
    let until = Instant::now() + WAIT;
    while Instant::now() < until {
        if let Ok(HostEvent::Log(l)) = host.events().recv_timeout(Duration::from_millis(50))
            && l.contains(text)
        {
            return l;
        }
    }
    panic!("the host never logged '{text}'");
}

/// A TCP connection from `local` (an address of 127/8) to `to`.
fn connect_from(local: Ipv4Addr, to: SocketAddr) -> TcpStream {
    use std::os::fd::FromRawFd as _;
    let SocketAddr::V4(to) = to else {
        panic!("an IPv4 host")
    };
    let addr = |ip: Ipv4Addr, port: u16| libc::sockaddr_in {
        sin_family: libc::sa_family_t::try_from(libc::AF_INET).expect("family"),
        sin_port: port.to_be(),
        sin_addr: libc::in_addr {
            s_addr: u32::from(ip).to_be(),
        },
        sin_zero: [0; 8],
    };
    let len = libc::socklen_t::try_from(std::mem::size_of::<libc::sockaddr_in>()).expect("len");
    let here = addr(local, 0);
    let there = addr(*to.ip(), to.port());
    // SAFETY: a socket is made, bound and connected with valid, sized addresses; the
    // descriptor is handed to a TcpStream, which owns and closes it.
    unsafe {
        let fd = libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
        assert!(fd >= 0, "socket: {}", std::io::Error::last_os_error());
        let stream = TcpStream::from_raw_fd(fd);
        let bound = libc::bind(fd, (&raw const here).cast::<libc::sockaddr>(), len);
        assert_eq!(
            bound,
            0,
            "bind {local}: {}",
            std::io::Error::last_os_error()
        );
        let connected = libc::connect(fd, (&raw const there).cast::<libc::sockaddr>(), len);
        assert_eq!(connected, 0, "connect: {}", std::io::Error::last_os_error());
        stream
    }
}

/// A client speaking the protocol by hand.
struct Raw {
    stream: TcpStream,
}

impl Raw {
    fn connect(host: &Host) -> Raw {
        Raw {
            stream: TcpStream::connect(host.addr()).expect("connect"),
        }
    }

    fn from(local: Ipv4Addr, host: &Host) -> Raw {
        Raw {
            stream: connect_from(local, host.addr()),
        }
    }

    fn send(&mut self, message: &ToHost) -> bool {
        frame::write(&mut self.stream, message).is_ok()
    }

    fn read(&mut self) -> Result<ToClient, frame::FrameError> {
        frame::read(&mut self.stream, Some(WAIT))
    }

    /// Hello; the welcome (or whatever came instead).
    fn hello(&mut self, name: &str) -> Result<ToClient, frame::FrameError> {
        self.hello_as(name, None)
    }

    /// Hello taking back the seat of `resume`, if given; the welcome (or whatever came
    /// instead).
    fn hello_as(
        &mut self,
        name: &str,
        resume: Option<SessionToken>,
    ) -> Result<ToClient, frame::FrameError> {
        self.send(&ToHost::Hello {
            magic: MAGIC.into(),
            protocol: PROTOCOL,
            name: name.into(),
            resume,
        });
        self.read()
    }

    /// Join with shifters and wait for the first view (the game has started).
    fn sit(&mut self, catalog: &Catalog) {
        self.send(&ToHost::Join {
            deck: keys(catalog, "shifters"),
            seat: None,
        });
        let until = Instant::now() + WAIT;
        loop {
            assert!(Instant::now() < until, "no game started");
            match self.read() {
                Ok(ToClient::State { .. }) => return,
                Ok(ToClient::Bye { reason }) => panic!("refused: {reason}"),
                Ok(_) => {}
                Err(e) => panic!("{e}"),
            }
        }
    }

    /// The reason of the host's `Bye`, reading past other frames.
    fn bye(&mut self) -> Option<String> {
        loop {
            match self.read() {
                Ok(ToClient::Bye { reason }) => return Some(reason),
                Ok(_) => {}
                Err(_) => return None,
            }
        }
    }
}

/// A joiner plays into a game with the host's AI, then its connection drops: the game is
/// paused. The token that takes the seat back.
fn paused_game(host: &Host, catalog: &Catalog) -> SessionToken {
    let mut c = Client::connect(host.addr(), "away", None, WAIT).expect("connect");
    c.join(&keys(catalog, "shifters")).expect("join");
    let until = Instant::now() + WAIT;
    while !matches!(
        c.next(Duration::from_millis(100)),
        Ok(Some(Update::State { .. }))
    ) {
        assert!(Instant::now() < until, "no game started");
    }
    let token = c.welcome().token;
    drop(c);
    wait_log(host, "the game is paused");
    token
}

/// A discovery beacon for `host` on a free port: it, where to probe it, and a probe.
fn beacon_for(host: &Host) -> (tokensmith::net::discovery::Beacon, SocketAddr, Vec<u8>) {
    let beacon = tokensmith::net::discovery::Beacon::start(0, host.announcer()).expect("beacon");
    let target: SocketAddr = format!("127.0.0.1:{}", beacon.port())
        .parse()
        .expect("addr");
    let probe = postcard::to_stdvec(&(MAGIC, PROTOCOL)).expect("probe");
    (beacon, target, probe)
}

/// Saved games in `dir`.
fn files(dir: &Path) -> usize {
    std::fs::read_dir(dir).map_or(0, |d| {
        d.filter_map(Result::ok)
            .filter(|e| {
                let name = e.file_name().to_string_lossy().to_string();
                name.starts_with("game-") && name.ends_with(".json")
            })
            .count()
    })
}

#[test]
fn abandoned_games_are_shared_fairly_expire_and_leave_no_save_behind() {
    let saves = tempfile::tempdir().expect("tmp");
    let content = content();
    let catalog = Arc::clone(&content.catalog);
    let mut cfg = config(&catalog);
    cfg.save_dir = Some(saves.path().to_path_buf());
    cfg.max_tables = 6;
    cfg.max_tables_per_address = 3;
    cfg.pause_expiry = Duration::from_secs(2);
    let host = Host::start(cfg.clone(), content).expect("host");
    // Two attackers open games and abandon them: one address never holds more than its
    // share, its own oldest paused game making room for its next.
    for attacker in [2, 2, 2, 2, 2, 3, 3, 3] {
        let mut a = Raw::from(Ipv4Addr::new(127, 0, 0, attacker), &host);
        assert!(matches!(a.hello("abandon"), Ok(ToClient::Welcome { .. })));
        a.sit(&catalog);
        drop(a);
        wait_log(&host, "the game is paused");
        assert!(host.tables() <= 6, "{} games held", host.tables());
    }
    assert_eq!(host.tables(), 6, "3 paused games per attacking address");
    // The host is full of paused games: an honest joiner still plays (a paused game of
    // the address holding the most makes room).
    honest(&host, &catalog);
    // The paused games expire, and their saves go with them.
    let until = Instant::now() + Duration::from_secs(8);
    while host.tables() > 0 || files(saves.path()) > 0 {
        assert!(
            Instant::now() < until,
            "{} games, {} saves left",
            host.tables(),
            files(saves.path())
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    // A game abandoned just before the host goes down is saved...
    let mut a = Raw::connect(&host);
    let _ = a.hello("abandon");
    a.sit(&catalog);
    drop(a);
    drop(host);
    assert_eq!(files(saves.path()), 1);
    // ...and not brought back by a restart after its time is up.
    std::thread::sleep(Duration::from_millis(2_100));
    let host = Host::start(cfg, self::content()).expect("restarted host");
    assert_eq!(host.tables(), 0, "an expired save is not resumed");
    assert_eq!(files(saves.path()), 0, "an expired save is removed");
    honest(&host, &catalog);
}

#[test]
fn connections_without_a_seat_make_room_and_each_address_has_a_share() {
    let content = content();
    let catalog = Arc::clone(&content.catalog);
    let mut cfg = config(&catalog);
    cfg.max_connections = 12;
    cfg.max_connections_per_address = 4;
    cfg.handshake = Duration::from_millis(500);
    cfg.settling = Duration::from_millis(500);
    let host = Host::start(cfg, content).expect("host");
    // A bare connection is closed after the handshake's time.
    let started = Instant::now();
    let mut bare = Raw::from(Ipv4Addr::new(127, 0, 0, 2), &host);
    let reason = bare.bye().expect("a Bye");
    assert!(reason.contains("no Hello within"), "{reason}");
    assert!(started.elapsed() < Duration::from_secs(3));
    let until = Instant::now() + WAIT;
    while host.connections() > 0 {
        assert!(Instant::now() < until);
        std::thread::sleep(Duration::from_millis(10));
    }
    // Twelve connections from three addresses say hello and hold on (they would ping).
    let mut held: Vec<Raw> = Vec::new();
    for attacker in [2, 3, 4] {
        for _ in 0..4 {
            let mut a = Raw::from(Ipv4Addr::new(127, 0, 0, attacker), &host);
            assert!(matches!(a.hello("idle"), Ok(ToClient::Welcome { .. })));
            held.push(a);
        }
    }
    // A fifth from one address is refused at once.
    let mut fifth = Raw::from(Ipv4Addr::new(127, 0, 0, 2), &host);
    let reason = fifth.bye().expect("a Bye");
    assert!(reason.contains("the most one address may"), "{reason}");
    // The host is full of connections that hold no seat: while they are new, a newcomer is
    // turned away; once they have had their time, a joiner gets in and plays.
    let mut early = Raw::from(Ipv4Addr::new(127, 0, 0, 5), &host);
    let reason = early.bye().expect("a Bye");
    assert!(reason.contains("the host is full"), "{reason}");
    std::thread::sleep(Duration::from_millis(600));
    honest(&host, &catalog);
    assert!(host.connections() <= 12);
    drop(held);
}

/// A `Join` frame body of `stacks` stacks of one empty key each, encoded by hand.
fn huge_join(stacks: u32) -> Vec<u8> {
    let mut body = vec![2u8]; // ToHost::Join
    let mut n = stacks;
    loop {
        let byte = u8::try_from(n & 0x7f).expect("7 bits");
        n >>= 7;
        if n == 0 {
            body.push(byte);
            break;
        }
        body.push(byte | 0x80);
    }
    for _ in 0..stacks {
        body.extend_from_slice(&[1, 0]); // a stack of one key of 0 bytes
    }
    body.push(0); // seat: None
    let mut frame = u32::try_from(body.len())
        .expect("len")
        .to_be_bytes()
        .to_vec();
    frame.extend_from_slice(&body);
    frame
}

#[test]
fn collections_over_the_protocols_limits_are_refused_before_they_are_allocated() {
    use std::io::Write as _;
    let content = content();
    let catalog = Arc::clone(&content.catalog);
    let host = Host::start(config(&catalog), content).expect("host");
    // The 1 MiB Join of 524,000 stacks: refused from its length prefix.
    for _ in 0..8 {
        let mut a = Raw::connect(&host);
        let _ = a.hello("alloc");
        let frame = huge_join(524_000);
        assert!(frame.len() > 1_000_000);
        let _ = a.stream.write_all(&frame);
        wait_log(
            &host,
            "a frame of 1048005 bytes is over the 65536-byte limit",
        );
    }
    // Under the frame cap, 30,000 stacks: refused at the list's length.
    let mut a = Raw::connect(&host);
    let _ = a.hello("alloc");
    let _ = a.stream.write_all(&huge_join(30_000));
    let reason = a.bye().expect("a Bye");
    assert!(
        reason.contains("30000 stacks are over the limit of 9"),
        "{reason}"
    );
    // A stack of too many cards, a key too long, a name too long.
    let mut a = Raw::connect(&host);
    let _ = a.hello("alloc");
    a.send(&ToHost::Join {
        deck: vec![vec!["base:x".into(); 40]],
        seat: None,
    });
    let reason = a.bye().expect("a Bye");
    assert!(
        reason.contains("40 cards in a stack are over the limit of 9"),
        "{reason}"
    );
    let mut a = Raw::connect(&host);
    let _ = a.hello("alloc");
    a.send(&ToHost::Join {
        deck: vec![vec!["k".repeat(300)]],
        seat: None,
    });
    let reason = a.bye().expect("a Bye");
    assert!(
        reason.contains("300 bytes is over the 256-byte limit"),
        "{reason}"
    );
    let mut a = Raw::connect(&host);
    let Ok(ToClient::Bye { reason }) = a.hello(&"n".repeat(5_000)) else {
        panic!("a long name is refused")
    };
    assert!(reason.contains("over the 1024-byte limit"), "{reason}");
    // A deck one stack over the rules is still decoded and refused by the engine.
    let mut a = Raw::connect(&host);
    let _ = a.hello("alloc");
    let mut deck = keys(&catalog, "shifters");
    while deck.len() < 9 {
        deck.push(deck[0].clone());
    }
    a.send(&ToHost::Join { deck, seat: None });
    assert!(matches!(a.read(), Ok(ToClient::DeckRefused { .. })));
    honest(&host, &catalog);
}

#[test]
fn games_n_counts_finished_games_and_lets_the_games_in_progress_finish() {
    let content = content();
    let catalog = Arc::clone(&content.catalog);
    let mut cfg = config(&catalog);
    cfg.games = Some(1);
    let host = Host::start(cfg, content).expect("host");
    // A game starts and waits on its joiner...
    let mut slow = Client::connect(host.addr(), "slow", None, WAIT).expect("connect");
    slow.join(&keys(&catalog, "shifters")).expect("join");
    let until = Instant::now() + WAIT;
    loop {
        assert!(Instant::now() < until);
        if let Ok(Some(Update::State { .. })) = slow.next(Duration::from_millis(100)) {
            break;
        }
    }
    // ...while another finishes: the host's one game is done.
    honest(&host, &catalog);
    // No new game is taken.
    let mut late = Raw::connect(&host);
    let _ = late.hello("late");
    late.send(&ToHost::Join {
        deck: keys(&catalog, "shifters"),
        seat: None,
    });
    let reason = late.bye().expect("a Bye");
    assert!(reason.contains("takes no new ones"), "{reason}");
    // The game in progress plays to its end; then the host stops.
    let r = play_with_ai(&mut slow, &catalog, &greedy(), &mut |_: &str| {})
        .expect("the game in progress finishes");
    assert!(r.moves > 10);
    let until = Instant::now() + WAIT;
    let mut finished = 0;
    loop {
        assert!(Instant::now() < until, "the host did not stop");
        match host.events().recv_timeout(Duration::from_millis(100)) {
            Ok(HostEvent::Finished(_)) => finished += 1,
            Ok(HostEvent::Stopped) => break,
            _ => {}
        }
    }
    assert_eq!(finished, 2, "both games finished before the host stopped");
}

#[test]
fn seating_and_discovery_do_not_wait_for_an_ai_that_thinks() {
    let content = content();
    let catalog = Arc::clone(&content.catalog);
    let mut cfg = config(&catalog);
    cfg.ai = Some(Level::Hard);
    cfg.ai_options = Options {
        budget: Budget::Time(Duration::from_millis(2_000)),
        omniscient: false,
        scripts: tokensmith::ai::ScriptLimits::DEFAULT,
    };
    let host = Host::start(cfg, content).expect("host");
    let announce = host.announcer();
    // A game starts; the AI (seat 1) thinks for 2 s.
    let mut first = Raw::connect(&host);
    let _ = first.hello("first");
    first.send(&ToHost::Join {
        deck: keys(&catalog, "shifters"),
        seat: None,
    });
    assert!(matches!(first.read(), Ok(ToClient::Seated { .. })));
    assert!(matches!(first.read(), Ok(ToClient::State { .. })));
    // Meanwhile another joiner is seated and the host answers discovery at once.
    let started = Instant::now();
    let _ = announce();
    let mut second = Raw::connect(&host);
    let _ = second.hello("second");
    second.send(&ToHost::Join {
        deck: keys(&catalog, "shifters"),
        seat: None,
    });
    assert!(matches!(second.read(), Ok(ToClient::Seated { .. })));
    let waited = started.elapsed();
    assert!(
        waited < Duration::from_millis(1_000),
        "seating waited {waited:?} on another game's AI"
    );
    drop((first, second));
    drop(host);
    // An honest game with a quick AI.
    let content = self::content();
    let host = Host::start(config(&catalog), content).expect("host");
    honest(&host, &catalog);
}

#[test]
fn discovery_answers_probes_only_and_a_flood_does_not_hide_the_host() {
    use tokensmith::net::discovery::discover;
    let content = content();
    let catalog = Arc::clone(&content.catalog);
    let host = Host::start(config(&catalog), content).expect("host");
    let (_beacon, target, probe) = beacon_for(&host);
    let socket = UdpSocket::bind("127.0.0.1:0").expect("udp");
    socket
        .set_read_timeout(Some(Duration::from_millis(400)))
        .expect("timeout");
    let mut buf = [0u8; 2_048];
    // A probe is answered; the answer itself, sent back as if it were a probe, is not.
    socket.send_to(&probe, target).expect("send");
    let (n, _) = socket.recv_from(&mut buf).expect("an answer to a probe");
    let answer = buf[..n].to_vec();
    assert!(answer.starts_with(&probe) && answer.len() > probe.len());
    socket.send_to(&answer, target).expect("send");
    assert!(
        socket.recv_from(&mut buf).is_err(),
        "an answer is never taken for a probe"
    );
    // One sender floods (1,000 probes): it gets a few answers; another still finds it.
    let flooder = UdpSocket::bind("127.0.0.2:0").expect("udp");
    flooder
        .set_read_timeout(Some(Duration::from_millis(200)))
        .expect("timeout");
    let flood = std::thread::spawn(move || {
        for _ in 0..1_000 {
            let _ = flooder.send_to(&probe, target);
            std::thread::sleep(Duration::from_micros(500));
        }
        let mut answers = 0;
        let mut buf = [0u8; 2_048];
        while flooder.recv_from(&mut buf).is_ok() {
            answers += 1;
        }
        answers
    });
    std::thread::sleep(Duration::from_millis(100));
    let found = discover(&[target], Duration::from_millis(500)).expect("discover");
    assert_eq!(found.len(), 1, "the host is found during the flood");
    let answers = flood.join().expect("flood");
    assert!(answers <= 12, "the flooder got {answers} answers");
    honest(&host, &catalog);
}

/// The AI's deck in a started game's save, as card keys.
fn saved_ai_deck(dir: &Path) -> Vec<Vec<String>> {
    let path = std::fs::read_dir(dir)
        .expect("saves")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .next()
        .expect("a save");
    let saved: serde_json::Value =
        serde_json::from_slice(&std::fs::read(path).expect("read")).expect("json");
    serde_json::from_value(saved["decks"][0].clone()).expect("decks")
}

/// A joiner's view of one game's start: what the welcome says of the AI's deck and the
/// deck the AI plays (from the host's save).
fn ai_game_start(cfg: &HostConfig, catalog: &Catalog) -> (Option<String>, Vec<Vec<String>>) {
    let saves = tempfile::tempdir().expect("tmp");
    let mut cfg = cfg.clone();
    cfg.save_dir = Some(saves.path().to_path_buf());
    let host = Host::start(cfg, content()).expect("host");
    let mut spy = Raw::connect(&host);
    let Ok(ToClient::Welcome { ai_deck, .. }) = spy.hello("spy") else {
        panic!("a welcome")
    };
    spy.sit(catalog);
    let deck = saved_ai_deck(saves.path());
    (ai_deck, deck)
}

#[test]
fn the_ai_seat_plays_a_deck_the_joiner_cannot_know_unless_the_host_chose_one() {
    let catalog = base_catalog();
    let starter = keys(&catalog, "starter");
    let cfg = config(&catalog);
    let (said, one) = ai_game_start(&cfg, &catalog);
    let (_, two) = ai_game_start(&cfg, &catalog);
    assert!(
        said.is_some_and(|s| s.contains("random")),
        "the welcome says so"
    );
    assert_ne!(one, starter, "not the published starter");
    assert_ne!(one, two, "a new deck each game");
    let mut chosen = cfg.clone();
    chosen.ai_deck_kind = AiDeck::Chosen("starter".into());
    let (said, deck) = ai_game_start(&chosen, &catalog);
    assert!(said.is_some_and(|s| s.contains("starter")));
    assert_eq!(deck, starter, "the host's own choice stays as chosen");
    let host = Host::start(cfg, content()).expect("host");
    honest(&host, &catalog);
}

#[test]
fn a_pause_that_never_expires_waits_for_the_player_instead_of_killing_the_game() {
    let content = content();
    let catalog = Arc::clone(&content.catalog);
    let mut cfg = config(&catalog);
    // `--pause-expiry 18446744073709551615`: "never"; no instant is that far away.
    cfg.pause_expiry = Duration::from_secs(u64::MAX);
    let host = Host::start(cfg, content).expect("host");
    for local in [2, 3] {
        let ip = Ipv4Addr::new(127, 0, 0, local);
        let token = paused_game(&host, &catalog);
        // The game thread is alive: a resume from another address is welcomed and shown
        // the game.
        let mut back = Raw::from(ip, &host);
        match back.hello_as("back", Some(token)) {
            Ok(ToClient::Welcome { resumed, .. }) => assert!(resumed.is_some()),
            other => panic!("{other:?}"),
        }
        let until = Instant::now() + WAIT;
        loop {
            assert!(Instant::now() < until, "the resumed game says nothing");
            match back.read() {
                Ok(ToClient::State { .. }) => break,
                Ok(_) => {}
                Err(e) => panic!("the resumed game says nothing: {e}"),
            }
        }
    }
    assert_eq!(host.tables(), 2, "both games held, none ended");
    honest(&host, &catalog);
}

#[test]
fn discovery_lists_only_the_address_the_host_listens_on() {
    use tokensmith::net::discovery::{Beacon, discover};
    let content = content();
    let catalog = Arc::clone(&content.catalog);
    // `serve --addr 127.0.0.2:PORT`: the host accepts on 127.0.0.2 only.
    let mut cfg = config(&catalog);
    cfg.addr = "127.0.0.2:0".parse().expect("addr");
    let host = Host::start(cfg, content).expect("host");
    let beacon = Beacon::start_at(0, host.addr().ip(), host.announcer()).expect("beacon");
    // Probes reaching the beacon on other addresses of this machine (as a broadcast
    // reaches it on the network address) name the listening address only.
    let targets: Vec<SocketAddr> = [1, 2, 3]
        .into_iter()
        .map(|last| SocketAddr::from((Ipv4Addr::new(127, 0, 0, last), beacon.port())))
        .collect();
    let found = discover(&targets, Duration::from_millis(400)).expect("discover");
    let addrs: Vec<SocketAddr> = found.iter().map(|f| f.addr).collect();
    assert_eq!(
        addrs,
        [host.addr()],
        "every answer names where the host listens"
    );
    let mut c = Client::connect(found[0].addr, "found", None, WAIT).expect("join what was found");
    c.join(&keys(&catalog, "shifters")).expect("join");
    let r = play_with_ai(&mut c, &catalog, &greedy(), &mut |_: &str| {}).expect("a game");
    assert!(r.moves > 10, "{r:?}");
}

#[test]
fn a_peer_of_another_protocol_version_is_told_which_side_to_update() {
    let content = content();
    let catalog = Arc::clone(&content.catalog);
    let host = Host::start(config(&catalog), content).expect("host");
    // An older joiner (version 1) and a newer one whose Hello gained a field after the
    // version: both are told the versions, not that their message is malformed.
    let hello = |protocol: u32, extra: &[u8]| {
        let mut body = postcard::to_stdvec(&(0u8, MAGIC, protocol, "old", 0u8)).expect("hello");
        body.extend_from_slice(extra);
        let mut frame = u32::try_from(body.len())
            .expect("len")
            .to_be_bytes()
            .to_vec();
        frame.extend_from_slice(&body);
        frame
    };
    for (local, protocol, extra, words) in [
        (2, PROTOCOL - 1, &[][..], "older than this copy's"),
        (3, PROTOCOL + 1, &[7, 7, 7][..], "newer than this copy's"),
    ] {
        let mut raw = Raw::from(Ipv4Addr::new(127, 0, 0, local), &host);
        std::io::Write::write_all(&mut raw.stream, &hello(protocol, extra)).expect("send");
        let reason = raw.bye().expect("a Bye");
        assert!(
            reason.contains(&format!("version {protocol}")) && reason.contains(words),
            "{reason}"
        );
    }
    // A host of version 1, whose welcome lacks `ai_deck`: the joiner names the versions.
    let old = std::net::TcpListener::bind("127.0.0.4:0").expect("listen");
    let at = old.local_addr().expect("addr");
    let fake = std::thread::spawn(move || {
        let (mut s, _) = old.accept().expect("accept");
        let _ = frame::read_body(&mut s, Some(WAIT), WAIT);
        let token = [1u8; 16];
        let body =
            postcard::to_stdvec(&(0u8, 1u32, "old host", 0u8, true, token, 0u8)).expect("welcome");
        let mut frame = u32::try_from(body.len())
            .expect("len")
            .to_be_bytes()
            .to_vec();
        frame.extend_from_slice(&body);
        std::io::Write::write_all(&mut s, &frame).expect("send");
        std::thread::sleep(Duration::from_millis(200));
    });
    let Err(err) = Client::connect(at, "new", None, WAIT) else {
        panic!("a host of another version was joined")
    };
    let text = err.to_string();
    assert!(
        text.contains("host speaks LAN protocol version 1, older than this copy's"),
        "{text}"
    );
    fake.join().expect("fake host");
    honest(&host, &catalog);
}

#[test]
fn a_connection_has_at_most_one_move_waiting_while_the_ai_thinks() {
    let content = content();
    let catalog = Arc::clone(&content.catalog);
    let mut cfg = config(&catalog);
    cfg.ai = Some(Level::Hard);
    cfg.ai_options.budget = Budget::Time(Duration::from_millis(800));
    let host = Host::start(cfg, content).expect("host");
    // Seated as seat 2: the AI (seat 1) thinks first. Each attacker pours moves in while
    // it does: the second is refused at once, before it is queued behind the first.
    for local in [2, 3] {
        let mut a = Raw::from(Ipv4Addr::new(127, 0, 0, local), &host);
        assert!(matches!(a.hello("pour"), Ok(ToClient::Welcome { .. })));
        a.sit(&catalog);
        let started = Instant::now();
        let mut sent = 0u32;
        for seq in 1..=10_000 {
            let ok = a.send(&ToHost::Intent {
                seq,
                seat: 2,
                stack: 0,
                x: 0,
                y: 0,
            });
            if !ok {
                break;
            }
            sent += 1;
        }
        let reason = a.bye().expect("a Bye");
        assert!(
            reason.contains("a move sent before the host answered the last one"),
            "{reason}"
        );
        assert!(
            started.elapsed() < Duration::from_millis(800),
            "refused while the AI still thought, not after ({sent} moves sent)"
        );
    }
    // An honest joiner is seated and shown its game.
    let mut c = Raw::from(Ipv4Addr::new(127, 0, 0, 4), &host);
    assert!(matches!(c.hello("honest"), Ok(ToClient::Welcome { .. })));
    c.sit(&catalog);
}

#[test]
fn saves_resume_under_one_name_each_and_new_games_never_take_a_saves_number() {
    let saves = tempfile::tempdir().expect("tmp");
    let content = content();
    let catalog = Arc::clone(&content.catalog);
    let mut cfg = config(&catalog);
    cfg.save_dir = Some(saves.path().to_path_buf());
    let host = Host::start(cfg.clone(), content).expect("host");
    let mut a = Raw::from(Ipv4Addr::new(127, 0, 0, 2), &host);
    let _ = a.hello("abandon");
    a.sit(&catalog);
    drop(a);
    wait_log(&host, "the game is paused");
    drop(host);
    let one = saves.path().join("game-1.json");
    assert!(one.exists());
    // The same game under a second name, and a save this host cannot resume.
    std::fs::copy(&one, saves.path().join("game-001.json")).expect("copy");
    let foreign = saves.path().join("game-9.json");
    std::fs::write(&foreign, "{\"not\": \"a save of these packs\"}").expect("write");
    let host = Host::start(cfg, self::content()).expect("restarted host");
    assert_eq!(host.tables(), 1, "game 1 resumes once");
    // A new game, abandoned, is saved under a number no save holds.
    let mut b = Raw::from(Ipv4Addr::new(127, 0, 0, 3), &host);
    let _ = b.hello("new");
    b.sit(&catalog);
    drop(b);
    wait_log(&host, "the game is paused");
    assert!(
        saves.path().join("game-10.json").exists(),
        "the new game is game 10"
    );
    assert_eq!(
        std::fs::read_to_string(&foreign).expect("read"),
        "{\"not\": \"a save of these packs\"}",
        "the save left alone is untouched"
    );
    assert!(saves.path().join("game-001.json").exists(), "left alone");
}

#[test]
fn squatters_lose_on_the_move_clock_and_are_evicted_before_an_honest_paused_game() {
    let content = content();
    let catalog = Arc::clone(&content.catalog);
    let mut cfg = config(&catalog);
    cfg.max_tables = 3;
    // A game with no move for a second may be ended for room; a player who does not move
    // for three loses.
    cfg.move_clock = Duration::from_secs(3);
    let host = Host::start(cfg, content).expect("host");
    // Two squatters from one address sit and never move (the AI has moved: it is theirs).
    let squat = Ipv4Addr::new(127, 0, 0, 2);
    let mut squatters: Vec<Raw> = (0..2)
        .map(|_| {
            let mut s = Raw::from(squat, &host);
            assert!(matches!(s.hello("squatter"), Ok(ToClient::Welcome { .. })));
            s.sit(&catalog);
            s
        })
        .collect();
    // An honest player's connection drops: the game is paused, its seat kept.
    let token = paused_game(&host, &catalog);
    assert_eq!(host.tables(), 3, "the host is full");
    std::thread::sleep(Duration::from_millis(1200));
    // A new joiner needs a table: a squatter's game goes, not the honest paused one.
    let mut newcomer = Raw::from(Ipv4Addr::new(127, 0, 0, 4), &host);
    assert!(matches!(
        newcomer.hello("new"),
        Ok(ToClient::Welcome { .. })
    ));
    newcomer.sit(&catalog);
    let mut back = Raw::from(Ipv4Addr::new(127, 0, 0, 3), &host);
    match back.hello_as("back", Some(token)) {
        Ok(ToClient::Welcome { resumed, .. }) => {
            assert!(resumed.is_some(), "the honest paused game is still held");
        }
        other => panic!("{other:?}"),
    }
    // The squatter that still holds a game loses it on the move clock.
    let reasons: Vec<Option<String>> = squatters.iter_mut().map(Raw::bye).collect();
    assert!(
        reasons.iter().any(|r| r
            .as_deref()
            .is_some_and(|r| r.contains("with no move for a while, was ended"))),
        "{reasons:?}"
    );
    assert!(
        reasons.iter().any(|r| r
            .as_deref()
            .is_some_and(|r| r.contains("did not move within the move clock (3 s)"))),
        "{reasons:?}"
    );
    drop(newcomer);
    honest(&host, &catalog);
}

#[test]
fn a_player_who_concedes_loses_and_both_seats_are_told() {
    let content = content();
    let catalog = Arc::clone(&content.catalog);
    let host = Host::start(config(&catalog), content).expect("host");
    let mut quitter = Raw::from(Ipv4Addr::new(127, 0, 0, 2), &host);
    assert!(matches!(
        quitter.hello("quitter"),
        Ok(ToClient::Welcome { .. })
    ));
    // Before a seat: refused.
    let mut early = Raw::from(Ipv4Addr::new(127, 0, 0, 3), &host);
    assert!(matches!(early.hello("early"), Ok(ToClient::Welcome { .. })));
    early.send(&ToHost::Concede);
    assert!(
        early
            .bye()
            .is_some_and(|r| r.contains("a concession before taking a seat")),
    );
    quitter.sit(&catalog);
    quitter.send(&ToHost::Concede);
    let reason = quitter.bye().unwrap_or_default();
    // The AI holds seat 1.
    assert_eq!(
        reason, "seat 2 conceded: the game is over and seat 1 wins",
        "{reason}"
    );
    let until = Instant::now() + WAIT;
    loop {
        assert!(Instant::now() < until, "no result");
        if let Ok(HostEvent::Finished(r)) = host.events().recv_timeout(Duration::from_millis(50)) {
            assert_eq!(r.winner, Some(tokensmith::rules::Seat::One), "{r:?}");
            break;
        }
    }
    // The game's thread leaves the lobby just after it reports the result.
    while host.tables() > 0 {
        assert!(Instant::now() < until, "the table is freed");
        std::thread::sleep(Duration::from_millis(5));
    }
    honest(&host, &catalog);
}

#[test]
fn a_flood_of_probes_from_ever_new_addresses_does_not_hide_the_host() {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use tokensmith::net::discovery::discover;
    let content = content();
    let catalog = Arc::clone(&content.catalog);
    let host = Host::start(config(&catalog), content).expect("host");
    let (_beacon, target, probe) = beacon_for(&host);
    // Probes forged from a new address each (127.1.0.1 and on): each address is seen
    // once, and together they are far more than the host answers in a second.
    let stop = Arc::new(AtomicBool::new(false));
    let sent = Arc::new(AtomicUsize::new(0));
    let flood = {
        let (stop, sent) = (Arc::clone(&stop), Arc::clone(&sent));
        std::thread::spawn(move || {
            let mut i: u32 = 0;
            while !stop.load(Ordering::SeqCst) {
                i += 1;
                let byte = |v: u32| u8::try_from(v % 250).unwrap_or(0);
                let ip = Ipv4Addr::new(127, 1 + byte(i / 62_500), byte(i / 250), 1 + byte(i));
                if let Ok(s) = UdpSocket::bind((ip, 0)) {
                    let _ = s.send_to(&probe, target);
                    sent.fetch_add(1, Ordering::SeqCst);
                }
                // About 20,000 probes a second, far more than the host answers, without
                // one thread of a busy test machine starving the host's beacon of the
                // core it needs to read its socket at all.
                if i.is_multiple_of(20) {
                    std::thread::sleep(Duration::from_millis(1));
                }
            }
        })
    };
    std::thread::sleep(Duration::from_millis(300));
    let mut found = 0;
    for _ in 0..5 {
        if discover(&[target], Duration::from_millis(600))
            .expect("discover")
            .len()
            == 1
        {
            found += 1;
        }
    }
    stop.store(true, Ordering::SeqCst);
    let _ = flood.join();
    let sent = sent.load(Ordering::SeqCst);
    eprintln!("{sent} forged probes; the host was found {found} times of 5");
    assert!(sent > 2_000, "the flood was {sent} probes");
    assert_eq!(
        found, 5,
        "found {found} times of 5 during a flood of {sent} probes"
    );
    honest(&host, &catalog);
}

#[test]
fn a_joiner_who_takes_seconds_is_not_cut_by_a_churn_of_connections_from_many_addresses() {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    let content = content();
    let catalog = Arc::clone(&content.catalog);
    let mut cfg = config(&catalog);
    cfg.max_connections = 16;
    let host = Host::start(cfg, content).expect("host");
    // The joiner comes first, reads the welcome and thinks for three seconds while new
    // connections from ever new addresses, each saying Hello and then nothing, keep the
    // host full.
    let mut c = Client::connect(host.addr(), "slow", None, WAIT).expect("connect");
    let stop = Arc::new(AtomicBool::new(false));
    let made = Arc::new(AtomicUsize::new(0));
    let churn = {
        let (stop, made) = (Arc::clone(&stop), Arc::clone(&made));
        let addr = host.addr();
        std::thread::spawn(move || {
            let mut held = std::collections::VecDeque::new();
            let mut i: u32 = 0;
            while !stop.load(Ordering::SeqCst) {
                i += 1;
                let byte = |v: u32| u8::try_from(v % 250).unwrap_or(0);
                let ip = Ipv4Addr::new(127, 2, byte(i / 250), 1 + byte(i));
                let mut s = Raw {
                    stream: connect_from(ip, addr),
                };
                if matches!(s.hello("churn"), Ok(ToClient::Welcome { .. })) {
                    made.fetch_add(1, Ordering::SeqCst);
                }
                held.push_back(s);
                if held.len() > 64 {
                    held.pop_front();
                }
                std::thread::sleep(Duration::from_millis(4));
            }
        })
    };
    std::thread::sleep(Duration::from_secs(3));
    c.join(&keys(&catalog, "shifters")).expect("join");
    let until = Instant::now() + WAIT;
    let started = loop {
        assert!(Instant::now() < until, "no answer to the join");
        match c.next(Duration::from_millis(100)) {
            Ok(Some(Update::State { .. })) => break true,
            Ok(_) => {}
            Err(e) => panic!("the joiner was cut: {e}"),
        }
    };
    stop.store(true, Ordering::SeqCst);
    let _ = churn.join();
    let made = made.load(Ordering::SeqCst);
    assert!(started);
    // The host was full all along: the churn got only the slots it found free.
    assert!(made >= 15, "the churn held {made} connections");
    drop(c);
    honest(&host, &catalog);
}

/// How long an honest joiner may take to get a seat while a churn keeps the host full.
const CHURN_ADMISSION: Duration = Duration::from_secs(5);

#[test]
fn an_honest_joiner_gets_a_seat_within_seconds_during_a_churn_from_ever_new_addresses() {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    let content = content();
    let catalog = Arc::clone(&content.catalog);
    let mut cfg = config(&catalog);
    cfg.max_connections = 16;
    let host = Host::start(cfg, content).expect("host");
    // Two churners open connections from ever new addresses, each saying Hello and then
    // nothing, every few milliseconds, and let each go after a while: every connection
    // is new (settling), so none may be closed for a first-time newcomer.
    let stop = Arc::new(AtomicBool::new(false));
    let (tried, refused) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let churners: Vec<_> = [3u8, 4]
        .into_iter()
        .map(|net| {
            let (stop, tried, refused) =
                (Arc::clone(&stop), Arc::clone(&tried), Arc::clone(&refused));
            let addr = host.addr();
            std::thread::spawn(move || {
                let mut held = std::collections::VecDeque::new();
                let mut i: u32 = 0;
                while !stop.load(Ordering::SeqCst) {
                    i += 1;
                    let byte = |v: u32| u8::try_from(v % 250).unwrap_or(0);
                    let ip = Ipv4Addr::new(127, net, byte(i / 250), 1 + byte(i));
                    let mut s = Raw {
                        stream: connect_from(ip, addr),
                    };
                    tried.fetch_add(1, Ordering::SeqCst);
                    match s.hello("churn") {
                        Ok(ToClient::Welcome { .. }) => held.push_back(s),
                        _ => {
                            refused.fetch_add(1, Ordering::SeqCst);
                        }
                    }
                    if held.len() > 32 {
                        held.pop_front();
                    }
                    std::thread::sleep(Duration::from_millis(2));
                }
            })
        })
        .collect();
    std::thread::sleep(Duration::from_secs(1));
    // A newcomer that tries once is turned away: the churn holds every place.
    let mut once = Raw::from(Ipv4Addr::new(127, 0, 0, 5), &host);
    let reason = once.bye().expect("a Bye");
    assert!(reason.contains("the host is full"), "{reason}");
    // The honest joiner connects (coming back while it is turned away) and sits down.
    let (tried_before, started) = (tried.load(Ordering::SeqCst), Instant::now());
    let mut c = Client::connect(host.addr(), "honest", None, WAIT).expect("connect");
    c.join(&keys(&catalog, "shifters")).expect("join");
    loop {
        assert!(
            started.elapsed() < CHURN_ADMISSION,
            "no seat within {CHURN_ADMISSION:?}"
        );
        match c.next(Duration::from_millis(100)) {
            Ok(Some(Update::State { .. })) => break,
            Ok(_) => {}
            Err(e) => panic!("the joiner was cut: {e}"),
        }
    }
    let seated = started.elapsed();
    let churned = tried.load(Ordering::SeqCst) - tried_before;
    stop.store(true, Ordering::SeqCst);
    for c in churners {
        let _ = c.join();
    }
    let rate =
        f64::from(u32::try_from(churned).unwrap_or(u32::MAX)) / seated.as_secs_f64().max(0.001);
    eprintln!(
        "seated in {seated:?} while the churn made {churned} connections ({rate:.0} a second); {} of {} refused in all",
        refused.load(Ordering::SeqCst),
        tried.load(Ordering::SeqCst)
    );
    assert!(
        refused.load(Ordering::SeqCst) > 0,
        "the churn never found the host full"
    );
    drop(c);
    honest(&host, &catalog);
}

#[test]
fn every_valid_save_resumes_beside_finished_games_and_foreign_saves() {
    let saves = tempfile::tempdir().expect("tmp");
    let content = content();
    let catalog = Arc::clone(&content.catalog);
    let mut cfg = config(&catalog);
    cfg.save_dir = Some(saves.path().to_path_buf());
    let host = Host::start(cfg.clone(), content).expect("host");
    let mut a = Raw::from(Ipv4Addr::new(127, 0, 0, 2), &host);
    let _ = a.hello("abandon");
    a.sit(&catalog);
    drop(a);
    wait_log(&host, "the game is paused");
    drop(host);
    let one = saves.path().join("game-1.json");
    // 121 valid saves (the host holds 128 games), 80 saves of other packs or none at all,
    // and finished games' replays in `finished/`.
    for n in 2..=121 {
        std::fs::copy(&one, saves.path().join(format!("game-{n}.json"))).expect("copy");
    }
    for n in 200..280 {
        std::fs::write(
            saves.path().join(format!("game-{n}.json")),
            "{\"not\": \"a save of these packs\"}",
        )
        .expect("write");
    }
    let finished = saves.path().join("finished");
    std::fs::create_dir_all(&finished).expect("finished/");
    for n in 0..5 {
        std::fs::copy(&one, finished.join(format!("game-{n}.json"))).expect("copy");
    }
    let host = Host::start(cfg.clone(), self::content()).expect("restarted host");
    assert_eq!(host.tables(), 121, "every valid save resumes");
    assert_eq!(files(saves.path()), 201, "the foreign saves are left alone");
    drop(host);
    // 128 valid saves fill the host exactly.
    for n in 122..=128 {
        std::fs::copy(&one, saves.path().join(format!("game-{n}.json"))).expect("copy");
    }
    let host = Host::start(cfg, self::content()).expect("restarted host");
    assert_eq!(host.tables(), 128, "128 saves, 128 games");
}

#[test]
fn pack_transfers_past_the_hosts_limit_wait_for_a_place() {
    let mut content = content();
    // A large archive: a reader that stops reading holds its transfer's place while the
    // host's write waits on it.
    content.set_archive("base", vec![7u8; 16 << 20]);
    let catalog = Arc::clone(&content.catalog);
    let mut config = config(&catalog);
    config.max_transfers = 1;
    let host = Host::start(config, content).expect("host");
    let mut slow = Raw::from(Ipv4Addr::new(127, 0, 0, 2), &host);
    assert!(matches!(slow.hello("slow"), Ok(ToClient::Welcome { .. })));
    slow.send(&ToHost::WantPacks(vec!["base".into()]));
    assert!(
        matches!(slow.read(), Ok(ToClient::PackChunk { .. })),
        "the first transfer starts"
    );
    let mut next = Raw::from(Ipv4Addr::new(127, 0, 0, 3), &host);
    assert!(matches!(next.hello("next"), Ok(ToClient::Welcome { .. })));
    next.send(&ToHost::WantPacks(vec!["base".into()]));
    let early = frame::read::<ToClient>(&mut next.stream, Some(Duration::from_millis(1500)));
    assert!(
        !matches!(early, Ok(ToClient::PackChunk { .. })),
        "a second transfer waits while the one place is taken"
    );
    // The slow reader goes: its place is free, and the waiting transfer starts.
    drop(slow);
    assert!(
        matches!(next.read(), Ok(ToClient::PackChunk { offset: 0, .. })),
        "the waiting transfer starts once the place is free"
    );
}
