//! `tokensmith replay FILE`: play a saved game again under the content loaded now and
//! say where it first plays differently, with both results.

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use super::context::{Context, quiet_pipe};
use super::packset::get_needed;
use crate::index::needs::Needed;
use crate::packs::{PackSet, Selection};

/// `tokensmith replay`.
#[derive(Debug, clap::Args)]
pub struct ReplayArgs {
    /// The replay file (saved by the client, in the profile's `replays` folder).
    pub file: PathBuf,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
    /// First get the packs the replay names that this profile lacks at their content
    /// hash, from the profile's indexes (checked as `pack install` checks them), into a
    /// temporary set for this run: your own packs and enabled set stay as they are.
    #[arg(long)]
    pub sync: bool,
    /// With --sync: keep what was fetched installed, and enable the replay's packs.
    #[arg(long, requires = "sync")]
    pub keep: bool,
}

/// Re-run the replay: exit 0 when every move does what it did and the result is the
/// same, 1 when it differs, 2 when it cannot be re-run.
pub fn run(ctx: &Context, args: &ReplayArgs) -> anyhow::Result<ExitCode> {
    let replay = match crate::replay::read(&args.file) {
        Ok(r) => r,
        Err(located) => {
            // Already `FILE:LINE:COLUMN: error: …`.
            eprintln!("{located}");
            return Ok(ExitCode::from(2));
        }
    };
    // The replay's own packs at their present versions (or, with --sync, at the
    // versions it was played with), unless --packs or --all-packs says otherwise.
    if args.sync && ctx.names_packs() {
        anyhow::bail!(
            "--sync gets the replay's own packs; it does not go with --packs or --all-packs"
        );
    }
    let gotten = if args.sync {
        let needed = Needed::of_replay(&replay);
        // The plan goes where the report does not: stderr under --json.
        let gotten = if args.json {
            get_needed(ctx, &needed, &args.file, args.keep, &mut std::io::stderr())
        } else {
            get_needed(ctx, &needed, &args.file, args.keep, &mut std::io::stdout())
        };
        Some(gotten?)
    } else {
        None
    };
    let options = if let Some(g) = &gotten {
        g.load_options(ctx.pack_folders())
    } else if ctx.names_packs() {
        ctx.play_options()
    } else {
        let ids: Vec<String> = replay.packs.iter().map(|p| p.id.clone()).collect();
        crate::packs::set::load_options(ctx.pack_folders(), &Selection::Set(PackSet::only(&ids)))
    };
    let loaded = crate::script::load(&options);
    let Some(catalog) = loaded.catalog else {
        for d in &loaded.diagnostics {
            eprintln!("{d}");
        }
        anyhow::bail!(
            "the replay's packs cannot be loaded now; fix them first (see `tokensmith validate`)"
        );
    };
    let catalog = std::sync::Arc::new(catalog);
    let scripts = crate::ai::hooks_for(&catalog);
    let engine = crate::rules::Engine::new(&catalog, scripts.hooks());
    let now = crate::replay::stamps(&catalog, &options.folders);
    let rerun = crate::replay::rerun(&replay, &engine, &catalog, &now)
        .map_err(|e| anyhow::anyhow!("{}: {e}", crate::fsutil::shown(&args.file)))?;
    let code = if rerun.same() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    };
    quiet_pipe((|| {
        let mut out = std::io::stdout().lock();
        if args.json {
            serde_json::to_writer_pretty(&mut out, &rerun)?;
            writeln!(out)?;
        } else {
            write!(out, "{}", crate::replay::report_text(&replay, &rerun))?;
        }
        Ok(code)
    })())
}
