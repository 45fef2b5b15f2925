//! The command line: `validate`, `scenario`, `schema`. Only calls inwards.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context as _;
use clap::{Parser, Subcommand};

use crate::content::{self, LoadOptions, Loaded};
use crate::rules::describe;
use crate::scenario::{self, Outcome, PackPaths};

/// Tokensmith: make and balance token-placement board games.
#[derive(Debug, Parser)]
#[command(name = "tokensmith", version, about, arg_required_else_help = true)]
pub struct Cli {
    /// Folder with the base content packs.
    #[arg(long, global = true, default_value = "content", value_name = "DIR")]
    pub content: PathBuf,
    /// Folder with mod packs (may be missing).
    #[arg(long, global = true, default_value = "mods", value_name = "DIR")]
    pub mods: PathBuf,
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Load every pack and print every diagnostic as `path:line:col: severity: message`.
    /// Exit 0 when clean or warnings only, 1 on errors.
    Validate {
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Run scenario files and report each as pass or fail.
    /// Exit 0 when all pass, 1 on a failure, 2 when a scenario cannot be read.
    Scenario {
        /// Scenario files (YAML).
        #[arg(required = true, value_name = "FILE")]
        files: Vec<PathBuf>,
        /// Also print every event of each game, with its cause.
        #[arg(long)]
        events: bool,
    },
    /// Write the JSON Schemas of pack.yaml, content documents and scenarios.
    Schema {
        /// The folder to write them to.
        #[arg(long, default_value = "schemas", value_name = "DIR")]
        out: PathBuf,
    },
}

/// Run the command line with these arguments.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(&cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}

fn run(cli: &Cli) -> anyhow::Result<ExitCode> {
    match &cli.command {
        Command::Validate { json } => validate(cli, *json),
        Command::Scenario { files, events } => Ok(run_scenarios(cli, files, *events)),
        Command::Schema { out } => {
            write_schemas(out)?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn validate(cli: &Cli, json: bool) -> anyhow::Result<ExitCode> {
    let loaded = crate::script::load(&LoadOptions::standard(&cli.content, &cli.mods));
    let mut out = std::io::stdout().lock();
    if json {
        serde_json::to_writer_pretty(&mut out, &validation_json(&loaded))?;
        writeln!(out)?;
    } else {
        for d in &loaded.diagnostics {
            writeln!(out, "{d}")?;
        }
        writeln!(out, "{}", summary(&loaded))?;
    }
    Ok(if loaded.error_count() > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// One line on a load: packs and cards loaded, errors and warnings.
#[must_use]
pub fn summary(loaded: &Loaded) -> String {
    let plural = |n: usize, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
    let mut parts = vec![plural(loaded.packs.len(), "pack")];
    if let Some(c) = &loaded.catalog {
        parts.push(plural(c.cards.len(), "card"));
    }
    parts.push(plural(loaded.error_count(), "error"));
    parts.push(plural(loaded.warning_count(), "warning"));
    parts.join(", ")
}

fn validation_json(loaded: &Loaded) -> serde_json::Value {
    let packs: Vec<serde_json::Value> = loaded
        .packs
        .iter()
        .map(|p| serde_json::json!({ "id": p.id, "name": p.name, "version": p.version }))
        .collect();
    let counts = loaded.catalog.as_ref().map(|c| {
        serde_json::json!({
            "areas": c.areas.len(),
            "token_types": c.token_types.len(),
            "abilities": c.abilities.len(),
            "cards": c.cards.len(),
            "decks": c.decks.len(),
        })
    });
    serde_json::json!({
        "ok": loaded.error_count() == 0,
        "errors": loaded.error_count(),
        "warnings": loaded.warning_count(),
        "packs": packs,
        "counts": counts,
        "diagnostics": loaded.diagnostics,
    })
}

fn run_scenarios(cli: &Cli, files: &[PathBuf], events: bool) -> ExitCode {
    let paths = PackPaths {
        content: cli.content.clone(),
        mods: cli.mods.clone(),
    };
    let (mut passed, mut failed, mut unreadable) = (0usize, 0usize, 0usize);
    for file in files {
        match scenario::run_file(file, &paths) {
            Ok(run) => {
                match &run.outcome {
                    Outcome::Pass => {
                        passed += 1;
                        println!("pass  {} ({})", run.name, file.display());
                    }
                    Outcome::Fail(report) => {
                        failed += 1;
                        println!("FAIL  {} ({})", run.name, file.display());
                        for line in report.lines() {
                            println!("      {line}");
                        }
                    }
                }
                if events {
                    for (i, e) in run.events.iter().enumerate() {
                        println!("      {:>4}  {}", i + 1, describe::event(&run.catalog, e));
                    }
                }
            }
            Err(e) => {
                unreadable += 1;
                println!("ERROR {} cannot be run:", file.display());
                for d in &e.diagnostics {
                    println!("      {d}");
                }
            }
        }
    }
    println!("{passed} passed, {} failed", failed + unreadable);
    if unreadable > 0 {
        ExitCode::from(2)
    } else if failed > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// The schemas, by file name.
#[must_use]
pub fn schemas() -> Vec<(&'static str, schemars::Schema)> {
    vec![
        (
            "pack.schema.json",
            schemars::schema_for!(content::doc::PackManifest),
        ),
        (
            "content.schema.json",
            schemars::schema_for!(content::doc::ContentDoc),
        ),
        (
            "scenario.schema.json",
            schemars::schema_for!(scenario::ScenarioDoc),
        ),
    ]
}

/// The text of a schema file as `schema` writes it.
pub fn schema_text(schema: &schemars::Schema) -> anyhow::Result<String> {
    Ok(serde_json::to_string_pretty(schema)? + "\n")
}

fn write_schemas(out: &Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
    for (name, schema) in schemas() {
        let path = out.join(name);
        crate::fsutil::write_atomic(&path, schema_text(&schema)?.as_bytes())
            .with_context(|| format!("cannot write {}", path.display()))?;
        println!("wrote {}", path.display());
    }
    Ok(())
}
