//! Embeds the base content (`content/base`) in the binary, so an installed `tokensmith`
//! plays the classic game from any folder (src/content/shipped.rs).

use std::fmt::Write as _;
use std::path::Path;

fn main() {
    // Read when the script runs (cargo sets it for every run), not when it was compiled:
    // a compiled build script may be run again for a checkout in another folder.
    let manifest = std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_else(|| ".".into());
    let root = Path::new(&manifest).join("content");
    println!("cargo:rerun-if-changed={}", root.display());
    let mut files = Vec::new();
    collect(&root, &root, &mut files);
    files.sort();
    // A binary without its base content would only fail later, from an empty folder.
    assert!(
        files.iter().any(|f| f.starts_with("base/")),
        "no base content under {}: the binary embeds content/base",
        root.display()
    );
    let mut out = String::from(
        "/// The shipped base content: (path under the content folder, bytes).\npub const FILES: &[(&str, &[u8])] = &[\n",
    );
    for rel in &files {
        let path = root.join(rel);
        println!("cargo:rerun-if-changed={}", path.display());
        let _ = writeln!(
            out,
            "    ({rel:?}, include_bytes!({:?})),",
            path.display().to_string()
        );
    }
    out.push_str("];\n");
    let dest = Path::new(&std::env::var("OUT_DIR").unwrap_or_else(|_| ".".into()))
        .join("shipped_content.rs");
    if let Err(e) = std::fs::write(&dest, out) {
        println!("cargo:warning=cannot write {}: {e}", dest.display());
    }
}

/// Every file under `dir`, as a `/`-separated path relative to `root`.
fn collect(root: &Path, dir: &Path, out: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let path = e.path();
        if path.is_dir() {
            println!("cargo:rerun-if-changed={}", path.display());
            collect(root, &path, out);
        } else if let Ok(rel) = path.strip_prefix(root) {
            let rel: Vec<String> = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            out.push(rel.join("/"));
        }
    }
}
