//! Entries of one section gathered from every pack, with the patches of other packs
//! applied field by field, and the pack-aware resolution of references.

use std::collections::HashMap;

use super::Files;
use super::diagnostic::Diagnostics;
use super::doc::{AbilityDoc, AreaDoc, CardDoc, DeckDoc, TokenTypeDoc};
use super::yaml::{Loc, Located};
use crate::rules::nearest;

/// A document type whose entries can patch each other.
pub trait Entry: Sized {
    /// What the section calls an entry (`card`, `token type`…).
    const KIND: &'static str;
    /// The entry's id as written.
    fn id(&self) -> &Located<String>;
    /// Replace the fields `other` gives; the names of the fields replaced.
    fn patch(&mut self, other: Self) -> Vec<&'static str>;
    /// The built-in effect it has (abilities only): for "`damage` is an effect, not an
    /// ability" advice.
    fn effect(&self) -> Option<super::doc::EffectDoc> {
        None
    }
}

macro_rules! entry {
    ($ty:ty, $kind:literal, [$($field:ident),*]) => {
        entry!($ty, $kind, [$($field),*], |_this, _other| {});
    };
    ($ty:ty, $kind:literal, [$($field:ident),*], $before:expr $(, { $($extra:tt)* })?) => {
        impl Entry for $ty {
            const KIND: &'static str = $kind;
            $($($extra)*)?

            fn id(&self) -> &Located<String> {
                &self.id
            }

            fn patch(&mut self, other: Self) -> Vec<&'static str> {
                let before: fn(&mut $ty, &$ty) = $before;
                before(self, &other);
                let mut changed = Vec::new();
                $(
                    if other.$field.is_some() {
                        self.$field = other.$field;
                        changed.push(stringify!($field));
                    }
                )*
                changed
            }
        }
    };
}

entry!(
    AreaDoc,
    "area",
    [name, description, offsets, grid],
    |this, other| {
        // An area is offsets or a grid: a patch giving one replaces the other.
        if other.offsets.is_some() || other.grid.is_some() {
            this.offsets = None;
            this.grid = None;
        }
    }
);
entry!(
    TokenTypeDoc,
    "token type",
    [
        name,
        description,
        aura,
        on_destroyed,
        income_multiplier,
        between_turns,
        script
    ]
);
entry!(
    AbilityDoc,
    "ability",
    [
        name,
        description,
        effect,
        amount,
        owner,
        value,
        kind,
        player,
        condition,
        into,
        max_value,
        script
    ],
    |this, other| {
        // A patch that changes the effect (or gives a script) replaces the old effect's
        // parameters too: they belonged to the effect being replaced.
        if other.effect.is_some() || other.script.is_some() {
            this.effect = None;
            this.script = None;
            this.amount = None;
            this.owner = None;
            this.value = None;
            this.kind = None;
            this.player = None;
            this.condition = None;
            this.into = None;
            this.max_value = None;
        }
    },
    {
        fn effect(&self) -> Option<super::doc::EffectDoc> {
            self.effect.as_ref().map(|e| e.value)
        }
    }
);
entry!(
    CardDoc,
    "card",
    [name, value, token, ability, area, description]
);
entry!(DeckDoc, "deck", [name, description, stacks]);

/// Where a field's current value came from: a pack (load index) and a file (index).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Source {
    /// The pack, by load index.
    pub pack: usize,
    /// The file, by index into [`Files`].
    pub file: usize,
    /// The location of the entry (or patch) that set it.
    pub loc: Loc,
}

/// One entry of a section.
#[derive(Debug)]
pub struct Record<T> {
    /// The pack that defines it, by load index.
    pub pack: usize,
    /// Its id within that pack.
    pub id: String,
    /// The document, patches applied.
    pub doc: T,
    /// Where it was defined.
    pub defined: Source,
    /// Fields set by patches, and where.
    pub patched: HashMap<&'static str, Source>,
}

impl<T> Record<T> {
    /// Where `field`'s value came from.
    #[must_use]
    pub fn source(&self, field: &str) -> Source {
        self.patched.get(field).copied().unwrap_or(self.defined)
    }
}

/// Every entry of one section, in load order.
#[derive(Debug)]
pub struct Registry<T> {
    /// The entries; an entry's index is its catalog id.
    pub records: Vec<Record<T>>,
    index: HashMap<(usize, String), usize>,
    /// The first entry defined with each id, whatever its pack (cards only: the ids a
    /// clash warning is given for).
    first_of: HashMap<String, usize>,
    /// Entries that could not be read (their error is already reported), by pack and id.
    broken: std::collections::HashSet<(usize, String)>,
    /// Files that could not be parsed, by pack: any of their entries is unknown.
    unreadable: Vec<(usize, String)>,
    /// The referring packs (`usize::MAX` for a view of all) already told that an unknown
    /// name may come from an unreadable file: told once, then quiet.
    told: std::cell::RefCell<std::collections::HashSet<usize>>,
    /// Whether an entry past [`super::totals::MAX_SECTION_ENTRIES`] was refused: the
    /// load reads no more.
    pub full: bool,
}

impl<T> Default for Registry<T> {
    fn default() -> Self {
        Registry {
            records: Vec::new(),
            index: HashMap::new(),
            first_of: HashMap::new(),
            broken: std::collections::HashSet::new(),
            unreadable: Vec::new(),
            told: std::cell::RefCell::new(std::collections::HashSet::new()),
            full: false,
        }
    }
}

/// The packs a reference from one pack may see: itself first, then its dependencies.
pub struct View<'a> {
    /// The pack's load index, or `None` for a view of every loaded pack (scenarios).
    pub pack: Option<usize>,
    /// Its dependencies, transitively.
    pub deps: &'a [usize],
    /// Every pack id, by load index.
    pub pack_ids: &'a [String],
    /// Where the pack lists its requirements (`DIR/pack.yaml:LINE`), for advice.
    pub requires_at: Option<String>,
}

impl View<'_> {
    fn sees(&self, pack: usize) -> bool {
        self.pack.is_none_or(|p| p == pack) || self.deps.contains(&pack)
    }
}

/// What adding one pack's entries needs besides the entries: every pack's id in load
/// order, the packs this one depends on, the files read (for paths in messages) and where
/// problems go. One value where there were four arguments to every call.
pub struct Reading<'a> {
    /// Every pack's id, in load order.
    pub pack_ids: &'a [String],
    /// The packs the one being read depends on (indices into `pack_ids`).
    pub deps: &'a [usize],
    /// The files read so far.
    pub files: &'a Files,
    /// Where problems go.
    pub diags: &'a mut Diagnostics,
}

impl<T: Entry> Registry<T> {
    /// Remember an entry that could not be read, written `id` in `pack`, so references to
    /// it are not reported again as unknown.
    pub fn mark_broken(&mut self, pack: usize, id: &str, pack_ids: &[String]) {
        let (pack, id) = match id.split_once(':') {
            Some((p, id)) => match pack_ids.iter().position(|x| x == p) {
                Some(p) => (p, id),
                None => return,
            },
            None => (pack, id),
        };
        self.broken.insert((pack, id.to_string()));
    }

    /// Remember that `file` of `pack` could not be parsed.
    pub fn mark_unreadable(&mut self, pack: usize, file: &str) {
        self.unreadable.push((pack, file.to_string()));
    }

    /// For an unknown name in `view`: when a file the view sees could not be parsed, the
    /// one message to give (the first time for this referring pack), or `Some(None)` to
    /// say nothing more; `None` when no such file explains it.
    fn unknown_after_unreadable(&self, view: &View<'_>, written: &str) -> Option<Option<String>> {
        let (_, file) = self.unreadable.iter().find(|(p, _)| view.sees(*p))?;
        let who = view.pack.unwrap_or(usize::MAX);
        if !self.told.borrow_mut().insert(who) {
            return Some(None);
        }
        Some(Some(format!(
            "unknown {} '{written}', perhaps because {file} could not be read (see its error): \
             fix that file first; other unknown {} names are not listed until then",
            T::KIND,
            T::KIND
        )))
    }

    /// For an unknown ability named like a built-in effect: say so, with the abilities
    /// the view sees that use that effect.
    fn effect_named(&self, view: &View<'_>, written: &str) -> Option<String> {
        if T::KIND != "ability" {
            return None;
        }
        let effect: super::doc::EffectDoc =
            serde_json::from_value(serde_json::Value::String(written.to_string())).ok()?;
        let users: Vec<String> = self
            .records
            .iter()
            .filter(|r| view.sees(r.pack) && r.doc.effect() == Some(effect))
            .map(|r| format!("'{}'", r.id))
            .take(8)
            .collect();
        let users = if users.is_empty() {
            "no ability loaded uses it".to_string()
        } else {
            format!("abilities that use it: {}", users.join(", "))
        };
        Some(format!(
            "'{written}' is an effect, not an {kind}: name an {kind} here ({users}), or \
             define one with `effect: {written}` in `abilities:`",
            kind = T::KIND
        ))
    }

    /// The ids of the entries `view` sees, in load order (at most `max`), for messages
    /// that name what exists.
    pub fn visible_ids(&self, view: &View<'_>, max: usize) -> Vec<String> {
        self.records
            .iter()
            .filter(|r| view.sees(r.pack))
            .map(|r| r.id.clone())
            .take(max)
            .collect()
    }

    /// For an unknown name: a loaded pack the view does not see that has an entry with
    /// this id, in words ("it exists, but this pack does not require its pack").
    fn hidden(&self, view: &View<'_>, written: &str) -> Option<String> {
        let own = view.pack?;
        let r = self
            .records
            .iter()
            .find(|r| r.id == written && !view.sees(r.pack))?;
        let other = &view.pack_ids[r.pack];
        let at = view
            .requires_at
            .as_deref()
            .map_or_else(String::new, |a| format!(" ({a})"));
        Some(format!(
            "unknown {kind} '{written}' in pack '{me}': pack '{other}' has {a_kind} '{written}', \
             but '{me}' does not require '{other}'; add `- {{ id: {other} }}` to `requires`{at}",
            kind = T::KIND,
            a_kind = with_article(T::KIND),
            me = view.pack_ids[own],
        ))
    }

    fn is_broken(&self, view: &View<'_>, written: &str) -> bool {
        match written.split_once(':') {
            Some((p, id)) => view
                .pack_ids
                .iter()
                .position(|x| x == p)
                .is_some_and(|p| self.broken.contains(&(p, id.to_string()))),
            None => self
                .broken
                .iter()
                .any(|(p, id)| id == written && view.sees(*p)),
        }
    }

    /// Add an entry defined (or patched, for `other:id`) by `source.pack`.
    pub fn add(&mut self, doc: T, source: Source, r: &mut Reading<'_>) {
        let (pack_ids, files) = (r.pack_ids, r.files);

        let path = files.path(source.file);
        let written = doc.id().value.clone();
        let loc = doc.id().loc;
        let (target_pack, id) = match written.split_once(':') {
            Some((p, id)) => (Some(p.to_string()), id.to_string()),
            None => (None, written.clone()),
        };
        if !super::discover::valid_id(&id) {
            r.diags.error(
                path,
                loc,
                format!("{} id '{written}' may only use lowercase letters, digits and '_' (with an optional 'pack:' prefix to patch)", T::KIND),
            );
            return;
        }
        let own = &pack_ids[source.pack];
        match target_pack {
            Some(p) if p != *own => self.patch(doc, &p, &id, source, r),
            _ => {
                let key = (source.pack, id.clone());
                if let Some(&first) = self.index.get(&key) {
                    let f = &self.records[first].defined;
                    r.diags.error(
                        path,
                        loc,
                        format!(
                            "{} '{id}' is already defined at {}:{}:{}; ids must be unique within a pack",
                            T::KIND,
                            files.path(f.file).display(),
                            f.loc.line,
                            f.loc.column
                        ),
                    );
                    return;
                }
                if self.records.len() >= super::totals::MAX_SECTION_ENTRIES {
                    r.diags
                        .error(path, loc, super::totals::too_many_entries(T::KIND, own));
                    self.full = true;
                    return;
                }
                let card = T::KIND == "card";
                if card && let Some(&first) = self.first_of.get(&id) {
                    // Within each pack's own files the name is not ambiguous (its own
                    // comes first), but scenarios, the command line and lists of all
                    // cards see both.
                    let f = &self.records[first];
                    let other = &pack_ids[f.pack];
                    r.diags.warning(
                        path,
                        loc,
                        format!(
                            "card '{id}' is also defined by pack '{other}' ({}:{}:{}): where both are loaded, scenarios, decks of other packs and the command line must write '{own}:{id}' or '{other}:{id}'; give this card an id of its own, or write `id: {other}:{id}` to change that one",
                            files.path(f.defined.file).display(),
                            f.defined.loc.line,
                            f.defined.loc.column
                        ),
                    );
                }
                if card {
                    self.first_of
                        .entry(id.clone())
                        .or_insert(self.records.len());
                }
                self.index.insert(key, self.records.len());
                self.records.push(Record {
                    pack: source.pack,
                    id,
                    doc,
                    defined: source,
                    patched: HashMap::new(),
                });
            }
        }
    }

    fn patch(&mut self, doc: T, target_pack: &str, id: &str, source: Source, r: &mut Reading<'_>) {
        let (pack_ids, deps, files) = (r.pack_ids, r.deps, r.files);

        let path = files.path(source.file);
        let loc = doc.id().loc;
        let own = &pack_ids[source.pack];
        let Some(tp) = pack_ids.iter().position(|p| p == target_pack) else {
            r.diags.error(
                path,
                loc,
                format!(
                    "'{target_pack}:{id}' patches pack '{target_pack}', which is not loaded{}",
                    hint(target_pack, pack_ids.iter().map(String::as_str))
                ),
            );
            return;
        };
        if !deps.contains(&tp) {
            r.diags.error(
                path,
                loc,
                format!(
                    "pack '{own}' patches '{target_pack}:{id}' but does not require '{target_pack}'; add `- {{ id: {target_pack} }}` to `requires` in its pack.yaml"
                ),
            );
            return;
        }
        let Some(&index) = self.index.get(&(tp, id.to_string())) else {
            let ids = self
                .records
                .iter()
                .filter(|r| r.pack == tp)
                .map(|r| r.id.as_str());
            r.diags.error(
                path,
                loc,
                format!(
                    "pack '{target_pack}' has no {} '{id}' to patch{}",
                    T::KIND,
                    hint(id, ids)
                ),
            );
            return;
        };
        let record = &mut self.records[index];
        for field in record.doc.patch(doc) {
            if let Some(earlier) = record.patched.get(field)
                && earlier.pack != source.pack
                && !deps.contains(&earlier.pack)
            {
                // `provenance::order_decides` for the two packs (`deps` is this pack's).
                r.diags.warning(
                    path,
                    loc,
                    format!(
                        "field `{}` of {target_pack}:{id} is also patched by pack '{}' at {}:{}:{}, which pack '{own}' does not require; this patch, later in load order, wins",
                        yaml_name(field),
                        pack_ids[earlier.pack],
                        files.path(earlier.file).display(),
                        earlier.loc.line,
                        earlier.loc.column
                    ),
                );
            }
            record.patched.insert(field, source);
        }
    }

    /// Resolve a reference written in the view's pack: `pack:id` exactly, or an id of the
    /// pack itself, then of its dependencies. Reports unknown and ambiguous names.
    pub fn resolve(
        &self,
        name: &Located<String>,
        view: &View<'_>,
        path: &std::path::Path,
        files: &Files,
        diags: &mut Diagnostics,
    ) -> Option<usize> {
        let written = name.value.as_str();
        if let Some((p, id)) = written.split_once(':') {
            let Some(pack) = view.pack_ids.iter().position(|x| x == p) else {
                diags.error(
                    path,
                    name.loc,
                    format!(
                        "unknown pack '{p}' in '{written}'{}",
                        hint(p, view.pack_ids.iter().map(String::as_str))
                    ),
                );
                return None;
            };
            if !view.sees(pack) {
                let own = view.pack.map_or("this", |i| view.pack_ids[i].as_str());
                diags.error(
                    path,
                    name.loc,
                    format!("'{written}' is in pack '{p}', which pack '{own}' does not require; add it to `requires` in pack.yaml"),
                );
                return None;
            }
            return match self.index.get(&(pack, id.to_string())) {
                Some(&i) => Some(i),
                None if self.is_broken(view, written) => None,
                None if let Some(told) = self.unknown_after_unreadable(view, written) => {
                    if let Some(message) = told {
                        diags.error(path, name.loc, message);
                    }
                    None
                }
                None => {
                    let ids = self
                        .records
                        .iter()
                        .filter(|r| r.pack == pack)
                        .map(|r| r.id.as_str());
                    let suggestion = nearest(id, ids)
                        .map(|n| format!(" (did you mean '{p}:{n}'?)"))
                        .unwrap_or_default();
                    diags.error(
                        path,
                        name.loc,
                        format!("unknown {} '{written}'{suggestion}", T::KIND),
                    );
                    None
                }
            };
        }
        if let Some(own) = view.pack
            && let Some(&i) = self.index.get(&(own, written.to_string()))
        {
            return Some(i);
        }
        let candidates: Vec<usize> = view
            .deps
            .iter()
            .filter_map(|&d| self.index.get(&(d, written.to_string())).copied())
            .chain(if view.pack.is_none() {
                self.records
                    .iter()
                    .enumerate()
                    .filter(|(_, r)| r.id == written)
                    .map(|(i, _)| i)
                    .collect::<Vec<_>>()
            } else {
                Vec::new()
            })
            .collect();
        let mut candidates = candidates;
        candidates.dedup();
        match candidates.as_slice() {
            [one] => Some(*one),
            [] if self.is_broken(view, written) => None,
            [] if let Some(told) = self.unknown_after_unreadable(view, written) => {
                if let Some(message) = told {
                    diags.error(path, name.loc, message);
                }
                None
            }
            [] if let Some(message) = self.effect_named(view, written) => {
                diags.error(path, name.loc, message);
                None
            }
            [] if let Some(message) = self.hidden(view, written) => {
                diags.error(path, name.loc, message);
                None
            }
            [] => {
                let visible = self
                    .records
                    .iter()
                    .filter(|r| view.sees(r.pack))
                    .map(|r| r.id.as_str());
                diags.error(
                    path,
                    name.loc,
                    format!("unknown {} '{written}'{}", T::KIND, hint(written, visible)),
                );
                None
            }
            many => {
                let list: Vec<String> = many
                    .iter()
                    .map(|&i| {
                        let r = &self.records[i];
                        format!(
                            "'{}:{}' ({}:{})",
                            view.pack_ids[r.pack],
                            r.id,
                            files.path(r.defined.file).display(),
                            r.defined.loc.line
                        )
                    })
                    .collect();
                diags.error(
                    path,
                    name.loc,
                    format!(
                        "{} '{written}' is ambiguous: it could be {}; write the one you mean with its pack prefix",
                        T::KIND,
                        list.join(" or ")
                    ),
                );
                None
            }
        }
    }
}

/// A document field's key as written in YAML.
fn yaml_name(field: &str) -> &str {
    match field {
        "kind" => "type",
        other => other,
    }
}

fn hint<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> String {
    nearest(name, candidates)
        .map(|n| format!(" (did you mean '{n}'?)"))
        .unwrap_or_default()
}

/// A kind of entry with its article: "an ability", "a card", "a token type".
fn with_article(kind: &str) -> String {
    let article = if kind.starts_with(['a', 'e', 'i', 'o', 'u']) {
        "an"
    } else {
        "a"
    };
    format!("{article} {kind}")
}
