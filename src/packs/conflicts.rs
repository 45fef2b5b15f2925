//! The conflict pre-flight (`tokensmith pack conflicts`, the Mods screen): before any
//! game, every field more than one enabled pack sets (and which value is played under the
//! current order), told apart into conflicts the load order decides and intended
//! overrides of required packs; packs whose requirements are missing or of another
//! version, and pack ids found twice.
//!
//! `has_conflicts` (the command's exit code) leaves out the overrides: they play the same
//! in every order.

use std::collections::BTreeMap;

use serde::Serialize;

use super::set::{Folders, Selection, find, load_options};
use crate::content::Conflict;

/// A pack id found in more than one folder.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Duplicate {
    /// The id.
    pub id: String,
    /// Every folder that has it, in search order (the first is the one loaded).
    pub dirs: Vec<String>,
}

/// Everything that may make a game differ from what a pack's author meant.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ConflictReport {
    /// Fields several selected packs set.
    pub fields: Vec<Conflict>,
    /// Requirements that cannot be met, one sentence each.
    pub requirements: Vec<String>,
    /// Pack ids found twice.
    pub duplicates: Vec<Duplicate>,
}

impl ConflictReport {
    /// Whether there is nothing to report, overrides included.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.fields.is_empty() && self.requirements.is_empty() && self.duplicates.is_empty()
    }

    /// Whether something needs a decision: a field the load order decides, a requirement
    /// that cannot be met, or an id found twice. Overrides (a pack changing what packs it
    /// requires set) are intended and play the same in every order.
    #[must_use]
    pub fn has_conflicts(&self) -> bool {
        self.fields.iter().any(|c| c.order_decides)
            || !self.requirements.is_empty()
            || !self.duplicates.is_empty()
    }

    /// The report as text: one block per field the load order decides, requirements and
    /// duplicate ids, then the overrides.
    #[must_use]
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        for c in self.fields.iter().filter(|c| c.order_decides) {
            out.push_str(&format!(
                "{}: the load order decides (`tokensmith pack order` changes it)\n",
                what(c)
            ));
            setters(c, &mut out);
        }
        for r in &self.requirements {
            out.push_str(&format!("requirement: {r}\n"));
        }
        for d in &self.duplicates {
            out.push_str(&format!(
                "duplicate id '{}': {} (the first is loaded)\n",
                d.id,
                d.dirs.join(", ")
            ));
        }
        let overrides: Vec<&Conflict> = self.fields.iter().filter(|c| !c.order_decides).collect();
        if !overrides.is_empty() {
            out.push_str(
                "overrides (intended: a pack changes what packs it requires set, the same in every load order):\n",
            );
        }
        for c in overrides {
            out.push_str(&format!("{}\n", what(c)));
            setters(c, &mut out);
        }
        out
    }
}

/// The field a conflict is about: `card base:gift: value`, `rules: score_limit`.
#[must_use]
pub fn what(c: &Conflict) -> String {
    if c.entry.is_empty() {
        format!("rules: {}", c.field)
    } else {
        format!("{} {}: {}", c.kind, c.entry, c.field)
    }
}

fn setters(c: &Conflict, out: &mut String) {
    let last = c.setters.len().saturating_sub(1);
    for (i, s) in c.setters.iter().enumerate() {
        let mark = if i == last { "wins " } else { "      " };
        out.push_str(&format!(
            "  {mark}{} sets {} ({}:{}:{})\n",
            s.pack,
            s.value,
            crate::fsutil::shown(&s.path),
            s.line,
            s.column
        ));
    }
}

/// The report for the packs `selection` plays with.
#[must_use]
pub fn report(folders: &Folders, selection: &Selection) -> ConflictReport {
    let options = load_options(folders, selection);
    let loaded = crate::content::load(&options);
    let (found, _) = find(folders);
    let selected = |id: &str| {
        options
            .only
            .as_ref()
            .is_none_or(|only| only.iter().any(|o| o == id))
    };
    let mut first: BTreeMap<&str, &super::set::Found> = BTreeMap::new();
    let mut dirs: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for f in &found {
        first.entry(f.pack.id()).or_insert(f);
        dirs.entry(f.pack.id())
            .or_default()
            .push(crate::fsutil::shown(&f.pack.dir));
    }
    let mut requirements = Vec::new();
    for (id, f) in &first {
        if !selected(id) {
            continue;
        }
        for req in &f.pack.manifest.requires {
            let rid = req.id.value.as_str();
            match first.get(rid) {
                None => {
                    requirements.push(format!("'{id}' requires pack '{rid}', which is not found"))
                }
                Some(r) => {
                    if let Some(v) = &req.version
                        && let Ok(want) = semver::VersionReq::parse(&v.value)
                        && !want.matches(&r.pack.version)
                    {
                        requirements.push(format!(
                            "'{id}' requires '{rid}' {}, but {} is found",
                            v.value, r.pack.version
                        ));
                    }
                }
            }
        }
    }
    let duplicates = dirs
        .into_iter()
        .filter(|(_, d)| d.len() > 1)
        .map(|(id, dirs)| Duplicate {
            id: id.to_string(),
            dirs,
        })
        .collect();
    ConflictReport {
        fields: loaded.conflicts,
        requirements,
        duplicates,
    }
}
