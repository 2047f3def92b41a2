//! Every way `subagent` can die mid-run leaves nothing running: SIGTERM and SIGHUP cancel the run
//! like a first Ctrl-C and exit 143 / 129; SIGKILL cannot be handled, and the guardian of each
//! child tree cleans up instead. Several tries of each, with the in-process bash tool (whose
//! command also starts a `setsid` escapee) and, with the `e2e` feature, the real `claude` running
//! a `sleep` through its Bash tool (which runs in a session of its own).

use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use subagent_test_support::FakeServer;

use super::support::write_file;
use super::support::{Subagent, bin};
use super::support::{processes_with, wait_for};

/// How many tries of each signal run per provider in the normal suite.
const TRIES: u32 = 3;

#[derive(Clone, Copy, Debug)]
enum Death {
    Term,
    Hup,
    Kill,
}

impl Death {
    const ALL: [Self; 3] = [Self::Term, Self::Hup, Self::Kill];

    fn flag(self) -> &'static str {
        match self {
            Self::Term => "-TERM",
            Self::Hup => "-HUP",
            Self::Kill => "-KILL",
        }
    }
}

/// A marker no other test uses: a `sleep` length with a fraction unique to this try.
fn marker(death: Death, attempt: u32) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or_default();
    format!(
        "sleep 900.{}{}{:09}",
        death as u32,
        attempt,
        (nanos ^ std::process::id()) % 1_000_000_000
    )
}

fn subagent(dir: &Path) -> std::process::Command {
    let mut command = Subagent::new(bin(), dir).fake_key().command();
    command.stdout(Stdio::piped()).stderr(Stdio::piped());
    command
}

/// Sends the signal once `expected` processes carry the marker, then checks how `subagent` ended
/// and that, 5 s later at most, nothing with the marker is alive.
fn kill_mid_run(mut child: Child, death: Death, marker: &str, expected: usize) {
    wait_for("the child's processes to start", || {
        processes_with(marker).len() >= expected
    });
    let status = std::process::Command::new("kill")
        .args([death.flag(), &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let _ = child.stdin.take();
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    match death {
        Death::Term | Death::Hup => {
            let code = if matches!(death, Death::Term) {
                143
            } else {
                129
            };
            assert_eq!(output.status.code(), Some(code), "{stderr}");
            let stdout = String::from_utf8_lossy(&output.stdout);
            let outcome: serde_json::Value =
                serde_json::from_str(stdout.lines().last().unwrap_or("{}")).unwrap();
            assert_eq!(outcome["status"], "cancelled", "{stdout}\n{stderr}");
        }
        Death::Kill => {
            use std::os::unix::process::ExitStatusExt as _;
            assert_eq!(output.status.signal(), Some(9), "{stderr}");
        }
    }
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let left = processes_with(marker);
        if left.is_empty() {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "{death:?}: left behind 5 s later: {left:?}\n{stderr}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn bash_preset(dir: &Path, url: &str) -> PathBuf {
    write_file(
        dir,
        "bash.yaml",
        format!(
            "version: 1\nmodel:\n  kind: anthropic\n  name: fake-model\n  base_url: {url}\n  api_key_env: FAKE_KEY\nproviders:\n  - name: spawn\n    kind: spawn\n    config:\n      permission_mode: bypass\n"
        ),
    )
}

fn bash_tool(death: Death) {
    for attempt in 0..TRIES {
        let marker = marker(death, attempt);
        let scenario = format!(
            "- match: 'run the sleepers'\n  steps:\n    - tool_calls:\n        - name: bash\n          input: {{command: 'setsid {marker} & {marker}'}}\n    - text: never\n"
        );
        let runtime = tokio::runtime::Runtime::new().unwrap();
        let server = runtime.block_on(FakeServer::from_yaml(&scenario)).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let preset = bash_preset(dir.path(), &server.url());
        let child = subagent(dir.path())
            .args(["delegate", "--json", "--provider", "spawn", "--preset"])
            .arg(&preset)
            .arg("run the sleepers")
            .spawn()
            .unwrap();
        // The shell (whose command line holds the marker twice) and both sleeps.
        kill_mid_run(child, death, &marker, 3);
        drop(runtime);
    }
}

/// SIGTERM and SIGHUP mid bash tool cancel the run and leave nothing; SIGKILL leaves nothing.
#[test]
fn each_signal_mid_bash_tool_leaves_nothing() {
    Death::ALL.into_iter().for_each(bash_tool);
}

#[cfg(feature = "e2e")]
mod claude {
    use super::*;
    use crate::suite::pinned::claude_code_row;

    fn preset(dir: &Path, url: &str) -> PathBuf {
        let row = claude_code_row(dir, url, "      allowed_tools: [Bash]\n");
        write_file(dir, "claude.yaml", format!("version: 1\nproviders:\n{row}"))
    }

    fn claude_bash(death: Death) {
        for attempt in 0..TRIES {
            let marker = marker(death, attempt);
            let scenario = format!(
                "- match: 'SLEEP-IN-BASH'\n  steps:\n    - tool_calls:\n        - name: Bash\n          input: {{command: '{marker}', description: 'wait'}}\n    - text: never\n"
            );
            let runtime = tokio::runtime::Runtime::new().unwrap();
            let server = runtime.block_on(FakeServer::from_yaml(&scenario)).unwrap();
            let dir = tempfile::Builder::new()
                .prefix("subagent-termination-e2e-")
                .tempdir()
                .unwrap();
            let preset = preset(dir.path(), &server.url());
            let project = dir.path().join("project");
            std::fs::create_dir(&project).unwrap();
            let child = subagent(&project)
                .args([
                    "delegate",
                    "--json",
                    "--provider",
                    "claude-code",
                    "--preset",
                ])
                .arg(&preset)
                .arg("SLEEP-IN-BASH")
                .spawn()
                .unwrap();
            // claude's shell and its sleep.
            kill_mid_run(child, death, &marker, 2);
            drop(runtime);
        }
    }

    /// SIGTERM and SIGHUP mid claude Bash cancel the run and leave nothing; SIGKILL leaves
    /// nothing.
    #[test]
    fn each_signal_mid_claude_bash_leaves_nothing() {
        Death::ALL.into_iter().for_each(claude_bash);
    }
}

/// `setsid sleep &` in a bash tool command never outlives its call: the next call of the same
/// run finds no trace of it (the guardian adopted and killed it when the shell exited).
#[test]
fn a_setsid_escapee_never_outlives_its_bash_call() {
    const CALLS: u32 = 6;
    let marker = marker(Death::Term, 9);
    // A bracket in the pattern keeps pgrep's own shell (whose command line spells the pattern)
    // from matching.
    let (head, last) = marker.split_at(marker.len() - 1);
    let pattern = format!("{head}[{last}]");
    let mut steps = String::new();
    for _ in 0..CALLS {
        steps.push_str(&format!(
            "    - tool_calls:\n        - name: bash\n          input: {{command: 'setsid {marker} >/dev/null 2>&1 & echo started'}}\n    - tool_calls:\n        - name: bash\n          input: {{command: 'echo left=$(pgrep -fc \"{pattern}\")'}}\n"
        ));
    }
    let scenario = format!("- match: 'escape'\n  steps:\n{steps}    - text: all calls returned\n");
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(FakeServer::from_yaml(&scenario)).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let preset = bash_preset(dir.path(), &server.url());
    let output = subagent(dir.path())
        .args(["delegate", "--json", "--provider", "spawn", "--preset"])
        .arg(&preset)
        .arg("escape")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{stdout}");
    let counts: Vec<&str> = stdout
        .match_indices("left=")
        .map(|(at, _)| &stdout[at..at + 6])
        .filter(|count| *count != "left=$")
        .collect();
    assert_eq!(
        stdout.matches(r"<stdout>\nstarted").count(),
        CALLS as usize,
        "{stdout}"
    );
    assert_eq!(counts, vec!["left=0"; CALLS as usize], "{stdout}");
    drop(runtime);
}

/// Every child runs under the small `subagent-guardian` installed beside `subagent` (as cargo
/// builds and installs them), not under a re-executed copy of `subagent`: the bash tool's shell
/// reads its parent's command line.
#[test]
fn children_run_under_the_guardian_binary_beside_subagent() {
    let scenario = "- match: 'who guards'\n  steps:\n    - tool_calls:\n        - name: bash\n          input: {command: \"tr '\\\\0' ' ' < /proc/$PPID/cmdline > guardian.txt\"}\n    - text: done\n";
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(FakeServer::from_yaml(scenario)).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let preset = bash_preset(dir.path(), &server.url());
    let output = subagent(dir.path())
        .args(["delegate", "--json", "--provider", "spawn", "--preset"])
        .arg(&preset)
        .arg("who guards")
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let guardian = std::fs::read_to_string(dir.path().join("guardian.txt")).unwrap();
    let expected = assert_cmd::cargo::cargo_bin("subagent-guardian");
    assert!(
        guardian.starts_with(&format!("{} __subagent_guard ", expected.display())),
        "{guardian}"
    );
    drop(runtime);
}
