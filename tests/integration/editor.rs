//! The editor definitions (`tokensmith api --luals`) with a real checker, EmmyLua's: the
//! shipped example scripts get no finding, and a script with a misspelt ctx method and
//! token field gets both flagged ("Undefined field").
//!
//! The checker is EmmyLua's language server, `emmylua_ls`, driven over the Language Server
//! Protocol as an editor drives it (`.ci/run` installs it), or its batch checker
//! `emmylua_check` (`cargo install emmylua_check`) where that is installed. Where neither is
//! found the test says so and passes, unless `TOKENSMITH_REQUIRE_EDITOR_CHECK=1` (set by
//! `.ci/run`), when it fails.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// `name` on the PATH or in cargo's bin folder, or at the path in the variable `var`.
fn program(name: &str, var: &str) -> Option<PathBuf> {
    if let Some(p) = std::env::var_os(var).map(PathBuf::from) {
        return p.is_file().then_some(p);
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .chain(std::env::var_os("CARGO_HOME").map(|h| PathBuf::from(h).join("bin")))
        .map(|dir| dir.join(name))
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

/// The findings of `emmylua_check` on the folder, one per line; empty when it found none.
fn batch_check(checker: &Path, dir: &Path) -> String {
    let home = tempfile::tempdir().unwrap();
    let mut command = Command::new(checker);
    crate::support::private_home(&mut command, home.path());
    let out = command.arg(dir).output().unwrap();
    let report = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    if report.contains("No issues found") {
        String::new()
    } else {
        report
    }
}

/// A language server on the other end of two pipes, its messages read on a thread of
/// their own (so that every wait has a deadline).
struct Server {
    child: Child,
    /// Its home and data folders (it keeps logs and resources there).
    _home: tempfile::TempDir,
    to: std::process::ChildStdin,
    from: mpsc::Receiver<Value>,
}

impl Server {
    fn start(program: &Path) -> Server {
        let home = tempfile::tempdir().unwrap();
        let mut command = Command::new(program);
        crate::support::private_home(&mut command, home.path());
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("{}: cannot start it: {e}", program.display()));
        let to = child.stdin.take().unwrap();
        let mut out = BufReader::new(child.stdout.take().unwrap());
        let (tx, from) = mpsc::channel();
        std::thread::spawn(move || {
            loop {
                let mut length = None;
                loop {
                    let mut line = String::new();
                    if out.read_line(&mut line).unwrap_or(0) == 0 {
                        return;
                    }
                    let line = line.trim_end();
                    if line.is_empty() {
                        break;
                    }
                    if let Some(n) = line.strip_prefix("Content-Length:") {
                        length = n.trim().parse::<usize>().ok();
                    }
                }
                let Some(n) = length.filter(|n| *n <= 64 << 20) else {
                    return;
                };
                let mut body = vec![0; n];
                if out.read_exact(&mut body).is_err() {
                    return;
                }
                let Ok(message) = serde_json::from_slice(&body) else {
                    return;
                };
                if tx.send(message).is_err() {
                    return;
                }
            }
        });
        Server {
            child,
            _home: home,
            to,
            from,
        }
    }

    fn send(&mut self, message: &Value) {
        let body = message.to_string();
        write!(self.to, "Content-Length: {}\r\n\r\n{body}", body.len()).unwrap();
        self.to.flush().unwrap();
    }

    /// The next message, or None after `wait`.
    fn next(&mut self, wait: Duration) -> Option<Value> {
        self.from.recv_timeout(wait).ok()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The findings of the language server on the folder's `.lua` files, as an editor that
/// opened each of them would show them: `file:line: code: message`, one per line.
fn server_check(program: &Path, dir: &Path) -> String {
    const LIMIT: Duration = Duration::from_secs(60);
    const QUIET: Duration = Duration::from_millis(1500);
    let root = format!("file://{}", dir.display());
    let mut server = Server::start(program);
    server.send(&json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {
            "processId": null,
            "rootUri": root,
            "workspaceFolders": [{ "uri": root, "name": "scripts" }],
            "capabilities": {
                "textDocument": { "publishDiagnostics": {} },
                "workspace": { "configuration": true, "workspaceFolders": true }
            }
        }
    }));
    let start = Instant::now();
    loop {
        let m = server
            .next(LIMIT.saturating_sub(start.elapsed()))
            .unwrap_or_else(|| panic!("{}: no answer to `initialize`", program.display()));
        if m.get("id") == Some(&json!(1)) {
            break;
        }
    }
    server.send(&json!({ "jsonrpc": "2.0", "method": "initialized", "params": {} }));
    let mut files: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".lua"))
        .collect();
    files.sort();
    for name in &files {
        let text = std::fs::read_to_string(dir.join(name)).unwrap();
        server.send(&json!({
            "jsonrpc": "2.0", "method": "textDocument/didOpen",
            "params": { "textDocument": {
                "uri": format!("{root}/{name}"), "languageId": "lua", "version": 1, "text": text
            } }
        }));
    }
    // The latest findings of each file; done once every file has had some and the server
    // has been quiet for a while (it checks again once the workspace is indexed).
    let mut found: BTreeMap<String, Vec<String>> = BTreeMap::new();
    while start.elapsed() < LIMIT {
        let wait = if found.len() == files.len() {
            QUIET
        } else {
            LIMIT.saturating_sub(start.elapsed())
        };
        let Some(m) = server.next(wait) else { break };
        match m.get("method").and_then(Value::as_str) {
            Some("textDocument/publishDiagnostics") => {
                let uri = m["params"]["uri"].as_str().unwrap_or_default();
                let name = uri.rsplit('/').next().unwrap_or_default().to_string();
                let list = m["params"]["diagnostics"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default();
                let lines = list
                    .iter()
                    .map(|d| {
                        format!(
                            "{name}:{}: {}: {}",
                            d["range"]["start"]["line"].as_u64().unwrap_or(0) + 1,
                            d["code"].as_str().unwrap_or("-"),
                            d["message"].as_str().unwrap_or_default().trim()
                        )
                    })
                    .collect();
                found.insert(name, lines);
            }
            // A request of the server's (its settings, progress tokens): no opinion.
            Some(method) if m.get("id").is_some() => {
                let result = if method == "workspace/configuration" {
                    let n = m["params"]["items"].as_array().map_or(0, Vec::len);
                    Value::Array(vec![Value::Null; n])
                } else {
                    Value::Null
                };
                server.send(&json!({ "jsonrpc": "2.0", "id": m["id"], "result": result }));
            }
            _ => {}
        }
    }
    let missing: Vec<&String> = files.iter().filter(|f| !found.contains_key(*f)).collect();
    assert!(
        missing.is_empty(),
        "{}: no findings were published for {missing:?} within {LIMIT:?}",
        program.display()
    );
    found.into_values().flatten().collect::<Vec<_>>().join("\n")
}

#[test]
fn a_real_checker_accepts_the_shipped_scripts_and_flags_misspelt_names() {
    let check: Box<dyn Fn(&Path) -> String> =
        if let Some(ls) = program("emmylua_ls", "TOKENSMITH_EMMYLUA_LS") {
            Box::new(move |dir| server_check(&ls, dir))
        } else if let Some(batch) = program("emmylua_check", "TOKENSMITH_EMMYLUA_CHECK") {
            Box::new(move |dir| batch_check(&batch, dir))
        } else {
            assert!(
                std::env::var_os("TOKENSMITH_REQUIRE_EDITOR_CHECK").is_none_or(|v| v != "1"),
                "neither emmylua_ls nor emmylua_check was found (set TOKENSMITH_EMMYLUA_LS to \
                 the language server's path); .ci/run installs emmylua_ls"
            );
            eprintln!("no EmmyLua checker is installed: the editor definitions check is skipped");
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
    let report = check(dir.path());
    assert!(
        report.is_empty(),
        "the shipped scripts should have no findings:\n{report}"
    );

    let dir = workspace(&[root.join("tests/fixtures/editor/wrong.lua")]);
    let report = check(dir.path());
    assert!(report.contains("Undefined field `damge`"), "{report}");
    assert!(report.contains("Undefined field `valeu`"), "{report}");
}
