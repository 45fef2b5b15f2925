//! Merging the `rules` sections of all packs (and a scenario's patch) into one `Ruleset`.

#[allow(clippy::wildcard_imports)]
use super::*;

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
    name: &'static str,
    get: impl Fn(&'a RulesDoc) -> Option<&'a Located<T>>,
) -> Option<Field<'a, T>> {
    pick_in(cx, layers, name, true, get)
}

/// [`pick`] for a field with a default: no error when no pack sets it.
fn pick_in<'a, T>(
    cx: &mut Ctx<'_>,
    layers: &'a [(RulesDoc, Option<usize>, usize)],
    name: &'static str,
    required: bool,
    get: impl Fn(&'a RulesDoc) -> Option<&'a Located<T>>,
) -> Option<Field<'a, T>> {
    let mut found: Option<Field<'a, T>> = None;
    for (doc, pack, file) in layers {
        let Some(value) = get(doc) else { continue };
        let source = Source {
            pack: pack.unwrap_or(0),
            file: *file,
            loc: value.loc,
        };
        // A pack overriding what a pack it requires set is a deliberate patch; overriding
        // an unrelated pack is a conflict that only load order decides.
        if let Some(prev) = &found
            && let (Some(now), Some(before)) = (*pack, prev.pack)
            && now != before
            && crate::content::provenance::order_decides(&[before, now], &cx.ordered.deps)
        {
            let msg = format!(
                "rules.{name} is also set by pack '{}' at {}:{}:{}, which pack '{}' does not require; this value, later in load order, wins",
                cx.pack_ids[before],
                cx.files.path(prev.source.file).display(),
                prev.value.loc.line,
                prev.value.loc.column,
                cx.pack_ids[now]
            );
            cx.warning(source, value.loc, msg);
        }
        found = Some(Field {
            value,
            source,
            pack: *pack,
        });
    }
    if let Some(f) = &found {
        cx.rule_sources.push((name, f.pack, f.source));
    }
    if required && found.is_none() && !cx.sections.rules_incomplete {
        let manifest = cx
            .ordered
            .packs
            .first()
            .map(crate::content::discover::Pack::manifest_path)
            .unwrap_or_default();
        cx.diags.error(
            &manifest,
            Loc::default(),
            format!("no loaded pack sets rules.{name}; the base pack or a pack it requires must"),
        );
    }
    found
}

pub(super) fn compile_rules(cx: &mut Ctx<'_>) -> Option<Ruleset> {
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
    let max_stacks =
        i64::try_from(MAX_STACKS).unwrap_or_else(|_| never!(8, "`MAX_STACKS` does not fit i64"));
    let max_cards = i64::try_from(MAX_STACK_CARDS)
        .unwrap_or_else(|_| never!(8, "`MAX_STACK_CARDS` does not fit i64"));
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
    if usize::try_from(width * height)
        .unwrap_or_else(|_| never!(usize::MAX, "`width * height` past its checked range"))
        > MAX_CELLS
    {
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
                None => cx.basic(
                    source,
                    opening.value.loc,
                    opening.pack,
                    "the opening token",
                    "type",
                ),
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
                    i32::try_from(x).unwrap_or_else(|_| never!(0, "`x` past its checked range")),
                    i32::try_from(y).unwrap_or_else(|_| never!(0, "`y` past its checked range")),
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
    let limits = compile_limits(cx)?;
    Some(Ruleset {
        width: u8::try_from(width).ok()?,
        height: u8::try_from(height).ok()?,
        stacks: u8::try_from(stacks?).ok()?,
        stack_min: u8::try_from(stack_min?).ok()?,
        stack_max: u8::try_from(stack_max_v?).ok()?,
        score_limit: i64::from(score_limit?),
        opening_token,
        limits,
    })
}

/// `rules.limits`, key by key: each has a default and a largest accepted value.
fn compile_limits(cx: &mut Ctx<'_>) -> Option<MoveLimits> {
    let layers = &cx.sections.rules;
    let (d, max) = (MoveLimits::DEFAULT, MoveLimits::MAX);
    let mut ok = true;
    let mut one = |cx: &mut Ctx<'_>,
                   name: &'static str,
                   get: fn(&LimitsDoc) -> Option<&Located<i64>>,
                   default: i64,
                   max: i64| {
        let field = pick_in(cx, layers, name, false, |doc: &RulesDoc| {
            doc.limits.as_ref().and_then(|l| get(&l.value))
        });
        match field {
            None => default,
            Some(f) => {
                let v = cx.int(f.source, f.value, name, 1..=max);
                ok &= v.is_some();
                v.map_or(default, i64::from)
            }
        }
    };
    let instructions = one(
        cx,
        "limits.instructions",
        |l| l.instructions.as_ref(),
        i64::try_from(d.instructions)
            .unwrap_or_else(|_| never!(i64::MAX, "`d.instructions` does not fit i64")),
        i64::try_from(max.instructions)
            .unwrap_or_else(|_| never!(i64::MAX, "`max.instructions` does not fit i64")),
    );
    let wall_ms = one(
        cx,
        "limits.wall_ms",
        |l| l.wall_ms.as_ref(),
        d.wall_ms.into(),
        max.wall_ms.into(),
    );
    let hook_depth = one(
        cx,
        "limits.hook_depth",
        |l| l.hook_depth.as_ref(),
        d.hook_depth.into(),
        max.hook_depth.into(),
    );
    let events = one(
        cx,
        "limits.events",
        |l| l.events.as_ref(),
        d.events.into(),
        max.events.into(),
    );
    let log_bytes = one(
        cx,
        "limits.log_bytes",
        |l| l.log_bytes.as_ref(),
        d.log_bytes.into(),
        max.log_bytes.into(),
    );
    ok.then(|| MoveLimits {
        instructions: u64::try_from(instructions)
            .unwrap_or_else(|_| never!(d.instructions, "`instructions` past its checked range")),
        wall_ms: u32::try_from(wall_ms)
            .unwrap_or_else(|_| never!(d.wall_ms, "`wall_ms` past its checked range")),
        hook_depth: u8::try_from(hook_depth)
            .unwrap_or_else(|_| never!(d.hook_depth, "`hook_depth` past its checked range")),
        events: u32::try_from(events)
            .unwrap_or_else(|_| never!(d.events, "`events` past its checked range")),
        log_bytes: u32::try_from(log_bytes)
            .unwrap_or_else(|_| never!(d.log_bytes, "`log_bytes` past its checked range")),
    })
}
