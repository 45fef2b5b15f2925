//! The editor definitions (`tokensmith api --luals`) with a real checker, EmmyLua's
//! `emmylua_check` (`cargo install emmylua_check`): the shipped example scripts get no
//! warning, and a script with a misspelt ctx method and token field gets both flagged.
//! Skipped, saying so, where the checker is not installed (`.ci/run` installs it when
//! `TOKENSMITH_EDITOR_CHECK=1`).

use std::path::{Path, PathBuf};
use std::process::Command;

fn checker() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .chain(std::env::var_os("CARGO_HOME").map(|h| PathBuf::from(h).join("bin")))
        .map(|dir| dir.join("emmylua_check"))
        .find(|p| p.is_file())
}

fn workspace(scripts: &[PathBuf]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let api = tokensmith::script::api::describe();
    std::fs::write(
        dir.path().join(tokensmith::script::luals::FILE),
        tokensmith::script::luals::definitions(&api),
    )
    .unwrap();
    for (i, s) in scripts.iter().enumerate() {
        let name = format!("{i}_{}", s.file_name().unwrap().to_string_lossy());
        std::fs::copy(s, dir.path().join(name)).unwrap();
    }
    dir
}

fn check(checker: &Path, dir: &Path) -> String {
    let out = Command::new(checker).arg(dir).output().unwrap();
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[test]
fn a_real_checker_accepts_the_shipped_scripts_and_flags_misspelt_names() {
    let Some(checker) = checker() else {
        eprintln!("emmylua_check is not installed: the editor definitions check is skipped");
        return;
    };
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut shipped = Vec::new();
    for pack in ["mods/example_scripted/scripts"] {
        for entry in std::fs::read_dir(root.join(pack))
            .into_iter()
            .flatten()
            .flatten()
        {
            if entry.path().extension().is_some_and(|e| e == "lua") {
                shipped.push(entry.path());
            }
        }
    }
    assert!(shipped.len() >= 5, "{shipped:?}");
    let dir = workspace(&shipped);
    let report = check(&checker, dir.path());
    assert!(report.contains("No issues found"), "{report}");

    let dir = workspace(&[root.join("tests/fixtures/editor/wrong.lua")]);
    let report = check(&checker, dir.path());
    assert!(report.contains("Undefined field `damge`"), "{report}");
    assert!(report.contains("Undefined field `valeu`"), "{report}");
}
