//! Set-ups the benchmarks share: a runtime, the offline scripted model and a registry of one
//! provider on it (which tests use too), and for the product providers' overhead benches the fake model server on a
//! runtime apart, the pairs asked for and the installed CLI.
//!
//! Deliberately not here: any provider (this crate depends on none); a bench builds its own
//! and hands it to [`registry_of`].

use std::path::{Path, PathBuf};
use std::sync::Arc;

use subagent_core::SubagentProvider;
use subagent_core::registry::Registry;
use subagent_model::{Model, Scenarios, ScriptedModel};
use tokio::runtime::Runtime;

use crate::FakeServer;

/// The scenario most benchmarks run: a prompt with `HELLO` is answered `Hi there.` in one turn.
pub const HELLO: &str = r#"
- name: hello
  match: "HELLO"
  steps:
    - text: "Hi there."
"#;

/// A multi-threaded tokio runtime of `workers` threads, every driver on.
///
/// # Panics
/// When the runtime cannot be built.
#[must_use]
pub fn runtime(workers: usize) -> Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("a runtime of {workers} workers: {e}"))
}

/// The offline scripted model (named `bench`) playing `scenarios`.
///
/// # Panics
/// When `scenarios` does not parse.
#[must_use]
pub fn scripted(scenarios: &str) -> Arc<dyn Model> {
    let scenarios =
        Scenarios::from_yaml(scenarios).unwrap_or_else(|e| panic!("the bench scenarios: {e}"));
    Arc::new(ScriptedModel::new("bench", scenarios))
}

/// A registry holding `provider` alone.
///
/// # Panics
/// When the registry refuses it.
#[must_use]
pub fn registry_of(provider: impl SubagentProvider + 'static) -> Registry {
    let registry = Registry::new();
    registry
        .register(Arc::new(provider))
        .unwrap_or_else(|e| panic!("registering the bench's provider: {e}"));
    registry
}

/// The first argument that is a number (`cargo bench … -- PAIRS`), else `default`.
#[must_use]
pub fn pairs(default: usize) -> usize {
    std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(default)
}

/// A fake model server that answers every prompt `hi from fake`, on a runtime of its own (one
/// worker) so that the runtime of the provider measured does only its own work. The server
/// lives as long as the runtime returned with it.
///
/// # Panics
/// When the runtime or the server cannot start.
#[must_use]
pub fn fake_server_apart() -> (Runtime, FakeServer) {
    server_apart("- match: \".*\"\n  steps:\n    - text: \"hi from fake\"\n")
}

/// A fake model server playing `scenarios` (YAML), on a runtime of its own (one worker): a
/// model provider is another process, so its work does not run on the measured workers. The
/// server lives as long as the runtime returned with it.
///
/// # Panics
/// When the runtime or the server cannot start.
#[must_use]
pub fn server_apart(scenarios: &str) -> (Runtime, FakeServer) {
    let runtime = runtime(1);
    let server = runtime
        .block_on(FakeServer::from_yaml(scenarios))
        .unwrap_or_else(|e| panic!("the fake server: {e}"));
    (runtime, server)
}

/// Our Anthropic client pointed at `server` (no retries), as a preset builds it.
///
/// # Panics
/// When the client cannot be built.
#[must_use]
pub fn anthropic(server: &FakeServer) -> Arc<dyn Model> {
    let mut config =
        subagent_model::ModelConfig::new(subagent_model::ModelKind::Anthropic, "fake-model")
            .with_base_url(server.url());
    config.retry.max_retries = 0;
    subagent_model::build_with_env(&config, |_| Some("bench-key".to_owned()))
        .unwrap_or_else(|e| panic!("the Anthropic client: {e}"))
}

/// The installed CLI at `path` below `target/clis/node_modules` (`cargo xtask install-clis`).
///
/// # Panics
/// When it is not there.
#[must_use]
pub fn installed_cli(path: &str) -> PathBuf {
    let cli = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../target/clis/node_modules")
        .join(path);
    assert!(
        cli.is_file(),
        "needs {} (cargo xtask install-clis)",
        cli.display()
    );
    cli
}
