//! A run on a cluster: `simulate plan` and `balance plan` write the job files that run it
//! as an array job (Slurm, Kubernetes), the progress file each shard keeps (`--progress`),
//! and `simulate status` / `balance status`, which read them. Also what both commands'
//! shards share: the content hash a run plays with, `--expect-content`, and the merge's
//! reading of a folder of shard files.
//!
//! A plan's folder (`COMMAND` is `simulate` or `balance`):
//!
//! ```text
//! plan.json             the run: shards, games, content hash, the shard and merge commands
//! slurm/array.sbatch    the shards, one array task each (`--array=1-N`)
//! slurm/merge.sbatch    the merge, run after every shard succeeded (`afterok`)
//! slurm/submit.sh       submits both
//! kubernetes/job.yaml   an Indexed Job, one completion per shard
//! kubernetes/merge.yaml the merge Job
//! kubernetes/submit.sh  applies the Job, waits for it, applies the merge
//! shards/shard-K.json   each shard's report (`COMMAND --out`)
//! progress/shard-K.json each shard's progress (`COMMAND --progress`)
//! logs/                 the scheduler's output of each task
//! report.json           the merged report
//! ```
//!
//! Must not: let a shard run with other packs or decks than the plan saw (each carries
//! `--expect-content`), or leave a half-written progress or report file (all are written
//! atomically).

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant, SystemTime};

use anyhow::Context as _;
use serde::{Deserialize, Serialize};

use crate::ai::simulate::{DeckChoice, SHARD_COUNT_VAR, shard_games};
use crate::cli::context::Context;

/// The placeholder `--out` and `--progress` replace with the shard's number.
pub const SHARD: &str = "{shard}";

/// The most shards a plan makes (Slurm's default `MaxArraySize` is 1,001).
const MAX_SHARDS: u32 = 100_000;

/// Where the claim is mounted in a Kubernetes pod.
const MOUNT: &str = "/runs";

/// Which job files a plan writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Scheduler {
    /// A Slurm array job and its dependent merge.
    Slurm,
    /// A Kubernetes Indexed Job and a merge Job.
    Kubernetes,
    /// Both.
    All,
}

/// The options of `simulate plan` and `balance plan` that say how to run on a cluster.
#[derive(Debug, clap::Args)]
pub struct ClusterArgs {
    /// Number of shards (array tasks, Indexed Job completions).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=i64::from(MAX_SHARDS)))]
    pub shards: u32,
    /// The plan's folder (made; must not hold a plan already). The shards write their
    /// reports and progress under it, so on Slurm it must be on a file system every node
    /// sees.
    #[arg(long = "dir", value_name = "DIR")]
    pub dir: PathBuf,
    /// Which job files to write.
    #[arg(long, value_enum, default_value = "all")]
    pub scheduler: Scheduler,
    /// Cores per shard (Slurm's `--cpus-per-task`, the pod's CPU request, and each
    /// shard's `--threads`).
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub cpus: u32,
    /// At most this many shards at once (Slurm's `%N` throttle, the Job's `parallelism`;
    /// default: no limit on Slurm, every shard on Kubernetes).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub parallel: Option<u32>,
    /// Slurm partition.
    #[arg(long, value_name = "NAME")]
    pub partition: Option<String>,
    /// Slurm time limit of each shard (`--time`, such as `2:00:00`).
    #[arg(long, value_name = "TIME")]
    pub time: Option<String>,
    /// The `tokensmith` program the Slurm jobs run (default: this one; it must be at
    /// that path on every node).
    #[arg(long, value_name = "PATH")]
    pub binary: Option<PathBuf>,
    /// The container image the Kubernetes pods run: it holds `tokensmith` on its PATH
    /// and the packs of the run (`pack sync` of a lock file when it is built).
    #[arg(long, value_name = "IMAGE", default_value = "tokensmith:latest")]
    pub image: String,
    /// The PersistentVolumeClaim the pods write the plan's folder to (mounted at /runs).
    #[arg(long, value_name = "NAME", default_value = "tokensmith-runs")]
    pub claim: String,
}

/// `plan.json`: what `status` and a reader of the folder need.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Plan {
    /// The plan format (1).
    pub format: u32,
    /// The command the shards run: `simulate` or `balance`.
    #[serde(default = "simulate_command")]
    pub command: String,
    /// Shards.
    pub shards: u32,
    /// Game numbers in the whole run (a shard plays the numbers `g` with
    /// `g % shards == K - 1`).
    pub games: u32,
    /// Games played per game number (1 for `simulate`; for `balance`, each deck of each
    /// card with the card and with its control).
    #[serde(default = "one")]
    pub per_number: u32,
    /// The content hash every shard must make.
    pub content: String,
    /// One shard's command (on Slurm; `{shard}` stands for its number).
    pub shard_command: Vec<String>,
    /// The merge's command.
    pub merge_command: Vec<String>,
    /// The job name on the schedulers.
    pub name: String,
    /// When it was planned (seconds since 1970).
    pub planned_at: u64,
}

fn simulate_command() -> String {
    "simulate".into()
}

fn one() -> u32 {
    1
}

/// The most bytes `plan.json` or a progress file may have.
const SMALL_FILE: u64 = 1 << 20;

/// What a shard's progress file says.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct Progress {
    /// The shard, from 1.
    pub shard: u32,
    /// Of this many.
    pub shards: u32,
    /// Games this shard plays.
    pub games_planned: u32,
    /// Games it has played.
    pub games_done: u32,
    /// The run's content hash.
    pub content: String,
    /// When the shard started (seconds since 1970).
    pub started_at: u64,
    /// When this was written.
    pub updated_at: u64,
    /// Whether the shard has finished (its report is written).
    pub finished: bool,
    /// Why the shard did not run, if it refused to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

impl Progress {
    /// The progress of a shard (`None`: the whole run) that plays `planned` games, as it
    /// starts.
    fn starting(shard: Option<(u32, u32)>, planned: u32, content: &str) -> Progress {
        let (shard, shards) = shard.unwrap_or((1, 1));
        let at = now();
        Progress {
            shard,
            shards,
            games_planned: planned,
            games_done: 0,
            content: content.to_string(),
            started_at: at,
            updated_at: at,
            finished: false,
            error: None,
        }
    }
}

/// Write `progress` to `path` atomically, its folder made if missing.
fn save(path: &Path, progress: &Progress) -> anyhow::Result<()> {
    let shown = crate::fsutil::shown(path);
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("cannot make the folder of {shown}"))?;
    }
    let mut bytes = serde_json::to_vec_pretty(progress)?;
    bytes.push(b'\n');
    crate::fsutil::write_atomic(path, &bytes).with_context(|| format!("cannot write {shown}"))
}

/// `path` with `{shard}` replaced by the shard's number.
///
/// # Errors
/// When the path has `{shard}` but the run is not sharded.
pub fn with_shard(path: &Path, shard: Option<(u32, u32)>) -> anyhow::Result<PathBuf> {
    let text = path.to_string_lossy();
    if !text.contains(SHARD) {
        return Ok(path.to_path_buf());
    }
    let Some((k, _)) = shard else {
        anyhow::bail!(
            "{} has {SHARD} in its name, but the run is not sharded: give --shard K/N or --shard auto",
            crate::fsutil::shown(path)
        );
    };
    Ok(PathBuf::from(text.replace(SHARD, &k.to_string())))
}

/// A shard's progress file, kept up to date as its games finish.
pub struct ProgressFile {
    path: PathBuf,
    base: Progress,
    done: AtomicU32,
    /// When it was last written (`None`: a write failed, and was said; no more tries).
    written: Mutex<Option<Instant>>,
}

impl ProgressFile {
    /// Write the file for a run about to start.
    ///
    /// # Errors
    /// When the file cannot be written.
    pub fn start(
        path: &Path,
        shard: Option<(u32, u32)>,
        planned: u32,
        content: &str,
    ) -> anyhow::Result<ProgressFile> {
        let file = ProgressFile {
            path: path.to_path_buf(),
            base: Progress::starting(shard, planned, content),
            done: AtomicU32::new(0),
            written: Mutex::new(Some(Instant::now())),
        };
        save(path, &file.base)?;
        Ok(file)
    }

    fn write(&self, done: u32, finished: bool) -> anyhow::Result<()> {
        let progress = Progress {
            games_done: done,
            updated_at: now(),
            finished,
            ..self.base.clone()
        };
        save(&self.path, &progress)
    }

    /// Say in the progress file of a shard that refused to run why it did.
    pub fn refused(
        path: &Path,
        shard: Option<(u32, u32)>,
        planned: u32,
        content: &str,
        error: &str,
    ) {
        let progress = Progress {
            error: Some(error.to_string()),
            ..Progress::starting(shard, planned, content)
        };
        if let Err(e) = save(path, &progress) {
            eprintln!("warning: {e:#}");
        }
    }

    /// One more game done: the file is rewritten if it is a second old.
    pub fn game_done(&self) {
        let done = self.done.fetch_add(1, Ordering::Relaxed) + 1;
        // Another worker writing it now will write a count at most this old.
        let Ok(mut written) = self.written.try_lock() else {
            return;
        };
        let Some(at) = *written else { return };
        if at.elapsed() < Duration::from_secs(1) {
            return;
        }
        *written = match self.write(done, false) {
            Ok(()) => Some(Instant::now()),
            Err(e) => {
                eprintln!(
                    "warning: cannot update {} ({e:#}); the run goes on without it",
                    crate::fsutil::shown(&self.path)
                );
                None
            }
        };
    }

    /// The run is over and its report written.
    pub fn finish(&self) {
        if let Err(e) = self.write(self.done.load(Ordering::Relaxed), true) {
            eprintln!(
                "warning: cannot update {} ({e:#})",
                crate::fsutil::shown(&self.path)
            );
        }
    }
}

/// `word` as one shell word (single-quoted unless it needs no quotes).
fn sh(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_./:=,@%+-{}".contains(&b));
    if plain {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// A command as one shell line.
fn sh_line(words: &[String]) -> String {
    words.iter().map(|w| sh(w)).collect::<Vec<_>>().join(" ")
}

/// A level as the command line spells it.
pub fn level_word(arg: crate::cli::args::LevelArg) -> String {
    clap::ValueEnum::to_possible_value(&arg).map_or_else(String::new, |v| v.get_name().to_string())
}

/// The options every command takes, for a machine that sees this one's folders (Slurm on
/// a shared file system): paths made absolute.
fn folder_args(ctx: &Context) -> anyhow::Result<Vec<String>> {
    let abs = |p: &Path| -> anyhow::Result<String> {
        Ok(std::path::absolute(p)
            .with_context(|| format!("cannot tell where {} is", crate::fsutil::shown(p)))?
            .to_string_lossy()
            .into_owned())
    };
    let g = ctx.globals();
    let mut v = Vec::new();
    // The shipped base content is unpacked on each machine; a folder of one's own is
    // passed on.
    if g.content.is_some() || ctx.content() == Path::new("content") {
        v.extend(["--content".into(), abs(ctx.content())?]);
    }
    v.extend(["--mods".into(), abs(ctx.mods())?]);
    if let Some(p) = ctx.given_profile() {
        v.extend(["--profile".into(), abs(p)?]);
    }
    v.extend(selection_args(ctx));
    Ok(v)
}

/// `--packs` / `--all-packs`, as given.
fn selection_args(ctx: &Context) -> Vec<String> {
    let g = ctx.globals();
    let mut v = Vec::new();
    if let Some(packs) = &g.packs {
        v.extend(["--packs".into(), packs.join(",")]);
    }
    if g.all_packs {
        v.push("--all-packs".into());
    }
    v
}

/// A name the schedulers take (a DNS label: lower-case letters, digits and `-`).
fn job_name(dir: &Path) -> String {
    let base = dir
        .file_name()
        .map(|n| n.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    let mut name = String::from("tokensmith-");
    for c in base.chars() {
        if name.len() >= 52 {
            break;
        }
        if c.is_ascii_alphanumeric() {
            name.push(c);
        } else if !name.ends_with('-') {
            name.push('-');
        }
    }
    name.trim_end_matches('-').to_string()
}

/// The words of a shard's command that come after the program and the folder options.
fn shard_words(job: &Job, root: &str, cpus: u32) -> Vec<String> {
    let mut v = vec![job.command.to_string()];
    v.extend(job.run.iter().cloned());
    v.extend([
        "--shard".into(),
        "auto".into(),
        "--expect-content".into(),
        job.content.clone(),
        "--threads".into(),
        cpus.to_string(),
        "--out".into(),
        format!("{root}/shards/shard-{SHARD}.json"),
        "--progress".into(),
        format!("{root}/progress/shard-{SHARD}.json"),
    ]);
    v
}

fn merge_words(command: &str, root: &str) -> Vec<String> {
    vec![
        command.into(),
        "merge".into(),
        format!("{root}/shards"),
        "--out".into(),
        format!("{root}/report.json"),
    ]
}

/// A run to plan: what `simulate plan` or `balance plan` has made ready.
pub struct Job {
    /// `simulate` or `balance`.
    pub command: &'static str,
    /// The options that make the run (not the shard, the output, the progress or the
    /// threads), as the command takes them.
    pub run: Vec<String>,
    /// Game numbers in the run: no more shards than these.
    pub games: u32,
    /// Games per game number ([`Plan::per_number`]).
    pub per_number: u32,
    /// The content hash every shard must make.
    pub content: String,
    /// What the run is, for the summary line (`400 games`, `card hunter: 200 games a deck`).
    pub what: String,
}

/// Refuse the options a plan sets for each shard itself.
///
/// # Errors
/// Naming the first one given.
pub fn refuse_shard_options(command: &str, given: &[(bool, &str)]) -> anyhow::Result<()> {
    if let Some((_, option)) = given.iter().find(|(g, _)| *g) {
        anyhow::bail!(
            "{command} plan sets {option} of each shard itself: leave it out (the plan's folder is --dir)"
        );
    }
    Ok(())
}

/// `--shard`: a given shard, or the scheduler's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShardArg {
    /// Shard K of N.
    Given(u32, u32),
    /// From the array job's environment.
    Auto,
}

impl ShardArg {
    /// The shard, `auto` read from this process's environment.
    ///
    /// # Errors
    /// When `auto` finds no array job, or one whose variables do not fit together.
    pub fn resolve(self) -> Result<(u32, u32), crate::ai::simulate::ShardEnvError> {
        match self {
            ShardArg::Given(k, n) => Ok((k, n)),
            ShardArg::Auto => crate::ai::simulate::shard_from_env(|name| std::env::var(name).ok()),
        }
    }
}

pub fn parse_shard(text: &str) -> Result<ShardArg, String> {
    if text.trim().eq_ignore_ascii_case("auto") {
        return Ok(ShardArg::Auto);
    }
    parse_given(text).map(|(k, n)| ShardArg::Given(k, n))
}

fn parse_given(text: &str) -> Result<(u32, u32), String> {
    let (k, n) = text
        .split_once('/')
        .ok_or_else(|| format!("'{text}' is not K/N (say 2/4) or auto"))?;
    let k: u32 = k
        .trim()
        .parse()
        .map_err(|_| format!("'{k}' is not a shard number"))?;
    let n: u32 = n
        .trim()
        .parse()
        .map_err(|_| format!("'{n}' is not a shard count"))?;
    if n == 0 || k == 0 || k > n {
        return Err(format!("shard {k}/{n}: K must be from 1 to N"));
    }
    Ok((k, n))
}

/// The shard `--shard` gives, `auto` read from this process's environment (and said on
/// the standard error).
///
/// # Errors
/// When `auto` finds no array job, or one whose variables do not fit together.
pub fn resolve_shard(arg: Option<ShardArg>) -> anyhow::Result<Option<(u32, u32)>> {
    let shard = arg.map(ShardArg::resolve).transpose()?;
    if let (Some(ShardArg::Auto), Some((k, n))) = (arg, shard) {
        eprintln!("shard {k} of {n} (from the array job's environment)");
    }
    Ok(shard)
}

/// Check a plan's folder and shard count before the run is loaded.
///
/// # Errors
/// When the folder holds a plan already, or there would be shards with no game.
pub fn plan_folder(args: &ClusterArgs, games: u32, unit: &str) -> anyhow::Result<PathBuf> {
    if args.shards > games {
        anyhow::bail!(
            "{} shards for {games} {unit} would leave shards with no game: give at most {games} shards",
            args.shards
        );
    }
    let dir = std::path::absolute(&args.dir)
        .with_context(|| format!("cannot tell where {} is", crate::fsutil::shown(&args.dir)))?;
    if dir.join("plan.json").exists() {
        anyhow::bail!(
            "{} holds a plan already: give another folder, or remove it first",
            crate::fsutil::shown(&dir)
        );
    }
    Ok(dir)
}

/// Write the plan of `job` in `dir` (from [`plan_folder`]).
pub fn plan(ctx: &Context, args: &ClusterArgs, dir: &Path, job: &Job) -> anyhow::Result<ExitCode> {
    let shown = crate::fsutil::shown(dir);
    let content = &job.content;
    let root = dir.to_string_lossy().into_owned();
    let name = job_name(dir);
    let binary = match &args.binary {
        Some(b) => std::path::absolute(b)?,
        None => std::env::current_exe().context("cannot tell where this program is")?,
    }
    .to_string_lossy()
    .into_owned();
    let mut shard_command = vec![binary.clone()];
    shard_command.extend(folder_args(ctx)?);
    shard_command.extend(shard_words(job, &root, args.cpus));
    let mut merge_command = vec![binary.clone()];
    merge_command.extend(merge_words(job.command, &root));
    let plan = Plan {
        format: 1,
        command: job.command.to_string(),
        shards: args.shards,
        games: job.games,
        per_number: job.per_number,
        content: content.clone(),
        shard_command,
        merge_command,
        name: name.clone(),
        planned_at: now(),
    };
    let mut files: Vec<(PathBuf, String)> = Vec::new();
    if matches!(args.scheduler, Scheduler::Slurm | Scheduler::All) {
        files.extend(slurm_files(dir, &plan, args, &binary));
    }
    if matches!(args.scheduler, Scheduler::Kubernetes | Scheduler::All) {
        let mut words = vec!["tokensmith".to_string()];
        words.extend(selection_args(ctx));
        let kube_root = format!("{MOUNT}/{}", dir_name(dir));
        words.extend(shard_words(job, &kube_root, args.cpus));
        let mut merge = vec!["tokensmith".to_string()];
        merge.extend(merge_words(job.command, &kube_root));
        files.extend(kubernetes_files(dir, &plan, args, &words, &merge)?);
    }
    for sub in ["shards", "progress", "logs"] {
        std::fs::create_dir_all(dir.join(sub))
            .with_context(|| format!("cannot make {}", crate::fsutil::shown(&dir.join(sub))))?;
    }
    for (path, text) in &files {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("cannot make {}", crate::fsutil::shown(parent)))?;
        }
        crate::fsutil::write_atomic(path, text.as_bytes())
            .with_context(|| format!("cannot write {}", crate::fsutil::shown(path)))?;
        if path.extension().is_some_and(|e| e == "sh" || e == "sbatch") {
            make_executable(path)?;
        }
    }
    // plan.json last: a folder with one holds the whole plan.
    let mut bytes = serde_json::to_vec_pretty(&plan)?;
    bytes.push(b'\n');
    crate::fsutil::write_atomic(&dir.join("plan.json"), &bytes)
        .with_context(|| format!("cannot write {shown}/plan.json"))?;
    println!(
        "planned {} in {} shards (content {}) in {shown}",
        job.what,
        args.shards,
        crate::packs::short(content)
    );
    if matches!(args.scheduler, Scheduler::Slurm | Scheduler::All) {
        println!(
            "  Slurm:      sh {}",
            sh(&format!("{root}/slurm/submit.sh"))
        );
    }
    if matches!(args.scheduler, Scheduler::Kubernetes | Scheduler::All) {
        println!(
            "  Kubernetes: sh {}   (image {}, claim {} mounted at {MOUNT})",
            sh(&format!("{root}/kubernetes/submit.sh")),
            args.image,
            args.claim
        );
    }
    println!(
        "  progress:   {} {} status {}",
        sh(&binary),
        job.command,
        sh(&root)
    );
    println!(
        "  the merged report will be {}",
        sh(&format!("{root}/report.json"))
    );
    Ok(ExitCode::SUCCESS)
}

fn dir_name(dir: &Path) -> String {
    dir.file_name()
        .map_or_else(|| "run".to_string(), |n| n.to_string_lossy().into_owned())
}

#[cfg(unix)]
fn make_executable(path: &Path) -> anyhow::Result<()> {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))
        .with_context(|| format!("cannot make {} executable", crate::fsutil::shown(path)))
}

#[cfg(not(unix))]
fn make_executable(_: &Path) -> anyhow::Result<()> {
    Ok(())
}

/// The Slurm batch scripts and the script that submits them.
fn slurm_files(
    dir: &Path,
    plan: &Plan,
    args: &ClusterArgs,
    binary: &str,
) -> Vec<(PathBuf, String)> {
    let root = dir.to_string_lossy();
    let head = |job: &str, log: &str| {
        let mut s = String::from("#!/bin/sh\n");
        s += &format!("#SBATCH --job-name={job}\n");
        s += &format!("#SBATCH --output={}\n", sh(&format!("{root}/logs/{log}")));
        if let Some(p) = &args.partition {
            s += &format!("#SBATCH --partition={}\n", sh(p));
        }
        if let Some(t) = &args.time {
            s += &format!("#SBATCH --time={}\n", sh(t));
        }
        s
    };
    let throttle = args.parallel.map(|p| format!("%{p}")).unwrap_or_default();
    let mut array = head(&plan.name, "shard-%a.out");
    array += &format!(
        "#SBATCH --array=1-{}{throttle}\n#SBATCH --cpus-per-task={}\n#SBATCH --ntasks=1\n",
        plan.shards, args.cpus
    );
    array += &format!(
        "# Shard K of {} (K = the array task id) of the run planned in {root}.\n",
        plan.shards
    );
    array += "set -eu\n";
    array += &format!("exec {}\n", sh_line(&plan.shard_command));
    let mut merge = head(&format!("{}-merge", plan.name), "merge.out");
    merge += "#SBATCH --ntasks=1\n";
    merge += "# Run by submit.sh once every shard has succeeded (--dependency=afterok).\n";
    merge += "set -eu\n";
    merge += &format!("exec {}\n", sh_line(&plan.merge_command));
    let submit = format!(
        "#!/bin/sh\n\
         # Submits the shards as one array job and the merge as a job that starts when\n\
         # every shard has succeeded.\n\
         set -eu\n\
         here=$(cd \"$(dirname \"$0\")\" && pwd)\n\
         array=$(sbatch --parsable \"$here/array.sbatch\")\n\
         array=${{array%%;*}}\n\
         merge=$(sbatch --parsable --dependency=afterok:\"$array\" \"$here/merge.sbatch\")\n\
         merge=${{merge%%;*}}\n\
         echo \"shards: job $array ({} array tasks); merge: job $merge\"\n\
         echo \"follow: {} {} status {}\"\n",
        plan.shards,
        sh(binary).replace('"', "\\\""),
        plan.command,
        sh(&root).replace('"', "\\\"")
    );
    vec![
        (dir.join("slurm/array.sbatch"), array),
        (dir.join("slurm/merge.sbatch"), merge),
        (dir.join("slurm/submit.sh"), submit),
    ]
}

/// The Kubernetes manifests and the script that applies them.
fn kubernetes_files(
    dir: &Path,
    plan: &Plan,
    args: &ClusterArgs,
    shard: &[String],
    merge: &[String],
) -> anyhow::Result<Vec<(PathBuf, String)>> {
    let volume = serde_json::json!([{
        "name": "runs",
        "persistentVolumeClaim": { "claimName": args.claim },
    }]);
    let mount = serde_json::json!([{ "name": "runs", "mountPath": MOUNT }]);
    let labels = serde_json::json!({
        "app.kubernetes.io/name": "tokensmith",
        "tokensmith/content": crate::packs::short(&plan.content),
    });
    let job = serde_json::json!({
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": { "name": plan.name, "labels": labels },
        "spec": {
            "completionMode": "Indexed",
            "completions": plan.shards,
            "parallelism": args.parallel.unwrap_or(plan.shards).min(plan.shards),
            "backoffLimit": plan.shards.saturating_mul(2).min(1000),
            "template": {
                "metadata": { "labels": labels },
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [{
                        "name": "shard",
                        "image": args.image,
                        "command": shard,
                        "env": [{ "name": SHARD_COUNT_VAR, "value": plan.shards.to_string() }],
                        "resources": { "requests": { "cpu": args.cpus.to_string() } },
                        "volumeMounts": mount,
                    }],
                    "volumes": volume,
                }
            }
        }
    });
    let merge_name = format!("{}-merge", plan.name);
    let merge_job = serde_json::json!({
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": { "name": merge_name, "labels": labels },
        "spec": {
            "completions": 1,
            "backoffLimit": 2,
            "template": {
                "metadata": { "labels": labels },
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [{
                        "name": "merge",
                        "image": args.image,
                        "command": merge,
                        "volumeMounts": mount,
                    }],
                    "volumes": volume,
                }
            }
        }
    });
    let yaml = |value: &serde_json::Value, what: &str| -> anyhow::Result<String> {
        Ok(format!(
            "# {what}\n{}",
            serde_saphyr::to_string(value).context("cannot write a Kubernetes manifest")?
        ))
    };
    let submit = format!(
        "#!/bin/sh\n\
         # Applies the shards' Indexed Job, waits for every index to complete, then applies\n\
         # the merge Job. The claim {claim} must exist and hold the folder {mount}/{folder}.\n\
         set -eu\n\
         here=$(cd \"$(dirname \"$0\")\" && pwd)\n\
         kubectl apply -f \"$here/job.yaml\"\n\
         if ! kubectl wait --for=condition=complete --timeout=168h job/{name}; then\n\
         \x20   echo \"the shards' Job did not complete: kubectl describe job/{name}\" >&2\n\
         \x20   exit 1\n\
         fi\n\
         kubectl apply -f \"$here/merge.yaml\"\n\
         kubectl wait --for=condition=complete --timeout=1h job/{merge_name}\n\
         echo \"merged: {mount}/{folder}/report.json on the claim {claim}\"\n",
        claim = args.claim,
        mount = MOUNT,
        folder = dir_name(dir),
        name = plan.name,
    );
    Ok(vec![
        (
            dir.join("kubernetes/job.yaml"),
            yaml(
                &job,
                "The shards: one completion per shard (JOB_COMPLETION_INDEX + 1).",
            )?,
        ),
        (
            dir.join("kubernetes/merge.yaml"),
            yaml(
                &merge_job,
                "The merge: apply once the shards' Job is complete.",
            )?,
        ),
        (dir.join("kubernetes/submit.sh"), submit),
    ])
}

/// One shard's state, as `status` sees it.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct ShardStatus {
    /// The shard, from 1.
    pub shard: u32,
    /// `waiting`, `running`, `stalled`, `done` or `failed`.
    pub state: &'static str,
    /// Games done.
    pub games_done: u32,
    /// Games it plays.
    pub games_planned: u32,
    /// Games a second, while it runs.
    pub games_per_second: Option<f64>,
    /// What is wrong, if something is.
    pub problem: Option<String>,
}

/// A plan's state.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Status {
    /// The command the shards run.
    pub command: String,
    /// Games done, all shards.
    pub games_done: u64,
    /// Games planned.
    pub games_planned: u64,
    /// Shards done (their reports written).
    pub shards_done: u32,
    /// Shards.
    pub shards: u32,
    /// The merged report, once it is written.
    pub report: Option<PathBuf>,
    /// Seconds to go at the current pace, while shards run.
    pub eta_seconds: Option<u64>,
    /// Each shard.
    pub each: Vec<ShardStatus>,
}

/// A shard with no progress for this long is shown as stalled.
const STALLED: u64 = 600;

/// The state of the plan in `dir`.
///
/// # Errors
/// When `dir` holds no readable plan.
pub fn read_status(dir: &Path) -> anyhow::Result<Status> {
    let shown = crate::fsutil::shown(dir);
    let text = crate::fsutil::read_text(&dir.join("plan.json"), SMALL_FILE, "a plan")
        .with_context(|| {
            format!("{shown} holds no plan (plan.json): give the folder `simulate plan --dir` or `balance plan --dir` made")
        })?;
    let plan: Plan = serde_json::from_str(&text).with_context(|| {
        format!("{shown}/plan.json is not a plan `simulate plan` or `balance plan` wrote")
    })?;
    if plan.shards == 0 || plan.shards > MAX_SHARDS {
        anyhow::bail!(
            "{shown}/plan.json has {} shards: a plan has 1 to {MAX_SHARDS}",
            plan.shards
        );
    }
    let at = now();
    let mut each = Vec::with_capacity(plan.shards as usize);
    for k in 1..=plan.shards {
        let planned = shard_games(plan.games, k, plan.shards).saturating_mul(plan.per_number);
        let report = dir.join(format!("shards/shard-{k}.json"));
        let progress = dir.join(format!("progress/shard-{k}.json"));
        let read: Option<Progress> =
            crate::fsutil::read_text(&progress, SMALL_FILE, "a progress file")
                .ok()
                .and_then(|t| serde_json::from_str(&t).ok());
        let mut s = ShardStatus {
            shard: k,
            state: "waiting",
            games_done: 0,
            games_planned: planned,
            games_per_second: None,
            problem: None,
        };
        if let Some(p) = &read {
            s.games_done = p.games_done.min(planned);
            if let Some(e) = &p.error {
                s.state = "failed";
                s.problem = Some(e.clone());
            } else if p.content != plan.content {
                s.state = "failed";
                s.problem = Some(format!(
                    "it plays content {}, the plan's is {}",
                    crate::packs::short(&p.content),
                    crate::packs::short(&plan.content)
                ));
            } else if p.finished {
                s.state = "done";
            } else if at.saturating_sub(p.updated_at) > STALLED {
                s.state = "stalled";
                s.problem = Some(format!(
                    "no progress for {} minutes (stopped? see logs/shard-{k}.out)",
                    at.saturating_sub(p.updated_at) / 60
                ));
            } else {
                s.state = "running";
                let spent = p.updated_at.saturating_sub(p.started_at);
                #[allow(
                    clippy::cast_precision_loss,
                    reason = "seconds and games, far below 2^52"
                )]
                if spent > 0 {
                    s.games_per_second = Some(f64::from(p.games_done) / spent as f64);
                }
            }
        }
        if report.is_file() && s.state != "failed" {
            s.state = "done";
            s.games_done = planned;
        }
        each.push(s);
    }
    let games_done = each.iter().map(|s| u64::from(s.games_done)).sum();
    let games_planned = each.iter().map(|s| u64::from(s.games_planned)).sum();
    let pace: f64 = each.iter().filter_map(|s| s.games_per_second).sum();
    #[allow(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        clippy::cast_precision_loss,
        reason = "a positive estimate in seconds"
    )]
    let eta_seconds = (pace > 0.0 && games_done < games_planned)
        .then(|| ((games_planned - games_done) as f64 / pace).ceil() as u64);
    let merged = dir.join("report.json");
    Ok(Status {
        command: plan.command.clone(),
        games_done,
        games_planned,
        shards_done: u32::try_from(each.iter().filter(|s| s.state == "done").count())
            .unwrap_or(u32::MAX),
        shards: plan.shards,
        report: merged.is_file().then_some(merged),
        eta_seconds,
        each,
    })
}

/// `simulate status DIR`, `balance status DIR`.
pub fn status(dir: &Path, json: bool) -> anyhow::Result<ExitCode> {
    use std::io::Write as _;
    let st = read_status(dir)?;
    let mut out = std::io::stdout().lock();
    if json {
        serde_json::to_writer_pretty(&mut out, &st)?;
        writeln!(out)?;
        return Ok(ExitCode::SUCCESS);
    }
    #[allow(clippy::cast_precision_loss, reason = "a percentage of a game count")]
    let pct = if st.games_planned == 0 {
        100.0
    } else {
        100.0 * st.games_done as f64 / st.games_planned as f64
    };
    write!(
        out,
        "{} of {} games ({pct:.1}%); {} of {} shards done",
        st.games_done, st.games_planned, st.shards_done, st.shards
    )?;
    if let Some(eta) = st.eta_seconds {
        write!(out, "; about {} to go", duration_words(eta))?;
    }
    writeln!(out)?;
    // Every shard that is not done, at most 20 lines of them.
    let open: Vec<&ShardStatus> = st.each.iter().filter(|s| s.state != "done").collect();
    for s in open.iter().take(20) {
        write!(
            out,
            "  shard {}: {} ({} of {} games",
            s.shard, s.state, s.games_done, s.games_planned
        )?;
        if let Some(r) = s.games_per_second {
            write!(out, ", {r:.1} games/s")?;
        }
        write!(out, ")")?;
        if let Some(p) = &s.problem {
            write!(out, ": {p}")?;
        }
        writeln!(out)?;
    }
    if open.len() > 20 {
        writeln!(out, "  … and {} more not done", open.len() - 20)?;
    }
    match &st.report {
        Some(r) => writeln!(out, "merged report: {}", crate::fsutil::shown(r))?,
        None if st.shards_done == st.shards => writeln!(
            out,
            "every shard is done; the merge job writes report.json (or run `{} merge {}`)",
            st.command,
            crate::fsutil::shown(&dir.join("shards"))
        )?,
        None => {}
    }
    Ok(ExitCode::SUCCESS)
}

fn duration_words(seconds: u64) -> String {
    match seconds {
        s if s < 120 => format!("{s} s"),
        s if s < 7200 => format!("{} min", s.div_ceil(60)),
        s => format!("{}.{} h", s / 3600, (s % 3600) / 360),
    }
}

/// What a run plays with, as one hash: each pack's id, version and content hash, in load
/// order, each deck's cards, and `extra` lines (what else the command makes the run of).
/// Two machines that make the same hash play the same games.
pub fn content_hash<'a>(
    ctx: &Context,
    catalog: &crate::rules::Catalog,
    decks: impl IntoIterator<Item = &'a DeckChoice>,
    extra: &[&[&str]],
) -> String {
    use sha2::Digest as _;
    let mut h = sha2::Sha256::new();
    let mut line = |parts: &[&str]| {
        for p in parts {
            h.update(p.as_bytes());
            h.update([0]);
        }
        h.update([b'\n']);
    };
    for stamp in crate::replay::stamps(catalog, &ctx.play_options().folders) {
        line(&[
            "pack",
            &stamp.id,
            &stamp.version,
            stamp.hash.as_deref().unwrap_or("-"),
        ]);
    }
    for deck in decks {
        line(&["deck", &deck.id]);
        for stack in &deck.stacks {
            let cards: Vec<&str> = stack
                .iter()
                .map(|&c| catalog.card(c).meta.id.as_str())
                .collect();
            line(&cards);
        }
    }
    for parts in extra {
        line(parts);
    }
    hex::encode(h.finalize())
}

/// `--expect-content`: refuse a run whose content is not the planned one, saying so in
/// its progress file too (where `status` shows it).
///
/// # Errors
/// When the hashes differ.
pub fn expect_content(
    expected: Option<&str>,
    content: &str,
    progress: Option<&Path>,
    shard: Option<(u32, u32)>,
    planned: u32,
) -> anyhow::Result<()> {
    let Some(expected) = expected else {
        return Ok(());
    };
    if expected.trim().eq_ignore_ascii_case(content) {
        return Ok(());
    }
    let message = format!(
        "this run's packs and decks make content {}, but it was planned with content {}: run it where the same packs are installed and enabled (`pack lock` where it was planned, `pack sync` here) and the same saved decks are in the profile",
        crate::packs::short(content),
        crate::packs::short(expected.trim())
    );
    if let Some(path) = progress {
        ProgressFile::refused(path, shard, planned, content, &message);
    }
    anyhow::bail!(message)
}

/// Write `value` as pretty JSON to `path`, atomically (its folder made if missing).
pub fn write_json(path: &Path, value: &impl Serialize) -> anyhow::Result<()> {
    let shown = crate::fsutil::shown(path);
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("cannot make the folder of {shown}"))?;
    }
    let mut bytes = serde_json::to_vec_pretty(value)?;
    bytes.push(b'\n');
    crate::fsutil::write_atomic(path, &bytes).with_context(|| format!("cannot write {shown}"))
}

/// A merge's refusal as the command says it: `error` names the file at fault by its place
/// in `files` (from 1, when it does), and the text's `first` ("the first report") becomes
/// the first file's name.
pub fn merge_refusal(
    files: &[PathBuf],
    at: Option<usize>,
    error: &dyn std::fmt::Display,
    first: &str,
) -> anyhow::Error {
    let name = |i: usize| files.get(i).map(|f| crate::fsutil::shown(f));
    match at.and_then(|i| name(i.checked_sub(1)?)) {
        Some(file) => {
            let text = error
                .to_string()
                .replace(first, &name(0).unwrap_or_default());
            anyhow::anyhow!("cannot merge {file}: it {text}")
        }
        None => anyhow::anyhow!("cannot merge: {error}"),
    }
}

/// The most shard files one merge reads (a folder can hold any number of files).
const MAX_SHARD_FILES: usize = 100_000;

/// The files a merge reads: each file given, and each folder's `.json` files in name
/// order. `what` names them in messages (`simulate --json` reports).
pub fn expand_folders(given: &[PathBuf], what: &str) -> anyhow::Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for path in given {
        if !path.is_dir() {
            files.push(path.clone());
            continue;
        }
        let shown = crate::fsutil::shown(path);
        let mut found = Vec::new();
        for entry in std::fs::read_dir(path).with_context(|| format!("cannot read {shown}"))? {
            let entry = entry.with_context(|| format!("cannot read {shown}"))?;
            let file = entry.path();
            if file.extension().is_some_and(|e| e == "json") && file.is_file() {
                found.push(file);
                if files.len() + found.len() > MAX_SHARD_FILES {
                    anyhow::bail!(
                        "{shown} holds more than {MAX_SHARD_FILES} files: merge at most that many at once"
                    );
                }
            }
        }
        if found.is_empty() {
            anyhow::bail!("{shown} holds no `.json` files: write each shard's {what} there");
        }
        found.sort();
        files.extend(found);
    }
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::{job_name, sh, sh_line};
    use std::path::Path;

    #[test]
    fn shell_words_are_quoted_only_when_they_need_it() {
        assert_eq!(sh("--deck-a"), "--deck-a");
        assert_eq!(
            sh("/runs/a/shard-{shard}.json"),
            "/runs/a/shard-{shard}.json"
        );
        assert_eq!(sh("my deck"), "'my deck'");
        assert_eq!(sh("it's"), r"'it'\''s'");
        assert_eq!(sh("$(rm -rf /)"), "'$(rm -rf /)'");
        assert_eq!(sh(""), "''");
        assert_eq!(sh_line(&["a b".to_string(), "c".to_string()]), "'a b' c");
    }

    #[test]
    fn job_names_are_dns_labels() {
        assert_eq!(
            job_name(Path::new("/x/Run 42_final")),
            "tokensmith-run-42-final"
        );
        let long = job_name(Path::new(&"a".repeat(200)));
        assert!(long.len() <= 63, "{long}");
        assert_eq!(job_name(Path::new("/")), "tokensmith");
    }
}
