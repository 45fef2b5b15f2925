//! The profile lock: one file, `PROFILE/.lock`, locked by the command line's commands
//! that read or change the profile's packs, pack set or decks, and by every install or
//! removal through `packs::Store` (whoever makes it).
//!
//! - [`Access::Read`] is shared: any number of readers at once (the client and a
//!   `pack list` coexist).
//! - [`Access::Write`] is exclusive: installs, removes, recovery of an interrupted
//!   install, changes to `packs.yaml` and to decks. A writer waits for readers and other
//!   writers, up to a bounded time ([`wait`]), then gives up with a message naming the
//!   profile and what to do; nothing is changed then.
//!
//! The lock is the operating system's advisory file lock (`flock` on Unix, `LockFileEx`
//! on Windows), released when the holder ends, even when it is killed: a crash never
//! leaves the profile locked.
//!
//! Within one thread the lock nests: a second `acquire` of a profile the thread already
//! holds for writing (or for reading, when reading is asked) shares the held lock instead
//! of waiting for itself, so a function that changes the profile can take the lock
//! whoever calls it (a command that holds it already, or the client). The operating
//! system's lock is released when the thread's last holder lets go. Other threads open
//! the lock file anew and wait like another process would.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

/// The profiles this process's threads hold locked: the thread and the folder (as `key`
/// gives it), the open lock file, what it was taken for and how many holders share it.
static HELD: Mutex<Vec<Held>> = Mutex::new(Vec::new());

struct Held {
    key: (std::thread::ThreadId, PathBuf),
    _file: std::fs::File,
    access: Access,
    holders: usize,
}

/// The name a profile folder is held under by this thread: the thread, and the folder's
/// canonical path when it exists.
fn key(dir: &Path) -> (std::thread::ThreadId, PathBuf) {
    (
        std::thread::current().id(),
        std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf()),
    )
}

/// The most a command waits for the profile by default.
pub const DEFAULT_WAIT: Duration = Duration::from_secs(10);

/// The environment variable that sets the wait, in milliseconds (0: never wait).
pub const WAIT_VAR: &str = "TOKENSMITH_LOCK_WAIT_MS";

/// How long to wait for the profile: [`WAIT_VAR`] when set to a number (capped at ten
/// minutes), else [`DEFAULT_WAIT`].
#[must_use]
pub fn wait() -> Duration {
    std::env::var(WAIT_VAR)
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map_or(DEFAULT_WAIT, |ms| Duration::from_millis(ms.min(600_000)))
}

/// Shared or exclusive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// Reading: shared with other readers.
    Read,
    /// Changing: alone.
    Write,
}

/// A held lock on a profile; released when dropped.
#[derive(Debug)]
pub struct ProfileLock {
    /// The held profile's key in [`HELD`]; `None` when nothing is held (a reader of a
    /// profile that is not there).
    key: Option<(std::thread::ThreadId, PathBuf)>,
    access: Access,
}

impl Drop for ProfileLock {
    fn drop(&mut self) {
        let Some(key) = &self.key else { return };
        let mut held = HELD.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(i) = held.iter().position(|h| &h.key == key) {
            held[i].holders = held[i].holders.saturating_sub(1);
            if held[i].holders == 0 {
                // Closing the file releases the operating system's lock.
                held.swap_remove(i);
            }
        }
    }
}

/// The profile could not be locked.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// Another process held it for the whole wait.
    #[error(
        "the profile {} is in use by another Tokensmith ({}); waited {} ms. Try again when it has finished, or set {WAIT_VAR} to wait longer",
        super::shown(dir),
        if *access == Access::Write { "a command or the client is reading or changing it" } else { "a command or the client is changing it" },
        waited.as_millis()
    )]
    Busy {
        /// The profile folder.
        dir: PathBuf,
        /// What was asked.
        access: Access,
        /// How long it waited.
        waited: Duration,
    },
    /// The profile folder cannot be made.
    #[error("cannot lock the profile {}: {source}", super::shown(dir))]
    Folder {
        /// The profile folder.
        dir: PathBuf,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// The lock file cannot be opened.
    #[error(
        "cannot lock the profile {}: cannot open {}: {source}; it must be a plain file Tokensmith can write (delete it and it is made anew)",
        super::shown(dir),
        super::shown(file)
    )]
    Open {
        /// The profile folder.
        dir: PathBuf,
        /// The lock file.
        file: PathBuf,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// The lock file is a symbolic link (never followed).
    #[error(
        "cannot lock the profile {}: {} is a symbolic link; links inside the profile are not followed: delete it (Tokensmith makes the file anew)",
        super::shown(dir),
        super::shown(file)
    )]
    Link {
        /// The profile folder.
        dir: PathBuf,
        /// The lock file.
        file: PathBuf,
    },
    /// The lock file is not a plain file.
    #[error(
        "cannot lock the profile {}: {} is not a plain file; delete it (Tokensmith makes the file anew)",
        super::shown(dir),
        super::shown(file)
    )]
    NotAFile {
        /// The profile folder.
        dir: PathBuf,
        /// The lock file.
        file: PathBuf,
    },
    /// The system refused the lock itself.
    #[error("cannot lock the profile {}: {source}", super::shown(dir))]
    Lock {
        /// The profile folder.
        dir: PathBuf,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// This thread holds the profile for reading and asked to change it.
    #[error(
        "cannot lock the profile {}: this thread holds the profile for reading and cannot also change it; finish what reads it first",
        super::shown(dir)
    )]
    ReadThenWrite {
        /// The profile folder.
        dir: PathBuf,
    },
}

impl ProfileLock {
    /// Lock the profile in `dir` for `access`, waiting up to [`wait`]. A profile folder
    /// that is not there yet is made for a writer; a reader of a missing profile holds
    /// nothing (there is nothing to read).
    pub fn acquire(dir: &Path, access: Access) -> Result<ProfileLock, LockError> {
        Self::acquire_within(dir, access, wait())
    }

    /// [`ProfileLock::acquire`] with an explicit wait.
    pub fn acquire_within(
        dir: &Path,
        access: Access,
        wait: Duration,
    ) -> Result<ProfileLock, LockError> {
        if let Some(lock) = Self::nested(dir, access)? {
            return Ok(lock);
        }
        let Some(file) = open(dir, access)? else {
            return Ok(ProfileLock { key: None, access });
        };
        let started = Instant::now();
        let mut pause = Duration::from_millis(5);
        loop {
            let tried = match access {
                Access::Read => file.try_lock_shared(),
                Access::Write => file.try_lock(),
            };
            match tried {
                Ok(()) => {
                    let key = key(dir);
                    HELD.lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .push(Held {
                            key: key.clone(),
                            _file: file,
                            access,
                            holders: 1,
                        });
                    return Ok(ProfileLock {
                        key: Some(key),
                        access,
                    });
                }
                Err(std::fs::TryLockError::WouldBlock) => {}
                Err(std::fs::TryLockError::Error(e)) => {
                    return Err(LockError::Lock {
                        dir: dir.to_path_buf(),
                        source: e,
                    });
                }
            }
            let waited = started.elapsed();
            if waited >= wait {
                return Err(LockError::Busy {
                    dir: dir.to_path_buf(),
                    access,
                    waited,
                });
            }
            std::thread::sleep(pause.min(wait.saturating_sub(waited)));
            pause = (pause * 2).min(Duration::from_millis(100));
        }
    }

    /// Lock the profile for writing only if no one else holds it now (`None` when
    /// another process reads or changes it).
    /// Held by this thread already (also by the caller: what must run alone, such as
    /// clearing unfinished installs, does not run inside a change under way).
    pub fn try_write(dir: &Path) -> Result<Option<ProfileLock>, LockError> {
        if dir.exists() {
            let key = key(dir);
            let held = HELD.lock().unwrap_or_else(PoisonError::into_inner);
            if held.iter().any(|h| h.key == key) {
                return Ok(None);
            }
        }
        match Self::acquire_within(dir, Access::Write, Duration::ZERO) {
            Ok(lock) => Ok(Some(lock)),
            Err(LockError::Busy { .. }) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// A share of the lock this thread holds on `dir` already, if it covers `access`.
    fn nested(dir: &Path, access: Access) -> Result<Option<ProfileLock>, LockError> {
        if !dir.exists() {
            return Ok(None);
        }
        let key = key(dir);
        let mut held = HELD.lock().unwrap_or_else(PoisonError::into_inner);
        let Some(h) = held.iter_mut().find(|h| h.key == key) else {
            return Ok(None);
        };
        if h.access == Access::Read && access == Access::Write {
            return Err(LockError::ReadThenWrite {
                dir: dir.to_path_buf(),
            });
        }
        h.holders += 1;
        Ok(Some(ProfileLock {
            key: Some(key),
            access,
        }))
    }

    /// What it was taken for.
    #[must_use]
    pub fn access(&self) -> Access {
        self.access
    }
}

/// The lock file of the profile in `dir`, opened (never through a link), or `None` for
/// a reader when the profile is not there.
fn open(dir: &Path, access: Access) -> Result<Option<std::fs::File>, LockError> {
    let dir_buf = || dir.to_path_buf();
    if !dir.exists() {
        if access == Access::Read {
            return Ok(None);
        }
        std::fs::create_dir_all(dir).map_err(|source| LockError::Folder {
            dir: dir_buf(),
            source,
        })?;
    }
    let path = dir.join(".lock");
    let mut options = std::fs::OpenOptions::new();
    options.read(true).write(true).create(true).truncate(false);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
    }
    if super::is_link(&path) {
        return Err(LockError::Link {
            dir: dir_buf(),
            file: path,
        });
    }
    let opened = options.open(&path);
    if access == Access::Read && opened.is_err() {
        // A profile this user cannot write is one no one changes under a reader.
        return Ok(None);
    }
    let file = match opened {
        Ok(file) => file,
        Err(source) => {
            return Err(LockError::Open {
                dir: dir_buf(),
                file: path,
                source,
            });
        }
    };
    match file.metadata() {
        Ok(m) if m.is_file() => Ok(Some(file)),
        _ => Err(LockError::NotAFile {
            dir: dir_buf(),
            file: path,
        }),
    }
}
