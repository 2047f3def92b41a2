//! `subagent mcp` through the binary: a plain JSON-RPC exchange on its stdio, and (with the
//! `e2e` feature) real clients: the official TypeScript SDK, and the real `claude` and `codex`
//! CLIs each calling the other through our server, all against one fake model server.

use std::process::Stdio;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

use super::support::{Subagent, bin};
use super::support::{fake_preset, processes_with, wait_for};
#[cfg(feature = "e2e")]
use super::support::{sdk_client, sdk_place};

/// Sends `line` (a JSON-RPC message) to the server.
async fn send(stdin: &mut tokio::process::ChildStdin, message: Value) {
    let mut line = message.to_string();
    line.push('\n');
    stdin.write_all(line.as_bytes()).await.unwrap();
}

/// `subagent` (an MCP server on stdio) started with its stdio piped; the child and its stdin.
fn piped(subagent: Subagent) -> (tokio::process::Child, tokio::process::ChildStdin) {
    let mut child = tokio::process::Command::from(subagent.command())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdin = child.stdin.take().unwrap();
    (child, stdin)
}

/// The opening of an MCP session: `initialize` (id 1), then `notifications/initialized`.
async fn initialize(stdin: &mut tokio::process::ChildStdin) {
    send(
        stdin,
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"}}}),
    )
    .await;
    send(
        stdin,
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    )
    .await;
}

/// A [`fake_preset`] in `dir` on the server at `url` whose spawn children run commands
/// unasked (nobody can be asked during an MCP call).
pub(super) fn bypass_preset(dir: &std::path::Path, url: &str) -> std::path::PathBuf {
    let preset = fake_preset(dir, url, "");
    let text = std::fs::read_to_string(&preset).unwrap().replace(
        "  - name: spawn\n    kind: spawn\n",
        "  - name: spawn\n    kind: spawn\n    config: {permission_mode: bypass}\n",
    );
    std::fs::write(&preset, text).unwrap();
    preset
}

/// The offline demo through a hand-written client: stdout carries only the protocol, the call
/// answers with the child's report after its progress, and closing stdin ends the server (0).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subagent_mcp_answers_a_call_on_stdio_and_exits_when_stdin_closes() {
    let dir = tempfile::tempdir().unwrap();
    let (mut child, mut stdin) = piped(Subagent::new(bin(), dir.path()).args(["mcp", "--offline"]));
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    initialize(&mut stdin).await;
    send(
        &mut stdin,
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "subagent", "arguments": {"prompt": "Say hello from the subagent"},
            "_meta": {"progressToken": "p"}}}),
    )
    .await;
    let mut seen = Vec::new();
    loop {
        let line = lines.next_line().await.unwrap().unwrap();
        let message: Value = serde_json::from_str(&line).unwrap();
        let done = message["id"] == 2;
        seen.push(message);
        if done {
            break;
        }
    }
    // Without a progress token, only the answer comes.
    send(
        &mut stdin,
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
            "name": "subagent", "arguments": {"prompt": "Say hello from the subagent"}}}),
    )
    .await;
    let line = lines.next_line().await.unwrap().unwrap();
    let untracked: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(untracked["id"], 3, "{untracked}");
    assert_eq!(untracked["result"]["isError"], false);
    drop(stdin);
    let output = child.wait_with_output().await.unwrap();
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(seen[0]["result"]["serverInfo"]["name"], "subagents");
    let progress: Vec<&Value> = seen
        .iter()
        .filter(|m| m["method"] == "notifications/progress")
        .collect();
    assert_eq!(
        progress[0]["params"]["message"],
        "started on spawn: Say hello from the subagent"
    );
    let result = &seen.last().unwrap()["result"];
    assert_eq!(result["isError"], false);
    assert_eq!(
        result["content"][0]["text"],
        "[offline scripted model] Hello from the subagent."
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("subagent mcp: MCP on stdio, tools: subagent, runs in "),
        "{stderr}"
    );
}

#[cfg(feature = "e2e")]
const INTEROP: &str = r#"
- match: "what is the password"
  steps:
    - text: "swordfish"
- match: "run a long job"
  steps:
    - tool_calls:
        - {id: call_long, name: bash, input: {command: "echo started > ready.fifo; exec sleep 314160"}}
    - text: "never"
"#;

/// The issue's interop test: a client on the official TypeScript SDK lists the tools and checks
/// their schemas, calls one with a progress token, gets a refusal as a tool error with its code,
/// and cancels a call whose child's command runs: the command is gone afterwards, and so is the
/// server once the client closes.
#[cfg(feature = "e2e")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_official_typescript_client_drives_subagent_mcp() {
    let (sdk, place) = sdk_place(
        "@modelcontextprotocol/sdk/package.json",
        INTEROP,
        "subagent-mcp-",
    )
    .await;
    let preset = bypass_preset(place.dir.path(), &place.server.url());
    let (seen, stderr) = sdk_client(
        "mcp/client.mjs",
        sdk.parent().unwrap(),
        &preset,
        &place.project,
        place.dir.path(),
    )
    .await;
    // The `subagent` tool's properties, in order.
    let subagent_properties: Vec<&str> =
        "prompt description subagent_type model isolation output_schema resume"
            .split(' ')
            .collect();
    assert_eq!(
        seen,
        json!({
            "server": "subagents",
            "tools": [{
                "name": "subagent",
                "properties": subagent_properties,
                "required": ["prompt"],
                "listsAgentTypes": true,
            }],
            "answer": "swordfish",
            "isError": false,
            "progressStarted": "started on spawn: ask",
            "progressIncreases": true,
            "refusal": {"isError": true, "code": "UNKNOWN_AGENT_TYPE"},
            "cancelled": "aborted",
        }),
        "{stderr}"
    );
    wait_for("the cancelled command to be gone", || {
        processes_with("sleep 314160").is_empty()
    });
    let preset_text = preset.display().to_string();
    wait_for("the server to be gone", || {
        processes_with(&preset_text).is_empty()
    });
}

/// The cross-product through MCP: the real `claude` calls our `codex` tool and our server runs
/// the real `codex`; the real `codex` calls our `claude_code` tool and our server runs the real
/// `claude`. One fake model server answers all of them (Anthropic for claude, Responses for
/// codex), each scenario matched by its own prompt.
#[cfg(feature = "e2e")]
mod products {
    use std::path::{Path, PathBuf};

    use serde_json::Value;
    use subagent_test_support::FakeServer;

    use super::super::pinned::{claude_asked, claude_code_row, codex_row, made, pinned};
    use super::super::support::{processes_with, wait_for};

    /// A directory for one test: the project, homes, and a preset whose claude-code and codex
    /// rows run the pinned CLIs against `url`.
    struct Place {
        dir: tempfile::TempDir,
        preset: PathBuf,
    }

    impl Place {
        /// The fake model server on `scenarios` and a place whose preset runs on it; with the
        /// command line of `subagent mcp` there ([`Self::server_args`]).
        async fn start(scenarios: &str) -> (FakeServer, Self, String, Vec<String>) {
            let server = FakeServer::from_yaml(scenarios).await.unwrap();
            let place = Self::new(&server.url());
            let (command, args) = place.server_args();
            (server, place, command, args)
        }

        fn new(url: &str) -> Self {
            let dir = tempfile::Builder::new()
                .prefix("subagent-mcp-e2e-")
                .tempdir()
                .unwrap();
            // The children's homes apart from those of the CLIs that call our server.
            let child = dir.path().join("child");
            let text = format!(
                r#"version: 1
model: {{kind: anthropic, name: parent-model, base_url: "{url}", api_key_env: FAKE_KEY}}
providers:
{claude}{codex}tools:
  - {{name: claude_code, provider: claude-code, description: "Ask Claude Code."}}
  - {{name: codex, provider: codex, description: "Ask Codex."}}
"#,
                claude = claude_code_row(&child, url, ""),
                codex = codex_row(&child, url, "", ""),
            );
            for name in ["home", "tmp", "project"] {
                made(dir.path(), name);
            }
            let preset = crate::suite::support::write_file(dir.path(), "mcp.yaml", text);
            Self { dir, preset }
        }

        fn path(&self, name: &str) -> PathBuf {
            self.dir.path().join(name)
        }

        /// `subagent mcp` as an MCP client starts it: the command and its arguments.
        fn server_args(&self) -> (String, Vec<String>) {
            (
                assert_cmd::cargo::cargo_bin("subagent")
                    .display()
                    .to_string(),
                vec![
                    "mcp".to_owned(),
                    "--preset".to_owned(),
                    self.preset.display().to_string(),
                    "--cwd".to_owned(),
                    self.path("project").display().to_string(),
                ],
            )
        }

        /// Runs a client CLI in the project with a clean environment plus `env`.
        async fn run(&self, program: &Path, args: &[String], env: &[(&str, String)]) -> Output {
            let mut command = tokio::process::Command::new(program);
            command
                .args(args)
                .env_clear()
                .env("PATH", std::env::var_os("PATH").unwrap_or_default())
                .env("HOME", self.path("home"))
                .current_dir(self.path("project"))
                .stdin(std::process::Stdio::null());
            for (key, value) in env {
                command.env(key, value);
            }
            let output = command.output().await.unwrap();
            Output {
                code: output.status.code(),
                lines: String::from_utf8_lossy(&output.stdout)
                    .lines()
                    .filter_map(|line| serde_json::from_str(line).ok())
                    .collect(),
                stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
            }
        }

        /// No process of this test is left: none names its directory.
        fn assert_nothing_left(&self) {
            let needle = self.dir.path().display().to_string();
            wait_for("every process of the test to be gone", || {
                processes_with(&needle).is_empty()
            });
        }
    }

    /// The body of the last of `requests` to `path` (one CLI's model endpoint), as text.
    fn last_body(requests: &[subagent_test_support::RecordedRequest], path: &str) -> String {
        let last = requests.iter().rfind(|r| r.path.starts_with(path)).unwrap();
        last.body.as_ref().unwrap().to_string()
    }

    struct Output {
        code: Option<i32>,
        lines: Vec<Value>,
        stderr: String,
    }

    const CLAUDE_ASKS_CODEX: &str = r#"
- name: claude-parent
  match: "ask codex for the password"
  steps:
    - tool_calls:
        - name: mcp__subagents__codex
          input: {prompt: "codex, what is the password?", description: "ask codex"}
    # claude's model repeats what our tool answered: codex's answer reaches claude's result.
    - {text: "claude got its answer from codex: ", text_from_tool_result: true}
- name: codex-child
  match: "codex, what is the password"
  steps:
    - text: "codex-says-swordfish"
"#;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn claude_calls_our_codex_tool_and_gets_codexs_answer() {
        let (server, place, command, args) = Place::start(CLAUDE_ASKS_CODEX).await;
        let config =
            serde_json::json!({"mcpServers": {"subagents": {"command": command, "args": args}}});
        let config_path = place.path("mcp.json");
        std::fs::write(&config_path, config.to_string()).unwrap();
        let home = place.path("home").display().to_string();
        let output = place
            .run(
                &pinned(".bin/claude"),
                &[
                    "-p".to_owned(),
                    "ask codex for the password".to_owned(),
                    "--mcp-config".to_owned(),
                    config_path.display().to_string(),
                    "--strict-mcp-config".to_owned(),
                    "--allowedTools".to_owned(),
                    "mcp__subagents__codex".to_owned(),
                    "--output-format".to_owned(),
                    "stream-json".to_owned(),
                    "--verbose".to_owned(),
                ],
                &[
                    ("CLAUDE_CONFIG_DIR", format!("{home}/.claude-parent")),
                    ("ANTHROPIC_BASE_URL", server.url()),
                    ("ANTHROPIC_API_KEY", "dummy".to_owned()),
                    ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1".to_owned()),
                    ("CLAUDE_CODE_MAX_RETRIES", "0".to_owned()),
                    (
                        "CLAUDE_CODE_TMPDIR",
                        place.path("tmp").display().to_string(),
                    ),
                ],
            )
            .await;
        assert_eq!(output.code, Some(0), "{}", output.stderr);
        let init = &output.lines[0];
        assert!(
            init["tools"]
                .as_array()
                .unwrap()
                .iter()
                .any(|t| t == "mcp__subagents__codex"),
            "{init}"
        );
        // Our tool's result, as claude received it: codex's answer first.
        let tool_result = output
            .lines
            .iter()
            .filter(|line| line["type"] == "user")
            .flat_map(|line| {
                line["message"]["content"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default()
            })
            .find(|block| block["type"] == "tool_result")
            .unwrap();
        assert_eq!(tool_result["content"][0]["text"], "codex-says-swordfish");
        assert_ne!(tool_result["is_error"], true, "{tool_result}");
        let result = output.lines.last().unwrap();
        assert_eq!(result["type"], "result");
        assert_eq!(result["is_error"], false);
        let final_text = result["result"].as_str().unwrap();
        assert!(
            final_text.starts_with("claude got its answer from codex: codex-says-swordfish"),
            "{final_text}"
        );
        // The real codex ran (its request reached the server), and claude's last request
        // carried codex's answer to its model.
        let requests = server.model_requests();
        assert!(requests.iter().any(|r| r.path.starts_with("/v1/responses")));
        let last_claude = last_body(&requests, "/v1/messages");
        assert!(
            last_claude.contains("codex-says-swordfish"),
            "claude's model never saw codex's answer"
        );
        place.assert_nothing_left();
    }

    const CODEX_ASKS_CLAUDE: &str = r#"
- name: claude-child
  match: "claude, what is the password"
  steps:
    - text: "claude-says-swordfish"
- name: codex-parent
  match: "ask claude for the password"
  steps:
    - tool_calls:
        - name: claude_code
          namespace: mcp__subagents
          input: {prompt: "claude, what is the password?", description: "ask claude"}
    # codex's model repeats what our tool answered: claude's answer reaches codex's message.
    - {text: "codex got its answer from claude: ", text_from_tool_result: true}
"#;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn codex_calls_our_claude_code_tool_and_gets_claudes_answer() {
        let (server, place, command, args) = Place::start(CODEX_ASKS_CLAUDE).await;
        let quoted: Vec<String> = args.iter().map(|a| format!("{a:?}")).collect();
        let url = server.url();
        // `fake-model` is not in codex's catalog, so codex lists MCP tools to the model directly
        // (for catalog models it defers them behind `tool_search`).
        let config = [
            "model_provider=local".to_owned(),
            format!(
                r#"model_providers.local={{name="local",base_url="{url}/v1",wire_api="responses",env_key="OPENAI_API_KEY",request_max_retries=0,stream_max_retries=0}}"#
            ),
            "model=fake-model".to_owned(),
            "analytics.enabled=false".to_owned(),
            format!("mcp_servers.subagents.command={command:?}"),
            format!("mcp_servers.subagents.args=[{}]", quoted.join(",")),
            r#"mcp_servers.subagents.default_tools_approval_mode="approve""#.to_owned(),
            "mcp_servers.subagents.tool_timeout_sec=120".to_owned(),
        ];
        let mut argv = vec!["exec".to_owned()];
        for item in config {
            argv.push("-c".to_owned());
            argv.push(item);
        }
        argv.extend(
            [
                "--disable",
                "plugins",
                "--json",
                "--skip-git-repo-check",
                "--sandbox",
                "read-only",
                "ask claude for the password",
            ]
            .map(str::to_owned),
        );
        let output = place
            .run(
                &pinned(".bin/codex"),
                &argv,
                &[
                    ("CODEX_HOME", place.path("home").display().to_string()),
                    ("OPENAI_API_KEY", "dummy".to_owned()),
                    ("TMPDIR", place.path("tmp").display().to_string()),
                ],
            )
            .await;
        assert_eq!(output.code, Some(0), "{}", output.stderr);
        let call = output
            .lines
            .iter()
            .find(|line| {
                line["type"] == "item.completed" && line["item"]["type"] == "mcp_tool_call"
            })
            .unwrap_or_else(|| panic!("no MCP call: {:?}", output.lines));
        let item = &call["item"];
        assert_eq!(
            (&item["server"], &item["tool"], &item["status"]),
            (
                &Value::from("subagents"),
                &Value::from("claude_code"),
                &Value::from("completed")
            ),
            "{item}"
        );
        assert_eq!(
            item["result"]["content"][0]["text"], "claude-says-swordfish",
            "{item}"
        );
        let last = output
            .lines
            .iter()
            .rfind(|line| line["item"]["type"] == "agent_message")
            .unwrap();
        let final_text = last["item"]["text"].as_str().unwrap();
        // (codex hands its model the tool's output under a "Wall time: …" header.)
        assert!(
            final_text.starts_with("codex got its answer from claude: ")
                && final_text.contains("\nclaude-says-swordfish"),
            "{final_text}"
        );
        // The real claude ran, and codex's last request carried claude's answer to its model.
        let requests = server.model_requests();
        assert!(claude_asked(&requests), "no request from claude");
        let last_codex = last_body(&requests, "/v1/responses");
        assert!(
            last_codex.contains("claude-says-swordfish"),
            "codex's model never saw claude's answer"
        );
        place.assert_nothing_left();
    }
}

/// SIGTERM while a call's child runs a command: the run is cancelled (the call answers so),
/// its command is gone, and the server exits 0.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_cancels_the_runs_going_and_leaves_no_process() {
    let server = subagent_test_support::FakeServer::from_yaml(
        r#"
- match: "run a long job"
  steps:
    - tool_calls:
        - {id: call_long, name: bash, input: {command: "echo started > ready.fifo; exec sleep 314161"}}
    - text: "never"
"#,
    )
    .await
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("project");
    std::fs::create_dir(&project).unwrap();
    let fifo = project.join("ready.fifo");
    subagent_test_support::procs::mkfifo(&fifo);
    let preset = bypass_preset(dir.path(), &server.url());
    let subagent = Subagent::new(bin(), dir.path()).fake_key().arg("mcp");
    let (child, mut stdin) = piped(subagent.preset(&preset).arg("--cwd").arg(&project));
    initialize(&mut stdin).await;
    send(
        &mut stdin,
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "subagent", "arguments": {"prompt": "run a long job"}}}),
    )
    .await;
    // The command runs once it has written to the fifo.
    let started = subagent_test_support::procs::text_from(fifo).await;
    assert_eq!(started, "started\n");
    assert!(!processes_with("sleep 314161").is_empty());
    let pid = child.id().unwrap().to_string();
    assert!(
        std::process::Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .unwrap()
            .success()
    );
    let output = child.wait_with_output().await.unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    // The call answered before the server closed: its run was cancelled.
    let stdout = String::from_utf8_lossy(&output.stdout);
    let lines: Vec<Value> = stdout
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(lines.len(), 2, "{stdout}");
    assert_eq!(
        (
            &lines[1]["id"],
            &lines[1]["result"]["isError"],
            &lines[1]["result"]["_meta"]["status"]
        ),
        (&json!(2), &json!(true), &json!("cancelled")),
        "{stdout}"
    );
    wait_for("the command to be gone", || {
        processes_with("sleep 314161").is_empty()
    });
    drop(stdin);
}
