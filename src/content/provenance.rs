//! Who sets what: every field of every entry and rule, with the pack, file and place that
//! set it and the value as written. Packs that set the same field are the conflict
//! report's input (`tokensmith pack conflicts`): the last in load order wins.
//!
//! Fields set by more than one pack become `Loaded::conflicts`. [`order_decides`] is the one
//! test of whether the load order picks the played value (a conflict) or the last pack
//! requires the others (an override); the load's warnings about patches use it too.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Serialize;

use super::yaml::{Loc, Node, Value};

/// One field set by one pack, as read (patches not applied yet).
#[derive(Clone, Debug)]
pub(crate) struct FieldSetting {
    /// `card`, `token type`, … or `rules`.
    pub kind: &'static str,
    /// The entry it belongs to, `pack:id` (empty for rules).
    pub entry: String,
    /// The field (`value`, or a rule's dotted path such as `limits.wall_ms`).
    pub field: String,
    /// The setting pack, by load index.
    pub pack: usize,
    /// The file, by index.
    pub file: usize,
    /// Where the field is.
    pub loc: Loc,
    /// The value as written, compact.
    pub value: String,
}

/// A field that more than one loaded pack sets.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Conflict {
    /// What kind of entry (`card`, `ability`, …, or `rules`).
    pub kind: String,
    /// The entry, `pack:id` (empty for rules).
    pub entry: String,
    /// The field.
    pub field: String,
    /// Every pack that sets it, in load order: the last one's value is the one played.
    pub setters: Vec<Setter>,
    /// Whether the load order decides which value is played: the last setter does not
    /// require every other setter, so another order could play another value. `false`
    /// for an override: a pack changing what packs it requires set, which every order
    /// plays the same way.
    pub order_decides: bool,
}

/// One pack's setting of a conflicting field.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Setter {
    /// The pack's id.
    pub pack: String,
    /// The file.
    #[serde(serialize_with = "lossy")]
    pub path: PathBuf,
    /// Line, from 1.
    pub line: u32,
    /// Column, from 1.
    pub column: u32,
    /// The value as written.
    pub value: String,
}

fn lossy<S: serde::Serializer>(p: &std::path::Path, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&crate::fsutil::shown(p))
}

impl Conflict {
    /// The pack whose value is played.
    #[must_use]
    pub fn winner(&self) -> Option<&Setter> {
        self.setters.last()
    }
}

/// The fields of an entry node (`id` left out), each with its place and value.
pub(crate) fn entry_fields(node: &Node) -> Vec<(String, Loc, String)> {
    let Value::Map(entries) = &node.value else {
        return Vec::new();
    };
    entries
        .iter()
        .filter_map(|(k, v)| match &k.value {
            Value::Str(name) if name != "id" => Some((name.clone(), k.loc, render(v))),
            _ => None,
        })
        .collect()
}

/// The rules of a `rules:` section, nested maps flattened to dotted paths.
pub(crate) fn rule_fields(node: &Node) -> Vec<(String, Loc, String)> {
    let mut out = Vec::new();
    flatten("", node, node.loc, &mut out, 0);
    out
}

fn flatten(prefix: &str, node: &Node, at: Loc, out: &mut Vec<(String, Loc, String)>, depth: usize) {
    match &node.value {
        Value::Map(entries) if depth < 4 => {
            for (k, v) in entries {
                let Value::Str(name) = &k.value else { continue };
                let path = if prefix.is_empty() {
                    name.clone()
                } else {
                    format!("{prefix}.{name}")
                };
                flatten(&path, v, k.loc, out, depth + 1);
            }
        }
        _ if !prefix.is_empty() => out.push((prefix.to_string(), at, render(node))),
        _ => {}
    }
}

/// A value written compactly on one line (YAML flow style), cut at 80 characters.
#[must_use]
pub(crate) fn render(node: &Node) -> String {
    let mut s = String::new();
    write(node, &mut s);
    crate::rules::echo(&s).trim_matches('\'').to_string()
}

fn write(node: &Node, s: &mut String) {
    if s.len() > 200 {
        return;
    }
    match &node.value {
        Value::Null => s.push_str("null"),
        Value::Bool(b) => s.push_str(if *b { "true" } else { "false" }),
        Value::Int(i) => s.push_str(&i.to_string()),
        Value::Big(u) => s.push_str(&u.to_string()),
        Value::Float(f) => s.push_str(&f.to_string()),
        Value::Str(t) => s.push_str(t),
        Value::Seq(items) => {
            s.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    s.push_str(", ");
                }
                write(item, s);
            }
            s.push(']');
        }
        Value::Map(entries) => {
            s.push('{');
            for (i, (k, v)) in entries.iter().enumerate() {
                if i > 0 {
                    s.push_str(", ");
                }
                write(k, s);
                s.push_str(": ");
                write(v, s);
            }
            s.push('}');
        }
    }
}

/// Whether the load order decides which of these packs' values is played (`packs` by
/// load index, in load order; `deps[i]` every pack that pack `i` requires, transitively).
/// It does unless the last one requires all the others: a pack that requires another
/// always loads after it, so its value is played in every order (an override); packs
/// that do not require each other load in the order the user chose (a conflict).
#[must_use]
pub fn order_decides(packs: &[usize], deps: &[Vec<usize>]) -> bool {
    let Some(&last) = packs.last() else {
        return false;
    };
    let required = deps.get(last).map_or(&[][..], Vec::as_slice);
    packs.iter().any(|p| *p != last && !required.contains(p))
}

/// The fields more than one pack sets, from every setting read, in a stable order
/// (kind, entry, field); each conflict's setters in load order.
pub(crate) fn conflicts(
    settings: &[FieldSetting],
    pack_ids: &[String],
    deps: &[Vec<usize>],
    files: &super::Files,
) -> Vec<Conflict> {
    let mut by_field: BTreeMap<(&str, &str, &str), Vec<&FieldSetting>> = BTreeMap::new();
    for s in settings {
        by_field
            .entry((s.kind, s.entry.as_str(), s.field.as_str()))
            .or_default()
            .push(s);
    }
    by_field
        .into_iter()
        .filter_map(|((kind, entry, field), mut sets)| {
            sets.sort_by_key(|s| s.pack);
            let first = sets.first()?.pack;
            if sets.iter().all(|s| s.pack == first) {
                return None;
            }
            let packs: Vec<usize> = sets.iter().map(|s| s.pack).collect();
            Some(Conflict {
                order_decides: order_decides(&packs, deps),
                kind: kind.to_string(),
                entry: entry.to_string(),
                field: field.to_string(),
                setters: sets
                    .iter()
                    .map(|s| Setter {
                        pack: pack_ids.get(s.pack).cloned().unwrap_or_default(),
                        path: files.path(s.file).to_path_buf(),
                        line: s.loc.line,
                        column: s.loc.column,
                        value: s.value.clone(),
                    })
                    .collect(),
            })
        })
        .collect()
}
