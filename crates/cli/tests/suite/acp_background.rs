//! `subagent acp` with background children: the prompt's turn ends while they run, each one's
//! end reaches the client as a `session/update` outside any turn and the model at the next
//! prompt, and closing stdin stops whatever still runs.

use std::io::{BufRead, BufReader, Write};
use std::process::ChildStdin;
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::Duration;

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::support::{Place, Subagent, bin, fake_preset, processes_with};
use subagent_test_support::procs;

/// How long a test waits for a line the server owes it before it fails (a bound, not a clock
/// the test keeps time by).
const BOUND: Duration = Duration::from_secs(60);

const SLOW_CHILD: &str = r#"
- name: child
  match: "CHILD-SLOW"
  steps:
    - wait_gate: child
      text: "the child counted 42"
- name: parent
  match: "start the slow child"
  steps:
    - tool_calls:
        - id: call_bg
          name: subagent
          input: {description: slow count, prompt: "CHILD-SLOW count the things", run_in_background: true}
    - text: "started it"
- name: after
  match: "what came back"
  steps:
    - text: "it said 42"
"#;

/// The server's stdout as JSON-RPC messages, read on a thread of their own.
struct Wire {
    stdin: Option<ChildStdin>,
    lines: Receiver<Value>,
    seen: Vec<Value>,
}

impl Wire {
    fn new(child: &mut std::process::Child) -> Self {
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let line = line.unwrap();
                let message: Value = serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("stdout carries the protocol only: {line:?}: {e}"));
                if tx.send(message).is_err() {
                    return;
                }
            }
        });
        Self {
            stdin: Some(stdin),
            lines,
            seen: Vec::new(),
        }
    }

    fn send(&mut self, message: &Value) {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    }

    /// The next message, within [`BOUND`]; `None` once stdout closed.
    fn next(&mut self, waiting_for: &str) -> Option<Value> {
        match self.lines.recv_timeout(BOUND) {
            Ok(message) => {
                self.seen.push(message.clone());
                Some(message)
            }
            Err(RecvTimeoutError::Disconnected) => None,
            Err(RecvTimeoutError::Timeout) => {
                panic!("no {waiting_for} within {BOUND:?}; seen: {:#?}", self.seen)
            }
        }
    }

    /// Reads until the response to `id`.
    fn response(&mut self, id: u64) -> Value {
        loop {
            let message = self
                .next(&format!("response to {id}"))
                .unwrap_or_else(|| panic!("stdout closed before the response to {id}"));
            if message["id"] == id {
                return message;
            }
        }
    }

    /// Reads until a message for which `wanted` holds.
    fn until(&mut self, what: &str, wanted: impl Fn(&Value) -> bool) -> Value {
        loop {
            let message = self
                .next(what)
                .unwrap_or_else(|| panic!("stdout closed before {what}"));
            if wanted(&message) {
                return message;
            }
        }
    }

    /// initialize + session/new in `project`: the session id.
    fn open(&mut self, project: &std::path::Path) -> Value {
        self.send(&json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": 1, "clientCapabilities": {}}}));
        self.response(1);
        self.send(&json!({"jsonrpc": "2.0", "id": 2, "method": "session/new",
            "params": {"cwd": project, "mcpServers": []}}));
        self.response(2)["result"]["sessionId"].clone()
    }

    fn prompt(&mut self, id: u64, session: &Value, text: &str) -> Value {
        self.send(
            &json!({"jsonrpc": "2.0", "id": id, "method": "session/prompt",
            "params": {"sessionId": session, "prompt": [{"type": "text", "text": text}]}}),
        );
        self.response(id)
    }
}

/// The update of a `session/update` message (`Null` for any other message).
fn update(message: &Value) -> &Value {
    match message["method"] == "session/update" {
        true => &message["params"]["update"],
        false => &Value::Null,
    }
}

/// The prompt whose model starts a background child answers `end_turn` while the child still
/// waits on its gate; once the child ends, with no prompt running, the client is sent its end
/// (the delegation's tool call updated with the child's result, and a message naming it); the
/// next prompt's model request carries the `<task-notification>`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_background_childs_end_reaches_the_client_after_the_turn() {
    let place = Place::new(SLOW_CHILD, "subagent-acp-bg-").await;
    let preset = fake_preset(place.dir.path(), &place.server.url(), "");
    let mut child = Subagent::new(bin(), place.dir.path())
        .fake_key()
        .args(["acp"])
        .preset(&preset)
        .stdin(Vec::new())
        .spawn();
    let gate = place.server.gate("child");
    let project = place.project.clone();
    let (first, shown, told, second) = tokio::task::spawn_blocking(move || {
        let mut wire = Wire::new(&mut child);
        let session = wire.open(&project);
        let first = wire.prompt(3, &session, "start the slow child");
        // The turn ended while the child still waits at its gate.
        assert!(!gate.is_open());
        let told = wire.seen.len();
        gate.open();
        let shown = wire.until("the child's end as a message", |m| {
            update(m)["sessionUpdate"] == "agent_message_chunk"
                && update(m)["content"]["text"]
                    .as_str()
                    .is_some_and(|t| t.contains("the child counted 42"))
        });
        let updates: Vec<Value> = wire.seen[told..].iter().map(update).cloned().collect();
        let second = wire.prompt(4, &session, "what came back?");
        wire.stdin = None;
        while wire.next("the end of stdout").is_some() {}
        let status = child.wait().unwrap();
        assert_eq!(status.code(), Some(0));
        (first, (shown, updates), told, second)
    })
    .await
    .unwrap();
    assert_eq!(
        first,
        json!({"jsonrpc": "2.0", "id": 3, "result": {"stopReason": "end_turn"}})
    );
    assert!(told > 0);
    let (shown, updates) = shown;
    let text = update(&shown)["content"]["text"].as_str().unwrap();
    assert!(
        text.contains("slow count") && text.contains("completed"),
        "{text}"
    );
    // The delegation's call (started in the turn) shows the child's result too.
    let call = updates
        .iter()
        .find(|u| u["sessionUpdate"] == "tool_call_update" && u["toolCallId"] == "call_bg")
        .unwrap_or_else(|| panic!("no update of call_bg after the turn: {updates:#?}"));
    assert_eq!(call["status"], "completed", "{call}");
    assert!(
        call["content"].to_string().contains("the child counted 42"),
        "{call}"
    );
    assert_eq!(second["result"]["stopReason"], "end_turn", "{second}");
    // The next prompt's request: the notification, then the user's words.
    let request = place.server.model_requests().pop().unwrap();
    let last = request.messages.last().unwrap().text();
    assert!(
        last.contains("<task-notification>")
            && last.contains("<status>completed</status>")
            && last.contains("<result>the child counted 42</result>")
            && last.ends_with("what came back?"),
        "{last}"
    );
    assert_eq!(place.server.violations(), Vec::<String>::new());
}

const RUNNING_CHILD: &str = r#"
- name: child
  match: "CHILD-RUNS"
  steps:
    - tool_calls:
        - {id: call_sleep, name: bash, input: {command: "echo started > ready.fifo; exec sleep 271828"}}
    - text: "never"
- name: parent
  match: "start the endless child"
  steps:
    - tool_calls:
        - id: call_bg
          name: subagent
          input: {description: endless, prompt: "CHILD-RUNS sleep a long time", run_in_background: true}
    - text: "started it"
"#;

/// A background child still running (its command sleeping) when the client closes stdin is
/// stopped: the server exits 0 and no process of it is left.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn closing_stdin_stops_the_background_children() {
    let place = Place::new(RUNNING_CHILD, "subagent-acp-bg-").await;
    let preset = fake_preset(place.dir.path(), &place.server.url(), "");
    procs::mkfifo(&place.project.join("ready.fifo"));
    let mut child = Subagent::new(bin(), place.dir.path())
        .fake_key()
        .args(["acp", "--permission-mode", "bypass"])
        .preset(&preset)
        .stdin(Vec::new())
        .spawn();
    let mut wire = Wire::new(&mut child);
    let project = place.project.clone();
    let (mut wire, first) = tokio::task::spawn_blocking(move || {
        let session = wire.open(&project);
        let first = wire.prompt(3, &session, "start the endless child");
        (wire, first)
    })
    .await
    .unwrap();
    assert_eq!(first["result"]["stopReason"], "end_turn", "{first}");
    // The child's command runs after the turn ended.
    assert_eq!(
        procs::text_from(place.project.join("ready.fifo")).await,
        "started\n"
    );
    assert!(!processes_with("sleep 271828").is_empty());
    let status = tokio::task::spawn_blocking(move || {
        wire.stdin = None;
        while wire.next("the end of stdout").is_some() {}
        child.wait().unwrap()
    })
    .await
    .unwrap();
    assert_eq!(status.code(), Some(0));
    assert_eq!(processes_with("sleep 271828"), Vec::<u32>::new());
    // Stopped by the server before it exited, not merely killed with it: the task's output
    // file (under the session's directory of the project's task root) ends with its outcome.
    let tasks = place.dir.path().join(".local/state/subagents/tasks");
    let outcomes: Vec<Value> = std::fs::read_dir(&tasks)
        .unwrap()
        .flat_map(|project| std::fs::read_dir(project.unwrap().path()).unwrap())
        .flat_map(|session| std::fs::read_dir(session.unwrap().path()).unwrap())
        .map(|file| std::fs::read_to_string(file.unwrap().path()).unwrap())
        .map(|text| serde_json::from_str(text.lines().last().unwrap()).unwrap())
        .collect();
    assert_eq!(outcomes.len(), 1, "{outcomes:?}");
    assert_eq!(
        (&outcomes[0]["type"], &outcomes[0]["outcome"]["status"]),
        (&json!("outcome"), &json!("cancelled"))
    );
}
