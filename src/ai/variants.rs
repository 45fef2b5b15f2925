//! The variants file of `balance CARD --variants FILE` (docs/ai.md, "Racing variants"):
//! named variants, each a set of patches written exactly as a pack writes them
//! (docs/content.md, "Patching other packs"), read as hostile input and bounded.
//!
//! Each variant becomes a pack `variant` requiring every loaded pack and holding its
//! patches, loaded through the content loader like any pack's patch. The pack's file is
//! written from the variants file's located tree one key to a line, and every line
//! remembers where it came from, so a loader diagnostic about the patch points at the
//! line and column of the variants file.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::content::yaml::{self, Loc, Node, Value};
use crate::content::{LoadOptions, PackFolder};
use crate::rules::{Catalog, echo, nearest};

/// The largest variants file read.
pub const MAX_FILE_BYTES: u64 = 256 * 1024;
/// The most YAML parse work a variants file may take (see `yaml::Metered::work`).
pub const MAX_PARSE_WORK: u64 = 100_000;
/// The most variants one race runs: every round plays each variant still in the race.
pub const MAX_VARIANTS: usize = 16;
/// The most patched entries (and `rules` keys) one variant holds.
pub const MAX_ENTRIES: usize = 64;
/// The deepest nesting of lists and mappings in the file (the variants list is 2 deep,
/// an area's offsets 6).
pub const MAX_DEPTH: usize = 10;
/// The longest variant name, in characters.
pub const MAX_NAME: usize = 60;

/// The pack a variant is loaded as.
pub const VARIANT_PACK: &str = "variant";

/// The sections a variant may patch, as a pack writes them.
pub const SECTIONS: [&str; 5] = ["cards", "abilities", "token_types", "areas", "rules"];

/// A problem with the variants file, at its place.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("{}:{}:{}: {message}", crate::fsutil::shown(path), loc.line, loc.column)]
pub struct VariantsError {
    /// The variants file.
    pub path: PathBuf,
    /// Where in it.
    pub loc: Loc,
    /// What is wrong and what to do.
    pub message: String,
}

/// One section of a variant: its key's location and its value.
#[derive(Clone, Debug, PartialEq)]
struct Section {
    key: String,
    loc: Loc,
    value: Node,
}

/// One variant: a name and its patches.
#[derive(Clone, Debug, PartialEq)]
pub struct Variant {
    /// Its name, as the file gives it.
    pub name: String,
    /// Where it starts in the file.
    pub loc: Loc,
    sections: Vec<Section>,
}

impl Variant {
    /// Whether it patches nothing: the content as loaded.
    #[must_use]
    pub fn is_as_loaded(&self) -> bool {
        self.sections.is_empty()
    }

    /// Its patches in words, one per patched entry: `base:booster: value 1`.
    #[must_use]
    pub fn changes(&self) -> Vec<String> {
        let mut out = Vec::new();
        for s in &self.sections {
            let entries: Vec<(String, &[(Node, Node)])> = match &s.value.value {
                Value::Map(keys) if s.key == "rules" => vec![("rules".into(), keys.as_slice())],
                Value::Seq(items) => items
                    .iter()
                    .filter_map(|i| match &i.value {
                        Value::Map(keys) => Some((entry_id(keys).unwrap_or_default(), &keys[..])),
                        _ => None,
                    })
                    .collect(),
                _ => Vec::new(),
            };
            for (id, keys) in entries {
                let fields: Vec<String> = keys
                    .iter()
                    .filter(|(k, _)| key_text(k) != "id")
                    .map(|(k, v)| format!("{} {}", key_text(k), json(v)))
                    .collect();
                out.push(echo(&format!("{id}: {}", fields.join(", "))));
            }
        }
        out
    }
}

fn fail(path: &Path, loc: Loc, message: impl Into<String>) -> VariantsError {
    VariantsError {
        path: path.to_path_buf(),
        loc,
        message: message.into(),
    }
}

/// Read the variants file at `path` (a regular file, not a link, at most
/// [`MAX_FILE_BYTES`]).
pub fn read(path: &Path) -> Result<Vec<Variant>, VariantsError> {
    let text = crate::fsutil::read_text(path, MAX_FILE_BYTES, "a variants file").map_err(|e| {
        fail(
            path,
            Loc { line: 1, column: 1 },
            format!("cannot read the variants file: {e}"),
        )
    })?;
    parse(path, &text)
}

/// The variants of `text`, the content of the file `path`, checked against the bounds
/// above; every error has its place in the file.
pub fn parse(path: &Path, text: &str) -> Result<Vec<Variant>, VariantsError> {
    let metered = yaml::parse_metered(text, MAX_PARSE_WORK);
    if metered.over {
        return Err(fail(
            path,
            Loc { line: 1, column: 1 },
            format!(
                "the variants file is too large to read (more than {MAX_PARSE_WORK} YAML values, aliases counted each time they are used); split it into several files"
            ),
        ));
    }
    let root = metered.result.map_err(|e| fail(path, e.loc, e.message))?;
    if let Some(loc) = too_deep(&root, 0) {
        return Err(fail(
            path,
            loc,
            format!(
                "lists and mappings are nested more than {MAX_DEPTH} deep here; a variant is a name and patches as a pack writes them"
            ),
        ));
    }
    let shape = "a variants file is a mapping with one key, `variants:`, holding a list of variants, each with a `name:` and patches (`cards:`, `abilities:`, `token_types:`, `areas:`, `rules:`) written as a pack writes them";
    let Value::Map(top) = &root.value else {
        return Err(fail(path, root.loc, shape));
    };
    let mut list = None;
    for (k, v) in top {
        match key_text(k).as_str() {
            "variants" => list = Some(v),
            other => {
                return Err(fail(
                    path,
                    k.loc,
                    format!("unknown key '{}': {shape}", echo(other)),
                ));
            }
        }
    }
    let Some(list) = list else {
        return Err(fail(path, root.loc, shape));
    };
    let Value::Seq(items) = &list.value else {
        return Err(fail(
            path,
            list.loc,
            format!(
                "`variants` holds {}; give a list of variants (`- name: …`)",
                list.value.describe()
            ),
        ));
    };
    if items.len() < 2 {
        return Err(fail(
            path,
            list.loc,
            "a race needs at least two variants (a variant with only a `name` is the content as loaded)",
        ));
    }
    if items.len() > MAX_VARIANTS {
        return Err(fail(
            path,
            items[MAX_VARIANTS].loc,
            format!(
                "{} variants: at most {MAX_VARIANTS} race at once (each round plays every one still in the race); split the file",
                items.len()
            ),
        ));
    }
    let mut out: Vec<Variant> = Vec::with_capacity(items.len());
    for item in items {
        let v = variant(path, item)?;
        if out.iter().any(|o| o.name == v.name) {
            return Err(fail(
                path,
                v.loc,
                format!(
                    "two variants are named '{}'; give each its own name",
                    echo(&v.name)
                ),
            ));
        }
        out.push(v);
    }
    Ok(out)
}

/// The location of the first node nested deeper than [`MAX_DEPTH`].
fn too_deep(node: &Node, depth: usize) -> Option<Loc> {
    let children: Box<dyn Iterator<Item = &Node>> = match &node.value {
        Value::Seq(items) => Box::new(items.iter()),
        Value::Map(keys) => Box::new(keys.iter().map(|(_, v)| v)),
        _ => return None,
    };
    if depth >= MAX_DEPTH {
        return Some(node.loc);
    }
    children.into_iter().find_map(|c| too_deep(c, depth + 1))
}

fn key_text(k: &Node) -> String {
    match &k.value {
        Value::Str(s) => s.clone(),
        other => json(&Node {
            value: other.clone(),
            loc: k.loc,
        }),
    }
}

fn entry_id(keys: &[(Node, Node)]) -> Option<String> {
    keys.iter()
        .find(|(k, _)| key_text(k) == "id")
        .and_then(|(_, v)| match &v.value {
            Value::Str(s) => Some(s.clone()),
            _ => None,
        })
}

fn variant(path: &Path, item: &Node) -> Result<Variant, VariantsError> {
    let Value::Map(keys) = &item.value else {
        return Err(fail(
            path,
            item.loc,
            format!(
                "a variant is a mapping (`- name: …` and its patches), not {}",
                item.value.describe()
            ),
        ));
    };
    let mut name = None;
    let mut sections: Vec<Section> = Vec::new();
    for (k, v) in keys {
        let key = key_text(k);
        if key == "name" {
            let Value::Str(text) = &v.value else {
                return Err(fail(
                    path,
                    v.loc,
                    format!("a variant's name is text, not {}", v.value.describe()),
                ));
            };
            if text.trim().is_empty()
                || text.chars().count() > MAX_NAME
                || text.chars().any(char::is_control)
            {
                return Err(fail(
                    path,
                    v.loc,
                    format!("give the variant a name of 1 to {MAX_NAME} characters on one line"),
                ));
            }
            name = Some(text.clone());
        } else if SECTIONS.contains(&key.as_str()) {
            if sections.iter().any(|s| s.key == key) {
                return Err(fail(
                    path,
                    k.loc,
                    format!("`{key}` is given twice in this variant; merge them"),
                ));
            }
            section(path, &key, v)?;
            sections.push(Section {
                key,
                loc: k.loc,
                value: v.clone(),
            });
        } else {
            let keys = std::iter::once("name").chain(SECTIONS);
            let hint = nearest(&key, keys)
                .map(|n| format!(" (did you mean '{n}'?)"))
                .unwrap_or_default();
            return Err(fail(
                path,
                k.loc,
                format!(
                    "unknown key '{}'{hint}: a variant has a `name` and patches of {}",
                    echo(&key),
                    SECTIONS.join(", ")
                ),
            ));
        }
    }
    let name = name.ok_or_else(|| fail(path, item.loc, "give the variant a `name:`"))?;
    Ok(Variant {
        name,
        loc: item.loc,
        sections,
    })
}

/// Check one section's shape: a list of entries with `pack:id` ids (`rules`: a mapping).
fn section(path: &Path, key: &str, v: &Node) -> Result<(), VariantsError> {
    if key == "rules" {
        return match &v.value {
            Value::Map(keys) if keys.len() <= MAX_ENTRIES => Ok(()),
            Value::Map(_) => Err(fail(
                path,
                v.loc,
                format!("at most {MAX_ENTRIES} rules in one variant"),
            )),
            other => Err(fail(
                path,
                v.loc,
                format!(
                    "`rules` holds {}; give the rules to change as a mapping (`score_limit: 800`)",
                    other.describe()
                ),
            )),
        };
    }
    let Value::Seq(items) = &v.value else {
        return Err(fail(
            path,
            v.loc,
            format!(
                "`{key}` holds {}; give a list of patches (`- id: base:booster`)",
                v.value.describe()
            ),
        ));
    };
    if items.len() > MAX_ENTRIES {
        return Err(fail(
            path,
            items[MAX_ENTRIES].loc,
            format!("at most {MAX_ENTRIES} {key} in one variant"),
        ));
    }
    for item in items {
        let Value::Map(keys) = &item.value else {
            return Err(fail(
                path,
                item.loc,
                format!(
                    "a patch is a mapping with an `id` (`- id: base:booster`), not {}",
                    item.value.describe()
                ),
            ));
        };
        let id = keys.iter().find(|(k, _)| key_text(k) == "id");
        let Some((_, id)) = id else {
            return Err(fail(
                path,
                item.loc,
                "give the patched entry's `id`, with its pack (`id: base:booster`)",
            ));
        };
        let Value::Str(text) = &id.value else {
            return Err(fail(
                path,
                id.loc,
                format!("an id is text, not {}", id.value.describe()),
            ));
        };
        if !text.contains(':') {
            return Err(fail(
                path,
                id.loc,
                format!(
                    "'{}': a variant patches entries of the loaded packs; write the id with its pack, such as `base:{}`",
                    echo(text),
                    echo(text)
                ),
            ));
        }
    }
    Ok(())
}

/// A value as JSON text on one line (JSON is YAML).
fn json(node: &Node) -> String {
    to_json(node).to_string()
}

fn to_json(node: &Node) -> serde_json::Value {
    use serde_json::Value as J;
    match &node.value {
        Value::Null => J::Null,
        Value::Bool(b) => J::Bool(*b),
        Value::Int(i) => J::from(*i),
        Value::Big(u) => J::from(*u),
        Value::Float(f) => serde_json::Number::from_f64(*f).map_or(J::Null, J::Number),
        Value::Str(s) => J::String(s.clone()),
        Value::Seq(items) => J::Array(items.iter().map(to_json).collect()),
        Value::Map(keys) => J::Object(
            keys.iter()
                .map(|(k, v)| (key_text(k), to_json(v)))
                .collect(),
        ),
    }
}

/// The content file of `variant`'s pack, one key to a line, and for each line (from the
/// first) the place in the variants file it came from.
fn content_file(variant: &Variant) -> (String, Vec<Loc>) {
    let mut text = String::new();
    let mut lines = Vec::new();
    let mut line = |text: &mut String, s: String, loc: Loc| {
        text.push_str(&s);
        text.push('\n');
        lines.push(loc);
    };
    for s in &variant.sections {
        line(&mut text, format!("{}:", s.key), s.loc);
        match &s.value.value {
            Value::Map(keys) => {
                for (k, v) in keys {
                    line(&mut text, format!("  {}: {}", json_key(k), json(v)), v.loc);
                }
            }
            Value::Seq(items) => {
                for item in items {
                    let Value::Map(keys) = &item.value else {
                        continue;
                    };
                    for (n, (k, v)) in keys.iter().enumerate() {
                        let lead = if n == 0 { "  - " } else { "    " };
                        line(
                            &mut text,
                            format!("{lead}{}: {}", json_key(k), json(v)),
                            v.loc,
                        );
                    }
                }
            }
            _ => {}
        }
    }
    (text, lines)
}

fn json_key(k: &Node) -> String {
    serde_json::Value::String(key_text(k)).to_string()
}

/// The content `catalog` was loaded from (`options`) with `variant`'s patches: a pack
/// [`VARIANT_PACK`] requiring every loaded pack, loaded through the content loader. The
/// variant's errors are at their place in the variants file `path`.
pub fn patched(
    options: &LoadOptions,
    catalog: &Catalog,
    path: &Path,
    variant: &Variant,
) -> Result<Catalog, VariantsError> {
    if variant.is_as_loaded() {
        return Ok(catalog.clone());
    }
    let io = |e: std::io::Error| {
        fail(
            path,
            variant.loc,
            format!(
                "variant '{}': cannot write its patch in a temporary folder: {e}",
                echo(&variant.name)
            ),
        )
    };
    let dir = tempfile::tempdir().map_err(io)?;
    let root = dir.path().join(VARIANT_PACK);
    std::fs::create_dir_all(&root).map_err(io)?;
    let mut manifest = format!("id: {VARIANT_PACK}\nname: Variant\nversion: 1.0.0\nrequires:\n");
    for p in catalog.packs() {
        let _ = writeln!(
            manifest,
            "  - {{ id: {} }}",
            serde_json::Value::from(p.id.as_str())
        );
    }
    std::fs::write(root.join("pack.yaml"), manifest).map_err(io)?;
    let (text, lines) = content_file(variant);
    std::fs::write(root.join("content.yaml"), text).map_err(io)?;
    let mut options = options.clone();
    options.folders.push(PackFolder {
        path: dir.path().to_path_buf(),
        required: true,
    });
    if let Some(only) = &mut options.only {
        only.push(VARIANT_PACK.into());
    }
    let loaded = crate::script::load(&options);
    let ours = loaded
        .diagnostics
        .iter()
        .find(|d| d.path.starts_with(dir.path()) && d.severity == crate::content::Severity::Error);
    if let Some(d) = ours {
        let at = usize::try_from(d.line)
            .ok()
            .and_then(|l| l.checked_sub(1))
            .and_then(|l| lines.get(l).copied())
            .unwrap_or(variant.loc);
        let message = d
            .message
            .replace(&format!("pack '{VARIANT_PACK}'"), "the variant");
        return Err(fail(
            path,
            at,
            format!("variant '{}': {message}", echo(&variant.name)),
        ));
    }
    let same_size = |c: &Catalog| {
        c.cards().len() == catalog.cards().len()
            && c.abilities().len() == catalog.abilities().len()
            && c.token_types().len() == catalog.token_types().len()
    };
    match loaded.catalog {
        Some(out) if same_size(&out) => Ok(out),
        Some(_) => Err(fail(
            path,
            variant.loc,
            format!(
                "variant '{}' adds entries; a variant only patches entries of the loaded packs (ids with their pack, such as `base:booster`)",
                echo(&variant.name)
            ),
        )),
        None => Err(fail(
            path,
            variant.loc,
            format!(
                "variant '{}': the packs have errors without it; fix them first (see `tokensmith validate`)",
                echo(&variant.name)
            ),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(text: &str) -> Result<Vec<Variant>, VariantsError> {
        parse(Path::new("v.yaml"), text)
    }

    fn error_at(text: &str) -> (u32, u32, String) {
        let e = parsed(text).expect_err("refused");
        (e.loc.line, e.loc.column, e.message)
    }

    #[test]
    fn variants_read_with_their_patches_one_key_a_line() {
        let v = parsed(
            "variants:\n  - name: as loaded\n  - name: cheaper\n    cards:\n      - id: base:booster\n        value: 1\n    rules: { score_limit: 800 }\n",
        )
        .expect("reads");
        assert_eq!(v.len(), 2);
        assert!(v[0].is_as_loaded() && !v[1].is_as_loaded());
        assert_eq!(
            v[1].changes(),
            ["base:booster: value 1", "rules: score_limit 800"]
        );
        let (text, lines) = content_file(&v[1]);
        assert_eq!(
            text,
            "cards:\n  - \"id\": \"base:booster\"\n    \"value\": 1\nrules:\n  \"score_limit\": 800\n"
        );
        let at: Vec<(u32, u32)> = lines.iter().map(|l| (l.line, l.column)).collect();
        assert_eq!(at, [(4, 5), (5, 13), (6, 16), (7, 5), (7, 27)]);
    }

    #[test]
    fn mistakes_are_named_at_their_place() {
        let cases = [
            ("- name: a\n", (1, 1), "a variants file is a mapping"),
            ("variants:\n  - name: a\n", (2, 3), "at least two variants"),
            (
                "variants:\n  - name: a\n  - name: b\n    card:\n      - id: base:x\n",
                (4, 5),
                "unknown key 'card' (did you mean 'cards'?)",
            ),
            (
                "variants:\n  - name: a\n  - name: b\n    cards:\n      - id: booster\n",
                (5, 13),
                "write the id with its pack, such as `base:booster`",
            ),
            (
                "variants:\n  - name: a\n  - name: a\n",
                (3, 5),
                "two variants are named 'a'",
            ),
            (
                "variants:\n  - name: a\n  - cards: []\n",
                (3, 5),
                "give the variant a `name:`",
            ),
            ("variants: [a, b]\n", (1, 12), "a variant is a mapping"),
        ];
        for (text, (line, column), says) in cases {
            let (l, c, m) = error_at(text);
            assert_eq!((l, c), (line, column), "{text}: {m}");
            assert!(m.contains(says), "{text}: {m}");
        }
    }

    #[test]
    fn hostile_files_are_refused_within_their_bounds() {
        let many: String = (0..MAX_VARIANTS + 1)
            .map(|i| format!("  - name: v{i}\n"))
            .collect();
        let (line, _, m) = error_at(&format!("variants:\n{many}"));
        assert_eq!(line, u32::try_from(MAX_VARIANTS).expect("small") + 2);
        assert!(m.contains("at most 16 race at once"), "{m}");
        let deep = format!(
            "variants:\n  - name: a\n  - name: b\n    rules: {{ x: {}1{} }}\n",
            "[".repeat(40),
            "]".repeat(40)
        );
        assert!(error_at(&deep).2.contains("nested more than 10 deep"));
        let bomb = "a: &a [1,1,1,1,1,1,1,1,1,1]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: [*e,*e,*e,*e,*e,*e,*e,*e,*e,*e]\n";
        assert!(error_at(bomb).2.contains("too large to read"));
        let long = format!("variants:\n  - name: a\n  - name: {}\n", "x".repeat(61));
        assert!(error_at(&long).2.contains("1 to 60 characters"));
    }
}
