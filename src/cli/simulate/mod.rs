//! `tokensmith simulate`: AI-versus-AI games with win rates and per-card statistics, and
//! `simulate merge`, which adds up the reports of a run's shards.

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use clap::Subcommand;

pub use super::cluster::status;
use super::cluster::{self, ClusterArgs};

use super::args::LevelArg;
use super::context::{Context, named_deck};

/// `tokensmith simulate`: a run, or `simulate merge`.
#[derive(Debug, clap::Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct SimulateCommand {
    /// `merge`.
    #[command(subcommand)]
    pub sub: Option<SimulateSub>,
    /// A run's options.
    #[command(flatten)]
    pub args: SimulateArgs,
}

/// `tokensmith simulate merge`.
#[derive(Debug, Subcommand)]
pub enum SimulateSub {
    /// Add up the `--json` reports of a run's shards (`--shard K/N`, every K once) into
    /// the report the whole run gives. A folder stands for every `.json` file in it.
    Merge {
        /// The shard reports, or folders of them.
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
        /// Also write the merged report, as JSON, to this file (atomically).
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
    },
    /// Write the job files that run this simulation as an array job on a cluster: a
    /// Slurm batch script with a dependent merge job, a Kubernetes Indexed Job with a
    /// merge Job, and the folder layout their shards write to (docs/ai.md, "Spreading a
    /// run over machines").
    Plan(Box<PlanArgs>),
    /// How far a planned run is: games done of games planned, shard by shard.
    Status {
        /// The plan's folder (`simulate plan --dir DIR`).
        dir: PathBuf,
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
    },
}

/// `simulate plan`.
#[derive(Debug, clap::Args)]
pub struct PlanArgs {
    /// How to run on the cluster.
    #[command(flatten)]
    pub cluster: ClusterArgs,
    /// The run.
    #[command(flatten)]
    pub run: SimulateArgs,
}

/// `simulate plan`: the job files of a sharded run (src/cli/cluster.rs).
pub fn plan(ctx: &Context, args: &PlanArgs) -> anyhow::Result<ExitCode> {
    let run = &args.run;
    cluster::refuse_shard_options(
        "simulate",
        &[
            (run.shard.is_some(), "--shard"),
            (run.out.is_some(), "--out"),
            (run.progress.is_some(), "--progress"),
            (run.expect_content.is_some(), "--expect-content"),
        ],
    )?;
    let dir = cluster::plan_folder(&args.cluster, run.games, "games")?;
    // The content and decks are loaded here, so a run that cannot start is said now, and
    // the hash every shard must make is known.
    let prepared = prepare(ctx, run, Some((1, args.cluster.shards)))?;
    let job = cluster::Job {
        command: "simulate",
        run: plan_words(run),
        games: run.games,
        per_number: 1,
        content: prepared.content,
        what: format!("{} games", run.games),
    };
    cluster::plan(ctx, &args.cluster, &dir, &job)
}

/// The options of `simulate` that make the run (not the shard, the output or the threads).
fn plan_words(a: &SimulateArgs) -> Vec<String> {
    let mut v: Vec<String> = vec!["--deck-a".into(), a.deck_a.clone().unwrap_or_default()];
    for d in &a.deck_b {
        v.extend(["--deck-b".into(), d.clone()]);
    }
    v.extend([
        "--ai-a".into(),
        cluster::level_word(a.ai_a),
        "--ai-b".into(),
        cluster::level_word(a.ai_b),
        "--games".into(),
        a.games.to_string(),
        "--seed".into(),
        a.seed.to_string(),
    ]);
    if let Some(ms) = a.move_time {
        v.extend(["--move-time".into(), ms.to_string()]);
    }
    if let Some(n) = a.iterations {
        v.extend(["--iterations".into(), n.to_string()]);
    }
    if a.omniscient {
        v.push("--omniscient".into());
    }
    v.extend([
        "--ai-script-instructions".into(),
        a.ai_script_instructions.to_string(),
        "--ai-script-ms".into(),
        a.ai_script_ms.to_string(),
        "--max-moves".into(),
        a.max_moves.to_string(),
    ]);
    v
}

/// Options of `tokensmith simulate`.
#[derive(Debug, clap::Args)]
pub struct SimulateArgs {
    /// Side A's deck: a deck id of the loaded packs, a saved deck's id, `random` (random
    /// content, drawn once from the seed) or `random-each` (new random content for every
    /// pair of games, the two decks swapped between the sides).
    #[arg(long, value_name = "ID", required = true)]
    pub deck_a: Option<String>,
    /// Side B's deck (the same kinds); repeat to play A against several decks in turn.
    #[arg(long, value_name = "ID", required = true)]
    pub deck_b: Vec<String>,
    /// Side A's AI level.
    #[arg(long, value_enum, default_value = "greedy")]
    pub ai_a: LevelArg,
    /// Side B's AI level.
    #[arg(long, value_enum, default_value = "greedy")]
    pub ai_b: LevelArg,
    /// Number of games.
    #[arg(long, default_value_t = 400)]
    pub games: u32,
    /// Seed of the whole run.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Worker threads (default: every core).
    #[arg(long, default_value_t = 0)]
    pub threads: usize,
    /// Thinking time per move for `hard`, in milliseconds (default 1000).
    #[arg(long, value_name = "MS", conflicts_with = "iterations")]
    pub move_time: Option<u64>,
    /// Search iterations per move for `hard` instead of a time (reproducible).
    #[arg(long, value_name = "N")]
    pub iterations: Option<u32>,
    /// Let the agents see the opponent's stacks (for measuring, not for play).
    #[arg(long)]
    pub omniscient: bool,
    /// Lua instructions one AI decision's look-ahead may spend on scripts, all its
    /// simulated moves and `evaluate` calls together.
    #[arg(long, value_name = "N", default_value_t = crate::ai::ScriptLimits::DEFAULT.instructions,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub ai_script_instructions: u64,
    /// Wall time one AI decision's look-ahead may spend on scripts, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = crate::ai::ScriptLimits::DEFAULT.wall_ms,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub ai_script_ms: u32,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
    /// Stop a game after this many moves and report it as capped.
    #[arg(long, value_name = "N", default_value_t = crate::ai::simulate::MAX_MOVES)]
    pub max_moves: u32,
    /// Play only shard K of N of the games (K from 1): game g when g % N = K − 1. Merge
    /// the shards' `--json` reports with `simulate merge`. `auto` takes K and N from a
    /// Slurm array job, a Kubernetes Indexed Job or an AWS Batch array job (the last two
    /// with TOKENSMITH_SHARD_COUNT set to the number of shards).
    #[arg(long, value_name = "K/N|auto", value_parser = cluster::parse_shard)]
    pub shard: Option<cluster::ShardArg>,
    /// Also write the report, as JSON, to this file (atomically; its folder is made). A
    /// `{shard}` in the name becomes the shard's number.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Also write a self-contained HTML page with plots to this file: the distributions
    /// of game length, lead changes and decisiveness, and the cards' pick rates.
    #[arg(long, value_name = "FILE.html")]
    pub report: Option<PathBuf>,
    /// Keep this file up to date with the games done (JSON, rewritten at most once a
    /// second; `{shard}` as in `--out`): what `simulate status` reads.
    #[arg(long, value_name = "FILE")]
    pub progress: Option<PathBuf>,
    /// Refuse to play unless the packs and decks make this content hash (the one
    /// `simulate plan` saw), so a machine with other packs plays nothing.
    #[arg(long, value_name = "HASH")]
    pub expect_content: Option<String>,
}

/// A run made ready: its catalog, its configuration and what it plays with.
pub(super) struct Prepared {
    /// The catalog.
    pub catalog: crate::rules::Catalog,
    /// The run.
    pub config: crate::ai::simulate::Config,
    /// The hash of its packs and decks (`RunInfo::content`).
    pub content: String,
}

/// Load the content and the decks of a run (the shard not resolved yet: `shard` is
/// used as given).
pub(super) fn prepare(
    ctx: &Context,
    args: &SimulateArgs,
    shard: Option<(u32, u32)>,
) -> anyhow::Result<Prepared> {
    use crate::ai::simulate::{Config, DeckChoice};
    use crate::ai::{Budget, Options};

    let catalog = ctx.play_catalog()?;
    let saved = ctx.saved_decks()?;
    let scripts = crate::ai::hooks_for(&catalog);
    let engine = scripts.brain(&catalog);
    let mut draws = 0u64;
    let mut deck = |name: &str| -> anyhow::Result<DeckChoice> {
        if name == "random" {
            draws += 1;
            let seed = args
                .seed
                .wrapping_mul(0x9E37_79B9_7F4A_7C15)
                .wrapping_add(draws);
            let stacks = crate::ai::decks::random_content(&engine, seed)?;
            return Ok(DeckChoice {
                id: format!("random#{draws}"),
                stacks,
                per_game: false,
            });
        }
        if name == "random-each" {
            // Checked once here, so a content that cannot make a random deck is said now.
            crate::ai::decks::random_content(&engine, args.seed)?;
            return Ok(DeckChoice {
                id: "random-each".to_string(),
                stacks: Vec::new(),
                per_game: true,
            });
        }
        Ok(DeckChoice {
            id: name.to_string(),
            stacks: named_deck(&catalog, &saved, name).map_err(|e| {
                anyhow::anyhow!("{e}; `random` draws random content, `random-each` new random content every two games")
            })?,
            per_game: false,
        })
    };
    let budget = match (args.iterations, args.move_time) {
        (Some(n), _) => Budget::Iterations(n.max(1)),
        (None, Some(ms)) => Budget::Time(std::time::Duration::from_millis(ms.max(1))),
        (None, None) => Budget::Time(std::time::Duration::from_secs(1)),
    };
    let config = Config {
        deck_a: deck(args.deck_a.as_deref().unwrap_or_default())?,
        decks_b: args
            .deck_b
            .iter()
            .map(|d| deck(d))
            .collect::<anyhow::Result<_>>()?,
        ai_a: args.ai_a.into(),
        ai_b: args.ai_b.into(),
        games: args.games,
        seed: args.seed,
        threads: args.threads,
        options: Options {
            budget,
            omniscient: args.omniscient,
            scripts: crate::ai::ScriptLimits {
                instructions: args.ai_script_instructions,
                wall_ms: args.ai_script_ms,
            },
        },
        max_moves: args.max_moves.max(1),
        shard,
    };
    drop(engine);
    drop(scripts);
    let content = run_content(ctx, &catalog, &config);
    Ok(Prepared {
        catalog,
        config,
        content,
    })
}

/// What a run plays with, as one hash ([`cluster::content_hash`]): its packs and decks.
fn run_content(
    ctx: &Context,
    catalog: &crate::rules::Catalog,
    config: &crate::ai::simulate::Config,
) -> String {
    cluster::content_hash(
        ctx,
        catalog,
        std::iter::once(&config.deck_a).chain(&config.decks_b),
        &[],
    )
}

/// `tokensmith simulate`: play the games, print the report.
pub fn run(ctx: &Context, args: &SimulateArgs) -> anyhow::Result<ExitCode> {
    use crate::ai::simulate;

    let shard = cluster::resolve_shard(args.shard)?;
    let Prepared {
        catalog,
        config,
        content,
    } = prepare(ctx, args, shard)?;
    let out = args
        .out
        .as_deref()
        .map(|p| cluster::with_shard(p, config.shard))
        .transpose()?;
    let progress_path = args
        .progress
        .as_deref()
        .map(|p| cluster::with_shard(p, config.shard))
        .transpose()?;
    let planned = config.shard.map_or(config.games, |(k, n)| {
        simulate::shard_games(config.games, k, n)
    });
    cluster::expect_content(
        args.expect_content.as_deref(),
        &content,
        progress_path.as_deref(),
        config.shard,
        planned,
    )?;
    let progress = progress_path
        .as_deref()
        .map(|p| cluster::ProgressFile::start(p, config.shard, planned, &content))
        .transpose()?;
    let bar = if std::io::IsTerminal::is_terminal(&std::io::stderr()) {
        let bar = indicatif::ProgressBar::new(u64::from(planned));
        if let Ok(style) = indicatif::ProgressStyle::with_template(
            "{bar:40} {pos}/{len} games {per_sec} eta {eta}",
        ) {
            bar.set_style(style);
        }
        bar
    } else {
        indicatif::ProgressBar::hidden()
    };
    // This thread runs no games: its script host goes back to the pool the workers'
    // hosts come from.
    crate::ai::release_hosts();
    if let (_, Some(note)) = simulate::workers(&catalog, config.threads) {
        eprintln!("note: {note}");
    }
    let mut report = simulate::simulate(&catalog, &config, &|| {
        bar.inc(1);
        if let Some(p) = &progress {
            p.game_done();
        }
    });
    bar.finish_and_clear();
    if let Some(run) = report.totals.run.as_mut() {
        run.content = content;
    }
    if let Some(path) = &out {
        cluster::write_json(path, &report)?;
    }
    if let Some(path) = &args.report {
        let title = format!(
            "{} ({}) against {} ({})",
            args.deck_a.as_deref().unwrap_or("?"),
            crate::ai::Level::from(args.ai_a).name(),
            args.deck_b.join(", "),
            crate::ai::Level::from(args.ai_b).name()
        );
        super::balance::write_report(path, &crate::ai::report::simulate(&report, &title))?;
    }
    if let Some(p) = &progress {
        p.finish();
    }
    print_report(&report, args.json)
}

/// Print `report` as text or JSON.
fn print_report(report: &crate::ai::simulate::Report, json: bool) -> anyhow::Result<ExitCode> {
    let mut out = std::io::stdout().lock();
    if json {
        serde_json::to_writer_pretty(&mut out, report)?;
        writeln!(out)?;
    } else {
        write_report(&mut out, report)?;
    }
    Ok(ExitCode::SUCCESS)
}

fn write_report(
    out: &mut impl std::io::Write,
    r: &crate::ai::simulate::Report,
) -> std::io::Result<()> {
    let pct = |x: f64| format!("{:.1}%", 100.0 * x);
    if let Some(run) = &r.totals.run {
        let shards = if run.shards > 1 {
            let list: Vec<String> = r.totals.shards.iter().map(ToString::to_string).collect();
            format!(" (shard {} of {})", list.join(", "), run.shards)
        } else {
            String::new()
        };
        writeln!(
            out,
            "{} games{shards}: A ({} with {}) vs B ({} with {})",
            r.games,
            run.ai_a,
            run.deck_a,
            run.ai_b,
            run.decks_b.join(", ")
        )?;
    }
    writeln!(
        out,
        "A won {}, B won {}, {} draws",
        r.wins_a, r.wins_b, r.draws
    )?;
    writeln!(
        out,
        "A's win rate {} (95% CI {} to {}); first seat's win rate {}",
        pct(r.win_rate_a),
        pct(r.ci95_a[0]),
        pct(r.ci95_a[1]),
        pct(r.first_seat_win_rate)
    )?;
    writeln!(
        out,
        "average margin for A {:+.1}; {:.1} moves a game; {:.0} games/s",
        r.avg_margin_a, r.avg_moves, r.games_per_second
    )?;
    if r.capped_games > 0 {
        let pairs: Vec<String> = r
            .capped_pairings
            .iter()
            .map(|(p, n)| format!("{p}: {n}"))
            .collect();
        writeln!(
            out,
            "warning: {} of {} games reached the {}-move cap and count as draws ({}); these decks may never finish a game (--max-moves stops them sooner)",
            r.capped_games,
            r.games,
            r.max_moves,
            pairs.join(", ")
        )?;
    }
    if r.decisions_cut > 0 {
        writeln!(
            out,
            "warning: {} AI decisions ran out of their script budget and chose among the moves rated by then (--ai-script-instructions, --ai-script-ms)",
            r.decisions_cut
        )?;
    }
    if r.script_refusals > 0 {
        let broken = r.cards.iter().filter(|c| c.broken).count();
        writeln!(
            out,
            "warning: scripts refused {} moves ({broken} broken card(s), below); each was replaced by another legal move",
            r.script_refusals
        )?;
    }
    if r.engine_refusals > 0 {
        writeln!(
            out,
            "note: the engine refused {} moves the AI chose",
            r.engine_refusals
        )?;
    }
    // Game quality (src/ai/quality.rs).
    writeln!(out, "\ngame quality:")?;
    for line in r.quality.lines() {
        writeln!(out, "  {line}")?;
    }
    writeln!(out)?;
    writeln!(
        out,
        "{:<22} {:>7} {:>7} {:>6} {:>8} {:>9} {:>7}",
        "card", "played", "offered", "pick", "swing", "win rate", "refused"
    )?;
    let mut cards = r.cards.clone();
    cards.sort_by(|a, b| b.win_rate_when_played.total_cmp(&a.win_rate_when_played));
    for c in &cards {
        let verdict = if c.broken {
            format!(
                "  broken: {}",
                c.first_error.as_deref().unwrap_or("its script failed")
            )
        } else if c.dead {
            "  dead: almost never chosen".to_string()
        } else {
            String::new()
        };
        writeln!(
            out,
            "{:<22} {:>7} {:>7} {:>6} {:>8.1} {:>9} {:>7}{verdict}",
            c.id,
            c.played,
            c.offered,
            pct(c.pick_rate),
            c.avg_income_swing,
            pct(c.win_rate_when_played),
            c.refused
        )?;
    }
    if cards.iter().any(|c| c.dead) {
        writeln!(
            out,
            "dead: the AI rarely chose the card when it could; that is not how much it wins when played: `tokensmith balance CARD` measures that"
        )?;
    }
    Ok(())
}

/// `simulate merge`.
pub fn merge_reports(
    given: &[PathBuf],
    json: bool,
    out: Option<&std::path::Path>,
) -> anyhow::Result<ExitCode> {
    let files = &cluster::expand_folders(given, "`simulate --json` report")?;
    let mut parts = Vec::with_capacity(files.len());
    for f in files {
        let text = crate::fsutil::read_text(f, 64 << 20, "a simulation report")
            .with_context(|| format!("cannot read {}", crate::fsutil::shown(f)))?;
        #[derive(serde::Deserialize)]
        struct Shard {
            totals: crate::ai::simulate::Totals,
        }
        let shard: Shard = serde_json::from_str(&text).with_context(|| {
            format!(
                "{} is not a `simulate --json` report",
                crate::fsutil::shown(f)
            )
        })?;
        parts.push(shard.totals);
    }
    let report = crate::ai::simulate::merge(&parts)
        .map_err(|e| cluster::merge_refusal(files, e.report(), &e, "the first report"))?;
    if let Some(path) = out {
        cluster::write_json(path, &report)?;
    }
    print_report(&report, json)
}
