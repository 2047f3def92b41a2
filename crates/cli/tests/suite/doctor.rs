//! `subagent doctor`, `subagent completions` and `subagent man`, as a user runs them: the checks
//! against real CLIs (the pinned ones with `e2e`, fake ones printing other versions), real
//! listeners and ports with nothing behind them, and the scripts and page loaded by bash and
//! `man`.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use pretty_assertions::assert_eq;

use super::support::write_file;
use super::support::{Project, stderr, stdout, subagent};

/// A preset in `dir` with `model` as its model section and `rows` under `providers:`.
fn preset(dir: &Path, model: &str, rows: &str) -> PathBuf {
    let path = dir.join("doctor.yaml");
    let text = format!(
        "version: 1\nmodel: {model}\nproviders:\n  - {{name: spawn, kind: spawn}}\n{rows}tools:\n  - {{name: subagent, provider: spawn}}\n"
    );
    std::fs::write(&path, text).unwrap();
    path
}

const OFFLINE: &str = "{kind: scripted, name: scripted-offline}";

/// A directory holding an executable `name` that prints `version_line` for `--version`.
fn fake_cli(dir: &Path, name: &str, version_line: &str) {
    std::fs::create_dir_all(dir).unwrap();
    let path = write_file(
        dir,
        name,
        format!("#!/bin/sh\nif [ \"$1\" = --version ]; then echo '{version_line}'; fi\n"),
    );
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// A port of 127.0.0.1 with nothing listening (bound, then let go).
fn closed_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

/// The report's lines without the summary, each cut to its status and subject.
fn verdicts(out: &str) -> Vec<String> {
    out.lines()
        .filter(|line| !line.starts_with("everything") && !line.starts_with("cannot run"))
        .map(|line| {
            let (status, rest) = line.split_once(' ').unwrap();
            let subject = rest.trim_start().split(':').next().unwrap();
            format!("{status} {subject}")
        })
        .collect()
}

/// `subagent doctor FLAGS --preset PRESET` in the project with `env` set; asserts it exited
/// `code` and returns its stdout.
fn doctor(
    project: &Project,
    flags: &[&str],
    preset: &Path,
    env: &[(&str, &str)],
    code: i32,
) -> String {
    let output = project
        .subagent()
        .envs(env.iter().copied())
        .arg("doctor")
        .args(flags)
        .arg("--preset")
        .arg(preset)
        .output()
        .unwrap();
    let out = stdout(&output);
    assert_eq!(output.status.code(), Some(code), "{out}{}", stderr(&output));
    out
}

#[test]
fn a_missing_cli_is_missing_with_the_npm_line_and_exit_1() {
    let project = Project::new();
    let empty = project.outside().join("empty-path");
    std::fs::create_dir_all(&empty).unwrap();
    let preset = preset(
        &project.path,
        OFFLINE,
        "  - {name: claude, kind: claude-code}\n",
    );
    let out = doctor(
        &project,
        &[],
        &preset,
        &[("PATH", empty.to_str().unwrap())],
        1,
    );
    assert_eq!(
        verdicts(&out),
        ["ok model", "ok spawn", "missing claude", "ok state dir"]
    );
    let line = out.lines().find(|l| l.starts_with("missing")).unwrap();
    assert!(
        line.starts_with(
            "missing  claude: `claude` not found on PATH — install it with `npm install -g @anthropic-ai/claude-code@2.1.197`"
        ),
        "{line}"
    );
    assert_eq!(
        out.lines().last().unwrap(),
        "cannot run: claude; fix the missing lines, then run `subagent doctor` again"
    );
}

/// A CLI printing another version than the tested one runs: a warning, exit 0; one printing the
/// tested version is ok; a row's `binary` wins over `PATH`.
#[test]
fn a_cli_of_another_version_is_a_warning_and_the_rows_binary_wins_over_path() {
    let project = Project::new();
    let on_path = project.outside().join("on-path");
    let own = project.outside().join("own");
    fake_cli(&on_path, "codex", "codex-cli 0.1.0");
    fake_cli(&on_path, "claude", "1.0.0 (Claude Code)");
    fake_cli(
        &own,
        "claude",
        &format!("{} (Claude Code)", subagent_claude_code::TESTED_VERSION),
    );
    let rows = format!(
        "  - {{name: codex, kind: codex}}\n  - {{name: claude, kind: claude-code, config: {{binary: \"{}\"}}}}\n",
        own.join("claude").display()
    );
    let preset = preset(&project.path, OFFLINE, &rows);
    let out = doctor(
        &project,
        &[],
        &preset,
        &[("PATH", on_path.to_str().unwrap())],
        0,
    );
    assert_eq!(
        verdicts(&out),
        [
            "ok model",
            "ok spawn",
            "warn codex",
            "ok claude",
            "ok state dir"
        ]
    );
    let codex = format!(
        "warn     codex: codex 0.1.0 at {}, tested with {} — `npm install -g @openai/codex@{}` installs the tested version",
        on_path.join("codex").display(),
        subagent_codex::TESTED_VERSION,
        subagent_codex::TESTED_VERSION
    );
    let claude = format!(
        "ok       claude: claude {} at {} (the tested version)",
        subagent_claude_code::TESTED_VERSION,
        own.join("claude").display()
    );
    assert_eq!(out.lines().nth(2), Some(codex.as_str()), "{out}");
    assert_eq!(out.lines().nth(3), Some(claude.as_str()), "{out}");
    assert_eq!(
        out.lines().last(),
        Some("everything the preset enables can run (1 warning)")
    );
}

#[test]
fn an_unreachable_base_url_is_missing_and_so_are_the_rows_on_that_model() {
    let project = Project::new();
    let url = format!("http://127.0.0.1:{}", closed_port());
    let model = format!("{{kind: anthropic, name: m, base_url: \"{url}\", api_key_env: FAKE_KEY}}");
    let preset = preset(&project.path, &model, "");
    let out = doctor(&project, &[], &preset, &[("FAKE_KEY", "k")], 1);
    assert_eq!(
        verdicts(&out),
        [
            "ok model",
            "missing model endpoint",
            "missing spawn",
            "ok state dir"
        ]
    );
    let endpoint = out.lines().nth(1).unwrap();
    assert!(
        endpoint.starts_with(&format!(
            "missing  model endpoint: {url} unreachable: cannot connect to 127.0.0.1:"
        )) && endpoint.ends_with("— start the server, or check the preset's `model.base_url`"),
        "{endpoint}"
    );
    assert_eq!(
        out.lines().nth(2),
        Some("missing  spawn: in-process, on the preset's model, which cannot run (see model)")
    );
    assert_eq!(
        out.lines().last(),
        Some(
            "cannot run: model endpoint, spawn; fix the missing lines, then run `subagent doctor` again"
        )
    );
}

/// With no `base_url` in the preset, `ANTHROPIC_BASE_URL` is the endpoint, as for every command.
#[test]
fn a_reachable_base_url_from_the_environment_is_ok() {
    let project = Project::new();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let preset = preset(
        &project.path,
        "{kind: anthropic, name: m, api_key_env: FAKE_KEY}",
        "",
    );
    let out = doctor(
        &project,
        &["--json"],
        &preset,
        &[("FAKE_KEY", "k"), ("ANTHROPIC_BASE_URL", &url)],
        0,
    );
    let mut report: serde_json::Value = serde_json::from_str(&out).unwrap();
    let state = report["checks"][3]["detail"].take();
    assert!(state.as_str().unwrap().contains("/.local/state/subagents"));
    assert_eq!(
        report,
        serde_json::json!({
            "preset": preset.display().to_string(),
            "ok": true,
            "missing": [],
            "checks": [
                {"status": "ok", "subject": "model", "detail": "anthropic m, key in FAKE_KEY"},
                {"status": "ok", "subject": "model endpoint", "detail": format!("{url} reachable")},
                {"status": "ok", "subject": "spawn", "detail": "in-process, on the preset's model"},
                {"status": "ok", "subject": "state dir", "detail": null},
            ]
        })
    );
}

#[test]
fn a_missing_key_remote_agents_and_nats_servers_each_get_a_line() {
    let project = Project::new();
    let agent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let agent_url = format!("http://{}", agent.local_addr().unwrap());
    let nats_url = format!("nats://127.0.0.1:{}", closed_port());
    let rows = format!(
        "  - {{name: remote, kind: a2a, config: {{url: \"{agent_url}\", token_env: REMOTE_TOKEN}}}}\n  - {{name: workers, kind: nats, config: {{url: \"{nats_url}\", row: spawn}}}}\n  - {{name: off, kind: codex, disabled: true}}\n"
    );
    let preset = preset(&project.path, OFFLINE, &rows);
    let out = doctor(&project, &[], &preset, &[], 1);
    assert_eq!(
        verdicts(&out),
        [
            "ok model",
            "ok spawn",
            "ok remote",
            "missing remote",
            "missing workers",
            "ok state dir"
        ],
        "a disabled row is not checked"
    );
    assert_eq!(
        out.lines().nth(2),
        Some(
            format!("ok       remote: {agent_url}/.well-known/agent-card.json reachable").as_str()
        )
    );
    assert_eq!(
        out.lines().nth(3),
        Some(
            "missing  remote: REMOTE_TOKEN is not set (the row's config names it) — set REMOTE_TOKEN"
        )
    );
    assert!(
        out.lines()
            .nth(4)
            .unwrap()
            .starts_with(&format!("missing  workers: {nats_url} unreachable")),
        "{out}"
    );
}

#[test]
fn without_a_state_dir_doctor_says_so() {
    let project = Project::new();
    let offline = Path::new("presets/offline.yaml");
    let out = doctor(&project, &[], offline, &[("HOME", "relative")], 1);
    assert_eq!(
        out.lines().nth(3),
        Some(
            "missing  state dir: none: neither XDG_STATE_HOME nor HOME is an absolute path, so no session, task output or worktree can be kept — set HOME (or XDG_STATE_HOME) to an absolute path"
        )
    );
}

/// The pinned CLIs (`cargo xtask install-clis`), found on `PATH` as a user's npm install puts
/// them, are the tested versions: every line ok, exit 0.
#[cfg(feature = "e2e")]
#[test]
fn the_pinned_clis_are_the_tested_versions() {
    let bin = super::support::root().join("target/clis/node_modules/.bin");
    assert!(
        bin.join("claude").is_file(),
        "{} is missing: run `cargo xtask install-clis`",
        bin.display()
    );
    let project = Project::new();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let model = format!("{{kind: anthropic, name: m, base_url: \"{url}\", api_key_env: FAKE_KEY}}");
    let rows = "  - {name: claude-code, kind: claude-code}\n  - {name: codex, kind: codex}\n  - {name: codex-acp, kind: acp, config: {command: codex-acp}}\n  - {name: claude-acp, kind: acp, config: {command: claude-agent-acp}}\n";
    let preset = preset(&project.path, &model, rows);
    let path = format!("{}:/usr/bin:/bin", bin.display());
    let out = doctor(
        &project,
        &[],
        &preset,
        &[("PATH", &path), ("FAKE_KEY", "k")],
        0,
    );
    let [
        (codex_acp, _, codex_acp_version),
        (claude_acp, _, claude_acp_version),
    ] = subagent_acp::TESTED_ADAPTERS;
    let tested = |row: &str, name: &str, version: &str| {
        format!(
            "ok       {row}: {name} {version} at {} (the tested version)",
            bin.join(name).display()
        )
    };
    assert_eq!(
        out.lines().skip(3).take(4).collect::<Vec<_>>(),
        [
            tested(
                "claude-code",
                "claude",
                subagent_claude_code::TESTED_VERSION
            ),
            tested("codex", "codex", subagent_codex::TESTED_VERSION),
            tested("codex-acp", codex_acp, codex_acp_version),
            tested("claude-acp", claude_acp, claude_acp_version),
        ],
        "{out}"
    );
    assert_eq!(
        out.lines().last(),
        Some("everything the preset enables can run")
    );
}

#[test]
fn completions_load_in_bash_and_every_shell_gets_a_script() {
    let project = Project::new();
    let done = project.shell(
        &project.path,
        "source <(subagent completions bash) && complete -p subagent",
        &[],
    );
    assert_eq!(
        done.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&done.stderr)
    );
    let out = String::from_utf8_lossy(&done.stdout);
    assert!(
        out.starts_with("complete ")
            && out.contains("-F _subagent")
            && out.trim_end().ends_with(" subagent"),
        "{out}"
    );
    for (shell, start) in [
        ("zsh", "#compdef subagent"),
        ("fish", "# Print an optspec"),
        ("elvish", "\nuse builtin;"),
        (
            "powershell",
            "\nusing namespace System.Management.Automation",
        ),
    ] {
        let output = project.output(["completions", shell]);
        assert_eq!(output.status.code(), Some(0), "{shell}");
        let script = stdout(&output);
        assert!(script.starts_with(start), "{shell}: {script}");
        assert!(script.contains("doctor"), "{shell} completes every command");
    }
}

#[test]
fn the_man_page_renders() {
    let home = tempfile::tempdir().unwrap();
    let page = |args: &[&str]| {
        let output = subagent(home.path()).args(args).output().unwrap();
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        stdout(&output)
    };
    let main = page(&["man"]);
    let version = env!("CARGO_PKG_VERSION");
    assert!(
        main.contains(&format!(".TH subagent 1  \"subagent {version}\"")),
        "{main}"
    );
    assert!(
        main.contains(".SH NAME\nsubagent \\- Delegate a task"),
        "{main}"
    );
    for command in ["delegate", "doctor", "completions", "man"] {
        assert!(
            main.contains(&format!("subagent\\-{command}(1)")),
            "{command}"
        );
    }
    let doctor = page(&["man", "doctor"]);
    assert!(
        doctor.contains(&format!(".TH subagent-doctor 1  \"subagent {version}\"")),
        "{doctor}"
    );
    let output = subagent(home.path())
        .args(["man", "nope"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output)
            .starts_with("error[INVALID_ARGUMENTS]: no command `nope` (commands: delegate, run,")
    );
    // `subagent man --help`'s example, as written, where man is installed (it renders the page).
    let project = Project::new();
    let has_man = project
        .shell(&project.path, "command -v man", &[])
        .status
        .success();
    let line = "subagent man > subagent.1 && man -l subagent.1";
    let line = if has_man {
        line
    } else {
        "subagent man > subagent.1"
    };
    let done = project.shell(&project.path, line, &[("MANWIDTH", "80")]);
    assert!(
        done.status.success(),
        "{}",
        String::from_utf8_lossy(&done.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(project.path.join("subagent.1")).unwrap(),
        main
    );
    if has_man {
        let text = String::from_utf8_lossy(&done.stdout);
        assert!(text.contains("SUBCOMMANDS"), "{text}");
        assert!(text.contains("subagent-doctor(1)"), "{text}");
    }
}
