//! Editor definitions for LuaLS and EmmyLua, written from the API description
//! ([`super::api`]): `tokensmith api --luals DIR`.
//!
//! One file, `tokensmith.lua`, a `---@meta` file with `Ctx`, `Token`, `Cell`, `SpawnSpec`,
//! the hook signatures and the hooks tables (`AbilityHooks`, `TokenHooks`, `AiHooks`,
//! `Hooks`). A language server given the folder as a library completes `ctx:` in a
//! function typed by those tables and flags an unknown method or field.
//!
//! Must not: describe anything the description does not (a test counts every item).

use std::fmt::Write as _;

use super::api::{Api, Field, Hook, Param};

/// The file the definitions are written to, in the folder given.
pub const FILE: &str = "tokensmith.lua";

fn one_line(text: &str) -> String {
    text.replace('\n', " ")
}

fn field_line(out: &mut String, f: &Field) {
    // `name? type` for an optional field (`string?`), as both servers read it.
    let (name, ty) = match f.ty.strip_suffix('?') {
        Some(ty) => (format!("{}?", f.name), ty),
        None => (f.name.to_string(), f.ty),
    };
    let _ = writeln!(out, "---@field {name} {ty} {}", one_line(f.doc));
}

fn signature(params: &[Param], returns: Option<&Field>) -> String {
    let params: Vec<String> = params
        .iter()
        .map(|p| format!("{}: {}", p.name, p.ty))
        .collect();
    let ret = returns.map(|r| format!(": {}", r.ty)).unwrap_or_default();
    format!("fun({}){ret}", params.join(", "))
}

fn hook_field(out: &mut String, h: &Hook, optional: bool) {
    let q = if optional { "?" } else { "" };
    let _ = writeln!(
        out,
        "---@field {}{q} {} {} ({})",
        h.name,
        signature(&h.params, h.returns.as_ref()),
        one_line(h.runs),
        h.owner
    );
}

/// The definitions file's text.
#[must_use]
pub fn definitions(api: &Api) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "---@meta tokensmith");
    let _ = writeln!(
        out,
        "-- Tokensmith script API {}, written by `tokensmith api --luals`. Do not edit: write it again.\n",
        api.version
    );
    let tables: [(&str, &str, &[Field]); 3] = [
        (
            "Token",
            "A token, as scripts see it: a copy that does not follow later changes.",
            &api.token_fields,
        ),
        (
            "Cell",
            "A cell of the card's area (ctx:targets()).",
            &api.cell_fields,
        ),
        (
            "SpawnSpec",
            "What ctx:spawn makes; every field is optional ({} is a basic 1 of ctx.seat).",
            &api.spawn_spec_fields,
        ),
    ];
    for (name, doc, fields) in tables {
        let _ = writeln!(out, "---{doc}\n---@class {name}");
        for f in fields {
            field_line(&mut out, f);
        }
        out.push('\n');
    }

    let _ = writeln!(
        out,
        "---The game, for one hook call: the only way a script sees or changes it. Call its \
         functions with a colon: `ctx:damage(x, y, 1)`.\n---@class Ctx"
    );
    for f in &api.ctx_fields {
        field_line(&mut out, f);
    }
    let _ = writeln!(out, "local Ctx = {{}}\n");
    for m in &api.ctx_methods {
        let _ = writeln!(out, "---{}", one_line(m.doc));
        if m.changes {
            let _ = writeln!(
                out,
                "---Changes the game: an error in `income` and `evaluate`."
            );
        }
        if !m.errors.is_empty() {
            let _ = writeln!(out, "---Errors: {}.", m.errors.join("; "));
        }
        let _ = writeln!(out, "---Cost: {}.", m.cost);
        for p in &m.params {
            let _ = writeln!(out, "---@param {} {} {}", p.name, p.ty, one_line(p.doc));
        }
        for r in &m.returns {
            let _ = writeln!(out, "---@return {} {} {}", r.ty, r.name, one_line(r.doc));
        }
        let names: Vec<&str> = m.params.iter().map(|p| p.name).collect();
        let _ = writeln!(out, "function Ctx:{}({}) end\n", m.name, names.join(", "));
    }

    let groups: [(&str, &str, &str); 3] = [
        (
            "AbilityHooks",
            "ability",
            "The table an ability's script returns.",
        ),
        (
            "TokenHooks",
            "token type",
            "The table a token type's script returns: at least one of its hooks.",
        ),
        ("AiHooks", "ai.lua", "The table a pack's ai.lua returns."),
    ];
    for (class, owner, doc) in groups {
        let _ = writeln!(out, "---{doc}\n---@class {class}");
        for h in api.hooks.iter().filter(|h| h.owner == owner) {
            hook_field(&mut out, h, owner == "token type");
        }
        out.push('\n');
    }
    let _ = writeln!(
        out,
        "---Any script's table of hooks (every hook optional).\n---@class Hooks"
    );
    for h in &api.hooks {
        hook_field(&mut out, h, true);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::script::api::describe;

    /// Every item of the description appears in the definitions: a count, to 100 %.
    #[test]
    fn definitions_cover_every_item_of_the_description() {
        let api = describe();
        let text = definitions(&api);
        let mut items = Vec::new();
        for m in &api.ctx_methods {
            items.push(format!("function Ctx:{}(", m.name));
            for p in &m.params {
                items.push(format!("---@param {} {}", p.name, p.ty));
            }
        }
        for f in &api.ctx_fields {
            items.push(format!("---@field {} {}", f.name, f.ty));
        }
        for (class, fields) in [
            ("Token", &api.token_fields),
            ("Cell", &api.cell_fields),
            ("SpawnSpec", &api.spawn_spec_fields),
        ] {
            items.push(format!("---@class {class}\n"));
            for f in fields {
                let name = if f.ty.ends_with('?') {
                    format!("{}?", f.name)
                } else {
                    f.name.to_string()
                };
                items.push(format!("---@field {name} {}", f.ty.trim_end_matches('?')));
            }
        }
        for h in &api.hooks {
            items.push(format!(
                "{} {}",
                h.name,
                signature(&h.params, h.returns.as_ref())
            ));
        }
        // An optional field is written `name? type`.
        let found = |i: &str| text.contains(i) || text.contains(&i.replacen(' ', "? ", 1));
        let missing: Vec<&String> = items.iter().filter(|i| !found(i.as_str())).collect();
        let covered = items.len() - missing.len();
        assert_eq!(
            covered,
            items.len(),
            "{covered} of {} items covered; missing {missing:#?}",
            items.len()
        );
        assert!(items.len() >= 70, "{} items", items.len());
    }
}
