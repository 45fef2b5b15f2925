//! A fixed-size `balance` test split over machines: `balance --shard K/N --out FILE` plays
//! one shard's games (every deck's game numbers `g` with `g % N = K − 1`, with the card and
//! with the control, so every pair stays whole), `balance merge` puts the shards together
//! into exactly the report one machine gives, and `balance plan` writes the job files
//! (src/cli/cluster.rs, shared with `simulate`).
//!
//! Must not: merge shards of another test or other content, or give a report that differs
//! from the one-machine run's (the pairs are taken in the same order).

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use anyhow::Context as _;

use super::{BalanceArgs, Test, print_results};
use crate::ai::balance::{self, BalanceShard, SHARD_FORMAT, ShardRun};
use crate::ai::{Level, simulate};
use crate::cli::cluster::{self, ClusterArgs};
use crate::cli::context::Context;
use crate::rules::Catalog;

/// The most bytes one shard file may have.
const MAX_SHARD_BYTES: u64 = 64 << 20;

/// The most bytes one merge reads, all shard files together.
const MAX_MERGE_BYTES: u64 = 1 << 30;

/// What the shards of `tests` play with: the packs, the decks' cards, the cards judged and
/// the control given ([`cluster::content_hash`]).
fn content(ctx: &Context, catalog: &Catalog, tests: &[Test]) -> String {
    let mut decks: Vec<&simulate::DeckChoice> = Vec::new();
    for t in tests {
        for d in t.decks.iter().chain(&t.opponents) {
            if !decks.contains(&d) {
                decks.push(d);
            }
        }
    }
    let cards: Vec<&str> = tests
        .iter()
        .map(|t| catalog.card(t.card).meta.id.as_str())
        .collect();
    let control = tests
        .first()
        .and_then(|t| t.control)
        .map_or("-", |c| catalog.card(c).meta.id.as_str());
    let mut cards_line = vec!["cards"];
    cards_line.extend(cards);
    cluster::content_hash(ctx, catalog, decks, &[&cards_line, &["control", control]])
}

/// What identifies the test of `args`.
fn shard_run(catalog: &Catalog, args: &BalanceArgs, tests: &[Test], shards: u32) -> ShardRun {
    let decks = tests
        .first()
        .map(|t| t.decks.iter().map(|d| d.id.clone()).collect())
        .unwrap_or_default();
    ShardRun {
        pack: args.pack.clone(),
        cards: tests
            .iter()
            .map(|t| catalog.card(t.card).meta.id.clone())
            .collect(),
        control: tests
            .first()
            .and_then(|t| t.control)
            .map(|c| catalog.card(c).meta.id.clone()),
        decks,
        games: args.games.max(1),
        ai: Level::from(args.ai).name().to_string(),
        seed: args.seed,
        budget: format!("{} iterations", args.iterations.max(1)),
        shards,
        content: String::new(),
    }
}

/// The games a shard of `tests` plays: each deck of each card, with the card and with the
/// control, the shard's game numbers.
fn planned(tests: &[Test], shard: (u32, u32)) -> u32 {
    let per_number: u64 = tests.iter().map(|t| 2 * t.decks.len() as u64).sum();
    let numbers = u64::from(simulate::shard_games(
        tests.first().map_or(0, |t| t.games),
        shard.0,
        shard.1,
    ));
    u32::try_from(per_number * numbers).unwrap_or(u32::MAX)
}

/// `balance --shard K/N` (or `--out`, `--progress` alone: the whole test as one shard).
pub(super) fn run(
    ctx: &Context,
    catalog: &Catalog,
    args: &BalanceArgs,
    tests: &[Test],
) -> anyhow::Result<ExitCode> {
    let started = Instant::now();
    let shard = cluster::resolve_shard(args.shard)?.unwrap_or((1, 1));
    let games = args.games.max(1);
    if shard.1 > games {
        anyhow::bail!(
            "shard {} of {}: a test of {games} games a deck has at most {games} shards",
            shard.0,
            shard.1
        );
    }
    let out = args
        .out
        .as_deref()
        .map(|p| cluster::with_shard(p, Some(shard)))
        .transpose()?;
    let progress_path = args
        .progress
        .as_deref()
        .map(|p| cluster::with_shard(p, Some(shard)))
        .transpose()?;
    let content = content(ctx, catalog, tests);
    let planned = planned(tests, shard);
    cluster::expect_content(
        args.expect_content.as_deref(),
        &content,
        progress_path.as_deref(),
        Some(shard),
        planned,
    )?;
    let progress = progress_path
        .as_deref()
        .map(|p| cluster::ProgressFile::start(p, Some(shard), planned, &content))
        .transpose()?;
    let bar = super::games_bar(u64::from(planned));
    let tick = || {
        bar.inc(1);
        if let Some(p) = &progress {
            p.game_done();
        }
    };
    // This thread runs no games: its script host goes back to the pool the workers'
    // hosts come from.
    crate::ai::release_hosts();
    let mut cards = Vec::with_capacity(tests.len());
    for test in tests {
        bar.set_message(catalog.card(test.card).meta.id.clone());
        cards.push(balance::run_shard(catalog, test, shard, &tick)?);
    }
    bar.finish_and_clear();
    let mut run = shard_run(catalog, args, tests, shard.1);
    run.content = content;
    let document = BalanceShard {
        format: SHARD_FORMAT,
        run,
        shard: shard.0,
        cards,
        seconds: started.elapsed().as_secs_f64(),
    };
    if let Some(path) = &out {
        cluster::write_json(path, &document)?;
    }
    if let Some(p) = &progress {
        p.finish();
    }
    if shard.1 == 1 {
        // The whole test: its report, as a test on one machine prints it.
        let reports = balance::merge_shards(std::slice::from_ref(&document))?;
        return print_results(
            reports,
            args.pack.as_deref(),
            &document.run.ai,
            args.json,
            args.report.as_deref(),
        );
    }
    if args.json {
        let mut stdout = std::io::stdout().lock();
        serde_json::to_writer_pretty(&mut stdout, &document)?;
        std::io::Write::write_all(&mut stdout, b"\n")?;
    } else {
        println!(
            "shard {} of {}: {planned} games ({} card(s), each deck with the card and with the control){}; put the shards together with `balance merge`",
            shard.0,
            shard.1,
            document.cards.len(),
            out.as_deref()
                .map(|p| format!(", written to {}", crate::fsutil::shown(p)))
                .unwrap_or_default()
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// `balance merge`.
pub(super) fn merge(given: &[PathBuf], json: bool, out: Option<&Path>) -> anyhow::Result<ExitCode> {
    let files = cluster::expand_folders(given, "`balance --shard K/N --out FILE` file")?;
    let mut shards = Vec::with_capacity(files.len());
    let mut read = 0u64;
    for f in &files {
        let shown = crate::fsutil::shown(f);
        let text = crate::fsutil::read_text(f, MAX_SHARD_BYTES, "a balance shard")
            .with_context(|| format!("cannot read {shown}"))?;
        read += text.len() as u64;
        anyhow::ensure!(
            read <= MAX_MERGE_BYTES,
            "the shard files up to {shown} hold more than {} MiB together: merge fewer at once",
            MAX_MERGE_BYTES >> 20
        );
        let shard: BalanceShard = serde_json::from_str(&text).map_err(|e| {
            anyhow::anyhow!(
                "{shown}:{}:{}: not a `balance --shard K/N --out FILE` file: {e}",
                e.line(),
                e.column()
            )
        })?;
        shards.push(shard);
    }
    let mut reports = balance::merge_shards(&shards)
        .map_err(|e| cluster::merge_refusal(&files, e.shard_file(), &e, "the first shard"))?;
    let run = &shards[0].run;
    let table = run.pack.is_some();
    super::strongest_first(&mut reports);
    if let Some(path) = out {
        if table {
            cluster::write_json(path, &reports)?;
        } else if let Some(r) = reports.first() {
            cluster::write_json(path, r)?;
        }
    }
    print_results(reports, run.pack.as_deref(), &run.ai, json, None)
}

/// `balance plan`.
#[derive(Debug, clap::Args)]
pub struct PlanArgs {
    /// How to run on the cluster.
    #[command(flatten)]
    pub cluster: ClusterArgs,
    /// The test.
    #[command(flatten)]
    pub run: BalanceArgs,
}

/// The options of `balance` that make the test (not the shard, the output or the threads).
fn plan_words(a: &BalanceArgs) -> Vec<String> {
    let mut v = Vec::new();
    match (&a.card, &a.pack) {
        (Some(card), _) => v.push(card.clone()),
        (None, Some(pack)) => v.extend(["--pack".into(), pack.clone()]),
        (None, None) => {}
    }
    for d in &a.deck {
        v.extend(["--deck".into(), d.clone()]);
    }
    if let Some(c) = &a.control {
        v.extend(["--control".into(), c.clone()]);
    }
    v.extend([
        "--games".into(),
        a.games.max(1).to_string(),
        "--ai".into(),
        cluster::level_word(a.ai),
        "--seed".into(),
        a.seed.to_string(),
        "--iterations".into(),
        a.iterations.max(1).to_string(),
    ]);
    v
}

/// `balance plan`: the job files of a sharded test (src/cli/cluster.rs).
pub(super) fn plan(ctx: &Context, args: &PlanArgs) -> anyhow::Result<ExitCode> {
    let run = &args.run;
    cluster::refuse_shard_options(
        "balance",
        &[
            (run.shard.is_some(), "--shard"),
            (run.out.is_some(), "--out"),
            (run.progress.is_some(), "--progress"),
            (run.expect_content.is_some(), "--expect-content"),
        ],
    )?;
    for (given, option) in [
        (run.sequential, "--sequential"),
        (run.tune.is_some(), "--tune"),
        (run.variants.is_some(), "--variants"),
    ] {
        anyhow::ensure!(
            !given,
            "balance plan runs a fixed-size test: {option} decides from every game played so far, so its games cannot be split over machines; run it on one machine"
        );
    }
    let games = run.games.max(1);
    let dir = cluster::plan_folder(&args.cluster, games, "games a deck")?;
    // The content and decks are loaded here, so a test that cannot start is said now, and
    // the hash every shard must make is known.
    let catalog = ctx.play_catalog()?;
    let chosen = super::chosen(ctx, &catalog, run)?;
    let tests = super::tests(&catalog, run, &chosen)?;
    let per_number: u64 = tests.iter().map(|t| 2 * t.decks.len() as u64).sum();
    let job = cluster::Job {
        command: "balance",
        run: plan_words(run),
        games,
        per_number: u32::try_from(per_number).unwrap_or(u32::MAX),
        content: content(ctx, &catalog, &tests),
        what: format!(
            "a test of {} card(s), {games} games a deck and variant ({} games)",
            tests.len(),
            per_number * u64::from(games)
        ),
    };
    cluster::plan(ctx, &args.cluster, &dir, &job)
}
