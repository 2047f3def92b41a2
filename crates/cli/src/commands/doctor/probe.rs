//! The probes of `subagent doctor`: an endpoint reachable (a TCP connect, nothing sent), and the
//! version of an installed CLI (its npm package's `package.json`, else its `--version`).

use std::path::Path;
use std::time::Duration;

use serde_json::Value;
use subagent_process::ProcessSpec;

/// How long a TCP connect may take before an endpoint counts as unreachable.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);
/// How long a CLI's `--version` may take (a node CLI on a loaded machine takes seconds).
const VERSION_TIMEOUT: Duration = Duration::from_secs(30);
/// The most read of a CLI's `--version` output and of a `package.json`.
const VERSION_OUTPUT_BYTES: usize = 4096;
const PACKAGE_JSON_BYTES: u64 = 1 << 20;
/// How many directories above a CLI's file its `package.json` is looked for.
const PACKAGE_DEPTH: usize = 4;

/// Connects to the host and port of `url`, then hangs up.
pub(super) async fn reach(url: &str) -> Result<(), String> {
    let (host, port) =
        host_port(url).ok_or_else(|| "not a URL with a host (scheme://host[:port])".to_owned())?;
    match tokio::time::timeout(
        CONNECT_TIMEOUT,
        tokio::net::TcpStream::connect((host.as_str(), port)),
    )
    .await
    {
        Ok(Ok(_)) => Ok(()),
        Ok(Err(error)) => Err(format!("cannot connect to {host}:{port}: {error}")),
        Err(_) => Err(format!(
            "no answer from {host}:{port} within {} s",
            CONNECT_TIMEOUT.as_secs()
        )),
    }
}

/// The host and port of an `http`, `https`, `ws`, `wss`, `nats` or `tls` URL (the scheme's
/// port when none is given).
fn host_port(url: &str) -> Option<(String, u16)> {
    let (scheme, rest) = url.trim().split_once("://")?;
    let default = match scheme.to_ascii_lowercase().as_str() {
        "http" | "ws" => 80,
        "https" | "wss" => 443,
        "nats" | "tls" => 4222,
        _ => return None,
    };
    let authority = rest.split(['/', '?', '#']).next()?;
    let authority = authority
        .rsplit_once('@')
        .map_or(authority, |(_, host)| host);
    let (host, port) = match authority.strip_prefix('[') {
        Some(bracketed) => {
            let (host, after) = bracketed.split_once(']')?;
            (host, after.strip_prefix(':'))
        }
        None => match authority.rsplit_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (authority, None),
        },
    };
    if host.is_empty() {
        return None;
    }
    let port = match port {
        Some(port) => port.parse().ok()?,
        None => default,
    };
    Some((host.to_owned(), port))
}

/// The version in the `package.json` of `package` that holds the file `program` resolves to
/// (an npm install: `node_modules/.bin/claude` → `@anthropic-ai/claude-code/bin/claude.exe`).
pub(super) fn package_version(program: &Path, package: &str) -> Option<String> {
    let file = std::fs::canonicalize(program).ok()?;
    file.ancestors()
        .skip(1)
        .take(PACKAGE_DEPTH)
        .find_map(|dir| {
            let bytes =
                subagent_session::read_user_file(&dir.join("package.json"), PACKAGE_JSON_BYTES)
                    .ok()?;
            let manifest: Value = serde_json::from_slice(&bytes).ok()?;
            (manifest.get("name")?.as_str()? == package).then(|| manifest.get("version").cloned())
        })
        .flatten()
        .and_then(|version| version.as_str().map(str::to_owned))
}

/// What `PROGRAM --version` prints, when it exits 0 in time.
pub(super) async fn asked_version(spec: ProcessSpec) -> Option<String> {
    let captured = spec
        .arg("--version")
        .capture_output(VERSION_OUTPUT_BYTES)
        .overall_timeout(Some(VERSION_TIMEOUT))
        .spawn()
        .ok()?
        .wait_with_output()
        .await
        .ok()?;
    if !captured.exit.success() {
        return None;
    }
    version_in(&String::from_utf8_lossy(&captured.stdout))
}

/// The first word of `text` shaped like a version (`2.1.197 (Claude Code)`, `codex-cli
/// 0.171.0`, `v1.2.3-beta.1`).
fn version_in(text: &str) -> Option<String> {
    text.split(|c: char| c.is_whitespace() || "(),;".contains(c))
        .map(|word| word.strip_prefix('v').unwrap_or(word))
        .find(|word| {
            let parts: Vec<&str> = word.splitn(3, '.').collect();
            parts.len() == 3
                && parts[..2]
                    .iter()
                    .all(|part| !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit()))
                && parts[2].starts_with(|c: char| c.is_ascii_digit())
        })
        .map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn urls_give_their_host_and_port() {
        let hp = |url: &str| host_port(url).map(|(host, port)| format!("{host} {port}"));
        assert_eq!(
            hp("https://api.anthropic.com").as_deref(),
            Some("api.anthropic.com 443")
        );
        assert_eq!(
            hp("http://127.0.0.1:8080/v1").as_deref(),
            Some("127.0.0.1 8080")
        );
        assert_eq!(
            hp("http://u:p@host:9/.well-known/agent-card.json").as_deref(),
            Some("host 9")
        );
        assert_eq!(hp("nats://127.0.0.1").as_deref(), Some("127.0.0.1 4222"));
        assert_eq!(
            hp("tls://n.example:7422").as_deref(),
            Some("n.example 7422")
        );
        assert_eq!(hp("http://[::1]:3000?x").as_deref(), Some("::1 3000"));
        assert_eq!(hp("wss://h#f").as_deref(), Some("h 443"));
        assert_eq!(hp("127.0.0.1:80"), None);
        assert_eq!(hp("ftp://h"), None);
        assert_eq!(hp("http://:80"), None);
        assert_eq!(hp("http://h:port"), None);
    }

    #[test]
    fn versions_are_read_as_the_clis_print_them() {
        assert_eq!(
            version_in("2.1.197 (Claude Code)\n").as_deref(),
            Some("2.1.197")
        );
        assert_eq!(
            version_in("codex-cli 0.171.0\n").as_deref(),
            Some("0.171.0")
        );
        assert_eq!(
            version_in("tool v1.2.3-beta.1").as_deref(),
            Some("1.2.3-beta.1")
        );
        assert_eq!(version_in("version 1.2"), None);
        assert_eq!(version_in("1.x.3 a.b.c"), None);
        assert_eq!(version_in(""), None);
    }
}
