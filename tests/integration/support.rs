//! Helpers shared by the test modules.

use std::path::{Path, PathBuf};

use tokensmith::content::{self, LoadOptions, Loaded, PackFolder};
use tokensmith::rules::Catalog;

/// Copy the folder `from` into `to` (created), files and subfolders.
pub fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap_or_else(|e| panic!("create {}: {e}", to.display()));
    for entry in std::fs::read_dir(from).unwrap_or_else(|e| panic!("{}: {e}", from.display())) {
        let path = entry.unwrap_or_else(|e| panic!("{e}")).path();
        let target = to.join(path.file_name().unwrap_or_default());
        if path.is_dir() {
            copy_tree(&path, &target);
        } else {
            std::fs::copy(&path, &target)
                .unwrap_or_else(|e| panic!("copy {}: {e}", path.display()));
        }
    }
}

/// The repository root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Load the shipped base pack alone.
pub fn base_catalog() -> Catalog {
    let loaded = load_folders(&[root().join("content")], Some(&["base"]));
    assert!(
        loaded.diagnostics.is_empty(),
        "base pack diagnostics: {:#?}",
        loaded.diagnostics
    );
    loaded.catalog.expect("the base pack loads")
}

/// Load the packs in these folders (all of them, or only these ids and what they require).
pub fn load_folders(folders: &[PathBuf], only: Option<&[&str]>) -> Loaded {
    content::load(&LoadOptions {
        folders: folders
            .iter()
            .map(|p| PackFolder {
                path: p.clone(),
                required: true,
            })
            .collect(),
        only: only.map(|ids| ids.iter().map(|s| (*s).to_string()).collect()),
        rules_patch: None,
        order: Vec::new(),
    })
}

/// Load base from the repository's `content/` and every pack in `dir`, compiling scripts.
pub fn load_with_scripts(dir: &Path) -> Loaded {
    tokensmith::script::load(&LoadOptions {
        folders: vec![
            PackFolder {
                path: root().join("content"),
                required: true,
            },
            PackFolder {
                path: dir.to_path_buf(),
                required: true,
            },
        ],
        only: None,
        rules_patch: None,
        order: Vec::new(),
    })
}

/// A folder of packs written from `(relative path, text)` pairs, deleted on drop.
pub struct TempPacks {
    dir: tempfile::TempDir,
}

impl TempPacks {
    /// Write the files into a fresh temporary folder.
    pub fn new(files: &[(&str, &str)]) -> TempPacks {
        let dir = tempfile::tempdir().expect("a temporary folder");
        for (rel, text) in files {
            let path = dir.path().join(rel);
            std::fs::create_dir_all(path.parent().expect("a parent")).expect("create folders");
            std::fs::write(&path, text).expect("write a file");
        }
        TempPacks { dir }
    }

    /// The folder.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Load every pack in the folder and the diagnostics as `path:line:col: severity: message`
    /// lines, paths relative to the folder.
    pub fn diagnostics(&self) -> Vec<String> {
        self.relative(&load_folders(&[self.path().to_path_buf()], None))
    }

    /// A load's diagnostics as `path:line:col: severity: message`, paths relative to this
    /// folder.
    pub fn relative(&self, loaded: &Loaded) -> Vec<String> {
        loaded
            .diagnostics
            .iter()
            .map(|d| {
                let rel = d.path.strip_prefix(self.path()).unwrap_or(&d.path);
                format!(
                    "{}:{}:{}: {}: {}",
                    rel.display(),
                    d.line,
                    d.column,
                    d.severity,
                    d.message
                )
            })
            .collect()
    }
}

/// The `tokensmith` binary, ready to run from the repository root with a profile of its
/// own: the one its arguments name with `--profile`, else a fresh temporary folder that
/// lives as long as this value. Every test runs the binary through it, so no test reads
/// or writes the real profile (installed packs, decks, the enabled set).
pub struct Tokensmith {
    command: std::process::Command,
    _profile: Option<tempfile::TempDir>,
}

/// The binary with these arguments (more may be added through `Command`'s methods).
pub fn tokensmith<I, S>(args: I) -> Tokensmith
where
    I: IntoIterator<Item = S>,
    S: AsRef<std::ffi::OsStr>,
{
    let args: Vec<std::ffi::OsString> = args
        .into_iter()
        .map(|a| a.as_ref().to_os_string())
        .collect();
    let names_profile = args.iter().any(|a| {
        a.to_str()
            .is_some_and(|a| a == "--profile" || a.starts_with("--profile="))
    });
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_tokensmith"));
    command.current_dir(root());
    let profile = if names_profile {
        None
    } else {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("a temporary profile: {e}"));
        command.arg("--profile").arg(dir.path());
        Some(dir)
    };
    command.args(args);
    Tokensmith {
        command,
        _profile: profile,
    }
}

impl std::ops::Deref for Tokensmith {
    type Target = std::process::Command;
    fn deref(&self) -> &std::process::Command {
        &self.command
    }
}

impl std::ops::DerefMut for Tokensmith {
    fn deref_mut(&mut self) -> &mut std::process::Command {
        &mut self.command
    }
}

/// The files of a scripted test pack `id` requiring base: for each `(name, lua)`, an
/// ability `name` running `scripts/name.lua` and a card `name` (value 1, area `cross`)
/// with it. `manifest` is appended to its `pack.yaml`, `content` to its content file.
pub fn scripted_pack(
    id: &str,
    manifest: &str,
    content: &str,
    scripts: &[(&str, &str)],
) -> Vec<(String, String)> {
    let mut files = vec![(
        format!("{id}/pack.yaml"),
        format!(
            "id: {id}\nname: {id}\nversion: 1.0.0\nrequires:\n  - {{ id: base, version: \"^1\" }}\n{manifest}"
        ),
    )];
    let mut text = String::from("abilities:\n");
    for (name, _) in scripts {
        text.push_str(&format!("  - id: {name}\n    script: scripts/{name}.lua\n"));
    }
    text.push_str("cards:\n");
    for (name, _) in scripts {
        text.push_str(&format!(
            "  - id: {name}\n    value: 1\n    ability: {name}\n    area: cross\n"
        ));
    }
    text.push_str(content);
    files.push((format!("{id}/content.yaml"), text));
    for (name, lua) in scripts {
        files.push((format!("{id}/scripts/{name}.lua"), (*lua).to_string()));
    }
    files
}

/// [`TempPacks::new`] of owned `(relative path, text)` pairs.
pub fn temp(files: &[(String, String)]) -> TempPacks {
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    TempPacks::new(&refs)
}

/// A loaded catalog (scripts read) and the folder its packs are in (kept until dropped).
pub struct Fixture {
    _dir: TempPacks,
    pub catalog: Catalog,
}

/// Write `files` and load them; panics with the diagnostics when they do not load.
pub fn fixture(files: &[(String, String)]) -> Fixture {
    let dir = temp(files);
    let loaded = load_with_scripts(dir.path());
    let catalog = loaded.catalog.unwrap_or_else(|| {
        panic!(
            "the test packs should load: {:#?}",
            loaded
                .diagnostics
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
        )
    });
    Fixture { _dir: dir, catalog }
}

/// Point a program the tests run (a browser, a language server) at a home and data
/// folders of its own under `dir`: whatever it keeps (settings, logs, caches) stays out of
/// the user's home.
pub fn private_home(command: &mut std::process::Command, dir: &Path) {
    command
        .env("HOME", dir)
        .env("XDG_CONFIG_HOME", dir.join("config"))
        .env("XDG_DATA_HOME", dir.join("data"))
        .env("XDG_CACHE_HOME", dir.join("cache"))
        .env("XDG_STATE_HOME", dir.join("state"));
}
