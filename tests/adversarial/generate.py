#!/usr/bin/env python3
"""Writes the adversarial packs and scenarios of this folder from the tables below.

Run it from this folder after changing an attack: `python3 generate.py`. The files it
writes are committed, so the tests need nothing but the repository.
"""
import os, shutil

HERE = os.path.dirname(os.path.abspath(__file__))

# (id, what it attacks, the on_place body, a piece of the refusal message)
ATTACKS = [
    ("rep_empty_string", "string.rep of an empty string a quadrillion times (a C loop with nothing to copy)",
     'string.rep("", 1 << 53)', "spent the instruction budget"),
    ("rep_count_as_text", "string.rep with its count written as text, which Lua converts",
     'string.rep("x", "1e15")', "more than the pack's script memory"),
    ("rep_separator_only", "string.rep of empty strings with an empty separator",
     'string.rep("", 1 << 40, "")', "spent the instruction budget"),
    ("insert_lying_len", "table.insert into a table whose __len claims 2^60 elements",
     'table.insert(setmetatable({}, { __len = function() return 1 << 60 end }), 1, "x")',
     "spent the instruction budget"),
    ("concat_lying_len", "table.concat of a table whose __len and __index invent a quadrillion strings",
     'table.concat(setmetatable({}, { __len = function() return 1 << 50 end, __index = function() return "x" end }))',
     "spent the instruction budget"),
    ("unpack_lying_len", "table.unpack of a table whose __len claims 2^40 elements",
     'table.unpack(setmetatable({}, { __len = function() return 1 << 40 end }))',
     "too many results to unpack"),
    ("remove_lying_len", "table.remove from a table whose __len claims 2^60 elements",
     'table.remove(setmetatable({}, { __len = function() return 1 << 60 end }), 1)',
     "spent the instruction budget"),
    ("move_huge_range", "table.move over 2^60 indices",
     'table.move({}, 1, 1 << 60, 2)', "spent the instruction budget"),
    ("find_plain_long_needle", "a plain search for a long needle in a long text (n × m comparisons)",
     'local s, n = string.rep("a", 1000000), string.rep("a", 500000) .. "b" while true do s:find(n, 1, true) end',
     "hostile/scripts/find_plain_long_needle.lua:4: string.find: "),
    ("find_long_class", "a pattern whose character class is 100,000 characters long",
     'local s = string.rep("a", 100000) return s:find("[" .. string.rep("b", 100000) .. "]")',
     "hostile/scripts/find_long_class.lua:4: string.find: "),
    ("find_balanced", "a balanced match over a long run of opening brackets (quadratic)",
     'local s = string.rep("(", 200000) return s:find("%b()")', "hostile/scripts/find_balanced.lua:4: string.find: "),
    ("gsub_backtracking", "gsub with a pattern that backtracks over the whole text at every position",
     'local s = string.rep("a", 100000) return s:gsub("a*a*b", "")', "hostile/scripts/gsub_backtracking.lua:4: string.gsub: "),
    ("match_backreferences", "a pattern with back-references over a long text",
     'local s = string.rep("a", 20000) return s:match("(a*)%1%1")', "hostile/scripts/match_backreferences.lua:4: string.match: "),
    ("gmatch_nested_repeats", "gmatch with repetitions nested by alternation-like classes",
     'local s = string.rep("ab", 50000) for w in s:gmatch("[ab]*[ab]*[ab]*c") do end', "hostile/scripts/gmatch_nested_repeats.lua:4: string.gmatch: "),
    ("gmatch_caret_literal", "gmatch, where a leading ^ is a literal, over a million carets (quadratic in one call)",
     'for _ in string.rep("^", 1000000):gmatch("^^*x") do end', "hostile/scripts/gmatch_caret_literal.lua:4: string.gmatch: "),
    ("find_many_stars", "find with thirty a* before a missing b (exponential backtracking)",
     'local s = string.rep("a", 100000) return s:find(string.rep("a*", 30) .. "b")', "hostile/scripts/find_many_stars.lua:4: string.find: "),
    ("match_frontier_class", "a frontier with a 100,000-character set at every position",
     'local s = string.rep("a", 100000) return s:match("%f[" .. string.rep("b", 100000) .. "]x")', "hostile/scripts/match_frontier_class.lua:4: string.match: "),
    ("match_too_deep", "a pattern that recurses past Lua's depth for patterns",
     'return string.rep("a", 1000):match(string.rep("a?", 500))', "hostile/scripts/match_too_deep.lua:4: pattern too complex"),
    ("gsub_empty_matches_callback", "gsub calling a function at each of a million empty matches",
     'local s = string.rep("x", 1000000) while true do s:gsub("", function() end) end', "hostile/scripts/gsub_empty_matches_callback.lua:4: "),
    ("gsub_result_flood", "gsub whose result would be a gigabyte (a kilobyte at each of a million empty matches)",
     'local s = string.rep("x", 1000000) return s:gsub("", string.rep("y", 1000))', "hostile/scripts/gsub_result_flood.lua:4: string.gsub: "),
    ("gsub_replacement_escapes", "gsub copying a whole long match into each replacement many times",
     'local s = string.rep("x", 100000) while true do s:gsub(".*", "%0%0%0%0%0%0%0%0") end', "hostile/scripts/gsub_replacement_escapes.lua:4: "),
    ("tonumber_walk", "tonumber as a for iterator over three megabytes of text (a walk for two instructions)",
     'local s = "10" .. string.rep(" ", 3000000) for _ in tonumber, s, 10 do end', "hostile/scripts/tonumber_walk.lua:4: tonumber: "),
    ("arithmetic_on_text", "arithmetic on a three-megabyte numeral in an endless loop (a walk per instruction)",
     'local s = "1" .. string.rep(" ", 3000000) while true do local x = s + 0 end', "hostile/scripts/arithmetic_on_text.lua:4: arithmetic on a string: "),
    ("math_on_text", "math.abs of a three-megabyte numeral in an endless loop",
     'local s = "1" .. string.rep(" ", 3000000) while true do math.abs(s) end', "hostile/scripts/math_on_text.lua:4: math.abs: "),
    ("format_number_text", "string.format with %d of a three-megabyte numeral, in an endless loop",
     'local s = "1" .. string.rep(" ", 3000000) while true do string.format("%d", s) end', "hostile/scripts/format_number_text.lua:4: string.format: "),
    ("rep_count_long_text", "string.rep with its count as a three-megabyte numeral, in an endless loop",
     'local s = string.rep("0", 3000000) .. "1" while true do string.rep("x", s) end', "hostile/scripts/rep_count_long_text.lua:4: rep: "),
    ("find_init_long_text", "string.find with its start as a three-megabyte numeral, in an endless loop",
     'local s = string.rep("0", 3000000) .. "1" while true do ("x"):find("x", s) end', "hostile/scripts/find_init_long_text.lua:4: string.find: "),
    ("format_q_float", "string.format %q of a float, printed as a hexadecimal float by C",
     'return string.format("%q", 1.0)', "'%q' of a float prints differently"),
    ("concat_operator_loop", "`..` of a 4 MB string in an endless loop (work one instruction hides)",
     'local big = string.rep("x", 4000000) while true do local y = big .. "z" end',
     "hostile/scripts/concat_operator_loop.lua:4: "),
    ("memory_exhaustion", "tables made without end until the pack's memory is gone",
     'local t = {} for i = 1, 1e12 do t[i] = { i } end', "memory limit is reached"),
    ("long_type_name", "a four-megabyte type name passed to ctx:spawn (a did-you-mean over every name)",
     'ctx:spawn(0, 0, { type = string.rep("a", 4000000) })', "a name is at most 256 bytes"),
    ("log_flood", "ctx:log in an endless loop (text kept outside Lua)",
     'while true do ctx:log(string.rep("x", 1000)) end', "rules.limits.log_bytes"),
    ("log_one_huge_line", "one ctx:log of eight megabytes",
     'ctx:log(string.rep("x", 8000000))', "rules.limits.log_bytes"),
    ("event_flood", "changes in an endless loop (events kept outside Lua)",
     'while true do ctx:add_score(1, 0) end', "rules.limits.events"),
    ("pcall_swallows_budget", "an endless loop of pcall that catches every error",
     'while true do pcall(error, "again") end', "spent the instruction budget"),
    ("deep_pcall", "pcall nested a thousand deep (Lua's own C-stack limit)",
     'local function d(n) if n == 0 then return end local ok, e = pcall(d, n - 1) if not ok then error(e, 0) end end d(1000)',
     "stack overflow"),
    ("deep_metamethods", "__index metamethods calling each other a million deep",
     'local t t = setmetatable({}, { __index = function(_, k) return t[k + 1] end }) return t[1]',
     "stack overflow"),
    ("error_with_name", "an error object whose __name would print its address",
     'error(setmetatable({}, { __name = "boom" }))', "boom: (address)"),
    ("set_global_in_hook", "a hook setting a global",
     'counter = 1', "cannot set global 'counter'"),
    ("set_ctx_table_key", "setting a table-valued key on ctx (its text would be an address)",
     'ctx[{}] = 1', "tried to set 'a table key'"),
    ("set_global_table_key", "setting a global with a table key",
     '_ENV[{}] = 1', "cannot set global 'a table key'"),
    ("format_address", "string.format with %p",
     'return string.format("%p", {})', "'%p' (an address)"),
    ("format_hex_float", "string.format with %a, printed differently by each C library",
     'return string.format("%a", 1.5)', "'%a' prints differently"),
]

# Scripts whose hooks keep state or leak addresses: played, and their logs read by the
# Rust tests (tests/integration/adversarial.rs).
PLAYED = {
    "upvalue_counter": (
        "a counter kept in an upvalue: put back before each move",
        'local n = 0\nlocal seen = {}\nreturn {\n  on_place = function(ctx)\n    n = n + 1\n    seen[#seen + 1] = n\n    ctx:log("n=" .. n .. " seen=" .. #seen)\n  end,\n}\n'),
    "global_tables": (
        "state kept in tables reached through globals, one of them the returned hooks table",
        'M = {}\nbag = { n = 0 }\nfunction M.on_place(ctx)\n  M.n = (M.n or 0) + 1\n  bag.n = bag.n + 1\n  ctx:log("M.n=" .. M.n .. " bag.n=" .. bag.n)\nend\nreturn M\n'),
    "hooks_only": (
        "only the returned hooks table, reached through a global",
        'H = {}\nH.on_place = function(ctx)\n  H.n = (H.n or 0) + 1\n  ctx:log("H.n=" .. H.n)\nend\nreturn H\n'),
    "env_swap": (
        "_ENV replaced at the top level: the new environment is frozen too",
        'local saved = _ENV\n_ENV = setmetatable({}, { __index = saved })\nhits = 0\nreturn {\n  on_place = function(ctx)\n    ctx:log("hits=" .. hits)\n    hits = hits + 1\n  end,\n}\n'),
    "gmatch_top_level": (
        "a gmatch iterator made at the top level: its position is put back before each move",
        'local words = ("one two three four"):gmatch("%a+")\nreturn {\n  on_place = function(ctx)\n    ctx:log("word=" .. tostring(words()))\n  end,\n}\n'),
    "text_probe": (
        "every way a value becomes text, which must read the same on every platform",
        'return {\n  on_place = function(ctx)\n'
        '    local decoy = setmetatable({}, { __metatable = { __tostring = 1 } })\n'
        '    ctx:log(tostring(decoy))\n'
        '    ctx:log(tostring(setmetatable({}, { __name = "named" })))\n'
        '    ctx:log(tostring(0/0) .. " " .. tostring(-(0/0)) .. " " .. tostring(1/0) .. " " .. tostring(-1/0))\n'
        '    ctx:log(string.format("%f|%5.1f|%-6g|%+e|%G", 0/0, 1/0, -1/0, 1/0, 0/0))\n'
        '    ctx:log(string.format("%s %s", 0/0, {}))\n'
        '    ctx:log(table.concat({ 0/0, 1/0 }, ","))\n'
        '    ctx:log(string.rep(0/0, 2, "|"))\n'
        '    local ok, e = pcall(error, setmetatable({}, { __name = "x" }))\n'
        '    ctx:log(type(e))\n'
        '    ctx:log(0/0)\n'
        '  end,\n}\n'),
}

# Attacks on long strings, from a pack at the largest memory and per-call budget a pack
# may ask for: single instructions (`==`, `<`, `..`) whose work grows with strings of tens
# of megabytes, run in a loop between two looks at the clock. Only the move's clock stops
# them; they must stop near it.
BIG_TEXT = [
    ("equal_long_strings", "== of two equal 16 MB strings in an endless loop (a comparison every other instruction)",
     'local a, b = string.rep("x", 16000000), string.rep("x", 16000000) while true do ' + 'if a == b then end ' * 8 + 'end'),
    ("less_long_strings", "< of two equal 16 MB strings in an endless loop (a collation every other instruction)",
     'local a, b = string.rep("x", 16000000), string.rep("x", 16000000) while true do ' + 'if a < b then end ' * 8 + 'end'),
    ("concat_long_halves", "`..` of a 16 MB string with itself in an endless loop (a 32 MB copy per instruction)",
     'local a = string.rep("x", 16000000) while true do local _ = a .. a end'),
]

# Attacks only the move's clock stops (their scenarios keep the default `wall_ms`).
CLOCK_ONLY = {"concat_operator_loop"}

DECK_REST = "[weaken_column, weaken_cross], [weaken_diag_down, weaken_diag_up], [weaken_corners, weaken_ring]"


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def pack_yaml(pid, name, description, extra=""):
    """A test pack's pack.yaml: it requires base; `extra` is appended."""
    return ("# yaml-language-server: $schema=../../../../schemas/pack.schema.json\n"
            "# Written by tests/adversarial/generate.py: change it there.\n"
            f"id: {pid}\nname: {name}\nversion: 1.0.0\nauthors: [Tokensmith]\n"
            f"description: {description}\n"
            "requires:\n  - { id: base, version: \"^1\" }\n" + extra)


# The first lines of a test pack's content.yaml.
CONTENT_HEAD = ["# yaml-language-server: $schema=../../../../schemas/content.schema.json",
                "# Written by tests/adversarial/generate.py: change it there."]


def attack_script(what, body):
    """An attack's script: `body` is its on_place hook's body."""
    return f"-- Attack: {what}.\nreturn {{\n  on_place = function(ctx)\n    {body}\n  end,\n}}\n"


def hostile():
    root = os.path.join(HERE, "packs", "hostile")
    shutil.rmtree(root, ignore_errors=True)
    write(os.path.join(root, "pack.yaml"), pack_yaml(
        "hostile", "Hostile",
        "Test-only scripts written to crash, hang, exhaust memory or leak addresses; each must be refused cleanly."))
    content = CONTENT_HEAD + ["abilities:"]
    for aid, what, _, _ in ATTACKS:
        content.append(f"  - {{ id: {aid}, name: {aid}, description: \"{what}\", script: scripts/{aid}.lua }}")
    for aid, (what, _) in PLAYED.items():
        content.append(f"  - {{ id: {aid}, name: {aid}, description: \"{what}\", script: scripts/{aid}.lua }}")
    content.append("token_types:")
    content.append("  - { id: miser, name: Miser, description: Spends most of its per-call budget between every turn., script: scripts/miser.lua }")
    content.append("  - { id: swarm, name: Swarm, description: Fills the board with misers., script: scripts/swarm.lua }")
    content.append("cards:")
    for aid, _, _, _ in ATTACKS:
        content.append(f"  - {{ id: {aid}, value: 1, ability: {aid} }}")
    for aid in PLAYED:
        content.append(f"  - {{ id: {aid}, value: 1, ability: {aid} }}")
    content.append("  - { id: swarm, value: 1, ability: swarm }")
    write(os.path.join(root, "content.yaml"), "\n".join(content) + "\n")
    for aid, what, body, _ in ATTACKS:
        write(os.path.join(root, "scripts", aid + ".lua"), attack_script(what, body))
    for aid, (what, lua) in PLAYED.items():
        write(os.path.join(root, "scripts", aid + ".lua"), f"-- {what}.\n" + lua)
    write(os.path.join(root, "scripts", "miser.lua"),
          "-- Between every turn, just under the per-call budget: many misers together must\n"
          "-- still be stopped by the move's shared budget.\n"
          "return {\n  between_turns = function(ctx, me)\n    for i = 1, 900000 do end\n  end,\n}\n")
    write(os.path.join(root, "scripts", "swarm.lua"),
          "-- Fills every empty cell with a miser.\n"
          "return {\n  on_place = function(ctx)\n    for x = 0, ctx:width() - 1 do\n      for y = 0, ctx:height() - 1 do\n"
          "        ctx:spawn(x, y, { type = \"miser\", value = 5 })\n      end\n    end\n  end,\n}\n")
    # The swarm is an ability: the miser type needs its card's deck entry only.
    lines = open(os.path.join(root, "content.yaml")).read().replace(
        "  - { id: swarm, name: Swarm, description: Fills the board with misers., script: scripts/swarm.lua }\n", "")
    lines = lines.replace("abilities:\n", "abilities:\n  - { id: swarm, name: Swarm, description: Fills the board with misers., script: scripts/swarm.lua }\n", 1)
    write(os.path.join(root, "content.yaml"), lines)


def bigtext():
    root = os.path.join(HERE, "packs", "bigtext")
    shutil.rmtree(root, ignore_errors=True)
    write(os.path.join(root, "pack.yaml"), pack_yaml(
        "bigtext", "Big Text",
        "Test-only scripts whose single instructions work on strings of tens of megabytes; the move's clock must stop each near its limit.",
        "scripts: { instructions: 50000000, memory_kb: 65536 }\n"))
    content = CONTENT_HEAD + ["abilities:"]
    for aid, what, _ in BIG_TEXT:
        content.append(f"  - {{ id: {aid}, name: {aid}, description: \"{what}\", script: scripts/{aid}.lua }}")
    content.append("cards:")
    for aid, _, _ in BIG_TEXT:
        content.append(f"  - {{ id: {aid}, value: 1, ability: {aid} }}")
    write(os.path.join(root, "content.yaml"), "\n".join(content) + "\n")
    for aid, what, body in BIG_TEXT:
        write(os.path.join(root, "scripts", aid + ".lua"), attack_script(what, body))


def scenarios():
    root = os.path.join(HERE, "scenarios")
    shutil.rmtree(root, ignore_errors=True)
    for aid, what, _, expected in ATTACKS + [("swarm", "misers between turns, each under the per-call budget, together over the move's", None,
                                             "shared budget of 10000000 instructions")]:
        write(os.path.join(root, aid + ".yaml"),
              "# yaml-language-server: $schema=../../../schemas/scenario.schema.json\n"
              "# Written by tests/adversarial/generate.py: change it there.\n"
              f"name: \"refused cleanly: {what}\"\n"
              "packs: [hostile]\npack_dirs: [../packs]\n"
              + ("rules: { opening_token: null }\n" if aid in CLOCK_ONLY else
                 # The count stops these: a clock far away keeps a slow or busy machine
                 # from stopping them first with another message.
                 "rules: { opening_token: null, limits: { wall_ms: 10000 } }\n")
              + f"decks:\n  1: [[{aid}, weaken_row], {DECK_REST}]\n"
              f"moves:\n  - {{ seat: 1, card: {aid}, at: [2, 2] }}\n"
              f"expect:\n  error: \"{expected}\"\n  scores: {{ 1: 0, 2: 0 }}\n  next: 1\n")
    for aid, what, _ in BIG_TEXT:
        write(os.path.join(root, aid + ".yaml"),
              "# yaml-language-server: $schema=../../../schemas/scenario.schema.json\n"
              "# Written by tests/adversarial/generate.py: change it there.\n"
              f"name: \"refused cleanly: {what}\"\n"
              "packs: [bigtext]\npack_dirs: [../packs]\nrules: { opening_token: null }\n"
              f"decks:\n  1: [[{aid}, weaken_row], {DECK_REST}]\n"
              f"moves:\n  - {{ seat: 1, card: {aid}, at: [2, 2] }}\n"
              "expect:\n  error: \"ran for more than 1000 ms (rules.limits.wall_ms)\"\n  scores: { 1: 0, 2: 0 }\n  next: 1\n")
    # Hooks nested through many packs, each level deep in Lua's own C calls: stopped at
    # the rules' depth, never by the native stack.
    for name, depth, expected, what in [
        ("chain_through_twenty_packs", 40, "hooks triggered each other more than 32 deep",
         "on_destroyed hooks of twenty packs triggering each other, each 40 pcalls deep, to the deepest nesting the rules allow"),
        ("chain_deep_in_every_pack", 150, "C stack overflow",
         "on_destroyed hooks of twenty packs triggering each other, each 150 pcalls deep, until one pack's Lua runs out of C calls"),
    ]:
        write(os.path.join(root, name + ".yaml"),
              "# yaml-language-server: $schema=../../../schemas/scenario.schema.json\n"
              "# Written by tests/adversarial/generate.py: change it there.\n"
              f"name: \"refused cleanly: {what}\"\n"
              "packs: [" + ", ".join(f"chain{k:02}" for k in range(1, CHAIN + 1)) + "]\n"
              f"pack_dirs: [../chain]\nrules: {{ opening_token: null, limits: {{ hook_depth: 32, wall_ms: 10000 }} }}\n"
              f"decks:\n  1: [[kick_{depth}, weaken_row], {DECK_REST}]\n"
              f"moves:\n  - {{ seat: 1, card: kick_{depth}, at: [2, 2] }}\n"
              f"expect:\n  error: \"{expected}\"\n  scores: {{ 1: 0, 2: 0 }}\n  next: 1\n")


def unused():
    write(os.path.join(root, "chain_through_twenty_packs.yaml"),
          "# yaml-language-server: $schema=../../../schemas/scenario.schema.json\n"
          "# Written by tests/adversarial/generate.py: change it there.\n"
          "name: \"refused cleanly: on_destroyed hooks of twenty packs triggering each other, each 150 pcalls deep, at the deepest nesting the rules allow\"\n"
          "packs: [" + ", ".join(f"chain{k:02}" for k in range(1, CHAIN + 1)) + "]\n"
          "pack_dirs: [../chain]\nrules: { opening_token: null, limits: { hook_depth: 32 } }\n"
          f"decks:\n  1: [[kick, weaken_row], {DECK_REST}]\n"
          "moves:\n  - { seat: 1, card: kick, at: [2, 2] }\n"
          "expect:\n  error: \"hooks triggered each other more than 32 deep\"\n  scores: { 1: 0, 2: 0 }\n  next: 1\n")


CHAIN = 20
DEPTHS = (40, 150)


def chain():
    root = os.path.join(HERE, "chain")
    shutil.rmtree(root, ignore_errors=True)
    for k in range(1, CHAIN + 1):
        pid = f"chain{k:02}"
        nxt = f"chain{k % CHAIN + 1:02}"
        d = os.path.join(root, pid)
        write(os.path.join(d, "pack.yaml"), pack_yaml(
            pid, f"Chain {k}", f"Test-only link {k} of a ring of packs whose hooks trigger each other."))
        content = "\n".join(CONTENT_HEAD) + "\ntoken_types:\n"
        for depth in DEPTHS:
            content += f"  - {{ id: link_{depth}, name: Link {depth}, description: When destroyed it spawns the next pack's link at value 0 from {depth} pcalls deep., script: scripts/link_{depth}.lua }}\n"
            write(os.path.join(d, "scripts", f"link_{depth}.lua"),
                  "-- Deep in nested pcalls (C calls of Lua's own), spawn the next pack's link at\n"
                  "-- value 0: it is destroyed at once and its on_destroyed runs inside this one.\n"
                  "local function deep(ctx, n)\n  if n == 0 then\n"
                  f"    return ctx:spawn(ctx.x, ctx.y, {{ type = \"{nxt}:link_{depth}\", value = 0 }})\n"
                  "  end\n  local ok, e = pcall(deep, ctx, n - 1)\n  if not ok then error(e, 0) end\n  return e\nend\n"
                  f"return {{\n  on_destroyed = function(ctx, me)\n    deep(ctx, {depth})\n  end,\n}}\n")
        if k == 1:
            content += "abilities:\n"
            for depth in DEPTHS:
                content += f"  - {{ id: kick_{depth}, name: Kick {depth}, description: Spawns a link at value 0 (destroyed at once)., script: scripts/kick_{depth}.lua }}\n"
                write(os.path.join(d, "scripts", f"kick_{depth}.lua"),
                      f"return {{\n  on_place = function(ctx)\n    ctx:spawn(ctx.x, (ctx.y + 1) % ctx:height(), {{ type = \"chain01:link_{depth}\", value = 0 }})\n  end,\n}}\n")
            content += "cards:\n"
            for depth in DEPTHS:
                content += f"  - {{ id: kick_{depth}, value: 1, ability: kick_{depth} }}\n"
            content += ("decks:\n  - id: kickers\n    name: Kickers\n    stacks:\n"
                        "      - [kick_40, base:weaken_row]\n      - [kick_150, base:weaken_cross]\n"
                        "      - [base:weaken_diag_down, base:weaken_diag_up]\n      - [base:weaken_corners, base:weaken_ring]\n")
        write(os.path.join(d, "content.yaml"), content)


def toplevel():
    root = os.path.join(HERE, "toplevel")
    shutil.rmtree(root, ignore_errors=True)
    d = os.path.join(root, "top_rep")
    write(os.path.join(d, "pack.yaml"),
          "# Written by tests/adversarial/generate.py: change it there.\n"
          "id: top_rep\nname: Top Rep\nversion: 1.0.0\n"
          "description: \"Test-only: a library call at a script's top level that would run for years uncharged.\"\n"
          "requires:\n  - { id: base, version: \"^1\" }\n")
    write(os.path.join(d, "content.yaml"),
          "abilities:\n  - { id: hang, name: Hang, description: Its script hangs at load., script: scripts/hang.lua }\n")
    write(os.path.join(d, "scripts", "hang.lua"),
          "local s = string.rep(\"\", 1 << 53)\nreturn { on_place = function(ctx) end }\n")


hostile()
bigtext()
chain()
scenarios()
toplevel()
