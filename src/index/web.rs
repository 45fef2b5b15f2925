//! Reading an index over HTTP or HTTPS (rustls, no system TLS library): every request
//! has a connect timeout and a deadline for the whole transfer sized by what it may
//! carry, a byte cap known before the body is read, a few redirects at most, retries on
//! a refused connection or a server error, and conditional requests (`If-None-Match`,
//! `If-Modified-Since`) against the copy kept in the profile, so an update check where
//! nothing changed fetches headers only.
//!
//! A transfer that stops making progress is given up on: past a grace period it must keep
//! an average of [`MIN_BYTES_PER_SECOND`]. And every command's web reads share one overall
//! deadline ([`COMMAND_DEADLINE`]), however many files it reads.

use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use super::{IndexError, ReadFailure};

/// The most redirects one request follows.
pub const MAX_REDIRECTS: u32 = 5;
/// How long connecting may take.
const CONNECT: Duration = Duration::from_secs(10);
/// Every request's deadline starts here, plus [`slowest`] for its size.
const BASE_DEADLINE: Duration = Duration::from_secs(20);
/// The slowest transfer allowed: the deadline grows by a second per this many bytes.
const SLOWEST_BYTES_PER_SECOND: u64 = 32 * 1024;
/// Tries of a request that failed to connect or got a server error.
const TRIES: u32 = 3;
/// Bodies at least this large show a progress bar (on a terminal).
const PROGRESS_FROM: u64 = 1024 * 1024;
/// The average a transfer must keep once [`grace`] has passed.
pub const MIN_BYTES_PER_SECOND: u64 = 4 * 1024;
/// The most time a command's web reads may take together
/// (`TOKENSMITH_INDEX_DEADLINE_MS` replaces it).
pub const COMMAND_DEADLINE: Duration = Duration::from_secs(300);

/// When this process's first web read started: the command's deadline counts from it.
static STARTED: OnceLock<Instant> = OnceLock::new();

/// A duration in milliseconds from the environment variable `var`, if set.
fn env_ms(var: &str) -> Option<Duration> {
    std::env::var(var)
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map(Duration::from_millis)
}

/// The command's overall deadline.
fn command_deadline() -> Duration {
    env_ms("TOKENSMITH_INDEX_DEADLINE_MS").unwrap_or(COMMAND_DEADLINE)
}

/// What is left of the command's overall deadline.
fn command_left() -> Duration {
    let started = *STARTED.get_or_init(Instant::now);
    command_deadline().saturating_sub(started.elapsed())
}

/// How long a transfer may go before [`MIN_BYTES_PER_SECOND`] is held to: the base
/// deadline, at most 10 s.
fn grace() -> Duration {
    base_deadline().min(Duration::from_secs(10))
}

/// An index served over HTTP(S), with the profile folder its copy is kept in.
#[derive(Clone, Debug)]
pub struct Web {
    /// The index's address, ending in `/`.
    base: String,
    /// Where fetched files and their validators are kept.
    cache: PathBuf,
    agent: ureq::Agent,
}

/// What a fetch got.
pub enum Got {
    /// The body.
    Body(Vec<u8>),
    /// The server has no such file (404 or 410).
    Missing,
}

/// Bytes of bodies received by this process (headers not counted): what a benchmark
/// reads to show that an update check fetched headers only.
pub static BODY_BYTES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// The deadline of a request that may carry `cap` bytes: [`BASE_DEADLINE`] (or
/// `TOKENSMITH_INDEX_TIMEOUT_MS` milliseconds) and a second per
/// [`SLOWEST_BYTES_PER_SECOND`] bytes it may carry.
fn deadline(cap: u64) -> Duration {
    base_deadline() + Duration::from_secs(cap / SLOWEST_BYTES_PER_SECOND)
}

/// [`BASE_DEADLINE`], or `TOKENSMITH_INDEX_TIMEOUT_MS`.
fn base_deadline() -> Duration {
    env_ms("TOKENSMITH_INDEX_TIMEOUT_MS").unwrap_or(BASE_DEADLINE)
}

impl Web {
    /// An index at `url` (`http://` or `https://`), its copy kept in `cache`.
    #[must_use]
    pub fn new(url: &str, cache: &Path) -> Web {
        let mut base = url.trim().to_string();
        if !base.ends_with('/') {
            base.push('/');
        }
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .timeout_connect(Some(CONNECT))
            .max_redirects(MAX_REDIRECTS)
            .http_status_as_error(false)
            .user_agent(concat!("tokensmith/", env!("CARGO_PKG_VERSION")))
            .build()
            .into();
        Web {
            base,
            cache: cache.to_path_buf(),
            agent,
        }
    }

    /// The copy of `rel` kept from an earlier fetch, if there is one (at most `cap`
    /// bytes).
    #[must_use]
    pub fn kept(&self, rel: &str, cap: u64) -> Option<Vec<u8>> {
        crate::fsutil::read_capped(&self.cache.join(rel), cap, "a kept index file").ok()
    }

    /// The address of `rel`.
    #[must_use]
    pub fn url(&self, rel: &str) -> String {
        format!("{}{rel}", self.base)
    }

    /// Fetch `rel`, at most `cap` bytes (refused before reading when the server says it
    /// is larger, and as soon as it sends more). With `cached`, a copy kept from an
    /// earlier fetch is revalidated instead of fetched again when the server allows.
    pub fn get(&self, rel: &str, cap: u64, cached: bool) -> Result<Got, IndexError> {
        let url = self.url(rel);
        let body_path = self.cache.join(rel);
        let meta_path = self.cache.join(format!("{rel}.validators"));
        let validators = if cached && body_path.is_file() {
            crate::fsutil::read_capped(&meta_path, 4096, "cache validators")
                .ok()
                .and_then(|b| String::from_utf8(b).ok())
        } else {
            None
        };
        // Why the last try failed (every try that gives up on its answer sets it).
        let mut last: Option<ReadFailure> = None;
        for attempt in 0..TRIES {
            if attempt > 0 {
                std::thread::sleep(Duration::from_millis(500 * u64::from(attempt)));
            }
            let left = command_left();
            if left.is_zero() {
                return Err(IndexError::Read {
                    what: url,
                    error: ReadFailure::CommandDeadline {
                        secs: command_deadline().as_secs(),
                    },
                });
            }
            // The request's own deadline, or what is left of the command's.
            let limit = deadline(cap).min(left);
            let timed_out = || {
                if limit < deadline(cap) {
                    ReadFailure::CommandDeadline {
                        secs: command_deadline().as_secs(),
                    }
                } else {
                    ReadFailure::Timeout {
                        ms: limit.as_millis(),
                    }
                }
            };
            let mut request = self
                .agent
                .get(&url)
                .config()
                .timeout_global(Some(limit))
                .timeout_recv_response(Some(base_deadline().min(limit)))
                .build();
            if let Some(v) = &validators {
                for line in v.lines() {
                    if let Some(etag) = line.strip_prefix("etag ") {
                        request = request.header("If-None-Match", etag);
                    } else if let Some(date) = line.strip_prefix("last-modified ") {
                        request = request.header("If-Modified-Since", date);
                    }
                }
            }
            let mut response = match request.call() {
                Ok(r) => r,
                Err(ureq::Error::TooManyRedirects) => {
                    return Err(IndexError::Read {
                        what: url,
                        error: ReadFailure::Redirects(MAX_REDIRECTS),
                    });
                }
                Err(ureq::Error::Timeout(_)) => {
                    return Err(IndexError::Read {
                        what: url,
                        error: timed_out(),
                    });
                }
                Err(e) => {
                    last = Some(ReadFailure::Http(e));
                    continue;
                }
            };
            let status = response.status().as_u16();
            match status {
                304 if validators.is_some() => {
                    let body = crate::fsutil::read_capped(&body_path, cap, "a cached index file")
                        .map_err(|e| IndexError::Read {
                        what: crate::fsutil::shown(&body_path),
                        error: e.into(),
                    })?;
                    return Ok(Got::Body(body));
                }
                200 => {}
                404 | 410 => return Ok(Got::Missing),
                500..=599 | 429 => {
                    last = Some(ReadFailure::Status(status));
                    continue;
                }
                _ => {
                    return Err(IndexError::Read {
                        what: url,
                        error: ReadFailure::Status(status),
                    });
                }
            }
            let header = |name: &str| {
                response
                    .headers()
                    .get(name)
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_string)
            };
            let etag = header("etag");
            let modified = header("last-modified");
            let length = header("content-length").and_then(|l| l.trim().parse::<u64>().ok());
            if let Some(length) = length
                && length > cap
            {
                return Err(IndexError::TooLarge {
                    what: url,
                    size: Some(length),
                    cap,
                });
            }
            let bar = (length.unwrap_or(0) >= PROGRESS_FROM).then(|| {
                let bar = indicatif::ProgressBar::new(length.unwrap_or(0));
                bar.set_style(
                    indicatif::ProgressStyle::with_template("{msg} {bar:30} {bytes}/{total_bytes}")
                        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
                );
                bar.set_message(rel.rsplit('/').next().unwrap_or(rel).to_string());
                bar
            });
            let mut body = Vec::new();
            let mut reader = response
                .body_mut()
                .with_config()
                .limit(cap.saturating_add(1))
                .reader()
                .take(cap.saturating_add(1));
            let mut chunk = vec![0u8; 64 * 1024];
            let started = Instant::now();
            loop {
                let n = reader.read(&mut chunk).map_err(|e| IndexError::Read {
                    what: url.clone(),
                    error: if e.to_string().contains("timeout")
                        || e.kind() == std::io::ErrorKind::TimedOut
                    {
                        timed_out()
                    } else {
                        ReadFailure::Body(e)
                    },
                })?;
                if n == 0 {
                    break;
                }
                // Past the grace, the average must keep the minimum rate.
                let elapsed = started.elapsed();
                let got = (body.len() + n) as u64;
                if let Some(late) = elapsed.checked_sub(grace())
                    && u128::from(got) * 1000 < late.as_millis() * u128::from(MIN_BYTES_PER_SECOND)
                {
                    return Err(IndexError::Read {
                        what: url,
                        error: ReadFailure::TooSlow {
                            bytes: got,
                            secs: elapsed.as_secs(),
                        },
                    });
                }
                body.extend_from_slice(&chunk[..n]);
                BODY_BYTES.fetch_add(n as u64, std::sync::atomic::Ordering::Relaxed);
                if let Some(bar) = &bar {
                    bar.set_position(body.len() as u64);
                }
                if body.len() as u64 > cap {
                    return Err(IndexError::TooLarge {
                        what: url,
                        size: None,
                        cap,
                    });
                }
            }
            if let Some(bar) = bar {
                bar.finish_and_clear();
            }
            if cached {
                self.keep(rel, &body, etag.as_deref(), modified.as_deref());
            }
            return Ok(Got::Body(body));
        }
        Err(IndexError::Read {
            what: url,
            error: ReadFailure::Tries {
                last: Box::new(last.unwrap_or(ReadFailure::Missing)),
                tries: TRIES,
            },
        })
    }

    /// Keep `body` of `rel` and its validators in the profile's copy (best effort).
    fn keep(&self, rel: &str, body: &[u8], etag: Option<&str>, modified: Option<&str>) {
        let path = self.cache.join(rel);
        if let Some(parent) = path.parent()
            && std::fs::create_dir_all(parent).is_ok()
            && crate::fsutil::write_atomic(&path, body).is_ok()
        {
            let mut meta = String::new();
            if let Some(e) = etag.filter(|e| e.len() < 512 && e.is_ascii()) {
                meta.push_str(&format!("etag {e}\n"));
            }
            if let Some(m) = modified.filter(|m| m.len() < 512 && m.is_ascii()) {
                meta.push_str(&format!("last-modified {m}\n"));
            }
            let _ = crate::fsutil::write_atomic(
                &self.cache.join(format!("{rel}.validators")),
                meta.as_bytes(),
            );
        }
    }
}
