//! `tokensmith validate`: load every pack and print every diagnostic, once or after
//! every change (`--watch`).

use std::io::Write as _;
use std::process::ExitCode;

use super::context::Context;
use crate::content::Loaded;

/// `validate [--json]`: exit 1 when a pack has errors.
pub fn run(ctx: &Context, json: bool) -> anyhow::Result<ExitCode> {
    let loaded = crate::script::load(&ctx.every_pack());
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

/// `validate --watch`: validate, then again after every change, until interrupted.
pub fn watch(ctx: &Context) -> std::io::Result<ExitCode> {
    let options = ctx.every_pack();
    let started = std::time::Instant::now();
    let loaded = crate::script::load(&options);
    let mut out = std::io::stdout().lock();
    for d in &loaded.diagnostics {
        writeln!(out, "{d}")?;
    }
    let verb = if loaded.catalog.is_some() {
        "loaded"
    } else {
        "error"
    };
    writeln!(
        out,
        "{verb} in {} ms: {}",
        started.elapsed().as_millis(),
        loaded.summary()
    )?;
    // The last good content, to say what each clean reload changed.
    let mut last = loaded.catalog;
    let watcher = match crate::reload::Watcher::start(options, crate::reload::DEBOUNCE, || {}) {
        Ok(w) => w,
        Err(e) => {
            eprintln!("error: {e}");
            return Ok(ExitCode::from(2));
        }
    };
    let folders: Vec<String> = watcher
        .folders
        .iter()
        .map(|f| f.display().to_string())
        .collect();
    writeln!(out, "watching {} (Ctrl+C stops)", folders.join(", "))?;
    out.flush()?;
    loop {
        if let Some(reload) = watcher.wait(std::time::Duration::from_secs(3600)) {
            for d in &reload.loaded.diagnostics {
                writeln!(out, "{d}")?;
            }
            writeln!(out, "{}", reload.summary())?;
            if let Some(new) = &reload.loaded.catalog {
                if let Some(old) = &last {
                    let changes = crate::reload::diff(old, new);
                    if changes.is_empty() {
                        writeln!(out, "  no change to the content")?;
                    }
                    for change in changes {
                        writeln!(out, "  {change}")?;
                    }
                }
                last = Some(new.clone());
            }
            out.flush()?;
        }
    }
}

/// One line on a load: packs and cards loaded, errors and warnings.
#[must_use]
pub fn summary(loaded: &Loaded) -> String {
    loaded.summary()
}

fn validation_json(loaded: &Loaded) -> serde_json::Value {
    let packs: Vec<serde_json::Value> = loaded
        .packs
        .iter()
        .map(|p| serde_json::json!({ "id": p.id, "name": p.name, "version": p.version }))
        .collect();
    let counts = loaded.catalog.as_ref().map(|c| {
        serde_json::json!({
            "areas": c.areas().len(),
            "token_types": c.token_types().len(),
            "abilities": c.abilities().len(),
            "cards": c.cards().len(),
            "decks": c.decks().len(),
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
