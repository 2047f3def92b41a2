//! `subagent acp`: the run parent served over ACP on stdio (the protocol itself is tested in
//! `crates/acp-agent`; the official TypeScript client drives the binary in the e2e test).

use std::io::{BufRead, BufReader, Write};

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::support::{Place, Subagent, bin, fake_preset};
#[cfg(feature = "e2e")]
use super::support::{sdk_client, sdk_place};

const HELLO: &str = r#"
- name: parent
  match: "say hello"
  steps:
    - text: "hello from the parent"
- name: again
  match: "and again"
  steps:
    - text: "again"
"#;

/// Reads JSON-RPC lines until the response to `id`; every line read is kept.
fn until_response(
    lines: &mut impl Iterator<Item = String>,
    id: u64,
    seen: &mut Vec<Value>,
) -> Value {
    for line in lines {
        let message: Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("stdout carries the protocol only: {line:?}: {e}"));
        seen.push(message.clone());
        if message["id"] == id {
            return message;
        }
    }
    panic!("no response to {id}; seen: {seen:#?}");
}

/// stdout is JSON-RPC only (logs go to stderr, even at -v); a prompt runs the preset's parent
/// in the session's directory and streams its text; closing stdin ends the server (exit 0).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acp_serves_the_run_parent_on_stdio() {
    let Place {
        server,
        dir,
        project,
    } = Place::new(HELLO, "subagent-acp-").await;
    let preset = fake_preset(dir.path(), &server.url(), "");
    // Its stdin piped (`stdin` given), for the client to write.
    let mut child = Subagent::new(bin(), dir.path())
        .fake_key()
        .args(["-v", "acp"])
        .preset(&preset)
        .stdin(Vec::new())
        .spawn();
    let mut stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let result = tokio::task::spawn_blocking(move || {
        let mut lines = BufReader::new(stdout).lines().map(Result::unwrap);
        let mut seen = Vec::new();
        let mut send = |message: Value| {
            writeln!(stdin, "{message}").unwrap();
            stdin.flush().unwrap();
        };
        send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": 1, "clientCapabilities": {}}}));
        let init = until_response(&mut lines, 1, &mut seen);
        send(json!({"jsonrpc": "2.0", "id": 2, "method": "session/new",
            "params": {"cwd": project, "mcpServers": []}}));
        let session = until_response(&mut lines, 2, &mut seen)["result"]["sessionId"].clone();
        send(
            json!({"jsonrpc": "2.0", "id": 3, "method": "session/prompt",
            "params": {"sessionId": session, "prompt": [{"type": "text", "text": "say hello"}]}}),
        );
        let prompt = until_response(&mut lines, 3, &mut seen);
        send(
            json!({"jsonrpc": "2.0", "id": 4, "method": "session/prompt",
            "params": {"sessionId": session, "prompt": [{"type": "text", "text": "and again"}]}}),
        );
        let again = until_response(&mut lines, 4, &mut seen);
        assert_eq!(again["result"]["stopReason"], "end_turn", "{again}");
        drop(stdin);
        // Nothing more is written once stdin closes.
        let rest: Vec<String> = lines.collect();
        (init, session, prompt, seen, rest)
    })
    .await
    .unwrap();
    let (init, session, prompt, seen, rest) = result;
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert_eq!(
        (
            init["result"]["protocolVersion"].clone(),
            init["result"]["agentInfo"]["name"].clone()
        ),
        (json!(1), json!("subagent"))
    );
    assert_eq!(
        prompt,
        json!({"jsonrpc": "2.0", "id": 3, "result": {"stopReason": "end_turn"}})
    );
    let text: String = seen
        .iter()
        .filter(|m| m["method"] == "session/update")
        .inspect(|m| assert_eq!(m["params"]["sessionId"], session))
        .filter(|m| m["params"]["update"]["sessionUpdate"] == "agent_message_chunk")
        .map(|m| {
            m["params"]["update"]["content"]["text"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    assert_eq!(text, "hello from the parentagain");
    assert_eq!(rest, Vec::<String>::new());
    assert!(stderr.contains("serving ACP on stdio"), "{stderr}");
    // The preset's run parent answered; the second prompt continued the first's conversation,
    // kept as one transcript (run's session files, in the state dir under HOME).
    let request = server.model_requests().pop().unwrap();
    let texts: Vec<String> = request.messages.iter().map(|m| m.text()).collect();
    assert_eq!(texts, ["say hello", "hello from the parent", "and again"]);
    let system = request.body.unwrap().to_string();
    assert!(system.contains("You are a coding agent"), "{system}");
    let sessions = dir.path().join(".local/state/subagents/sessions");
    let transcripts: Vec<_> = std::fs::read_dir(&sessions)
        .unwrap()
        .flat_map(|project| std::fs::read_dir(project.unwrap().path()).unwrap())
        .map(|file| file.unwrap().file_name().into_string().unwrap())
        .filter(|name| name.ends_with(".jsonl"))
        .collect();
    assert_eq!(transcripts.len(), 1, "{transcripts:?}");
    assert!(
        !stderr.contains("continuing the session from memory"),
        "{stderr}"
    );
}

#[cfg(feature = "e2e")]
const INTEROP: &str = r#"
- name: child
  match: "CHILD-EDITS"
  steps:
    - tool_calls:
        - {id: call_allowed, name: bash, input: {command: "touch allowed.txt"}}
        - {id: call_rejected, name: bash, input: {command: "touch rejected.txt"}}
    - text: "child done"
- name: long
  match: "run a long job"
  steps:
    - tool_calls:
        - {id: call_long, name: bash, input: {command: "echo started > ready.fifo; exec sleep 314159"}}
    - text: "never"
- name: parent
  match: "delegate the edits"
  steps:
    - tool_calls:
        - id: call_sub
          name: subagent
          input: {prompt: "CHILD-EDITS make two files", description: "make two files"}
    - text: "parent done"
"#;

/// The issue's interop test: a client built on the official TypeScript SDK (pinned in
/// target/clis by `cargo xtask install-clis`) drives the real `subagent acp`: initialize,
/// session/new, a prompt whose delegation shows as a tool call with the child's progress and
/// whose child's two questions are answered (allow, reject: obeyed), then a cancelled prompt
/// whose command is gone afterwards.
#[cfg(feature = "e2e")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_official_typescript_client_drives_subagent_acp() {
    let (sdk, place) = sdk_place(
        "@agentclientprotocol/sdk/dist/acp.js",
        INTEROP,
        "subagent-acp-",
    )
    .await;
    let preset = fake_preset(place.dir.path(), &place.server.url(), "");
    let (seen, stderr) = sdk_client(
        "acp/client.mjs",
        &sdk,
        &preset,
        &place.project,
        place.dir.path(),
    )
    .await;
    assert_eq!(
        seen,
        json!({
            "protocolVersion": 1,
            "agentName": "subagent",
            "loadSession": false,
            "stopReasons": ["end_turn", "cancelled"],
            "delegation": {"title": "make two files", "kind": "think"},
            "childProgressShown": true,
            "delegationEnd": "completed",
            "firstAnswer": "parent done",
            "questions": [
                {"title": "bash: echo started > ready.fifo; exec sleep 314159", "toolCallId": "call_long", "optionId": "allow_once"},
                {"title": "bash: touch allowed.txt (subagent at depth 1)", "toolCallId": "call_allowed", "optionId": "allow_once"},
                {"title": "bash: touch rejected.txt (subagent at depth 1)", "toolCallId": "call_rejected", "optionId": "reject_once"},
            ],
            "longCall": {"title": "bash: echo started > ready.fifo; exec sleep 314159", "kind": "execute"},
            "exitCode": 0,
        }),
        "{stderr}"
    );
    assert!(place.project.join("allowed.txt").exists());
    assert!(!place.project.join("rejected.txt").exists());
    // The child's results reached the parent's model: the rejected one as refused.
    let results = place
        .server
        .model_requests()
        .iter()
        .flat_map(|r| r.messages.last().cloned())
        .flat_map(|m| m.content)
        .filter_map(|block| match block {
            subagent_session::ContentBlock::ToolResult {
                tool_use_id,
                is_error,
                content,
            } if tool_use_id == "call_rejected" => Some((is_error, content.to_text())),
            _ => None,
        })
        .collect::<Vec<_>>();
    assert_eq!(
        results.first(),
        Some(&(
            true,
            "permission denied: approval for bash was refused".to_owned()
        ))
    );
    assert!(
        super::support::processes_with("sleep 314159").is_empty(),
        "the cancelled command survived subagent acp"
    );
}
