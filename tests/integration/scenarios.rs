//! The scenario runner itself (each file under `tests/scenarios/` is its own test in
//! `tests/scenarios.rs`): expectations it cannot check fail instead of being skipped.

use tokensmith::scenario::{self, Outcome, PackPaths};

use crate::support::{TempPacks, root};

fn run(text: &str) -> Outcome {
    let dir = TempPacks::new(&[("s.yaml", text)]);
    let paths = PackPaths {
        content: root().join("content"),
        mods: root().join("mods"),
    };
    match scenario::run_file(&dir.path().join("s.yaml"), &paths) {
        Ok(run) => run.outcome,
        Err(e) => panic!("the scenario should run: {:?}", e.diagnostics),
    }
}

#[test]
fn an_expectation_for_a_seat_that_does_not_exist_fails() {
    for expect in ["scores: { 1: 0, 3: 0 }", "income: { 0: 0 }"] {
        let outcome = run(&format!(
            "name: a seat that does not exist\nrules: {{ opening_token: null }}\nexpect:\n  {expect}\n"
        ));
        match outcome {
            Outcome::Fail(report) => assert!(
                report.contains("there is no seat"),
                "{expect}: the report should name the seat: {report}"
            ),
            Outcome::Pass => panic!("{expect}: a scenario expecting a missing seat passed"),
        }
    }
}
