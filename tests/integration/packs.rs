//! Every shipped pack loads with zero diagnostics, alone and all together.

use crate::support::{load_folders, root};

#[test]
fn all_shipped_packs_load_cleanly_together() {
    let loaded = load_folders(&[root().join("content"), root().join("mods")], None);
    assert!(loaded.diagnostics.is_empty(), "{:#?}", loaded.diagnostics);
    let catalog = loaded.catalog.expect("a catalog");
    let ids: Vec<&str> = catalog.packs().iter().map(|p| p.id.as_str()).collect();
    assert_eq!(ids.first(), Some(&"base"), "base loads first: {ids:?}");
}

#[test]
fn each_mod_loads_cleanly_with_only_what_it_requires() {
    let mods = root().join("mods");
    for entry in std::fs::read_dir(&mods)
        .expect("mods exists")
        .filter_map(Result::ok)
    {
        let id = entry.file_name().to_string_lossy().into_owned();
        if !entry.path().join("pack.yaml").is_file() {
            continue;
        }
        let loaded = load_folders(
            &[root().join("content"), mods.clone()],
            Some(&[id.as_str()]),
        );
        assert!(
            loaded.diagnostics.is_empty(),
            "{id}: {:#?}",
            loaded.diagnostics
        );
        assert!(loaded.catalog.is_some(), "{id} gives a catalog");
    }
}

#[test]
fn test_packs_load_cleanly() {
    let loaded = load_folders(&[root().join("content"), root().join("tests/packs")], None);
    assert!(loaded.diagnostics.is_empty(), "{:#?}", loaded.diagnostics);
}

#[test]
fn base_pack_has_every_classic_card_and_three_decks_using_everything() {
    let catalog = crate::support::base_catalog();
    assert!(catalog.decks().len() >= 3);
    let mut abilities = std::collections::HashSet::new();
    let mut types = std::collections::HashSet::new();
    for deck in catalog.decks() {
        for card in deck.stacks.iter().flatten() {
            let def = catalog.card(*card);
            types.insert(def.token);
            if let Some(a) = def.ability {
                abilities.insert(a);
            }
        }
    }
    assert_eq!(
        abilities.len(),
        catalog.abilities().len(),
        "decks use every ability"
    );
    // `golden` is only ever made by transforming, so no card places it.
    let placed_or_made = types.len() + 1;
    assert!(
        placed_or_made >= catalog.token_types().len(),
        "decks use every token type"
    );
    // docs/rules.md's classic table: 7 + 7 + 7 + 4 + 2 + 1 + 1 + 2 + 1 + 1 + 1 + 5 cards.
    assert_eq!(catalog.cards().len(), 39);
}
