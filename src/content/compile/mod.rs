//! Compiling the gathered documents into the runtime [`Catalog`]: resolving references,
//! checking every value against what the engine supports, and filling in defaults.
//!
//! `entries.rs` compiles areas, token types, abilities, cards and decks; `rules.rs` merges
//! the rules layers into a `Ruleset`; `grid.rs` reads area pictures.
//!
//! Script sources are read here, each capped per file, per pack and for the whole set
//! (`fsutil::MAX_SCRIPT_FILE`, `MAX_PACK_SCRIPTS`, `MAX_SET_SCRIPTS`), since a pack from
//! another machine may be written to exhaust a load.

mod entries;
mod grid;
mod rules;

use entries::{compile_ability, compile_area, compile_card, compile_deck, compile_token_type};
use grid::parse_grid;
use rules::compile_rules;

use std::path::{Path, PathBuf};

use super::diagnostic::Diagnostics;
use super::discover::Ordered;
use super::doc::{
    AbilityDoc, AmountDoc, AreaDoc, AreaRef, CardDoc, DeckDoc, EffectDoc, LimitsDoc, RelationDoc,
    RulesDoc, SideDoc, TokenTypeDoc,
};
use super::registry::{Entry, Record, Registry, Source, View};
use super::yaml::{Loc, Located};
use super::{Files, Sections};
use crate::rules::never;
use crate::rules::{
    AbilityDef, AbilityId, Amount, Area, AreaDef, AreaId, Aura, Becomes, CardDef, CardId, Catalog,
    CatalogParts, Cell, DeckDef, DeckError, Effect, MAX_CELLS, MAX_SIDE, MAX_STACK_CARDS,
    MAX_STACKS, Meta, MoveLimits, Offset, OpeningToken, Origin, Relation, Ruleset, ScriptDef,
    ScriptId, Seat, Side, TokenTypeDef, TokenTypeId, Turret, Whose, deck_problems,
};

/// The largest offset component an area or direction may use.
const MAX_OFFSET: i64 = 15;
/// The largest value a card, token or amount may have.
const MAX_VALUE: i64 = 1_000_000;

struct Ctx<'a> {
    ordered: &'a Ordered,
    pack_ids: &'a [String],
    files: &'a Files,
    sections: &'a Sections,
    diags: &'a mut Diagnostics,
    scripts: Vec<ScriptDef>,
    /// Each script's index by (pack, path), and the bytes of script source read per
    /// pack and in all.
    script_index: std::collections::HashMap<(String, String), usize>,
    script_bytes: std::collections::HashMap<usize, u64>,
    script_total: u64,
    areas: Vec<Option<Vec<Offset>>>,
    /// Where each rule's winning value came from: name, pack, source.
    rule_sources: Vec<(&'static str, Option<usize>, Source)>,
}

pub(super) fn compile(
    ordered: &Ordered,
    pack_ids: &[String],
    files: &Files,
    sections: &Sections,
    diags: &mut Diagnostics,
) -> Option<Catalog> {
    for count in [
        sections.areas.records.len(),
        sections.token_types.records.len(),
        sections.abilities.records.len(),
        sections.cards.records.len(),
        sections.decks.records.len(),
    ] {
        if count >= usize::from(u16::MAX) {
            let path = files.path(0);
            diags.error(
                path,
                Loc::default(),
                "more than 65,534 entries in one section",
            );
            return None;
        }
    }
    let mut cx = Ctx {
        ordered,
        pack_ids,
        files,
        sections,
        diags,
        scripts: Vec::new(),
        script_index: std::collections::HashMap::new(),
        script_bytes: std::collections::HashMap::new(),
        script_total: 0,
        areas: Vec::new(),
        rule_sources: Vec::new(),
    };
    let areas = compile_all(&mut cx, &sections.areas, compile_area);
    cx.areas = areas
        .iter()
        .map(|a| a.as_ref().map(|a| a.offsets.clone()))
        .collect();
    let token_types = compile_all(&mut cx, &sections.token_types, compile_token_type);
    let abilities = compile_all(&mut cx, &sections.abilities, compile_ability);
    let cards = compile_all(&mut cx, &sections.cards, |cx, r| {
        compile_card(cx, r, &abilities)
    });
    let rules = compile_rules(&mut cx);
    // Without rules, decks are still read (their card references checked) but not sized.
    let decks = compile_all(&mut cx, &sections.decks, |cx, r| {
        compile_deck(cx, r, rules.as_ref())
    });
    // A pack's `ai.lua` (an `evaluate` heuristic for the AI) sits at the pack's root.
    let mut infos: Vec<crate::rules::PackInfo> = ordered
        .packs
        .iter()
        .map(crate::content::discover::Pack::info)
        .collect();
    for (i, pack) in ordered.packs.iter().enumerate() {
        if pack.dir.join("ai.lua").is_file() {
            let source = Source {
                pack: i,
                file: 0,
                loc: Loc::default(),
            };
            let name = Located::new("ai.lua".to_string(), Loc::default());
            infos[i].ai_script = cx.script(source, i, &name);
        }
    }
    Some(Catalog::new(CatalogParts {
        rules: rules?,
        areas: all(areas)?,
        token_types: all(token_types)?,
        abilities: all(abilities)?,
        cards: all(cards)?,
        decks: all(decks)?,
        scripts: cx.scripts,
        packs: infos,
    }))
}

fn all<D>(v: Vec<Option<D>>) -> Option<Vec<D>> {
    v.into_iter().collect()
}

fn compile_all<T, D>(
    cx: &mut Ctx<'_>,
    registry: &Registry<T>,
    mut f: impl FnMut(&mut Ctx<'_>, &Record<T>) -> Option<D>,
) -> Vec<Option<D>> {
    registry.records.iter().map(|r| f(cx, r)).collect()
}

/// Where pack `pack` lists what it requires: `DIR/pack.yaml:LINE` of its last
/// requirement, or its manifest when it has none.
fn requires_at(ordered: &Ordered, pack: Option<usize>) -> Option<String> {
    let p = ordered.packs.get(pack?)?;
    let manifest = crate::fsutil::shown(&p.dir.join("pack.yaml"));
    Some(match p.manifest.requires.last() {
        Some(r) => format!("{manifest}:{}", r.loc.line),
        None => manifest,
    })
}

impl Ctx<'_> {
    fn path(&self, source: Source) -> &Path {
        self.files.path(source.file)
    }

    fn error(&mut self, source: Source, loc: Loc, message: impl Into<String>) {
        let path = self.files.path(source.file).to_path_buf();
        self.diags.error(&path, loc, message);
    }

    fn warning(&mut self, source: Source, loc: Loc, message: impl Into<String>) {
        let path = self.files.path(source.file).to_path_buf();
        self.diags.warning(&path, loc, message);
    }

    /// When rule `name` was set by a pack other than `pack`, a note saying where, for
    /// messages about content that breaks that rule.
    fn rule_note(&self, name: &str, pack: usize) -> String {
        match self.rule_sources.iter().find(|(n, _, _)| *n == name) {
            Some((_, Some(p), source)) if *p != pack => format!(
                " (rules.{name} is set by pack '{}' at {}:{})",
                self.pack_ids[*p],
                self.files.path(source.file).display(),
                source.loc.line
            ),
            _ => String::new(),
        }
    }

    fn view(&self, pack: Option<usize>) -> View<'_> {
        View {
            pack,
            deps: pack.map_or(&[][..], |p| &self.ordered.deps[p]),
            pack_ids: self.pack_ids,
            requires_at: requires_at(self.ordered, pack),
        }
    }

    fn resolve<T: Entry>(
        &mut self,
        registry: &Registry<T>,
        name: &Located<String>,
        source: Source,
        pack: Option<usize>,
    ) -> Option<usize> {
        let path = self.path(source).to_path_buf();
        let view = View {
            pack,
            deps: pack.map_or(&[][..], |p| &self.ordered.deps[p]),
            pack_ids: self.pack_ids,
            requires_at: requires_at(self.ordered, pack),
        };
        registry.resolve(name, &view, &path, self.files, self.diags)
    }

    fn token_type(
        &mut self,
        name: &Located<String>,
        source: Source,
        pack: Option<usize>,
    ) -> Option<TokenTypeId> {
        let sections = self.sections;
        self.resolve(&sections.token_types, name, source, pack)
            .map(TokenTypeId::from_index)
    }

    /// The `basic` token type as the pack sees it (the default token type); `field` is
    /// the key that names a type where `what` is written (`token`, `type`).
    fn basic(
        &mut self,
        source: Source,
        loc: Loc,
        pack: Option<usize>,
        what: &str,
        field: &str,
    ) -> Option<TokenTypeId> {
        let name = Located::new("basic".to_string(), loc);
        let mut probe = Diagnostics::default();
        let sections = self.sections;
        let view = self.view(pack);
        let found = sections.token_types.resolve(
            &name,
            &view,
            self.files.path(source.file),
            self.files,
            &mut probe,
        );
        if found.is_none() {
            let types = sections.token_types.visible_ids(&view, 12);
            let choice = if types.is_empty() {
                "no token type is defined yet: define one in `token_types:`".to_string()
            } else {
                format!(
                    "the token types it can use: {}",
                    types
                        .iter()
                        .map(|t| format!("'{t}'"))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            };
            self.error(
                source,
                loc,
                format!(
                    "{what} has no type, and there is no 'basic' token type to default to: give it one with `{field}: ID` ({choice})"
                ),
            );
        }
        found.map(TokenTypeId::from_index)
    }

    fn int(
        &mut self,
        source: Source,
        value: &Located<i64>,
        what: &str,
        range: std::ops::RangeInclusive<i64>,
    ) -> Option<i32> {
        if range.contains(&value.value) {
            i32::try_from(value.value).ok()
        } else {
            self.error(
                source,
                value.loc,
                format!(
                    "{what} must be from {} to {}, found {}",
                    range.start(),
                    range.end(),
                    value.value
                ),
            );
            None
        }
    }

    fn required<'v, V>(
        &mut self,
        field: &'v Option<V>,
        source: Source,
        loc: Loc,
        message: impl FnOnce() -> String,
    ) -> Option<&'v V> {
        if field.is_none() {
            self.error(source, loc, message());
        }
        field.as_ref()
    }

    fn offsets(
        &mut self,
        source: Source,
        list: &[Located<[i64; 2]>],
        what: &str,
    ) -> Option<Vec<Offset>> {
        let mut out = Vec::with_capacity(list.len());
        let mut ok = true;
        for item in list {
            let [dx, dy] = item.value;
            let range = -MAX_OFFSET..=MAX_OFFSET;
            if !range.contains(&dx) || !range.contains(&dy) {
                self.error(
                    source,
                    item.loc,
                    format!("{what} [{dx}, {dy}] is too far: each part must be from -{MAX_OFFSET} to {MAX_OFFSET}"),
                );
                ok = false;
                continue;
            }
            if dx == 0 && dy == 0 {
                self.error(
                    source,
                    item.loc,
                    format!("{what} [0, 0] is the placed token's own cell; areas and directions leave it out"),
                );
                ok = false;
                continue;
            }
            // Within ±MAX_OFFSET, checked above.
            let small = |v: i64| {
                i8::try_from(v).unwrap_or_else(|_| never!(0, "offset {v} past ±{MAX_OFFSET}"))
            };
            let o = Offset::new(small(dx), small(dy));
            if out.contains(&o) {
                self.error(
                    source,
                    item.loc,
                    format!("{what} [{dx}, {dy}] is listed twice"),
                );
                ok = false;
                continue;
            }
            out.push(o);
        }
        ok.then_some(out)
    }

    fn area_ref(
        &mut self,
        source: Source,
        area: &Located<AreaRef>,
        pack: Option<usize>,
    ) -> Option<Area> {
        match &area.value {
            AreaRef::Named(name) => {
                let name = Located::new(name.clone(), area.loc);
                let sections = self.sections;
                let index = self.resolve(&sections.areas, &name, source, pack)?;
                let offsets = self.areas.get(index).cloned().flatten()?;
                Some(Area::new(Some(AreaId::from_index(index)), offsets))
            }
            AreaRef::Offsets(list) => {
                let offsets = self.offsets(source, list, "offset")?;
                if offsets.is_empty() {
                    self.error(source, area.loc, "an area needs at least one offset");
                    return None;
                }
                Some(Area::new(None, offsets))
            }
            AreaRef::Grid(grid) => {
                let grid = Located::new(grid.clone(), area.loc);
                self.grid(source, &grid)
                    .map(|offsets| Area::new(None, offsets))
            }
        }
    }

    fn grid(&mut self, source: Source, grid: &Located<String>) -> Option<Vec<Offset>> {
        match parse_grid(&grid.value) {
            Ok(offsets) => Some(offsets),
            Err(e) => {
                // A picture over several lines is a block scalar (`grid: |`): its text
                // starts at `grid.loc`, one line of text per line of the file, so the row
                // or cell at fault can be pointed at. One line may be quoted: keep its start.
                let loc = match e.at {
                    Some((line, column)) if grid.value.trim_end().contains('\n') => Loc {
                        line: grid
                            .loc
                            .line
                            .saturating_add(u32::try_from(line).unwrap_or(u32::MAX)),
                        column: grid
                            .loc
                            .column
                            .saturating_add(u32::try_from(column).unwrap_or(u32::MAX)),
                    },
                    _ => grid.loc,
                };
                self.error(source, loc, e.message);
                None
            }
        }
    }

    fn script(&mut self, source: Source, pack: usize, file: &Located<String>) -> Option<ScriptId> {
        let rel = Path::new(&file.value);
        let escapes = rel.is_absolute()
            || rel.components().any(|c| {
                !matches!(
                    c,
                    std::path::Component::Normal(_) | std::path::Component::CurDir
                )
            });
        if escapes {
            self.error(
                source,
                file.loc,
                format!(
                    "script path '{}' must be relative and stay inside the pack folder",
                    file.value
                ),
            );
            return None;
        }
        if rel.extension().and_then(|e| e.to_str()) != Some("lua") {
            self.error(
                source,
                file.loc,
                format!("script '{}' must be a .lua file", file.value),
            );
            return None;
        }
        // `./scripts/a.lua` and `scripts/a.lua` are the same script.
        let rel: PathBuf = rel
            .components()
            .filter(|c| !matches!(c, std::path::Component::CurDir))
            .collect();
        let normal = rel.to_string_lossy().replace('\\', "/");
        let file = &Located::new(normal, file.loc);
        let full = self.ordered.packs[pack].dir.join(&rel);
        let pack_id = self.pack_ids[pack].clone();
        // A file named by many entries is read once.
        let key = (pack_id.clone(), file.value.clone());
        if let Some(&i) = self.script_index.get(&key) {
            return Some(ScriptId::from_index(i));
        }
        // Script ids are 16-bit, like every id of the catalog.
        if self.scripts.len() >= usize::from(u16::MAX) {
            self.error(
                source,
                file.loc,
                format!(
                    "script file '{}' is not read: more than 65,534 script files in the packs loaded together",
                    file.value
                ),
            );
            return None;
        }
        let used = self.script_bytes.get(&pack).copied().unwrap_or(0);
        let all = self.script_total;
        let left = crate::fsutil::MAX_PACK_SCRIPTS
            .saturating_sub(used)
            .min(crate::fsutil::MAX_SET_SCRIPTS.saturating_sub(all));
        let read = if inside_links(&self.ordered.packs[pack].dir, &rel) {
            Err(crate::fsutil::ReadError::Link)
        } else {
            crate::fsutil::read_text(&full, crate::fsutil::MAX_SCRIPT_FILE.min(left), "a script")
        };
        if let Err(crate::fsutil::ReadError::TooLarge { .. }) = &read
            && left < crate::fsutil::MAX_SCRIPT_FILE
        {
            let what = if left == crate::fsutil::MAX_PACK_SCRIPTS.saturating_sub(used) {
                format!(
                    "the scripts of one pack may hold {} bytes together",
                    crate::fsutil::MAX_PACK_SCRIPTS
                )
            } else {
                format!(
                    "the scripts of all packs loaded together may hold {} bytes",
                    crate::fsutil::MAX_SET_SCRIPTS
                )
            };
            self.error(
                source,
                file.loc,
                format!(
                    "script file '{}' is not read: {what}, and only {left} are left",
                    file.value
                ),
            );
            return None;
        }
        let text = match read {
            Ok(text) => text,
            Err(e) => {
                let why = if e.is_not_found() {
                    format!("was not found (looked for {})", crate::fsutil::shown(&full))
                } else {
                    format!("cannot be read ({}): {e}", crate::fsutil::shown(&full))
                };
                self.error(
                    source,
                    file.loc,
                    format!("script file '{}' {why}", file.value),
                );
                return None;
            }
        };
        let bytes = text.len() as u64;
        *self.script_bytes.entry(pack).or_insert(0) += bytes;
        self.script_total += bytes;
        self.script_index.insert(key, self.scripts.len());
        self.scripts.push(ScriptDef {
            pack: pack_id,
            path: file.value.clone(),
            file: full.display().to_string(),
            source: text,
        });
        Some(ScriptId::from_index(self.scripts.len() - 1))
    }

    fn meta<T>(
        &self,
        record: &Record<T>,
        name: Option<&String>,
        description: Option<&String>,
    ) -> Meta {
        Meta {
            id: record.id.clone(),
            name: name.cloned().unwrap_or_else(|| record.id.clone()),
            description: description.cloned().unwrap_or_default(),
            origin: Origin {
                pack: self.pack_ids[record.pack].clone(),
                file: self.path(record.defined).display().to_string(),
                line: record.defined.loc.line,
                column: record.defined.loc.column,
            },
        }
    }
}

/// Whether a folder on the way from `dir` to `dir/rel` is a symbolic link (links inside a
/// pack are not followed, for scripts either).
fn inside_links(dir: &Path, rel: &Path) -> bool {
    let mut at = dir.to_path_buf();
    let mut parts = rel.components().peekable();
    while let Some(part) = parts.next() {
        at.push(part);
        if parts.peek().is_some() && crate::fsutil::is_link(&at) {
            return true;
        }
    }
    false
}
