//! Content loading: YAML packs into a compiled [`Catalog`], with every diagnostic.
//!
//! Loading never stops at the first problem: it returns the catalog (when there were no
//! errors) *and* all diagnostics, each with file, line and column. This is the only layer
//! that knows both the YAML document types ([`doc`]) and the runtime catalog types.
//!
//! Must not: resolve moves, run scripts or know about the UI.

mod compile;
pub mod diagnostic;
pub mod discover;
pub mod doc;
mod provenance;
mod registry;
pub mod scalar;
pub mod shipped;
mod syntax;
pub mod totals;
pub mod yaml;

use std::path::{Path, PathBuf};

pub use diagnostic::{Diagnostic, Diagnostics, Severity};
pub use discover::PackFolder;
use doc::{RulesDoc, SECTIONS};
pub use provenance::{Conflict, Setter};
use registry::{Reading, Registry, Source};
use yaml::{Loc, Node, Value};

use crate::rules::{Catalog, nearest};

/// What to load.
#[derive(Clone, Debug, Default)]
pub struct LoadOptions {
    /// Folders to look for packs in, in order.
    pub folders: Vec<PackFolder>,
    /// Load only these packs and what they require (all found packs when `None`).
    pub only: Option<Vec<String>>,
    /// A last rules patch on top of the packs' (a scenario's `rules:`), and its file.
    pub rules_patch: Option<(PathBuf, RulesDoc)>,
    /// The user's load order: among packs that do not require each other, these load
    /// first, in this order; the rest by id.
    pub order: Vec<String>,
}

impl LoadOptions {
    /// The usual folders: `content` (must exist) and `mods` (may be missing).
    #[must_use]
    pub fn standard(content: &Path, mods: &Path) -> LoadOptions {
        LoadOptions {
            folders: vec![
                PackFolder {
                    path: content.to_path_buf(),
                    required: true,
                },
                PackFolder {
                    path: mods.to_path_buf(),
                    required: false,
                },
            ],
            ..LoadOptions::default()
        }
    }
}

/// The result of a load.
#[derive(Debug)]
pub struct Loaded {
    /// The catalog, when the load had no errors.
    pub catalog: Option<Catalog>,
    /// Every diagnostic, sorted by file and position.
    pub diagnostics: Vec<Diagnostic>,
    /// The packs that were found and ordered for loading, in load order.
    pub packs: Vec<crate::rules::PackInfo>,
    /// The fields more than one loaded pack sets (the last in load order wins).
    pub conflicts: Vec<Conflict>,
}

impl Loaded {
    /// Number of errors.
    #[must_use]
    pub fn error_count(&self) -> usize {
        self.diagnostics.iter().filter(|d| d.is_error()).count()
    }

    /// Number of warnings.
    #[must_use]
    pub fn warning_count(&self) -> usize {
        self.diagnostics.len() - self.error_count()
    }

    /// One line on the load: `2 packs, 48 cards, 0 errors, 0 warnings`.
    #[must_use]
    pub fn summary(&self) -> String {
        let plural = |n: usize, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
        let mut parts = vec![plural(self.packs.len(), "pack")];
        if let Some(c) = &self.catalog {
            parts.push(plural(c.cards().len(), "card"));
        }
        parts.push(plural(self.error_count(), "error"));
        parts.push(plural(self.warning_count(), "warning"));
        parts.join(", ")
    }
}

/// The files read during a load; entries refer to them by index.
#[derive(Debug, Default)]
pub struct Files(Vec<PathBuf>);

impl Files {
    fn add(&mut self, path: PathBuf) -> usize {
        self.0.push(path);
        self.0.len() - 1
    }

    /// The path of file `index`.
    #[must_use]
    pub fn path(&self, index: usize) -> &Path {
        self.0.get(index).map_or(Path::new("?"), PathBuf::as_path)
    }
}

/// Every section's entries, gathered from all packs.
#[derive(Debug, Default)]
pub(crate) struct Sections {
    pub areas: Registry<doc::AreaDoc>,
    pub token_types: Registry<doc::TokenTypeDoc>,
    pub abilities: Registry<doc::AbilityDoc>,
    pub cards: Registry<doc::CardDoc>,
    pub decks: Registry<doc::DeckDoc>,
    /// `rules` sections in load order; `pack` is `None` for the scenario's patch.
    pub rules: Vec<(RulesDoc, Option<usize>, usize)>,
    /// Whether a rules section (or a file that may hold one) had errors, so that a rule
    /// missing afterwards is a consequence, not a mistake of its own.
    pub rules_incomplete: bool,
    /// Every field each pack sets, for the conflict report.
    pub settings: Vec<provenance::FieldSetting>,
}

impl Sections {
    /// Whether a section went past [`totals::MAX_SECTION_ENTRIES`]: nothing more is read.
    fn full(&self) -> bool {
        self.areas.full
            || self.token_types.full
            || self.abilities.full
            || self.cards.full
            || self.decks.full
    }
}

/// Load packs as `options` says.
#[must_use]
pub fn load(options: &LoadOptions) -> Loaded {
    let mut diags = Diagnostics::default();
    let mut found_meter = totals::ParseMeter::default();
    let found = discover::discover_metered(&options.folders, &mut found_meter, &mut diags);
    if let Some(only) = &options.only {
        for id in only {
            if !found.packs.iter().any(|p| p.id() == id) && !found.broken.contains(id) {
                let hint = nearest(id, found.packs.iter().map(discover::Pack::id))
                    .map(|n| format!(" (did you mean '{n}'?)"))
                    .unwrap_or_default();
                let path = options
                    .rules_patch
                    .as_ref()
                    .map_or_else(|| PathBuf::from("."), |(p, _)| p.clone());
                diags.error(
                    &path,
                    Loc::default(),
                    format!("pack '{id}' was not found in the pack folders{hint}"),
                );
            }
        }
    }
    let ordered = discover::order(found, options.only.as_deref(), &options.order, &mut diags);
    let pack_ids: Vec<String> = ordered.packs.iter().map(|p| p.id().to_string()).collect();
    let mut files = Files::default();
    let mut sections = Sections::default();
    let mut meter = found_meter;
    'packs: for (index, pack) in ordered.packs.iter().enumerate() {
        meter.start_pack();
        for file in pack_files(&pack.dir, &mut diags) {
            if meter.set_over() || sections.full() {
                break 'packs;
            }
            if !meter.may_read() {
                break;
            }
            let file_index = files.add(file);
            let mut reading = Reading {
                pack_ids: &pack_ids,
                deps: &ordered.deps[index],
                files: &files,
                diags: &mut diags,
            };
            read_document(index, file_index, &mut sections, &mut meter, &mut reading);
        }
    }
    // A load cut short by a total is refused already; what was read is not compiled
    // (its references into the files left unread would only be reported as unknown).
    let cut = meter.set_over() || sections.full();
    if let Some((path, doc)) = &options.rules_patch {
        let file_index = files.add(path.clone());
        sections.rules.push((doc.clone(), None, file_index));
    }
    let catalog = if ordered.packs.is_empty() || cut {
        None
    } else {
        compile::compile(&ordered, &pack_ids, &files, &sections, &mut diags)
    };
    let catalog = if diags.has_errors() || ordered.packs.is_empty() {
        if ordered.packs.is_empty() && !diags.has_errors() {
            let path = options
                .folders
                .first()
                .map_or_else(|| PathBuf::from("."), |f| f.path.clone());
            diags.error(
                &path,
                Loc::default(),
                "no packs found: a pack is a folder with a pack.yaml",
            );
        }
        None
    } else {
        catalog
    };
    let conflicts = provenance::conflicts(&sections.settings, &pack_ids, &ordered.deps, &files);
    Loaded {
        catalog,
        diagnostics: diags.into_sorted(),
        packs: ordered.packs.iter().map(discover::Pack::info).collect(),
        conflicts,
    }
}

/// The `id:` of an entry that did not deserialize, if it can be read.
fn entry_id(node: &Node) -> Option<&str> {
    match &node.value {
        Value::Map(entries) => entries
            .iter()
            .find_map(|(k, v)| match (&k.value, &v.value) {
                (Value::Str(k), Value::Str(v)) if k == "id" => Some(v.as_str()),
                _ => None,
            }),
        _ => None,
    }
}

/// Every content document of a pack (its YAML files other than the root `pack.yaml`),
/// in path order.
fn pack_files(dir: &Path, diags: &mut Diagnostics) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![(dir.to_path_buf(), 0usize)];
    let mut seen = 0usize;
    while let Some((folder, depth)) = stack.pop() {
        let entries = match std::fs::read_dir(&folder) {
            Ok(e) => e,
            Err(e) => {
                diags.error(
                    &folder,
                    Loc::default(),
                    format!("cannot read this folder: {e}"),
                );
                continue;
            }
        };
        for entry in entries.filter_map(Result::ok) {
            seen += 1;
            if seen > MAX_PACK_ENTRIES {
                diags.error(
                    dir,
                    Loc::default(),
                    format!(
                        "this pack has more than {MAX_PACK_ENTRIES} files and folders; the rest are not read"
                    ),
                );
                out.sort();
                return out;
            }
            let path = entry.path();
            // The entry itself, never what a link points at: links are not followed.
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_symlink() {
                if discover::is_yaml(&path) || !discover::is_hidden(&path) {
                    diags.warning(
                        &path,
                        Loc::default(),
                        "this is a symbolic link, and links inside packs are not followed (a pack from another machine could use one to read your files); it is skipped: copy the file or folder in its place",
                    );
                }
            } else if kind.is_dir() {
                if discover::is_hidden(&path) {
                    continue;
                }
                if depth + 1 > MAX_PACK_DEPTH {
                    diags.error(
                        &path,
                        Loc::default(),
                        format!("folders nest more than {MAX_PACK_DEPTH} deep here; deeper folders are not read"),
                    );
                } else {
                    stack.push((path, depth + 1));
                }
            } else if discover::is_yaml(&path) && path != dir.join("pack.yaml") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// The most files and folders one pack may hold (a pack is read whole at every load).
pub const MAX_PACK_ENTRIES: usize = 10_000;
/// The deepest folders of a pack are read.
pub const MAX_PACK_DEPTH: usize = 16;

fn read_document(
    pack: usize,
    file: usize,
    sections: &mut Sections,
    meter: &mut totals::ParseMeter,
    r: &mut Reading<'_>,
) {
    let files = r.files;

    let path = files.path(file);
    let text =
        match crate::fsutil::read_text(path, crate::fsutil::MAX_CONTENT_FILE, "a content file") {
            Ok(t) => t,
            Err(e) => {
                r.diags
                    .error(path, Loc::default(), format!("cannot read this file: {e}"));
                sections.rules_incomplete = true;
                return;
            }
        };
    let root = match meter.parse(&text, yaml::FILE_WORK, false) {
        Ok(n) => n,
        Err((e, over)) => {
            match over {
                Some(over) => {
                    let id = r.pack_ids.get(pack).map_or("", String::as_str);
                    r.diags.error(path, e.loc, meter.message(over, id));
                }
                None => r
                    .diags
                    .error(path, e.loc, format!("YAML syntax: {}", e.message)),
            }
            sections.rules_incomplete = true;
            // Its entries are unknown: references to them would each be reported.
            let shown = crate::fsutil::shown(path);
            sections.areas.mark_unreadable(pack, &shown);
            sections.token_types.mark_unreadable(pack, &shown);
            sections.abilities.mark_unreadable(pack, &shown);
            sections.cards.mark_unreadable(pack, &shown);
            sections.decks.mark_unreadable(pack, &shown);
            return;
        }
    };
    let entries = match &root.value {
        Value::Null => return,
        Value::Map(entries) => entries,
        other => {
            r.diags.error(
                path,
                root.loc,
                format!(
                    "a content file is a mapping of sections ({}), found {}",
                    SECTIONS.join(", "),
                    other.describe()
                ),
            );
            return;
        }
    };
    if let Some(key) = entries
        .iter()
        .map(|(k, _)| k)
        .find(|k| matches!(&k.value, Value::Str(n) if n == "moves" || n == "expect"))
    {
        // A scenario saved among the pack's files: not content (its `rules:` would patch
        // the game for everyone), so it is left out, with one word of why.
        let Value::Str(name) = &key.value else { return };
        r.diags.warning(
            path,
            key.loc,
            format!(
                "this is a scenario (it has `{name}:`), not content, so the pack does not read \
                 it: run it with `tokensmith scenario {}`, and keep scenarios outside pack \
                 folders (e.g. in tests/scenarios/)",
                crate::fsutil::shown(path)
            ),
        );
        return;
    }
    for (key, value) in entries {
        if sections.full() {
            return;
        }
        let Value::Str(name) = &key.value else {
            r.diags.error(path, key.loc, "section names are strings");
            continue;
        };
        let source = |loc| Source { pack, file, loc };
        match name.as_str() {
            "rules" => {
                for (field, loc, text) in provenance::rule_fields(value) {
                    sections.settings.push(provenance::FieldSetting {
                        kind: "rules",
                        entry: String::new(),
                        field,
                        pack,
                        file,
                        loc,
                        value: text,
                    });
                }
                let (doc, complete) = read_rules(value, path, r.diags);
                sections.rules_incomplete |= !complete;
                sections.rules.push((doc, Some(pack), file));
            }
            "areas" => add_all(
                &mut sections.areas,
                &mut sections.settings,
                value,
                source,
                r,
            ),
            "token_types" => {
                add_all(
                    &mut sections.token_types,
                    &mut sections.settings,
                    value,
                    source,
                    r,
                );
            }
            "abilities" => {
                add_all(
                    &mut sections.abilities,
                    &mut sections.settings,
                    value,
                    source,
                    r,
                );
            }
            "cards" => add_all(
                &mut sections.cards,
                &mut sections.settings,
                value,
                source,
                r,
            ),
            "decks" => add_all(
                &mut sections.decks,
                &mut sections.settings,
                value,
                source,
                r,
            ),
            other => {
                let hint = nearest(other, SECTIONS.iter().copied())
                    .map(|n| format!(" (did you mean '{n}'?)"))
                    .unwrap_or_default();
                r.diags.error(
                    path,
                    key.loc,
                    format!(
                        "unknown section '{other}'{hint}; sections are {}",
                        SECTIONS.join(", ")
                    ),
                );
            }
        }
    }
}

/// Read a `rules` section key by key, so every mistake in it is reported and the good
/// keys still count. Returns the document and whether it was read without errors.
pub(crate) fn read_rules(value: &Node, path: &Path, diags: &mut Diagnostics) -> (RulesDoc, bool) {
    let mut doc = RulesDoc::default();
    let entries = match &value.value {
        Value::Map(entries) => entries,
        Value::Null => return (doc, true),
        other => {
            diags.error(
                path,
                value.loc,
                format!(
                    "`rules` is a mapping of rule names to values, found {}",
                    other.describe()
                ),
            );
            return (doc, false);
        }
    };
    let mut complete = true;
    for entry in entries {
        let single = Node {
            value: Value::Map(vec![entry.clone()]),
            loc: value.loc,
        };
        match yaml::from_node::<RulesDoc>(&single) {
            Ok(part) => doc.merge(part),
            Err(e) => {
                diags.error(path, e.loc.unwrap_or(entry.0.loc), e.message);
                complete = false;
            }
        }
    }
    (doc, complete)
}

fn add_all<T>(
    registry: &mut Registry<T>,
    settings: &mut Vec<provenance::FieldSetting>,
    section: &Node,
    source: impl Fn(Loc) -> Source,
    r: &mut Reading<'_>,
) where
    T: registry::Entry + for<'a> serde::Deserialize<'a>,
{
    let files = r.files;
    let items = match &section.value {
        Value::Null => return,
        Value::Seq(items) => items,
        other => {
            let path = files.path(source(section.loc).file);
            r.diags.error(
                path,
                section.loc,
                format!(
                    "expected a list of {} entries (`- id: ...`), found {}",
                    T::KIND,
                    other.describe()
                ),
            );
            return;
        }
    };
    for item in items {
        if registry.full {
            return;
        }
        match yaml::from_node::<T>(item) {
            Ok(doc) => {
                let loc = doc.id().loc;
                let at = source(loc);
                let written = &doc.id().value;
                let entry = if written.contains(':') {
                    written.clone()
                } else {
                    format!(
                        "{}:{written}",
                        r.pack_ids.get(at.pack).map_or("", String::as_str)
                    )
                };
                for (field, loc, value) in provenance::entry_fields(item) {
                    settings.push(provenance::FieldSetting {
                        kind: T::KIND,
                        entry: entry.clone(),
                        field,
                        pack: at.pack,
                        file: at.file,
                        loc,
                        value,
                    });
                }
                registry.add(doc, at, r);
            }
            Err(e) => {
                let path = files.path(source(item.loc).file);
                r.diags.error(path, e.loc.unwrap_or(item.loc), e.message);
                // References to this entry would only repeat the problem as "unknown".
                if let Some(id) = entry_id(item) {
                    registry.mark_broken(source(item.loc).pack, id, r.pack_ids);
                }
            }
        }
    }
}

/// The JSON Schemas of the pack files (`pack.yaml`, content files), by file name, for
/// editors' completion and checks (`tokensmith schema`).
#[must_use]
pub fn schemas() -> Vec<(&'static str, schemars::Schema)> {
    vec![
        ("pack.schema.json", schemars::schema_for!(doc::PackManifest)),
        (
            "content.schema.json",
            schemars::schema_for!(doc::ContentDoc),
        ),
    ]
}

/// The shipped base pack, loaded for unit tests.
#[cfg(test)]
pub(crate) fn base_for_tests() -> Catalog {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let loaded = load(&LoadOptions {
        only: Some(vec!["base".into()]),
        ..LoadOptions::standard(&root.join("content"), &root.join("mods"))
    });
    loaded
        .catalog
        .unwrap_or_else(|| panic!("the base pack loads: {:?}", loaded.diagnostics))
}
