//! `mcp_servers`: a request's own MCP server is started for its child, connected (its tools
//! listed) and stopped when the child ends. The kit's server (`mcp/kit-server.js`, run by
//! `node`) writes down what it is asked, so the check sees the same for an in-process child and
//! a product CLI's.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use subagent_core::mcp::{McpReach, McpScope, McpServerSpec};
use subagent_core::{Capability, StopReason};

use crate::bench::Bench;
use crate::failure::{ensure, ensure_eq};
use crate::scenarios::HELLO;
use crate::{Adapter, Failure, Verdict};

/// The kit's server's name: its tool is `mcp__kit__echo`.
pub(crate) const SERVER: &str = "kit";

const SCRIPT: &str = include_str!("mcp/kit-server.js");

/// The kit's server, written once per process into the temporary directory.
fn script() -> Result<PathBuf, Failure> {
    let path = std::env::temp_dir().join(format!(
        "subagent-conformance-mcp-{}-{}.js",
        std::process::id(),
        SCRIPT.len()
    ));
    if !path.exists() {
        let partial = path.with_extension("partial");
        std::fs::write(&partial, SCRIPT)
            .and_then(|()| std::fs::rename(&partial, &path))
            .map_err(|e| {
                Failure::new(format!(
                    "conformance mcp_servers: cannot write the kit's MCP server to {}: {e}",
                    path.display()
                ))
            })?;
    }
    Ok(path)
}

/// A fresh log file for one server's words.
pub(crate) fn fresh_log() -> PathBuf {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    std::env::temp_dir().join(format!(
        "subagent-conformance-mcp-{}-{}.log",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ))
}

/// The kit's server as a request's own, writing what it is asked to `log`.
pub(crate) fn kit_server(log: &Path) -> Result<McpServerSpec, Failure> {
    Ok(McpServerSpec {
        name: SERVER.to_owned(),
        reach: McpReach::Stdio {
            command: "node".to_owned(),
            args: vec![script()?.to_string_lossy().into_owned()],
            env: [("KIT_MCP_LOG".to_owned(), log.to_string_lossy().into_owned())].into(),
        },
        scope: McpScope::Agent,
        timeout_ms: None,
    })
}

/// The most of a log read (the kit's server writes a few short lines).
const LOG_BYTES: u64 = 1 << 20;

fn said(log: &Path) -> Vec<String> {
    subagent_session::read_user_text(log, LOG_BYTES)
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// Whether the server the log is of has been told to stop or is gone (killed outright, say).
fn stopped(said: &[String]) -> bool {
    let pid = said.iter().find_map(|line| line.strip_prefix("pid "));
    let gone = pid.is_some_and(|pid| {
        match subagent_session::read_user_text(Path::new(&format!("/proc/{pid}/stat")), LOG_BYTES) {
            Ok(stat) => stat
                .rsplit_once(") ")
                .is_some_and(|(_, rest)| rest.starts_with('Z')),
            Err(error) => error.kind() == std::io::ErrorKind::NotFound,
        }
    });
    gone || said.iter().any(|line| line == "closed")
}

/// A run with the kit's server as its own: the server was initialized and its tools listed
/// (the child connected it), and it is told to stop (its stdin closed) once the run has ended.
pub(crate) async fn mcp_servers(adapter: &dyn Adapter) -> Result<Verdict, Failure> {
    if !adapter
        .factory()
        .capabilities()
        .supports(Capability::McpServers)
    {
        return Ok(Verdict::NotDeclared);
    }
    let bench = Bench::new(adapter, "mcp_servers").await?;
    let log = fresh_log();
    let ended = bench
        .run(
            bench
                .answering(&format!("{HELLO}: say hello"), "hello")
                .mcp_servers(vec![kit_server(&log)?])
                .build(),
        )
        .await?;
    ensure_eq!(
        ended.outcome.status,
        StopReason::Completed,
        "conformance mcp_servers: a run with its own MCP server: {:?}",
        ended.outcome
    );
    let asked = said(&log);
    ensure!(
        asked.iter().any(|m| m == "initialize") && asked.iter().any(|m| m == "tools/list"),
        "conformance mcp_servers: declares mcp_servers but does not honour it: the request's \
         server `{SERVER}` was not started and asked for its tools (it was asked {asked:?}; \
         is `node` on PATH?)"
    );
    let deadline = Instant::now() + Duration::from_secs(20);
    while !stopped(&said(&log)) {
        ensure!(
            Instant::now() < deadline,
            "conformance mcp_servers: the request's server `{SERVER}` still runs 20 s after its \
             child ended (it was asked {:?}): a child's own servers stop with it",
            said(&log)
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let _ = std::fs::remove_file(&log);
    Ok(Verdict::Passed)
}
