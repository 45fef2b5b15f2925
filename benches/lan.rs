//! LAN play over loopback, in one process:
//! - a move's round trip: from sending the intent until both players have the new view
//!   (two joiners, no AI), p50 and p95 over 400 moves;
//! - concurrent games: N joiners at once against a host whose seat is played by greedy,
//!   each joiner playing greedy at a person's pace (a pause between its moves) so every
//!   game is held at the same time; wall time, moves' p95 under that load, and resident
//!   memory per game;
//! - pack sync of a generated 1,000-card pack: the host's archive, the joiner's fetch,
//!   check, unpack and hash, and loading the game's catalog from it;
//! - a host under siege: an honest game's move round trip (p50, p95) while 1,000 idle
//!   connections, 256 pinging connections and 128 abandoned games are held;
//! - the allocation attack: 32 connections each sending 3 `Join`s of 524,000 stacks (and
//!   3 of 30,000 stacks under the frame cap), the process's peak and settled resident
//!   memory;
//! - AI fairness: 127 games against `hard` played as fast as their joiners can, and one
//!   more game's honest player: the round trip of the honest player's moves (intent →
//!   its view of the move), with the host's AI decisions limited to its default places
//!   to think and, in the same run, unlimited (every decision searching at once, as
//!   before the limit); resident memory and threads of the process.
//!
//! - memory per attacking connection: the host's resident memory growth per connection for
//!   64 slow readers fetching a 3 MiB pack at about 16 KiB/s, 256 idle connections (after
//!   `Hello`) and 64 seated connections flooding intents;
//! - the AI's memory per decision: one `hard` decision told to think for 10 s, with the
//!   trees' memory cap and, in the same run, without it (as before the cap).
//!
//! The siege needs about 4,500 file descriptors: the soft limit is raised to the hard
//! one, and the counts shrink (and say so) when it is lower.
//!
//! Run with `cargo bench --bench lan` (`-- N` for another count of concurrent games,
//! `-- fairness` for the AI fairness runs alone, `-- fairness-memory` for 127 games with
//! every decision searching at once, with and without the trees' memory cap, `-- memory`
//! for the two memory cases alone).

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use support::{BULK_PACK, bulk_cards};
use tokensmith::ai::{Level, Options};
use tokensmith::net::client::{Client, Update};
use tokensmith::net::sync::{Cache, plan};
use tokensmith::net::{Content, Host, HostConfig, HostEvent};
use tokensmith::observe::{History, Observation};
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

/// A number field of this process's `/proc/self/status` (`VmRSS:` in KiB, `Threads:`).
fn status_field(name: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(name))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|n| n.parse().ok())
        })
        .unwrap_or(0)
}

fn resident_kib() -> u64 {
    status_field("VmRSS:")
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
    let obs = Observation::new(&state, seen.seat(), &History::from_plays(history), false);
    let mv = tokensmith::ai::agent(Level::Greedy, u64::from(seen.moves), Options::default())
        .choose(brain, &obs)
        .or_else(|| brain.engine().legal_moves(obs.state()).into_iter().next())
        .unwrap_or_else(|| {
            panic!(
                "no move: seat {:?} turn {} moves {} over {}",
                seen.seat(),
                seen.turn,
                seen.moves,
                seen.over
            )
        });
    let Play::Stack(stack) = mv.play else {
        panic!("a stack move")
    };
    (stack, mv.cell)
}

fn round_trip(catalog: &Arc<Catalog>, save: bool) {
    let content = bench_content(catalog);
    let saves = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let mut config = bench_config();
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
            // The two joins race: whichever the host seated first is seat 1.
            let mover = usize::from(seen[0].seat().number() != seen[0].turn);
            let (stack, cell) = greedy_move(catalog, &brain, &seen[mover]);
            let clients = [&mut a, &mut b];
            let [a, b] = clients;
            let started = Instant::now();
            if mover == 0 {
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
    let content = bench_content(catalog);
    let mut config = bench_config();
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
    // Every joiner here comes from 127.0.0.1: one address may use every slot.
    config.max_tables_per_address = config.max_tables;
    config.max_connections_per_address = config.max_connections;
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
                let mut times: Vec<Duration> = Vec::new();
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
    let mut refused = 0;
    let mut times: Vec<Duration> = Vec::new();
    for j in joiners {
        match j.join() {
            Ok(t) => times.extend(t),
            Err(_) => refused += 1,
        }
    }
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
        "{n} concurrent games (greedy host seat, greedy joiners at 40 ms a move; game limit {n} + 8): {finished} finished, {refused} refused or failed, in {:.2} s; move + host AI reply p50 {:.3} ms, p95 {:.3} ms; resident memory +{} KiB, {} KiB per game (host and joiner threads together)",
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
    let host = Host::start(bench_config(), content).unwrap_or_else(|e| panic!("{e}"));
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

/// Raise the soft limit on open files to the hard one; the soft limit after.
fn open_files() -> u64 {
    // SAFETY: getrlimit/setrlimit with a valid, owned struct.
    unsafe {
        let mut lim = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        if libc::getrlimit(libc::RLIMIT_NOFILE, &raw mut lim) != 0 {
            return 1_024;
        }
        lim.rlim_cur = lim.rlim_max;
        let _ = libc::setrlimit(libc::RLIMIT_NOFILE, &raw const lim);
        if libc::getrlimit(libc::RLIMIT_NOFILE, &raw mut lim) != 0 {
            return 1_024;
        }
        lim.rlim_cur
    }
}

fn raw_hello(stream: &mut std::net::TcpStream) -> bool {
    use tokensmith::net::protocol::{MAGIC, PROTOCOL, ToClient, ToHost};
    let hello = ToHost::Hello {
        magic: MAGIC.into(),
        protocol: PROTOCOL,
        name: "siege".into(),
        resume: None,
    };
    tokensmith::net::frame::write(stream, &hello).is_ok()
        && matches!(
            tokensmith::net::frame::read::<ToClient>(stream, Some(WAIT)),
            Ok(ToClient::Welcome { .. })
        )
}

/// An honest game's round trip while the host holds idle and pinging connections and
/// abandoned games.
fn siege(catalog: &Arc<Catalog>) {
    use std::net::TcpStream;
    use tokensmith::net::protocol::{ToClient, ToHost};
    let files = open_files();
    // Each held connection costs 4 descriptors on the host's side and 1 here.
    let scale = |n: usize| {
        let room = usize::try_from(files.saturating_sub(256) / 5).unwrap_or(usize::MAX);
        n.min(room * n / 1_384)
    };
    let (idle_n, ping_n, abandoned_n) = (scale(1_000), scale(256), scale(128));
    let content = bench_content(catalog);
    let mut config = bench_config();
    config.ai = Some(Level::Greedy);
    // Everything comes from 127.0.0.1 and is held for the whole measure: the limits are
    // raised so that the host carries all of it.
    hold_everything(&mut config, idle_n + ping_n + abandoned_n, abandoned_n);
    let host = Host::start(config, content).unwrap_or_else(|e| panic!("{e}"));
    let addr = host.addr();
    let started = Instant::now();
    let idle: Vec<TcpStream> = (0..idle_n)
        .filter_map(|_| TcpStream::connect(addr).ok())
        .collect();
    let mut pinging: Vec<TcpStream> = (0..ping_n)
        .filter_map(|_| {
            let mut s = TcpStream::connect(addr).ok()?;
            raw_hello(&mut s).then_some(s)
        })
        .collect();
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let held_pings = pinging.len();
    let pinger = {
        let stop = Arc::clone(&stop);
        std::thread::spawn(move || {
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                for s in &mut pinging {
                    let _ = tokensmith::net::frame::write(s, &ToHost::Ping);
                }
                std::thread::sleep(Duration::from_secs(1));
            }
        })
    };
    let mut abandoned = 0;
    for _ in 0..abandoned_n {
        let Ok(mut s) = TcpStream::connect(addr) else {
            continue;
        };
        if !raw_hello(&mut s) {
            continue;
        }
        let join = ToHost::Join {
            deck: deck(catalog, "shifters"),
            seat: None,
        };
        if tokensmith::net::frame::write(&mut s, &join).is_err() {
            continue;
        }
        loop {
            match tokensmith::net::frame::read::<ToClient>(&mut s, Some(WAIT)) {
                Ok(ToClient::State { .. }) => {
                    abandoned += 1;
                    break;
                }
                Ok(_) => {}
                Err(_) => break,
            }
        }
    }
    let setup = started.elapsed();
    std::thread::sleep(Duration::from_millis(300));
    let held = host.connections();
    let tables = host.tables();
    let scripts = tokensmith::ai::hooks_for(catalog);
    let brain = scripts.brain(catalog);
    let mut times = Vec::new();
    while times.len() < 200 {
        let mut c = Client::connect(addr, "honest", None, WAIT).unwrap_or_else(|e| panic!("{e}"));
        c.join(&deck(catalog, "shifters"))
            .unwrap_or_else(|e| panic!("{e}"));
        let mut seen = view(&mut c);
        while !seen.over {
            if seen.turn == seen.seat {
                let (stack, cell) = greedy_move(catalog, &brain, &seen);
                let t = Instant::now();
                c.play(stack, cell).unwrap_or_else(|e| panic!("{e}"));
                seen = view(&mut c);
                times.push(t.elapsed());
            } else {
                seen = view(&mut c);
            }
        }
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let _ = pinger.join();
    times.sort();
    println!(
        "under siege ({} idle connections, {held_pings} pinging, {abandoned} abandoned games; host holds {held} connections and {tables} games; set up in {:.1} s; open-file limit {files}): honest move + host AI reply, {} moves: p50 {:.3} ms, p95 {:.3} ms, max {:.3} ms",
        idle.len(),
        setup.as_secs_f64(),
        times.len(),
        percentile(&times, 50),
        percentile(&times, 95),
        ms(*times.last().unwrap_or(&Duration::ZERO))
    );
    drop(idle);
}

/// A `Join` frame of `stacks` one-key stacks (keys of 0 bytes), encoded by hand.
fn huge_join(stacks: u32) -> Vec<u8> {
    let mut body = vec![2u8];
    let mut n = stacks;
    loop {
        let byte = u8::try_from(n & 0x7f).unwrap_or(0);
        n >>= 7;
        if n == 0 {
            body.push(byte);
            break;
        }
        body.push(byte | 0x80);
    }
    for _ in 0..stacks {
        body.extend_from_slice(&[1, 0]);
    }
    body.push(0);
    let mut frame = u32::try_from(body.len())
        .unwrap_or(0)
        .to_be_bytes()
        .to_vec();
    frame.extend_from_slice(&body);
    frame
}

/// The allocation attack: the process's resident memory at its peak and after.
fn allocation(catalog: &Arc<Catalog>) {
    use std::io::Write as _;
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    let content = bench_content(catalog);
    let mut config = bench_config();
    config.ai = Some(Level::Greedy);
    let host = Host::start(config, content).unwrap_or_else(|e| panic!("{e}"));
    let addr = host.addr();
    let big = Arc::new(huge_join(524_000));
    let under = Arc::new(huge_join(30_000));
    std::thread::sleep(Duration::from_millis(200));
    let before = resident_kib();
    let peak = Arc::new(AtomicU64::new(before));
    let done = Arc::new(AtomicBool::new(false));
    let sampler = {
        let (peak, done) = (Arc::clone(&peak), Arc::clone(&done));
        std::thread::spawn(move || {
            while !done.load(Ordering::Relaxed) {
                peak.fetch_max(resident_kib(), Ordering::Relaxed);
                std::thread::sleep(Duration::from_millis(2));
            }
        })
    };
    let t = Instant::now();
    let attackers: Vec<_> = (0..32)
        .map(|i| {
            let frame = if i % 2 == 0 {
                Arc::clone(&big)
            } else {
                Arc::clone(&under)
            };
            std::thread::spawn(move || {
                for _ in 0..3 {
                    let Ok(mut s) = std::net::TcpStream::connect(addr) else {
                        continue;
                    };
                    if !raw_hello(&mut s) {
                        continue;
                    }
                    let _ = s.write_all(&frame);
                    let _ = tokensmith::net::frame::read_body(
                        &mut s,
                        Some(Duration::from_secs(5)),
                        Duration::from_secs(5),
                    );
                }
            })
        })
        .collect();
    for a in attackers {
        let _ = a.join();
    }
    let took = t.elapsed();
    std::thread::sleep(Duration::from_millis(500));
    let after = resident_kib();
    done.store(true, Ordering::Relaxed);
    let _ = sampler.join();
    println!(
        "allocation attack (32 connections × 3 Joins: 524,000-stack 1 MiB frames and 30,000-stack 60 KiB frames) in {:.2} s: process resident memory {} KiB before, peak {} KiB, {} KiB after",
        took.as_secs_f64(),
        before,
        peak.load(Ordering::Relaxed),
        after
    );
    drop(host);
}

/// Threads of this process.
fn threads() -> u64 {
    status_field("Threads:")
}

/// The next view showing at least `moves` moves (or the game over).
fn view_after(client: &mut Client, moves: u32) -> tokensmith::net::Seen {
    loop {
        let seen = view(client);
        if seen.moves >= moves || seen.over {
            return seen;
        }
    }
}

fn fairness(catalog: &Arc<Catalog>, workers: Option<usize>, ai_memory: usize) {
    const ATTACKS: usize = 127;
    let content = bench_content(catalog);
    let mut config = bench_config();
    config.ai = Some(Level::Hard);
    config.ai_options = Options {
        budget: tokensmith::ai::Budget::Time(Duration::from_millis(50)),
        ..Options::default()
    };
    config.ai_deck = catalog
        .deck(
            catalog
                .deck_named("starter")
                .unwrap_or_else(|e| panic!("{e:?}")),
        )
        .stacks
        .clone();
    config.max_tables = ATTACKS + 8;
    config.max_connections = ATTACKS + 8;
    config.max_tables_per_address = config.max_tables;
    config.max_connections_per_address = config.max_connections;
    let places = workers.unwrap_or(config.ai_workers);
    config.ai_workers = places;
    config.ai_memory = ai_memory;
    let before = resident_kib();
    let host = Host::start(config, content).unwrap_or_else(|e| panic!("{e}"));
    let addr = host.addr();
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let peak = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let peak_threads = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let attackers: Vec<_> = (0..ATTACKS)
        .map(|_| {
            let (catalog, stop) = (Arc::clone(catalog), Arc::clone(&stop));
            std::thread::spawn(move || {
                let scripts = tokensmith::ai::hooks_for(&catalog);
                let brain = scripts.brain(&catalog);
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    let Ok(mut c) = Client::connect(addr, "a", None, WAIT) else {
                        return;
                    };
                    if c.join(&deck(&catalog, "shifters")).is_err() {
                        return;
                    }
                    let mut seen = view(&mut c);
                    while !seen.over && !stop.load(std::sync::atomic::Ordering::Relaxed) {
                        if seen.turn == seen.seat {
                            let (stack, cell) = greedy_move(&catalog, &brain, &seen);
                            if c.play(stack, cell).is_err() {
                                return;
                            }
                        }
                        match c.next(Duration::from_millis(200)) {
                            Ok(Some(Update::State { seen: s, .. })) => seen = *s,
                            Ok(_) => {}
                            Err(_) => return,
                        }
                    }
                }
            })
        })
        .collect();
    // Let every attacking game open and start thinking.
    std::thread::sleep(Duration::from_secs(3));
    let scripts = tokensmith::ai::hooks_for(catalog);
    let brain = scripts.brain(catalog);
    let mut times = Vec::new();
    let started = Instant::now();
    while times.len() < 40 && started.elapsed() < Duration::from_secs(240) {
        let mut c = Client::connect(addr, "honest", None, WAIT).unwrap_or_else(|e| panic!("{e}"));
        c.join(&deck(catalog, "starter"))
            .unwrap_or_else(|e| panic!("{e}"));
        let mut seen = view(&mut c);
        while !seen.over && times.len() < 40 && started.elapsed() < Duration::from_secs(240) {
            if seen.turn == seen.seat {
                let (stack, cell) = greedy_move(catalog, &brain, &seen);
                let t = Instant::now();
                c.play(stack, cell).unwrap_or_else(|e| panic!("{e}"));
                seen = view_after(&mut c, seen.moves + 1);
                times.push(t.elapsed());
                peak.fetch_max(resident_kib(), std::sync::atomic::Ordering::Relaxed);
                peak_threads.fetch_max(threads(), std::sync::atomic::Ordering::Relaxed);
            } else {
                seen = view(&mut c);
            }
        }
    }
    let spent = started.elapsed();
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    drop(host);
    for a in attackers {
        let _ = a.join();
    }
    times.sort();
    let places_said = if workers.is_some() {
        "every AI decision searching at once (no limit)".to_string()
    } else {
        format!("at most {places} AI decision(s) thinking at once (the default here)")
    };
    let trees_said = if ai_memory == usize::MAX {
        "search trees without a memory cap".to_string()
    } else {
        format!("search trees capped at {} MiB a decision", ai_memory >> 20)
    };
    println!(
        "AI fairness, {ATTACKS} games against hard (50 ms a move) played flat out and one honest player, {}, {}: honest move round trip over {} moves p50 {:.3} ms, p95 {:.3} ms, max {:.3} ms ({:.0} s for them, the host AI's replies included); resident memory +{} KiB, at most {} threads",
        places_said,
        trees_said,
        times.len(),
        percentile(&times, 50),
        percentile(&times, 95),
        ms(*times.last().unwrap_or(&Duration::ZERO)),
        spent.as_secs_f64(),
        peak.load(std::sync::atomic::Ordering::Relaxed)
            .saturating_sub(before),
        peak_threads.load(std::sync::atomic::Ordering::Relaxed),
    );
}

/// The highest resident memory (KiB) seen while `work` runs, sampled every 5 ms.
fn peak_during<T>(work: impl FnOnce() -> T) -> (T, u64) {
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let peak = Arc::new(std::sync::atomic::AtomicU64::new(resident_kib()));
    let sampler = {
        let (stop, peak) = (Arc::clone(&stop), Arc::clone(&peak));
        std::thread::spawn(move || {
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                peak.fetch_max(resident_kib(), std::sync::atomic::Ordering::Relaxed);
                std::thread::sleep(Duration::from_millis(5));
            }
        })
    };
    let out = work();
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let _ = sampler.join();
    (out, peak.load(std::sync::atomic::Ordering::Relaxed))
}

/// Resident memory per attacking connection: slow pack readers, idle connections, intent
/// floods, each measured from the host's settled memory before it.
fn per_connection(catalog: &Arc<Catalog>) {
    use std::io::Read as _;
    use std::net::TcpStream;
    use tokensmith::net::protocol::{ToClient, ToHost};
    const READERS: usize = 64;
    const IDLE: usize = 256;
    const FLOODERS: usize = 64;
    let mut content = bench_content(catalog);
    content.set_archive("bulk", vec![7u8; 3 << 20]);
    let mut config = bench_config();
    config.ai = Some(Level::Greedy);
    hold_everything(&mut config, READERS + IDLE + FLOODERS, FLOODERS);
    let host = Host::start(config, content).unwrap_or_else(|e| panic!("{e}"));
    let addr = host.addr();
    std::thread::sleep(Duration::from_millis(300));

    // Slow readers: each asks for the 3 MiB pack and reads 4 KiB every 250 ms (16 KiB/s)
    // for 12 s, through a small receive buffer.
    let before = resident_kib();
    let (read, peak) = peak_during(|| {
        let readers: Vec<_> = (0..READERS)
            .map(|_| {
                std::thread::spawn(move || -> usize {
                    let Ok(mut s) = TcpStream::connect(addr) else {
                        return 0;
                    };
                    let _ = socket2_small_buffer(&s);
                    if !raw_hello(&mut s)
                        || tokensmith::net::frame::write(
                            &mut s,
                            &ToHost::WantPacks(vec!["bulk".into()]),
                        )
                        .is_err()
                    {
                        return 0;
                    }
                    let _ = s.set_read_timeout(Some(Duration::from_millis(300)));
                    let (mut got, mut buf, until) =
                        (0, [0u8; 4096], Instant::now() + Duration::from_secs(12));
                    while Instant::now() < until {
                        match s.read(&mut buf) {
                            Ok(0) => break,
                            Ok(n) => got += n,
                            Err(e)
                                if matches!(
                                    e.kind(),
                                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                                ) => {}
                            Err(_) => break,
                        }
                        std::thread::sleep(Duration::from_millis(250));
                    }
                    got
                })
            })
            .collect();
        readers
            .into_iter()
            .map(|r| r.join().unwrap_or(0))
            .sum::<usize>()
    });
    let readers_growth = peak.saturating_sub(before);
    std::thread::sleep(Duration::from_secs(1));

    // Idle connections: Hello, then nothing, held for 3 s.
    let before = resident_kib();
    let (held, peak) = peak_during(|| {
        let idle: Vec<TcpStream> = (0..IDLE)
            .filter_map(|_| {
                let mut s = TcpStream::connect(addr).ok()?;
                raw_hello(&mut s).then_some(s)
            })
            .collect();
        std::thread::sleep(Duration::from_secs(3));
        idle.len()
    });
    let idle_growth = peak.saturating_sub(before);
    std::thread::sleep(Duration::from_secs(1));

    // Intent floods: each sits down, then sends 10,000 intents without waiting.
    let before = resident_kib();
    let ((seated, cut), peak) = peak_during(|| {
        let flooders: Vec<_> = (0..FLOODERS)
            .map(|_| {
                let keys = deck(catalog, "shifters");
                std::thread::spawn(move || -> (bool, bool) {
                    let Ok(mut s) = TcpStream::connect(addr) else {
                        return (false, false);
                    };
                    if !raw_hello(&mut s)
                        || tokensmith::net::frame::write(
                            &mut s,
                            &ToHost::Join {
                                deck: keys,
                                seat: None,
                            },
                        )
                        .is_err()
                    {
                        return (false, false);
                    }
                    let seat = loop {
                        match tokensmith::net::frame::read::<ToClient>(&mut s, Some(WAIT)) {
                            Ok(ToClient::State { seen, .. }) => break seen.seat,
                            Ok(_) => {}
                            Err(_) => return (false, false),
                        }
                    };
                    let mut cut = false;
                    for seq in 1..=10_000u32 {
                        let intent = ToHost::Intent {
                            seq,
                            seat,
                            stack: 0,
                            x: 0,
                            y: 0,
                        };
                        if tokensmith::net::frame::write(&mut s, &intent).is_err() {
                            cut = true;
                            break;
                        }
                    }
                    // Read until the host closes (a Bye) or a second passes.
                    let until = Instant::now() + Duration::from_secs(2);
                    while !cut && Instant::now() < until {
                        match tokensmith::net::frame::read::<ToClient>(
                            &mut s,
                            Some(Duration::from_millis(500)),
                        ) {
                            Ok(ToClient::Bye { .. }) | Err(_) => cut = true,
                            Ok(_) => {}
                        }
                    }
                    (true, cut)
                })
            })
            .collect();
        flooders
            .into_iter()
            .map(|f| f.join().unwrap_or((false, false)))
            .fold((0, 0), |(a, b), (s, c)| {
                (a + usize::from(s), b + usize::from(c))
            })
    });
    let flood_growth = peak.saturating_sub(before);
    drop(host);
    let per = |kib: u64, n: usize| kib / u64::try_from(n.max(1)).unwrap_or(1);
    println!(
        "memory per attacking connection (resident growth at peak over the host's settled memory, this process's client threads included): {READERS} slow readers of a 3 MiB pack at 16 KiB/s for 12 s ({read} bytes read in all) +{readers_growth} KiB, {} KiB each; {held} idle connections +{idle_growth} KiB, {} KiB each; {FLOODERS} intent floods of 10,000 ({seated} seated, {cut} cut) +{flood_growth} KiB, {} KiB each",
        per(readers_growth, READERS),
        per(idle_growth, held),
        per(flood_growth, FLOODERS),
    );
}

/// A reader's small receive buffer, so a slow reader holds the host's writes back.
fn socket2_small_buffer(s: &std::net::TcpStream) -> bool {
    use std::os::fd::AsRawFd as _;
    let size: libc::c_int = 16 << 10;
    // SAFETY: setsockopt on an open socket with a valid, owned int.
    unsafe {
        libc::setsockopt(
            s.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_RCVBUF,
            (&raw const size).cast(),
            libc::socklen_t::try_from(size_of::<libc::c_int>()).unwrap_or(4),
        ) == 0
    }
}

/// One `hard` decision told to think for 10 s: its time and the process's resident
/// growth, with the trees' memory cap and without it.
fn ai_memory(catalog: &Arc<Catalog>) {
    use tokensmith::ai::{Agent as _, Budget, DECISION_MEMORY, HardAgent, ScriptLimits};
    let scripts = tokensmith::ai::hooks_for(catalog);
    let brain = scripts.brain(catalog);
    let stacks = catalog
        .deck(
            catalog
                .deck_named("starter")
                .unwrap_or_else(|e| panic!("{e:?}")),
        )
        .stacks
        .clone();
    let state = brain
        .engine()
        .new_game([&stacks, &stacks], 9, &mut Vec::new())
        .unwrap_or_else(|e| panic!("{e}"));
    let obs = Observation::new(&state, state.turn(), &History::new(), false);
    let mut line = Vec::new();
    for (label, memory) in [
        ("capped at 32 MiB", DECISION_MEMORY),
        ("without a cap", usize::MAX),
    ] {
        let mut agent = HardAgent {
            rng: rand_pcg::Pcg32::new(7, 7),
            budget: Budget::Time(Duration::from_secs(10)),
            exploration: 0.15,
            scripts: ScriptLimits::DEFAULT,
            memory,
        };
        let before = resident_kib();
        let t = Instant::now();
        let (chosen, peak) = peak_during(|| agent.choose(&brain, &obs));
        assert!(chosen.is_some());
        line.push(format!(
            "{label}: {:.2} s, +{} KiB",
            t.elapsed().as_secs_f64(),
            peak.saturating_sub(before)
        ));
    }
    println!(
        "one hard decision told to think 10 s (two trees): {}",
        line.join("; ")
    );
}

fn main() {
    let n: u32 = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(50);
    let catalog = Arc::new(support::load("base"));
    if std::env::args().any(|a| a == "memory") {
        ai_memory(&catalog);
        per_connection(&catalog);
        return;
    }
    let capped = tokensmith::ai::DECISION_MEMORY;
    if std::env::args().any(|a| a == "fairness-memory") {
        fairness(&catalog, Some(100_000), capped);
        fairness(&catalog, Some(100_000), usize::MAX);
        return;
    }
    if std::env::args().any(|a| a == "fairness") {
        fairness(&catalog, None, capped);
        fairness(&catalog, Some(100_000), capped);
        return;
    }
    round_trip(&catalog, false);
    round_trip(&catalog, true);
    concurrent(&catalog, n);
    concurrent(&catalog, n * 4);
    allocation(&catalog);
    siege(&catalog);
    pack_sync();
    ai_memory(&catalog);
    per_connection(&catalog);
    fairness(&catalog, None, capped);
    fairness(&catalog, Some(100_000), capped);
}

/// The content every bench host serves: the catalog, no pack files.
fn bench_content(catalog: &Arc<Catalog>) -> Content {
    Content::new(
        Arc::clone(catalog),
        &folders(Path::new("/nonexistent")).all(),
    )
    .unwrap_or_else(|e| panic!("{e}"))
}

/// A bench host's configuration on a free loopback port, the limits as shipped.
fn bench_config() -> HostConfig {
    HostConfig::new(
        "bench",
        "127.0.0.1:0".parse().unwrap_or_else(|e| panic!("{e}")),
    )
}

/// Raise `config`'s limits so the host carries `connections` connections and `tables`
/// games from one address (everything here comes from 127.0.0.1), with room to spare,
/// and gives each connection ten minutes to say who it is.
fn hold_everything(config: &mut HostConfig, connections: usize, tables: usize) {
    config.max_connections = connections + 16;
    config.max_connections_per_address = config.max_connections;
    config.max_tables = tables + 8;
    config.max_tables_per_address = config.max_tables;
    config.handshake = Duration::from_secs(600);
}
