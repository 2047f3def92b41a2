//! The providers the harness kills, each as a preset row on the fake model server, and the
//! scenarios they run: a long command through the provider's own shell tool (a tree worth
//! killing: a shell, a `sleep`, and a `setsid` escapee), and a short run that finishes by
//! itself (for cancels at random points).

use std::path::{Path, PathBuf};

use crate::suite::pinned::{claude_code_row, codex_acp_row, codex_row, path_with_bwrap};
use crate::suite::support::write_file;

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

/// The preset of a `subagent serve` or `subagent worker` (and of local spawn and fork runs):
/// spawn and fork on the fake model at `url`, the bash tool allowed.
pub(super) fn local_preset(dir: &Path, url: &str) -> PathBuf {
    write_file(
        dir,
        "local.yaml",
        format!(
            "version: 1\nmodel:\n  kind: anthropic\n  name: fake-model\n  base_url: {url}\n  api_key_env: FAKE_KEY\n  retry:\n    max_retries: 0\nproviders:\n  - name: spawn\n    kind: spawn\n    config:\n      permission_mode: bypass\n  - name: fork\n    kind: fork\n"
        ),
    )
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
        Provider::ClaudeCode => claude_code_row(dir, url, "      allowed_tools: [Bash]\n"),
        Provider::Codex => codex_row(dir, url, "", &format!(", PATH: \"{}\"", path_with_bwrap())),
        Provider::Acp => codex_acp_row(dir, url, "acp"),
        Provider::A2a => format!(
            "  - name: a2a\n    kind: a2a\n    config:\n      url: {}\n      token_env: A2A_TOKEN\n",
            remotes.a2a.as_deref().unwrap()
        ),
        Provider::Nats => format!(
            "  - name: nats\n    kind: nats\n    config:\n      url: {}\n      row: spawn\n",
            remotes.nats.as_deref().unwrap()
        ),
    };
    write_file(
        dir,
        format!("{}.yaml", provider.name()),
        format!("{head}{row}"),
    )
}
