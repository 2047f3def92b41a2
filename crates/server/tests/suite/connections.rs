//! What a client without a token can hold: a connection that sends no complete request head is
//! closed after the header timeout (so is an idle keep-alive one), and connections are bounded
//! per server and per peer address, one of those that have not yet made an authenticated
//! request giving way to a newcomer (its peer's oldest; past the global bound, the oldest of
//! the peer holding the most), so a flood of half-open connections never
//! keeps an authenticated request from being answered.
//!
//! The peers are loopback addresses (`127.0.0.2`, …): a socket bound to one before it connects
//! to the server on `127.0.0.1`.

use std::net::SocketAddr;
use std::time::Duration;

use pretty_assertions::assert_eq;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};

use super::runs::SCENARIOS;
use super::support::{Harness, TOKEN, send_params};

/// Not a timing assertion: a guard so that a server that never closes fails the test instead of
/// hanging it, hundreds of times the timeouts configured here.
const HANG_GUARD: Duration = Duration::from_secs(120);

fn server_addr(harness: &Harness) -> SocketAddr {
    harness.base.trim_start_matches("http://").parse().unwrap()
}

/// A connection to the server from the loopback address `from`.
async fn connect_from(from: &str, server: SocketAddr) -> TcpStream {
    let socket = TcpSocket::new_v4().unwrap();
    socket.bind(format!("{from}:0").parse().unwrap()).unwrap();
    socket.connect(server).await.unwrap()
}

/// A slowloris connection: the start of a request head, never finished.
async fn half_open(from: &str, server: SocketAddr) -> TcpStream {
    let mut stream = connect_from(from, server).await;
    stream
        .write_all(b"POST /a2a HTTP/1.1\r\nHost: x\r\nX-Slow: ")
        .await
        .unwrap();
    stream
}

/// Everything the server sends until it closes the connection (EOF, or a reset counted as
/// one).
async fn until_closed(stream: &mut TcpStream) -> String {
    let mut seen = Vec::new();
    let read = tokio::time::timeout(HANG_GUARD, async {
        let mut buf = [0u8; 4096];
        loop {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => seen.extend_from_slice(&buf[..n]),
            }
        }
    })
    .await;
    assert!(read.is_ok(), "the server kept the connection open");
    String::from_utf8_lossy(&seen).into_owned()
}

/// One authenticated request on `stream`, kept alive; the response's status line, or "" when
/// the server closed the connection first.
async fn card_request(stream: &mut TcpStream) -> String {
    let request = format!(
        "GET /.well-known/agent-card.json HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKEN}\r\n\r\n"
    );
    if stream.write_all(request.as_bytes()).await.is_err() {
        return String::new();
    }
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        match stream.read(&mut byte).await {
            Ok(1) => head.push(byte[0]),
            _ => return String::new(),
        }
    }
    let head = String::from_utf8_lossy(&head).into_owned();
    let length: usize = head
        .lines()
        .find_map(|line| {
            line.to_ascii_lowercase()
                .strip_prefix("content-length: ")
                .map(str::to_owned)
        })
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let mut body = vec![0u8; length];
    if stream.read_exact(&mut body).await.is_err() {
        return String::new();
    }
    head.lines().next().unwrap().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_without_a_complete_request_head_or_idle_is_closed_after_the_header_timeout() {
    let mut harness = Harness::start(SCENARIOS, |config| {
        config.header_timeout = Duration::from_millis(200);
    })
    .await;
    let server = server_addr(&harness);
    let mut silent = connect_from("127.0.0.1", server).await;
    let mut slow = half_open("127.0.0.1", server).await;
    let mut idle = connect_from("127.0.0.1", server).await;
    assert_eq!(card_request(&mut idle).await, "HTTP/1.1 200 OK");
    let closed = [
        until_closed(&mut silent).await,
        until_closed(&mut slow).await,
        until_closed(&mut idle).await,
    ];
    // Closed with nothing said (a head that never came gets no answer).
    assert_eq!(closed, ["", "", ""]);
    harness.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slowloris_flood_past_the_per_peer_and_global_bounds_leaves_authenticated_requests_answered()
 {
    let mut harness = Harness::start(SCENARIOS, |config| {
        config.max_connections = 8;
        config.max_connections_per_peer = 4;
        // Long enough that only the bounds can make room.
        config.header_timeout = Duration::from_secs(3600);
    })
    .await;
    let server = server_addr(&harness);
    // Past the per-peer bound: one address's newest connections push out its oldest.
    let mut one_peer = Vec::new();
    for _ in 0..10 {
        one_peer.push(half_open("127.0.0.2", server).await);
    }
    for stream in &mut one_peer[..6] {
        assert_eq!(until_closed(stream).await, "");
    }
    // Past the global bound, from three more addresses: the peer holding the most half-open
    // connections gives way (its oldest; among equals the peer whose oldest is oldest), so the
    // four addresses end with 1, 2, 2 and 3 of the 8 places, the newest of each kept.
    let mut others = Vec::new();
    for peer in ["127.0.0.3", "127.0.0.4", "127.0.0.5"] {
        for _ in 0..4 {
            others.push(half_open(peer, server).await);
        }
    }
    for stream in one_peer[6..9].iter_mut().chain(
        others
            .iter_mut()
            .enumerate()
            .filter(|(n, _)| [0, 1, 4, 5, 8].contains(n))
            .map(|(_, stream)| stream),
    ) {
        assert_eq!(until_closed(stream).await, "");
    }
    // The server is full of half-open connections: an authenticated client is answered, from
    // an address of its own and from a flooding one.
    let result = harness
        .result(
            "SendMessage",
            send_params("HELLO through the flood", json!({})),
        )
        .await;
    assert_eq!(result["task"]["status"]["state"], "TASK_STATE_COMPLETED");
    let mut from_a_flooder = connect_from("127.0.0.4", server).await;
    assert_eq!(card_request(&mut from_a_flooder).await, "HTTP/1.1 200 OK");
    harness.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn past_the_bound_with_every_connection_authenticated_a_newcomer_gets_a_quick_503() {
    let mut harness = Harness::start(SCENARIOS, |config| {
        config.max_connections = 2;
        config.max_connections_per_peer = 2;
        config.header_timeout = Duration::from_secs(3600);
    })
    .await;
    let server = server_addr(&harness);
    let mut first = connect_from("127.0.0.1", server).await;
    let mut second = connect_from("127.0.0.1", server).await;
    assert_eq!(card_request(&mut first).await, "HTTP/1.1 200 OK");
    assert_eq!(card_request(&mut second).await, "HTTP/1.1 200 OK");
    let mut third = connect_from("127.0.0.1", server).await;
    let refused = until_closed(&mut third).await;
    assert!(
        refused.starts_with("HTTP/1.1 503 Service Unavailable\r\n"),
        "{refused}"
    );
    assert!(refused.ends_with("too many connections\n"), "{refused}");
    // One goes: there is room again (once the server has seen it go: until then a newcomer
    // is still refused, or closed, and tries again).
    drop(first);
    let mut fourth = loop {
        let mut stream = connect_from("127.0.0.1", server).await;
        let status = card_request(&mut stream).await;
        if status == "HTTP/1.1 200 OK" {
            break stream;
        }
        assert!(
            ["", "HTTP/1.1 503 Service Unavailable"].contains(&status.as_str()),
            "{status}"
        );
    };
    // Kept alive: a second request on the same connection.
    assert_eq!(card_request(&mut fourth).await, "HTTP/1.1 200 OK");
    harness.shutdown().await;
}

/// A head past 64 KiB is refused (431, or closed before the answer could be read) rather than
/// buffered: a half-open connection holds at most that much.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_head_past_64_kib_is_refused() {
    let mut harness = Harness::start(SCENARIOS, |_| {}).await;
    let mut stream = connect_from("127.0.0.1", server_addr(&harness)).await;
    let head = format!(
        "GET /.well-known/agent-card.json HTTP/1.1\r\nHost: x\r\nX-Big: {}\r\n\r\n",
        "x".repeat(70 << 10)
    );
    // The server may stop reading before the whole head is written.
    let _ = stream.write_all(head.as_bytes()).await;
    let answer = until_closed(&mut stream).await;
    assert!(
        answer.is_empty() || answer.starts_with("HTTP/1.1 431 Request Header Fields Too Large\r\n"),
        "{answer}"
    );
    harness.shutdown().await;
}
