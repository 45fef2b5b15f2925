//! LAN play over loopback: whole games between the host and joiners, a spy that looks
//! for hidden cards in every byte it gets, attack clients, pack sync, reconnects and a
//! restarted host. Every test binds 127.0.0.1 port 0, bounds its loops and stops itself.

use std::collections::HashSet;
use std::ffi::OsStr;
use std::io::Write as _;
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokensmith::ai::{Level, Options};
use tokensmith::net::client::{AiPlayer, Client, Update, play_with_ai};
use tokensmith::net::frame;
use tokensmith::net::protocol::{MAGIC, PROTOCOL, Played, ToClient, ToHost};
use tokensmith::net::sync::{Cache, Difference, plan};
use tokensmith::net::{Content, GameResult, Host, HostConfig, HostEvent};
use tokensmith::packs::Folders;
use tokensmith::rules::{Catalog, Seat};

use crate::support::{base_catalog, root};

const WAIT: Duration = Duration::from_secs(20);

fn base_folders() -> Folders {
    Folders {
        content: root().join("content"),
        mods: root().join("no-mods-here"),
        installed: None,
    }
}

fn base_content() -> Content {
    Content::new(Arc::new(base_catalog()), &base_folders().all()).expect("base content")
}

fn deck_keys(catalog: &Catalog, name: &str) -> Vec<Vec<String>> {
    let id = catalog.deck_named(name).expect("deck");
    catalog
        .deck(id)
        .stacks
        .iter()
        .map(|s| s.iter().map(|&c| catalog.card(c).meta.key()).collect())
        .collect()
}

fn config(ai: Option<Level>, catalog: &Catalog) -> HostConfig {
    let mut c = HostConfig::new("test host", "127.0.0.1:0".parse().expect("addr"));
    c.ai = ai;
    c.ai_options = Options::default();
    c.ai_deck = catalog
        .deck(catalog.deck_named("starter").expect("starter"))
        .stacks
        .clone();
    c
}

fn greedy() -> AiPlayer {
    AiPlayer {
        level: Level::Greedy,
        options: Options::default(),
        reconnect: Duration::from_secs(10),
    }
}

/// Join `addr` with `deck` and play to the end with greedy.
fn ai_game(addr: SocketAddr, catalog: &Catalog, deck: &str) -> GameResult {
    let mut client = Client::connect(addr, "bot", None, WAIT).expect("connect");
    client.join(&deck_keys(catalog, deck)).expect("join");
    play_with_ai(&mut client, catalog, &greedy(), &mut |_: &str| {}).expect("game")
}

/// The host's finished games and log lines, until `n` games or `WAIT`.
fn host_results(host: &Host, n: usize) -> (Vec<GameResult>, Vec<String>) {
    let until = Instant::now() + WAIT;
    let mut results = Vec::new();
    let mut log = Vec::new();
    while results.len() < n && Instant::now() < until {
        match host.events().recv_timeout(Duration::from_millis(200)) {
            Ok(HostEvent::Finished(r)) => results.push(r),
            Ok(HostEvent::Log(l)) => log.push(l),
            Ok(HostEvent::Stopped) | Err(_) => {}
        }
    }
    (results, log)
}

/// Wait for a host log line containing `text`.
fn wait_log(host: &Host, text: &str) -> String {
    let until = Instant::now() + WAIT;
    while Instant::now() < until {
        if let Ok(HostEvent::Log(l)) = host.events().recv_timeout(Duration::from_millis(100))
            && l.contains(text)
        {
            return l;
        }
    }
    panic!("the host never logged '{text}'");
}

#[test]
fn many_greedy_games_run_at_once_against_one_host_and_agree_with_it() {
    let content = base_content();
    let catalog = Arc::clone(&content.catalog);
    let mut cfg = config(Some(Level::Greedy), &catalog);
    cfg.games = Some(12);
    let host = Host::start(cfg, content).expect("host");
    let addr = host.addr();
    let joiners: Vec<_> = (0..12)
        .map(|i| {
            let catalog = Arc::clone(&catalog);
            let deck = if i % 2 == 0 { "shifters" } else { "gardeners" };
            std::thread::spawn(move || ai_game(addr, &catalog, deck))
        })
        .collect();
    let mut theirs: Vec<String> = joiners
        .into_iter()
        .map(|j| j.join().expect("joiner").to_string())
        .collect();
    let (results, _) = host_results(&host, 12);
    let mut ours: Vec<String> = results.iter().map(ToString::to_string).collect();
    theirs.sort();
    ours.sort();
    assert_eq!(ours.len(), 12);
    assert_eq!(theirs, ours, "every joiner saw the result the host played");
    assert!(ours.iter().all(|r| r.starts_with("result: seat 1 ")));
}

/// A client that speaks the protocol by hand and keeps every byte it gets.
struct Spy {
    stream: TcpStream,
    frames: Vec<Vec<u8>>,
}

impl Spy {
    fn connect(addr: SocketAddr) -> Spy {
        let stream = TcpStream::connect(addr).expect("connect");
        Spy {
            stream,
            frames: Vec::new(),
        }
    }

    fn send(&mut self, message: &ToHost) {
        frame::write(&mut self.stream, message).expect("send");
    }

    fn hello(&mut self) {
        self.send(&ToHost::Hello {
            magic: MAGIC.into(),
            protocol: PROTOCOL,
            name: "spy".into(),
            resume: None,
        });
    }

    fn read(&mut self) -> Result<ToClient, frame::FrameError> {
        let body = frame::read_body(&mut self.stream, Some(WAIT), frame::FRAME_DEADLINE)?;
        self.frames.push(body.clone());
        frame::decode(&body)
    }

    /// Whether the host closed the connection (a `Bye`, then the end).
    fn closed(&mut self) -> Option<String> {
        loop {
            match self.read() {
                Ok(ToClient::Bye { reason }) => return Some(reason),
                Ok(_) => {}
                Err(_) => return None,
            }
        }
    }
}

fn contains(haystack: &[u8], needle: &str) -> bool {
    haystack
        .windows(needle.len())
        .any(|w| w == needle.as_bytes())
}

#[test]
fn a_spy_never_receives_a_card_of_the_opponents_hidden_stacks_before_it_is_played() {
    let content = base_content();
    let catalog = Arc::clone(&content.catalog);
    let host = Host::start(config(None, &catalog), content).expect("host");
    let addr = host.addr();
    // The spy sits first (seat 1) with the starter deck; the opponent's shifters deck
    // shares no card with it.
    let mut spy = Spy::connect(addr);
    spy.hello();
    assert!(matches!(spy.read(), Ok(ToClient::Welcome { .. })));
    spy.send(&ToHost::Join {
        deck: deck_keys(&catalog, "starter"),
        seat: None,
    });
    assert!(matches!(spy.read(), Ok(ToClient::Seated { seat: 1 })));
    let theirs: Vec<String> = deck_keys(&catalog, "shifters").concat();
    let mine: HashSet<String> = deck_keys(&catalog, "starter")
        .concat()
        .into_iter()
        .collect();
    assert!(theirs.iter().all(|k| !mine.contains(k)));
    let other_catalog = Arc::clone(&catalog);
    let opponent = std::thread::spawn(move || ai_game(addr, &other_catalog, "shifters"));

    let scripts = tokensmith::ai::hooks_for(&catalog);
    let brain = scripts.brain(&catalog);
    let mut played: HashSet<String> = HashSet::new();
    let mut seq = 0;
    let mut frames_checked = 0;
    let until = Instant::now() + WAIT;
    loop {
        assert!(Instant::now() < until, "the game did not end in time");
        let message = spy.read().expect("a frame");
        let bytes = spy.frames.last().cloned().unwrap_or_default();
        let ToClient::State { seen, last, events } = message else {
            continue;
        };
        // The move's events read back over the game's content.
        let events = tokensmith::net::events::from_wire(&catalog, &events).expect("events");
        if last.is_some() {
            assert!(
                events
                    .iter()
                    .any(|e| matches!(e.kind, tokensmith::rules::EventKind::Cycled { .. })),
                "a move's events include its card cycling"
            );
        }
        // What this very frame reveals as played counts as public.
        for (_, card) in &seen.their_plays {
            played.insert(card.clone());
        }
        if let Some(Played { card, seat: 2, .. }) = &last {
            played.insert(card.clone());
        }
        for key in &theirs {
            assert!(
                played.contains(key) || !contains(&bytes, key),
                "frame {frames_checked} carries {key}, a card still hidden in the opponent's stacks"
            );
        }
        frames_checked += 1;
        if seen.over {
            break;
        }
        if seen.turn == 1 {
            let (state, history) = seen.restore(&catalog).expect("restore");
            let obs = tokensmith::observe::Observation::new(
                &state,
                Seat::One,
                &tokensmith::observe::History::from_plays(history),
                false,
            );
            let mv = tokensmith::ai::agent(Level::Greedy, 1, Options::default())
                .choose(&brain, &obs)
                .expect("a move");
            let tokensmith::rules::Play::Stack(stack) = mv.play else {
                panic!("a stack move")
            };
            seq += 1;
            spy.send(&ToHost::Intent {
                seq,
                seat: 1,
                stack,
                x: mv.cell.x,
                y: mv.cell.y,
            });
        }
    }
    let result = opponent.join().expect("opponent");
    assert!(result.moves > 10);
    assert!(frames_checked > 10, "only {frames_checked} frames checked");
    // The check can fail: the host's own true state does hold those cards.
    assert!(theirs.len() >= 8);
}

/// A fresh host against the AI, for attacks.
fn ai_host() -> (Host, Arc<Catalog>) {
    let content = base_content();
    let catalog = Arc::clone(&content.catalog);
    let mut cfg = config(Some(Level::Greedy), &catalog);
    cfg.frame_deadline = Duration::from_secs(1);
    (Host::start(cfg, content).expect("host"), catalog)
}

/// Whether the host still plays a whole game with an honest joiner.
fn still_serves(host: &Host, catalog: &Catalog) {
    let r = ai_game(host.addr(), catalog, "shifters");
    assert!(r.moves > 0);
}

/// A spy seated at a table against the host's AI (seat 2; the AI has moved).
fn seated_spy(host: &Host, catalog: &Catalog) -> Spy {
    let mut spy = Spy::connect(host.addr());
    spy.hello();
    assert!(matches!(spy.read(), Ok(ToClient::Welcome { .. })));
    spy.send(&ToHost::Join {
        deck: deck_keys(catalog, "shifters"),
        seat: None,
    });
    // Seated, then the opening state, then the AI's first move.
    let until = Instant::now() + WAIT;
    loop {
        assert!(Instant::now() < until);
        if let Ok(ToClient::State { seen, .. }) = spy.read()
            && seen.turn == 2
        {
            return spy;
        }
    }
}

#[test]
fn garbage_a_huge_length_and_a_slow_sender_are_cut_off_and_the_host_serves_on() {
    let (host, catalog) = ai_host();
    // Garbage: a frame that is no message.
    let mut s = TcpStream::connect(host.addr()).expect("connect");
    s.write_all(&[0, 0, 0, 5, 0xff, 0xfe, 0xfd, 0xfc, 0xfb])
        .expect("write");
    wait_log(&host, "not a valid message");
    // A length prefix of 4 GiB: refused from the prefix.
    let mut s = TcpStream::connect(host.addr()).expect("connect");
    s.write_all(&[0xff, 0xff, 0xff, 0xff, 1, 2, 3])
        .expect("write");
    wait_log(&host, "over the 1048576-byte limit");
    // A byte a second: the frame's deadline (1 s here) ends it.
    let started = Instant::now();
    let mut s = TcpStream::connect(host.addr()).expect("connect");
    let hello = frame::encode(&ToHost::Hello {
        magic: MAGIC.into(),
        protocol: PROTOCOL,
        name: "slow".into(),
        resume: None,
    })
    .expect("encode");
    for b in hello.iter().take(4) {
        if s.write_all(&[*b]).is_err() {
            break;
        }
        std::thread::sleep(Duration::from_millis(600));
    }
    wait_log(&host, "slow sender");
    assert!(started.elapsed() < Duration::from_secs(10));
    // Not a Tokensmith client at all.
    let mut s = TcpStream::connect(host.addr()).expect("connect");
    frame::write(
        &mut s,
        &ToHost::Hello {
            magic: "other".into(),
            protocol: PROTOCOL,
            name: "x".into(),
            resume: None,
        },
    )
    .expect("send");
    wait_log(&host, "not a Tokensmith client");
    still_serves(&host, &catalog);
}

#[test]
fn moves_out_of_turn_for_the_other_seat_or_replayed_close_only_that_connection() {
    let (host, catalog) = ai_host();

    // For the other seat.
    let mut spy = seated_spy(&host, &catalog);
    spy.send(&ToHost::Intent {
        seq: 1,
        seat: 1,
        stack: 0,
        x: 0,
        y: 0,
    });
    let reason = spy.closed().expect("a Bye");
    assert!(reason.contains("for seat 1"), "{reason}");

    // A replay: the same move number twice.
    let mut spy = seated_spy(&host, &catalog);
    let free = (0..6)
        .flat_map(|y| (0..6).map(move |x| (x, y)))
        .find(|&(x, y)| {
            !spy.frames.iter().rev().take(1).any(|f| {
                frame::decode::<ToClient>(f).is_ok_and(|m| match m {
                    ToClient::State { seen, .. } => {
                        seen.tokens.iter().any(|t| t.x == x && t.y == y)
                    }
                    _ => false,
                })
            })
        })
        .expect("a free cell");
    let intent = ToHost::Intent {
        seq: 1,
        seat: 2,
        stack: 0,
        x: free.0,
        y: free.1,
    };
    spy.send(&intent);
    spy.send(&intent);
    let reason = spy.closed().expect("a Bye");
    assert!(reason.contains("replay"), "{reason}");

    // Out of turn: two moves in a row before the AI answers is impossible, so move
    // again after the game has been left waiting — with the AI to move, no: the AI
    // answers at once. Instead: a table of two joiners, where seat 2 moves first.
    drop(spy);
    let content = base_content();
    let pair = Host::start(config(None, &catalog), content).expect("host");
    let mut one = Spy::connect(pair.addr());
    one.hello();
    let _ = one.read();
    one.send(&ToHost::Join {
        deck: deck_keys(&catalog, "starter"),
        seat: None,
    });
    // Seated first, so the second joiner is seat 2 whichever reader thread runs first.
    assert!(matches!(one.read(), Ok(ToClient::Seated { seat: 1 })));
    let mut two = Spy::connect(pair.addr());
    two.hello();
    let _ = two.read();
    two.send(&ToHost::Join {
        deck: deck_keys(&catalog, "shifters"),
        seat: None,
    });
    loop {
        if let Ok(ToClient::State { .. }) = two.read() {
            break;
        }
    }
    // A third connection claiming seat 1, which is taken, gets a game of its own.
    let mut three = Spy::connect(pair.addr());
    three.hello();
    let _ = three.read();
    three.send(&ToHost::Join {
        deck: deck_keys(&catalog, "starter"),
        seat: Some(1),
    });
    assert!(matches!(three.read(), Ok(ToClient::Seated { seat: 1 })));
    let games: Vec<String> = {
        let mut seen = Vec::new();
        let until = Instant::now() + WAIT;
        while seen.len() < 3 && Instant::now() < until {
            if let Ok(HostEvent::Log(l)) = pair.events().recv_timeout(Duration::from_millis(100))
                && l.contains("sits at game")
            {
                seen.push(l);
            }
        }
        seen
    };
    assert_eq!(games.len(), 3, "{games:?}");
    let game_of = |l: &str| {
        l.split("game ")
            .nth(1)
            .and_then(|r| r.split(' ').next())
            .map(str::to_string)
    };
    assert_eq!(game_of(&games[0]), game_of(&games[1]), "{games:?}");
    assert_ne!(
        game_of(&games[0]),
        game_of(&games[2]),
        "the taken seat was not given away: {games:?}"
    );
    two.send(&ToHost::Intent {
        seq: 1,
        seat: 2,
        stack: 0,
        x: 0,
        y: 0,
    });
    let reason = two.closed().expect("a Bye");
    assert!(reason.contains("out of turn"), "{reason}");
    // Seat 1 is told its opponent dropped.
    let until = Instant::now() + WAIT;
    loop {
        assert!(Instant::now() < until);
        if let Ok(ToClient::Paused) = one.read() {
            break;
        }
    }
    still_serves(&host, &catalog);
}

#[test]
fn a_stolen_seat_a_flood_and_a_move_before_joining_are_refused() {
    let (host, catalog) = ai_host();
    // A token the host never gave.
    let mut s = Spy::connect(host.addr());
    s.send(&ToHost::Hello {
        magic: MAGIC.into(),
        protocol: PROTOCOL,
        name: "thief".into(),
        resume: Some([7; 16]),
    });
    let reason = s.closed().expect("a Bye");
    assert!(reason.contains("no longer held"), "{reason}");
    // A flood of pings.
    let mut s = Spy::connect(host.addr());
    s.hello();
    let _ = s.read();
    for _ in 0..300 {
        if frame::write(&mut s.stream, &ToHost::Ping).is_err() {
            break;
        }
    }
    let reason = s.closed().expect("a Bye");
    assert!(reason.contains("flooding"), "{reason}");
    // A move with no seat.
    let mut s = Spy::connect(host.addr());
    s.hello();
    let _ = s.read();
    s.send(&ToHost::Intent {
        seq: 1,
        seat: 1,
        stack: 0,
        x: 0,
        y: 0,
    });
    let reason = s.closed().expect("a Bye");
    assert!(reason.contains("before taking a seat"), "{reason}");
    // A deck with a card the game lacks is refused, the connection kept.
    let mut s = Spy::connect(host.addr());
    s.hello();
    let _ = s.read();
    s.send(&ToHost::Join {
        deck: vec![vec!["nope:card".into()]],
        seat: None,
    });
    match s.read() {
        Ok(ToClient::DeckRefused { reason }) => assert!(reason.contains("nope:card"), "{reason}"),
        other => panic!("{other:?}"),
    }
    still_serves(&host, &catalog);
}

#[test]
fn a_dropped_player_reconnects_to_the_same_position_and_hand() {
    let content = base_content();
    let catalog = Arc::clone(&content.catalog);
    let host = Host::start(config(Some(Level::Greedy), &catalog), content).expect("host");
    let mut client = Client::connect(host.addr(), "me", None, WAIT).expect("connect");
    client.join(&deck_keys(&catalog, "shifters")).expect("join");
    let mut last = None;
    let until = Instant::now() + WAIT;
    while last.is_none() {
        assert!(Instant::now() < until);
        if let Ok(Some(Update::State { seen, .. })) = client.next(Duration::from_millis(200))
            && seen.turn == 2
        {
            last = Some(seen);
        }
    }
    let before = last.expect("a state");
    // Drop the connection; the host keeps the seat.
    let back = client.reconnect(WAIT).expect("reconnect");
    drop(client);
    let mut back = back;
    assert_eq!(back.welcome().resumed, Some(Seat::Two));
    let until = Instant::now() + WAIT;
    let after = loop {
        assert!(Instant::now() < until);
        if let Ok(Some(Update::State { seen, .. })) = back.next(Duration::from_millis(200)) {
            break seen;
        }
    };
    assert_eq!(before, after, "the same position, scores and hand");
    let r = play_with_ai(&mut back, &catalog, &greedy(), &mut |_: &str| {}).expect("game");
    assert!(r.moves > before.moves);
}

#[test]
fn a_killed_and_restarted_host_resumes_the_saved_game() {
    let saves = tempfile::tempdir().expect("tmp");
    let content = base_content();
    let catalog = Arc::clone(&content.catalog);
    let mut cfg = config(Some(Level::Greedy), &catalog);
    cfg.save_dir = Some(saves.path().to_path_buf());
    let host = Host::start(cfg.clone(), content).expect("host");
    let mut client = Client::connect(host.addr(), "me", None, WAIT).expect("connect");
    client.join(&deck_keys(&catalog, "shifters")).expect("join");
    // Play three moves, then the host goes away.
    let mut moves = 0;
    let mut seen_before = None;
    let scripts = tokensmith::ai::hooks_for(&catalog);
    let brain = scripts.brain(&catalog);
    let until = Instant::now() + WAIT;
    while moves < 3 {
        assert!(Instant::now() < until);
        if let Ok(Some(Update::State { seen, .. })) = client.next(Duration::from_millis(200))
            && seen.turn == 2
        {
            if moves == 2 {
                seen_before = Some(seen);
                break;
            }
            let (state, history) = seen.restore(&catalog).expect("restore");
            let obs = tokensmith::observe::Observation::new(
                &state,
                Seat::Two,
                &tokensmith::observe::History::from_plays(history),
                false,
            );
            let mv = tokensmith::ai::agent(Level::Greedy, 3, Options::default())
                .choose(&brain, &obs)
                .expect("move");
            let tokensmith::rules::Play::Stack(stack) = mv.play else {
                panic!()
            };
            client.play(stack, mv.cell).expect("play");
            moves += 1;
        }
    }
    let before = seen_before.expect("a state after two moves");
    drop(host);
    let saved: Vec<PathBuf> = std::fs::read_dir(saves.path())
        .expect("saves")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .collect();
    assert_eq!(saved.len(), 1, "one game saved: {saved:?}");
    // The save is a replay: `tokensmith replay` checks it, and it says who sits where.
    let save = tokensmith::replay::read(&saved[0]).expect("the save is a replay");
    assert_eq!(
        save.moves.len(),
        before.moves as usize,
        "every move played so far"
    );
    assert!(
        matches!(&save.table, Some([tokensmith::replay::SeatRecord::Ai { level }, tokensmith::replay::SeatRecord::Player { name, .. }]) if level == "greedy" && name == "me"),
        "{:?}",
        save.table
    );
    assert_replays_the_same(&saved[0]);
    // A new host process takes the saved game up; the player comes back with its token.
    let host = Host::start(cfg, base_content()).expect("restarted host");
    let token = client.welcome().token;
    let mut back = Client::connect(host.addr(), "me", Some(token), WAIT).expect("resume");
    back.set_seq(2);
    assert_eq!(back.welcome().resumed, Some(Seat::Two));
    let until = Instant::now() + WAIT;
    let after = loop {
        assert!(Instant::now() < until);
        if let Ok(Some(Update::State { seen, .. })) = back.next(Duration::from_millis(200)) {
            break seen;
        }
    };
    assert_eq!(before, after, "the resumed game is the saved one");
    let r = play_with_ai(&mut back, &catalog, &greedy(), &mut |_: &str| {}).expect("game");
    assert!(r.moves > before.moves);
    // The host removes a finished game's save right after sending the last state, and
    // keeps its replay, without the seats' tokens, in `finished/`.
    let until = Instant::now() + WAIT;
    let finished = saves.path().join("finished");
    let replays = loop {
        let left: Vec<PathBuf> = std::fs::read_dir(saves.path())
            .expect("saves")
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.is_file())
            .collect();
        let kept: Vec<PathBuf> = std::fs::read_dir(&finished)
            .map(|d| d.filter_map(Result::ok).map(|e| e.path()).collect())
            .unwrap_or_default();
        if left.is_empty() && !kept.is_empty() {
            break kept;
        }
        assert!(
            Instant::now() < until,
            "a finished game's save is removed: {left:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(replays.len(), 1, "{replays:?}");
    let replay = tokensmith::replay::read(&replays[0]).expect("a replay");
    assert!(
        replay.table.is_none(),
        "no tokens in a finished game's replay"
    );
    assert!(replay.result.over, "{:?}", replay.result);
    assert_replays_the_same(&replays[0]);
}

/// `tokensmith replay FILE` plays `file` again and finds every move as it was.
fn assert_replays_the_same(file: &Path) {
    let out = crate::support::tokensmith(["replay".as_ref(), file.as_os_str()])
        .output()
        .expect("runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && text.contains("every move does exactly what it did"),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A host with the base pack and `extra` (a pack folder), and its content.
fn host_with(extra: &Path) -> (Host, Arc<Catalog>) {
    let folders = Folders {
        content: root().join("content"),
        mods: extra.to_path_buf(),
        installed: None,
    };
    let loaded = tokensmith::script::load(&tokensmith::packs::set::load_options(
        &folders,
        &tokensmith::packs::Selection::All,
    ));
    let catalog = Arc::new(loaded.catalog.expect("host content"));
    let content = Content::new(Arc::clone(&catalog), &folders.all()).expect("content");
    let host = Host::start(config(Some(Level::Greedy), &catalog), content).expect("host");
    (host, catalog)
}

fn write_pack(dir: &Path, version: &str, value: i32, script: Option<&str>) {
    std::fs::create_dir_all(dir.join("scripts")).expect("mkdir");
    std::fs::write(
        dir.join("pack.yaml"),
        format!(
            "id: lanpack\nname: LAN pack\nversion: {version}\nrequires:\n  - {{ id: base, version: \"^1\" }}\n"
        ),
    )
    .expect("write");
    let (abilities, card_ability) = if script.is_some() {
        (
            "abilities:\n  - id: loop\n    script: scripts/loop.lua\n",
            "    ability: loop\n    area: cross\n",
        )
    } else {
        ("", "")
    };
    std::fs::write(
        dir.join("cards.yaml"),
        format!("{abilities}cards:\n  - id: lan_card\n    value: {value}\n{card_ability}"),
    )
    .expect("write");
    if let Some(s) = script {
        std::fs::write(dir.join("scripts/loop.lua"), s).expect("write");
    }
}

#[test]
fn a_joiner_without_the_hosts_pack_gets_it_apart_from_its_own_and_plays() {
    let host_mods = tempfile::tempdir().expect("tmp");
    write_pack(&host_mods.path().join("lanpack"), "1.1.0", 9, None);
    let (host, host_catalog) = host_with(host_mods.path());
    let profile = tempfile::tempdir().expect("tmp");
    let cache = Cache::new(profile.path());
    let mine = tempfile::tempdir().expect("tmp");

    // Missing.
    let mut client = Client::connect(host.addr(), "me", None, WAIT).expect("connect");
    let folders = Folders {
        content: root().join("content"),
        mods: mine.path().to_path_buf(),
        installed: None,
    };
    let mut p = plan(&client.welcome().packs, &folders, &cache);
    let lan: Vec<_> = p.differences().collect();
    assert_eq!(lan.len(), 1);
    assert_eq!(lan[0].difference, Some(Difference::Missing));
    client.fetch(&mut p, &cache, |_, _| {}).expect("fetch");
    let loaded = tokensmith::script::load(&p.load_options().expect("all there"));
    let catalog = loaded.catalog.expect("the game's content");
    assert!(catalog.card_named("lanpack:lan_card").is_ok());
    // Cached under the profile, apart from its packs; the joiner's own folders untouched.
    assert!(profile.path().join("lan-packs").is_dir());
    assert!(!profile.path().join("packs").exists());
    assert!(!profile.path().join("packs.yaml").exists());
    assert_eq!(std::fs::read_dir(mine.path()).expect("mine").count(), 0);
    client.join(&deck_keys(&catalog, "shifters")).expect("join");
    let r = play_with_ai(&mut client, &catalog, &greedy(), &mut |_: &str| {}).expect("game");
    assert!(r.moves > 0);

    // The next game finds the cached copy: nothing to fetch.
    let p = plan(&host_catalog_packs(&host), &folders, &cache);
    assert!(p.to_fetch().is_empty());

    // An older version of one's own.
    write_pack(&mine.path().join("lanpack"), "1.0.0", 9, None);
    let p = plan(
        &host_catalog_packs(&host),
        &folders,
        &Cache::new(mine.path()),
    );
    assert_eq!(
        p.differences().next().and_then(|s| s.difference.clone()),
        Some(Difference::OtherVersion {
            local: "1.0.0".into()
        })
    );
    // The same version, edited.
    write_pack(&mine.path().join("lanpack"), "1.1.0", 10, None);
    let p = plan(
        &host_catalog_packs(&host),
        &folders,
        &Cache::new(mine.path()),
    );
    assert_eq!(
        p.differences().next().and_then(|s| s.difference.clone()),
        Some(Difference::OtherContent)
    );
    assert_eq!(p.to_fetch(), vec!["lanpack".to_string()]);
    drop(host_catalog);
}

fn host_catalog_packs(host: &Host) -> Vec<tokensmith::net::PackRef> {
    Client::connect(host.addr(), "peek", None, WAIT)
        .expect("connect")
        .welcome()
        .packs
        .clone()
}

#[test]
fn a_host_whose_archive_does_not_match_its_hash_is_refused_and_nothing_is_cached() {
    let host_mods = tempfile::tempdir().expect("tmp");
    write_pack(&host_mods.path().join("lanpack"), "1.1.0", 9, None);
    let folders = Folders {
        content: root().join("content"),
        mods: host_mods.path().to_path_buf(),
        installed: None,
    };
    let loaded = tokensmith::script::load(&tokensmith::packs::set::load_options(
        &folders,
        &tokensmith::packs::Selection::All,
    ));
    let catalog = Arc::new(loaded.catalog.expect("content"));
    let mut content = Content::new(Arc::clone(&catalog), &folders.all()).expect("content");
    // Announce one pack, send another's bytes.
    let other = tempfile::tempdir().expect("tmp");
    write_pack(&other.path().join("lanpack"), "1.1.0", 500, None);
    let built =
        tokensmith::packs::build(&other.path().join("lanpack"), |_| Vec::new()).expect("build");
    content.set_archive("lanpack", built.bytes);
    let host = Host::start(config(Some(Level::Greedy), &catalog), content).expect("host");
    let profile = tempfile::tempdir().expect("tmp");
    let cache = Cache::new(profile.path());
    let mut client = Client::connect(host.addr(), "me", None, WAIT).expect("connect");
    let mine = tempfile::tempdir().expect("tmp");
    let mut p = plan(
        &client.welcome().packs,
        &Folders {
            content: root().join("content"),
            mods: mine.path().to_path_buf(),
            installed: None,
        },
        &cache,
    );
    let err = client
        .fetch(&mut p, &cache, |_, _| {})
        .expect_err("refused");
    assert!(err.to_string().contains("not the"), "{err}");
    assert!(p.load_options().is_none());
    let cached: Vec<_> = std::fs::read_dir(cache.root())
        .map(|d| {
            d.filter_map(Result::ok)
                .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
                .collect()
        })
        .unwrap_or_default();
    assert!(cached.is_empty(), "nothing cached: {cached:?}");
}

#[test]
fn a_hostile_pack_from_the_host_cannot_hang_the_joiners_ai() {
    let host_mods = tempfile::tempdir().expect("tmp");
    write_pack(
        &host_mods.path().join("lanpack"),
        "1.1.0",
        3,
        Some("return { on_place = function(ctx) while true do end end }\n"),
    );
    let (host, _) = host_with(host_mods.path());
    let profile = tempfile::tempdir().expect("tmp");
    let cache = Cache::new(profile.path());
    let mut client = Client::connect(host.addr(), "me", None, WAIT).expect("connect");
    let mine = tempfile::tempdir().expect("tmp");
    let mut p = plan(
        &client.welcome().packs,
        &Folders {
            content: root().join("content"),
            mods: mine.path().to_path_buf(),
            installed: None,
        },
        &cache,
    );
    client.fetch(&mut p, &cache, |_, _| {}).expect("fetch");
    let loaded = tokensmith::script::load(&p.load_options().expect("all there"));
    let catalog = loaded
        .catalog
        .expect("loads: the script only fails when run");
    // A deck holding the looping card: every play of it runs out its budget.
    let mut deck = deck_keys(&catalog, "shifters");
    deck[0].insert(0, "lanpack:lan_card".into());
    client.join(&deck).expect("join");
    let started = Instant::now();
    let r = play_with_ai(&mut client, &catalog, &greedy(), &mut |_: &str| {}).expect("game");
    assert!(r.moves > 0);
    assert!(
        started.elapsed() < Duration::from_secs(120),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn discovery_finds_a_host_on_this_machine() {
    let (host, _) = ai_host();
    let beacon = tokensmith::net::discovery::Beacon::start(0, host.announcer()).expect("beacon");
    let target: SocketAddr = format!("127.0.0.1:{}", beacon.port())
        .parse()
        .expect("addr");
    let found = tokensmith::net::discovery::discover(&[target], Duration::from_millis(1_500))
        .expect("discover");
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].addr.port(), host.addr().port());
    assert_eq!(found[0].announce.name, "test host");
    assert_eq!(found[0].announce.seats_free, 1);
    assert!(found[0].announce.packs.iter().any(|(id, _)| id == "base"));
}

#[test]
fn serve_and_join_commands_finish_their_games_and_print_the_same_results() {
    use std::io::BufRead as _;
    use std::process::Stdio;
    let profiles = tempfile::tempdir().expect("tmp");
    let mut serve = crate::support::tokensmith([
        OsStr::new("--profile"),
        profiles.path().join("host").as_os_str(),
    ])
    .args([
        "serve",
        "--addr",
        "127.0.0.1:0",
        "--ai",
        "greedy",
        "--games",
        "2",
        "--no-discovery",
    ])
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .expect("serve");
    let mut lines = std::io::BufReader::new(serve.stderr.take().expect("stderr")).lines();
    let first = lines.next().expect("a line").expect("text");
    let addr = first
        .strip_prefix("hosting on ")
        .and_then(|r| r.split_whitespace().next())
        .unwrap_or_else(|| panic!("first line: {first}"))
        .to_string();
    // Keep reading the host's log so it never blocks on a full pipe.
    let log = std::thread::spawn(move || lines.map_while(Result::ok).collect::<Vec<_>>());
    let join = crate::support::tokensmith([
        OsStr::new("--profile"),
        profiles.path().join("joiner").as_os_str(),
    ])
    .args([
        "join",
        &addr,
        "--ai",
        "greedy",
        "--games",
        "2",
        "--deck",
        "gardeners",
    ])
    .output()
    .expect("join");
    assert!(
        join.status.success(),
        "{}",
        String::from_utf8_lossy(&join.stderr)
    );
    let until = Instant::now() + WAIT;
    let status = loop {
        if let Some(s) = serve.try_wait().expect("wait") {
            break s;
        }
        assert!(Instant::now() < until, "serve did not stop after its games");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status.success());
    let mut host_out = String::new();
    std::io::Read::read_to_string(&mut serve.stdout.take().expect("stdout"), &mut host_out)
        .expect("read");
    let joined = String::from_utf8_lossy(&join.stdout).to_string();
    let results: Vec<&str> = host_out.lines().collect();
    assert_eq!(results.len(), 2, "{host_out}");
    assert!(
        results.iter().all(|l| l.starts_with("result: seat 1 ")),
        "{host_out}"
    );
    assert_eq!(host_out, joined, "both sides print the same result lines");
    let log = log.join().expect("log");
    assert!(log.iter().any(|l| l.contains("sits at game")), "{log:?}");
}

/// A fake host on 127.0.0.1 that welcomes every connection (taking seat 2 back when
/// the `Hello` resumes) and closes it at once; it counts the connections until stopped.
struct DroppingHost {
    addr: SocketAddr,
    accepted: Arc<std::sync::atomic::AtomicU32>,
    stop: Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl DroppingHost {
    fn start() -> DroppingHost {
        use std::sync::atomic::Ordering;
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        listener.set_nonblocking(true).expect("nonblocking");
        let addr = listener.local_addr().expect("addr");
        let accepted = Arc::new(std::sync::atomic::AtomicU32::new(0));
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let (count, halt) = (Arc::clone(&accepted), Arc::clone(&stop));
        let thread = std::thread::spawn(move || {
            let until = Instant::now() + WAIT;
            while !halt.load(Ordering::SeqCst) && Instant::now() < until {
                let Ok((mut stream, _)) = listener.accept() else {
                    std::thread::sleep(Duration::from_millis(2));
                    continue;
                };
                count.fetch_add(1, Ordering::SeqCst);
                let _ = stream.set_nonblocking(false);
                let resumed = match frame::read::<ToHost>(&mut stream, Some(WAIT)) {
                    Ok(ToHost::Hello { resume, .. }) => resume.map(|_| 2),
                    _ => continue,
                };
                let _ = frame::write(
                    &mut stream,
                    &ToClient::Welcome {
                        protocol: PROTOCOL,
                        host: "dropper".into(),
                        packs: Vec::new(),
                        sends_packs: false,
                        token: [7; 16],
                        resumed,
                        ai_deck: None,
                    },
                );
                // Dropped here: the connection closes.
            }
        });
        DroppingHost {
            addr,
            accepted,
            stop,
            thread: Some(thread),
        }
    }

    fn accepted(&self) -> u32 {
        self.accepted.load(std::sync::atomic::Ordering::SeqCst)
    }
}

impl Drop for DroppingHost {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

#[test]
fn a_host_that_drops_every_resume_gets_few_spaced_reconnections_then_a_clear_stop() {
    use tokensmith::net::ClientError;
    use tokensmith::net::client::MAX_RECONNECTS;
    let fake = DroppingHost::start();
    let catalog = Arc::new(base_catalog());
    let mut client = Client::connect(fake.addr, "me", None, WAIT).expect("connect");
    let player = AiPlayer {
        reconnect: Duration::from_secs(3),
        ..greedy()
    };
    let mut lines = Vec::new();
    let started = Instant::now();
    let err = play_with_ai(&mut client, &catalog, &player, &mut |l: &str| {
        lines.push(l.to_string());
    })
    .expect_err("the fake host never plays");
    let took = started.elapsed();
    let tries = fake.accepted() - 1;
    drop(fake);
    assert!(
        matches!(err, ClientError::GaveUp { .. }),
        "stopped with: {err}"
    );
    let text = err.to_string();
    assert!(
        text.contains("gave up reconnecting") && text.contains("took the seat back each time"),
        "{text}"
    );
    // Backing off 100, 200, 400, 800 ms… within the 3 s window: 4 tries, not thousands.
    assert!(
        (3..=MAX_RECONNECTS).contains(&tries),
        "{tries} reconnections in {took:?}"
    );
    assert!(took < Duration::from_secs(5), "{took:?}");
    assert_eq!(
        lines.len(),
        1,
        "one line for the whole run of drops: {lines:?}"
    );
    // An honest game with a real host still finishes.
    let (host, catalog) = ai_host();
    still_serves(&host, &catalog);
}

/// A free port on 127.0.0.1 where nothing listens.
fn closed_port() -> SocketAddr {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    l.local_addr().expect("addr")
}

fn tokensmith(profile: &Path, args: &[&str]) -> std::process::Output {
    crate::support::tokensmith([OsStr::new("--profile"), profile.as_os_str()])
        .args(args)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run tokensmith")
}

#[test]
fn join_says_once_why_a_host_cannot_be_reached_or_found_and_what_to_check() {
    let profile = tempfile::tempdir().expect("tmp");
    let addr = closed_port().to_string();
    let out = tokensmith(profile.path(), &["join", &addr]);
    let err = String::from_utf8_lossy(&out.stderr).to_lowercase();
    assert!(!out.status.success());
    assert_eq!(err.matches("connection refused").count(), 1, "{err}");
    assert!(err.contains("is a game hosted there"), "{err}");
    assert!(err.contains("check the port"), "{err}");
    let out = tokensmith(profile.path(), &["join", "no-such-host.invalid"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("could not find host 'no-such-host.invalid'"),
        "{err}"
    );
    assert!(!err.contains("not an address"), "{err}");
}

/// The cells of the last board `join` printed: `(x, y, empty)`, and the stacks that
/// still hold cards (numbered from 1).
fn last_board(text: &str) -> (Vec<(i32, i32, bool)>, Vec<usize>) {
    let board = &text[text.rfind("scores:").expect("a board")..];
    let mut cells = Vec::new();
    let mut stacks = Vec::new();
    for line in board.lines().skip(2) {
        let mut words = line.split_whitespace();
        let Some(first) = words.next() else { break };
        if let Ok(y) = first.parse::<i32>() {
            for (x, w) in words.enumerate() {
                cells.push((i32::try_from(x).expect("x"), y, w == "."));
            }
        } else if first == "stack" {
            let n: usize = words
                .next()
                .and_then(|w| w.trim_end_matches(':').parse().ok())
                .expect("stack number");
            if !line.contains("(empty)") {
                stacks.push(n);
            }
        } else {
            break;
        }
    }
    (cells, stacks)
}

#[test]
fn interactive_join_asks_again_after_a_refused_move_and_plays_typed_moves_to_the_end() {
    use std::io::Read as _;
    use std::process::Stdio;
    let (host, _catalog) = ai_host();
    let profile = tempfile::tempdir().expect("tmp");
    // Waited for with `try_wait` below; a failed assertion ends the test process, and
    // the child with its closed pipes.
    #[allow(clippy::zombie_processes)]
    let mut join =
        crate::support::tokensmith([OsStr::new("--profile"), profile.path().as_os_str()])
            .args(["join", &host.addr().to_string(), "--deck", "shifters"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("join");
    let mut stdin = join.stdin.take().expect("stdin");
    let mut stderr = join.stderr.take().expect("stderr");
    // Prompts end without a newline: read bytes as they come.
    let (tx, rx) = std::sync::mpsc::channel::<Vec<u8>>();
    let reader = std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n) = stderr.read(&mut buf) {
            if n == 0 || tx.send(buf[..n].to_vec()).is_err() {
                break;
            }
        }
    });
    const PROMPT: &str = "your move (STACK X Y): ";
    let mut text = String::new();
    let mut answered = 0; // prompts answered
    let mut refused_once = false;
    let mut asked_after_refusal = false;
    // Which of the candidate moves of the last board to try (one more per refusal).
    let mut boards = 0;
    let mut k = 0;
    let until = Instant::now() + WAIT;
    let mut exited = None;
    while exited.is_none() {
        assert!(Instant::now() < until, "no end in time:\n{text}");
        if let Ok(bytes) = rx.recv_timeout(Duration::from_millis(50)) {
            text.push_str(&String::from_utf8_lossy(&bytes));
        }
        exited = join.try_wait().expect("wait");
        if text.matches(PROMPT).count() <= answered {
            continue;
        }
        answered = text.matches(PROMPT).count();
        if !refused_once {
            // A stack the deck does not have, on an empty cell (a cell the host's first
            // move took would be refused for that first): the host refuses it.
            let (cells, _) = last_board(&text);
            let (x, y, _) = cells
                .iter()
                .copied()
                .find(|c| c.2)
                .unwrap_or_else(|| panic!("no empty cell:\n{text}"));
            writeln!(stdin, "9 {x} {y}").expect("type");
            refused_once = true;
            continue;
        }
        if text.ends_with(&format!("try again\n{PROMPT}")) {
            asked_after_refusal = true;
        }
        let now = text.matches("scores:").count();
        k = if now == boards { k + 1 } else { 0 };
        boards = now;
        let (cells, stacks) = last_board(&text);
        let candidates: Vec<(usize, i32, i32)> = stacks
            .iter()
            .flat_map(|&s| {
                cells
                    .iter()
                    .filter(|c| c.2)
                    .map(move |&(x, y, _)| (s, x, y))
            })
            .collect();
        let (s, x, y) = candidates
            .get(k)
            .copied()
            .unwrap_or_else(|| panic!("no move left to try:\n{text}"));
        writeln!(stdin, "{s} {x} {y}").expect("type");
    }
    drop(stdin);
    let mut out = String::new();
    join.stdout
        .take()
        .expect("stdout")
        .read_to_string(&mut out)
        .expect("read");
    let _ = reader.join();
    while let Ok(bytes) = rx.try_recv() {
        text.push_str(&String::from_utf8_lossy(&bytes));
    }
    assert!(exited.is_some_and(|s| s.success()), "{text}");
    assert!(
        text.contains("refused: seat 2 has no stack 9; try again"),
        "{text}"
    );
    assert!(
        asked_after_refusal,
        "asked again after the refusal:\n{text}"
    );
    assert!(out.starts_with("result: "), "{out}\n{text}");
    // Labelled rows and columns; each top card's value, ability and area.
    assert!(text.contains(" y\\x "), "{text}");
    assert!(
        text.contains("stack 1: ") && text.contains(" - value "),
        "{text}"
    );
    assert!(text.contains("ability") && text.contains("area"), "{text}");
    // The host served the whole game, then serves another.
    let (results, _) = host_results(&host, 1);
    assert_eq!(results.len(), 1);
    still_serves(&host, &_catalog);
}

/// A host whose extra pack is `lanpack` at `version` with card value `value`.
fn lanpack_host(version: &str, value: i32) -> (Host, Arc<Catalog>, tempfile::TempDir) {
    let mods = tempfile::tempdir().expect("tmp");
    write_pack(&mods.path().join("lanpack"), version, value, None);
    let (host, catalog) = host_with(mods.path());
    (host, catalog, mods)
}

/// A joiner connected to `host` with none of its own packs but `base`, and its plan
/// against `cache` (the empty mods folder lives as long as the plan is used).
fn joiner(
    host: &Host,
    cache: &Cache,
) -> Result<(Client, tokensmith::net::sync::Plan, tempfile::TempDir), String> {
    let mine = tempfile::tempdir().expect("tmp");
    let client = Client::connect(host.addr(), "me", None, WAIT).map_err(|e| e.to_string())?;
    let p = plan(
        &client.welcome().packs,
        &Folders {
            content: root().join("content"),
            mods: mine.path().to_path_buf(),
            installed: None,
        },
        cache,
    );
    Ok((client, p, mine))
}

/// Fetch the host's packs into `cache` (none of the joiner's own but `base`).
fn fetch_from(host: &Host, cache: &Cache) -> Result<tokensmith::net::sync::Plan, String> {
    let (mut client, mut p, _mine) = joiner(host, cache)?;
    client
        .fetch(&mut p, cache, |_, _| {})
        .map_err(|e| e.to_string())?;
    Ok(p)
}

#[test]
fn the_pack_cache_keeps_to_its_quota_by_evicting_the_least_recently_used_pack() {
    use tokensmith::net::sync::Quota;
    let profile = tempfile::tempdir().expect("tmp");
    let cache = Cache::new(profile.path()).with_quota(Quota {
        bytes: 1024 * 1024,
        entries: 2,
    });
    let (a, _, _ma) = lanpack_host("1.1.0", 4);
    let (b, _, _mb) = lanpack_host("1.2.0", 5);
    let (c, c_catalog, _mc) = lanpack_host("1.3.0", 6);
    let hash = |h: &Host| {
        host_catalog_packs(h)
            .into_iter()
            .find(|p| p.id == "lanpack")
            .expect("lanpack")
            .hash
    };
    fetch_from(&a, &cache).expect("a");
    std::thread::sleep(Duration::from_millis(30));
    fetch_from(&b, &cache).expect("b");
    std::thread::sleep(Duration::from_millis(30));
    // A game with a again: its copy is used, nothing fetched, and it is now the newest.
    let again = fetch_from(&a, &cache).expect("a again");
    assert!(again.to_fetch().is_empty());
    std::thread::sleep(Duration::from_millis(30));
    let p = fetch_from(&c, &cache).expect("c");
    let held: Vec<String> = cache.entries().into_iter().map(|e| e.hash).collect();
    assert_eq!(
        held,
        vec![hash(&a), hash(&c)],
        "b, the least recently used, went"
    );
    assert!(cache.entries().iter().all(|e| e.bytes > 0));
    // The game with c plays from the cache.
    let catalog = tokensmith::script::load(&p.load_options().expect("all there"))
        .catalog
        .expect("loads");
    assert!(catalog.card_named("lanpack:lan_card").is_ok());

    // A quota the game's packs alone exceed: refused, and nothing of it stays.
    let tiny = Cache::new(profile.path()).with_quota(Quota {
        bytes: 10,
        entries: 2,
    });
    tiny.clear().expect("clear");
    let err = fetch_from(&b, &tiny).expect_err("over the quota");
    assert!(
        err.contains("over the pack cache's quota of 10 bytes"),
        "{err}"
    );
    assert!(tiny.entries().is_empty(), "{:?}", tiny.entries());
    // An honest game still finishes.
    still_serves(&c, &c_catalog);
}

#[test]
fn a_failed_fetch_still_holds_the_cache_to_its_quota() {
    use tokensmith::net::sync::Quota;
    // Three packs cached under a roomy quota, then a join under a quota of two whose host
    // goes away before sending anything: the cache is trimmed all the same (failed joins
    // used to leave every pack they had received, past the quota).
    let profile = tempfile::tempdir().expect("tmp");
    let roomy = Cache::new(profile.path());
    let hosts: Vec<_> = ["1.1.0", "1.2.0", "1.3.0"]
        .iter()
        .zip(4..)
        .map(|(v, value)| lanpack_host(v, value))
        .collect();
    for (host, _, _) in &hosts {
        fetch_from(host, &roomy).expect("fetched");
    }
    assert_eq!(roomy.entries().len(), 3);
    let small = Cache::new(profile.path()).with_quota(Quota {
        bytes: 1024 * 1024,
        entries: 2,
    });
    let (gone, _, _mods) = lanpack_host("2.0.0", 9);
    let (mut client, mut p, _mine) = joiner(&gone, &small).expect("connects");
    assert!(!p.to_fetch().is_empty(), "the host's pack is new");
    gone.stop();
    std::thread::sleep(Duration::from_millis(100));
    assert!(
        client.fetch(&mut p, &small, |_, _| {}).is_err(),
        "the host is gone"
    );
    assert!(
        small.entries().len() <= 2,
        "{} packs held over a quota of 2",
        small.entries().len()
    );
}

#[test]
fn pack_cache_lists_removes_and_clears_what_hosts_sent() {
    let profile = tempfile::tempdir().expect("tmp");
    let cache = Cache::new(profile.path());
    let (a, _, _ma) = lanpack_host("1.1.0", 4);
    let (b, _, _mb) = lanpack_host("1.2.0", 5);
    fetch_from(&a, &cache).expect("a");
    fetch_from(&b, &cache).expect("b");
    let text = |out: std::process::Output| {
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).to_string()
    };
    let listed = text(tokensmith(profile.path(), &["pack", "cache"]));
    assert!(listed.contains("2 pack(s)"), "{listed}");
    assert!(listed.contains("quota: 64 packs, 256.0 MiB"), "{listed}");
    assert!(
        listed.contains("lanpack 1.1.0") && listed.contains("lanpack 1.2.0"),
        "{listed}"
    );
    assert!(listed.contains("KiB") || listed.contains(" B "), "{listed}");
    assert!(listed.contains("used just now"), "{listed}");
    let first = cache.entries()[0].hash.clone();
    let removed = text(tokensmith(
        profile.path(),
        &["pack", "cache", "remove", &first[..10]],
    ));
    assert!(removed.contains("removed lanpack 1.1.0"), "{removed}");
    assert_eq!(cache.entries().len(), 1);
    let out = tokensmith(profile.path(), &["pack", "cache", "remove", "nothing"]);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("no cached pack has the id or hash 'nothing'")
    );
    let cleared = text(tokensmith(profile.path(), &["pack", "cache", "clear"]));
    assert!(cleared.contains("removed 1 cached pack(s)"), "{cleared}");
    assert!(cache.entries().is_empty());
    let listed = text(tokensmith(profile.path(), &["pack", "cache", "list"]));
    assert!(listed.contains("0 pack(s)"), "{listed}");
}

#[test]
fn a_pack_from_the_host_that_does_not_load_is_not_kept_in_the_cache() {
    // The host announces and sends a pack whose content does not load.
    let mods = tempfile::tempdir().expect("tmp");
    write_pack(&mods.path().join("lanpack"), "1.1.0", 4, None);
    let folders = Folders {
        content: root().join("content"),
        mods: mods.path().to_path_buf(),
        installed: None,
    };
    let loaded = tokensmith::script::load(&tokensmith::packs::set::load_options(
        &folders,
        &tokensmith::packs::Selection::All,
    ));
    let catalog = Arc::new(loaded.catalog.expect("content"));
    let mut content = Content::new(Arc::clone(&catalog), &folders.all()).expect("content");
    let broken = tempfile::tempdir().expect("tmp");
    let dir = broken.path().join("lanpack");
    write_pack(&dir, "1.1.0", 4, None);
    std::fs::write(
        dir.join("cards.yaml"),
        "cards:\n  - id: lan_card\n    value: 4\n    token: no_such_kind\n",
    )
    .expect("write");
    let built = tokensmith::packs::build(&dir, |_| Vec::new());
    // `pack build` refuses a pack with errors: archive its files by hand instead.
    let bytes = match built {
        Ok(b) => b.bytes,
        Err(_) => zip_folder(&dir),
    };
    let at = content
        .packs
        .iter()
        .position(|p| p.id == "lanpack")
        .expect("lanpack");
    content.packs[at].hash = tokensmith::packs::hash(&dir).expect("hash");
    content.set_archive("lanpack", bytes);
    let host = Host::start(config(Some(Level::Greedy), &catalog), content).expect("host");
    let profile = tempfile::tempdir().expect("tmp");
    let out = tokensmith(
        profile.path(),
        &[
            "join",
            &host.addr().to_string(),
            "--accept-packs",
            "--ai",
            "greedy",
        ],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(err.contains("no_such_kind"), "{err}");
    assert!(
        Cache::new(profile.path()).entries().is_empty(),
        "the pack that failed to load was removed"
    );
    // An honest game still finishes.
    still_serves(&host, &catalog);
}

/// A zip of the files in `dir` (stored, no compression), for packs `pack build` refuses.
fn zip_folder(dir: &Path) -> Vec<u8> {
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options =
        zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    for f in tokensmith::packs::files(dir).expect("files") {
        zip.start_file(f.rel.as_str(), options).expect("entry");
        zip.write_all(&std::fs::read(&f.path).expect("read"))
            .expect("write");
    }
    zip.finish().expect("zip").into_inner()
}

/// Every ```hex block of docs/protocol.md: its header (`ToHost: VALUE`) and its bytes.
fn documented_frames() -> Vec<(String, Vec<u8>)> {
    let doc = std::fs::read_to_string(root().join("docs/protocol.md")).expect("protocol.md");
    let mut blocks = Vec::new();
    let mut lines = doc.lines();
    while let Some(line) = lines.next() {
        if line.trim() != "```hex" {
            continue;
        }
        let mut header = None;
        let mut bytes = Vec::new();
        for l in lines.by_ref() {
            if l.trim() == "```" {
                break;
            }
            let (data, comment) = l.split_once('#').map_or((l, None), |(d, c)| (d, Some(c)));
            if header.is_none() {
                header = comment.map(|c| c.trim().to_string());
                continue;
            }
            for w in data.split_whitespace() {
                bytes.push(
                    u8::from_str_radix(w, 16).unwrap_or_else(|_| panic!("'{w}' is not a byte")),
                );
            }
        }
        blocks.push((header.expect("a header line"), bytes));
    }
    blocks
}

#[test]
fn the_protocol_documents_worked_examples_decode_with_the_real_decoder() {
    let blocks = documented_frames();
    let mut host_tags = HashSet::new();
    let mut client_tags = HashSet::new();
    for (header, bytes) in &blocks {
        let (kind, value) = header
            .split_once(": ")
            .map_or((header.as_str(), None), |(k, v)| (k, Some(v)));
        assert!(bytes.len() > 4, "{header}");
        let len = u32::from_be_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
        assert_eq!(
            len as usize,
            bytes.len() - 4,
            "the length prefix of {header}"
        );
        let body = &bytes[4..];
        let (shown, again) = match kind {
            "ToHost" => {
                let m: ToHost = frame::decode(body).unwrap_or_else(|e| panic!("{header}: {e}"));
                host_tags.insert(body[0]);
                (format!("{m:?}"), frame::encode(&m).expect("encode"))
            }
            "ToClient" => {
                let m: ToClient = frame::decode(body).unwrap_or_else(|e| panic!("{header}: {e}"));
                client_tags.insert(body[0]);
                (format!("{m:?}"), frame::encode(&m).expect("encode"))
            }
            other => panic!("a block of '{other}'"),
        };
        let value = value.unwrap_or(kind);
        if value != kind {
            assert_eq!(shown, value, "the documented value");
        }
        assert_eq!(&again, bytes, "{header} encodes back to the same bytes");
    }
    assert_eq!(host_tags.len(), 6, "every ToHost message has an example");
    assert_eq!(
        client_tags.len(),
        9,
        "every ToClient message has an example"
    );
    // As documented: bytes after the message in a body are ignored.
    let (_, ping) = blocks
        .iter()
        .find(|(h, _)| h == "ToHost: Ping")
        .expect("Ping");
    let mut body = ping[4..].to_vec();
    body.push(0xff);
    assert_eq!(frame::decode::<ToHost>(&body).ok(), Some(ToHost::Ping));
}

/// A joiner whose level fills in hidden cards (`normal`) follows the opponent's plays with
/// the positions it saw them made from, and plays to the end.
#[test]
fn a_joiner_that_fills_in_hidden_cards_plays_to_the_end() {
    let (host, catalog) = ai_host();
    let mut client = Client::connect(host.addr(), "bot", None, WAIT).expect("connect");
    client.join(&deck_keys(&catalog, "shifters")).expect("join");
    let player = AiPlayer {
        level: Level::Normal,
        ..greedy()
    };
    let r = play_with_ai(&mut client, &catalog, &player, &mut |_: &str| {}).expect("game");
    assert!(r.moves > 0);
    let (results, _) = host_results(&host, 1);
    assert_eq!(results.len(), 1);
    assert_eq!(results[0].moves, r.moves);
}

#[test]
fn an_interactive_join_takes_the_typed_answer_to_the_packs_question_and_plays() {
    use std::io::Read as _;
    // The joiner needs a terminal to be asked: `script` gives it one, fed from a pipe.
    if std::process::Command::new("script")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("no `script` here to give the joiner a terminal; skipped");
        return;
    }
    let (host, catalog, _mods) = lanpack_host("1.1.0", 9);
    let profile = tempfile::tempdir().expect("tmp");
    let command = format!(
        "'{}' --profile '{}' join {} --ai greedy",
        env!("CARGO_BIN_EXE_tokensmith"),
        profile.path().display(),
        host.addr()
    );
    let mut child = std::process::Command::new("script")
        .args(["-q", "-e", "-c", &command, "/dev/null"])
        .current_dir(root())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("script");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut stdout = child.stdout.take().expect("stdout");
    let reader = std::thread::spawn(move || {
        let mut all = String::new();
        let _ = stdout.read_to_string(&mut all);
        all
    });
    // Answer once the question is on the screen: typed ahead or not, the answer is read.
    std::thread::sleep(Duration::from_millis(500));
    stdin.write_all(b"y\n").expect("answer");
    let until = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if Instant::now() > until {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "the joiner hangs after the answer: {}",
                reader.join().unwrap_or_default()
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    drop(stdin);
    let out = reader.join().expect("reader");
    assert!(status.success(), "{out}");
    assert!(
        out.contains("Use the host's packs for this game? [y/N]"),
        "{out}"
    );
    assert!(out.contains("got the host's packs"), "{out}");
    assert!(out.contains("result:"), "{out}");
    still_serves(&host, &catalog);
}
