//! Compiling areas, token types, abilities, cards and decks.

#[allow(clippy::wildcard_imports)]
use super::*;

pub(super) fn compile_area(cx: &mut Ctx<'_>, r: &Record<AreaDoc>) -> Option<AreaDef> {
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

pub(super) fn compile_token_type(
    cx: &mut Ctx<'_>,
    r: &Record<TokenTypeDoc>,
) -> Option<TokenTypeDef> {
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

pub(super) fn compile_ability(cx: &mut Ctx<'_>, r: &Record<AbilityDoc>) -> Option<AbilityDef> {
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
                None => cx.basic(
                    r.defined,
                    doc.id.loc,
                    Some(r.pack),
                    "this spawn effect",
                    "type",
                )?,
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

/// Where a script first reads its card's area: the 1-based line and the call
/// (`ctx:targets`, `ctx:target_count`, `ctx:target`), ignoring `--` comments.
fn reads_area(source: &str) -> Option<(usize, &'static str)> {
    source.lines().enumerate().find_map(|(i, line)| {
        let code = line.split("--").next().unwrap_or("");
        ["targets", "target_count", "target"]
            .iter()
            .find_map(|name| {
                [':', '.']
                    .iter()
                    .any(|sep| code.contains(&format!("ctx{sep}{name}(")))
                    .then(|| {
                        let call = match *name {
                            "targets" => "ctx:targets",
                            "target_count" => "ctx:target_count",
                            _ => "ctx:target",
                        };
                        (i + 1, call)
                    })
            })
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

pub(super) fn compile_card(
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
            "token",
        ),
    };
    let ability = match &doc.ability {
        Some(a) => {
            let source = r.source("ability");
            let sections = cx.sections;
            cx.resolve(&sections.abilities, a, source, Some(source.pack))
                .map(|i| Some(AbilityId::from_index(i)))
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
            (None, None) => {
                if let Effect::Script(script) = &def.effect
                    && let Some(reads) = cx
                        .scripts
                        .get(script.index())
                        .and_then(|s| reads_area(&s.source).map(|(line, call)| (s, line, call)))
                {
                    let (s, line, call) = reads;
                    cx.warning(
                        r.defined,
                        doc.id.loc,
                        format!(
                            "card '{}' has no area, but the script of its ability '{}' reads one \
                             ({}:{line} calls `{call}`), which is then empty; add `area:`",
                            r.id,
                            def.meta.id,
                            s.name()
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

/// A pack's deck: its card names resolved, then the rules core's deck check
/// ([`deck_problems`]), each problem placed at the deck's `stacks`, the stack or the card
/// entry it is about. Without rules (they did not load) only the cards are checked.
pub(super) fn compile_deck(
    cx: &mut Ctx<'_>,
    r: &Record<DeckDoc>,
    rules: Option<&Ruleset>,
) -> Option<DeckDef> {
    let doc = &r.doc;
    let stacks = cx.required(&doc.stacks, r.defined, doc.id.loc, || {
        format!("deck '{}' needs `stacks`", r.id)
    })?;
    let source = r.source("stacks");
    let sections = cx.sections;
    let mut ok = true;
    // The resolved cards; a name that did not resolve (already reported) holds its place
    // as an id outside the content, so stack sizes count every card written.
    let unresolved = CardId(u16::MAX);
    let mut out = Vec::with_capacity(stacks.len());
    for stack in stacks.iter() {
        let mut cards = Vec::with_capacity(stack.len());
        for name in stack.iter() {
            match cx.resolve(&sections.cards, name, source, Some(source.pack)) {
                Some(index) => cards.push(CardId::from_index(index)),
                None => {
                    ok = false;
                    cards.push(unresolved);
                }
            }
        }
        out.push(cards);
    }
    let card_id = |card: CardId| {
        sections
            .cards
            .records
            .get(card.index())
            .map_or_else(|| format!("#{}", card.0), |c| c.id.clone())
    };
    let problems = deck_problems(
        rules,
        sections.cards.records.len(),
        Seat::One,
        &out,
        &card_id,
    );
    for problem in &problems {
        let (loc, note) = match *problem {
            DeckError::StackCount { .. } => (stacks.loc, cx.rule_note("stacks", r.pack)),
            DeckError::StackSize { stack, .. } => (
                stacks.get(stack).map_or(stacks.loc, |s| s.loc),
                stack_size_note(cx, r.pack),
            ),
            // Only a name that did not resolve is outside the content: already reported.
            DeckError::UnknownCard { .. } => continue,
            DeckError::Duplicate { stack, place, .. } => (
                stacks
                    .get(stack)
                    .and_then(|s| s.get(place))
                    .map_or(stacks.loc, |name| name.loc),
                String::new(),
            ),
        };
        cx.error(source, loc, problem.message(Whose::Named(&r.id)) + &note);
    }
    (ok && problems.is_empty() && rules.is_some()).then(|| DeckDef {
        meta: cx.meta(r, doc.name.as_ref(), doc.description.as_ref()),
        stacks: out,
    })
}

/// Where `rules.stack_size` comes from when another pack sets it: one note when one
/// place sets both ends.
fn stack_size_note(cx: &Ctx<'_>, pack: usize) -> String {
    let (min, max) = (
        cx.rule_note("stack_size.min", pack),
        cx.rule_note("stack_size.max", pack),
    );
    let both = min.replace("stack_size.min", "stack_size");
    if both == max.replace("stack_size.max", "stack_size") {
        both
    } else {
        min + &max
    }
}
