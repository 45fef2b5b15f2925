//! `tokensmith deck ...`: the saved decks (list, show, import, export) and `deck random`.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context as _;
use clap::Subcommand;

use super::context::{Context, lock_profile, quiet_pipe};

/// `tokensmith deck ...`.
#[derive(Debug, Subcommand)]
pub enum DeckCommand {
    /// List the saved decks with their stack sizes and any card the loaded packs lack.
    List,
    /// Print a saved deck as YAML.
    Show {
        /// The deck's id.
        id: String,
    },
    /// Save a deck file (a saved deck's YAML) to the profile, after checking it against
    /// the loaded content: every card must exist and the stacks must follow the rules.
    Import {
        /// The deck file.
        file: PathBuf,
        /// Save it under this id instead of the file's.
        #[arg(long = "as", value_name = "ID")]
        as_id: Option<String>,
        /// Replace a saved deck with the same id (without it, such an import is refused).
        #[arg(long)]
        replace: bool,
    },
    /// Print a saved deck as a shareable YAML file (to standard output, or `--out`).
    Export {
        /// The deck's id.
        id: String,
        /// Write it here instead.
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
    },
    /// Print a random-content deck (docs/rules.md "Random decks") as a YAML deck entry: the
    /// same seed gives the same deck for the same content.
    Random {
        /// The seed (default: from the clock, printed in the deck's name).
        #[arg(long)]
        seed: Option<u64>,
    },
}

/// `deck list|show|import|export|random`.
pub fn run(ctx: &Context, command: &DeckCommand) -> anyhow::Result<ExitCode> {
    if let DeckCommand::Random { seed } = command {
        // Random content needs no profile.
        return quiet_pipe(random_deck(ctx, *seed));
    }
    let mut profile = ctx.open_profile()?;
    // Reading decks may migrate or set files aside: the profile is locked for a change
    // while they are read (and while one is imported).
    let lock = lock_profile(profile.dir(), crate::profile::Access::Write)?;
    let decks = profile.decks();
    if !matches!(command, DeckCommand::Import { .. }) {
        drop(lock);
    }
    for note in &profile.notes {
        eprintln!("note: {note}");
    }
    let mut out = std::io::stdout().lock();
    match command {
        DeckCommand::List => {
            let loaded = crate::script::load(&ctx.play_options());
            if decks.is_empty() {
                writeln!(out, "no saved decks in {}", profile.dir().display())?;
            }
            for d in &decks {
                let sizes: Vec<String> = d.stacks.iter().map(|s| s.len().to_string()).collect();
                let status = match &loaded.catalog {
                    Some(c) => {
                        let r = d.resolve(c);
                        if r.missing.is_empty() {
                            "ok".to_string()
                        } else {
                            format!("not in the loaded packs: {}", r.missing.join(", "))
                        }
                    }
                    None => "not checked (the packs have errors)".to_string(),
                };
                writeln!(
                    out,
                    "{}\t{}\tstacks {}\t{status}",
                    d.id,
                    d.name,
                    sizes.join("+")
                )?;
            }
            Ok(ExitCode::SUCCESS)
        }
        DeckCommand::Show { id } | DeckCommand::Export { id, out: None } => {
            let deck = find_deck(&decks, id)?;
            write!(out, "{}", deck.to_yaml())?;
            Ok(ExitCode::SUCCESS)
        }
        DeckCommand::Export {
            id,
            out: Some(file),
        } => {
            let deck = find_deck(&decks, id)?;
            crate::fsutil::write_atomic(file, deck.to_yaml().as_bytes())
                .with_context(|| format!("cannot write {}", file.display()))?;
            writeln!(out, "exported deck {id} to {}", file.display())?;
            Ok(ExitCode::SUCCESS)
        }
        DeckCommand::Import {
            file,
            as_id,
            replace,
        } => import_deck(ctx, &profile, file, as_id.as_deref(), *replace),
        DeckCommand::Random { seed } => quiet_pipe(random_deck(ctx, *seed)),
    }
}

fn find_deck<'a>(
    decks: &'a [crate::profile::SavedDeck],
    id: &str,
) -> anyhow::Result<&'a crate::profile::SavedDeck> {
    decks.iter().find(|d| d.id == id).with_context(|| {
        let hint = crate::rules::nearest(id, decks.iter().map(|d| d.id.as_str()))
            .map(|n| format!(" (did you mean '{n}'?)"))
            .unwrap_or_default();
        format!("no saved deck '{id}'{hint}; `tokensmith deck list` shows them")
    })
}

/// `deck import FILE [--as ID] [--replace]`: check a deck file against the loaded
/// content, then save it; a saved deck of the same id is replaced only when asked.
fn import_deck(
    ctx: &Context,
    profile: &crate::profile::Profile,
    file: &Path,
    as_id: Option<&str>,
    replace: bool,
) -> anyhow::Result<ExitCode> {
    let text = crate::fsutil::read_text(file, crate::fsutil::MAX_PROFILE_FILE, "a deck file")
        .with_context(|| format!("cannot read {}", crate::fsutil::shown(file)))?;
    let stem = file
        .file_stem()
        .map(|s| s.to_string_lossy().to_string())
        .unwrap_or_default();
    let (mut deck, _) = crate::profile::parse_deck(&text, &stem)
        .map_err(|e| anyhow::anyhow!("{}: {e}", file.display()))?;
    if let Some(id) = as_id {
        deck.id = id.to_string();
    }
    if !replace && profile.is_taken(&deck.id) {
        let free = crate::profile::id_for(&deck.id, |id| profile.is_taken(id));
        anyhow::bail!(
            "a deck '{}' is saved already; import with --replace to overwrite it, or --as {free} to keep both",
            deck.id
        );
    }
    let loaded = crate::script::load(&ctx.play_options());
    let Some(catalog) = loaded.catalog else {
        anyhow::bail!("the packs have errors; fix them first (see `tokensmith validate`)");
    };
    let resolved = deck.resolve(&catalog);
    if !resolved.missing.is_empty() {
        anyhow::bail!(
            "{}: cards not in the loaded packs: {}",
            file.display(),
            resolved.missing.join(", ")
        );
    }
    crate::rules::Engine::new(&catalog, &crate::rules::NoHooks)
        .check_deck(crate::rules::Seat::One, &resolved.stacks)
        .map_err(|e| {
            anyhow::anyhow!(
                "{}: {}",
                file.display(),
                e.message(crate::rules::Whose::Deck)
            )
        })?;
    let saved = if replace {
        profile.save(&deck)
    } else {
        profile.create(&deck)
    };
    let path = saved.map_err(|e| anyhow::anyhow!(e))?;
    writeln!(
        std::io::stdout().lock(),
        "imported deck {} ({}) to {}",
        deck.id,
        deck.name,
        path.display()
    )?;
    Ok(ExitCode::SUCCESS)
}

/// `deck random`: a random-content deck as YAML, or why none can be made.
fn random_deck(ctx: &Context, seed: Option<u64>) -> std::io::Result<ExitCode> {
    let loaded = crate::script::load(&ctx.play_options());
    let Some(catalog) = loaded.catalog else {
        for d in &loaded.diagnostics {
            eprintln!("{d}");
        }
        eprintln!("error: the packs have errors; fix them first");
        return Ok(ExitCode::from(1));
    };
    let seed = seed.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_secs())
    });
    let scripts = crate::ai::hooks_for(&catalog);
    let engine = scripts.brain(&catalog);
    match crate::ai::decks::random_content(&engine, seed) {
        Ok(stacks) => {
            let mut out = std::io::stdout().lock();
            writeln!(out, "decks:")?;
            writeln!(out, "  - id: random_{seed}")?;
            writeln!(out, "    name: Random deck {seed}")?;
            writeln!(
                out,
                "    description: Random content (tokensmith deck random --seed {seed})."
            )?;
            writeln!(out, "    stacks:")?;
            for stack in &stacks {
                let ids: Vec<String> = stack.iter().map(|&c| catalog.card(c).meta.key()).collect();
                writeln!(out, "      - [{}]", ids.join(", "))?;
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            eprintln!("error: {e}");
            Ok(ExitCode::from(1))
        }
    }
}
