//! Running the `subagent` binary as a user would.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use assert_cmd::Command;
use std::sync::Arc;

use subagent_conformance::Adapter;
use subagent_core::agents::StaticAgents;
use subagent_core::registry::Registry;
use subagent_core::{ProviderFactory, SubagentProvider};
use subagent_model::ModelKind;
use subagent_runtime::{
    DelegationTool, DelegationToolConfig, PermissionPolicy, SessionStore, Tool,
};
use subagent_spawn::{SpawnConfig, SpawnProvider};
use subagent_test_support::{FakeServer, procs};

/// The workspace root (presets live there).
pub(super) fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .and_then(Path::parent)
        .unwrap()
        .to_path_buf()
}

/// A shipped preset.
pub(super) fn preset(name: &str) -> PathBuf {
    root().join("presets").join(name)
}

pub(super) use subagent_test_support::cli::Subagent;

/// What `subagent run` prints for "Please delegate a hello to a subagent" on the offline model.
pub(super) const OFFLINE_RUN_ANSWER: &str = "[offline scripted model] The subagent finished and \
     reported back: its report is the delegation's result.\n";

/// Scenarios of the remote tests: `HELLO` answers "Hi there."; `GATED` says "working", lists
/// the directory, then waits for the gate `go` to say "done".
pub(super) const HELLO_AND_GATED: &str = r#"
- name: hello
  match: "HELLO"
  steps:
    - text: "Hi there."
- name: gated
  match: "GATED"
  steps:
    - text: "working"
      tool_calls: [{name: ls, input: {}}]
    - wait_gate: go
      text: "done"
"#;

/// The `subagent` binary of this build.
pub(super) fn bin() -> PathBuf {
    assert_cmd::cargo::cargo_bin("subagent")
}

/// The binary with a clean, offline environment: no API keys, HOME in `home`.
pub(super) fn subagent(home: &Path) -> Command {
    Command::from_std(Subagent::new(bin(), home).command())
}

/// `subagent ARGS --preset PRESET PROMPT` in `project` with `home` as its HOME and the fake
/// presets' key, run to its end on a blocking thread.
pub(super) async fn run_in(
    home: &Path,
    project: &Path,
    preset: &Path,
    args: &[&str],
    prompt: &str,
) -> std::process::Output {
    let mut command = subagent(home);
    command
        .current_dir(project)
        .env(
            subagent_test_support::cli::FAKE_KEY.0,
            subagent_test_support::cli::FAKE_KEY.1,
        )
        .args(args)
        .arg("--preset")
        .arg(preset)
        .arg(prompt);
    tokio::task::spawn_blocking(move || command.output().unwrap())
        .await
        .unwrap()
}

/// `subagent ARGS` in `dir` (also HOME) with the fake presets' key, run to its end.
pub(super) fn keyed(dir: &Path, args: &[&str]) -> std::process::Output {
    subagent(dir)
        .env(
            subagent_test_support::cli::FAKE_KEY.0,
            subagent_test_support::cli::FAKE_KEY.1,
        )
        .args(args)
        .output()
        .unwrap()
}

/// Copies `from` (a directory of files) into `to`.
pub(super) fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        if entry.file_type().unwrap().is_file() {
            std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
        }
    }
}

/// The words of a shell command line: spaces split, double quotes group.
pub(super) fn shell_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut current = String::new();
    let mut quoted = false;
    let mut started = false;
    for c in line.chars() {
        match c {
            '"' => {
                quoted = !quoted;
                started = true;
            }
            ' ' if !quoted => {
                if started {
                    words.push(std::mem::take(&mut current));
                    started = false;
                }
            }
            _ => {
                current.push(c);
                started = true;
            }
        }
    }
    if started {
        words.push(current);
    }
    words
}

/// The fenced blocks (```` ``` ````) of a Markdown `text` whose info string `wanted` accepts,
/// without their fences.
pub(super) fn fenced_blocks(text: &str, wanted: impl Fn(&str) -> bool) -> Vec<String> {
    let mut found = Vec::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        match (&mut current, line.strip_prefix("```")) {
            (None, Some(info)) if wanted(info) => current = Some(String::new()),
            (Some(block), Some("")) => {
                found.push(std::mem::take(block));
                current = None;
            }
            (Some(block), _) => {
                block.push_str(line);
                block.push('\n');
            }
            (None, _) => {}
        }
    }
    found
}

/// Stdout as text.
pub(super) fn stdout(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Stderr as text.
pub(super) fn stderr(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// The JSON lines of stdout.
pub(super) fn json_lines(output: &std::process::Output) -> Vec<serde_json::Value> {
    stdout(output)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
        .collect()
}

/// Replaces run ids and durations so snapshots are stable.
pub(super) fn redact(value: &mut serde_json::Value) {
    match value {
        serde_json::Value::Object(map) => {
            for (key, item) in map.iter_mut() {
                match key.as_str() {
                    "run_id" => *item = "[run_id]".into(),
                    "duration_ms" => *item = "[duration]".into(),
                    _ => redact(item),
                }
            }
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(redact),
        _ => {}
    }
}

/// Writes `text` to `dir/name` (a preset, a scenario, a script); its path.
pub(super) fn write_file(dir: &Path, name: impl AsRef<Path>, text: impl AsRef<[u8]>) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// Asserts that `output` was refused before anything started (exit 2) with `text` on stderr;
/// `what` names the case in the message.
#[track_caller]
pub(super) fn assert_refused(output: &std::process::Output, text: &str, what: &str) {
    assert_eq!(output.status.code(), Some(2), "{what}: {}", stderr(output));
    assert!(stderr(output).contains(text), "{what}: {}", stderr(output));
}

/// A preset `bypass.yaml` in `dir`: the fake server at `url` (key from `FAKE_KEY`), one spawn
/// row that asks nothing (`bypass`) and the delegation tool on it.
pub(super) fn bypass_preset(dir: &Path, url: &str) -> PathBuf {
    write_file(
        dir,
        "bypass.yaml",
        format!(
            "version: 1\nmodel:\n  kind: anthropic\n  name: fake-model\n  base_url: {url}\n  api_key_env: FAKE_KEY\nproviders:\n  - name: spawn\n    kind: spawn\n    config:\n      permission_mode: bypass\ntools:\n  - name: subagent\n    provider: spawn\n"
        ),
    )
}

/// A preset in `dir` whose model is the fake server at `url` (Anthropic protocol, key from
/// `FAKE_KEY`).
pub(super) fn fake_preset(dir: &Path, url: &str, extra: &str) -> PathBuf {
    write_file(
        dir,
        "fake.yaml",
        format!(
            "version: 1\nmax_depth: 2\nmodel:\n  kind: anthropic\n  name: fake-model\n  base_url: {url}\n  api_key_env: FAKE_KEY\n  retry:\n    max_retries: 0\nproviders:\n  - name: spawn\n    kind: spawn\n  - name: fork\n    kind: fork\n{extra}tools:\n  - name: subagent\n    provider: spawn\n"
        ),
    )
}

/// A fake model server on `scenarios`, a temp dir (the runs' HOME) and a [`fake_preset`] on
/// the server in it with `extra` rows.
pub(super) async fn fake_setup(
    scenarios: &str,
    extra: &str,
) -> (FakeServer, tempfile::TempDir, PathBuf) {
    let server = FakeServer::from_yaml(scenarios).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let preset = fake_preset(dir.path(), &server.url(), extra);
    (server, dir, preset)
}

/// A fake model server on which `run the sleeper` runs the bash command `marker` (a `sleep`
/// no other test runs), a temp dir (the runs' HOME) and a [`bypass_preset`] on the server in it.
pub(super) async fn sleeper_setup(marker: &str) -> (FakeServer, tempfile::TempDir, PathBuf) {
    let server = FakeServer::from_yaml(&format!(
        "- match: 'run the sleeper'\n  steps:\n    - tool_calls:\n        - name: bash\n          input: {{command: '{marker}'}}\n    - text: never\n"
    ))
    .await
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let preset = bypass_preset(dir.path(), &server.url());
    (server, dir, preset)
}

/// A test's fake model server and its directory (also its HOME) holding an empty `project`.
pub(super) struct Place {
    /// The fake model server.
    pub server: FakeServer,
    /// The directory.
    pub dir: tempfile::TempDir,
    /// `dir/project`.
    pub project: PathBuf,
}

impl Place {
    /// A fake server on `scenarios` and a fresh directory named `prefix…`.
    pub(super) async fn new(scenarios: &str, prefix: &str) -> Self {
        let server = FakeServer::from_yaml(scenarios).await.unwrap();
        let dir = tempfile::Builder::new().prefix(prefix).tempdir().unwrap();
        let project = dir.path().join("project");
        std::fs::create_dir(&project).unwrap();
        Self {
            server,
            dir,
            project,
        }
    }
}

/// Pids of live processes (other than this one) whose command line contains `needle`.
pub(super) fn processes_with(needle: &str) -> Vec<u32> {
    procs::live_with(needle).iter().map(|p| p.pid).collect()
}

/// The live processes whose command line contains `needle` and whose working directory is
/// `dir` or below it: a test's own, not those of a test running beside it with the same program.
/// (Used by the e2e teams tests only.)
#[cfg(feature = "e2e")]
pub(super) fn processes_in(dir: &std::path::Path, needle: &str) -> Vec<u32> {
    procs::live_with(needle)
        .iter()
        .filter(|p| p.runs_in(dir))
        .map(|p| p.pid)
        .collect()
}

/// Waits (bounded) until `condition` holds; the child's progress is only observable in /proc.
pub(super) fn wait_for(what: &str, mut condition: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !condition() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The name of a project's folder in the state dir (`sessions/`, `tasks/`, `teams/`): its
/// path with every character but ASCII letters and digits written `-`, as Claude Code keys its
/// sessions.
pub(super) fn state_key(project: &Path) -> String {
    project
        .to_string_lossy()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

/// `text` (a human-output stderr) with the session id of its `session: ID (…)` line written `S`
/// wherever it appears (it is a fresh UUID).
pub(super) fn session_as_s(text: &str) -> String {
    let id = text
        .lines()
        .find_map(|line| line.strip_prefix("session: "))
        .and_then(|rest| rest.split_whitespace().next());
    match id {
        Some(id) => text.replace(id, "S"),
        None => text.to_owned(),
    }
}

/// A user's project in a temporary directory: a git repository with a small source file and a
/// copy of the shipped `presets/`, and a `HOME` of its own beside it (no keys, no state).
pub(super) struct Project {
    dir: tempfile::TempDir,
    /// The project's directory (canonical).
    pub path: PathBuf,
    /// `HOME` for its commands.
    pub home: PathBuf,
}

impl Project {
    /// A fresh project.
    pub(super) fn new() -> Self {
        let dir = tempfile::Builder::new()
            .prefix("subagent-project-")
            .tempdir()
            .unwrap();
        let home = dir.path().join("home");
        let path = dir.path().join("project");
        std::fs::create_dir_all(&home).unwrap();
        std::fs::create_dir_all(path.join("src")).unwrap();
        let path = std::fs::canonicalize(path).unwrap();
        std::fs::write(
            path.join("src/lib.rs"),
            "pub fn answer() -> u32 {\n    42\n}\n",
        )
        .unwrap();
        copy_dir(&root().join("presets"), &path.join("presets"));
        let status = std::process::Command::new("git")
            .args(["init", "-q"])
            .current_dir(&path)
            .env("HOME", &home)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .status()
            .unwrap();
        assert!(status.success(), "git init");
        Self { dir, path, home }
    }

    /// The temporary directory holding the project and its `HOME` (a place outside both).
    pub(super) fn outside(&self) -> &Path {
        self.dir.path()
    }

    /// `subagent` in the project (clean environment, this project's `HOME`).
    pub(super) fn subagent(&self) -> Command {
        let mut command = subagent(&self.home);
        command.current_dir(&self.path);
        command
    }

    /// `subagent ARGS` in the project, run to its end.
    pub(super) fn output<S: AsRef<std::ffi::OsStr>>(
        &self,
        args: impl IntoIterator<Item = S>,
    ) -> std::process::Output {
        self.subagent().args(args).output().unwrap()
    }

    /// `line` run by bash in `dir` with this project's environment (`subagent` on `PATH`, no
    /// keys) plus `env`, as a user pastes it: exit code, stdout, stderr.
    pub(super) fn shell(
        &self,
        dir: &Path,
        line: &str,
        env: &[(&str, &str)],
    ) -> std::process::Output {
        let bin = assert_cmd::cargo::cargo_bin("subagent");
        let path = format!(
            "{}:{}",
            bin.parent().unwrap().display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let mut command = std::process::Command::new("bash");
        command
            .args(["-c", line])
            .current_dir(dir)
            .env_clear()
            .env("PATH", path)
            .env("HOME", &self.home)
            .env("TERM", "dumb")
            .stdin(std::process::Stdio::null());
        for (name, value) in env {
            command.env(name, value);
        }
        command.output().unwrap()
    }

    /// Writes `text` to `relative` in the project, making its directory.
    pub(super) fn write(&self, relative: &str, text: &str) -> PathBuf {
        let path = self.path.join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        path
    }
}

/// The line a long-running command (serve, worker) announces itself with on `stderr`, after the
/// line naming the preset it uses (which every command prints first).
pub(super) fn announcement(stderr: &mut impl std::io::BufRead) -> String {
    let mut line = String::new();
    stderr.read_line(&mut line).unwrap();
    assert!(line.starts_with("preset: "), "the preset first: {line}");
    line.clear();
    stderr.read_line(&mut line).unwrap();
    line
}

/// Starts `command` (a long-running `subagent`) with no stdin, `stdout` as given and stderr
/// piped; the child and its stderr, read by line.
pub(super) fn start_piped(
    command: &mut std::process::Command,
    stdout: std::process::Stdio,
) -> (
    std::process::Child,
    std::io::BufReader<std::process::ChildStderr>,
) {
    let mut child = command
        .stdin(std::process::Stdio::null())
        .stdout(stdout)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = std::io::BufReader::new(child.stderr.take().unwrap());
    (child, stderr)
}

/// The `HOST:PORT` a `subagent serve` announces on `stderr` (see [`announcement`]).
pub(super) fn announced_addr(stderr: &mut impl std::io::BufRead) -> String {
    let line = announcement(stderr);
    line.split("http://")
        .nth(1)
        .and_then(|rest| rest.split('/').next())
        .unwrap_or_else(|| panic!("no address announced: {line}"))
        .to_owned()
}

/// One A2A JSON-RPC call to `subagent serve` at `base` with `Authorization: Bearer <token>`
/// over a plain HTTP/1.1 connection; the response's body.
pub(super) fn post_a2a(base: &str, token: &str, body: &serde_json::Value) -> String {
    use std::io::{Read, Write};
    let addr = base.trim_start_matches("http://");
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    let body = body.to_string();
    write!(
        stream,
        "POST /a2a HTTP/1.1\r\nHost: {addr}\r\nA2A-Version: 1.0\r\nAuthorization: Bearer {token}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    response
        .split("\r\n\r\n")
        .nth(1)
        .unwrap_or_default()
        .to_owned()
}

/// The registry a worker or a server serves in the CLI's remote tests: one spawn row (`spawn`:
/// may write, keeps transcripts in `sessions`, can delegate to a second spawn provider) on the
/// fake model server.
pub(super) fn worker_registry(server: &FakeServer, sessions: &Path) -> Registry {
    let model = server.model(ModelKind::Anthropic);
    let nested = SpawnProvider::new("nested", Arc::clone(&model), SpawnConfig::default());
    let nested = subagent_test_support::bench::registry_of(nested);
    let delegation: Arc<dyn Tool> = Arc::new(DelegationTool::new(
        DelegationToolConfig::new("nested"),
        Arc::new(nested),
        Arc::new(StaticAgents::default()),
    ));
    let registry = Registry::with_max_depth(3);
    registry
        .register(Arc::new(
            SpawnProvider::new("spawn", model, SpawnConfig::default())
                .with_permissions(PermissionPolicy::bypass())
                .with_tools([delegation])
                .with_sessions(SessionStore::new(sessions)),
        ))
        .unwrap();
    registry
}

/// `subagent ARGS --preset PRESET PROMPT` run in `dir` (also HOME) with the fake key, on a
/// blocking thread so the fake server keeps serving; asserts it exited 0 and returns its last
/// JSON line (the outcome of a `--json` run).
#[cfg(feature = "e2e")]
pub(super) async fn json_run(
    dir: &Path,
    args: &[&str],
    preset: &Path,
    prompt: &str,
) -> serde_json::Value {
    let mut command = subagent(dir);
    command
        .env(
            subagent_test_support::cli::FAKE_KEY.0,
            subagent_test_support::cli::FAKE_KEY.1,
        )
        .args(args)
        .arg("--preset")
        .arg(preset)
        .arg(prompt);
    let output = tokio::task::spawn_blocking(move || command.output().unwrap())
        .await
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    json_lines(&output).pop().unwrap()
}

/// For a test of an official SDK's client against the binary: the SDK's pinned `file`, and a
/// [`Place`] on `scenarios` whose project holds `ready.fifo` (a child's long command writes to
/// it once it runs).
#[cfg(feature = "e2e")]
pub(super) async fn sdk_place(file: &str, scenarios: &str, prefix: &str) -> (PathBuf, Place) {
    let sdk = super::pinned::pinned(file);
    let place = Place::new(scenarios, prefix).await;
    subagent_test_support::procs::mkfifo(&place.project.join("ready.fifo"));
    (sdk, place)
}

/// A client on an official TypeScript SDK (`sdk`) driving the binary: `node SCRIPT SDK SUBAGENT
/// PRESET PROJECT` (`SCRIPT` under this crate's `tests/`) in `home` (also HOME) with the fake
/// key; asserts it exited 0 and returns what it saw (its stdout, one JSON value) and its stderr.
#[cfg(feature = "e2e")]
pub(super) async fn sdk_client(
    script: &str,
    sdk: &Path,
    preset: &Path,
    project: &Path,
    home: &Path,
) -> (serde_json::Value, String) {
    let output = tokio::process::Command::new("node")
        .arg(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests")
                .join(script),
        )
        .arg(sdk)
        .arg(bin())
        .arg(preset)
        .arg(project)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home)
        .env(
            subagent_test_support::cli::FAKE_KEY.0,
            subagent_test_support::cli::FAKE_KEY.1,
        )
        .current_dir(home)
        .output()
        .await
        .unwrap();
    let stderr = stderr(&output);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    (serde_json::from_slice(&output.stdout).unwrap(), stderr)
}

/// `subagent delegate --json ARGS --preset PRESET [--resume ID] PROMPT` in `home` (also HOME)
/// with the fake key, on a blocking thread so the fake server keeps serving.
pub(super) async fn delegate_json(
    home: &Path,
    args: &[&str],
    preset: &Path,
    resume: Option<&str>,
    prompt: &str,
) -> std::process::Output {
    let mut command = subagent(home);
    command
        .env(
            subagent_test_support::cli::FAKE_KEY.0,
            subagent_test_support::cli::FAKE_KEY.1,
        )
        .args(["delegate", "--json"])
        .args(args)
        .arg("--preset")
        .arg(preset)
        .args(resume.map(|id| ["--resume", id]).into_iter().flatten())
        .arg(prompt);
    tokio::task::spawn_blocking(move || command.output().unwrap())
        .await
        .unwrap()
}

/// `subagent ARGS --preset PRESET PROMPT` in `dir` (also HOME) with the fake key and `TMPDIR`
/// `temp`, from a test on a multi-thread runtime (the fake server keeps serving); asserts it
/// exited 0.
pub(super) fn fake_run(
    dir: &Path,
    temp: &Path,
    args: &[&str],
    preset: &Path,
    prompt: &str,
) -> std::process::Output {
    let output = tokio::task::block_in_place(|| {
        subagent(dir)
            .env(
                subagent_test_support::cli::FAKE_KEY.0,
                subagent_test_support::cli::FAKE_KEY.1,
            )
            .env("TMPDIR", temp)
            .args(args)
            .arg("--preset")
            .arg(preset)
            .arg(prompt)
            .output()
            .unwrap()
    });
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    output
}

/// The result of the delegation through `tool` in a `run --json` outcome, asserted not an
/// error.
#[cfg(feature = "e2e")]
pub(super) fn delegation_result(outcome: &serde_json::Value, tool: &str) -> String {
    let delegations = outcome["delegations"].as_array().unwrap();
    let d = delegations.iter().find(|d| d["tool"] == tool).unwrap();
    assert_eq!(d["is_error"], false, "{d}");
    d["result"].as_str().unwrap().to_owned()
}

/// What starts the remote side of a [`Remote`] adapter on a worker registry in a work dir and
/// returns the provider in front of it.
type Connect = dyn Fn(Registry, &Path) -> Arc<dyn SubagentProvider> + Send + Sync;

/// The conformance adapter of a kind that reaches spawn children remotely (a2a, nats): its
/// provider fronts a [`worker_registry`] on the kit's fake server.
pub(super) struct Remote {
    dir: tempfile::TempDir,
    sessions: tempfile::TempDir,
    factory: Arc<dyn ProviderFactory>,
    connect: Box<Connect>,
}

impl Remote {
    /// An adapter for `factory`'s kind, its remote side started by `connect`.
    pub(super) fn new(
        factory: Arc<dyn ProviderFactory>,
        connect: impl Fn(Registry, &Path) -> Arc<dyn SubagentProvider> + Send + Sync + 'static,
    ) -> Self {
        Self {
            dir: tempfile::tempdir().unwrap(),
            sessions: tempfile::tempdir().unwrap(),
            factory,
            connect: Box::new(connect),
        }
    }
}

impl Adapter for Remote {
    fn factory(&self) -> Arc<dyn ProviderFactory> {
        Arc::clone(&self.factory)
    }

    fn provider(&self, server: &FakeServer) -> Arc<dyn SubagentProvider> {
        (self.connect)(
            worker_registry(server, self.sessions.path()),
            self.dir.path(),
        )
    }

    fn workdir(&self) -> PathBuf {
        self.dir.path().to_path_buf()
    }

    subagent_conformance::runtime_tool_calls!();
}

/// A home of a test's own (the runs' `HOME`, a managed-settings file that does not exist) with
/// a project directory below it and a preset of one spawn row on the fake model at `url`, `extra`
/// lines added to it.
pub(super) struct Home {
    pub home: tempfile::TempDir,
    pub dir: PathBuf,
    pub preset: PathBuf,
}

impl Home {
    pub(super) fn new(url: &str, extra: &str) -> Self {
        let home = tempfile::tempdir().unwrap();
        let dir = home.path().join("project");
        std::fs::create_dir_all(&dir).unwrap();
        let preset = home.path().join("preset.yaml");
        std::fs::write(
            &preset,
            format!(
                "version: 1\nmodel: {{kind: anthropic, name: m, base_url: \"{url}\", api_key_env: FAKE_KEY}}\nproviders: [{{name: spawn, kind: spawn}}]\ntools: [{{name: subagent, provider: spawn}}]\n{extra}"
            ),
        )
        .unwrap();
        Self {
            dir: std::fs::canonicalize(dir).unwrap(),
            home,
            preset,
        }
    }

    /// Writes `text` at `relative` below the home.
    pub(super) fn write(&self, relative: &str, text: &str) {
        let path = self.home.path().join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    /// `subagent` in the project, with the home's environment.
    pub(super) fn subagent(&self) -> Subagent {
        Subagent::new(assert_cmd::cargo::cargo_bin("subagent"), self.home.path())
            .cwd(&self.dir)
            .fake_key()
            .env(
                "SUBAGENT_MANAGED_SETTINGS",
                self.home.path().join("managed.json"),
            )
    }
}

/// `subagent delegate --preset PRESET ARGS…` in `project` with `home` as its HOME, which must
/// exit 0: its stdout.
#[cfg(feature = "e2e")]
pub(super) fn delegate_ok(home: &Path, project: &Path, preset: &Path, args: &[&str]) -> String {
    delegate_ok_with(home, project, preset, args, &[])
}

/// [`delegate_ok`] with `env` set for the command.
#[cfg(feature = "e2e")]
pub(super) fn delegate_ok_with(
    home: &Path,
    project: &Path,
    preset: &Path,
    args: &[&str],
    env: &[(&str, &Path)],
) -> String {
    let mut command = Subagent::new(assert_cmd::cargo::cargo_bin("subagent"), home);
    for (name, value) in env {
        command = command.env(name, value);
    }
    let output = command
        .cwd(project)
        .fake_key()
        .arg("delegate")
        .arg("--preset")
        .arg(preset)
        .args(args)
        .output();
    assert_eq!(
        output.status.code(),
        Some(0),
        "{args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}
