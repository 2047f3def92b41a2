//! The providers the harness kills, each as a preset row on the fake model server, and the
//! scenarios they run: a long command through the provider's own shell tool (a tree worth
//! killing: a shell, a `sleep`, and a `setsid` escapee), and a short run that finishes by
//! itself (for cancels at random points).

use std::path::{Path, PathBuf};

use crate::suite::support::root;

/// Every provider kind the harness drives, in the order of the table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Provider {
    Spawn,
    Fork,
    ClaudeCode,
    Codex,
    Acp,
    A2a,
    Nats,
}

impl Provider {
    pub(crate) const ALL: [Self; 7] = [
        Self::Spawn,
        Self::Fork,
        Self::ClaudeCode,
        Self::Codex,
        Self::Acp,
        Self::A2a,
        Self::Nats,
    ];

    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Spawn => "spawn",
            Self::Fork => "fork",
            Self::ClaudeCode => "claude-code",
            Self::Codex => "codex",
            Self::Acp => "acp",
            Self::A2a => "a2a",
            Self::Nats => "nats",
        }
    }

    pub(crate) fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|p| p.name() == name)
    }

    /// Whose shell tool runs the commands: ours (bash), Claude Code's (Bash) or Codex's
    /// (exec_command).
    fn shell(self) -> Shell {
        match self {
            Self::ClaudeCode => Shell::Claude,
            Self::Codex | Self::Acp => Shell::Codex,
            _ => Shell::Ours,
        }
    }

    /// The prompt of the long run (a command that never ends by itself). A fork needs its
    /// parent's conversation: it runs under `subagent run`, whose parent forks the task.
    pub(crate) fn long_prompt(self) -> &'static str {
        match self {
            Self::Fork => FORK_LONG,
            _ => self.shell().long_prompt(),
        }
    }

    /// The prompt of the short run (ends by itself with [`DONE`]).
    pub(crate) fn short_prompt(self) -> &'static str {
        match self {
            Self::Fork => FORK_SHORT,
            _ => self.shell().short_prompt(),
        }
    }

    /// The command line after `subagent`: `delegate` to the row, or for a fork `run` (a parent
    /// that forks through its delegation tool).
    pub(crate) fn command(self) -> Vec<&'static str> {
        match self {
            Self::Fork => vec!["run", "--json", "--permission-mode", "bypass"],
            _ => vec!["delegate", "--json", "--provider", self.name()],
        }
    }

    /// Whether the run's processes live on another `subagent` process (serve, worker).
    pub(crate) fn remote(self) -> bool {
        matches!(self, Self::A2a | Self::Nats)
    }
}

#[derive(Clone, Copy)]
enum Shell {
    Ours,
    Claude,
    Codex,
}

impl Shell {
    fn long_prompt(self) -> &'static str {
        match self {
            Self::Ours => "CHAOS-LONG-BASH",
            Self::Claude => "CHAOS-LONG-CLAUDE",
            Self::Codex => "CHAOS-LONG-CODEX",
        }
    }

    fn short_prompt(self) -> &'static str {
        match self {
            Self::Ours => "CHAOS-SHORT-BASH",
            Self::Claude => "CHAOS-SHORT-CLAUDE",
            Self::Codex => "CHAOS-SHORT-CODEX",
        }
    }
}

const FORK_LONG: &str = "CHAOS-FORK-LONG";
const FORK_SHORT: &str = "CHAOS-FORK-SHORT";

/// The text a short run ends with.
pub(super) const DONE: &str = "CHAOS-DONE";

/// The long command: a shell with a `sleep` and a `setsid` escapee (only a subreaper or a
/// process-group kill of the right group finds that one).
const LONG: &str = "setsid sleep 913 & sleep 914; wait";
const SHORT: &str = "sleep 0.3";

/// The fake model's scenarios for every provider kind.
pub(super) fn scenarios() -> String {
    let tool = |shell: Shell, command: &str| match shell {
        Shell::Ours => format!("{{name: bash, input: {{command: '{command}'}}}}"),
        Shell::Claude => {
            format!("{{name: Bash, input: {{command: '{command}', description: 'chaos'}}}}")
        }
        Shell::Codex => format!("{{name: exec_command, input: {{cmd: '{command}'}}}}"),
    };
    let mut yaml = String::new();
    for shell in [Shell::Ours, Shell::Claude, Shell::Codex] {
        yaml.push_str(&format!(
            "- match: '{long}'\n  steps:\n    - text: working\n      tool_calls: [{call}]\n    - text: never\n",
            long = shell.long_prompt(),
            call = tool(shell, LONG),
        ));
        yaml.push_str(&format!(
            "- match: '{short}'\n  steps:\n    - text: one\n      tool_calls: [{call}]\n    - text: {DONE}\n",
            short = shell.short_prompt(),
            call = tool(shell, SHORT),
        ));
    }
    // The parent of a fork: it forks the task (a fork always runs in the background), waits,
    // and answers when the fork's <task-notification> brings its result.
    for (parent, task) in [
        (FORK_LONG, "CHAOS-LONG-BASH"),
        (FORK_SHORT, "CHAOS-SHORT-BASH"),
    ] {
        yaml.push_str(&format!(
            "- match: '{parent}'\n  steps:\n    - tool_calls: [{{name: subagent, input: {{prompt: '{task} (forked)', description: chaos}}}}]\n    - text: waiting for the fork\n"
        ));
    }
    yaml.push_str(&format!(
        "- match: '<result>{DONE}</result>'\n  steps:\n    - text: {DONE} (parent)\n"
    ));
    yaml
}

fn cli(path: &str) -> PathBuf {
    let path = root().join("target/clis/node_modules").join(path);
    assert!(
        path.exists(),
        "{} is missing: run `cargo xtask install-clis`",
        path.display()
    );
    path
}

fn made(dir: &Path, name: &str) -> String {
    let path = dir.join(name);
    std::fs::create_dir_all(&path).unwrap();
    path.display().to_string()
}

/// The preset of a `subagent serve` or `subagent worker` (and of local spawn and fork runs):
/// spawn and fork on the fake model at `url`, the bash tool allowed.
pub(super) fn local_preset(dir: &Path, url: &str) -> PathBuf {
    let path = dir.join("local.yaml");
    std::fs::write(
        &path,
        format!(
            "version: 1\nmodel:\n  kind: anthropic\n  name: fake-model\n  base_url: {url}\n  api_key_env: FAKE_KEY\n  retry:\n    max_retries: 0\nproviders:\n  - name: spawn\n    kind: spawn\n    config:\n      permission_mode: bypass\n  - name: fork\n    kind: fork\n"
        ),
    )
    .unwrap();
    path
}

/// Where the caller's remote rows point.
#[derive(Clone, Debug, Default)]
pub(super) struct Remotes {
    /// `subagent serve`'s base URL.
    pub a2a: Option<String>,
    /// The nats-server's URL.
    pub nats: Option<String>,
}

/// The caller's preset: a row for `provider` named after it.
pub(super) fn caller_preset(
    dir: &Path,
    url: &str,
    provider: Provider,
    remotes: &Remotes,
) -> PathBuf {
    let head = format!(
        "version: 1\nmodel: {{kind: anthropic, name: fake-model, base_url: \"{url}\", api_key_env: FAKE_KEY, retry: {{max_retries: 0}}}}\nproviders:\n"
    );
    let row = match provider {
        Provider::Spawn => {
            return local_preset(dir, url);
        }
        Provider::Fork => {
            let path = local_preset(dir, url);
            let mut text = std::fs::read_to_string(&path).unwrap();
            text.push_str("tools:\n  - {name: subagent, provider: spawn, fork: fork}\n");
            std::fs::write(&path, text).unwrap();
            return path;
        }
        Provider::ClaudeCode => format!(
            r#"  - name: claude-code
    kind: claude-code
    config:
      binary: "{claude}"
      allowed_tools: [Bash]
      timeout_secs: 120
      env: {{HOME: "{home}", CLAUDE_CONFIG_DIR: "{home}/.claude", CLAUDE_CODE_TMPDIR: "{tmp}", ANTHROPIC_BASE_URL: "{url}", ANTHROPIC_API_KEY: dummy, IS_SANDBOX: "1"}}
"#,
            claude = cli(".bin/claude").display(),
            home = made(dir, "home"),
            tmp = made(dir, "tmp"),
        ),
        Provider::Codex => format!(
            r#"  - name: codex
    kind: codex
    config:
      binary: "{codex}"
      model: gpt-5.5
      model_provider: {{id: fake, base_url: "{url}/v1", env_key: OPENAI_API_KEY}}
      codex_home: "{codex_home}"
      timeout_secs: 120
      env: {{HOME: "{home}", TMPDIR: "{tmp}", OPENAI_API_KEY: dummy, PATH: "{path}"}}
"#,
            codex = cli(".bin/codex").display(),
            home = made(dir, "home"),
            tmp = made(dir, "tmp"),
            codex_home = made(dir, "codex-home"),
            path = path_with_bwrap(),
        ),
        Provider::Acp => format!(
            r#"  - name: acp
    kind: acp
    config:
      command: "{codex_acp}"
      args: [-c, 'model_provider="fake"', -c, 'model_providers.fake={{name="fake",base_url="{url}/v1",wire_api="responses",env_key="OPENAI_API_KEY",request_max_retries=0,stream_max_retries=0}}', -c, 'model="gpt-5.5"', -c, analytics.enabled=false, -c, features.plugins=false]
      modes: {{plan: read-only, default: read-only, accept-edits: auto}}
      timeout_secs: 120
      env: {{HOME: "{home}", TMPDIR: "{tmp}", CODEX_HOME: "{codex_home}", OPENAI_API_KEY: dummy, PATH: "{path}"}}
"#,
            codex_acp = cli("@zed-industries/codex-acp-linux-x64/bin/codex-acp").display(),
            home = made(dir, "home"),
            tmp = made(dir, "tmp"),
            codex_home = made(dir, "codex-home"),
            path = path_with_bwrap(),
        ),
        Provider::A2a => format!(
            "  - name: a2a\n    kind: a2a\n    config:\n      url: {}\n      token_env: A2A_TOKEN\n",
            remotes.a2a.as_deref().unwrap()
        ),
        Provider::Nats => format!(
            "  - name: nats\n    kind: nats\n    config:\n      url: {}\n      row: spawn\n",
            remotes.nats.as_deref().unwrap()
        ),
    };
    let path = dir.join(format!("{}.yaml", provider.name()));
    std::fs::write(&path, format!("{head}{row}")).unwrap();
    path
}

/// `PATH` with the directory of the pinned codex's `bwrap` first (its sandbox runs commands
/// through it).
fn path_with_bwrap() -> String {
    let bwrap =
        cli("@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/codex-resources/bwrap");
    format!(
        "{}:{}",
        bwrap.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    )
}
