//! What every end-to-end test needs: the installed adapters, a fake model server, and a sandbox
//! of temp dirs (HOME, CODEX_HOME, TMPDIR, a project outside any git repo) passed to the agent
//! through the provider's config, never through this process's environment.

use std::path::{Path, PathBuf};

use subagent_acp::{AcpConfig, AcpProvider};
use subagent_core::{StartRequest, StartRequestBuilder};
use subagent_test_support::FakeServer;
use tempfile::TempDir;

/// The model slug codex-acp asks for: in codex's bundled catalog.
pub(super) const CODEX_MODEL: &str = "gpt-5.5";

fn clis() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/clis/node_modules")
}

fn installed(path: PathBuf) -> PathBuf {
    assert!(
        path.is_file(),
        "the e2e tests need {}; install the pinned adapters with `cargo xtask install-clis`",
        path.display()
    );
    path
}

/// The two pinned adapters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Adapter {
    /// `@zed-industries/codex-acp` 0.16.0 (native).
    Codex,
    /// `@zed-industries/claude-agent-acp` 0.23.1 (node), running the pinned `claude`.
    Claude,
}

/// The row config of `adapter` pointed at `server`, with its sandbox under `root`.
pub(super) fn config(adapter: Adapter, server: &FakeServer, root: &Path) -> AcpConfig {
    for dir in ["home", "home/.claude", "codex-home", "tmp"] {
        std::fs::create_dir_all(root.join(dir)).unwrap();
    }
    let dir = |name: &str| root.join(name).display().to_string();
    let mut config = match adapter {
        Adapter::Codex => {
            let mut config = AcpConfig::new(installed(
                clis().join("@zed-industries/codex-acp-linux-x64/bin/codex-acp"),
            ));
            let provider = format!(
                "model_providers.fake={{name=\"fake\",base_url=\"{}/v1\",wire_api=\"responses\",\
                 env_key=\"OPENAI_API_KEY\",request_max_retries=0,stream_max_retries=0}}",
                server.url()
            );
            for value in [
                "model_provider=\"fake\"".to_owned(),
                provider,
                format!("model=\"{CODEX_MODEL}\""),
                "analytics.enabled=false".to_owned(),
                "features.plugins=false".to_owned(),
            ] {
                config.args.extend(["-c".to_owned(), value]);
            }
            // Its sandboxed commands need a `bwrap` on PATH: the one shipped with codex.
            let bwrap = installed(clis().join(
                "@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/codex-resources/bwrap",
            ));
            let path = std::env::var("PATH").unwrap_or_default();
            let bwrap_dir = bwrap.parent().unwrap().display().to_string();
            config.env.extend([
                ("PATH".to_owned(), format!("{bwrap_dir}:{path}")),
                ("CODEX_HOME".to_owned(), dir("codex-home")),
                ("OPENAI_API_KEY".to_owned(), "dummy".to_owned()),
            ]);
            config.modes = [
                ("plan".to_owned(), "read-only".to_owned()),
                ("default".to_owned(), "read-only".to_owned()),
                ("accept-edits".to_owned(), "auto".to_owned()),
                ("bypass".to_owned(), "full-access".to_owned()),
            ]
            .into();
            config
        }
        Adapter::Claude => {
            let mut config = AcpConfig::new("node");
            config.args = vec![
                installed(clis().join("@zed-industries/claude-agent-acp/dist/index.js"))
                    .display()
                    .to_string(),
            ];
            config.env.extend([
                ("IS_SANDBOX".to_owned(), "1".to_owned()),
                (
                    "CLAUDE_CODE_EXECUTABLE".to_owned(),
                    installed(clis().join(".bin/claude")).display().to_string(),
                ),
                ("CLAUDE_CONFIG_DIR".to_owned(), dir("home/.claude")),
                ("CLAUDE_CODE_TMPDIR".to_owned(), dir("tmp")),
                ("ANTHROPIC_BASE_URL".to_owned(), server.url()),
                ("ANTHROPIC_API_KEY".to_owned(), "dummy".to_owned()),
                (
                    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC".to_owned(),
                    "1".to_owned(),
                ),
            ]);
            // claude's own `plan` mode runs tools unasked when bypass is available (as root with
            // IS_SANDBOX=1, claude-agent-acp makes it so): `dontAsk` holds a plan ceiling.
            config.modes = [
                ("plan".to_owned(), "dontAsk".to_owned()),
                ("dont-ask".to_owned(), "dontAsk".to_owned()),
                ("default".to_owned(), "default".to_owned()),
                ("accept-edits".to_owned(), "acceptEdits".to_owned()),
                ("bypass".to_owned(), "bypassPermissions".to_owned()),
            ]
            .into();
            config
        }
    };
    config.env.extend([
        ("HOME".to_owned(), dir("home")),
        ("TMPDIR".to_owned(), dir("tmp")),
    ]);
    config.grace_ms = 3000;
    config.timeout_secs = Some(120);
    config
}

/// A fake server plus the temp dirs of one test.
pub(super) struct Harness {
    pub server: FakeServer,
    root: TempDir,
}

impl Harness {
    pub(super) async fn new(scenarios: &str) -> Self {
        let server = FakeServer::from_yaml(scenarios).await.unwrap();
        let root = subagent_test_support::sandbox::dirs("subagent-acp-e2e-", &["project"]);
        Self { server, root }
    }

    pub(super) fn project(&self) -> PathBuf {
        self.root.path().join("project")
    }

    pub(super) fn config(&self, adapter: Adapter) -> AcpConfig {
        config(adapter, &self.server, self.root.path())
    }

    pub(super) fn provider(
        &self,
        adapter: Adapter,
        adjust: impl FnOnce(&mut AcpConfig),
    ) -> AcpProvider {
        let mut config = self.config(adapter);
        adjust(&mut config);
        AcpProvider::new("acp", config).unwrap()
    }

    pub(super) fn request(&self, prompt: &str) -> StartRequestBuilder {
        StartRequest::builder(prompt).cwd(self.project())
    }
}

/// Live processes whose command line contains `needle`, as `PID: CMDLINE`.
pub(super) use subagent_test_support::procs::live_lines_with as live_processes_matching;
