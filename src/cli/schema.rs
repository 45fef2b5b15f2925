//! `tokensmith schema`: write the JSON Schemas of pack.yaml, content documents and
//! scenarios.

use std::io::Write as _;
use std::path::Path;

use anyhow::Context as _;

use crate::scenario;

/// The text of a schema file as `schema` writes it.
pub fn schema_text(schema: &schemars::Schema) -> anyhow::Result<String> {
    Ok(serde_json::to_string_pretty(schema)? + "\n")
}

/// Write every schema into the folder `out`, made if missing.
pub fn write(out: &Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
    for (name, schema) in scenario::schemas() {
        let path = out.join(name);
        crate::fsutil::write_atomic(&path, schema_text(&schema)?.as_bytes())
            .with_context(|| format!("cannot write {}", path.display()))?;
        writeln!(std::io::stdout().lock(), "wrote {}", path.display())?;
    }
    Ok(())
}
