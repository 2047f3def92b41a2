//! The servers a run uses, started and called for real.

use std::path::PathBuf;
use std::time::Duration;

use subagent_mcp_client::{McpServers, Options, ServerConfig, Source, parse_servers};

mod everything;
mod failures;
mod http;

/// The servers `json` (an `mcpServers` object) as a preset would configure them.
fn servers(json: serde_json::Value) -> Vec<ServerConfig> {
    let path = PathBuf::from("/test/preset.yaml");
    parse_servers(
        &json,
        &Source::Preset { path: path.clone() },
        &path,
        &|name| std::env::var(name).ok(),
    )
    .unwrap()
}

/// `configs` started in a fresh directory, with a startup timeout of `startup` and a call
/// timeout of `call`.
fn started(
    configs: Vec<ServerConfig>,
    startup: Duration,
    call: Duration,
) -> (McpServers, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let mut options = Options::new(dir.path(), subagent_process::Secrets::new());
    options.startup_timeout = startup;
    options.call_timeout = call;
    (McpServers::new(configs, options), dir)
}

/// The node fixture `name` under `tests/fixtures`.
fn fixture(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
        .display()
        .to_string()
}
