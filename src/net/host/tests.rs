//! The host's tests that need its inside: a game made to fail inside (which no input from
//! a player can do), and the listener's stop. The host under attack from outside is
//! tested through its public API in `tests/integration/lan_host.rs`.

use std::net::TcpStream;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::GameResult;
use super::{Content, Host, HostConfig, HostEvent};
use crate::ai::{Level, Options};
use crate::net::client::{AiPlayer, Client, play_with_ai};
use crate::packs::Folders;
use crate::rules::Catalog;

const WAIT: Duration = Duration::from_secs(20);

fn content() -> Content {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let folders = Folders {
        content: root.join("content"),
        mods: root.join("no-mods-here"),
        installed: None,
    };
    Content::new(Arc::new(crate::content::base_for_tests()), &folders.all()).expect("base content")
}

fn keys(catalog: &Catalog, name: &str) -> Vec<Vec<String>> {
    let id = catalog.deck_named(name).expect("deck");
    crate::net::protocol::deck_keys(catalog, &catalog.deck(id).stacks)
}

/// Two joiners share a table; saves in `saves`.
fn config(saves: &Path) -> HostConfig {
    let mut c = HostConfig::new("test host", "127.0.0.1:0".parse().expect("addr"));
    c.frame_deadline = Duration::from_secs(2);
    c.save_dir = Some(saves.to_path_buf());
    c
}

fn greedy() -> AiPlayer {
    AiPlayer {
        level: Level::Greedy,
        options: Options::default(),
        reconnect: Duration::from_secs(5),
    }
}

/// A joiner who plays `deck` with the greedy AI until the game ends or fails.
fn joiner(host: &Host, catalog: &Arc<Catalog>, deck: &str) -> std::thread::JoinHandle<bool> {
    let (addr, catalog, deck) = (host.addr(), Arc::clone(catalog), deck.to_string());
    crate::script::threads::spawn("joiner", move || {
        let mut c = Client::connect(addr, "p", None, WAIT).expect("connect");
        c.join(&keys(&catalog, &deck)).expect("join");
        let r: Result<GameResult, _> = play_with_ai(&mut c, &catalog, &greedy(), &mut |_: &str| {});
        r.is_ok_and(|r| r.moves > 10)
    })
    .expect("a joiner's thread")
}

fn wait_log(host: &Host, text: &str) {
    let until = Instant::now() + WAIT;
    while Instant::now() < until {
        if let Ok(HostEvent::Log(l)) = host.events().recv_timeout(Duration::from_millis(50))
            && l.contains(text)
        {
            return;
        }
    }
    panic!("the host never logged '{text}'");
}

fn files(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .expect("saves")
        .filter_map(Result::ok)
        .filter(|e| e.path().is_file())
        .count()
}

#[test]
fn a_game_that_fails_inside_ends_alone_saved_and_both_told() {
    let saves = tempfile::tempdir().expect("tmp");
    let content = content();
    let catalog = Arc::clone(&content.catalog);
    let host = Host::start(config(saves.path()), content).expect("host");
    host.fail_a_game_after(3);
    let players = [
        joiner(&host, &catalog, "shifters"),
        joiner(&host, &catalog, "shifters"),
    ];
    for p in players {
        assert!(
            !p.join().expect("a player thread"),
            "the failed game does not finish"
        );
    }
    wait_log(&host, "internal error");
    assert_eq!(files(saves.path()), 1, "the failed game is saved");
    // The host goes on: the next two joiners play a whole game.
    let players = [
        joiner(&host, &catalog, "starter"),
        joiner(&host, &catalog, "shifters"),
    ];
    for p in players {
        assert!(p.join().expect("a player thread"), "the next game finishes");
    }
}

#[test]
fn a_stopped_host_has_closed_its_listener_and_said_so_last() {
    let saves = tempfile::tempdir().expect("tmp");
    let host = Host::start(config(saves.path()), content()).expect("host");
    let addr = host.addr();
    // A connection open while it stops is told, and closed.
    let mut open = Client::connect(addr, "p", None, WAIT).expect("connect");
    let started = Instant::now();
    host.stop();
    let took = started.elapsed();
    assert!(took < Duration::from_secs(5), "stopping took {took:?}");
    assert!(
        TcpStream::connect_timeout(&addr, Duration::from_secs(1)).is_err(),
        "nothing listens on {addr} once the host has stopped"
    );
    match open.next(Duration::from_secs(5)) {
        Err(crate::net::client::ClientError::Bye(reason)) => {
            assert!(reason.contains("stopping"), "{reason}");
        }
        other => panic!("the open connection was not told the host stops: {other:?}"),
    }
    let events: Vec<HostEvent> = host.events().try_iter().collect();
    assert_eq!(events.last(), Some(&HostEvent::Stopped), "{events:?}");
    // Stopping again (and dropping) is quiet.
    host.stop();
    assert!(host.events().try_iter().next().is_none());
}
