//! The client's Balance screen, driven through its accessibility labels: a card judged on
//! a worker thread (the verdict, the pairs and the saving), a tuning followed on the live
//! chart and stopped, and a race of two variants ranked.

use egui_kittest::kittest::Queryable as _;
use tokensmith::app::{App, Library};

use crate::balance_science::{PROBE, probe_options};
use crate::client::{harness_for, run_until};
use crate::support::TempPacks;

#[test]
fn the_balance_screen_judges_follows_and_stops_a_tuning_and_races_variants() {
    let packs = TempPacks::new(&PROBE);
    let mut h = harness_for(App::new(Library::load(probe_options(&packs))));
    h.run();
    h.get_by_label("Balance").click();
    h.run();
    assert!(h.query_by_label("Pick a card on the left.").is_some());
    h.get_by_label("search cards").click();
    h.run();
    h.get_by_label("search cards").type_text("plain_nine");
    h.run();
    h.get_by_label_contains("(9)").click();
    h.run();
    h.get_by_label("Judge").click();
    h.step();
    h.step();
    assert!(
        h.query_by_label("Stop").is_some()
            || h.query_by_label_contains("points (95% interval").is_some(),
        "the test runs on its worker, the screen stays live"
    );
    run_until(&mut h, "the verdict", |h| {
        h.query_by_label_contains("points (95% interval").is_some()
    });
    // A plain nine against a plain card of nine's value made for the test: no effect
    // beyond its value, decided before the cap.
    assert!(
        h.query_by_label_contains("pairs: win rate").is_some()
            && h.query_by_label("within noise").is_some(),
        "the verdict, its interval and the pairs"
    );
    assert!(h.query_by_label_contains("Decided after").is_some());
    assert!(h.query_by_label("Judge").is_some(), "ready for another run");

    h.get_by_label("Tune: what value is fair?").click();
    h.run();
    assert!(
        h.query_by_label("(now 9)").is_some(),
        "the current value is shown"
    );
    h.get_by_label("Tune").click();
    run_until(&mut h, "the first value on the chart", |h| {
        h.query_by_label_contains("chart of effect against value: ")
            .is_some()
    });
    h.get_by_label("Stop").click();
    h.step();
    h.run();
    assert!(
        h.query_by_label_contains("Stopped after").is_some(),
        "Stop says so at once"
    );
    assert!(h.query_by_label("Tune").is_some(), "ready again");

    // A race of two variants of plain_four: at its copy's value, and far too strong.
    let file = packs.path().join("variants.yaml");
    std::fs::write(
        &file,
        "variants:\n  - name: fair copy\n    cards:\n      - { id: probe:plain_four, value: 2 }\n  - name: far too strong\n    cards:\n      - { id: probe:plain_four, value: 15 }\n",
    )
    .expect("write the variants");
    let mut h = harness_for(App::new(Library::load(probe_options(&packs))));
    h.run();
    h.get_by_label("Balance").click();
    h.run();
    h.get_by_label("search cards").click();
    h.run();
    h.get_by_label("search cards").type_text("plain_four");
    h.run();
    h.get_by_label_contains("(4)").click();
    h.run();
    h.get_by_label("Race: which variant is fairest?").click();
    h.run();
    h.get_by_label("Variants file").click();
    h.run();
    h.get_by_label("Variants file")
        .type_text(&file.to_string_lossy());
    h.run();
    h.get_by_label("Race").click();
    h.step();
    run_until(&mut h, "the ranking", |h| {
        h.query_by_label_contains("variants raced against")
            .is_some()
            || h.query_by_label_contains("Stopped").is_some()
    });
    assert!(
        h.query_by_label_contains("2 variants raced against")
            .is_some(),
        "the race's summary"
    );
    for name in ["fair copy", "far too strong"] {
        assert!(h.query_by_label(name).is_some(), "{name} is ranked");
    }
}
