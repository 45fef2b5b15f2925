//! `tokensmith balance`: is a card too strong? Paired games with the card and with a
//! control card in its slot (src/ai/balance.rs; docs/ai.md, "Judging one card").

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use super::args::LevelArg;
use super::cluster;
use super::context::{Context, named_deck};
use crate::ai::balance::{self, BalanceReport, SequentialReport, Test};
use crate::ai::sequential::Design;
use crate::ai::simulate::DeckChoice;
use crate::ai::{Budget, Level, Options};
use crate::ai::{race, tune, variants};
use crate::rules::{CardId, Catalog};

mod shard;

/// `tokensmith balance`: a test, or `balance merge`, `plan` or `status`.
#[derive(Debug, clap::Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct BalanceCommand {
    /// `merge`, `plan`, `status`.
    #[command(subcommand)]
    pub sub: Option<BalanceSub>,
    /// A test's options.
    #[command(flatten)]
    pub args: BalanceArgs,
}

/// `tokensmith balance merge`, `plan`, `status`.
#[derive(Debug, clap::Subcommand)]
pub enum BalanceSub {
    /// Put the shards of a test (`--shard K/N --out FILE`, every K once) together into
    /// the report the whole test gives on one machine. A folder stands for every `.json`
    /// file in it.
    Merge {
        /// The shard files, or folders of them.
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
        /// Also write the merged report, as JSON, to this file (atomically).
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
    },
    /// Write the job files that run this test as an array job on a cluster (Slurm, and a
    /// Kubernetes Indexed Job), each with its dependent merge (docs/ai.md, "Spreading a
    /// run over machines").
    Plan(Box<shard::PlanArgs>),
    /// How far a planned test is: games done of games planned, shard by shard.
    Status {
        /// The plan's folder (`balance plan --dir DIR`).
        dir: PathBuf,
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
    },
}

/// `tokensmith balance merge|plan|status`.
pub fn sub(ctx: &Context, sub: &BalanceSub) -> anyhow::Result<ExitCode> {
    match sub {
        BalanceSub::Merge { files, json, out } => shard::merge(files, *json, out.as_deref()),
        BalanceSub::Plan(args) => shard::plan(ctx, args),
        BalanceSub::Status { dir, json } => cluster::status(dir, *json),
    }
}

/// Options of `tokensmith balance`.
#[derive(Debug, clap::Args)]
pub struct BalanceArgs {
    /// The card (`hunter` or `example_scripted:hunter`).
    #[arg(required_unless_present = "pack", conflicts_with = "pack")]
    pub card: Option<String>,
    /// Judge every card of this pack instead, in a table sorted by effect.
    #[arg(long, value_name = "ID")]
    pub pack: Option<String>,
    /// Try the card in this deck (repeat for several; default: every deck of the loaded
    /// packs). The decks also serve as the opponents.
    #[arg(long, value_name = "ID")]
    pub deck: Vec<String>,
    /// The control card put in the card's slot (default: a plain card of the same value,
    /// no ability and a plain token type, made for the test; where the content has no
    /// plain token type, per deck the card with no ability nearest in value that is not in
    /// the deck).
    #[arg(long, value_name = "ID")]
    pub control: Option<String>,
    /// Games per deck, per variant (A takes each seat in turn); with `--sequential`, the
    /// most it plays.
    #[arg(long, default_value_t = 200)]
    pub games: u32,
    /// Stop as soon as the verdict is decided at the error rates `--alpha` and `--beta`
    /// for effects of `--effect` points (a sequential probability ratio test on the
    /// pairs), instead of always playing `--games`.
    #[arg(long)]
    pub sequential: bool,
    /// With `--sequential` or `--tune`: the chance of calling a card without effect
    /// strong or weak (default 0.05).
    #[arg(long, value_name = "RATE")]
    pub alpha: Option<f64>,
    /// With `--sequential` or `--tune`: the chance of missing an effect of `--effect`
    /// points or more (default 0.05).
    #[arg(long, value_name = "RATE")]
    pub beta: Option<f64>,
    /// With `--sequential` or `--tune`: the smallest effect worth finding, in win-rate
    /// points (default 5).
    #[arg(long, value_name = "POINTS")]
    pub effect: Option<f64>,
    /// Both sides' AI.
    #[arg(long, value_enum, default_value = "greedy")]
    pub ai: LevelArg,
    /// Seed.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Worker threads (0: every core).
    #[arg(long, default_value_t = 0)]
    pub threads: usize,
    /// Search iterations per move for `hard` (reproducible; default 300).
    #[arg(long, value_name = "N", default_value_t = 300)]
    pub iterations: u32,
    /// Find the value of this whole-number field at which the card's effect is within
    /// noise of zero: `value`, `ability.KEY` (its ability's, such as `ability.amount`) or
    /// `token.KEY` (its token type's, such as `token.income_multiplier`). Each value is a
    /// patch of the card, judged by a sequential test (`--alpha`, `--beta`, `--effect`).
    #[arg(long, value_name = "FIELD", conflicts_with = "pack")]
    pub tune: Option<String>,
    /// With `--tune`: the values to search, `LO..HI` (default for `value`: 1 to twice the
    /// card's value plus 2; for `token.income_multiplier`: 0 to twice it plus 2).
    #[arg(
        long,
        value_name = "LO..HI",
        requires = "tune",
        allow_hyphen_values = true
    )]
    pub range: Option<String>,
    /// With `--tune`: the second AI level the answer is checked at.
    #[arg(long, value_enum, value_name = "LEVEL", requires = "tune")]
    pub check_ai: Option<LevelArg>,
    /// Race the variants of this file (named sets of patches, written as a pack writes
    /// them) on the same games, dropping those clearly farther from fair as the games
    /// come in, and rank them; `--alpha` is the chance of dropping the one nearest to
    /// fair, `--effect` the difference that no longer matters.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["pack", "tune"])]
    pub variants: Option<std::path::PathBuf>,
    /// Also write a self-contained HTML page with plots to this file: each card's effect
    /// with its interval, the tuning curve, or the race.
    #[arg(long, value_name = "FILE.html")]
    pub report: Option<std::path::PathBuf>,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
    /// Play only shard K of N of a fixed-size test (K from 1): game g of each deck and
    /// variant when g % N = K − 1. Put the shards together with `balance merge`. `auto`
    /// takes K and N from a Slurm array job, a Kubernetes Indexed Job or an AWS Batch
    /// array job (the last two with TOKENSMITH_SHARD_COUNT set).
    #[arg(long, value_name = "K/N|auto", value_parser = cluster::parse_shard,
          conflicts_with_all = ["sequential", "tune", "variants"])]
    pub shard: Option<cluster::ShardArg>,
    /// Write the shard's games, as JSON, to this file (atomically; its folder is made):
    /// what `balance merge` reads. A `{shard}` in the name becomes the shard's number.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["sequential", "tune", "variants"])]
    pub out: Option<PathBuf>,
    /// Keep this file up to date with the games done (JSON, rewritten at most once a
    /// second; `{shard}` as in `--out`): what `balance status` reads.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["sequential", "tune", "variants"])]
    pub progress: Option<PathBuf>,
    /// Refuse to play unless the packs, decks and cards make this content hash (the one
    /// `balance plan` saw), so a machine with other packs plays nothing.
    #[arg(long, value_name = "HASH")]
    pub expect_content: Option<String>,
}

/// `tokensmith balance`.
pub fn run(ctx: &Context, args: &BalanceArgs) -> anyhow::Result<ExitCode> {
    let catalog = ctx.play_catalog()?;
    let sequential = args.sequential || args.tune.is_some() || args.variants.is_some();
    let given = [
        ("alpha", args.alpha),
        ("beta", args.beta),
        ("effect", args.effect),
    ];
    if let Some((name, _)) = given.iter().find(|(_, v)| !sequential && v.is_some()) {
        anyhow::bail!(
            "--{name} sets the sequential test: give it with --sequential, --tune or --variants"
        );
    }
    let design = sequential
        .then(|| {
            Design::new(
                args.alpha.unwrap_or(0.05),
                args.beta.unwrap_or(0.05),
                args.effect.unwrap_or(5.0) / 100.0,
            )
        })
        .transpose()?;
    let chosen = chosen(ctx, &catalog, args)?;
    if let (Some(field), Some(design), [card]) = (&args.tune, &design, &chosen.cards[..]) {
        return tune(
            ctx,
            &catalog,
            *card,
            field,
            *design,
            &chosen.decks,
            chosen.control,
            args,
        );
    }
    if let (Some(file), Some(design), [card]) = (&args.variants, &design, &chosen.cards[..]) {
        return race(
            ctx,
            &catalog,
            *card,
            file,
            *design,
            &chosen.decks,
            chosen.control,
            args,
        );
    }
    let tests = tests(&catalog, args, &chosen)?;
    if args.shard.is_some() || args.out.is_some() || args.progress.is_some() {
        return shard::run(ctx, &catalog, args, &tests);
    }
    anyhow::ensure!(
        args.expect_content.is_none(),
        "--expect-content checks a shard's content: give it with --shard (or --out)"
    );
    let games: u64 = tests
        .iter()
        .map(|t| u64::from(t.games) * 2 * t.decks.len() as u64)
        .sum();
    let bar = games_bar(games);
    let mut results = Vec::with_capacity(tests.len());
    for test in &tests {
        bar.set_message(catalog.card(test.card).meta.id.clone());
        results.push(match &design {
            Some(d) => balance::run_sequential(&catalog, test, d, &|| bar.inc(1))?,
            None => balance::run(&catalog, test, &|| bar.inc(1))?,
        });
    }
    bar.finish_and_clear();
    print_results(
        results,
        args.pack.as_deref(),
        Level::from(args.ai).name(),
        args.json,
        args.report.as_deref(),
    )
}

/// What a test is of: its cards, decks and control.
struct Chosen {
    cards: Vec<CardId>,
    decks: Vec<DeckChoice>,
    control: Option<CardId>,
}

/// The cards, decks and control `args` name.
fn chosen(ctx: &Context, catalog: &Catalog, args: &BalanceArgs) -> anyhow::Result<Chosen> {
    let card_id = |name: &str| -> anyhow::Result<CardId> {
        catalog.card_named(name).map_err(|e| anyhow::anyhow!("{e}"))
    };
    let cards: Vec<CardId> = match (&args.card, &args.pack) {
        (Some(c), _) => vec![card_id(c)?],
        (None, Some(p)) => {
            anyhow::ensure!(
                catalog.packs().iter().any(|i| &i.id == p),
                "no pack '{p}' is loaded (enable it, or give --packs {p})"
            );
            catalog
                .card_ids()
                .filter(|&c| catalog.card(c).meta.origin.pack == *p)
                .collect()
        }
        (None, None) => anyhow::bail!("give a card, or --pack ID"),
    };
    anyhow::ensure!(!cards.is_empty(), "the pack has no cards");
    Ok(Chosen {
        cards,
        decks: decks(ctx, catalog, &args.deck)?,
        control: args.control.as_deref().map(card_id).transpose()?,
    })
}

/// The fixed-size tests of `args`, one a card.
fn tests(catalog: &Catalog, args: &BalanceArgs, chosen: &Chosen) -> anyhow::Result<Vec<Test>> {
    chosen
        .cards
        .iter()
        .map(|&card| test_of(catalog, args, card, chosen.control, &chosen.decks))
        .collect()
}

/// The test of `card` against `control` in `decks` with `args`' games, level, seed and
/// budget. With a control given and no `--deck`, only the decks where the card and the
/// control both fit the same slot (the others named on the standard error).
fn test_of(
    catalog: &Catalog,
    args: &BalanceArgs,
    card: CardId,
    control: Option<CardId>,
    decks: &[DeckChoice],
) -> anyhow::Result<Test> {
    let decks = match control {
        // A deck holding the control already would hold it twice. Decks given with
        // --deck are used as given (or refused).
        Some(c) if args.deck.is_empty() => fitting(catalog, card, c, decks)?,
        _ => decks.to_vec(),
    };
    Ok(Test {
        card,
        control,
        decks: decks.clone(),
        opponents: decks,
        games: args.games.max(1),
        level: args.ai.into(),
        seed: args.seed,
        threads: args.threads,
        options: Options {
            budget: Budget::Iterations(args.iterations.max(1)),
            omniscient: false,
            scripts: crate::ai::ScriptLimits::DEFAULT,
        },
    })
}

/// A progress bar of `games` games on a terminal (hidden elsewhere).
fn games_bar(games: u64) -> indicatif::ProgressBar {
    if !std::io::IsTerminal::is_terminal(&std::io::stderr()) {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new(games);
    if let Ok(style) =
        indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} games {msg} eta {eta}")
    {
        bar.set_style(style);
    }
    bar
}

/// Order a pack's results as its table shows them: the strongest card first.
fn strongest_first(results: &mut [BalanceReport]) {
    results.sort_by(|a, b| b.effect.total_cmp(&a.effect));
}

/// Print the results of a test: one card's report, or (`table`) a pack's cards strongest
/// first; as text (`level` names both sides' AI) or JSON.
/// With `report`, also as an HTML page.
fn print_results(
    mut results: Vec<BalanceReport>,
    pack: Option<&str>,
    level: &str,
    json: bool,
    report: Option<&std::path::Path>,
) -> anyhow::Result<ExitCode> {
    let table = pack.is_some();
    strongest_first(&mut results);
    if let Some(path) = report {
        write_report(path, &crate::ai::report::balance(&results, level, pack))?;
    }
    let mut out = std::io::stdout().lock();
    if json {
        if table {
            serde_json::to_writer_pretty(&mut out, &results)?;
        } else if let Some(r) = results.first() {
            serde_json::to_writer_pretty(&mut out, r)?;
        }
        writeln!(out)?;
    } else if table {
        self::table(&mut out, &results, level)?;
    } else if let Some(r) = results.first() {
        one(&mut out, r, level)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `balance CARD --tune FIELD`: the fair value at `--ai` and at `--check-ai`.
#[allow(clippy::too_many_arguments)]
fn tune(
    ctx: &Context,
    catalog: &Catalog,
    card: CardId,
    field: &str,
    design: Design,
    decks: &[DeckChoice],
    control: Option<CardId>,
    args: &BalanceArgs,
) -> anyhow::Result<ExitCode> {
    let field = tune::Field::parse(field)?;
    field.check(catalog, card)?;
    let range = match (&args.range, field.current(catalog, card)) {
        (Some(r), _) => parse_range(r)?,
        (None, Some(v)) => field.default_range(v),
        (None, None) => anyhow::bail!(
            "--tune {}: give the values to search with --range LO..HI (the current value of this field is not known without it)",
            field.name()
        ),
    };
    let main = Level::from(args.ai);
    let mut levels = vec![main];
    let check = args.check_ai.map_or(Level::Easy, Level::from);
    if check != main {
        levels.push(check);
    }
    let job = tune::Job {
        test: test_of(catalog, args, card, control, decks)?,
        field: field.clone(),
        range,
        design,
        levels,
    };
    let options = ctx.play_options();
    let make = |v: i64| tune::patched(&options, catalog, card, &field, v);
    let bar = if std::io::IsTerminal::is_terminal(&std::io::stderr()) {
        let bar = indicatif::ProgressBar::new_spinner();
        if let Ok(style) = indicatif::ProgressStyle::with_template("{spinner} {pos} games {msg}") {
            bar.set_style(style);
        }
        bar.set_message(format!("tuning {}", field.name()));
        bar
    } else {
        indicatif::ProgressBar::hidden()
    };
    let report = tune::tune(catalog, &job, &make, &|| bar.inc(1))?;
    bar.finish_and_clear();
    if let Some(path) = &args.report {
        write_report(path, &crate::ai::report::tune(&report))?;
    }
    let mut out = std::io::stdout().lock();
    if args.json {
        serde_json::to_writer_pretty(&mut out, &report)?;
        writeln!(out)?;
    } else {
        tuned(&mut out, &report)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `balance CARD --variants FILE`: the variants raced and ranked.
#[allow(clippy::too_many_arguments)]
fn race(
    ctx: &Context,
    catalog: &Catalog,
    card: CardId,
    file: &std::path::Path,
    design: Design,
    decks: &[DeckChoice],
    control: Option<CardId>,
    args: &BalanceArgs,
) -> anyhow::Result<ExitCode> {
    let variants = variants::read(file)?;
    let options = ctx.play_options();
    let entrants = variants
        .iter()
        .map(|v| {
            Ok(race::Entrant {
                name: v.name.clone(),
                changes: v.changes(),
                content: variants::patched(&options, catalog, file, v)?,
            })
        })
        .collect::<Result<Vec<_>, variants::VariantsError>>()?;
    let test = test_of(catalog, args, card, control, decks)?;
    let bar = if std::io::IsTerminal::is_terminal(&std::io::stderr()) {
        let bar = indicatif::ProgressBar::new_spinner();
        if let Ok(style) = indicatif::ProgressStyle::with_template("{spinner} {pos} games {msg}") {
            bar.set_style(style);
        }
        bar.set_message(format!("racing {} variants", entrants.len()));
        bar
    } else {
        indicatif::ProgressBar::hidden()
    };
    let report = race::race(catalog, &test, &design, &entrants, &|| bar.inc(1))?;
    bar.finish_and_clear();
    if let Some(path) = &args.report {
        write_report(
            path,
            &crate::ai::report::race(&report, Level::from(args.ai).name()),
        )?;
    }
    let mut out = std::io::stdout().lock();
    if args.json {
        serde_json::to_writer_pretty(&mut out, &report)?;
        writeln!(out)?;
    } else {
        raced(&mut out, &report, args)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// A race in words: how it ran, the ranking, and each variant's patches.
fn raced(
    out: &mut impl std::io::Write,
    r: &race::RaceReport,
    args: &BalanceArgs,
) -> std::io::Result<()> {
    let level = Level::from(args.ai).name();
    writeln!(
        out,
        "{}: {} variants raced against {} ({level} vs {level}, both seats; alpha {}%, effect {} points)",
        r.card,
        r.variants.len(),
        r.control,
        100.0 * r.alpha,
        100.0 * r.effect
    )?;
    let shared = r.variants.iter().filter(|s| s.shared_control).count();
    writeln!(
        out,
        "stopped after {} rounds: {}; {} games in {:.1} s ({shared} of {} variants shared the control games)",
        r.rounds,
        r.stopped.words(),
        r.games,
        r.seconds,
        r.variants.len()
    )?;
    writeln!(
        out,
        "{:>4}  {:<24} {:>8} {:>17} {:>6}  verdict",
        "rank", "variant", "effect", "95% CI", "pairs"
    )?;
    for s in &r.variants {
        let dropped = s
            .dropped
            .as_ref()
            .map(|d| {
                format!(
                    "; dropped at round {}, farther from fair than '{}'",
                    d.round,
                    crate::rules::echo(&d.by)
                )
            })
            .unwrap_or_default();
        writeln!(
            out,
            "{:>4}  {:<24} {:>8} {:>17} {:>6}  {}{dropped}",
            s.rank,
            crate::rules::echo_within(&s.name, 24),
            pct(s.effect),
            format!("{} to {}", bound(s.ci95[0]), bound(s.ci95[1])),
            s.pairs,
            s.verdict.words()
        )?;
    }
    writeln!(out, "variants:")?;
    for s in &r.variants {
        let changes = if s.changes.is_empty() {
            "the content as loaded".to_string()
        } else {
            s.changes.join("; ")
        };
        writeln!(out, "  {}: {changes}", crate::rules::echo(&s.name))?;
    }
    Ok(())
}

/// Write the HTML report `html` to `path`, atomically (its folder made if missing), and
/// say where on the standard error.
pub(super) fn write_report(path: &std::path::Path, html: &str) -> anyhow::Result<()> {
    use anyhow::Context as _;
    let shown = crate::fsutil::shown(path);
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("cannot make the folder of the report {shown}"))?;
    }
    crate::fsutil::write_atomic(path, html.as_bytes())
        .with_context(|| format!("cannot write the report {shown}"))?;
    eprintln!("report written to {shown}");
    Ok(())
}

/// `LO..HI`, whole numbers.
fn parse_range(text: &str) -> anyhow::Result<[i64; 2]> {
    let bad = || {
        anyhow::anyhow!(
            "--range {text}: give two whole numbers, the lowest first, as LO..HI (such as 0..10)"
        )
    };
    let (lo, hi) = text.split_once("..").ok_or_else(bad)?;
    let (lo, hi) = (
        lo.trim().parse::<i64>().map_err(|_| bad())?,
        hi.trim().parse::<i64>().map_err(|_| bad())?,
    );
    anyhow::ensure!(lo < hi, bad());
    anyhow::ensure!(
        hi - lo <= 10_000,
        "--range {text}: at most 10000 values apart (each value tried is a run of games)"
    );
    Ok([lo, hi])
}

/// A tuning in words: per level the answer and the curve.
fn tuned(out: &mut impl std::io::Write, r: &tune::TuneReport) -> std::io::Result<()> {
    let current = r.current.map(|v| format!(" (now {v})")).unwrap_or_default();
    writeln!(
        out,
        "{} {}{current}: searched {} to {} against {}",
        r.card, r.field, r.range[0], r.range[1], r.control
    )?;
    for t in &r.levels {
        match (t.value, t.interval, &t.no_fair_value) {
            (Some(v), Some([a, b]), _) => writeln!(
                out,
                "{}: fair at {v} (fair from {a} to {b}); {} pairs ({} games) in {:.1} s",
                t.level,
                t.pairs,
                2 * t.pairs,
                t.seconds
            )?,
            (_, _, why) => writeln!(
                out,
                "{}: no fair value: {}; {} pairs ({} games) in {:.1} s",
                t.level,
                why.as_deref().unwrap_or("none found"),
                t.pairs,
                2 * t.pairs,
                t.seconds
            )?,
        }
        writeln!(
            out,
            "  {:>6} {:>8} {:>17} {:>6}  verdict",
            r.field.rsplit('.').next().unwrap_or("value"),
            "effect",
            "95% CI",
            "pairs"
        )?;
        for p in &t.curve {
            writeln!(
                out,
                "  {:>6} {:>8} {:>17} {:>6}  {}{}",
                p.value,
                pct(p.effect),
                format!("{} to {}", bound(p.ci95[0]), bound(p.ci95[1])),
                p.pairs,
                p.verdict.words(),
                if p.decided {
                    ""
                } else {
                    " (undecided at the cap)"
                }
            )?;
        }
    }
    if r.levels_disagree {
        writeln!(
            out,
            "the levels disagree: AI play is not human play; look at both, and at the games"
        )?;
    } else if r.levels.len() > 1 {
        writeln!(out, "the levels agree")?;
    }
    Ok(())
}

/// The decks of `decks` where `card` and `control` both fit the same slot; each left out
/// is named on the standard error. None: an error saying to pass `--deck`.
fn fitting(
    catalog: &Catalog,
    card: CardId,
    control: CardId,
    decks: &[DeckChoice],
) -> anyhow::Result<Vec<DeckChoice>> {
    let mut fit = Vec::new();
    let mut left = Vec::new();
    for d in decks {
        match balance::swap_fits(catalog, card, control, &d.stacks) {
            Ok(()) => fit.push(d.clone()),
            Err(why) => left.push(format!("'{}' ({why})", d.id)),
        }
    }
    let control_name = &catalog.card(control).meta.id;
    if fit.is_empty() {
        anyhow::bail!(
            "no deck of the loaded packs can take {} and the control {control_name} in the same slot: {}; give a deck that does not hold {control_name} with --deck ID (a saved deck or a pack's deck), or another --control",
            catalog.card(card).meta.id,
            left.join("; ")
        );
    }
    for l in &left {
        eprintln!("note: deck {l} is left out: it holds the control {control_name} already");
    }
    Ok(fit)
}

fn decks(ctx: &Context, catalog: &Catalog, names: &[String]) -> anyhow::Result<Vec<DeckChoice>> {
    if names.is_empty() {
        return Ok(catalog
            .decks()
            .iter()
            .map(|d| DeckChoice {
                id: d.meta.id.clone(),
                stacks: d.stacks.clone(),
                per_game: false,
            })
            .collect());
    }
    let saved = ctx.saved_decks()?;
    names
        .iter()
        .map(|n| {
            Ok(DeckChoice {
                id: n.clone(),
                stacks: named_deck(catalog, &saved, n)?,
                per_game: false,
            })
        })
        .collect()
}

fn pct(x: f64) -> String {
    format!("{:+.1}", 100.0 * x)
}

/// An interval's bound in points, with enough decimals that a bound which is not zero
/// does not print as zero: the printed interval touches zero only when it holds it.
fn bound(x: f64) -> String {
    let v = 100.0 * x;
    for decimals in 1..=3 {
        let text = format!("{v:+.decimals$}");
        let zero = text
            .trim_start_matches(['+', '-'])
            .chars()
            .all(|c| c == '0' || c == '.');
        if !zero || v == 0.0 {
            return text;
        }
    }
    format!("{v:+.1e}")
}

/// How `balance` and `simulate` relate, said under each result.
pub const RELATION: &str = "balance measures what the card does when it is played (the win-rate margin over a control in its slot); simulate's pick rate says how often the AI chooses it. A card greedy rarely picks (`dead` in simulate) can still be strong here: it wins when it is played.";

fn one(out: &mut impl std::io::Write, r: &BalanceReport, level: &str) -> std::io::Result<()> {
    writeln!(
        out,
        "{}: {} ({} paired games per variant, {} vs {}, both seats)",
        r.card,
        r.verdict.words(),
        r.pairs,
        level,
        level
    )?;
    writeln!(
        out,
        "win rate with it {:.1}%, with the control {:.1}%: effect {} points (95% CI {} to {})",
        100.0 * r.win_rate_with,
        100.0 * r.win_rate_control,
        pct(r.effect),
        bound(r.ci95[0]),
        bound(r.ci95[1])
    )?;
    if let Some(s) = &r.sequential {
        writeln!(out, "{}", stopped(r.pairs, s))?;
    }
    writeln!(out, "{RELATION}")?;
    writeln!(out)?;
    writeln!(
        out,
        "{:<18} {:<18} {:>9} {:>9}",
        "deck", "control", "with", "control"
    )?;
    for d in &r.decks {
        writeln!(
            out,
            "{:<18} {:<18} {:>8.1}% {:>8.1}%",
            d.deck,
            d.control,
            100.0 * d.win_rate_with,
            100.0 * d.win_rate_control
        )?;
    }
    Ok(())
}

/// How a sequential test stopped, in words.
fn stopped(pairs: u32, s: &SequentialReport) -> String {
    let design = format!(
        "alpha {}%, beta {}%, effect {} points",
        100.0 * s.alpha,
        100.0 * s.beta,
        100.0 * s.effect
    );
    let fixed = format!(
        "a fixed-size test at the same error rates needs {} pairs at this spread",
        s.fixed_pairs
    );
    if s.decided {
        format!(
            "sequential: decided after {pairs} of at most {} pairs ({} rounds; {design}); {fixed} ({:.0}% saved)",
            s.cap_pairs,
            s.rounds,
            100.0 * s.saved
        )
    } else {
        format!(
            "sequential: not decided within {pairs} pairs (the cap: --games per deck; {design}), so the verdict is the interval's; {fixed}: raise --games"
        )
    }
}

fn table(
    out: &mut impl std::io::Write,
    results: &[BalanceReport],
    level: &str,
) -> std::io::Result<()> {
    writeln!(
        out,
        "{} cards, {} vs {}, strongest first (effect: win-rate points with the card minus with a control)",
        results.len(),
        level,
        level
    )?;
    writeln!(
        out,
        "{:<22} {:>8} {:>17} {:>7}  verdict",
        "card", "effect", "95% CI", "pairs"
    )?;
    for r in results {
        let undecided = match &r.sequential {
            Some(s) if !s.decided => " (undecided at the cap)",
            _ => "",
        };
        writeln!(
            out,
            "{:<22} {:>8} {:>17} {:>7}  {}{undecided}",
            r.card,
            pct(r.effect),
            format!("{} to {}", bound(r.ci95[0]), bound(r.ci95[1])),
            r.pairs,
            r.verdict.words()
        )?;
    }
    writeln!(out, "{RELATION}")?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::bound;

    #[test]
    fn a_bound_near_zero_keeps_its_sign_and_zero_stays_zero() {
        assert_eq!(bound(0.000_4), "+0.04");
        assert_eq!(bound(-0.000_04), "-0.004");
        assert_eq!(bound(0.023), "+2.3");
        assert_eq!(bound(0.0), "+0.0");
        assert_eq!(bound(0.000_000_1), "+1.0e-5");
    }
}
