//! LAN play over loopback, in one process:
//! - a move's round trip: from sending the intent until both players have the new view
//!   (two joiners, no AI), p50 and p95 over 400 moves;
//! - concurrent games: N joiners at once against a host whose seat is played by greedy,
//!   each joiner playing greedy at a person's pace (a pause between its moves) so every
//!   game is held at the same time; wall time, moves' p95 under that load, and resident
//!   memory per game;
//! - pack sync of a generated 1,000-card pack: the host's archive, the joiner's fetch,
//!   check, unpack and hash, and loading the game's catalog from it.
//!
//! Run with `cargo bench --bench lan` (`-- N` for another count of concurrent games).

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use support::{BULK_PACK, bulk_cards};
use tokensmith::ai::{Level, Observation, Options};
use tokensmith::net::client::{Client, Update};
use tokensmith::net::sync::{Cache, plan};
use tokensmith::net::{Content, Host, HostConfig, HostEvent};
use tokensmith::packs::Folders;
use tokensmith::rules::{Catalog, Play};

#[path = "support.rs"]
mod support;

const WAIT: Duration = Duration::from_secs(30);

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn percentile(sorted: &[Duration], p: usize) -> f64 {
    let i = ((sorted.len() * p).div_ceil(100))
        .saturating_sub(1)
        .min(sorted.len() - 1);
    ms(sorted[i])
}

fn folders(mods: &Path) -> Folders {
    Folders {
        content: Path::new(env!("CARGO_MANIFEST_DIR")).join("content"),
        mods: mods.to_path_buf(),
        installed: None,
    }
}

fn deck(catalog: &Catalog, name: &str) -> Vec<Vec<String>> {
    let id = catalog.deck_named(name).unwrap_or_else(|e| panic!("{e:?}"));
    catalog
        .deck(id)
        .stacks
        .iter()
        .map(|s| s.iter().map(|&c| catalog.card(c).meta.key()).collect())
        .collect()
}

fn resident_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|n| n.parse().ok())
        })
        .unwrap_or(0)
}

/// Wait for the next view.
fn view(client: &mut Client) -> tokensmith::net::Seen {
    let until = Instant::now() + WAIT;
    loop {
        assert!(Instant::now() < until, "no view in time");
        if let Ok(Some(Update::State { seen, .. })) = client.next(Duration::from_millis(500)) {
            return *seen;
        }
    }
}

/// The greedy move of `seen`'s seat.
fn greedy_move(
    catalog: &Catalog,
    brain: &tokensmith::ai::Brain<'_>,
    seen: &tokensmith::net::Seen,
) -> (u8, tokensmith::rules::Cell) {
    let (state, history) = seen.restore(catalog).unwrap_or_else(|e| panic!("{e}"));
    let obs = Observation::new(&state, seen.seat(), &history, false);
    let mv = tokensmith::ai::agent(Level::Greedy, u64::from(seen.moves), Options::default())
        .choose(brain, &obs)
        .or_else(|| brain.legal_moves(obs.state()).into_iter().next())
        .unwrap_or_else(|| panic!("no move"));
    let Play::Stack(stack) = mv.play else {
        panic!("a stack move")
    };
    (stack, mv.cell)
}

fn round_trip(catalog: &Arc<Catalog>, save: bool) {
    let content = Content::new(
        Arc::clone(catalog),
        &folders(Path::new("/nonexistent")).all(),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let saves = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let mut config = HostConfig::new(
        "bench",
        "127.0.0.1:0".parse().unwrap_or_else(|e| panic!("{e}")),
    );
    if save {
        config.save_dir = Some(saves.path().to_path_buf());
    }
    let host = Host::start(config, content).unwrap_or_else(|e| panic!("{e}"));
    let scripts = tokensmith::ai::hooks_for(catalog);
    let brain = scripts.brain(catalog);
    let mut times = Vec::new();
    while times.len() < 400 {
        let mut a = Client::connect(host.addr(), "a", None, WAIT).unwrap_or_else(|e| panic!("{e}"));
        a.join(&deck(catalog, "starter"))
            .unwrap_or_else(|e| panic!("{e}"));
        let mut b = Client::connect(host.addr(), "b", None, WAIT).unwrap_or_else(|e| panic!("{e}"));
        b.join(&deck(catalog, "shifters"))
            .unwrap_or_else(|e| panic!("{e}"));
        let mut seen = [view(&mut a), view(&mut b)];
        while !seen[0].over {
            let turn = usize::from(seen[0].turn - 1);
            let (stack, cell) = greedy_move(catalog, &brain, &seen[turn]);
            let clients = [&mut a, &mut b];
            let [a, b] = clients;
            let started = Instant::now();
            if turn == 0 {
                a.play(stack, cell)
            } else {
                b.play(stack, cell)
            }
            .unwrap_or_else(|e| panic!("{e}"));
            seen = [view(a), view(b)];
            times.push(started.elapsed());
        }
    }
    times.sort();
    println!(
        "round trip of a move (intent → both players' views; {}), {} moves: p50 {:.3} ms, p95 {:.3} ms, max {:.3} ms",
        if save {
            "the game saved to disk after each move, as `serve` does"
        } else {
            "no saving"
        },
        times.len(),
        percentile(&times, 50),
        percentile(&times, 95),
        ms(*times.last().unwrap_or(&Duration::ZERO))
    );
}

fn concurrent(catalog: &Arc<Catalog>, n: u32) {
    let content = Content::new(
        Arc::clone(catalog),
        &folders(Path::new("/nonexistent")).all(),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let mut config = HostConfig::new(
        "bench",
        "127.0.0.1:0".parse().unwrap_or_else(|e| panic!("{e}")),
    );
    config.ai = Some(Level::Greedy);
    config.ai_deck = catalog
        .deck(
            catalog
                .deck_named("starter")
                .unwrap_or_else(|e| panic!("{e:?}")),
        )
        .stacks
        .clone();
    config.games = Some(n);
    config.max_tables = usize::try_from(n).unwrap_or(usize::MAX) + 8;
    config.max_connections = usize::try_from(n).unwrap_or(usize::MAX) + 8;
    let before = resident_kib();
    let host = Host::start(config, content).unwrap_or_else(|e| panic!("{e}"));
    let addr = host.addr();
    let started = Instant::now();
    let peak = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let joiners: Vec<_> = (0..n)
        .map(|_| {
            let catalog = Arc::clone(catalog);
            let peak = Arc::clone(&peak);
            std::thread::spawn(move || {
                let scripts = tokensmith::ai::hooks_for(&catalog);
                let brain = scripts.brain(&catalog);
                let mut c =
                    Client::connect(addr, "j", None, WAIT).unwrap_or_else(|e| panic!("{e}"));
                c.join(&deck(&catalog, "shifters"))
                    .unwrap_or_else(|e| panic!("{e}"));
                let mut times = Vec::new();
                let mut seen = view(&mut c);
                while !seen.over {
                    if seen.turn == seen.seat {
                        // A person's pace: every game stays open at once.
                        std::thread::sleep(Duration::from_millis(40));
                        let (stack, cell) = greedy_move(&catalog, &brain, &seen);
                        let t = Instant::now();
                        c.play(stack, cell).unwrap_or_else(|e| panic!("{e}"));
                        // The host's AI answers at once: the view after its reply.
                        seen = view(&mut c);
                        times.push(t.elapsed());
                        peak.fetch_max(resident_kib(), std::sync::atomic::Ordering::Relaxed);
                    } else {
                        seen = view(&mut c);
                    }
                }
                times
            })
        })
        .collect();
    let mut times: Vec<Duration> = joiners
        .into_iter()
        .flat_map(|j| j.join().unwrap_or_else(|_| panic!("a joiner failed")))
        .collect();
    let wall = started.elapsed();
    let mut finished = 0;
    while let Ok(e) = host.events().recv_timeout(Duration::from_millis(200)) {
        if matches!(e, HostEvent::Finished(_)) {
            finished += 1;
        }
    }
    times.sort();
    let peak = peak.load(std::sync::atomic::Ordering::Relaxed);
    println!(
        "{n} concurrent games (greedy host seat, greedy joiners at 40 ms a move): {finished} finished in {:.2} s; move + host AI reply p50 {:.3} ms, p95 {:.3} ms; resident memory +{} KiB, {} KiB per game (host and joiner threads together)",
        wall.as_secs_f64(),
        percentile(&times, 50),
        percentile(&times, 95),
        peak.saturating_sub(before),
        peak.saturating_sub(before) / u64::from(n.max(1))
    );
}

fn pack_sync() {
    let host_mods = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let dir = host_mods.path().join("bulk");
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(dir.join("pack.yaml"), BULK_PACK).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(dir.join("cards.yaml"), bulk_cards(3)).unwrap_or_else(|e| panic!("{e}"));
    let folders = folders(host_mods.path());
    let loaded = tokensmith::script::load(&tokensmith::packs::set::load_options(
        &folders,
        &tokensmith::packs::Selection::All,
    ));
    let catalog = Arc::new(loaded.catalog.unwrap_or_else(|| panic!("bulk loads")));
    let t = Instant::now();
    let content =
        Content::new(Arc::clone(&catalog), &folders.all()).unwrap_or_else(|e| panic!("{e}"));
    let packing = t.elapsed();
    let host = Host::start(
        HostConfig::new(
            "bench",
            "127.0.0.1:0".parse().unwrap_or_else(|e| panic!("{e}")),
        ),
        content,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let mut fetches = Vec::new();
    let mut loads = Vec::new();
    let mut size = 0;
    for _ in 0..15 {
        let profile = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let cache = Cache::new(profile.path());
        let empty = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let t = Instant::now();
        let mut c = Client::connect(host.addr(), "j", None, WAIT).unwrap_or_else(|e| panic!("{e}"));
        let mut p = plan(&c.welcome().packs, &self::folders(empty.path()), &cache);
        c.fetch(&mut p, &cache, |_, total| size = total)
            .unwrap_or_else(|e| panic!("{e}"));
        fetches.push(t.elapsed());
        let t = Instant::now();
        let loaded =
            tokensmith::script::load(&p.load_options().unwrap_or_else(|| panic!("all there")));
        assert!(loaded.catalog.is_some());
        loads.push(t.elapsed());
    }
    fetches.sort();
    loads.sort();
    println!(
        "pack sync of a 1,000-card pack ({size}-byte archive; built once by the host in {:.1} ms): connect + plan + fetch + check + unpack + hash p50 {:.1} ms (p95 {:.1}); loading the game's catalog from it p50 {:.1} ms; together {:.1} ms",
        ms(packing),
        percentile(&fetches, 50),
        percentile(&fetches, 95),
        percentile(&loads, 50),
        percentile(&fetches, 50) + percentile(&loads, 50)
    );
}

fn main() {
    let n: u32 = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(50);
    let catalog = Arc::new(support::load("base"));
    round_trip(&catalog, false);
    round_trip(&catalog, true);
    concurrent(&catalog, n);
    concurrent(&catalog, n * 4);
    pack_sync();
}
