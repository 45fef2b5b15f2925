//! What changed between two catalogs, entry by entry and field by field, matched by
//! `pack:id`: the summary a tester reads after each reload.

use std::collections::{HashMap, HashSet};

use crate::rules::describe::{self, Naming};
use crate::rules::{Amount, Area, Catalog, Effect, Side, TokenTypeDef};

/// How an entry changed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ChangeKind {
    /// New in the new content.
    Added,
    /// Gone from the new content.
    Removed,
    /// Present in both with these fields different.
    Changed(Vec<FieldChange>),
}

/// One field's old and new value, in words.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldChange {
    /// The field (`value`, `aura`, …).
    pub field: &'static str,
    /// Before.
    pub old: String,
    /// After.
    pub new: String,
}

/// One entry that changed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Change {
    /// `card`, `ability`, `token type`, `area`, `deck` or `rules`.
    pub section: &'static str,
    /// `pack:id` (or `rules`).
    pub key: String,
    /// What happened to it.
    pub kind: ChangeKind,
}

impl std::fmt::Display for Change {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.kind {
            ChangeKind::Added => write!(f, "{} {} added", self.section, self.key),
            ChangeKind::Removed => write!(f, "{} {} removed", self.section, self.key),
            ChangeKind::Changed(fields) => {
                write!(f, "{} {}: ", self.section, self.key)?;
                for (i, c) in fields.iter().enumerate() {
                    if i > 0 {
                        write!(f, ", ")?;
                    }
                    write!(f, "{} {} → {}", c.field, c.old, c.new)?;
                }
                Ok(())
            }
        }
    }
}

type Fields = Vec<(&'static str, String)>;

/// An area by the key it was named with (`base:ring`), or by its offsets when it was
/// written out in place. A change to a named area's offsets shows on the area itself.
fn area(c: &Catalog, a: &Area) -> String {
    describe::area(c, a, Naming::Key)
}

fn kind_key(c: &Catalog, id: crate::rules::TokenTypeId) -> String {
    c.token_types()
        .get(id.index())
        .map_or_else(|| "?".to_string(), |t| t.meta.key())
}

fn effect(c: &Catalog, e: &Effect) -> String {
    let side = |s: &Side| match s {
        Side::Mover => "self",
        Side::Opponent => "opponent",
    };
    match e {
        Effect::Damage {
            amount: Amount::Fixed(n),
        } => format!("damage {n}"),
        Effect::Damage {
            amount: Amount::FriendlyInArea,
        } => "damage friendly_in_area".to_string(),
        Effect::Spawn { owner, value, kind } => {
            format!("spawn {} {} for {}", kind_key(c, *kind), value, side(owner))
        }
        Effect::ExtraTurn { player, area_full } => format!(
            "extra_turn for {}{}",
            side(player),
            if *area_full {
                " if the area is full"
            } else {
                ""
            }
        ),
        Effect::Transform { into, max_value } => match max_value {
            Some(m) => format!("transform into {} (value ≤ {m})", kind_key(c, *into)),
            None => format!("transform into {}", kind_key(c, *into)),
        },
        Effect::NextTokenBonus { amount } => format!("next_token_bonus {amount}"),
        Effect::Script(s) => c
            .scripts()
            .get(s.index())
            .map_or_else(|| "script".into(), |s| format!("script {}", s.name())),
        other => other.name().to_string(),
    }
}

fn token_fields(c: &Catalog, t: &TokenTypeDef) -> Fields {
    let words = describe::token_type(c, t, Naming::Key);
    let none = |w: Option<String>| w.unwrap_or_else(|| "none".to_string());
    vec![
        ("name", t.meta.name.clone()),
        ("description", t.meta.description.clone()),
        ("income_multiplier", t.income_multiplier.to_string()),
        ("aura", none(words.aura)),
        ("between_turns", none(words.between_turns)),
        ("on_destroyed", none(words.on_destroyed)),
        ("script", none(words.script)),
    ]
}

fn compare(
    out: &mut Vec<Change>,
    section: &'static str,
    old: Vec<(String, Fields)>,
    new: Vec<(String, Fields)>,
) {
    let before: HashMap<&str, &Fields> = old.iter().map(|(k, f)| (k.as_str(), f)).collect();
    let after: HashSet<&str> = new.iter().map(|(k, _)| k.as_str()).collect();
    for (key, fields) in &new {
        let kind = match before.get(key.as_str()) {
            None => ChangeKind::Added,
            Some(before) => {
                let changed: Vec<FieldChange> = fields
                    .iter()
                    .zip(before.iter())
                    .filter(|((_, n), (_, o))| n != o)
                    .map(|((field, n), (_, o))| FieldChange {
                        field,
                        old: o.clone(),
                        new: n.clone(),
                    })
                    .collect();
                if changed.is_empty() {
                    continue;
                }
                ChangeKind::Changed(changed)
            }
        };
        out.push(Change {
            section,
            key: key.clone(),
            kind,
        });
    }
    for (key, _) in &old {
        if !after.contains(key.as_str()) {
            out.push(Change {
                section,
                key: key.clone(),
                kind: ChangeKind::Removed,
            });
        }
    }
}

fn cards(c: &Catalog) -> Vec<(String, Fields)> {
    c.cards()
        .iter()
        .map(|d| {
            let ability = d
                .ability
                .map_or_else(|| "none".to_string(), |a| c.ability(a).meta.key());
            (
                d.meta.key(),
                vec![
                    ("name", d.meta.name.clone()),
                    ("description", d.meta.description.clone()),
                    ("value", d.value.to_string()),
                    ("token", kind_key(c, d.token)),
                    ("ability", ability),
                    ("area", area(c, &d.area)),
                ],
            )
        })
        .collect()
}

fn abilities(c: &Catalog) -> Vec<(String, Fields)> {
    c.abilities()
        .iter()
        .map(|d| {
            (
                d.meta.key(),
                vec![
                    ("name", d.meta.name.clone()),
                    ("description", d.meta.description.clone()),
                    ("effect", effect(c, &d.effect)),
                ],
            )
        })
        .collect()
}

fn decks(c: &Catalog) -> Vec<(String, Fields)> {
    c.decks()
        .iter()
        .map(|d| {
            let stacks: Vec<String> = d
                .stacks
                .iter()
                .map(|s| {
                    let ids: Vec<&str> = s.iter().map(|&id| c.card(id).meta.id.as_str()).collect();
                    format!("[{}]", ids.join(", "))
                })
                .collect();
            (
                d.meta.key(),
                vec![("name", d.meta.name.clone()), ("stacks", stacks.join(" "))],
            )
        })
        .collect()
}

/// Every difference between `old` and `new`: rules, token types, abilities, areas, cards
/// and decks, in that order.
#[must_use]
pub fn diff(old: &Catalog, new: &Catalog) -> Vec<Change> {
    let mut out = Vec::new();
    let rules = |c: &Catalog| -> Vec<(String, Fields)> {
        let r = &c.rules();
        vec![(
            "rules".to_string(),
            vec![
                ("board", format!("{}×{}", r.width, r.height)),
                ("stacks", r.stacks.to_string()),
                ("stack_size", format!("{}–{}", r.stack_min, r.stack_max)),
                ("score_limit", r.score_limit.to_string()),
                (
                    "opening_token",
                    r.opening_token.as_ref().map_or_else(
                        || "none".into(),
                        |o| format!("seat {} {} {}", o.seat, kind_key(c, o.kind), o.value),
                    ),
                ),
            ],
        )]
    };
    compare(&mut out, "rules", rules(old), rules(new));
    let types = |c: &Catalog| -> Vec<(String, Fields)> {
        c.token_types()
            .iter()
            .map(|t| (t.meta.key(), token_fields(c, t)))
            .collect()
    };
    compare(&mut out, "token type", types(old), types(new));
    compare(&mut out, "ability", abilities(old), abilities(new));
    let areas = |c: &Catalog| -> Vec<(String, Fields)> {
        c.areas()
            .iter()
            .map(|a| {
                let offsets: Vec<String> = a.offsets.iter().map(ToString::to_string).collect();
                (
                    a.meta.key(),
                    vec![("offsets", format!("[{}]", offsets.join(" ")))],
                )
            })
            .collect()
    };
    compare(&mut out, "area", areas(old), areas(new));
    compare(&mut out, "card", cards(old), cards(new));
    compare(&mut out, "deck", decks(old), decks(new));
    let scripts = |c: &Catalog| -> Vec<(String, Fields)> {
        c.scripts().iter().map(|s| (s.name(), Vec::new())).collect()
    };
    // Scripts added or removed, as any entry; an edited one by its changed lines.
    compare(&mut out, "script", scripts(old), scripts(new));
    let before: HashMap<String, &str> = old
        .scripts()
        .iter()
        .map(|o| (o.name(), o.source.as_str()))
        .collect();
    for s in new.scripts() {
        if let Some(&before) = before.get(&s.name())
            && before != s.source
        {
            out.push(Change {
                section: "script",
                key: s.name(),
                kind: ChangeKind::Changed(changed_lines(before, &s.source)),
            });
        }
    }
    out
}

/// Lines of a changed script shown at most.
const SHOWN_LINES: usize = 5;

/// The lines that differ between two texts of a script, paired up between the lines both
/// keep at the start and at the end: `line 3: old → new`, `line 4: (none) → added`, …,
/// at most [`SHOWN_LINES`] and a count of the rest.
fn changed_lines(old: &str, new: &str) -> Vec<FieldChange> {
    let (a, b): (Vec<&str>, Vec<&str>) = (old.lines().collect(), new.lines().collect());
    let head = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let tail = a[head..]
        .iter()
        .rev()
        .zip(b[head..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let (a, b) = (&a[head..a.len() - tail], &b[head..b.len() - tail]);
    let shown = |line: Option<&&str>| {
        line.map_or_else(
            || "(none)".to_string(),
            |l| {
                let l = l.trim();
                let cut: String = l.chars().take(80).collect();
                if cut.len() < l.len() {
                    format!("{cut}…")
                } else {
                    cut
                }
            },
        )
    };
    let n = a.len().max(b.len());
    let mut out: Vec<FieldChange> = (0..n.min(SHOWN_LINES))
        .map(|i| FieldChange {
            field: "line",
            old: format!("{}: {}", head + i + 1, shown(a.get(i))),
            new: shown(b.get(i)),
        })
        .collect();
    if n > SHOWN_LINES {
        out.push(FieldChange {
            field: "and",
            old: format!("{} more changed lines", n - SHOWN_LINES),
            new: "…".to_string(),
        });
    }
    if n == 0 {
        // Only line endings or a final newline differ.
        out.push(FieldChange {
            field: "text",
            old: format!("{} bytes", old.len()),
            new: format!("{} bytes", new.len()),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::content::base_for_tests as base;

    #[test]
    fn an_edited_script_shows_its_changed_lines() {
        let text = |c: &[FieldChange]| -> Vec<String> {
            c.iter()
                .map(|f| format!("{} {} → {}", f.field, f.old, f.new))
                .collect()
        };
        let old = "return {\n  on_place = function(ctx)\n    ctx:damage(0, 0, 1)\n  end,\n}\n";
        let new = old.replace("0, 0, 1", "0, 0, 2");
        assert_eq!(
            text(&changed_lines(old, &new)),
            ["line 3: ctx:damage(0, 0, 1) → ctx:damage(0, 0, 2)"]
        );
        let added = old.replace("    ctx:damage", "    ctx:log('x')\n    ctx:damage");
        assert_eq!(
            text(&changed_lines(old, &added)),
            ["line 3: (none) → ctx:log('x')"]
        );
        let many: String = (0..9).map(|i| format!("x{i}\n")).collect();
        let other: String = (0..9).map(|i| format!("y{i}\n")).collect();
        let shown = text(&changed_lines(&many, &other));
        assert_eq!(shown.len(), SHOWN_LINES + 1);
        assert_eq!(shown[SHOWN_LINES], "and 4 more changed lines → …");
        assert_eq!(text(&changed_lines("a\n", "a")), ["text 2 bytes → 1 bytes"]);
    }

    #[test]
    fn a_changed_value_is_reported_old_to_new() {
        let old = base();
        let new = old.clone().edited(|p| p.cards[0].value += 2);
        let changes = diff(&old, &new);
        assert_eq!(changes.len(), 1, "{changes:?}");
        assert_eq!(changes[0].to_string(), "card base:weaken_row: value 3 → 5");
        assert!(diff(&old, &old).is_empty());
        let fewer = old.clone().edited(|p| {
            p.decks.pop();
        });
        let gone = diff(&old, &fewer);
        assert!(matches!(gone[0].kind, ChangeKind::Removed), "{gone:?}");
    }

    #[test]
    fn areas_are_named_by_id_not_by_offsets() {
        let old = base();
        let ring = old.area_named("ring").unwrap_or_else(|e| panic!("{e}"));
        let new = old.clone().edited(|p| {
            p.cards[0].area =
                crate::rules::Area::new(Some(ring), p.areas[ring.index()].offsets.clone());
        });
        let changes = diff(&old, &new);
        assert_eq!(changes.len(), 1, "{changes:?}");
        assert_eq!(
            changes[0].to_string(),
            "card base:weaken_row: area base:row → base:ring"
        );
        let inline = old.clone().edited(|p| {
            p.cards[0].area = crate::rules::Area::new(None, vec![crate::rules::Offset::new(0, 1)]);
        });
        let changes = diff(&old, &inline);
        assert_eq!(
            changes[0].to_string(),
            "card base:weaken_row: area base:row → [0, 1]"
        );
    }

    #[test]
    fn a_removed_deck_is_reported() {
        let old = base();
        let fewer = old.clone().edited(|p| {
            p.decks.pop();
        });
        let gone = diff(&old, &fewer);
        assert!(matches!(gone[0].kind, ChangeKind::Removed), "{gone:?}");
    }
}
