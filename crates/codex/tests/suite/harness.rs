//! What every end-to-end test needs: the installed CLI, a fake model server, and a sandbox of
//! temp dirs (HOME, CODEX_HOME, TMPDIR, a project outside any git repo) passed to codex through
//! the provider's config, never through this process's environment.

use std::path::{Path, PathBuf};

use subagent_codex::{CodexConfig, CodexProvider, ModelProviderConfig, SandboxMode};
use subagent_core::{Outcome, Run, RunEvent, StartRequest, StartRequestBuilder};
use subagent_test_support::FakeServer;
use tempfile::TempDir;

/// The model slug the tests ask for: in codex's bundled catalog, so no metadata warning.
pub(super) const MODEL: &str = "gpt-5.5";

/// The installed codex: the native binary when present (~100 ms faster), else the npm wrapper.
pub(super) fn codex_binary() -> PathBuf {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let clis = workspace.join("target/clis/node_modules");
    let native = clis.join("@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex");
    if native.is_file() {
        return native;
    }
    let wrapper = clis.join(".bin/codex");
    assert!(
        wrapper.is_file(),
        "the e2e tests need the codex CLI at {} (or the native binary at {}); install it with \
         `cargo xtask install-clis` or `npm install --prefix target/clis @openai/codex@0.171.0`",
        wrapper.display(),
        native.display()
    );
    wrapper
}

/// The config of a codex in the sandbox of temp dirs under `root` (`home`, `codex-home`, `tmp`),
/// its model provider `server`, read-only.
pub(super) fn config(root: &Path, server: &FakeServer) -> CodexConfig {
    let dir = |name: &str| root.join(name).display().to_string();
    CodexConfig {
        binary: codex_binary(),
        model: Some(MODEL.into()),
        model_provider: Some(ModelProviderConfig {
            id: "fake".into(),
            base_url: format!("{}/v1", server.url()),
            env_key: "OPENAI_API_KEY".into(),
            request_max_retries: 0,
            stream_max_retries: 0,
        }),
        sandbox: SandboxMode::ReadOnly,
        codex_home: Some(root.join("codex-home")),
        env: [
            ("HOME".to_owned(), dir("home")),
            ("TMPDIR".to_owned(), dir("tmp")),
            ("OPENAI_API_KEY".to_owned(), "dummy".to_owned()),
        ]
        .into(),
        grace_ms: 1000,
        idle_timeout_secs: 120,
        timeout_secs: Some(120),
        ..CodexConfig::default()
    }
}

/// A fake server plus the temp dirs of one test.
pub(super) struct Harness {
    pub server: FakeServer,
    root: TempDir,
}

impl Harness {
    pub(super) async fn new(scenarios: &str) -> Self {
        let server = FakeServer::from_yaml(scenarios).await.unwrap();
        let root = subagent_test_support::sandbox::dirs(
            "subagent-codex-e2e-",
            &["home", "codex-home", "tmp", "project"],
        );
        let harness = Self { server, root };
        assert!(
            !subagent_codex::inside_git_repo(&harness.project()),
            "the project dir must be outside any git repo"
        );
        harness
    }

    pub(super) fn project(&self) -> PathBuf {
        self.root.path().join("project")
    }

    /// The config every test starts from.
    pub(super) fn config(&self) -> CodexConfig {
        config(self.root.path(), &self.server)
    }

    pub(super) fn provider(&self, adjust: impl FnOnce(&mut CodexConfig)) -> CodexProvider {
        let mut config = self.config();
        adjust(&mut config);
        CodexProvider::new("codex", config).unwrap()
    }

    pub(super) fn request(&self, prompt: &str) -> StartRequestBuilder {
        StartRequest::builder(prompt).cwd(self.project())
    }
}

/// Collects every event and the outcome of a run (which must end within 300 s).
pub(super) async fn finish(run: Run) -> (Vec<RunEvent>, Outcome) {
    subagent_test_support::runs::finish_within(run, std::time::Duration::from_secs(300)).await
}

pub(super) use subagent_test_support::runs::texts;

/// Live processes whose command line contains `needle`, as `PID: CMDLINE`.
pub(super) use subagent_test_support::procs::live_lines_with as live_processes_matching;
