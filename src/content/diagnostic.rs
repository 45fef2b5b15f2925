//! Diagnostics: every problem of a load, with file, line and column.

use std::fmt;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::yaml::Loc;

/// How bad a diagnostic is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// The content loads, but something is probably not what the author meant.
    Warning,
    /// The content cannot be used until this is fixed.
    Error,
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Severity::Warning => "warning",
            Severity::Error => "error",
        })
    }
}

/// One problem found while loading, at a place in a file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Diagnostic {
    /// The file, as found (relative to the folders given on the command line). Shown
    /// lossily where it is not UTF-8, in text and in JSON alike.
    #[serde(serialize_with = "lossy_path")]
    pub path: PathBuf,
    /// 1-based line.
    pub line: u32,
    /// 1-based column.
    pub column: u32,
    /// Error or warning.
    pub severity: Severity,
    /// What is wrong and, where it helps, what would be right.
    pub message: String,
}

impl Diagnostic {
    /// An error at `loc` in `path`.
    pub fn error(path: &Path, loc: Loc, message: impl Into<String>) -> Diagnostic {
        Diagnostic::new(Severity::Error, path, loc, message)
    }

    /// A warning at `loc` in `path`.
    pub fn warning(path: &Path, loc: Loc, message: impl Into<String>) -> Diagnostic {
        Diagnostic::new(Severity::Warning, path, loc, message)
    }

    fn new(severity: Severity, path: &Path, loc: Loc, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            path: path.to_path_buf(),
            line: loc.line.max(1),
            column: loc.column.max(1),
            severity,
            message: sanitize(&message.into()),
        }
    }

    /// Whether this is an error.
    #[must_use]
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

/// The longest message a diagnostic keeps, in characters.
pub const MAX_MESSAGE: usize = 2_000;

/// A message as it is shown: one line (control characters escaped, so text quoted from a
/// file can never forge another `path:line:col:` line) of at most [`MAX_MESSAGE`]
/// characters.
fn sanitize(message: &str) -> String {
    if message.len() <= MAX_MESSAGE && !message.chars().any(char::is_control) {
        return message.to_string();
    }
    crate::rules::echo_within(message, MAX_MESSAGE)
}

fn lossy_path<S: serde::Serializer>(path: &Path, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&crate::fsutil::shown(path))
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}:{}: {}: {}",
            crate::fsutil::shown(&self.path),
            self.line,
            self.column,
            self.severity,
            self.message
        )
    }
}

/// Diagnostics gathered for one file at a time.
#[derive(Debug, Default)]
pub struct Diagnostics {
    list: Vec<Diagnostic>,
}

impl Diagnostics {
    /// Record an error.
    pub fn error(&mut self, path: &Path, loc: Loc, message: impl Into<String>) {
        self.list.push(Diagnostic::error(path, loc, message));
    }

    /// Record a warning.
    pub fn warning(&mut self, path: &Path, loc: Loc, message: impl Into<String>) {
        self.list.push(Diagnostic::warning(path, loc, message));
    }

    /// Record a finished diagnostic.
    pub fn push(&mut self, d: Diagnostic) {
        self.list.push(d);
    }

    /// Whether any error was recorded.
    #[must_use]
    pub fn has_errors(&self) -> bool {
        self.list.iter().any(Diagnostic::is_error)
    }

    /// The diagnostics, sorted by file, line and column, each once.
    #[must_use]
    pub fn into_sorted(mut self) -> Vec<Diagnostic> {
        self.list.sort_by(|a, b| {
            (&a.path, a.line, a.column, &a.message).cmp(&(&b.path, b.line, b.column, &b.message))
        });
        self.list.dedup();
        self.list
    }
}
