//! Compiling the gathered documents into the runtime [`Catalog`]: resolving references,
//! checking every value against what the engine supports, and filling in defaults.

use std::collections::HashSet;
use std::path::Path;

use super::diagnostic::Diagnostics;
use super::discover::Ordered;
use super::doc::{
    AbilityDoc, AmountDoc, AreaDoc, AreaRef, CardDoc, DeckDoc, EffectDoc, RelationDoc, RulesDoc,
    SideDoc, TokenTypeDoc,
};
use super::registry::{Entry, Record, Registry, Source, View};
use super::yaml::{Loc, Located};
use super::{Files, Sections};
use crate::rules::{
    AbilityDef, AbilityId, Amount, Area, AreaDef, AreaId, Aura, Becomes, CardDef, CardId, Catalog,
    Cell, DeckDef, Effect, MAX_CELLS, MAX_SIDE, MAX_STACK_CARDS, MAX_STACKS, Meta, Offset,
    OpeningToken, Origin, Relation, Ruleset, ScriptDef, ScriptId, Seat, Side, TokenTypeDef,
    TokenTypeId, Turret,
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
    areas: Vec<Option<Vec<Offset>>>,
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
        areas: Vec::new(),
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
    let decks = match &rules {
        Some(rules) => compile_all(&mut cx, &sections.decks, |cx, r| compile_deck(cx, r, rules)),
        None => Vec::new(),
    };
    Some(Catalog::new(
        rules?,
        all(areas)?,
        all(token_types)?,
        all(abilities)?,
        all(cards)?,
        all(decks)?,
        cx.scripts,
        ordered
            .packs
            .iter()
            .map(super::discover::Pack::info)
            .collect(),
    ))
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

    fn view(&self, pack: Option<usize>) -> View<'_> {
        View {
            pack,
            deps: pack.map_or(&[][..], |p| &self.ordered.deps[p]),
            pack_ids: self.pack_ids,
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
            .map(|i| TokenTypeId(u16::try_from(i).unwrap_or(u16::MAX)))
    }

    /// The `basic` token type as the pack sees it (the default token type).
    fn basic(
        &mut self,
        source: Source,
        loc: Loc,
        pack: Option<usize>,
        what: &str,
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
            self.error(
                source,
                loc,
                format!("{what} has no type and no 'basic' token type is defined to default to; give the type"),
            );
        }
        found.map(|i| TokenTypeId(u16::try_from(i).unwrap_or(u16::MAX)))
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
            if dx.abs() > MAX_OFFSET || dy.abs() > MAX_OFFSET {
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
            let o = Offset::new(i8::try_from(dx).unwrap_or(0), i8::try_from(dy).unwrap_or(0));
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
                Some(Area::new(
                    Some(AreaId(u16::try_from(index).unwrap_or(u16::MAX))),
                    offsets,
                ))
            }
            AreaRef::Offsets(list) => {
                let located: Vec<Located<[i64; 2]>> =
                    list.iter().map(|&o| Located::new(o, area.loc)).collect();
                let offsets = self.offsets(source, &located, "offset")?;
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
            Err(message) => {
                self.error(source, grid.loc, message);
                None
            }
        }
    }

    fn script(&mut self, source: Source, pack: usize, file: &Located<String>) -> Option<ScriptId> {
        let rel = Path::new(&file.value);
        let escapes = rel.is_absolute()
            || rel
                .components()
                .any(|c| !matches!(c, std::path::Component::Normal(_)));
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
        let full = self.ordered.packs[pack].dir.join(rel);
        if !full.is_file() {
            self.error(
                source,
                file.loc,
                format!(
                    "script file '{}' was not found (looked for {})",
                    file.value,
                    full.display()
                ),
            );
            return None;
        }
        let pack_id = self.pack_ids[pack].clone();
        if let Some(i) = self
            .scripts
            .iter()
            .position(|s| s.pack == pack_id && s.path == file.value)
        {
            return Some(ScriptId(u16::try_from(i).unwrap_or(u16::MAX)));
        }
        self.scripts.push(ScriptDef {
            pack: pack_id,
            path: file.value.clone(),
            file: full.display().to_string(),
        });
        Some(ScriptId(
            u16::try_from(self.scripts.len() - 1).unwrap_or(u16::MAX),
        ))
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

/// Parse a grid picture into offsets, row by row, left to right.
pub(crate) fn parse_grid(text: &str) -> Result<Vec<Offset>, String> {
    let rows: Vec<Vec<&str>> = text
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .filter(|r| !r.is_empty())
        .collect();
    let width = rows.first().map_or(0, Vec::len);
    let mut centre = None;
    let mut targets = Vec::new();
    for (y, row) in rows.iter().enumerate() {
        if row.len() != width {
            return Err(format!(
                "grid row {} has {} cells but row 1 has {width}; every row needs the same number of cells",
                y + 1,
                row.len()
            ));
        }
        for (x, cell) in row.iter().enumerate() {
            match *cell {
                "o" | "O" => {
                    if centre.is_some() {
                        return Err(format!(
                            "grid has more than one `o` (row {}); `o` marks the one placed token",
                            y + 1
                        ));
                    }
                    centre = Some((x, y));
                }
                "x" | "X" => targets.push((x, y)),
                "." => {}
                other => {
                    return Err(format!(
                        "grid cell `{other}` in row {}, column {} is not `o` (the placed token), `x` (a target) or `.` (nothing); separate cells with spaces",
                        y + 1,
                        x + 1
                    ));
                }
            }
        }
    }
    let Some((cx, cy)) = centre else {
        return Err("grid has no `o` marking the placed token".to_string());
    };
    if targets.is_empty() {
        return Err("grid has no `x` target cell".to_string());
    }
    let to_i8 = |v: usize, c: usize| -> Result<i8, String> {
        let d = i64::try_from(v).unwrap_or(i64::MAX) - i64::try_from(c).unwrap_or(0);
        if d.abs() > MAX_OFFSET {
            Err(format!(
                "grid reaches further than {MAX_OFFSET} cells from `o`"
            ))
        } else {
            i8::try_from(d).map_err(|_| "grid is too large".to_string())
        }
    };
    targets
        .into_iter()
        .map(|(x, y)| Ok(Offset::new(to_i8(x, cx)?, to_i8(y, cy)?)))
        .collect()
}

fn compile_area(cx: &mut Ctx<'_>, r: &Record<AreaDoc>) -> Option<AreaDef> {
    let doc = &r.doc;
    let offsets = match (&doc.offsets, &doc.grid) {
        (Some(list), None) => {
            let source = r.source("offsets");
            let offsets = cx.offsets(source, &list.value, "offset")?;
            if offsets.is_empty() {
                cx.error(source, list.loc, "an area needs at least one offset");
                return None;
            }
            offsets
        }
        (None, Some(grid)) => cx.grid(r.source("grid"), grid)?,
        (Some(_), Some(grid)) => {
            cx.error(
                r.source("grid"),
                grid.loc,
                format!("area '{}' has both `offsets` and `grid`; give one", r.id),
            );
            return None;
        }
        (None, None) => {
            cx.error(
                r.defined,
                doc.id.loc,
                format!("area '{}' needs `offsets` or `grid`", r.id),
            );
            return None;
        }
    };
    Some(AreaDef {
        meta: cx.meta(r, doc.name.as_ref(), doc.description.as_ref()),
        offsets,
    })
}

fn compile_token_type(cx: &mut Ctx<'_>, r: &Record<TokenTypeDoc>) -> Option<TokenTypeDef> {
    let doc = &r.doc;
    let mut ok = true;
    let aura = match &doc.aura {
        Some(a) => {
            let source = r.source("aura");
            let area = cx.area_ref(source, &a.area, Some(source.pack));
            let income = cx.int(source, &a.income, "aura income", -MAX_VALUE..=MAX_VALUE);
            let to = match a.to.value {
                RelationDoc::Friendly => Relation::Friendly,
                RelationDoc::Enemy => Relation::Enemy,
                RelationDoc::All => Relation::All,
            };
            match (area, income) {
                (Some(area), Some(income)) => Some(Aura { area, to, income }),
                _ => {
                    ok = false;
                    None
                }
            }
        }
        None => None,
    };
    let on_destroyed = match &doc.on_destroyed {
        Some(d) => {
            let source = r.source("on_destroyed");
            let kind = cx.token_type(&d.becomes, source, Some(source.pack));
            let value = cx.int(source, &d.value.value, "on_destroyed value", 1..=MAX_VALUE);
            match (kind, value) {
                (Some(kind), Some(value)) => Some(Becomes { kind, value }),
                _ => {
                    ok = false;
                    None
                }
            }
        }
        None => None,
    };
    let income_multiplier = match &doc.income_multiplier {
        Some(m) => cx.int(
            r.source("income_multiplier"),
            m,
            "income_multiplier",
            -100..=100,
        ),
        None => Some(1),
    };
    let between_turns = match &doc.between_turns {
        Some(b) => {
            let source = r.source("between_turns");
            let amount = cx.int(source, &b.amount, "between_turns amount", 1..=MAX_VALUE);
            let directions = cx.offsets(source, &b.directions.value, "direction");
            if directions.as_ref().is_some_and(Vec::is_empty) {
                cx.error(
                    source,
                    b.directions.loc,
                    "between_turns needs at least one direction",
                );
                ok = false;
            }
            match (amount, directions) {
                (Some(amount), Some(directions)) => Some(Turret { amount, directions }),
                _ => {
                    ok = false;
                    None
                }
            }
        }
        None => None,
    };
    let script = match &doc.script {
        Some(s) => {
            let source = r.source("script");
            let id = cx.script(source, source.pack, s);
            ok &= id.is_some();
            id
        }
        None => None,
    };
    let income_multiplier = income_multiplier?;
    ok.then(|| TokenTypeDef {
        meta: cx.meta(r, doc.name.as_ref(), doc.description.as_ref()),
        aura,
        on_destroyed,
        income_multiplier,
        between_turns,
        script,
    })
}

/// The parameters each built-in effect takes.
fn params_of(effect: EffectDoc) -> &'static [&'static str] {
    match effect {
        EffectDoc::Damage | EffectDoc::NextTokenBonus => &["amount"],
        EffectDoc::Push | EffectDoc::Flip | EffectDoc::SwapWithLast => &[],
        EffectDoc::Spawn => &["owner", "value", "type"],
        EffectDoc::ExtraTurn => &["player", "condition"],
        EffectDoc::Transform => &["into", "max_value"],
    }
}

fn given_params(doc: &AbilityDoc) -> Vec<(&'static str, &'static str, Loc)> {
    let mut out = Vec::new();
    let mut add = |name: &'static str, field: &'static str, loc: Option<Loc>| {
        if let Some(loc) = loc {
            out.push((name, field, loc));
        }
    };
    add("amount", "amount", doc.amount.as_ref().map(|v| v.loc));
    add("owner", "owner", doc.owner.as_ref().map(|v| v.loc));
    add("value", "value", doc.value.as_ref().map(|v| v.loc));
    add("type", "kind", doc.kind.as_ref().map(|v| v.loc));
    add("player", "player", doc.player.as_ref().map(|v| v.loc));
    add(
        "condition",
        "condition",
        doc.condition.as_ref().map(|v| v.loc),
    );
    add("into", "into", doc.into.as_ref().map(|v| v.loc));
    add(
        "max_value",
        "max_value",
        doc.max_value.as_ref().map(|v| v.loc),
    );
    out
}

fn compile_ability(cx: &mut Ctx<'_>, r: &Record<AbilityDoc>) -> Option<AbilityDef> {
    let doc = &r.doc;
    let effect = match (&doc.effect, &doc.script) {
        (Some(e), None) => {
            for (name, field, loc) in given_params(doc) {
                if !params_of(e.value).contains(&name) {
                    let takes = params_of(e.value);
                    let takes = if takes.is_empty() {
                        "it takes no parameters".to_string()
                    } else {
                        format!("it takes: {}", takes.join(", "))
                    };
                    cx.warning(
                        r.source(field),
                        loc,
                        format!(
                            "`{name}` is ignored: effect `{}` does not use it ({takes})",
                            e.value.name()
                        ),
                    );
                }
            }
            builtin_effect(cx, r, e)?
        }
        (None, Some(s)) => {
            for (name, field, loc) in given_params(doc) {
                cx.warning(
                    r.source(field),
                    loc,
                    format!("`{name}` is ignored: a scripted ability reads no effect parameters"),
                );
            }
            let source = r.source("script");
            Effect::Script(cx.script(source, source.pack, s)?)
        }
        (Some(_), Some(s)) => {
            cx.error(
                r.source("script"),
                s.loc,
                format!(
                    "ability '{}' has both `effect` and `script`; give one",
                    r.id
                ),
            );
            return None;
        }
        (None, None) => {
            cx.error(
                r.defined,
                doc.id.loc,
                format!("ability '{}' needs an `effect` (damage, push, flip, spawn, extra_turn, swap_with_last, transform, next_token_bonus) or a `script`", r.id),
            );
            return None;
        }
    };
    Some(AbilityDef {
        meta: cx.meta(r, doc.name.as_ref(), doc.description.as_ref()),
        effect,
    })
}

fn builtin_effect(
    cx: &mut Ctx<'_>,
    r: &Record<AbilityDoc>,
    e: &Located<EffectDoc>,
) -> Option<Effect> {
    let doc = &r.doc;
    let side = |s: Option<&Located<SideDoc>>| match s.map(|s| s.value) {
        Some(SideDoc::Opponent) => Side::Opponent,
        Some(SideDoc::Mover) | None => Side::Mover,
    };
    let missing = |what: &str| format!("effect `{}` needs `{what}`", e.value.name());
    Some(match e.value {
        EffectDoc::Damage => {
            let amount = cx.required(&doc.amount, r.source("effect"), doc.id.loc, || {
                missing("amount: an integer or friendly_in_area")
            })?;
            match amount.value {
                AmountDoc::FriendlyInArea => Effect::Damage {
                    amount: Amount::FriendlyInArea,
                },
                AmountDoc::Fixed(n) => Effect::Damage {
                    amount: Amount::Fixed(cx.int(
                        r.source("amount"),
                        &Located::new(n, amount.loc),
                        "damage amount",
                        1..=MAX_VALUE,
                    )?),
                },
            }
        }
        EffectDoc::Push => Effect::Push,
        EffectDoc::Flip => Effect::Flip,
        EffectDoc::SwapWithLast => Effect::SwapWithLast,
        EffectDoc::Spawn => {
            let value = match &doc.value {
                Some(v) => cx.int(r.source("value"), v, "spawn value", 1..=MAX_VALUE)?,
                None => 1,
            };
            let kind = match &doc.kind {
                Some(t) => {
                    let source = r.source("kind");
                    cx.token_type(t, source, Some(source.pack))?
                }
                None => cx.basic(r.defined, doc.id.loc, Some(r.pack), "this spawn effect")?,
            };
            Effect::Spawn {
                owner: side(doc.owner.as_ref()),
                value,
                kind,
            }
        }
        EffectDoc::ExtraTurn => Effect::ExtraTurn {
            player: side(doc.player.as_ref()),
            area_full: doc.condition.is_some(),
        },
        EffectDoc::Transform => {
            let into = cx.required(&doc.into, r.source("effect"), doc.id.loc, || {
                missing("into: a token type")
            })?;
            let source = r.source("into");
            let into = cx.token_type(into, source, Some(source.pack))?;
            let max_value = match &doc.max_value {
                Some(m) => Some(cx.int(
                    r.source("max_value"),
                    m,
                    "max_value",
                    -MAX_VALUE..=MAX_VALUE,
                )?),
                None => None,
            };
            Effect::Transform { into, max_value }
        }
        EffectDoc::NextTokenBonus => {
            let amount = cx.required(&doc.amount, r.source("effect"), doc.id.loc, || {
                missing("amount: an integer")
            })?;
            match amount.value {
                AmountDoc::Fixed(n) => Effect::NextTokenBonus {
                    amount: cx.int(
                        r.source("amount"),
                        &Located::new(n, amount.loc),
                        "bonus amount",
                        -MAX_VALUE..=MAX_VALUE,
                    )?,
                },
                AmountDoc::FriendlyInArea => {
                    cx.error(
                        r.source("amount"),
                        amount.loc,
                        "next_token_bonus takes an integer amount, not friendly_in_area",
                    );
                    return None;
                }
            }
        }
    })
}

/// Whether an effect needs an area to do anything.
fn needs_area(effect: &Effect) -> Option<bool> {
    match effect {
        Effect::Damage { .. }
        | Effect::Push
        | Effect::Flip
        | Effect::Spawn { .. }
        | Effect::Transform { .. } => Some(true),
        Effect::ExtraTurn { area_full, .. } => Some(*area_full),
        Effect::SwapWithLast | Effect::NextTokenBonus { .. } => Some(false),
        Effect::Script(_) => None,
    }
}

fn compile_card(
    cx: &mut Ctx<'_>,
    r: &Record<CardDoc>,
    abilities: &[Option<AbilityDef>],
) -> Option<CardDef> {
    let doc = &r.doc;
    let value = cx.required(&doc.value, r.defined, doc.id.loc, || {
        format!("card '{}' needs a `value`", r.id)
    });
    let value = match value {
        Some(v) => cx.int(r.source("value"), v, "card value", 1..=MAX_VALUE),
        None => None,
    };
    let token = match &doc.token {
        Some(t) => {
            let source = r.source("token");
            cx.token_type(t, source, Some(source.pack))
        }
        None => cx.basic(
            r.defined,
            doc.id.loc,
            Some(r.pack),
            &format!("card '{}'", r.id),
        ),
    };
    let ability = match &doc.ability {
        Some(a) => {
            let source = r.source("ability");
            let sections = cx.sections;
            cx.resolve(&sections.abilities, a, source, Some(source.pack))
                .map(|i| Some(AbilityId(u16::try_from(i).unwrap_or(u16::MAX))))
        }
        None => Some(None),
    };
    let area = match &doc.area {
        Some(a) => {
            let source = r.source("area");
            cx.area_ref(source, a, Some(source.pack)).map(Some)
        }
        None => Some(None),
    };
    let (value, token, ability, area) = (value?, token?, ability?, area?);
    let ability_def = ability.and_then(|a| abilities.get(a.index()).cloned().flatten());
    if let Some(def) = &ability_def {
        match (needs_area(&def.effect), &area) {
            (Some(true), None) => {
                cx.error(
                    r.defined,
                    doc.id.loc,
                    format!(
                        "card '{}' has ability '{}' ({}), which needs an area; add `area:`",
                        r.id,
                        def.meta.id,
                        def.effect.name()
                    ),
                );
                return None;
            }
            (Some(false), Some(_)) => {
                if let Some(a) = &doc.area {
                    cx.warning(
                        r.source("area"),
                        a.loc,
                        format!(
                            "area is ignored: ability '{}' ({}) does not use one",
                            def.meta.id,
                            def.effect.name()
                        ),
                    );
                }
            }
            _ => {}
        }
    } else if ability.is_none()
        && let Some(a) = &doc.area
    {
        cx.warning(
            r.source("area"),
            a.loc,
            format!("area is ignored: card '{}' has no ability", r.id),
        );
    }
    let mut meta = cx.meta(r, doc.name.as_ref(), doc.description.as_ref());
    if meta.description.is_empty() {
        meta.description = derived_description(value, ability_def.as_ref());
    }
    Some(CardDef {
        meta,
        value,
        token,
        ability,
        area: area.unwrap_or_default(),
    })
}

fn derived_description(value: i32, ability: Option<&AbilityDef>) -> String {
    match ability {
        Some(a) if !a.meta.description.is_empty() => a.meta.description.clone(),
        Some(a) => format!("Value {value}; {}.", a.meta.name),
        None => format!("A token of value {value}."),
    }
}

fn compile_deck(cx: &mut Ctx<'_>, r: &Record<DeckDoc>, rules: &Ruleset) -> Option<DeckDef> {
    let doc = &r.doc;
    let stacks = cx.required(&doc.stacks, r.defined, doc.id.loc, || {
        format!("deck '{}' needs `stacks`", r.id)
    })?;
    let source = r.source("stacks");
    let mut ok = true;
    if stacks.len() != usize::from(rules.stacks) {
        cx.error(
            source,
            stacks.loc,
            format!(
                "deck '{}' has {} stacks; the rules want {}",
                r.id,
                stacks.len(),
                rules.stacks
            ),
        );
        ok = false;
    }
    let mut seen: HashSet<CardId> = HashSet::new();
    let mut out = Vec::with_capacity(stacks.len());
    for (i, stack) in stacks.iter().enumerate() {
        if stack.len() < usize::from(rules.stack_min) || stack.len() > usize::from(rules.stack_max)
        {
            cx.error(
                source,
                stack.loc,
                format!(
                    "stack {} of deck '{}' has {} cards; stacks hold {} to {}",
                    i + 1,
                    r.id,
                    stack.len(),
                    rules.stack_min,
                    rules.stack_max
                ),
            );
            ok = false;
        }
        let mut cards = Vec::with_capacity(stack.len());
        for name in stack.iter() {
            let sections = cx.sections;
            let Some(index) = cx.resolve(&sections.cards, name, source, Some(source.pack)) else {
                ok = false;
                continue;
            };
            let id = CardId(u16::try_from(index).unwrap_or(u16::MAX));
            if !seen.insert(id) {
                cx.error(
                    source,
                    name.loc,
                    format!(
                        "card '{}' is already in deck '{}'; a card appears at most once in a deck",
                        name.value, r.id
                    ),
                );
                ok = false;
            }
            cards.push(id);
        }
        out.push(cards);
    }
    ok.then(|| DeckDef {
        meta: cx.meta(r, doc.name.as_ref(), doc.description.as_ref()),
        stacks: out,
    })
}

/// One rules field's winning value and where it came from.
struct Field<'a, T> {
    value: &'a Located<T>,
    source: Source,
    pack: Option<usize>,
}

/// The value of one rules field after every layer's patch (the last layer that sets it
/// wins), warning when two packs patch it. Reports a field no pack sets.
fn pick<'a, T>(
    cx: &mut Ctx<'_>,
    layers: &'a [(RulesDoc, Option<usize>, usize)],
    name: &str,
    get: impl Fn(&'a RulesDoc) -> Option<&'a Located<T>>,
) -> Option<Field<'a, T>> {
    let mut found: Option<Field<'a, T>> = None;
    let mut patches = 0;
    for (doc, pack, file) in layers {
        let Some(value) = get(doc) else { continue };
        let source = Source {
            pack: pack.unwrap_or(0),
            file: *file,
            loc: value.loc,
        };
        if let Some(prev) = &found
            && patches > 0
            && pack.is_some()
            && prev.pack.is_some()
            && prev.pack != *pack
        {
            let msg = format!(
                "rules.{name} is also patched by pack '{}' at {}:{}:{}; this patch, later in load order, wins",
                cx.pack_ids[prev.source.pack],
                cx.files.path(prev.source.file).display(),
                prev.value.loc.line,
                prev.value.loc.column
            );
            cx.warning(source, value.loc, msg);
        }
        if found.is_some() {
            patches += 1;
        }
        found = Some(Field {
            value,
            source,
            pack: *pack,
        });
    }
    if found.is_none() {
        let manifest = cx
            .ordered
            .packs
            .first()
            .map(super::discover::Pack::manifest_path)
            .unwrap_or_default();
        cx.diags.error(
            &manifest,
            Loc::default(),
            format!("no loaded pack sets rules.{name}; the base pack or a pack it requires must"),
        );
    }
    found
}

fn compile_rules(cx: &mut Ctx<'_>) -> Option<Ruleset> {
    let layers = &cx.sections.rules;
    let width = pick(cx, layers, "board.width", |d| {
        d.board.as_ref().and_then(|b| b.width.as_ref())
    });
    let height = pick(cx, layers, "board.height", |d| {
        d.board.as_ref().and_then(|b| b.height.as_ref())
    });
    let stacks = pick(cx, layers, "stacks", |d| d.stacks.as_ref());
    let stack_min = pick(cx, layers, "stack_size.min", |d| {
        d.stack_size.as_ref().and_then(|s| s.min.as_ref())
    });
    let stack_max = pick(cx, layers, "stack_size.max", |d| {
        d.stack_size.as_ref().and_then(|s| s.max.as_ref())
    });
    let score_limit = pick(cx, layers, "score_limit", |d| d.score_limit.as_ref());
    let opening = pick(cx, layers, "opening_token", |d| d.opening_token.as_ref());
    let side = i64::from(MAX_SIDE);
    let width = width.and_then(|f| cx.int(f.source, f.value, "board width", 1..=side));
    let height_field = height.as_ref().map(|f| Field {
        value: f.value,
        source: f.source,
        pack: f.pack,
    });
    let height = height.and_then(|f| cx.int(f.source, f.value, "board height", 1..=side));
    let max_stacks = i64::try_from(MAX_STACKS).unwrap_or(8);
    let max_cards = i64::try_from(MAX_STACK_CARDS).unwrap_or(8);
    let stacks = stacks.and_then(|f| cx.int(f.source, f.value, "stacks", 1..=max_stacks));
    let stack_max_v = stack_max
        .as_ref()
        .and_then(|f| cx.int(f.source, f.value, "stack_size.max", 1..=max_cards));
    let stack_min = stack_min.and_then(|f| {
        let hi = stack_max_v.map_or(max_cards, i64::from);
        cx.int(f.source, f.value, "stack_size.min", 1..=hi)
    });
    let score_limit =
        score_limit.and_then(|f| cx.int(f.source, f.value, "score_limit", 1..=i64::from(i32::MAX)));
    let (width, height) = (width?, height?);
    if usize::try_from(width * height).unwrap_or(usize::MAX) > MAX_CELLS {
        if let Some(f) = &height_field {
            cx.error(f.source, f.value.loc, format!("a {width}×{height} board has {} cells; the engine supports at most {MAX_CELLS}", width * height));
        }
        return None;
    }
    let opening = opening?;
    let opening_token = match &opening.value.value {
        None => None,
        Some(o) => {
            let source = opening.source;
            let seat = match Seat::from_number(o.seat.value) {
                Some(s) => Some(s),
                None => {
                    cx.error(
                        source,
                        o.seat.loc,
                        format!("seat must be 1 or 2, found {}", o.seat.value),
                    );
                    None
                }
            };
            let value = cx.int(source, &o.value, "opening token value", 1..=MAX_VALUE);
            let kind = match &o.kind {
                Some(k) => cx.token_type(k, source, opening.pack),
                None => cx.basic(source, opening.value.loc, opening.pack, "the opening token"),
            };
            let mut cells = Vec::new();
            for c in o.cells.iter() {
                let [x, y] = c.value;
                if x < 0 || y < 0 || x >= i64::from(width) || y >= i64::from(height) {
                    cx.error(
                        source,
                        c.loc,
                        format!("cell [{x}, {y}] is off the {width}×{height} board"),
                    );
                    continue;
                }
                cells.push(Cell::new(
                    i32::try_from(x).unwrap_or(0),
                    i32::try_from(y).unwrap_or(0),
                ));
            }
            if o.cells.is_empty() {
                cx.error(
                    source,
                    o.cells.loc,
                    "the opening token needs at least one cell to choose from",
                );
            }
            Some(OpeningToken {
                seat: seat?,
                value: value?,
                kind: kind?,
                cells,
            })
        }
    };
    Some(Ruleset {
        width: u8::try_from(width).ok()?,
        height: u8::try_from(height).ok()?,
        stacks: u8::try_from(stacks?).ok()?,
        stack_min: u8::try_from(stack_min?).ok()?,
        stack_max: u8::try_from(stack_max_v?).ok()?,
        score_limit: i64::from(score_limit?),
        opening_token,
    })
}
