//! The adversarial suite (`tests/adversarial/scenarios`) against the clock and memory: the
//! worst time of an attack (each scenario end to end: packs loaded, the attacking move
//! played and refused), peak memory over the whole suite against the process at rest, and
//! the move's clock limit (`rules.limits.wall_ms`) against how long the attacks only the
//! clock stops (`..`, `<` and `==` of long strings) really run under several settings.
//!
//! Run with `cargo bench --bench adversarial` (release). Prints a table; no assertion.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use tokensmith::scenario::{self, PackPaths, ScenarioOutcome};

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
        Ok(ScenarioOutcome::Pass)
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

    // The clock limit against the attacks only it stops: work hidden in single
    // instructions (`..` and `<` of long strings), between two charge points.
    let tmp = tempfile::tempdir().ok();
    println!("rules.limits.wall_ms   attack                  refused after (median of 3)   ratio");
    for attack in [
        "concat_operator_loop",
        "less_long_strings",
        "equal_long_strings",
    ] {
        let text = std::fs::read_to_string(dir.join(format!("{attack}.yaml"))).unwrap_or_default();
        for ms in [50u32, 200, 1000, 3000] {
            let Some(tmp) = &tmp else { break };
            let patched = text
                .replace(
                    "rules: { opening_token: null }",
                    &format!(
                        "rules: {{ opening_token: null, limits: {{ wall_ms: {ms}, instructions: 200000000 }} }}"
                    ),
                )
                .replace(
                    "pack_dirs: [../packs]",
                    &format!(
                        "pack_dirs: [{}]",
                        root().join("tests/adversarial/packs").display()
                    ),
                );
            let file = tmp.path().join(format!("{attack}_{ms}.yaml"));
            if std::fs::write(&file, patched).is_err() {
                break;
            }
            let times: Vec<Duration> = (0..3).map(|_| run(&file, &paths).0).collect();
            let med = median(times);
            println!(
                "  {ms:>6}               {attack:<22}  {:>9.1} ms                  {:.2}×",
                med.as_secs_f64() * 1e3,
                med.as_secs_f64() * 1e3 / f64::from(ms)
            );
        }
    }
    loads();
}

/// A pack `t` requiring base with these scripts (each an ability and a card) and this
/// `scripts:` line in its manifest.
fn load_pack(dir: &Path, limits: &str, scripts: &[(String, String)]) -> Duration {
    let pack = dir.join("t");
    let _ = std::fs::remove_dir_all(&pack);
    let _ = std::fs::create_dir_all(pack.join("scripts"));
    let _ = std::fs::write(
        pack.join("pack.yaml"),
        format!(
            "id: t\nname: t\nversion: 1.0.0\nrequires:\n  - {{ id: base, version: \"^1\" }}\n{limits}\n"
        ),
    );
    let mut content = String::from("abilities:\n");
    for (name, _) in scripts {
        content.push_str(&format!("  - id: {name}\n    script: scripts/{name}.lua\n"));
    }
    content.push_str("cards:\n");
    for (name, lua) in scripts {
        content.push_str(&format!(
            "  - id: {name}\n    value: 1\n    ability: {name}\n    area: cross\n"
        ));
        let _ = std::fs::write(pack.join(format!("scripts/{name}.lua")), lua);
    }
    let _ = std::fs::write(pack.join("content.yaml"), content);
    let started = Instant::now();
    let _ = tokensmith::script::load(&tokensmith::content::LoadOptions::standard(
        &root().join("content"),
        dir,
    ));
    started.elapsed()
}

/// A load case: its name, the pack's `scripts:` line and its scripts.
type Case<'a> = (&'a str, &'a str, Vec<(String, String)>);

/// The worst loads of one pack at every cap: parsing (an `elseif` chain, labels, names
/// looked up through deep nesting), top levels only the clock stops, the most
/// instructions, freezing the largest and the most colliding tables.
fn loads() {
    let Ok(tmp) = tempfile::tempdir() else { return };
    let megabyte = |unit: &dyn Fn(usize) -> String| {
        let mut s = String::from("local x = 0\n");
        let mut i = 0;
        while s.len() < 1_000_000 {
            s.push_str(&unit(i));
            i += 1;
        }
        s
    };
    let chain = {
        let mut s = megabyte(&|i| format!("elseif x == {i} then x = 1\n"));
        s = s.replacen("local x = 0\n", "local x = 0\nif x == -1 then x = 1\n", 1);
        s.push_str("end\nreturn { on_place = function(ctx) end }\n");
        s
    };
    let labels = {
        let mut s = megabyte(&|i| format!("::l{i}:: goto l{i}\n"));
        s.push_str("return { on_place = function(ctx) end }\n");
        s
    };
    let nested = {
        let mut s = String::new();
        for d in 0..60 {
            s.push_str("local function f() ");
            let locals: Vec<String> = (0..150).map(|i| format!("v{d}_{i}")).collect();
            s.push_str(&format!("local {} ", locals.join(",")));
        }
        while s.len() < 1_000_000 {
            s.push_str("g = g\n");
        }
        for _ in 0..60 {
            s.push_str(" end");
        }
        s.push_str("\nreturn { on_place = function(ctx) end }\n");
        s
    };
    let slow =
        "local s = string.rep('x', 2000000)\nwhile true do local t = s .. 'y' end\nreturn {}\n";
    let spin = "while true do end\nreturn {}\n";
    let big = "local t = {}\nfor i = 1, 2000000 do t[i] = i end\nreturn { on_place = function(ctx) local _ = t[1] end }\n";
    let collide = "local t = {}\nfor i = 1, 20000 do t[i * 65536] = i end\nreturn { on_place = function(ctx) local _ = t[1] end }\n";
    let four = |lua: &str| -> Vec<(String, String)> {
        (0..4).map(|i| (format!("s{i}"), lua.to_string())).collect()
    };
    let big_limits = "scripts: { instructions: 50000000, memory_kb: 65536 }";
    let cases: Vec<Case<'_>> = vec![
        ("4 files of 1 MB elseif chains", "", four(&chain)),
        ("4 files of 1 MB labels and gotos", "", four(&labels)),
        (
            "4 files of 1 MB names under 60 nested functions",
            "",
            four(&nested),
        ),
        ("4 top levels only the clock stops", "", four(slow)),
        (
            "4 endless top levels, 50M instructions each",
            big_limits,
            four(spin),
        ),
        (
            "a 2M-entry table to freeze",
            big_limits,
            vec![("big".into(), big.into())],
        ),
        (
            "20,000 keys in one hash chain",
            big_limits,
            vec![("chain".into(), collide.into())],
        ),
    ];
    println!("worst load of one pack at every cap                      load time");
    let mut worst = Duration::ZERO;
    for (name, limits, scripts) in &cases {
        let took = load_pack(tmp.path(), limits, scripts);
        worst = worst.max(took);
        println!("  {name:<54} {:>9.1} ms", took.as_secs_f64() * 1e3);
    }
    println!("worst: {:.1} ms", worst.as_secs_f64() * 1e3);
}
