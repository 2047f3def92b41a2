//! What the commands that serve over HTTP (`serve`, `mcp --listen`) share: the bearer token
//! (from an environment variable or a file, never the command line, where any local user reads
//! it in the process list), the address (anything but loopback only with a token) and the
//! listening socket. Every refusal here is `INVALID_ARGUMENTS`, naming the flag.

use std::net::SocketAddr;

use subagent_http::Token;
use tokio::net::TcpListener;

use crate::Refusal;
#[cfg(any(feature = "serve", feature = "mcp"))]
use crate::args::TokenArgs;

/// The largest token file read, in bytes.
#[cfg(any(feature = "serve", feature = "mcp"))]
const MAX_TOKEN_FILE: u64 = 64 << 10;

/// The token named by `--token-env` or `--token-file`, if any.
#[cfg(any(feature = "serve", feature = "mcp"))]
pub(crate) fn token(args: &TokenArgs) -> Result<Option<Token>, Refusal> {
    if let Some(name) = &args.token_env {
        let value = subagent_session::env::var(name).ok_or_else(|| {
            Refusal::invalid(format!(
                "--token-env {name}: the variable is not set (or not UTF-8)"
            ))
        })?;
        return Token::new(&value)
            .map(Some)
            .ok_or_else(|| Refusal::invalid(format!("--token-env {name}: the variable is empty")));
    }
    if let Some(path) = &args.token_file {
        let bytes = subagent_session::read_user_file(path, MAX_TOKEN_FILE).map_err(|error| {
            Refusal::invalid(format!("--token-file {}: {error}", path.display()))
        })?;
        let text = String::from_utf8(bytes)
            .map_err(|_| Refusal::invalid(format!("--token-file {}: not UTF-8", path.display())))?;
        return Token::new(&text).map(Some).ok_or_else(|| {
            Refusal::invalid(format!(
                "--token-file {}: the file is empty",
                path.display()
            ))
        });
    }
    Ok(None)
}

/// The address of `--listen`; one beyond this machine only with a token.
pub(crate) fn address(listen: &str, token: Option<&Token>) -> Result<SocketAddr, Refusal> {
    let addr: SocketAddr = listen.parse().map_err(|_| {
        Refusal::invalid(format!(
            "--listen {listen}: not an address (IP:PORT, e.g. 127.0.0.1:8080)"
        ))
    })?;
    if token.is_none() && !addr.ip().is_loopback() {
        return Err(Refusal::invalid(format!(
            "--listen {addr}: serving beyond this machine needs a token (--token-env VAR or --token-file FILE)"
        )));
    }
    Ok(addr)
}

/// The listening socket on `addr` (a port in use is refused here) and the address it got (the
/// real port when 0 was asked).
pub(crate) fn bind(addr: SocketAddr) -> Result<(TcpListener, SocketAddr), Refusal> {
    let refused = |error: std::io::Error| Refusal::invalid(format!("--listen {addr}: {error}"));
    let listener = listen(addr).map_err(refused)?;
    let bound = listener.local_addr().map_err(refused)?;
    Ok((listener, bound))
}

/// The listening socket, its backlog 4096 (the kernel caps it at its `somaxconn`): with tokio's
/// default of 1,024, 1,000 clients connecting at once overflowed the accept queue and the
/// dropped ones came back only after the kernel's 1 s SYN retransmit (docs/performance.md).
fn listen(addr: SocketAddr) -> std::io::Result<TcpListener> {
    let socket = if addr.is_ipv4() {
        tokio::net::TcpSocket::new_v4()?
    } else {
        tokio::net::TcpSocket::new_v6()?
    };
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    socket.listen(4096)
}
