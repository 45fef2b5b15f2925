//! Live reload: watch the pack folders, rebuild the catalog on a worker thread after each
//! burst of saves, and report every attempt — a clean catalog to hand over, or the
//! diagnostics that keep the last good one running.
//!
//! What the watcher really reports (and what this module does about it):
//! - one save gives several raw events: they are debounced (`notify-debouncer-full`) and
//!   every burst becomes one reload;
//! - an atomic save (temp file + rename) arrives as a `Create` of the target, a vim-style
//!   save as `Create` + `Remove` of `file~`: any create, change or removal of a YAML or
//!   Lua file reloads, and temp, swap and backup names never do;
//! - a pack folder created while running: its `Create` reloads, and the load reads the
//!   folder as it is then, so files written just after it are not missed.
//!
//! Reloading is a whole new load (`script::load`): packs, patches and scripts are checked
//! together, exactly as at start-up. This layer knows nothing of the UI; it takes a
//! callback to wake whoever waits for reloads.
//!
//! `validate --watch` and the client both use the [`Watcher`].

mod diff;

use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver, Sender};
use std::time::{Duration, Instant};

use notify_debouncer_full::notify::{EventKind, RecursiveMode};
use notify_debouncer_full::{DebounceEventResult, new_debouncer};

use crate::content::{LoadOptions, Loaded};

pub use diff::{Change, ChangeKind, FieldChange, diff};

/// The debounce used by default: editor save bursts arrive within a few milliseconds.
pub const DEBOUNCE: Duration = Duration::from_millis(50);

/// One reload attempt.
#[derive(Debug)]
pub struct Reload {
    /// The load's result: a catalog only when clean, and every diagnostic.
    pub loaded: Loaded,
    /// The files whose changes caused it.
    pub paths: Vec<PathBuf>,
    /// When the first change of the burst was seen by the watcher.
    pub seen: Instant,
    /// How long the load itself took.
    pub took: Duration,
}

impl Reload {
    /// The one-line summary `validate --watch` prints: `reloaded in 12 ms: 2 packs, 48
    /// cards, 0 errors, 0 warnings` or `error in 9 ms: 2 packs, 1 error, 0 warnings; …`.
    #[must_use]
    pub fn summary(&self) -> String {
        let ms = self.took.as_millis();
        match &self.loaded.catalog {
            Some(_) => format!("reloaded in {ms} ms: {}", self.loaded.summary()),
            None => format!(
                "error in {ms} ms: {}; the last good content stays",
                self.loaded.summary()
            ),
        }
    }
}

/// A running watcher: drop it to stop watching.
pub struct Watcher {
    // Kept alive for its thread; dropping it stops the watch.
    _debouncer: Box<dyn std::any::Any + Send>,
    reloads: Receiver<Reload>,
    /// The folders watched.
    pub folders: Vec<PathBuf>,
    /// Folders to watch that did not exist when watching began (not watched).
    pub missing: Vec<PathBuf>,
}

/// Why watching could not start. Callers match on the kind; `Display` gives the text.
#[derive(Debug, thiserror::Error)]
pub enum WatchError {
    /// The system's file watcher could not be set up at all.
    #[error("cannot watch the pack folders: {0}")]
    Unavailable(#[source] notify_debouncer_full::notify::Error),
    /// One folder could not be watched.
    #[error("cannot watch {}: {source}", crate::fsutil::shown(path))]
    Folder {
        /// The folder.
        path: PathBuf,
        /// What the system said.
        #[source]
        source: notify_debouncer_full::notify::Error,
    },
    /// The thread that reloads could not be started.
    #[error("cannot start the reload thread: {0}")]
    Thread(#[source] std::io::Error),
}

impl Watcher {
    /// Watch every folder of `options` recursively, reloading after each burst of
    /// changes quieter than `debounce`; `wake` is called after each reload is ready.
    pub fn start(
        options: LoadOptions,
        debounce: Duration,
        wake: impl Fn() + Send + 'static,
    ) -> Result<Watcher, WatchError> {
        let (burst_tx, burst_rx) = mpsc::channel::<(Vec<PathBuf>, Instant)>();
        let (reload_tx, reload_rx) = mpsc::channel::<Reload>();
        // Events name files by absolute paths: match them against every spelling of the
        // roots (as given, absolute, canonical).
        let mut roots: Vec<PathBuf> = Vec::new();
        for f in &options.folders {
            roots.push(f.path.clone());
            if let Ok(p) = std::path::absolute(&f.path) {
                roots.push(p);
            }
            if let Ok(p) = std::fs::canonicalize(&f.path) {
                roots.push(p);
            }
        }
        let mut debouncer = new_debouncer(debounce, None, move |result: DebounceEventResult| {
            let Ok(events) = result else {
                // Watch errors (a folder gone): the next change reloads anyway.
                return;
            };
            let mut paths = Vec::new();
            let mut first = None;
            for e in &events {
                if matches!(e.kind, EventKind::Access(_)) {
                    continue;
                }
                for p in &e.paths {
                    // Outside every root (a spelling not foreseen): judge the name alone.
                    let inside = roots
                        .iter()
                        .find_map(|r| p.strip_prefix(r).ok().map(Path::to_path_buf))
                        .or_else(|| p.file_name().map(PathBuf::from));
                    if inside.is_some_and(|rel| relevant(&rel, &e.kind)) {
                        paths.push(p.clone());
                        first = Some(first.map_or(e.time, |t: Instant| t.min(e.time)));
                    }
                }
            }
            if let Some(seen) = first {
                paths.sort();
                paths.dedup();
                let _ = burst_tx.send((paths, seen));
            }
        })
        .map_err(WatchError::Unavailable)?;
        let (mut folders, mut missing) = (Vec::new(), Vec::new());
        for folder in &options.folders {
            if folder.path.is_dir() {
                debouncer
                    .watch(&folder.path, RecursiveMode::Recursive)
                    .map_err(|source| WatchError::Folder {
                        path: folder.path.clone(),
                        source,
                    })?;
                folders.push(folder.path.clone());
            } else {
                missing.push(folder.path.clone());
            }
        }
        crate::script::threads::spawn("tokensmith-reload", move || {
            worker(&options, &burst_rx, &reload_tx, &wake)
        })
        .map_err(WatchError::Thread)?;
        Ok(Watcher {
            _debouncer: Box::new(debouncer),
            reloads: reload_rx,
            folders,
            missing,
        })
    }

    /// The newest reload since the last call, if any (older ones are superseded).
    #[must_use]
    pub fn latest(&self) -> Option<Reload> {
        self.reloads.try_iter().last()
    }

    /// Wait up to `timeout` for the next reload.
    #[must_use]
    pub fn wait(&self, timeout: Duration) -> Option<Reload> {
        self.reloads.recv_timeout(timeout).ok()
    }
}

/// Load again after each burst; bursts that queued up meanwhile make one load.
fn worker(
    options: &LoadOptions,
    bursts: &Receiver<(Vec<PathBuf>, Instant)>,
    reloads: &Sender<Reload>,
    wake: &dyn Fn(),
) {
    while let Ok((mut paths, mut seen)) = bursts.recv() {
        for (more, t) in bursts.try_iter() {
            paths.extend(more);
            seen = seen.min(t);
        }
        paths.sort();
        paths.dedup();
        let started = Instant::now();
        let loaded = crate::script::load(options);
        let reload = Reload {
            loaded,
            paths,
            seen,
            took: started.elapsed(),
        };
        if reloads.send(reload).is_err() {
            return;
        }
        wake();
    }
}

/// Whether a change to `path` (relative to a watched folder) can change the content: a
/// YAML or Lua file, or a folder (a pack created, renamed or removed); never a temp,
/// swap, backup or hidden file, nor anything in a hidden folder.
#[must_use]
pub fn relevant(path: &Path, kind: &EventKind) -> bool {
    let hidden = path.components().any(|c| {
        let s = c.as_os_str().to_string_lossy();
        s.starts_with('.') && s != "." && s != ".."
    });
    let Some(name) = path.file_name().map(|n| n.to_string_lossy()) else {
        return false;
    };
    if hidden || name.starts_with('#') || name.ends_with('~') || name == "4913" {
        return false;
    }
    match path.extension().map(|e| e.to_string_lossy().to_lowercase()) {
        Some(ext) => matches!(ext.as_str(), "yaml" | "yml" | "lua"),
        // A folder: created (a new pack), removed or renamed.
        None => matches!(
            kind,
            EventKind::Create(_) | EventKind::Remove(_) | EventKind::Modify(_)
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use notify_debouncer_full::notify::event::{CreateKind, ModifyKind};

    #[test]
    fn only_content_files_and_folders_reload() {
        let create = EventKind::Create(CreateKind::File);
        let modify = EventKind::Modify(ModifyKind::Any);
        for yes in [
            "mods/frost/cards.yaml",
            "mods/a/scripts/x.lua",
            "content/base/r.YML",
        ] {
            assert!(relevant(Path::new(yes), &modify), "{yes}");
        }
        assert!(
            relevant(Path::new("mods/new_pack"), &create),
            "a new folder"
        );
        for no in [
            "mods/frost/cards.yaml~",
            "mods/frost/.cards.yaml.swp",
            "mods/frost/.#cards.yaml",
            "mods/frost/#cards.yaml#",
            "mods/frost/4913",
            "mods/.git/index",
            "mods/frost/notes.txt",
            "mods/frost/cards.yaml.tmp",
        ] {
            assert!(!relevant(Path::new(no), &create), "{no}");
        }
    }
}
