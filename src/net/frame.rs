//! Frames: a 4-byte big-endian length, then that many bytes of one postcard-encoded
//! message. A frame longer than [`MAX_FRAME`] is refused from its length alone, before
//! anything is allocated, and a whole frame must arrive within [`FRAME_DEADLINE`] — a
//! sender dripping a byte a second cannot hold a reader past it.

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use serde::Serialize;
use serde::de::DeserializeOwned;

/// The largest frame either side accepts, in bytes (pack archives travel in chunks
/// below it).
pub const MAX_FRAME: usize = 1 << 20;

/// How long the rest of a frame may take once its first byte has arrived.
pub const FRAME_DEADLINE: Duration = Duration::from_secs(10);

/// Why a frame could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum FrameError {
    /// The peer closed the connection.
    #[error("the connection was closed")]
    Closed,
    /// Nothing arrived in time (between frames: the caller's idle time-out).
    #[error("nothing arrived in time")]
    Idle,
    /// A frame started but did not finish within its deadline.
    #[error("a frame took too long to arrive (a slow sender)")]
    Slow,
    /// The length prefix is over the limit (the second number; at most [`MAX_FRAME`]).
    #[error("a frame of {0} bytes is over the {1}-byte limit")]
    TooLong(u64, usize),
    /// The bytes are not a message of the protocol.
    #[error("a frame is not a valid message: {0}")]
    Malformed(String),
    /// Any other I/O error.
    #[error(transparent)]
    Io(#[from] io::Error),
}

impl FrameError {
    /// Whether the connection is gone (as opposed to the peer misbehaving).
    #[must_use]
    pub fn is_disconnect(&self) -> bool {
        matches!(self, FrameError::Closed | FrameError::Io(_))
    }
}

/// Encode `message` as one frame.
pub fn encode<T: Serialize>(message: &T) -> Result<Vec<u8>, FrameError> {
    let body = postcard::to_stdvec(message).map_err(|e| FrameError::Malformed(e.to_string()))?;
    if body.len() > MAX_FRAME {
        return Err(FrameError::TooLong(body.len() as u64, MAX_FRAME));
    }
    let len =
        u32::try_from(body.len()).map_err(|_| FrameError::TooLong(body.len() as u64, MAX_FRAME))?;
    let mut out = Vec::with_capacity(4 + body.len());
    out.extend_from_slice(&len.to_be_bytes());
    out.extend_from_slice(&body);
    Ok(out)
}

/// Write `message` as one frame.
pub fn write<T: Serialize>(stream: &mut impl Write, message: &T) -> Result<(), FrameError> {
    let frame = encode(message)?;
    stream.write_all(&frame)?;
    stream.flush()?;
    Ok(())
}

thread_local! {
    /// Why a bounded decoder refused the frame being decoded on this thread (postcard
    /// keeps no message of its own for a decoder's error).
    static REFUSAL: std::cell::RefCell<Option<String>> = const { std::cell::RefCell::new(None) };
}

/// Note why a decoder refuses the frame being decoded (see [`decode`]).
pub(crate) fn note_refusal(why: &str) {
    REFUSAL.with(|r| *r.borrow_mut() = Some(why.to_string()));
}

/// Decode one frame's body.
pub fn decode<T: DeserializeOwned>(body: &[u8]) -> Result<T, FrameError> {
    REFUSAL.with(|r| r.borrow_mut().take());
    postcard::from_bytes(body).map_err(|e| {
        let why = REFUSAL.with(|r| r.borrow_mut().take());
        FrameError::Malformed(why.unwrap_or_else(|| e.to_string()))
    })
}

/// Read one frame, waiting at most `idle` for it to start (`None`: forever) and
/// [`FRAME_DEADLINE`] for the rest.
pub fn read<T: DeserializeOwned>(
    stream: &mut TcpStream,
    idle: Option<Duration>,
) -> Result<T, FrameError> {
    read_within(stream, idle, FRAME_DEADLINE)
}

/// [`read`] with another deadline for a started frame.
pub fn read_within<T: DeserializeOwned>(
    stream: &mut TcpStream,
    idle: Option<Duration>,
    deadline: Duration,
) -> Result<T, FrameError> {
    let body = read_body(stream, idle, deadline)?;
    decode(&body)
}

/// [`read_within`] refusing frames over `max` bytes (at most [`MAX_FRAME`]) from their
/// length prefix: what a host reads from clients, whose messages are all small.
pub fn read_within_max<T: DeserializeOwned>(
    stream: &mut TcpStream,
    idle: Option<Duration>,
    deadline: Duration,
    max: usize,
) -> Result<T, FrameError> {
    let body = read_body_max(stream, idle, deadline, max)?;
    decode(&body)
}

/// Read one frame's body (see [`read_within`]).
pub fn read_body(
    stream: &mut TcpStream,
    idle: Option<Duration>,
    deadline: Duration,
) -> Result<Vec<u8>, FrameError> {
    read_body_max(stream, idle, deadline, MAX_FRAME)
}

/// [`read_body`] refusing frames over `max` bytes (at most [`MAX_FRAME`]).
pub fn read_body_max(
    stream: &mut TcpStream,
    idle: Option<Duration>,
    deadline: Duration,
    max: usize,
) -> Result<Vec<u8>, FrameError> {
    let max = max.min(MAX_FRAME);
    let mut first = [0u8; 1];
    stream.set_read_timeout(idle.map(|d| d.max(Duration::from_millis(1))))?;
    loop {
        match stream.read(&mut first) {
            Ok(0) => return Err(FrameError::Closed),
            Ok(_) => break,
            Err(e) if is_timeout(&e) => return Err(FrameError::Idle),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e.into()),
        }
    }
    let deadline = Instant::now() + deadline;
    let mut rest = [0u8; 3];
    read_until(stream, &mut rest, deadline)?;
    let len = u32::from_be_bytes([first[0], rest[0], rest[1], rest[2]]);
    let len = usize::try_from(len).unwrap_or(usize::MAX);
    if len > max {
        // The protocol's own limit is named when the frame is over it.
        let limit = if len > MAX_FRAME { MAX_FRAME } else { max };
        return Err(FrameError::TooLong(len as u64, limit));
    }
    let mut body = vec![0u8; len];
    read_until(stream, &mut body, deadline)?;
    Ok(body)
}

fn is_timeout(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
    )
}

/// Fill `buf` before `deadline`.
fn read_until(stream: &mut TcpStream, buf: &mut [u8], deadline: Instant) -> Result<(), FrameError> {
    let mut at = 0;
    while at < buf.len() {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(FrameError::Slow);
        }
        stream.set_read_timeout(Some(left))?;
        match stream.read(&mut buf[at..]) {
            Ok(0) => return Err(FrameError::Closed),
            Ok(n) => at += n,
            Err(e) if is_timeout(&e) => return Err(FrameError::Slow),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}
