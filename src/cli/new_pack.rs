//! `tokensmith pack new ID [--scripted]`: a pack that validates and whose scenario passes
//! at once, to start from. Nothing is ever overwritten: an existing folder or file is
//! refused before anything is written, and a failed write takes back what it made.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, bail};

/// The last two stacks of every deck the new pack and its scenario use: base's cards,
/// as in base's starter deck.
const BASE_STACKS: [&str; 2] = [
    "[flip_cross, weaken_cross, gift]",
    "[push_cross, weaken_ring]",
];

/// The files of a new pack `id` (paths relative to the folder of packs), and its
/// scenario's path.
fn files(id: &str, scripted: bool, schemas: &str) -> (Vec<(PathBuf, String)>, PathBuf) {
    let title = title(id);
    let pack = PathBuf::from(id);
    let mut out = vec![(
        pack.join("pack.yaml"),
        format!(
            "# yaml-language-server: $schema={schemas}/pack.schema.json\n\
             id: {id}\n\
             name: {title}\n\
             version: 0.1.0\n\
             authors: [You]\n\
             description: {what}\n\
             requires:\n  - {{ id: base, version: \"^1\" }}\n",
            what = if scripted {
                "A token type, a card that places it, and a scripted ability and token type."
            } else {
                "A token type and a card that places it."
            }
        ),
    )];
    let mut content = format!(
        "# yaml-language-server: $schema={schemas}/content.schema.json\n\
         # One token type and the card that places it; `row` and the other cards of the deck\n\
         # are base's (docs/content.md).\n\
         token_types:\n\
         \x20 - id: lantern\n\
         \x20   name: Lantern\n\
         \x20   description: +1 income to each friendly token left and right of it.\n\
         \x20   aura: {{ area: row, to: friendly, income: 1 }}\n"
    );
    if scripted {
        content.push_str(
            "  # A token type whose income is a Lua script (scripts/glow.lua).\n\
             \x20 - id: glow\n\
             \x20   name: Glow\n\
             \x20   description: Earns 1 more income than its value.\n\
             \x20   script: scripts/glow.lua\n\
             abilities:\n\
             \x20 # An ability that is a Lua script (scripts/spark.lua).\n\
             \x20 - id: spark\n\
             \x20   name: Spark\n\
             \x20   description: 1 damage to each enemy token in the card's area.\n\
             \x20   script: scripts/spark.lua\n",
        );
    }
    content.push_str(
        "cards:\n\
         \x20 - id: lantern\n\
         \x20   name: Lantern\n\
         \x20   value: 2\n\
         \x20   token: lantern\n\
         \x20   description: Places a lantern.\n",
    );
    if scripted {
        content.push_str(
            "  - id: spark\n\
             \x20   name: Spark\n\
             \x20   value: 1\n\
             \x20   ability: spark\n\
             \x20   area: cross\n\
             \x20   description: 1 damage to each enemy token above, below, left and right.\n\
             \x20 - id: glow\n\
             \x20   name: Glow\n\
             \x20   value: 1\n\
             \x20   token: glow\n\
             \x20   description: Places a glow.\n",
        );
    }
    let first = if scripted {
        "[lantern, spark]"
    } else {
        "[lantern, push_row]"
    };
    let second = if scripted {
        "[glow, booster]"
    } else {
        "[spawn_row, booster]"
    };
    content.push_str(&format!(
        "decks:\n\
         \x20 # 4 stacks of 2 to 5 cards, top card first (base's rules).\n\
         \x20 - id: {id}_starter\n\
         \x20   name: {title} Starter\n\
         \x20   stacks:\n\
         \x20     - {first}\n\
         \x20     - {second}\n\
         \x20     - {third}\n\
         \x20     - {fourth}\n",
        third = BASE_STACKS[0],
        fourth = BASE_STACKS[1],
    ));
    out.push((pack.join("content.yaml"), content));
    if scripted {
        out.push((
            pack.join("scripts/spark.lua"),
            "-- Spark: 1 damage to each enemy token in the card's area (docs/lua.md).\n\
             ---@type AbilityHooks\n\
             return {\n\
             \x20 on_place = function(ctx)\n\
             \x20   for i = 1, ctx:target_count() do\n\
             \x20     local x, y = ctx:target(i)\n\
             \x20     if ctx:seat_at(x, y) == ctx.opponent then\n\
             \x20       ctx:damage(x, y, 1)\n\
             \x20     end\n\
             \x20   end\n\
             \x20 end,\n\
             }\n"
            .to_string(),
        ));
        out.push((
            pack.join("scripts/glow.lua"),
            "-- Glow: earns 1 more than its income without the script (docs/lua.md).\n\
             ---@type TokenHooks\n\
             return {\n\
             \x20 income = function(ctx, self, income)\n\
             \x20   return income + 1\n\
             \x20 end,\n\
             }\n"
            .to_string(),
        ));
        out.push((
            pack.join(".luarc.json"),
            "{ \"runtime.version\": \"Lua 5.4\", \"workspace.library\": [\".definitions\"] }\n"
                .to_string(),
        ));
        let api = crate::script::api::describe();
        out.push((
            pack.join(".definitions").join(crate::script::luals::FILE),
            crate::script::luals::definitions(&api),
        ));
    }
    let scenario = PathBuf::from(format!("{id}.scenario.yaml"));
    // The scenario sits beside the pack folder, one level nearer the schemas.
    let beside = schemas.strip_prefix("../").unwrap_or(schemas);
    out.push((scenario.clone(), scenario_text(id, scripted, beside)));
    (out, scenario)
}

/// The scenario beside the pack (outside it: every YAML file in a pack is content).
fn scenario_text(id: &str, scripted: bool, schemas: &str) -> String {
    let [third, fourth] = BASE_STACKS;
    let head = format!(
        "# yaml-language-server: $schema={schemas}/scenario.schema.json\n\
         # Run with `tokensmith scenario` on this file (docs/scenarios.md).\n"
    );
    if scripted {
        format!(
            "{head}name: a spark hurts the enemy tokens around it, and a glow earns 1 more\n\
             packs: [{id}]\n\
             pack_dirs: [\".\"]\n\
             rules: {{ opening_token: null }}\n\
             board:\n\
             \x20 - {{ at: [3, 2], seat: 2, value: 2 }}   # right of the spark: hit\n\
             \x20 - {{ at: [2, 1], seat: 1, value: 1 }}   # above it, but friendly: spared\n\
             decks:\n\
             \x20 1: [[spark, lantern], [glow, booster], {third}, {fourth}]\n\
             \x20 2: [[glow, lantern], [spawn_row, booster], {third}, {fourth}]\n\
             moves:\n\
             \x20 - {{ seat: 1, card: spark, at: [2, 2] }}\n\
             \x20 - {{ seat: 2, card: glow, at: [5, 5] }}\n\
             expect:\n\
             \x20 tokens:\n\
             \x20   - {{ at: [2, 2], seat: 1, value: 1 }}\n\
             \x20   - {{ at: [3, 2], seat: 2, value: 1 }}\n\
             \x20   - {{ at: [2, 1], seat: 1, value: 1 }}\n\
             \x20   - {{ at: [5, 5], seat: 2, value: 1, type: glow }}\n\
             \x20 income: {{ 1: 2, 2: 3 }}\n"
        )
    } else {
        format!(
            "{head}name: a lantern gives +1 income to the friendly tokens left and right of it\n\
             packs: [{id}]\n\
             pack_dirs: [\".\"]\n\
             rules: {{ opening_token: null }}\n\
             board:\n\
             \x20 - {{ at: [1, 2], seat: 1, value: 1 }}   # left of the lantern: +1\n\
             \x20 - {{ at: [3, 2], seat: 2, value: 1 }}   # right, but an enemy: nothing\n\
             decks:\n\
             \x20 1: [[lantern, push_row], [spawn_row, booster], {third}, {fourth}]\n\
             moves:\n\
             \x20 - {{ seat: 1, card: lantern, at: [2, 2] }}\n\
             expect:\n\
             \x20 tokens:\n\
             \x20   - {{ at: [2, 2], seat: 1, value: 2, type: lantern }}\n\
             \x20 income: {{ 1: 4, 2: 1 }}\n"
        )
    }
}

/// "my_pack" → "My Pack".
fn title(id: &str) -> String {
    id.split('_')
        .filter(|w| !w.is_empty())
        .map(|w| {
            let mut c = w.chars();
            c.next()
                .map(|f| f.to_uppercase().chain(c).collect::<String>())
                .unwrap_or_default()
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Make pack `id` in the folder of packs `packs`; what was made, for the user.
pub(super) fn run(
    packs: &Path,
    id: &str,
    scripted: bool,
    out: &mut dyn Write,
) -> anyhow::Result<()> {
    if !crate::content::discover::valid_id(id) {
        bail!(
            "'{id}' cannot be a pack id: use lowercase letters, digits and `_` (at most 64 bytes), such as my_pack"
        );
    }
    // The schemas folder beside the folder of packs (a source checkout's `schemas/`),
    // written as seen from inside the pack.
    let schemas = "../../schemas";
    let (files, scenario) = files(id, scripted, schemas);
    let pack_dir = packs.join(id);
    if pack_dir.exists() {
        bail!(
            "{} exists already: choose another id, or remove that folder first",
            crate::fsutil::shown(&pack_dir)
        );
    }
    if let Some((path, _)) = files.iter().find(|(p, _)| packs.join(p).exists()) {
        bail!(
            "{} exists already: move it away first (nothing was written)",
            crate::fsutil::shown(&packs.join(path))
        );
    }
    let made = write_all(packs, &files);
    if let Err(e) = made {
        // Take back what was made: the pack folder and the scenario (both new).
        let _ = std::fs::remove_dir_all(&pack_dir);
        let _ = std::fs::remove_file(packs.join(&scenario));
        return Err(e);
    }
    writeln!(out, "made the pack {}:", crate::fsutil::shown(&pack_dir))?;
    for (path, _) in &files {
        writeln!(out, "  {}", crate::fsutil::shown(&packs.join(path)))?;
    }
    let scenario = packs.join(&scenario);
    writeln!(out, "next:")?;
    writeln!(out, "  tokensmith validate          (0 errors)")?;
    writeln!(
        out,
        "  tokensmith scenario {}   (passes)",
        crate::fsutil::shown(&scenario)
    )?;
    writeln!(
        out,
        "  tokensmith pack enable {id}   (to play it; see docs/content.md)"
    )?;
    if !packs.join("..").join("schemas").is_dir() {
        writeln!(
            out,
            "note: the YAML files point editors at ../../schemas: run `tokensmith schema --out {}` to write them there",
            crate::fsutil::shown(&packs.join("..").join("schemas"))
        )?;
    }
    Ok(())
}

fn write_all(packs: &Path, files: &[(PathBuf, String)]) -> anyhow::Result<()> {
    for (path, text) in files {
        let path = packs.join(path);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("cannot make {}", crate::fsutil::shown(dir)))?;
        }
        crate::fsutil::write_atomic_new(&path, text.as_bytes())
            .with_context(|| format!("cannot write {}", crate::fsutil::shown(&path)))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn titles_are_made_from_ids() {
        assert_eq!(super::title("my_pack"), "My Pack");
        assert_eq!(super::title("frost2"), "Frost2");
    }
}
