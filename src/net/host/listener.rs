//! The listener: one thread that waits, in one poll, for a connection to come or for the
//! host to stop. It numbers each connection, admits it through the [`Register`]'s limits
//! (per address and in all; a connection holding no seat gives way to a joiner) or tells
//! it why not, and starts the connection's reader ([`super::peer`]).
//!
//! Stopping closes the listener's channel and wakes its poll ([`Listening::close`]); the
//! thread ends and the socket is closed before `close` returns. Nothing connects to the
//! host to wake it.

use std::io::ErrorKind;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::mpsc::{Receiver, Sender, TryRecvError, channel};
use std::thread::JoinHandle;
use std::time::Duration;

use mio::{Events, Interest, Poll, Token, Waker};

use super::super::frame;
use super::super::protocol::{HOST_FULL, ToClient};
use super::conn::{Connections, Limits, Refusal};
use super::lobby::Lobby;
use super::{Common, peer};

/// The poll's token for the listening socket.
const LISTENER: Token = Token(0);
/// The poll's token for the waker ([`Listening::close`]).
const STOP: Token = Token(1);

/// How long the listener rests after a failed accept that is not the peer's doing (out
/// of file descriptors, say) before it tries again: the connection waits in the
/// backlog meanwhile.
const RETRY: Duration = Duration::from_millis(50);

/// The listener's thread, running; [`Listening::close`] (or dropping it) stops it.
pub(super) struct Listening {
    waker: Waker,
    /// Dropped to stop the listener.
    stop: Option<Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Listening {
    /// Listen on `listener` on a thread of its own.
    pub(super) fn start(
        listener: TcpListener,
        common: Arc<Common>,
        conns: Arc<Connections>,
        lobby: Arc<Lobby>,
    ) -> std::io::Result<Listening> {
        listener.set_nonblocking(true)?;
        let mut listener = mio::net::TcpListener::from_std(listener);
        let poll = Poll::new()?;
        poll.registry()
            .register(&mut listener, LISTENER, Interest::READABLE)?;
        let waker = Waker::new(poll.registry(), STOP)?;
        let (stop, stopped) = channel();
        let config = &common.config;
        let limits = Limits {
            total: config.max_connections,
            per_address: config.max_connections_per_address,
            settling: config.settling,
        };
        let accept = Accept {
            limits,
            common,
            conns,
            lobby,
            next: 1,
        };
        let thread = crate::script::threads::spawn_light("lan-accept", move || {
            accept.run(poll, &listener, &stopped);
        })?;
        Ok(Listening {
            waker,
            stop: Some(stop),
            thread: Some(thread),
        })
    }

    /// Stop listening: the channel closed, the poll woken; returns once the thread has
    /// ended and the socket is closed.
    pub(super) fn close(self) {
        drop(self);
    }
}

impl Drop for Listening {
    fn drop(&mut self) {
        // The channel first, so the woken thread finds it closed.
        drop(self.stop.take());
        let _ = self.waker.wake();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The accept loop's own state.
struct Accept {
    /// The register's limits, from the settings.
    limits: Limits,
    common: Arc<Common>,
    conns: Arc<Connections>,
    lobby: Arc<Lobby>,
    /// The next connection's number.
    next: u64,
}

impl Accept {
    fn run(mut self, mut poll: Poll, listener: &mio::net::TcpListener, stopped: &Receiver<()>) {
        let mut events = Events::with_capacity(16);
        let mut rest = None;
        loop {
            match poll.poll(&mut events, rest.take()) {
                Ok(()) => {}
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => {
                    self.common.log(format!("the host stops listening: {e}"));
                    return;
                }
            }
            if !matches!(stopped.try_recv(), Err(TryRecvError::Empty)) {
                return;
            }
            // Readiness is reported once per change: take every connection waiting.
            loop {
                match listener.accept() {
                    Ok((stream, peer)) => match into_std(stream) {
                        Ok(stream) => self.admit(stream, peer),
                        Err(e) => self.common.log(format!("{peer}: not served: {e}")),
                    },
                    Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                    Err(e) if e.kind() == ErrorKind::Interrupted => {}
                    // Gone before it was taken: the next one may be there.
                    Err(e) if e.kind() == ErrorKind::ConnectionAborted => {}
                    Err(_) => {
                        // Out of descriptors or memory: the waiting connections stay in
                        // the backlog, taken when the poll's rest is over.
                        rest = Some(RETRY);
                        break;
                    }
                }
            }
        }
    }

    /// Admit a new connection, or tell it why not.
    fn admit(&mut self, mut stream: TcpStream, peer: SocketAddr) {
        let _ = stream.set_nodelay(true);
        let _ = stream.set_write_timeout(Some(Duration::from_secs(1)));
        let id = self.next;
        self.next += 1;
        let refusal = match self
            .conns
            .register
            .admit(id, peer.ip(), &stream, self.limits)
        {
            Ok(None) => None,
            Ok(Some(ip)) => {
                self.common.log(format!(
                    "{peer}: the host is full; closed a connection without a seat from {ip} to make room"
                ));
                None
            }
            Err(Refusal::Address(n)) => Some(format!(
                "your address has {n} connections open, the most one address may"
            )),
            Err(Refusal::Full) => Some(format!(
                "{HOST_FULL}: connect again within {} s; a joiner who comes back goes before new connections",
                super::conn::RETURN_WINDOW.as_secs()
            )),
        };
        if let Some(reason) = refusal {
            // A fresh socket's buffer takes this small frame without blocking.
            let _ = frame::write(
                &mut stream,
                &ToClient::Bye {
                    reason: reason.clone(),
                },
            );
            self.common.log(format!("{peer}: refused: {reason}"));
            return;
        }
        let connection = peer::Connection::new(
            Arc::clone(&self.common),
            Arc::clone(&self.conns),
            Arc::clone(&self.lobby),
            id,
            peer,
        );
        let conns = Arc::clone(&self.conns);
        let spawned = crate::script::threads::spawn("lan-conn", move || {
            connection.serve(stream);
            conns.register.remove(id);
        });
        if spawned.is_err() {
            self.conns.register.remove(id);
        }
    }
}

/// A connection mio accepted, as the blocking stream its reader and writer use.
fn into_std(stream: mio::net::TcpStream) -> std::io::Result<TcpStream> {
    #[cfg(unix)]
    let stream = TcpStream::from(std::os::fd::OwnedFd::from(stream));
    #[cfg(windows)]
    let stream = TcpStream::from(std::os::windows::io::OwnedSocket::from(stream));
    stream.set_nonblocking(false)?;
    Ok(stream)
}
