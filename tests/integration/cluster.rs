//! Runs on a cluster: `simulate plan` writes job files whose shards, run as an array job,
//! merge into the one-machine report; a real single-node Slurm (munge, slurmctld, slurmd,
//! started here in a temporary folder and stopped again) runs the plan's array job and its
//! dependent merge; the Kubernetes manifests pass Kubernetes' published schema.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::support::tokensmith;

fn run(args: &[&str]) -> Output {
    tokensmith(args).output().expect("run tokensmith")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "{}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    text(&out.stdout)
}

/// The run every test here plans: base content, two decks, a few games.
const RUN: [&str; 8] = [
    "--deck-a", "starter", "--deck-b", "siege", "--games", "10", "--seed", "7",
];

/// A report with what differs between two runs of the same games (timing, shards) left
/// out.
fn normal(bytes: &[u8]) -> serde_json::Value {
    let mut v: serde_json::Value = serde_json::from_slice(bytes).expect("a JSON report");
    v["games_per_second"] = serde_json::Value::Null;
    v["totals"]["seconds"] = serde_json::Value::Null;
    v["totals"]["shards"] = serde_json::Value::Null;
    v["totals"]["run"]["shards"] = serde_json::Value::Null;
    v
}

fn one_machine(profile: &Path) -> serde_json::Value {
    let mut args = vec![
        "--profile",
        profile.to_str().expect("utf-8"),
        "--packs",
        "base",
        "simulate",
    ];
    args.extend(RUN);
    args.push("--json");
    normal(ok(&run(&args)).as_bytes())
}

/// `simulate plan` for `shards` shards into `dir`.
fn plan(profile: &Path, dir: &Path, shards: &str, extra: &[&str]) -> String {
    let mut args = vec![
        "--profile",
        profile.to_str().expect("utf-8"),
        "--packs",
        "base",
        "simulate",
        "plan",
        "--shards",
        shards,
        "--dir",
        dir.to_str().expect("utf-8"),
    ];
    args.extend(RUN);
    args.extend(extra);
    ok(&run(&args))
}

/// The command line of a Slurm batch script (its `exec` line), run by `sh` with `env`.
fn run_script(script: &Path, env: &[(&str, String)]) -> Output {
    let body = std::fs::read_to_string(script).expect("the batch script");
    let line = body
        .lines()
        .find_map(|l| l.strip_prefix("exec "))
        .expect("an exec line");
    let mut command = Command::new("sh");
    command.arg("-c").arg(line);
    for (k, v) in env {
        command.env(k, v);
    }
    command.output().expect("sh")
}

/// Array task `k` of `n` of the batch script `array`, as Slurm starts it (ids 1 to n).
fn array_task(array: &Path, k: u32, n: u32) {
    let env = [
        ("SLURM_ARRAY_TASK_ID", k.to_string()),
        ("SLURM_ARRAY_TASK_MIN", "1".to_string()),
        ("SLURM_ARRAY_TASK_MAX", n.to_string()),
        ("SLURM_ARRAY_TASK_COUNT", n.to_string()),
    ];
    let out = run_script(array, &env);
    assert!(out.status.success(), "shard {k}: {}", text(&out.stderr));
}

/// Each shard's planned games, as a status says them.
fn games_planned(status: &serde_json::Value) -> Vec<u64> {
    status["each"]
        .as_array()
        .expect("each")
        .iter()
        .filter_map(|s| s["games_planned"].as_u64())
        .collect()
}

fn status(dir: &Path) -> serde_json::Value {
    let out = run(&["simulate", "status", dir.to_str().expect("utf-8"), "--json"]);
    serde_json::from_str(&ok(&out)).expect("status JSON")
}

#[test]
fn a_plans_shards_run_as_array_tasks_merge_into_the_one_machine_report() {
    let tmp = tempfile::tempdir().expect("tmp");
    let profile = tmp.path().join("profile");
    let dir = tmp.path().join("run");
    let said = plan(
        &profile,
        &dir,
        "3",
        &["--parallel", "2", "--partition", "short"],
    );
    assert!(said.contains("planned 10 games in 3 shards"), "{said}");
    let array = dir.join("slurm/array.sbatch");
    let script = std::fs::read_to_string(&array).expect("array.sbatch");
    for line in [
        "#SBATCH --array=1-3%2",
        "#SBATCH --partition=short",
        "--shard auto",
        "--expect-content ",
    ] {
        assert!(script.contains(line), "{line} not in\n{script}");
    }
    let merge = std::fs::read_to_string(dir.join("slurm/merge.sbatch")).expect("merge.sbatch");
    assert!(merge.contains("simulate merge"), "{merge}");
    let submit = std::fs::read_to_string(dir.join("slurm/submit.sh")).expect("submit.sh");
    assert!(submit.contains("--dependency=afterok:"), "{submit}");
    // Nothing run yet.
    let st = status(&dir);
    assert_eq!(
        (st["games_done"].as_u64(), st["games_planned"].as_u64()),
        (Some(0), Some(10))
    );
    // The array tasks as Slurm starts them (ids 1 to 3), one after the other; the status
    // counts each shard's games as it finishes.
    for k in 1..=3u32 {
        array_task(&array, k, 3);
        let st = status(&dir);
        assert_eq!(st["shards_done"].as_u64(), Some(u64::from(k)), "{st}");
    }
    let st = status(&dir);
    // Shard 1 plays games 0, 3, 6, 9; shards 2 and 3 three each.
    let planned = games_planned(&st);
    assert_eq!(planned, [4, 3, 3]);
    assert_eq!(st["games_done"].as_u64(), Some(10));
    let out = run_script(&dir.join("slurm/merge.sbatch"), &[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let merged = std::fs::read(dir.join("report.json")).expect("the merged report");
    assert_eq!(normal(&merged), one_machine(&profile));
    let said = ok(&run(&["simulate", "status", dir.to_str().expect("utf-8")]));
    assert!(
        said.starts_with("10 of 10 games (100.0%); 3 of 3 shards done"),
        "{said}"
    );
    assert!(said.contains("merged report: "), "{said}");
    // A folder holds one plan.
    let again = run(&[
        "--packs",
        "base",
        "simulate",
        "plan",
        "--shards",
        "2",
        "--dir",
        dir.to_str().expect("utf-8"),
        "--deck-a",
        "starter",
        "--deck-b",
        "siege",
    ]);
    assert!(
        text(&again.stderr).contains("holds a plan already"),
        "{}",
        text(&again.stderr)
    );
}

#[test]
fn a_shard_with_other_packs_refuses_and_the_status_says_why() {
    let tmp = tempfile::tempdir().expect("tmp");
    let profile = tmp.path().join("profile");
    let dir = tmp.path().join("run");
    plan(&profile, &dir, "2", &["--scheduler", "slurm"]);
    assert!(
        !dir.join("kubernetes").exists(),
        "only Slurm's files were asked for"
    );
    // Shard 2 runs on a machine whose packs differ (here: every pack of the checkout).
    let array = std::fs::read_to_string(dir.join("slurm/array.sbatch")).expect("array.sbatch");
    let line = array
        .lines()
        .find_map(|l| l.strip_prefix("exec "))
        .expect("exec line");
    let other = line.replace("--packs base", "--all-packs");
    assert_ne!(other, line);
    let out = Command::new("sh")
        .arg("-c")
        .arg(&other)
        .env("JOB_COMPLETION_INDEX", "1")
        .env("TOKENSMITH_SHARD_COUNT", "2")
        .output()
        .expect("sh");
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert!(
        err.contains("but it was planned with content") && err.contains("pack sync"),
        "{err}"
    );
    assert!(
        !dir.join("shards/shard-2.json").exists(),
        "a refused shard writes no report"
    );
    let st = status(&dir);
    let shard2 = &st["each"][1];
    assert_eq!(shard2["state"], "failed", "{st}");
    assert!(
        shard2["problem"]
            .as_str()
            .is_some_and(|p| p.contains("planned with content")),
        "{st}"
    );
    // A report of other content does not merge with the plan's shards.
    let out = run_script(
        &dir.join("slurm/array.sbatch"),
        &[
            ("SLURM_ARRAY_TASK_ID", "0".into()),
            ("SLURM_ARRAY_TASK_COUNT", "2".into()),
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let mut foreign = vec!["--all-packs", "simulate"];
    foreign.extend(RUN);
    foreign.extend(["--shard", "2/2", "--out"]);
    let file = dir.join("shards/shard-2.json");
    foreign.push(file.to_str().expect("utf-8"));
    ok(&run(&foreign));
    let merged = run(&[
        "simulate",
        "merge",
        dir.join("shards").to_str().expect("utf-8"),
    ]);
    let err = text(&merged.stderr);
    assert!(!merged.status.success());
    assert!(err.contains("`totals.run.content`"), "{err}");
}

/// The test every balance case here shards: one card, two decks, five game numbers (each
/// played in both decks with the card and with the control: 20 games).
const TEST: [&str; 10] = [
    "lure",
    "--deck",
    "starter",
    "--deck",
    "siege",
    "--games",
    "5",
    "--seed",
    "3",
    "--threads",
];

fn balance(profile: &Path, extra: &[&str]) -> Output {
    let mut args = vec![
        "--profile",
        profile.to_str().expect("utf-8"),
        "--packs",
        "base",
        "balance",
    ];
    args.extend(extra);
    run(&args)
}

#[test]
fn a_balance_tests_shards_merge_into_the_one_machine_report() {
    let tmp = tempfile::tempdir().expect("tmp");
    let profile = tmp.path().join("profile");
    let dir = tmp.path().join("test");
    let mut whole = TEST.to_vec();
    whole.extend(["1", "--json"]);
    let one: serde_json::Value =
        serde_json::from_str(&ok(&balance(&profile, &whole))).expect("a JSON report");
    assert_eq!(one["pairs"].as_u64(), Some(10), "{one}");
    // The plan: three shards, the same job files as a simulation's.
    let mut args = vec![
        "plan",
        "--shards",
        "3",
        "--dir",
        dir.to_str().expect("utf-8"),
    ];
    args.extend(TEST);
    args.push("1");
    let said = ok(&balance(&profile, &args));
    assert!(
        said.contains(
            "planned a test of 1 card(s), 5 games a deck and variant (20 games) in 3 shards"
        ),
        "{said}"
    );
    assert!(said.contains(" balance status "), "{said}");
    let array = dir.join("slurm/array.sbatch");
    let script = std::fs::read_to_string(&array).expect("array.sbatch");
    assert!(
        script.contains(" balance lure ") && script.contains("--shard auto"),
        "{script}"
    );
    let merge = std::fs::read_to_string(dir.join("slurm/merge.sbatch")).expect("merge.sbatch");
    assert!(merge.contains("balance merge"), "{merge}");
    let job = std::fs::read_to_string(dir.join("kubernetes/job.yaml")).expect("job.yaml");
    assert!(job.contains("- balance"), "{job}");
    let st = status(&dir);
    assert_eq!(st["games_planned"].as_u64(), Some(20), "{st}");
    assert_eq!(st["command"], "balance", "{st}");
    for k in 1..=3u32 {
        array_task(&array, k, 3);
    }
    let st = status(&dir);
    let planned = games_planned(&st);
    // Game numbers 0 and 3, 1 and 4, 2: each in two decks with the card and the control.
    assert_eq!(planned, [8, 8, 4], "{st}");
    assert_eq!(st["games_done"].as_u64(), Some(20), "{st}");
    let out = run_script(&dir.join("slurm/merge.sbatch"), &[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let merged: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("report.json")).expect("report.json"))
            .expect("JSON");
    assert_eq!(merged, one, "the merged report is the one-machine report");
    // The text a merge prints is the one-machine test's.
    let shards = dir.join("shards");
    let shards = shards.to_str().expect("utf-8");
    let mut plain = TEST.to_vec();
    plain.push("1");
    let text_one = ok(&balance(&profile, &plain));
    assert_eq!(ok(&run(&["balance", "merge", shards])), text_one);

    // A shard missing, a shard of another test, a shard whose games were edited: refused,
    // naming the file and what is wrong.
    let third = dir.join("shards/shard-3.json");
    let kept = std::fs::read_to_string(&third).expect("shard 3");
    std::fs::remove_file(&third).expect("rm");
    let err = text(&run(&["balance", "merge", shards]).stderr);
    assert!(err.contains("shards missing: [3] (of 3)"), "{err}");
    let mut other = TEST.to_vec();
    other.extend([
        "1",
        "--shard",
        "3/3",
        "--out",
        third.to_str().expect("utf-8"),
    ]);
    *other.iter_mut().find(|a| **a == "3").expect("the seed") = "4";
    ok(&balance(&profile, &other));
    let err = text(&run(&["balance", "merge", shards]).stderr);
    assert!(
        err.contains("shard-3.json: it is of another test than")
            && err.contains("its `run.seed` is 4")
            && err.contains("shard-1.json's is 3"),
        "{err}"
    );
    let edited = kept.replacen("\"with\": [\n", "\"with\": [\n 2.0,", 1);
    assert_ne!(edited, kept);
    std::fs::write(&third, edited).expect("write");
    let err = text(&run(&["balance", "merge", shards]).stderr);
    assert!(
        err.contains("shard-3.json: it does not hold what its run says"),
        "{err}"
    );
    std::fs::write(&third, "{\"format\": 1,\n \"run\": 7}").expect("write");
    let err = text(&run(&["balance", "merge", shards]).stderr);
    assert!(
        err.contains("shard-3.json:2:")
            && err.contains("not a `balance --shard K/N --out FILE` file"),
        "{err}"
    );
    // A sequential test decides from every game so far: it does not shard.
    let mut seq = TEST.to_vec();
    seq.extend(["1", "--sequential", "--shard", "1/2"]);
    let err = text(&balance(&profile, &seq).stderr);
    assert!(err.contains("cannot be used with"), "{err}");
}

#[test]
fn shard_auto_needs_an_array_job() {
    let mut args = vec!["--packs", "base", "simulate"];
    args.extend(RUN);
    args.extend(["--shard", "auto"]);
    let mut command = tokensmith(&args);
    for var in [
        "SLURM_ARRAY_TASK_ID",
        "JOB_COMPLETION_INDEX",
        "AWS_BATCH_JOB_ARRAY_INDEX",
        "TOKENSMITH_SHARD_COUNT",
    ] {
        command.env_remove(var);
    }
    let out = command.output().expect("run");
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("--shard auto found no array job"),
        "{}",
        text(&out.stderr)
    );
    // AWS Batch: the array index from 0, the size given by the job definition.
    let mut command = tokensmith(&args);
    command
        .env_remove("SLURM_ARRAY_TASK_ID")
        .env_remove("JOB_COMPLETION_INDEX")
        .env("AWS_BATCH_JOB_ARRAY_INDEX", "1")
        .env("TOKENSMITH_SHARD_COUNT", "2")
        .arg("--json");
    let out = command.output().expect("run");
    let report: serde_json::Value = serde_json::from_str(&ok(&out)).expect("json");
    assert_eq!(report["totals"]["shards"], serde_json::json!([2]));
    assert_eq!(report["games"], 5);
}

#[test]
fn the_kubernetes_manifests_pass_the_published_schema() {
    let Some(validate) = std::env::var_os("TOKENSMITH_KUBE_VALIDATE") else {
        assert!(
            std::env::var_os("TOKENSMITH_REQUIRE_KUBE_VALIDATE").is_none(),
            "TOKENSMITH_REQUIRE_KUBE_VALIDATE is set but TOKENSMITH_KUBE_VALIDATE is not"
        );
        eprintln!(
            "skipped: set TOKENSMITH_KUBE_VALIDATE to kubernetes-validate (PyPI) to check the manifests"
        );
        return;
    };
    let tmp = tempfile::tempdir().expect("tmp");
    let dir = tmp.path().join("run");
    plan(
        &tmp.path().join("profile"),
        &dir,
        "4",
        &[
            "--scheduler",
            "kubernetes",
            "--cpus",
            "2",
            "--image",
            "registry.example/tokensmith:1",
            "--claim",
            "balance",
        ],
    );
    let job = std::fs::read_to_string(dir.join("kubernetes/job.yaml")).expect("job.yaml");
    for line in [
        "completionMode: Indexed",
        "completions: 4",
        "claimName: balance",
        "name: TOKENSMITH_SHARD_COUNT",
        "value: \"4\"",
    ] {
        assert!(job.contains(line), "{line} not in\n{job}");
    }
    let files = [
        dir.join("kubernetes/job.yaml"),
        dir.join("kubernetes/merge.yaml"),
    ];
    let check = |files: &[PathBuf]| {
        Command::new(&validate)
            .arg("--strict")
            .args(files)
            .output()
            .expect("kubernetes-validate runs")
    };
    let out = check(&files);
    assert!(
        out.status.success(),
        "{}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    // The checker is real: a misspelt field fails it.
    let bad = tmp.path().join("bad.yaml");
    std::fs::write(&bad, job.replace("parallelism:", "parallelizm:")).expect("write");
    let out = check(std::slice::from_ref(&bad));
    assert!(!out.status.success(), "a misspelt field passed");
}

/// A daemon this test started; killed and waited for when dropped.
struct Daemon(Child);

impl Drop for Daemon {
    /// Asked to stop (SIGTERM, so slurmd and slurmctld stop their helpers too), killed if
    /// still there after ten seconds.
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(["-TERM", &self.0.id().to_string()])
            .status();
        let stopped = wait_for(Duration::from_secs(10), || {
            self.0.try_wait().is_ok_and(|s| s.is_some())
        });
        if stopped.is_err() {
            let _ = self.0.kill();
        }
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

fn found(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .chain([PathBuf::from("/usr/sbin"), PathBuf::from("/sbin")])
        .map(|d| d.join(program))
        .find(|p| p.is_file())
}

/// A single-node Slurm in `dir`: munged, slurmctld and slurmd, on loopback ports.
struct Slurm {
    conf: PathBuf,
    dir: PathBuf,
    // Dropped in reverse order of starting: slurmd, slurmctld, munged.
    _daemons: Vec<Daemon>,
}

impl Slurm {
    fn start(dir: &Path) -> Result<Slurm, String> {
        let programs = ["munged", "slurmctld", "slurmd", "sbatch", "sinfo"];
        let paths: Vec<PathBuf> = programs
            .iter()
            .map(|p| found(p).ok_or(format!("{p} is not installed (Debian: slurm-wlm, munge)")))
            .collect::<Result<_, _>>()?;
        // slurmd runs each job as its owner, which needs root.
        let uid = Command::new("id")
            .arg("-u")
            .output()
            .map(|o| text(&o.stdout))
            .unwrap_or_default();
        if uid.trim() != "0" {
            return Err("slurmd needs root to run jobs".to_string());
        }
        let host = Command::new("hostname")
            .arg("-s")
            .output()
            .map(|o| text(&o.stdout).trim().to_string())
            .map_err(|e| format!("hostname: {e}"))?;
        for sub in ["munge", "state", "spool", "log"] {
            std::fs::create_dir_all(dir.join(sub)).map_err(|e| e.to_string())?;
        }
        let key = dir.join("munge/munge.key");
        std::fs::write(
            &key,
            (0..64u8).map(|b| b.wrapping_mul(37)).collect::<Vec<u8>>(),
        )
        .map_err(|e| e.to_string())?;
        {
            use std::os::unix::fs::PermissionsExt as _;
            std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600))
                .map_err(|e| e.to_string())?;
            std::fs::set_permissions(dir.join("munge"), std::fs::Permissions::from_mode(0o700))
                .map_err(|e| e.to_string())?;
        }
        let socket = dir.join("munge/munge.sock");
        let d = dir.display();
        let cpus = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
        let conf = dir.join("slurm.conf");
        let text_conf = format!(
            "ClusterName=tokensmith-test\n\
             SlurmctldHost={host}(127.0.0.1)\n\
             SlurmctldPort={ctld}\n\
             SlurmdPort={slurmd}\n\
             SlurmUser=root\n\
             SlurmdUser=root\n\
             AuthType=auth/munge\n\
             CredType=cred/munge\n\
             AuthInfo=socket={socket}\n\
             StateSaveLocation={d}/state\n\
             SlurmdSpoolDir={d}/spool\n\
             SlurmctldPidFile={d}/slurmctld.pid\n\
             SlurmdPidFile={d}/slurmd.pid\n\
             SlurmctldLogFile={d}/log/slurmctld.log\n\
             SlurmdLogFile={d}/log/slurmd.log\n\
             ProctrackType=proctrack/linuxproc\n\
             TaskPlugin=task/none\n\
             JobAcctGatherType=jobacct_gather/none\n\
             AccountingStorageType=accounting_storage/none\n\
             SchedulerType=sched/backfill\n\
             SelectType=select/cons_tres\n\
             SelectTypeParameters=CR_Core\n\
             ReturnToService=2\n\
             MpiDefault=none\n\
             SwitchType=switch/none\n\
             NodeName={host} NodeAddr=127.0.0.1 CPUs={cpus} State=UNKNOWN\n\
             PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP\n",
            ctld = free_port(),
            slurmd = free_port(),
            socket = socket.display(),
        );
        std::fs::write(&conf, text_conf).map_err(|e| e.to_string())?;
        let spawn =
            |program: &Path, args: &[String], name: &'static str| -> Result<Daemon, String> {
                let log = std::fs::File::create(dir.join(format!("log/{name}.out")))
                    .map_err(|e| e.to_string())?;
                let err = log.try_clone().map_err(|e| e.to_string())?;
                Command::new(program)
                    .args(args)
                    .env("SLURM_CONF", &conf)
                    .stdin(Stdio::null())
                    .stdout(log)
                    .stderr(err)
                    .spawn()
                    .map(Daemon)
                    .map_err(|e| format!("{name}: {e}"))
            };
        let mut daemons = Vec::new();
        daemons.push(spawn(
            &paths[0],
            &[
                "-F".into(),
                "-f".into(),
                format!("--key-file={}", key.display()),
                format!("--socket={}", socket.display()),
                format!("--pid-file={d}/munge/munged.pid"),
                format!("--log-file={d}/munge/munged.log"),
                format!("--seed-file={d}/munge/seed"),
            ],
            "munged",
        )?);
        wait_for(Duration::from_secs(10), || socket.exists())
            .map_err(|()| "munged made no socket".to_string())?;
        let conf_arg = conf.to_string_lossy().into_owned();
        daemons.push(spawn(
            &paths[1],
            &["-D".into(), "-i".into(), "-f".into(), conf_arg.clone()],
            "slurmctld",
        )?);
        daemons.push(spawn(
            &paths[2],
            &["-D".into(), "-f".into(), conf_arg],
            "slurmd",
        )?);
        daemons.reverse();
        let slurm = Slurm {
            conf,
            dir: dir.to_path_buf(),
            _daemons: daemons,
        };
        let idle = wait_for(Duration::from_secs(60), || {
            slurm
                .command(&paths[4])
                .args(["-h", "-o", "%t"])
                .output()
                .is_ok_and(|o| text(&o.stdout).trim() == "idle")
        });
        idle.map_err(|()| format!("the node never became idle:\n{}", slurm.logs()))?;
        Ok(slurm)
    }

    fn command(&self, program: &Path) -> Command {
        let mut c = Command::new(program);
        c.env("SLURM_CONF", &self.conf);
        c
    }

    fn logs(&self) -> String {
        [
            "log/slurmctld.log",
            "log/slurmd.log",
            "log/slurmctld.out",
            "log/slurmd.out",
            "munge/munged.log",
        ]
        .iter()
        .map(|f| {
            let t = std::fs::read_to_string(self.dir.join(f)).unwrap_or_default();
            let tail: Vec<&str> = t.lines().rev().take(15).collect();
            format!(
                "== {f}\n{}\n",
                tail.into_iter().rev().collect::<Vec<_>>().join("\n")
            )
        })
        .collect()
    }
}

fn wait_for(limit: Duration, mut done: impl FnMut() -> bool) -> Result<(), ()> {
    let start = Instant::now();
    while start.elapsed() < limit {
        if done() {
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    Err(())
}

#[test]
fn a_real_slurm_array_job_and_its_dependent_merge_equal_the_one_machine_run() {
    let tmp = tempfile::tempdir().expect("tmp");
    let slurm = match Slurm::start(&tmp.path().join("slurm")) {
        Ok(s) => s,
        Err(why) => {
            assert!(
                std::env::var_os("TOKENSMITH_REQUIRE_SLURM").is_none(),
                "TOKENSMITH_REQUIRE_SLURM is set but Slurm cannot start: {why}"
            );
            eprintln!("skipped: no single-node Slurm here ({why})");
            return;
        }
    };
    let started = Instant::now();
    let profile = tmp.path().join("profile");
    let dir = tmp.path().join("run");
    plan(&profile, &dir, "4", &["--scheduler", "slurm"]);
    let submitted = slurm
        .command(Path::new("sh"))
        .arg(dir.join("slurm/submit.sh"))
        .output()
        .expect("submit.sh");
    let said = ok(&submitted);
    assert!(said.contains("(4 array tasks)"), "{said}");
    let report = dir.join("report.json");
    let merged = wait_for(Duration::from_secs(180), || report.is_file());
    assert!(
        merged.is_ok(),
        "no merged report after 180 s; status: {}\n{}\nshard logs: {:?}",
        status(&dir),
        slurm.logs(),
        std::fs::read_dir(dir.join("logs"))
            .map(|d| d.flatten().map(|e| e.path()).collect::<Vec<_>>())
    );
    let merged = std::fs::read(&report).expect("report.json");
    assert_eq!(normal(&merged), one_machine(&profile));
    let st = status(&dir);
    assert_eq!(st["shards_done"].as_u64(), Some(4), "{st}");
    let log = std::fs::read_to_string(dir.join("logs/merge.out")).unwrap_or_default();
    assert!(log.contains("10 games (shard 1, 2, 3, 4 of 4)"), "{log}");
    eprintln!(
        "the Slurm array job and its merge took {:.1} s",
        started.elapsed().as_secs_f64()
    );
}
