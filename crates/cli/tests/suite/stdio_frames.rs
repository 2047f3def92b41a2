//! `subagent acp` and `subagent mcp` against a client that writes bad frames on their stdin: a
//! line that is not UTF-8, a line that is not JSON, a line over the frame bound, a request split
//! across writes (inside a multi-byte character, before its newline), a last request without
//! its newline. Every bad frame is answered with a JSON-RPC error of its own (`id: null`), and
//! the connection and its sessions go on.

use std::collections::VecDeque;
use std::process::Stdio;

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout};

use super::support::{Place, fake_preset};
use super::support::{Subagent, bin};

/// The largest frame both servers read (`subagent_acp_agent::MAX_FRAME`,
/// `subagent_mcp::MAX_FRAME`): one byte more is refused.
const MAX_FRAME: usize = 16 * 1024 * 1024;

/// A client on a server's stdio: it writes raw bytes and reads the server's lines.
struct Peer {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Lines<BufReader<ChildStdout>>,
    /// Every message read, in order.
    seen: Vec<Value>,
    /// Answers read while looking for another one.
    unclaimed: VecDeque<Value>,
}

impl Peer {
    fn start(command: std::process::Command) -> Self {
        let mut child = tokio::process::Command::from(command)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let stdin = child.stdin.take();
        let lines = BufReader::new(child.stdout.take().unwrap()).lines();
        Self {
            child,
            stdin,
            lines,
            seen: Vec::new(),
            unclaimed: VecDeque::new(),
        }
    }

    async fn write(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(bytes).await.unwrap();
        stdin.flush().await.unwrap();
    }

    async fn send(&mut self, message: &Value) {
        self.write(format!("{message}\n").as_bytes()).await;
    }

    /// The next message the server writes (stdout carries the protocol only).
    async fn next(&mut self) -> Value {
        let Some(line) = self.lines.next_line().await.unwrap() else {
            let mut stderr = String::new();
            if let Some(mut pipe) = self.child.stderr.take() {
                tokio::io::AsyncReadExt::read_to_string(&mut pipe, &mut stderr)
                    .await
                    .unwrap();
            }
            panic!(
                "the server closed its stdout; seen: {:#?}\nstderr: {stderr}",
                self.seen
            );
        };
        let message: Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("stdout carries the protocol only: {line:?}: {e}"));
        self.seen.push(message.clone());
        message
    }

    /// The first answer (a result or an error) whose id is `id` not yet returned: one read
    /// earlier while looking for another, or the next one the server writes.
    async fn answer(&mut self, id: Value) -> Value {
        if let Some(at) = self.unclaimed.iter().position(|m| m["id"] == id) {
            return self.unclaimed.remove(at).unwrap();
        }
        loop {
            let message = self.next().await;
            if message.get("result").is_none() && message.get("error").is_none() {
                continue;
            }
            if message.get("id") == Some(&id) {
                return message;
            }
            self.unclaimed.push_back(message);
        }
    }

    /// The answers read while looking for others (as [`error_of`] shows them), taken.
    fn errors_before(&mut self) -> Vec<Value> {
        self.unclaimed.drain(..).map(|m| error_of(&m)).collect()
    }

    /// Closes stdin: the server answers what it read, exits 0 and writes nothing else.
    async fn close(mut self) -> Vec<Value> {
        drop(self.stdin.take());
        let mut rest = Vec::new();
        while let Some(line) = self.lines.next_line().await.unwrap() {
            rest.push(serde_json::from_str(&line).unwrap());
        }
        let output = self.child.wait_with_output().await.unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(0), "{stderr}");
        assert_eq!(self.unclaimed, VecDeque::new(), "answers nobody looked at");
        rest
    }

    /// Writes `last` with no newline, then [`Self::close`]s: the end of input ends the request,
    /// and its answer is all that is left.
    async fn close_after_unterminated(mut self, last: &Value) {
        self.write(last.to_string().as_bytes()).await;
        let rest = self.close().await;
        assert_eq!(
            rest.iter().map(|m| m["id"].clone()).collect::<Vec<_>>(),
            [last["id"].clone()],
            "{rest:#?}"
        );
    }
}

/// The error part of an answer, without the human text (which says which line and why).
fn error_of(answer: &Value) -> Value {
    json!({
        "id": answer["id"],
        "code": answer["error"]["code"],
        "data.code": answer["error"]["data"]["code"],
    })
}

fn parse_error() -> Value {
    json!({"id": null, "code": -32700, "data.code": "PROTOCOL"})
}

fn too_long() -> Value {
    json!({"id": null, "code": -32600, "data.code": "PROTOCOL"})
}

/// A line of `len` bytes that is valid JSON (a string) and has no newline.
fn huge_line(len: usize) -> Vec<u8> {
    let mut line = vec![b'"'];
    line.resize(len - 1, b'x');
    line.push(b'"');
    line
}

/// `message` followed by spaces up to `len` bytes, and a newline.
fn padded(message: &Value, len: usize) -> Vec<u8> {
    let mut line = message.to_string().into_bytes();
    line.resize(len, b' ');
    line.push(b'\n');
    line
}

/// `message` and its newline.
fn line(message: &Value) -> Vec<u8> {
    format!("{message}\n").into_bytes()
}

mod acp {
    use pretty_assertions::assert_eq;

    use super::*;

    const SCRIPT: &str = r#"
- name: first
  match: "say hello"
  steps:
    - text: "hello from the parent"
- name: second
  match: "and again"
  steps:
    - text: "again"
- name: accented
  match: "déjà vu"
  steps:
    - text: "seen"
"#;

    /// `subagent acp` on a fake model server (the [`Place`], kept while the test runs), and the
    /// project for its sessions.
    async fn start() -> (Place, Peer, std::path::PathBuf) {
        let place = Place::new(SCRIPT, "subagent-frames-").await;
        let preset = fake_preset(place.dir.path(), &place.server.url(), "");
        let command = Subagent::new(bin(), place.dir.path())
            .fake_key()
            .arg("acp")
            .preset(&preset)
            .command();
        let project = place.project.clone();
        (place, Peer::start(command), project)
    }

    fn initialize(id: u64) -> Value {
        json!({"jsonrpc": "2.0", "id": id, "method": "initialize",
            "params": {"protocolVersion": 1, "clientCapabilities": {}}})
    }

    fn new_session(id: u64, cwd: &std::path::Path) -> Value {
        json!({"jsonrpc": "2.0", "id": id, "method": "session/new",
            "params": {"cwd": cwd, "mcpServers": []}})
    }

    fn prompt(id: u64, session: &Value, text: &str) -> Value {
        json!({"jsonrpc": "2.0", "id": id, "method": "session/prompt",
            "params": {"sessionId": session, "prompt": [{"type": "text", "text": text}]}})
    }

    /// The text the agent streamed for `session` since message `from` of `seen`.
    fn streamed(seen: &[Value], from: usize) -> String {
        seen[from..]
            .iter()
            .filter(|m| m["params"]["update"]["sessionUpdate"] == "agent_message_chunk")
            .filter_map(|m| m["params"]["update"]["content"]["text"].as_str())
            .collect()
    }

    /// A line that is not UTF-8 used to end `subagent acp` and every session with it: now it is
    /// a parse error for that line, and the session started before it takes its next prompt.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_line_that_is_not_utf8_is_a_parse_error_and_the_session_goes_on() {
        let (_place, mut peer, project) = start().await;
        peer.send(&initialize(1)).await;
        peer.answer(json!(1)).await;
        peer.send(&new_session(2, &project)).await;
        let session = peer.answer(json!(2)).await["result"]["sessionId"].clone();
        peer.send(&prompt(3, &session, "say hello")).await;
        let first = peer.answer(json!(3)).await;
        assert_eq!(first["result"]["stopReason"], "end_turn", "{first}");
        // A request whose text holds a byte that is not UTF-8, and a line of bare garbage.
        let mut bad =
            br#"{"jsonrpc":"2.0","id":4,"method":"session/prompt","params":{"sessionId":"#.to_vec();
        bad.extend_from_slice(format!("{session}").as_bytes());
        bad.extend_from_slice(b",\"prompt\":[{\"type\":\"text\",\"text\":\"\xff\xfe\"}]}}\n");
        bad.extend_from_slice(b"\xc3\x28 \x80\n");
        // Each bad line is answered before the line after it is read.
        peer.write(&[bad, line(&initialize(10))].concat()).await;
        peer.answer(json!(10)).await;
        assert_eq!(peer.errors_before(), [parse_error(), parse_error()]);
        // The same session goes on: its next prompt continues the conversation.
        let from = peer.seen.len();
        peer.send(&prompt(5, &session, "and again")).await;
        let again = peer.answer(json!(5)).await;
        assert_eq!(again["result"]["stopReason"], "end_turn", "{again}");
        assert_eq!(streamed(&peer.seen, from), "again");
        assert_eq!(peer.close().await, Vec::<Value>::new());
    }

    /// Requests split across writes, each pause driven by the answer to a whole request written
    /// before the split one: inside a key, between the two bytes of "é", right before the
    /// newline, between a CR and its LF; then a last request without its newline, answered
    /// before the exit.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_request_split_across_writes_is_read_whole() {
        let (_place, mut peer, project) = start().await;
        let new = line(&new_session(2, &project));
        peer.write(&[line(&initialize(1)), new[..20].to_vec()].concat())
            .await;
        peer.answer(json!(1)).await;
        peer.write(&new[20..]).await;
        let session = peer.answer(json!(2)).await["result"]["sessionId"].clone();
        let accented = line(&prompt(3, &session, "déjà vu"));
        let at = accented.iter().position(|&b| b == 0xc3).unwrap() + 1;
        peer.write(&[line(&initialize(10)), accented[..at].to_vec()].concat())
            .await;
        peer.answer(json!(10)).await;
        let from = peer.seen.len();
        peer.write(&accented[at..]).await;
        let answer = peer.answer(json!(3)).await;
        assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
        assert_eq!(streamed(&peer.seen, from), "seen");
        // Up to the newline; then the newline, a whole request and one up to its CR.
        let second = prompt(4, &session, "and again").to_string();
        let third = format!("{}\r", initialize(5));
        peer.write(&[line(&initialize(11)), second.into_bytes()].concat())
            .await;
        peer.answer(json!(11)).await;
        peer.write(&[b"\n".to_vec(), line(&initialize(12)), third.into_bytes()].concat())
            .await;
        let answer = peer.answer(json!(4)).await;
        assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
        peer.answer(json!(12)).await;
        peer.write(b"\n").await;
        assert_eq!(peer.answer(json!(5)).await["result"]["protocolVersion"], 1);
        // The last request has no newline: the end of input ends it.
        peer.close_after_unterminated(&initialize(6)).await;
    }

    /// A request of exactly the frame bound is read; one byte more is refused, as soon as the
    /// line passes the bound (not buffered to its end), and the next line is read; a line with
    /// no newline at all ends with the input.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_line_over_the_bound_is_refused_and_the_next_is_read() {
        let (_place, mut peer, _) = start().await;
        peer.write(&[padded(&initialize(2), MAX_FRAME + 1), line(&initialize(10))].concat())
            .await;
        peer.answer(json!(10)).await;
        assert_eq!(peer.errors_before(), [too_long()]);
        peer.write(&padded(&initialize(1), MAX_FRAME)).await;
        assert_eq!(peer.answer(json!(1)).await["result"]["protocolVersion"], 1);
        peer.write(&huge_line(MAX_FRAME + 1)).await;
        let answer = peer.answer(Value::Null).await;
        assert_eq!(error_of(&answer), too_long(), "{answer}");
        peer.write(&[b"more of it\n".to_vec(), line(&initialize(3))].concat())
            .await;
        assert_eq!(peer.answer(json!(3)).await["result"]["protocolVersion"], 1);
        peer.write(&huge_line(3 * MAX_FRAME)).await;
        let answer = peer.answer(Value::Null).await;
        assert_eq!(error_of(&answer), too_long(), "{answer}");
        // Nothing answered the refused request (close checks no answer was left unread).
        assert_eq!(peer.close().await, Vec::<Value>::new());
    }
}

mod mcp {
    use pretty_assertions::assert_eq;

    use super::*;

    /// `subagent mcp --offline` (the scripted model).
    fn start(dir: &std::path::Path) -> Peer {
        Peer::start(
            Subagent::new(bin(), dir)
                .args(["mcp", "--offline"])
                .command(),
        )
    }

    fn initialize(id: u64) -> Value {
        json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"}}})
    }

    fn initialized() -> Value {
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
    }

    fn call(id: u64, prompt: &str) -> Value {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
            "name": "subagent", "arguments": {"prompt": prompt}}})
    }

    fn ping(id: u64) -> Value {
        json!({"jsonrpc": "2.0", "id": id, "method": "ping"})
    }

    async fn ready(peer: &mut Peer) {
        peer.send(&initialize(1)).await;
        let answer = peer.answer(json!(1)).await;
        assert_eq!(answer["result"]["serverInfo"]["name"], "subagents");
        peer.send(&initialized()).await;
    }

    /// `subagent mcp` used to skip a bad line without a word (rmcp ignores what it cannot
    /// parse): now a line that is not UTF-8, or not JSON, is a parse error for that line, and
    /// calls go on.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_line_that_is_not_utf8_or_not_json_is_a_parse_error_and_calls_go_on() {
        let dir = tempfile::tempdir().unwrap();
        let mut peer = start(dir.path());
        ready(&mut peer).await;
        let answer = peer.answer_call(2).await;
        assert_eq!(answer["result"]["isError"], false, "{answer}");
        let bad = b"{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"subagent\",\"arguments\":{\"prompt\":\"\xff\"}}}\nnot json at all\n";
        // Each bad line is answered before the line after it is read.
        peer.write(&[bad.to_vec(), line(&ping(10))].concat()).await;
        peer.answer(json!(10)).await;
        assert_eq!(peer.errors_before(), [parse_error(), parse_error()]);
        let answer = peer.answer_call(4).await;
        assert_eq!(answer["result"]["isError"], false, "{answer}");
        assert_eq!(peer.close().await, Vec::<Value>::new());
    }

    /// Requests split across writes, each pause driven by the answer to a whole request written
    /// before the split one: inside a key, between the two bytes of "é", right before the
    /// newline, between a CR and its LF; then a last request without its newline, answered
    /// before the exit.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_request_split_across_writes_is_read_whole() {
        let dir = tempfile::tempdir().unwrap();
        let mut peer = start(dir.path());
        let note = line(&initialized());
        peer.write(&[line(&initialize(1)), note[..10].to_vec()].concat())
            .await;
        peer.answer(json!(1)).await;
        peer.write(&note[10..]).await;
        let accented = line(&call(2, "Say hello, déjà vu"));
        let at = accented.iter().position(|&b| b == 0xc3).unwrap() + 1;
        peer.write(&[line(&ping(10)), accented[..at].to_vec()].concat())
            .await;
        peer.answer(json!(10)).await;
        peer.write(&accented[at..]).await;
        let answer = peer.answer(json!(2)).await;
        assert_eq!(answer["result"]["isError"], false, "{answer}");
        // Up to the CR; then the LF and a whole request; then one up to its newline.
        let second = format!("{}\r", ping(3));
        peer.write(&[line(&ping(11)), second.into_bytes()].concat())
            .await;
        peer.answer(json!(11)).await;
        peer.write(
            &[
                b"\n".to_vec(),
                line(&ping(12)),
                ping(4).to_string().into_bytes(),
            ]
            .concat(),
        )
        .await;
        assert_eq!(peer.answer(json!(3)).await["result"], json!({}));
        peer.answer(json!(12)).await;
        peer.write(b"\n").await;
        assert_eq!(peer.answer(json!(4)).await["result"], json!({}));
        // The last request has no newline: the end of input ends it.
        peer.close_after_unterminated(&ping(5)).await;
    }

    /// The frame bound of `subagent mcp`, as `acp`'s test of the same name holds `subagent acp`
    /// to it: exactly the bound is read, one byte more refused early, the next line read.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_line_over_the_bound_is_refused_and_the_next_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let mut peer = start(dir.path());
        ready(&mut peer).await;
        peer.write(&[padded(&ping(3), MAX_FRAME + 1), line(&ping(10))].concat())
            .await;
        peer.answer(json!(10)).await;
        assert_eq!(peer.errors_before(), [too_long()]);
        peer.write(&padded(&ping(2), MAX_FRAME)).await;
        assert_eq!(peer.answer(json!(2)).await["result"], json!({}));
        peer.write(&huge_line(MAX_FRAME + 1)).await;
        let answer = peer.answer(Value::Null).await;
        assert_eq!(error_of(&answer), too_long(), "{answer}");
        peer.write(&[b"more of it\n".to_vec(), line(&ping(4))].concat())
            .await;
        assert_eq!(peer.answer(json!(4)).await["result"], json!({}));
        peer.write(&huge_line(3 * MAX_FRAME)).await;
        let answer = peer.answer(Value::Null).await;
        assert_eq!(error_of(&answer), too_long(), "{answer}");
        // Nothing answered the refused request (close checks no answer was left unread).
        assert_eq!(peer.close().await, Vec::<Value>::new());
    }

    impl Peer {
        /// Calls the `subagent` tool (the scripted model answers) and reads its answer.
        async fn answer_call(&mut self, id: u64) -> Value {
            self.send(&call(id, "Say hello from the subagent")).await;
            self.answer(json!(id)).await
        }
    }
}
