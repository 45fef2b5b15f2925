//! Each kind of bad input is reported at its exact place, with a clear message.
//!
//! Every test starts from one small valid pack (`base`), introduces one mistake and asserts
//! the *whole* list of diagnostics, so an extra or cascading diagnostic fails the test too.

use crate::support::TempPacks;

const BASE_MANIFEST: &str = "\
id: base
name: Base
version: 1.0.0
";

/// The content of the valid pack. The tests give line and column numbers into this text:
/// keep it as it is, or update them.
const BASE_CONTENT: &str = "\
rules:
  board: { width: 4, height: 4 }
  stacks: 2
  stack_size: { min: 1, max: 3 }
  score_limit: 100
  opening_token: null
areas:
  - id: row
    offsets: [[-1, 0], [1, 0]]
  - id: cross
    grid: |
      . x .
      x o x
      . x .
token_types:
  - id: basic
  - id: booster
    aura: { area: row, to: friendly, income: 1 }
abilities:
  - id: weaken
    effect: damage
    amount: 1
  - id: push
    effect: push
cards:
  - id: weaken_row
    value: 3
    ability: weaken
    area: row
  - id: weaken_cross
    value: 2
    ability: weaken
    area: cross
  - id: push_row
    value: 2
    ability: push
    area: row
  - id: push_cross
    value: 1
    ability: push
    area: cross
  - id: boost
    value: 1
    token: booster
decks:
  - id: starter
    stacks:
      - [weaken_row, boost]
      - [push_cross]
";

const BASE: &str = "base/cards.yaml";

/// A set of pack files to load, built from the valid pack by small edits.
struct Packs(Vec<(String, String)>);

impl Packs {
    /// The valid pack: `base/pack.yaml` and `base/cards.yaml`.
    fn base() -> Packs {
        Packs(vec![
            ("base/pack.yaml".into(), BASE_MANIFEST.into()),
            (BASE.into(), BASE_CONTENT.into()),
        ])
    }

    /// Replace `from`, which must occur exactly once in `path`, by `to`.
    fn replace(mut self, path: &str, from: &str, to: &str) -> Packs {
        let file = self
            .0
            .iter_mut()
            .find(|(p, _)| p == path)
            .unwrap_or_else(|| panic!("no file {path}"));
        assert_eq!(file.1.matches(from).count(), 1, "{from:?} once in {path}");
        file.1 = file.1.replacen(from, to, 1);
        self
    }

    /// Add (or overwrite) a file.
    fn with(mut self, path: &str, text: &str) -> Packs {
        self.0.retain(|(p, _)| p != path);
        self.0.push((path.into(), text.into()));
        self
    }

    /// Load the files; every diagnostic as `path:line:col: severity: message`, with the
    /// temporary folder removed from paths inside messages too.
    fn diagnostics(&self) -> Vec<String> {
        let files: Vec<(&str, &str)> = self
            .0
            .iter()
            .map(|(p, t)| (p.as_str(), t.as_str()))
            .collect();
        let packs = TempPacks::new(&files);
        let root = format!("{}/", packs.path().display());
        packs
            .diagnostics()
            .iter()
            .map(|d| d.replace(&root, ""))
            .collect()
    }
}

/// A `pack.yaml` with `requires: [REQUIRES]` on line 4 (a required id starts at column 18).
fn manifest(id: &str, requires: &str) -> String {
    format!("id: {id}\nname: {id}\nversion: 1.0.0\nrequires: [{requires}]\n")
}

/// Exactly these diagnostics, in order, and nothing else.
#[track_caller]
fn check(packs: &Packs, expected: &[&str]) {
    assert_eq!(packs.diagnostics(), expected);
}

// ---------------------------------------------------------------------------------------
// The baseline.

#[test]
fn the_base_pack_of_these_tests_is_valid() {
    check(&Packs::base(), &[]);
}

// ---------------------------------------------------------------------------------------
// YAML and document shape.

#[test]
fn yaml_syntax_error_is_reported_where_the_parser_stops() {
    let packs = Packs::base().with(
        "base/extra.yaml",
        "cards:\n  - id: extra\n    value: 1: 2\n",
    );
    check(
        &packs,
        &[
            "base/extra.yaml:3:13: error: YAML syntax: mapping values are not allowed in this context",
        ],
    );
}

#[test]
fn tab_indentation_is_reported_on_its_own_line() {
    let packs = Packs::base().with("base/extra.yaml", "cards:\n  - id: extra\n\tvalue: 1\n");
    check(
        &packs,
        &["base/extra.yaml:3:1: error: YAML syntax: a tab cannot indent YAML; indent with spaces"],
    );
}

#[test]
fn unclosed_flow_list_is_reported_at_its_bracket() {
    let packs = Packs::base().with(
        "base/extra.yaml",
        "cards:\n  - id: extra\n    value: [1\n    name: Extra\n",
    );
    check(
        &packs,
        &[
            "base/extra.yaml:3:12: error: YAML syntax: this `[` is never closed; end the list with `]`",
        ],
    );
}

#[test]
fn duplicate_key_is_reported_without_library_advice() {
    let packs = Packs::base().with(
        "base/extra.yaml",
        "cards:\n  - id: extra\n    value: 1\n    value: 2\n",
    );
    check(
        &packs,
        &[
            "base/extra.yaml:4:5: error: YAML syntax: duplicate key `value`; a key appears once per mapping",
        ],
    );
}

#[test]
fn several_yaml_documents_in_one_file_are_reported_at_the_separator() {
    let packs = Packs::base().with("base/extra.yaml", "cards: []\n---\nareas: []\n");
    check(
        &packs,
        &[
            "base/extra.yaml:2:1: error: YAML syntax: a content file holds one YAML document; remove the `---` separator",
        ],
    );
}

#[test]
fn yaml_syntax_error_does_not_cascade_into_missing_rules() {
    let packs = Packs::base().replace(BASE, "stacks: 2\n", "stacks: 2: 3\n");
    check(
        &packs,
        &[
            "base/cards.yaml:3:12: error: YAML syntax: mapping values are not allowed in this context",
        ],
    );
}

#[test]
fn content_file_that_is_a_list_is_reported() {
    let packs = Packs::base().with("base/extra.yaml", "- id: extra\n  value: 1\n");
    check(
        &packs,
        &[
            "base/extra.yaml:1:1: error: a content file is a mapping of sections (rules, areas, token_types, abilities, cards, decks), found a list",
        ],
    );
}

#[test]
fn manifest_that_is_a_list_is_reported() {
    let packs = Packs::base().with("frost/pack.yaml", "- id: frost\n");
    check(
        &packs,
        &[
            "frost/pack.yaml:1:1: error: expected a mapping (keys: `id`, `name`, `version`, `authors`, `description`, `requires`, `scripts`), found a list",
        ],
    );
}

#[test]
fn unknown_section_suggests_the_nearest() {
    let packs = Packs::base().with(
        "base/extra.yaml",
        "areas:\n  - id: diagonal\n    offsets: [[1, 1]]\ncard:\n  - id: extra\n",
    );
    check(
        &packs,
        &[
            "base/extra.yaml:4:1: error: unknown section 'card' (did you mean 'cards'?); sections are rules, areas, token_types, abilities, cards, decks",
        ],
    );
}

#[test]
fn section_that_is_not_a_list_is_reported() {
    let packs = Packs::base().with("base/extra.yaml", "cards: { id: extra }\n");
    check(
        &packs,
        &[
            "base/extra.yaml:1:8: error: expected a list of card entries (`- id: ...`), found a mapping",
        ],
    );
}

// ---------------------------------------------------------------------------------------
// Fields of an entry.

#[test]
fn string_where_an_integer_is_expected() {
    let packs = Packs::base().replace(
        BASE,
        "value: 2\n    ability: push\n",
        "value: two\n    ability: push\n",
    );
    check(
        &packs,
        &["base/cards.yaml:35:12: error: expected an integer, found the string 'two'"],
    );
}

#[test]
fn card_without_value_is_reported_at_its_id() {
    let packs = Packs::base().replace(BASE, "value: 2\n    ability: push\n", "ability: push\n");
    check(
        &packs,
        &["base/cards.yaml:34:9: error: card 'push_row' needs a `value`"],
    );
}

#[test]
fn unknown_field_suggests_the_nearest() {
    let packs = Packs::base().replace(
        BASE,
        "value: 2\n    ability: push\n",
        "valeu: 2\n    ability: push\n",
    );
    check(
        &packs,
        &[
            "base/cards.yaml:35:5: error: unknown field `valeu` (did you mean `value`?); expected one of `id`, `name`, `value`, `token`, `ability`, `area`, `description`",
        ],
    );
}

#[test]
fn unknown_effect_suggests_the_nearest() {
    let packs = Packs::base().with(
        "base/extra.yaml",
        "abilities:\n  - id: shove\n    effect: puhs\n",
    );
    check(
        &packs,
        &[
            "base/extra.yaml:3:13: error: unknown value `puhs` (did you mean `push`?); expected one of `damage`, `push`, `flip`, `spawn`, `extra_turn`, `swap_with_last`, `transform`, `next_token_bonus`",
        ],
    );
}

#[test]
fn card_value_out_of_range_is_reported_at_the_value() {
    let packs = Packs::base().replace(BASE, "value: 3\n", "value: 0\n");
    check(
        &packs,
        &["base/cards.yaml:27:12: error: card value must be from 1 to 1000000, found 0"],
    );
}

#[test]
fn card_with_an_error_is_not_reported_again_as_unknown() {
    let packs = Packs::base().replace(BASE, "value: 3\n", "valeu: 3\n");
    check(
        &packs,
        &[
            "base/cards.yaml:27:5: error: unknown field `valeu` (did you mean `value`?); expected one of `id`, `name`, `value`, `token`, `ability`, `area`, `description`",
        ],
    );
}

#[test]
fn ability_with_an_error_is_not_reported_again_as_unknown() {
    let packs = Packs::base().replace(BASE, "effect: push", "effect: puhs");
    check(
        &packs,
        &[
            "base/cards.yaml:24:13: error: unknown value `puhs` (did you mean `push`?); expected one of `damage`, `push`, `flip`, `spawn`, `extra_turn`, `swap_with_last`, `transform`, `next_token_bonus`",
        ],
    );
}

// ---------------------------------------------------------------------------------------
// References.

#[test]
fn unknown_ability_suggests_the_nearest() {
    let packs = Packs::base().replace(
        BASE,
        "ability: weaken\n    area: row",
        "ability: weakn\n    area: row",
    );
    check(
        &packs,
        &["base/cards.yaml:28:14: error: unknown ability 'weakn' (did you mean 'weaken'?)"],
    );
}

#[test]
fn unknown_token_type_suggests_the_nearest() {
    let packs = Packs::base().replace(BASE, "token: booster", "token: boster");
    check(
        &packs,
        &["base/cards.yaml:44:12: error: unknown token type 'boster' (did you mean 'booster'?)"],
    );
}

#[test]
fn unknown_area_suggests_the_nearest() {
    let packs = Packs::base().replace(
        BASE,
        "ability: push\n    area: cross",
        "ability: push\n    area: crss",
    );
    check(
        &packs,
        &["base/cards.yaml:41:11: error: unknown area 'crss' (did you mean 'cross'?)"],
    );
}

#[test]
fn unknown_short_id_with_swapped_letters_suggests_the_nearest() {
    let packs = Packs::base().replace(
        BASE,
        "ability: weaken\n    area: row",
        "ability: weaken\n    area: rwo",
    );
    check(
        &packs,
        &["base/cards.yaml:29:11: error: unknown area 'rwo' (did you mean 'row'?)"],
    );
}

#[test]
fn unknown_card_in_a_deck_suggests_the_nearest() {
    let packs = Packs::base().replace(BASE, "[push_cross]", "[push_crss]");
    check(
        &packs,
        &["base/cards.yaml:49:10: error: unknown card 'push_crss' (did you mean 'push_cross'?)"],
    );
}

#[test]
fn unknown_pack_prefix_suggests_the_nearest() {
    let packs = Packs::base().replace(BASE, "[push_cross]", "[bsae:push_cross]");
    check(
        &packs,
        &[
            "base/cards.yaml:49:10: error: unknown pack 'bsae' in 'bsae:push_cross' (did you mean 'base'?)",
        ],
    );
}

#[test]
fn duplicate_id_in_one_file_names_the_first() {
    let packs = Packs::base().replace(BASE, "id: push_row", "id: push_cross");
    check(
        &packs,
        &[
            "base/cards.yaml:38:9: error: card 'push_cross' is already defined at base/cards.yaml:34:9; ids must be unique within a pack",
        ],
    );
}

#[test]
fn duplicate_id_in_another_file_of_the_pack_names_the_first() {
    let packs = Packs::base().with(
        "base/extra.yaml",
        "abilities:\n  - id: push\n    effect: flip\n",
    );
    check(
        &packs,
        &[
            "base/extra.yaml:2:9: error: ability 'push' is already defined at base/cards.yaml:23:9; ids must be unique within a pack",
        ],
    );
}

#[test]
fn entry_id_with_bad_characters_is_reported() {
    let packs = Packs::base().with(
        "base/extra.yaml",
        "cards:\n  - id: Big-Card\n    value: 1\n",
    );
    check(
        &packs,
        &[
            "base/extra.yaml:2:9: error: card id 'Big-Card' may only use lowercase letters, digits and '_' (with an optional 'pack:' prefix to patch)",
        ],
    );
}

// ---------------------------------------------------------------------------------------
// Pack manifests and dependencies.

#[test]
fn pack_id_with_bad_characters_is_reported() {
    let packs = Packs::base().replace("base/pack.yaml", "id: base", "id: Base-Game");
    check(
        &packs,
        &[
            "base/pack.yaml:1:5: error: pack id 'Base-Game' may only use lowercase letters, digits and '_'",
        ],
    );
}

#[test]
fn bad_semver_version_is_reported() {
    let packs = Packs::base().replace("base/pack.yaml", "1.0.0", "1.x");
    check(
        &packs,
        &[
            "base/pack.yaml:3:10: error: version '1.x' is not a semantic version like 1.2.0: unexpected character 'x' while parsing minor version number",
        ],
    );
}

#[test]
fn unquoted_two_part_version_says_what_to_write() {
    let packs = Packs::base().replace("base/pack.yaml", "1.0.0", "1.0");
    check(
        &packs,
        &[
            "base/pack.yaml:3:10: error: version '1.0' needs three numbers, major.minor.patch: write 1.0.0",
        ],
    );
}

#[test]
fn unknown_manifest_field_suggests_the_nearest() {
    let packs = Packs::base().with("frost/pack.yaml", "id: frost\nversoin: 1.0.0\n");
    check(
        &packs,
        &[
            "frost/pack.yaml:2:1: error: unknown field `versoin` (did you mean `version`?); expected one of `id`, `name`, `version`, `authors`, `description`, `requires`, `scripts`",
        ],
    );
}

#[test]
fn missing_dependency_suggests_the_nearest() {
    let packs = Packs::base().with("frost/pack.yaml", &manifest("frost", "{ id: bsae }"));
    check(
        &packs,
        &[
            "frost/pack.yaml:4:18: error: pack 'frost' requires 'bsae', which was not found (did you mean 'base'?); found: base, frost",
        ],
    );
}

#[test]
fn dependency_version_mismatch_is_reported_at_the_requirement() {
    let packs = Packs::base().with(
        "frost/pack.yaml",
        &manifest("frost", "{ id: base, version: \"^2\" }"),
    );
    check(
        &packs,
        &[
            "frost/pack.yaml:4:33: error: pack 'frost' requires 'base' ^2, but the loaded 'base' is version 1.0.0",
        ],
    );
}

#[test]
fn bad_version_requirement_is_reported() {
    let packs = Packs::base().with(
        "frost/pack.yaml",
        &manifest("frost", "{ id: base, version: \"~>2\" }"),
    );
    check(
        &packs,
        &[
            "frost/pack.yaml:4:33: error: version requirement '~>2' is not valid semver (e.g. ^1.2): unexpected character '>' while parsing major version number",
        ],
    );
}

#[test]
fn dependency_cycle_is_reported_in_both_packs() {
    let packs = Packs::base()
        .with(
            "frost/pack.yaml",
            &manifest("frost", "{ id: base }, { id: snow }"),
        )
        .with("snow/pack.yaml", &manifest("snow", "{ id: frost }"));
    check(
        &packs,
        &[
            "frost/pack.yaml:1:5: error: dependency cycle: frost → snow → frost; a pack cannot require itself, even through others",
            "snow/pack.yaml:1:5: error: dependency cycle: frost → snow → frost; a pack cannot require itself, even through others",
        ],
    );
}

#[test]
fn dependency_with_a_broken_manifest_is_not_called_missing() {
    let packs = Packs::base()
        .with(
            "frost/pack.yaml",
            &manifest("frost", "{ id: base }, { id: snow }"),
        )
        .with("snow/pack.yaml", "id: snow\nversion: one\n");
    check(
        &packs,
        &[
            "frost/pack.yaml:4:32: error: pack 'frost' cannot be loaded because its dependency 'snow' has errors",
            "snow/pack.yaml:2:10: error: version 'one' is not a semantic version like 1.2.0: unexpected character 'o' while parsing major version number",
        ],
    );
}

#[test]
fn duplicate_pack_id_names_the_first() {
    let packs = Packs::base().with("other/pack.yaml", "id: base\nversion: 2.0.0\n");
    check(
        &packs,
        &[
            "other/pack.yaml:1:5: error: pack id 'base' is already used by base/pack.yaml; pack ids must be unique",
        ],
    );
}

// ---------------------------------------------------------------------------------------
// Patching and references across packs.

#[test]
fn patching_a_pack_that_is_not_required_is_reported() {
    let packs = Packs::base()
        .with("frost/pack.yaml", "id: frost\nversion: 1.0.0\n")
        .with(
            "frost/cards.yaml",
            "cards:\n  - id: base:boost\n    value: 2\n",
        );
    check(
        &packs,
        &[
            "frost/cards.yaml:2:9: error: pack 'frost' patches 'base:boost' but does not require 'base'; add `- { id: base }` to `requires` in its pack.yaml",
        ],
    );
}

#[test]
fn patching_a_missing_entry_suggests_the_nearest() {
    let packs = Packs::base()
        .with("frost/pack.yaml", &manifest("frost", "{ id: base }"))
        .with(
            "frost/cards.yaml",
            "cards:\n  - id: base:bost\n    value: 2\n",
        );
    check(
        &packs,
        &[
            "frost/cards.yaml:2:9: error: pack 'base' has no card 'bost' to patch (did you mean 'boost'?)",
        ],
    );
}

#[test]
fn patching_a_pack_that_is_not_loaded_is_reported() {
    let packs = Packs::base()
        .with("frost/pack.yaml", &manifest("frost", "{ id: base }"))
        .with(
            "frost/cards.yaml",
            "cards:\n  - id: snow:boost\n    value: 2\n",
        );
    check(
        &packs,
        &["frost/cards.yaml:2:9: error: 'snow:boost' patches pack 'snow', which is not loaded"],
    );
}

#[test]
fn two_packs_patching_the_same_field_warn_naming_both_files() {
    let packs = Packs::base()
        .with("alpha/pack.yaml", &manifest("alpha", "{ id: base }"))
        .with(
            "alpha/cards.yaml",
            "cards:\n  - id: base:boost\n    value: 2\n",
        )
        .with("beta/pack.yaml", &manifest("beta", "{ id: base }"))
        .with(
            "beta/cards.yaml",
            "cards:\n  - id: base:boost\n    name: Big Boost\n    value: 3\n",
        );
    check(
        &packs,
        &[
            "beta/cards.yaml:2:9: warning: field `value` of base:boost is also patched by pack 'alpha' at alpha/cards.yaml:2:9, which pack 'beta' does not require; this patch, later in load order, wins",
        ],
    );
}

#[test]
fn two_packs_patching_the_same_rule_warn_naming_both_files() {
    let packs = Packs::base()
        .with("alpha/pack.yaml", &manifest("alpha", "{ id: base }"))
        .with("alpha/rules.yaml", "rules:\n  score_limit: 50\n")
        .with("beta/pack.yaml", &manifest("beta", "{ id: base }"))
        .with("beta/rules.yaml", "rules:\n  score_limit: 70\n");
    check(
        &packs,
        &[
            "beta/rules.yaml:2:16: warning: rules.score_limit is also set by pack 'alpha' at alpha/rules.yaml:2:16, which pack 'beta' does not require; this value, later in load order, wins",
        ],
    );
}

#[test]
fn ambiguous_reference_names_both_candidates() {
    let packs = Packs::base()
        .with("alpha/pack.yaml", &manifest("alpha", "{ id: base }"))
        .with(
            "alpha/abilities.yaml",
            "abilities:\n  - id: zap\n    effect: flip\n",
        )
        .with("beta/pack.yaml", &manifest("beta", "{ id: base }"))
        .with(
            "beta/abilities.yaml",
            "abilities:\n  - id: zap\n    effect: push\n",
        )
        .with(
            "gamma/pack.yaml",
            &manifest("gamma", "{ id: alpha }, { id: beta }"),
        )
        .with(
            "gamma/cards.yaml",
            "cards:\n  - id: zapper\n    value: 1\n    ability: zap\n    area: row\n",
        );
    check(
        &packs,
        &[
            "gamma/cards.yaml:4:14: error: ability 'zap' is ambiguous: it could be 'alpha:zap' (alpha/abilities.yaml:2) or 'beta:zap' (beta/abilities.yaml:2); write the one you mean with its pack prefix",
        ],
    );
}

#[test]
fn a_card_id_another_pack_defines_too_is_warned_about_with_both_places() {
    let packs = Packs::base()
        .with("alpha/pack.yaml", &manifest("alpha", "{ id: base }"))
        .with(
            "alpha/cards.yaml",
            "cards:\n  - id: push_row\n    value: 2\n    ability: weaken\n    area: row\n",
        );
    check(
        &packs,
        &[
            "alpha/cards.yaml:2:9: warning: card 'push_row' is also defined by pack 'base' (base/cards.yaml:34:9): where both are loaded, scenarios, decks of other packs and the command line must write 'alpha:push_row' or 'base:push_row'; give this card an id of its own, or write `id: base:push_row` to change that one",
        ],
    );
}

// ---------------------------------------------------------------------------------------
// Areas.

#[test]
fn grid_with_two_placed_tokens_is_reported() {
    let packs = Packs::base().replace(BASE, "x o x", "o o x");
    check(
        &packs,
        &[
            "base/cards.yaml:13:9: error: grid has more than one `o` (row 2); `o` marks the one placed token",
        ],
    );
}

#[test]
fn grid_with_an_unknown_cell_is_reported() {
    let packs = Packs::base().replace(BASE, "x o x", "x o y");
    check(
        &packs,
        &[
            "base/cards.yaml:13:11: error: grid cell `y` in row 2, column 3 is not `o` (the placed token), `x` (a target) or `.` (nothing); separate cells with spaces",
        ],
    );
}

#[test]
fn grid_with_uneven_rows_is_reported() {
    let packs = Packs::base().replace(BASE, "x o x", "x o x x");
    check(
        &packs,
        &[
            "base/cards.yaml:13:7: error: grid row 2 has 4 cells but row 1 has 3; every row needs the same number of cells",
        ],
    );
}

#[test]
fn offset_zero_zero_is_reported_at_the_offset() {
    let packs = Packs::base().replace(BASE, "[[-1, 0], [1, 0]]", "[[-1, 0], [0, 0]]");
    check(
        &packs,
        &[
            "base/cards.yaml:9:24: error: offset [0, 0] is the placed token's own cell; areas and directions leave it out",
        ],
    );
}

#[test]
fn offset_zero_zero_in_an_inline_area_is_reported_at_the_offset() {
    let packs = Packs::base().replace(
        BASE,
        "ability: push\n    area: row",
        "ability: push\n    area: [[1, 0], [0, 0]]",
    );
    check(
        &packs,
        &[
            "base/cards.yaml:37:20: error: offset [0, 0] is the placed token's own cell; areas and directions leave it out",
        ],
    );
}

#[test]
fn offset_with_three_numbers_is_reported() {
    let packs = Packs::base().replace(BASE, "[[-1, 0], [1, 0]]", "[[-1, 0], [1, 0, 2]]");
    check(
        &packs,
        &["base/cards.yaml:9:24: error: this list has 3 items, 1 more than expected"],
    );
}

// ---------------------------------------------------------------------------------------
// Cards, decks and rules.

#[test]
fn card_whose_ability_needs_an_area_but_has_none() {
    let packs = Packs::base().replace(
        BASE,
        "ability: weaken\n    area: row\n",
        "ability: weaken\n",
    );
    check(
        &packs,
        &[
            "base/cards.yaml:26:9: error: card 'weaken_row' has ability 'weaken' (damage), which needs an area; add `area:`",
        ],
    );
}

#[test]
fn deck_with_the_wrong_number_of_stacks() {
    let packs = Packs::base().replace(
        BASE,
        "      - [push_cross]\n",
        "      - [push_cross]\n      - [push_row]\n",
    );
    check(
        &packs,
        &["base/cards.yaml:48:7: error: deck 'starter' has 3 stacks; the rules want 2"],
    );
}

#[test]
fn deck_with_a_stack_too_big() {
    let packs = Packs::base().replace(
        BASE,
        "[weaken_row, boost]",
        "[weaken_row, boost, weaken_cross, push_row]",
    );
    check(
        &packs,
        &["base/cards.yaml:48:9: error: stack 1 of deck 'starter' has 4 cards; stacks hold 1 to 3"],
    );
}

#[test]
fn deck_with_a_card_twice() {
    let packs = Packs::base().replace(BASE, "[push_cross]", "[push_cross, boost]");
    check(
        &packs,
        &[
            "base/cards.yaml:49:22: error: card 'boost' is already in deck 'starter'; a card appears at most once in a deck",
        ],
    );
}

#[test]
fn board_out_of_range_reports_both_sides() {
    let packs = Packs::base().replace(BASE, "width: 4, height: 4", "width: 20, height: 20");
    check(
        &packs,
        &[
            "base/cards.yaml:2:19: error: board width must be from 1 to 16, found 20",
            "base/cards.yaml:2:31: error: board height must be from 1 to 16, found 20",
        ],
    );
}

#[test]
fn opening_token_errors_are_reported_at_their_values() {
    let packs = Packs::base().replace(
        BASE,
        "opening_token: null",
        "opening_token: { seat: 3, value: 2, cells: [[9, 9]] }",
    );
    check(
        &packs,
        &[
            "base/cards.yaml:6:26: error: seat must be 1 or 2, found 3",
            "base/cards.yaml:6:47: error: cell [9, 9] is off the 4×4 board",
        ],
    );
}

#[test]
fn every_rules_mistake_is_reported_without_a_cascade() {
    let packs = Packs::base()
        .replace(BASE, "width: 4,", "widht: 4,")
        .replace(BASE, "max: 3", "mx: 3");
    check(
        &packs,
        &[
            "base/cards.yaml:2:12: error: unknown field `widht` (did you mean `width`?); expected one of `width`, `height`",
            "base/cards.yaml:4:25: error: unknown field `mx` (did you mean `max`?); expected one of `min`, `max`",
        ],
    );
}

// ---------------------------------------------------------------------------------------
// Abilities and scripts.

#[test]
fn effect_parameter_that_does_not_apply_is_a_warning() {
    let packs = Packs::base().replace(BASE, "effect: push\n", "effect: push\n    amount: 2\n");
    check(
        &packs,
        &[
            "base/cards.yaml:25:13: warning: `amount` is ignored: effect `push` does not use it (it takes no parameters)",
        ],
    );
}

#[test]
fn area_on_a_card_without_ability_is_a_warning() {
    let packs = Packs::base().replace(BASE, "token: booster", "token: booster\n    area: row");
    check(
        &packs,
        &["base/cards.yaml:45:11: warning: area is ignored: card 'boost' has no ability"],
    );
}

#[test]
fn script_that_does_not_exist_is_reported() {
    let packs = Packs::base().with(
        "base/extra.yaml",
        "abilities:\n  - id: vortex\n    script: scripts/vortex.lua\n",
    );
    check(
        &packs,
        &[
            "base/extra.yaml:3:13: error: script file 'scripts/vortex.lua' was not found (looked for base/scripts/vortex.lua)",
        ],
    );
}

#[test]
fn script_outside_the_pack_is_reported() {
    let packs = Packs::base().with(
        "base/extra.yaml",
        "abilities:\n  - id: vortex\n    script: ../vortex.lua\n",
    );
    check(
        &packs,
        &[
            "base/extra.yaml:3:13: error: script path '../vortex.lua' must be relative and stay inside the pack folder",
        ],
    );
}

// ---------------------------------------------------------------------------------------
// All errors of a load together.

#[test]
fn several_errors_in_one_file_are_all_reported() {
    let packs = Packs::base().with(
        "base/extra.yaml",
        "\
cards:
  - id: one
    value: 1
    token: boster
  - id: two
    valeu: 1
  - id: three
    value: 2
    ability: weakn
    area: row
  - id: four
    value: 1
    ability: push
    area: { grid: \"x x x\" }
",
    );
    check(
        &packs,
        &[
            "base/extra.yaml:4:12: error: unknown token type 'boster' (did you mean 'booster'?)",
            "base/extra.yaml:6:5: error: unknown field `valeu` (did you mean `value`?); expected one of `id`, `name`, `value`, `token`, `ability`, `area`, `description`",
            "base/extra.yaml:9:14: error: unknown ability 'weakn' (did you mean 'weaken'?)",
            "base/extra.yaml:14:11: error: grid has no `o` marking the placed token",
        ],
    );
}

#[test]
fn errors_in_several_packs_are_all_reported() {
    let packs = Packs::base()
        .replace(BASE, "[push_cross]", "[push_crss]")
        .with("frost/pack.yaml", &manifest("frost", "{ id: base }"))
        .with(
            "frost/cards.yaml",
            "cards:\n  - id: chill\n    value: 1\n    token: basik\n",
        )
        .with("snow/pack.yaml", "id: snow\nversion: 1.x\n");
    check(
        &packs,
        &[
            "base/cards.yaml:49:10: error: unknown card 'push_crss' (did you mean 'push_cross'?)",
            "frost/cards.yaml:4:12: error: unknown token type 'basik' (did you mean 'basic'?)",
            "snow/pack.yaml:2:10: error: version '1.x' is not a semantic version like 1.2.0: unexpected character 'x' while parsing minor version number",
        ],
    );
}

// ---------------------------------------------------------------------------------------
// Patching semantics and conflicts between packs.

#[test]
fn unrelated_packs_setting_the_same_rule_warn() {
    // `aaa` requires nothing and sorts before `base`, so base's value wins by load order.
    let packs = Packs::base()
        .with("aaa/pack.yaml", &manifest("aaa", ""))
        .with("aaa/rules.yaml", "rules:\n  score_limit: 50\n");
    check(
        &packs,
        &[
            "base/cards.yaml:5:16: warning: rules.score_limit is also set by pack 'aaa' at aaa/rules.yaml:2:16, which pack 'base' does not require; this value, later in load order, wins",
        ],
    );
}

#[test]
fn a_pack_overriding_what_its_dependency_patched_does_not_warn() {
    let packs = Packs::base()
        .with("alpha/pack.yaml", &manifest("alpha", "{ id: base }"))
        .with(
            "alpha/cards.yaml",
            "rules:\n  score_limit: 50\ncards:\n  - id: base:boost\n    value: 2\n",
        )
        .with("beta/pack.yaml", &manifest("beta", "{ id: alpha }"))
        .with(
            "beta/cards.yaml",
            "rules:\n  score_limit: 70\ncards:\n  - id: base:boost\n    value: 3\n",
        );
    check(&packs, &[]);
}

#[test]
fn patching_a_grid_area_with_offsets_replaces_the_grid() {
    let packs = Packs::base()
        .with("alpha/pack.yaml", &manifest("alpha", "{ id: base }"))
        .with(
            "alpha/areas.yaml",
            "areas:\n  - id: base:cross\n    offsets: [[1, 0], [-1, 0]]\n",
        );
    check(&packs, &[]);
}

#[test]
fn patching_an_ability_effect_drops_the_old_parameters() {
    let packs = Packs::base()
        .with("alpha/pack.yaml", &manifest("alpha", "{ id: base }"))
        .with(
            "alpha/abilities.yaml",
            "abilities:\n  - id: base:weaken\n    effect: flip\n",
        );
    check(&packs, &[]);
}

#[test]
fn a_misspelt_qualified_name_suggests_the_qualified_name() {
    let packs = Packs::base().replace(
        BASE,
        "ability: push\n    area: cross",
        "ability: push\n    area: base:crss",
    );
    check(
        &packs,
        &["base/cards.yaml:41:11: error: unknown area 'base:crss' (did you mean 'base:cross'?)"],
    );
}

#[test]
fn a_deck_broken_by_another_packs_rule_names_that_pack() {
    let packs = Packs::base()
        .with("alpha/pack.yaml", &manifest("alpha", "{ id: base }"))
        .with("alpha/rules.yaml", "rules:\n  stacks: 3\n");
    check(
        &packs,
        &[
            "base/cards.yaml:48:7: error: deck 'starter' has 2 stacks; the rules want 3 (rules.stacks is set by pack 'alpha' at alpha/rules.yaml:2)",
        ],
    );
}

#[test]
fn decks_are_still_checked_when_the_rules_have_errors() {
    let packs = Packs::base()
        .replace(BASE, "width: 4,", "widht: 4,")
        .replace(BASE, "[push_cross]", "[push_crss]");
    check(
        &packs,
        &[
            "base/cards.yaml:2:12: error: unknown field `widht` (did you mean `width`?); expected one of `width`, `height`",
            "base/cards.yaml:49:10: error: unknown card 'push_crss' (did you mean 'push_cross'?)",
        ],
    );
}

#[test]
fn a_whole_number_beyond_the_fields_range_names_the_range_not_a_rounded_float() {
    check(
        &Packs::base().replace(BASE, "value: 3\n", "value: 18446744073709551616\n"),
        &[
            "base/cards.yaml:27:12: error: this whole number is out of range: it must be from -9223372036854775808 to 9223372036854775807",
        ],
    );
}

// ---------------------------------------------------------------------------------------
// What a newcomer trips on: plain words for structure, ids that exist elsewhere, files in
// the wrong place.

#[test]
fn a_misindented_line_is_named_with_its_column_and_the_entry_above() {
    check(
        &Packs::base().replace(
            BASE,
            "  - id: push_row\n    value: 2\n",
            "  - id: push_row\n     value: 2\n",
        ),
        &[
            "base/cards.yaml:35:6: error: YAML syntax: check the indentation of line 35 (it is at column 6; the entry above starts at column 5)",
        ],
    );
}

#[test]
fn unknown_names_after_an_unreadable_file_are_reported_once() {
    let packs = Packs::base()
        .with("base/zap.yaml", "abilities:\n  - id: zap\n    effect: damage\n     amount: 2\n")
        .with(
            "base/more.yaml",
            "cards:\n  - id: zap_row\n    value: 2\n    ability: zap\n    area: row\n  - id: zap_cross\n    value: 2\n    ability: zap\n    area: cross\n",
        );
    check(
        &packs,
        &[
            "base/more.yaml:4:14: error: unknown ability 'zap', perhaps because base/zap.yaml could not be read (see its error): fix that file first; other unknown ability names are not listed until then",
            "base/zap.yaml:4:6: error: YAML syntax: check the indentation of line 4 (it is at column 6; the entry above starts at column 5)",
        ],
    );
}

#[test]
fn an_id_of_a_pack_not_required_is_named_with_the_pack_and_requires() {
    let packs = Packs::base()
        .with("other/pack.yaml", &manifest("other", "{ id: base }"))
        .with(
            "other/cards.yaml",
            "cards:\n  - id: zapper\n    value: 2\n    ability: weaken\n    area: row\n",
        )
        .with("mine/pack.yaml", &manifest("mine", "{ id: base }"))
        .with(
            "mine/decks.yaml",
            "decks:\n  - id: mine\n    stacks: [[zapper, boost], [push_cross, push_row]]\n",
        );
    check(
        &packs,
        &[
            "mine/decks.yaml:3:15: error: unknown card 'zapper' in pack 'mine': pack 'other' has a card 'zapper', but 'mine' does not require 'other'; add `- { id: other }` to `requires` (mine/pack.yaml:4)",
        ],
    );
}

#[test]
fn an_effect_named_as_an_ability_lists_the_abilities_that_use_it() {
    check(
        &Packs::base().replace(
            BASE,
            "    value: 3\n    ability: weaken\n",
            "    value: 3\n    ability: damage\n",
        ),
        &[
            "base/cards.yaml:28:14: error: 'damage' is an effect, not an ability: name an ability here (abilities that use it: 'weaken'), or define one with `effect: damage` in `abilities:`",
        ],
    );
}

#[test]
fn a_manifest_named_pack_yml_is_named_as_such() {
    for name in ["pack.yml", "Pack.yaml"] {
        let packs = Packs::base()
            .with(&format!("other/{name}"), &manifest("other", "{ id: base }"))
            .with("other/cards.yaml", "cards: []\n");
        let expected = format!(
            "other/{name}:1:1: warning: a pack's manifest must be named `pack.yaml`, not `{name}`: rename it, and this folder loads as a pack"
        );
        check(&packs, &[expected.as_str()]);
    }
}

#[test]
fn a_scenario_saved_in_a_pack_is_recognised_and_left_out() {
    let packs = Packs::base().with(
        "base/regression.yaml",
        "name: a bug\nrules: { score_limit: 5 }\nmoves:\n  - { seat: 1, card: weaken_row, at: [0, 0] }\nexpect:\n  next: 2\n",
    );
    check(
        &packs,
        &[
            "base/regression.yaml:3:1: warning: this is a scenario (it has `moves:`), not content, so the pack does not read it: run it with `tokensmith scenario base/regression.yaml`, and keep scenarios outside pack folders (e.g. in tests/scenarios/)",
        ],
    );
}

#[test]
fn a_scripted_ability_reading_its_area_on_a_card_without_one_is_a_warning() {
    let packs = Packs::base()
        .with("base/scripts/zap.lua", "return {\n  on_place = function(ctx)\n    -- every target\n    for _, c in ipairs(ctx:targets()) do ctx:damage(c.x, c.y, 1) end\n  end\n}\n")
        .with(
            "base/zap.yaml",
            "abilities:\n  - id: zap\n    script: scripts/zap.lua\ncards:\n  - id: zap_card\n    value: 2\n    ability: zap\n  - id: zap_row\n    value: 2\n    ability: zap\n    area: row\n",
        );
    check(
        &packs,
        &[
            "base/zap.yaml:5:9: warning: card 'zap_card' has no area, but the script of its ability 'zap' reads one (base/scripts/zap.lua:4 calls `ctx:targets`), which is then empty; add `area:`",
        ],
    );
}

#[test]
fn the_yaml_readers_words_become_the_designers() {
    let deep = format!("cards: {}{}\n", "[".repeat(300), "]".repeat(300));
    let mut bomb = String::from("a0: &a0 [x, x]\n");
    for i in 1..30 {
        let p = i - 1;
        bomb.push_str(&format!("a{i}: &a{i} [*a{p}, *a{p}, *a{p}, *a{p}]\n"));
    }
    let cases: Vec<(String, &str)> = vec![
        (
            "cards:\n  - id: c\0x\n    value: 2\n".to_string(),
            "base/more.yaml:2:10: error: YAML syntax: a NUL byte (U+0000) cannot appear in YAML here; remove it (is this a text file?)",
        ),
        (
            "cards:\n  - id: c1\n    value: !!int two\n".to_string(),
            "base/more.yaml:3:18: error: YAML syntax: a tag here asks for a whole number, but the value is `two`; remove the `!!` tag or write a whole number",
        ),
        (
            deep,
            "base/more.yaml:1:263: error: YAML syntax: lists and mappings nest deeper than the YAML reader allows; content never needs that many levels: flatten it",
        ),
        (
            bomb,
            "base/more.yaml:9:25: error: YAML syntax: this file expands to more values than the YAML reader allows (through `&anchor` and `*alias` repeats, or sheer size); write the entries out plainly or split the file",
        ),
    ];
    for (text, wanted) in cases {
        check(&Packs::base().with("base/more.yaml", &text), &[wanted]);
    }
    check(
        &Packs::base()
            .with(
                "big/pack.yaml",
                &manifest("big", "{ id: base, version: \"^99999999999999999999\" }"),
            )
            .with("big/cards.yaml", "cards: []\n"),
        &[
            "big/pack.yaml:4:33: error: version requirement '^99999999999999999999' is not valid semver (e.g. ^1.2): the major version number is larger than any version number can be (at most 18446744073709551615)",
        ],
    );
}

#[test]
fn a_one_number_version_says_what_to_write() {
    let packs = Packs::base().replace("base/pack.yaml", "1.0.0", "\"2\"");
    check(
        &packs,
        &[
            "base/pack.yaml:3:10: error: version '2' needs three numbers, major.minor.patch: write 2.0.0",
        ],
    );
}

#[test]
fn an_area_on_an_ability_says_areas_belong_on_the_card() {
    let packs = Packs::base().replace(
        BASE,
        "    effect: damage\n    amount: 1\n",
        "    effect: damage\n    amount: 1\n    area: row\n",
    );
    check(
        &packs,
        &[
            "base/cards.yaml:23:5: error: unknown field `area`: an ability has no area; areas belong on the card: give `area:` to each card that uses this ability",
        ],
    );
}

#[test]
fn an_ability_of_a_pack_not_required_reads_an_ability() {
    let packs = Packs::base()
        .with("other/pack.yaml", &manifest("other", "{ id: base }"))
        .with(
            "other/abilities.yaml",
            "abilities:\n  - id: zap\n    effect: damage\n    amount: 2\n",
        )
        .with("mine/pack.yaml", &manifest("mine", "{ id: base }"))
        .with(
            "mine/cards.yaml",
            "cards:\n  - id: zapper\n    value: 2\n    ability: zap\n    area: base:row\n",
        );
    check(
        &packs,
        &[
            "mine/cards.yaml:4:14: error: unknown ability 'zap' in pack 'mine': pack 'other' has an ability 'zap', but 'mine' does not require 'other'; add `- { id: other }` to `requires` (mine/pack.yaml:4)",
        ],
    );
}

#[test]
fn a_card_with_no_type_and_no_basic_type_names_the_types_there_are() {
    let packs = Packs::base()
        .replace(BASE, "  - id: basic\n", "  - id: plain\n")
        .replace(
            BASE,
            "  - id: weaken_row\n    value: 3\n",
            "  - id: weaken_row\n    value: 3\n    token: plain\n",
        )
        .replace(
            BASE,
            "  - id: weaken_cross\n    value: 2\n",
            "  - id: weaken_cross\n    value: 2\n    token: plain\n",
        )
        .replace(
            BASE,
            "  - id: push_row\n    value: 2\n",
            "  - id: push_row\n    value: 2\n    token: plain\n",
        );
    check(
        &packs,
        &[
            "base/cards.yaml:41:9: error: card 'push_cross' has no type, and there is no 'basic' token type to default to: give it one with `token: ID` (the token types it can use: 'plain', 'booster')",
        ],
    );
}

#[test]
fn a_missing_content_folder_names_the_content_option() {
    let dir = tempfile::tempdir().expect("tmp");
    let missing = dir.path().join("nowhere");
    let loaded = tokensmith::content::load(&tokensmith::content::LoadOptions {
        folders: vec![tokensmith::content::PackFolder {
            path: missing.clone(),
            required: true,
        }],
        ..tokensmith::content::LoadOptions::default()
    });
    let text: Vec<String> = loaded
        .diagnostics
        .iter()
        .map(|d| {
            d.to_string()
                .replace(&format!("{}", missing.display()), "nowhere")
        })
        .collect();
    assert_eq!(
        text,
        [
            "nowhere:1:1: error: this folder does not exist; give the folder that holds your packs (the base content's is `--content DIR`, default `content`, relative to the folder you run tokensmith from)"
        ]
    );
}
