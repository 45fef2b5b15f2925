//! `tokensmith api`: the script API as data (`--json`), as editor definitions
//! (`--luals DIR`), or as a short text list.

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;

use super::context::quiet_pipe;
use crate::script::{api, luals};

/// `tokensmith api`.
#[derive(Debug, clap::Args)]
pub struct ApiArgs {
    /// Print the whole description as one JSON object.
    #[arg(long, conflicts_with = "luals")]
    pub json: bool,
    /// Write LuaLS / EmmyLua definitions (tokensmith.lua) into this folder, made if
    /// missing; point the editor's Lua language server at it.
    #[arg(long, value_name = "DIR")]
    pub luals: Option<PathBuf>,
}

/// Print or write the API.
pub fn run(args: &ApiArgs) -> anyhow::Result<ExitCode> {
    let api = api::describe();
    if let Some(dir) = &args.luals {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("cannot make the folder {}", dir.display()))?;
        let path = dir.join(luals::FILE);
        crate::fsutil::write_atomic(&path, luals::definitions(&api).as_bytes())
            .with_context(|| format!("cannot write {}", path.display()))?;
        println!("wrote {}", path.display());
        return Ok(ExitCode::SUCCESS);
    }
    quiet_pipe((|| {
        let mut out = std::io::stdout().lock();
        if args.json {
            serde_json::to_writer_pretty(&mut out, &api).map_err(std::io::Error::other)?;
            writeln!(out)?;
            return Ok(ExitCode::SUCCESS);
        }
        writeln!(
            out,
            "ctx fields: {}",
            names(api.ctx_fields.iter().map(|f| f.name))
        )?;
        for m in &api.ctx_methods {
            let params: Vec<String> = m
                .params
                .iter()
                .map(|p| format!("{}: {}", p.name, p.ty))
                .collect();
            let returns: Vec<&str> = m.returns.iter().map(|r| r.ty).collect();
            let returns = if returns.is_empty() {
                String::new()
            } else {
                format!(" -> {}", returns.join(", "))
            };
            writeln!(
                out,
                "ctx:{}({}){returns}  {}",
                m.name,
                params.join(", "),
                m.doc
            )?;
        }
        for h in &api.hooks {
            let params: Vec<&str> = h.params.iter().map(|p| p.name).collect();
            writeln!(
                out,
                "hook {}({}) [{}]: {}",
                h.name,
                params.join(", "),
                h.owner,
                h.runs
            )?;
        }
        writeln!(
            out,
            "token fields: {}",
            names(api.token_fields.iter().map(|f| f.name))
        )?;
        writeln!(out, "globals: {}", api.global_names().join(" "))?;
        for l in &api.limits {
            writeln!(out, "limit {}: {} {}", l.key, l.default, l.unit)?;
        }
        Ok(ExitCode::SUCCESS)
    })())
}

fn names<'a>(it: impl Iterator<Item = &'a str>) -> String {
    it.collect::<Vec<_>>().join(", ")
}
