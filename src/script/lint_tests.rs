//! The static checks on small scripts: each check fires where it must, with its line, and
//! stays quiet on correct code.

use super::check;
use crate::script::api::describe;

fn lint(source: &str) -> Vec<(u32, u32, String)> {
    check(source, &describe())
        .into_iter()
        .map(|w| (w.line, w.column, w.message))
        .collect()
}

fn one(source: &str) -> (u32, u32, String) {
    let found = lint(source);
    assert_eq!(found.len(), 1, "{found:#?}");
    found.into_iter().next().unwrap()
}

#[test]
fn a_misspelt_ctx_method_is_found_with_the_nearest_name() {
    let (line, column, message) =
        one("return {\n  on_place = function(ctx)\n    ctx:damge(ctx.x, ctx.y, 1)\n  end,\n}\n");
    assert_eq!((line, column), (3, 9));
    assert!(message.contains("ctx has no function 'damge'"), "{message}");
    assert!(message.contains("did you mean ctx:damage(…)?"), "{message}");
}

#[test]
fn a_misspelt_ctx_field_is_found() {
    let (line, _, message) =
        one("return { on_place = function(ctx)\n  ctx:add_score(ctx.opponnent, 1)\nend }\n");
    assert_eq!(line, 2);
    assert!(message.contains("did you mean ctx.opponent?"), "{message}");
}

#[test]
fn a_misspelt_token_field_is_found_on_every_way_to_a_token() {
    let found = lint(concat!(
        "return {\n",
        "  on_place = function(ctx)\n",
        "    local t = ctx:token(1, 1)\n",
        "    if t and t.valeu > 2 then end\n",
        "    for _, u in ipairs(ctx:tokens()) do ctx:log(u.sead) end\n",
        "    local list = ctx:tokens()\n",
        "    ctx:log(list[1].tipe)\n",
        "    ctx:log(ctx:token(0, 0).owner)\n",
        "    for _, c in ipairs(ctx:targets()) do ctx:log(c.z) end\n",
        "  end,\n",
        "  between_turns = function(ctx, me) ctx:log(me.vlaue) end,\n",
        "}\n",
    ));
    let lines: Vec<u32> = found.iter().map(|f| f.0).collect();
    assert_eq!(lines, [4, 5, 7, 8, 9, 11], "{found:#?}");
    assert!(
        found[0].2.contains("did you mean 'value'?"),
        "{}",
        found[0].2
    );
    assert!(
        found[4].2.contains("a cell has no field 'z'"),
        "{}",
        found[4].2
    );
}

#[test]
fn globals_the_sandbox_lacks_are_found_with_what_to_use() {
    let found = lint(concat!(
        "local json = require(\"json\")\n",
        "return { on_place = function(ctx)\n",
        "  print(\"hi\")\n",
        "  local t = os.time()\n",
        "  ctx:log(tostring(math.random(3)))\n",
        "  ctx:log(tostring(undefined_thing))\n",
        "end }\n",
    ));
    let text: Vec<String> = found.iter().map(|f| format!("{}: {}", f.0, f.2)).collect();
    assert_eq!(found.len(), 5, "{text:#?}");
    assert!(
        text[0].starts_with("1: 'require' is not available"),
        "{text:#?}"
    );
    assert!(
        text[1].contains("'print'") && text[1].contains("ctx:log"),
        "{text:#?}"
    );
    assert!(text[2].starts_with("4: 'os'"), "{text:#?}");
    assert!(text[3].contains("ctx:random(n)"), "{text:#?}");
    assert!(
        text[4].contains("'undefined_thing' is not a global"),
        "{text:#?}"
    );
}

#[test]
fn a_global_set_in_a_hook_is_found_and_one_set_at_load_is_not() {
    let found = lint(concat!(
        "LIMIT = 3\n",
        "function helper(n) return n + LIMIT end\n",
        "return { on_place = function(ctx)\n",
        "  counter = helper(1)\n",
        "  local ok = 1\n",
        "  ok = 2\n",
        "end }\n",
    ));
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!(found[0].0, 4);
    assert!(
        found[0].2.contains("sets the global 'counter'"),
        "{}",
        found[0].2
    );
}

#[test]
fn an_income_path_without_a_return_is_found_at_its_line() {
    let (line, _, message) = one(concat!(
        "return {\n",
        "  income = function(ctx, self, income)\n",
        "    if ctx:score(ctx.seat) < 3 then\n",
        "      return income * 2\n",
        "    end\n",
        "  end,\n",
        "}\n",
    ));
    assert_eq!(line, 3);
    assert!(message.contains("the income hook must return"), "{message}");
    // Every path returns (or raises): nothing to say.
    assert!(lint(concat!(
        "local hooks = {\n",
        "  income = function(ctx, self, income)\n",
        "    if income > 3 then return 3 elseif income < 0 then error('no') else return income end\n",
        "  end,\n",
        "}\n",
        "return hooks\n",
    ))
    .is_empty());
    // An empty income body falls off its end.
    let (line, _, _) = one("return {\n  income = function(ctx, self, income)\n  end,\n}\n");
    assert_eq!(line, 3);
}

#[test]
fn correct_code_gets_nothing() {
    let source = concat!(
        "local PER = 2\n",
        "local function sign(n) if n > 0 then return 1 end return -1 end\n",
        "local M = {}\n",
        "function M.twice(n) return n * 2 end\n",
        "return {\n",
        "  on_place = function(ctx)\n",
        "    local t = ctx:token(ctx.x, ctx.y)\n",
        "    t = { value = 1, mine = true }\n",
        "    ctx:log(tostring(t.mine) .. string.format('%d', M.twice(PER) * sign(-1)))\n",
        "    local s = ('x'):upper()\n",
        "    for i = 1, ctx:target_count() do local x, y = ctx:target(i) ctx:damage(x, y, 1) end\n",
        "    local card = ctx:token(0, 0) and ctx:token(0, 0).card\n",
        "    ctx:spawn(0, 0, { seat = ctx.opponent, type = 'base:basic' })\n",
        "  end,\n",
        "}\n",
    );
    assert_eq!(lint(source), Vec::<(u32, u32, String)>::new());
}

#[test]
fn a_script_that_gives_itself_an_environment_is_not_checked_for_globals() {
    assert!(
        lint("local _ENV = { ctx_log = 1 }\nreturn { on_place = function(ctx) x = y end }\n")
            .is_empty()
    );
}

#[test]
fn a_long_chain_of_operators_does_not_overflow_the_stack() {
    let chain = "a + ".repeat(200_000);
    let source = format!("local a = 1\nlocal b = {chain}a\nreturn {{}}\n");
    // Parsed, walked and dropped on a stack of the size a script check gets.
    let found = crate::script::lint::check_on_own_stack(&source, &describe());
    assert!(found.is_empty(), "{found:?}");
}

/// Every `.lua` file under `dir`, recursively.
fn lua_files(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            lua_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "lua") {
            out.push(path);
        }
    }
}

/// Scripts of the repository that are wrong on purpose, with what is found in them.
const MEANT: &[(&str, &str)] = &[
    (
        "tests/adversarial/packs/hostile/scripts/set_global_in_hook.lua",
        "sets the global 'counter'",
    ),
    (
        "tests/fixtures/editor/wrong.lua",
        "ctx has no function 'damge'",
    ),
    (
        "tests/fixtures/editor/wrong.lua",
        "a token has no field 'valeu'",
    ),
];

#[test]
fn no_shipped_or_test_script_gets_a_warning_it_does_not_deserve() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for dir in ["content", "mods", "tests"] {
        lua_files(&root.join(dir), &mut files);
    }
    files.sort();
    assert!(files.len() > 50, "found {} scripts", files.len());
    let api = describe();
    let mut found = Vec::new();
    for file in &files {
        let source = std::fs::read_to_string(file).unwrap();
        let rel = file
            .strip_prefix(root)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        for w in super::check_on_own_stack(&source, &api) {
            let text = format!("{rel}:{}:{}: {}", w.line, w.column, w.message);
            if !MEANT
                .iter()
                .any(|(f, m)| rel == *f && w.message.contains(m))
            {
                found.push(text);
            }
        }
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
}

/// The complete scripts docs/lua.md shows (a block that returns a table of hooks) parse
/// and get no warning.
#[test]
fn the_complete_scripts_of_the_lua_reference_get_no_warning() {
    let doc = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/lua.md"),
    )
    .unwrap();
    let mut scripts = Vec::new();
    let mut inside = false;
    let mut text = String::new();
    for line in doc.lines() {
        let code = line.trim_start();
        if !inside {
            inside = code == "```lua";
            text.clear();
        } else if code == "```" {
            inside = false;
            if text.lines().any(|l| l.trim_start().starts_with("return {")) {
                scripts.push(text.clone());
            }
        } else {
            text.push_str(line);
            text.push('\n');
        }
    }
    assert!(scripts.len() >= 6, "{} complete scripts", scripts.len());
    let api = describe();
    for script in &scripts {
        let parsed = full_moon::parse_fallible(script, full_moon::LuaVersion::lua54());
        assert!(parsed.errors().is_empty(), "does not parse:\n{script}");
        let found = super::check(script, &api);
        assert!(found.is_empty(), "{found:#?}\n{script}");
    }
}
