//! `tokensmith list`: the ids of the loaded content with their key fields and where each
//! is defined, so authors need not search the YAML.

use std::io::Write as _;
use std::process::ExitCode;

use serde::Serialize;

use super::context::{Context, quiet_pipe};
use crate::rules::describe::{self, Naming};
use crate::rules::{Catalog, Meta};

/// What to list.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Kind {
    /// Cards.
    Cards,
    /// Abilities.
    Abilities,
    /// Token types.
    TokenTypes,
    /// Areas.
    Areas,
    /// Ready decks.
    Decks,
}

/// `tokensmith list` (over the enabled packs, or `--packs`/`--all-packs`).
#[derive(Debug, clap::Args)]
pub struct ListArgs {
    /// What to list.
    #[arg(value_enum)]
    pub kind: Kind,
    /// Only the entries of this pack.
    #[arg(long, value_name = "ID")]
    pub pack: Option<String>,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

/// One entry.
#[derive(Debug, Serialize)]
struct Entry {
    /// `pack:id`.
    key: String,
    /// The id within its pack.
    id: String,
    /// The display name.
    name: String,
    /// The pack.
    pack: String,
    /// What matters about it, in words.
    summary: String,
    /// `file:line` (the file relative to the folder the pack was found in).
    at: String,
}

fn entry(meta: &Meta, summary: String) -> Entry {
    Entry {
        key: meta.key(),
        id: meta.id.clone(),
        name: meta.name.clone(),
        pack: meta.origin.pack.clone(),
        summary,
        at: format!("{}:{}", meta.origin.file, meta.origin.line),
    }
}

fn entries(catalog: &Catalog, kind: Kind) -> Vec<Entry> {
    match kind {
        Kind::Cards => catalog
            .cards()
            .iter()
            .map(|c| {
                let ability = c.ability.map_or("no ability".to_string(), |a| {
                    catalog.ability(a).meta.id.clone()
                });
                let area = if c.ability.is_some() {
                    format!(" over {}", describe::area(catalog, &c.area, Naming::Id))
                } else {
                    String::new()
                };
                entry(
                    &c.meta,
                    format!(
                        "value {}, {}, {ability}{area}",
                        c.value,
                        catalog.token_type(c.token).meta.id
                    ),
                )
            })
            .collect(),
        Kind::Abilities => catalog
            .abilities()
            .iter()
            .map(|a| entry(&a.meta, a.effect.name().to_string()))
            .collect(),
        Kind::TokenTypes => catalog
            .token_types()
            .iter()
            .map(|t| {
                let words = describe::token_type(catalog, t, Naming::Id);
                let mut parts: Vec<String> = [
                    words.aura.map(|a| format!("aura {a}")),
                    words.income_multiplier.map(|m| format!("income {m}")),
                    words.between_turns.map(|t| format!("turret: {t}")),
                    words.on_destroyed.map(|d| format!("{d} when destroyed")),
                    words.script.map(|s| format!("script {s}")),
                ]
                .into_iter()
                .flatten()
                .collect();
                if parts.is_empty() {
                    parts.push("plain".into());
                }
                entry(&t.meta, parts.join("; "))
            })
            .collect(),
        Kind::Areas => catalog
            .areas()
            .iter()
            .map(|a| {
                let cells: Vec<String> = a
                    .offsets
                    .iter()
                    .map(|o| format!("({},{})", o.dx, o.dy))
                    .collect();
                entry(&a.meta, cells.join(" "))
            })
            .collect(),
        Kind::Decks => catalog
            .decks()
            .iter()
            .map(|d| {
                let sizes: Vec<String> = d.stacks.iter().map(|s| s.len().to_string()).collect();
                entry(
                    &d.meta,
                    format!("{} stacks of {} cards", d.stacks.len(), sizes.join("+")),
                )
            })
            .collect(),
    }
}

/// `tokensmith list`.
pub fn run(ctx: &Context, args: &ListArgs) -> anyhow::Result<ExitCode> {
    let catalog = ctx.play_catalog()?;
    if let Some(p) = &args.pack
        && !catalog.packs().iter().any(|i| &i.id == p)
    {
        let (found, _) = crate::packs::set::find(ctx.pack_folders());
        if found.iter().any(|f| f.pack.id() == p) {
            anyhow::bail!(
                "pack '{p}' is not enabled: give --packs {p} (or --all-packs) for this run, or `tokensmith pack enable {p}`"
            );
        }
        anyhow::bail!("no pack '{p}' was found (see `tokensmith pack list`)");
    }
    let list: Vec<Entry> = entries(&catalog, args.kind)
        .into_iter()
        .filter(|e| args.pack.as_ref().is_none_or(|p| &e.pack == p))
        .collect();
    quiet_pipe(write(&list, args.json))
}

fn write(list: &[Entry], json: bool) -> std::io::Result<ExitCode> {
    let mut out = std::io::stdout().lock();
    if json {
        serde_json::to_writer_pretty(&mut out, &list)?;
        writeln!(out)?;
        return Ok(ExitCode::SUCCESS);
    }
    let key_w = list
        .iter()
        .map(|e| e.key.chars().count())
        .max()
        .unwrap_or(3)
        .max(3);
    let name_w = list
        .iter()
        .map(|e| e.name.chars().count())
        .max()
        .unwrap_or(4)
        .max(4);
    for e in list {
        writeln!(
            out,
            "{:<key_w$}  {:<name_w$}  {}  ({})",
            e.key, e.name, e.summary, e.at
        )?;
    }
    Ok(ExitCode::SUCCESS)
}
