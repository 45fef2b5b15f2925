//! `tokensmith replay FILE`: play a saved game again under the content loaded now and
//! say where it first plays differently, with both results.

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use super::context::{Context, quiet_pipe};
use crate::packs::{PackSet, Selection};

/// `tokensmith replay`.
#[derive(Debug, clap::Args)]
pub struct ReplayArgs {
    /// The replay file (saved by the client, in the profile's `replays` folder).
    pub file: PathBuf,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
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
    // The replay's own packs at their present versions, unless --packs or --all-packs
    // says otherwise for this run.
    let options = if ctx.names_packs() {
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
