//! The connections: `serve`'s accept loop, driving hyper per connection (what `axum::serve`
//! does, plus what it does not offer), so that a client without a token cannot starve the
//! server of connections or descriptors:
//!
//! - **Header timeout.** A connection must send a complete request head within
//!   [`Bounds::header_timeout`] of opening, and again of its previous response ending (an idle
//!   keep-alive connection is closed then); it is closed with nothing said otherwise. A head
//!   is at most [`MAX_HEAD`] bytes (`431`).
//! - **Bounds.** At most [`Bounds::max`] connections at once, and [`Bounds::per_peer`] from one
//!   peer (an IPv4 address, an IPv6 /64). A connection that has not yet made an authenticated
//!   request (any request when no token is set: one whose head is complete) is *unproven*. A
//!   newcomer past a bound takes the place of an unproven connection, which is closed: past the
//!   per-peer bound its peer's oldest; past the global one the oldest of the peer holding the
//!   most unproven connections (the peer whose oldest is oldest among equals). A flood of
//!   half-open connections, from one address or many, only pushes out its own kind; a client's
//!   new connection on its way to its first request is not pushed out by a flood from other
//!   addresses (oldest first, it was: a flood from 50 addresses closed 2 of 100 authenticated
//!   runs' connections before their heads were read), and an authenticated client always gets
//!   in. When every connection in the way is proven, the newcomer is answered at once
//!   with a short `503` and closed.
//!
//! - **Sockets.** A connection pushed out is forgotten at once but its socket closes a moment
//!   later, when its task next runs: under a flood, sockets closing could pile up past the fd
//!   limit (seen: at 1,024 open files, `serve` ran out of descriptors and stopped accepting).
//!   So the sockets held, open or closing, are bounded too ([`Bounds::sockets`], a little
//!   above [`Bounds::max`]): past it, nothing more is accepted until one has closed.
//!
//! Shutdown is axum's: stop accepting, let each connection finish the request it is serving
//! (a stream ends with its task) and close it once idle, and wait for all of them; but the
//! unproven ones are closed at once (they started nothing, and a half-open one would hold the
//! shutdown up to its header timeout).

use std::cmp::Reverse;
use std::collections::{BTreeSet, HashMap};
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::pin::pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use axum::Router;
use axum::http::{HeaderValue, Request, header};
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use subagent_core::CancellationToken;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_util::task::TaskTracker;
use tower::Service;

use crate::Token;

/// The largest request head read, in bytes (`431` past it): a half-open connection's buffer
/// holds about this much (hyper's buffer may grow to twice it in one read).
pub const MAX_HEAD: usize = 64 << 10;

/// The answer to a connection past the bounds when no unproven one can make room.
const BUSY: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain\r\n\
retry-after: 1\r\nconnection: close\r\ncontent-length: 21\r\n\r\ntoo many connections\n";

/// The descriptors kept for everything but client connections (runs, their processes and
/// model connections, transcripts) in a process allowed `fd_limit` open ones: 256, or half the
/// limit when it is lower. A bound on connections is at most the limit less these.
pub fn reserved_fds(fd_limit: u64) -> u64 {
    256.min(fd_limit / 2)
}

/// What connections may hold ([`default_bounds`] and [`socket_bound`] give them from the
/// process's limit on open files).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bounds {
    /// Connections open at once.
    pub max: usize,
    /// Connections open at once from one peer (an IPv4 address, an IPv6 /64).
    pub per_peer: usize,
    /// The time a connection has to send a complete request head, from its opening or the end
    /// of its previous response.
    pub header_timeout: Duration,
    /// Sockets held at once, open or closing: more than [`max`](Self::max), so that a newcomer
    /// can be taken while the one it pushes out is still closing ([`socket_bound`]).
    pub sockets: usize,
}

/// The bound on sockets held (open or closing) for `max` connections in a process allowed
/// `fd_limit` open descriptors: an eighth more than `max`, within the limit less half of
/// [`reserved_fds`], and always at least one more than `max`.
pub fn socket_bound(max: usize, fd_limit: u64) -> usize {
    let room =
        usize::try_from(fd_limit.saturating_sub(reserved_fds(fd_limit) / 2)).unwrap_or(usize::MAX);
    (max + max / 8 + 1).min(room).max(max + 1)
}

/// The default bounds on connections for a process allowed `fd_limit` open descriptors: half
/// of them for connections (at least 16, at most 16,384; the rest for runs and their
/// processes), a quarter of those per peer (at least 4).
pub fn default_bounds(fd_limit: u64) -> (usize, usize) {
    let max = (fd_limit / 2).clamp(16, 16_384);
    let max = usize::try_from(max).unwrap_or(16_384);
    (max, (max / 4).max(4))
}

/// The soft limit on open descriptors of this process (`RLIMIT_NOFILE`), `u64::MAX` when
/// unlimited.
pub fn fd_limit() -> u64 {
    rustix::process::getrlimit(rustix::process::Resource::Nofile)
        .current
        .unwrap_or(u64::MAX)
}

/// Raises this process's soft limit on open descriptors to its hard limit (a server holds a
/// descriptor per connection, and the inherited soft limit is often 1,024); returns the soft
/// limit now in force. For a binary to call at its start, before it opens many files.
pub fn raise_fd_limit() -> u64 {
    use rustix::process::{Resource, getrlimit, setrlimit};
    let mut limit = getrlimit(Resource::Nofile);
    if limit.current != limit.maximum {
        limit.current = limit.maximum;
        if let Err(error) = setrlimit(Resource::Nofile, limit) {
            tracing::debug!(%error, "cannot raise the soft limit on open files");
        }
    }
    fd_limit()
}

/// A peer, as the per-peer bound counts them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Peer {
    V4(u32),
    /// The /64 prefix: one host is given a whole /64.
    V6(u64),
}

impl Peer {
    fn of(ip: IpAddr) -> Self {
        match ip.to_canonical() {
            IpAddr::V4(v4) => Self::V4(u32::from(v4)),
            IpAddr::V6(v6) => Self::V6(u64::try_from(u128::from(v6) >> 64).unwrap_or(0)),
        }
    }
}

/// The open connections, in the order they came (their ids).
#[derive(Debug)]
struct Table {
    bounds: Bounds,
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    next: u64,
    open: HashMap<u64, Open>,
    /// The unproven ones, oldest first.
    unproven: BTreeSet<u64>,
    peers: HashMap<Peer, PeerState>,
    /// The peers holding unproven connections by how many, then by their oldest (the last
    /// entry gives way first past the global bound).
    weights: BTreeSet<Weight>,
}

/// A peer's place in [`Inner::weights`]: its unproven connections, the oldest of them reversed
/// (among equals, the peer whose oldest is oldest sorts last), the peer.
type Weight = (usize, Reverse<u64>, Peer);

fn weight(peer: Peer, state: &PeerState) -> Option<Weight> {
    let oldest = state.unproven.first()?;
    Some((state.unproven.len(), Reverse(*oldest), peer))
}

#[derive(Debug)]
struct Open {
    peer: Peer,
    close: CancellationToken,
}

#[derive(Debug, Default)]
struct PeerState {
    open: usize,
    unproven: BTreeSet<u64>,
}

impl Inner {
    /// Changes `peer`'s state with `change`, keeping its weight in step.
    fn reweigh(&mut self, peer: Peer, change: impl FnOnce(&mut PeerState)) {
        let state = self.peers.entry(peer).or_default();
        if let Some(before) = weight(peer, state) {
            self.weights.remove(&before);
        }
        change(state);
        if let Some(after) = weight(peer, state) {
            self.weights.insert(after);
        }
        if state.open == 0 {
            self.peers.remove(&peer);
        }
    }

    /// Forgets a connection (it ended, or is being pushed out); `None` if already forgotten.
    fn remove(&mut self, id: u64) -> Option<Open> {
        let open = self.open.remove(&id)?;
        self.unproven.remove(&id);
        self.reweigh(open.peer, |state| {
            state.open = state.open.saturating_sub(1);
            state.unproven.remove(&id);
        });
        Some(open)
    }

    /// Closes the unproven connection `id` to make room.
    fn push_out(&mut self, id: u64) {
        if let Some(open) = self.remove(id) {
            open.close.cancel();
        }
    }
}

impl Table {
    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A place for a new connection from `peer`, pushing out the oldest unproven one in the way
    /// (its peer's past the per-peer bound, anyone's past the global one); `None` when every
    /// one in the way is proven.
    fn admit(self: &Arc<Self>, peer: Peer) -> Option<Conn> {
        let mut inner = self.lock();
        let from_peer = inner.peers.get(&peer).map_or(0, |state| state.open);
        if from_peer >= self.bounds.per_peer {
            let oldest = inner
                .peers
                .get(&peer)
                .and_then(|state| state.unproven.first().copied())?;
            inner.push_out(oldest);
        }
        if inner.open.len() >= self.bounds.max {
            let (_, Reverse(oldest), _) = inner.weights.last().copied()?;
            inner.push_out(oldest);
        }
        let id = inner.next;
        inner.next += 1;
        let close = CancellationToken::new();
        inner.open.insert(
            id,
            Open {
                peer,
                close: close.clone(),
            },
        );
        inner.unproven.insert(id);
        inner.reweigh(peer, |state| {
            state.open += 1;
            state.unproven.insert(id);
        });
        Some(Conn {
            id,
            table: Arc::clone(self),
            close,
            proven: AtomicBool::new(false),
        })
    }
}

impl Table {
    /// Closes every unproven connection (at shutdown: none is serving a request that started
    /// anything, and a half-open one must not hold the shutdown up to its header timeout).
    fn close_unproven(&self) {
        let mut inner = self.lock();
        let unproven: Vec<u64> = inner.unproven.iter().copied().collect();
        for id in unproven {
            inner.push_out(id);
        }
    }
}

/// An admitted connection's place; given back when dropped.
#[derive(Debug)]
struct Conn {
    id: u64,
    table: Arc<Table>,
    /// Cancelled when the connection is pushed out.
    close: CancellationToken,
    proven: AtomicBool,
}

impl Conn {
    /// The connection made an authenticated request: it is never pushed out.
    fn prove(&self) {
        if self.proven.swap(true, Ordering::Relaxed) {
            return;
        }
        let mut inner = self.table.lock();
        let Some(peer) = inner.open.get(&self.id).map(|open| open.peer) else {
            return;
        };
        inner.unproven.remove(&self.id);
        let id = self.id;
        inner.reweigh(peer, |state| {
            state.unproven.remove(&id);
        });
    }
}

impl Drop for Conn {
    fn drop(&mut self) {
        self.table.lock().remove(self.id);
    }
}

/// Whether an accept error is about that one connection (go on at once) rather than the
/// process (out of descriptors: wait a little before accepting again).
fn is_connection_error(error: &io::Error) -> bool {
    matches!(
        error.kind(),
        io::ErrorKind::ConnectionRefused
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionReset
    )
}

/// Accepts connections on `listener` and serves `router` on each until `stop` is cancelled,
/// then lets every connection finish (each one closes once its request is answered) and
/// returns.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    bounds: Bounds,
    token: Option<Token>,
    stop: CancellationToken,
) {
    let table = Arc::new(Table {
        bounds,
        inner: Mutex::new(Inner::default()),
    });
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(bounds.header_timeout)
        .max_header_size(MAX_HEAD)
        .max_buf_size(MAX_HEAD);
    let connections = TaskTracker::new();
    let token = token.map(Arc::new);
    let mut refused = 0u64;
    let sockets = Arc::new(Semaphore::new(bounds.sockets.max(bounds.max + 1)));
    loop {
        // A place for the socket first: past the bound, wait for a closing one to go.
        let socket = tokio::select! {
            permit = Arc::clone(&sockets).acquire_owned() => match permit {
                Ok(permit) => permit,
                Err(_) => break,
            },
            () = stop.cancelled() => break,
        };
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(error) if is_connection_error(&error) => continue,
                Err(error) => {
                    tracing::warn!(%error, "cannot accept a connection; retrying in 100 ms");
                    tokio::select! {
                        () = tokio::time::sleep(Duration::from_millis(100)) => continue,
                        () = stop.cancelled() => break,
                    }
                }
            },
            () = stop.cancelled() => break,
        };
        // Small writes go out at once: a stream's events are small frames written one after
        // the other, which Nagle's algorithm held back until the client's delayed ACK (40 ms
        // per event on loopback, seen in the remote bench through the a2a provider).
        if let Err(error) = stream.set_nodelay(true) {
            tracing::debug!(%error, "cannot set TCP_NODELAY");
        }
        let Some(conn) = table.admit(Peer::of(peer.ip())) else {
            refuse(&stream);
            refused += 1;
            if refused.is_power_of_two() {
                tracing::warn!(refused, %peer, "connections past the bounds refused so far");
            }
            continue;
        };
        connections.spawn(connection(
            Accepted {
                stream,
                peer,
                place: socket,
            },
            Arc::new(conn),
            builder.clone(),
            router.clone(),
            token.clone(),
            stop.clone(),
        ));
    }
    drop(listener);
    table.close_unproven();
    connections.close();
    connections.wait().await;
}

/// The short answer to a connection past the bounds; then it is closed (dropped).
fn refuse(stream: &TcpStream) {
    // Never waits: a new connection's send buffer has room for these few bytes.
    let _ = stream.try_write(BUSY);
}

/// Whether a request may prove its connection: it carries the token, or none is needed.
fn admitted(token: Option<&Token>, request: &Request<Incoming>) -> bool {
    token.is_none_or(|token| {
        token.admits(
            request
                .headers()
                .get(header::AUTHORIZATION)
                .map(HeaderValue::as_bytes),
        )
    })
}

/// An accepted socket, with its place among those held.
struct Accepted {
    stream: TcpStream,
    peer: SocketAddr,
    place: OwnedSemaphorePermit,
}

async fn connection(
    accepted: Accepted,
    conn: Arc<Conn>,
    builder: hyper::server::conn::http1::Builder,
    router: Router,
    token: Option<Arc<Token>>,
    stop: CancellationToken,
) {
    // The place is given back once the socket has closed: declared before `served`, it is
    // dropped after it.
    let Accepted {
        stream,
        peer,
        place: _place,
    } = accepted;
    let close = conn.close.clone();
    let service = hyper::service::service_fn(move |request: Request<Incoming>| {
        if admitted(token.as_deref(), &request) {
            conn.prove();
        }
        router.clone().call(request)
    });
    let mut served = pin!(builder.serve_connection(TokioIo::new(stream), service));
    let mut stopping = false;
    loop {
        tokio::select! {
            result = served.as_mut() => {
                if let Err(error) = result {
                    tracing::debug!(%peer, %error, "connection ended");
                }
                break;
            }
            () = stop.cancelled(), if !stopping => {
                stopping = true;
                served.as_mut().graceful_shutdown();
            }
            () = close.cancelled() => {
                tracing::debug!(%peer, "connection pushed out by a newer one");
                break;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    fn table(max: usize, per_peer: usize) -> Arc<Table> {
        Arc::new(Table {
            bounds: Bounds {
                max,
                per_peer,
                header_timeout: Duration::from_secs(1),
                sockets: socket_bound(max, 1 << 20),
            },
            inner: Mutex::new(Inner::default()),
        })
    }

    fn peer(n: u8) -> Peer {
        Peer::of(IpAddr::from([127, 0, 0, n]))
    }

    #[test]
    fn peers_are_addresses_and_ipv6_slash_64s() {
        let v6 = |text: &str| Peer::of(text.parse().unwrap());
        assert_eq!(v6("2001:db8::1"), v6("2001:db8::ffff:1"));
        assert!(v6("2001:db8::1") != v6("2001:db8:0:1::1"));
        assert_eq!(v6("::ffff:127.0.0.2"), peer(2));
        assert!(peer(2) != peer(3));
    }

    #[test]
    fn a_newcomer_pushes_out_the_oldest_unproven_or_is_refused() {
        let table = table(3, 2);
        let a = table.admit(peer(1)).unwrap();
        let b = table.admit(peer(1)).unwrap();
        // Past the per-peer bound: the peer's oldest goes.
        let c = table.admit(peer(1)).unwrap();
        assert_eq!(
            [a.close.is_cancelled(), b.close.is_cancelled()],
            [true, false]
        );
        drop(a);
        b.prove();
        c.prove();
        // The peer's are all proven: refused, while another peer gets in.
        assert!(table.admit(peer(1)).is_none());
        let d = table.admit(peer(2)).unwrap();
        // Past the global bound: the oldest unproven of any peer goes, or none is left.
        let e = table.admit(peer(3)).unwrap();
        assert!(d.close.is_cancelled());
        e.prove();
        assert!(table.admit(peer(4)).is_none());
        drop(b);
        assert!(table.admit(peer(4)).is_some());
        let inner = table.lock();
        assert_eq!(inner.peers.len(), 2);
        // Every connection left is proven: no peer is weighed.
        assert!(inner.weights.is_empty());
    }

    /// A flood from many addresses past the global bound pushes out its own connections, not
    /// a client's fresh one still on its way to its first request: under such a flood the
    /// oldest-first rule closed 2 of 100 authenticated runs' new connections before their
    /// heads were read (`cargo xtask load --slowloris 5000 --slowloris-peers 50` at 1,024
    /// files).
    #[test]
    fn past_the_global_bound_the_peer_holding_the_most_unproven_gives_way() {
        let table = table(8, 8);
        let mut flood = Vec::new();
        for n in 2..6 {
            flood.push(table.admit(peer(n)).unwrap());
            flood.push(table.admit(peer(n)).unwrap());
        }
        let client = table.admit(peer(1)).unwrap();
        for round in 0..16 {
            flood.push(table.admit(peer(2 + round % 4)).unwrap());
        }
        assert!(!client.close.is_cancelled());
        // Among peers holding as many, the one whose oldest is oldest gives way.
        let pushed: Vec<bool> = flood.iter().map(|conn| conn.close.is_cancelled()).collect();
        assert_eq!(pushed.iter().filter(|&&p| p).count(), 17);
        assert!(pushed[..8].iter().all(|&p| p));
    }

    #[test]
    fn sockets_are_bounded_a_little_above_connections_and_within_the_fd_limit() {
        let seen: Vec<usize> = [(512, 1_024), (128, 256), (16_384, 1 << 20), (900, 1_024)]
            .into_iter()
            .map(|(max, limit)| socket_bound(max, limit))
            .collect();
        assert_eq!(seen, [577, 145, 18_433, 901]);
    }

    #[test]
    fn default_bounds_follow_the_fd_limit() {
        let seen: Vec<(usize, usize)> = [1_024, 20_000, 1 << 20, 10]
            .into_iter()
            .map(default_bounds)
            .collect();
        assert_eq!(
            seen,
            [(512, 128), (10_000, 2_500), (16_384, 4_096), (16, 4)]
        );
    }
}
