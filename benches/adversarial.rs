//! The adversarial suite (`tests/adversarial/scenarios`) against the clock and memory: the
//! worst time of an attack (each scenario end to end: packs loaded, the attacking move
//! played and refused), peak memory over the whole suite against the process at rest, and
//! the move's clock limit (`rules.limits.wall_ms`) against how long the concatenation
//! attack, which only the clock stops, really runs under several settings.
//!
//! Run with `cargo bench --bench adversarial` (release). Prints a table; no assertion.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use tokensmith::scenario::{self, Outcome, PackPaths};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `VmRSS` or `VmHWM` of this process, in MB (Linux).
fn memory(field: &str) -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with(field))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|kb| kb.parse::<f64>().ok())
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

fn run(file: &Path, paths: &PackPaths) -> (Duration, bool) {
    let started = Instant::now();
    let ok = matches!(
        scenario::run_file(file, paths).map(|r| r.outcome),
        Ok(Outcome::Pass)
    );
    (started.elapsed(), ok)
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    // The hooks run on this thread: give it the stack every hook thread has.
    let worker = std::thread::Builder::new()
        .stack_size(tokensmith::script::THREAD_STACK)
        .spawn(bench);
    if let Ok(handle) = worker {
        let _ = handle.join();
    }
}

fn bench() {
    let idle = memory("VmRSS:");
    let paths = PackPaths {
        content: root().join("content"),
        mods: root().join("mods"),
    };
    let dir = root().join("tests/adversarial/scenarios");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|d| d.filter_map(Result::ok).map(|e| e.path()).collect())
        .unwrap_or_default();
    files.sort();
    println!("attack (median of 3, packs loaded and the move refused)   time");
    let mut worst = (Duration::ZERO, String::new());
    let mut failed = 0;
    for file in &files {
        let runs: Vec<(Duration, bool)> = (0..3).map(|_| run(file, &paths)).collect();
        failed += runs.iter().filter(|r| !r.1).count();
        let max = runs.iter().map(|r| r.0).max().unwrap_or_default();
        let name = file
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        if max > worst.0 {
            worst = (max, name.clone());
        }
        let med = median(runs.iter().map(|r| r.0).collect());
        println!("  {name:<48} {:>9.1} ms", med.as_secs_f64() * 1e3);
    }
    println!(
        "worst single run: {:.1} ms ({}); scenarios not passing: {failed}",
        worst.0.as_secs_f64() * 1e3,
        worst.1
    );
    println!(
        "memory: at rest {idle:.1} MB, peak {:.1} MB, peak above rest {:.1} MB",
        memory("VmHWM:"),
        memory("VmHWM:") - idle
    );

    // The clock limit against the attack only it stops.
    let attack = dir.join("concat_operator_loop.yaml");
    let text = std::fs::read_to_string(&attack).unwrap_or_default();
    let tmp = tempfile::tempdir().ok();
    println!("rules.limits.wall_ms   concat loop refused after (median of 3)   ratio");
    for ms in [50u32, 200, 1000, 3000] {
        let Some(tmp) = &tmp else { break };
        let patched = text
            .replace(
                "rules: { opening_token: null }",
                &format!(
                    "rules: {{ opening_token: null, limits: {{ wall_ms: {ms}, instructions: 200000000 }} }}"
                ),
            )
            .replace("pack_dirs: [../packs]", &format!(
                "pack_dirs: [{}]",
                root().join("tests/adversarial/packs").display()
            ));
        let file = tmp.path().join(format!("wall_{ms}.yaml"));
        if std::fs::write(&file, patched).is_err() {
            break;
        }
        let times: Vec<Duration> = (0..3).map(|_| run(&file, &paths).0).collect();
        let med = median(times);
        println!(
            "  {ms:>6}               {:>9.1} ms                                {:.2}×",
            med.as_secs_f64() * 1e3,
            med.as_secs_f64() * 1e3 / f64::from(ms)
        );
    }
}
