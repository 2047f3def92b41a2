//! A parent's `RunEvent`s as ACP `session/update`s.
//!
//! The parent's text and reasoning become message and thought chunks; each of its tool calls an
//! ACP tool call (title, kind, raw input, locations) answered by one update with the result. A
//! delegation's child is not a tool call of its own: its events (tagged with the delegation's
//! call id) are folded into a short progress text that each update of the delegation's call
//! carries, bounded so that a long child costs the client a few kilobytes per update.

use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use agent_client_protocol::v1::schema::{
    ContentBlock, ContentChunk, SessionUpdate, TextContent, ToolCall, ToolCallContent,
    ToolCallLocation, ToolCallStatus, ToolCallUpdate, ToolCallUpdateFields, ToolKind as AcpKind,
};
use serde_json::Value;
use subagent_core::RunEvent;
use subagent_core::text::{Limit, truncate};
use subagent_runtime::{TaskInfo, TaskStatus, ToolKind};

/// How many of a child's tool calls a delegation's progress lists (the latest ones).
const PROGRESS_LINES: usize = 12;
/// How much of a child's latest text a delegation's progress shows, in bytes (its end).
const PROGRESS_TEXT: usize = 2000;

/// The parent's tool calls seen so far, shared with the permission broker so that a question
/// names the call it is about.
#[derive(Default)]
pub(crate) struct SeenCalls {
    calls: Mutex<Vec<Seen>>,
    added: tokio::sync::Notify,
}

/// How long a question waits for the event of the call it is about (a child's call reaches
/// the parent's stream through the delegation's forwarding, a moment after the child asks).
const CALL_EVENT_WAIT: Duration = Duration::from_secs(2);

struct Seen {
    id: String,
    tool: String,
    input: Value,
    asked: bool,
}

impl SeenCalls {
    fn push(&self, id: &str, tool: &str, input: &Value) {
        let mut calls = self.calls.lock().unwrap_or_else(PoisonError::into_inner);
        // Only calls still waiting can be asked about; keep the list short.
        if calls.len() >= 256 {
            calls.remove(0);
        }
        calls.push(Seen {
            id: id.to_owned(),
            tool: tool.to_owned(),
            input: input.clone(),
            asked: false,
        });
        drop(calls);
        self.added.notify_waiters();
    }

    /// [`SeenCalls::claim`], waiting a moment for the call's event when it has not been sent
    /// to the client yet; `None` if it does not come.
    pub(crate) async fn claim_soon(&self, tool: &str, input: &Value) -> Option<String> {
        let wait = async {
            loop {
                let added = self.added.notified();
                if let Some(id) = self.claim(tool, input) {
                    return id;
                }
                added.await;
            }
        };
        tokio::time::timeout(CALL_EVENT_WAIT, wait).await.ok()
    }

    /// The id of the latest call of `tool` with `input` not asked about yet (and marks it).
    pub(crate) fn claim(&self, tool: &str, input: &Value) -> Option<String> {
        let mut calls = self.calls.lock().unwrap_or_else(PoisonError::into_inner);
        let seen = calls
            .iter_mut()
            .rev()
            .find(|seen| !seen.asked && seen.tool == tool && &seen.input == input)?;
        seen.asked = true;
        Some(seen.id.clone())
    }

    pub(crate) fn clear(&self) {
        self.calls
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
    }
}

/// What a client is shown of one tool call: a title, a kind, the files it touches.
pub(crate) fn describe(
    tool: &str,
    input: &Value,
    kind: Option<ToolKind>,
    cwd: &Path,
) -> (String, AcpKind, Vec<ToolCallLocation>) {
    let field = |key: &str| input.get(key).and_then(Value::as_str);
    if kind == Some(ToolKind::Delegate) {
        let title = field("description")
            .map(str::to_owned)
            .or_else(|| field("prompt").map(subagent_core::default_description))
            .unwrap_or_else(|| tool.to_owned());
        return (title, AcpKind::Think, Vec::new());
    }
    let acp = match (kind, tool) {
        (_, "glob" | "grep") => AcpKind::Search,
        (_, "delete") => AcpKind::Delete,
        (Some(ToolKind::ReadOnly), _) => AcpKind::Read,
        (Some(ToolKind::Edit), _) => AcpKind::Edit,
        (Some(ToolKind::Execute), _) => AcpKind::Execute,
        _ => AcpKind::Other,
    };
    let path = field("path").or_else(|| field("file_path"));
    let subject = field("command").or(path).or_else(|| field("pattern"));
    let title = match subject {
        Some(subject) => format!("{tool}: {}", one_line(subject, 120)),
        None => tool.to_owned(),
    };
    let locations = path
        .map(|path| vec![ToolCallLocation::new(absolute(cwd, path))])
        .unwrap_or_default();
    (title, acp, locations)
}

fn absolute(cwd: &Path, path: &str) -> PathBuf {
    let path = Path::new(path);
    if path.is_absolute() {
        path.to_path_buf()
    } else {
        cwd.join(path)
    }
}

/// The first line of `text`, at most `max` characters (an ellipsis marks a cut).
fn one_line(text: &str, max: usize) -> String {
    let line = text.lines().next().unwrap_or_default();
    let mut out: String = line.chars().take(max).collect();
    if out.len() < text.len() {
        out.push('…');
    }
    out
}

fn text_block(text: impl Into<String>) -> ContentBlock {
    ContentBlock::Text(TextContent::new(text.into()))
}

/// A delegation's child, as its call's updates show it.
#[derive(Default)]
struct Child {
    lines: VecDeque<String>,
    text: String,
}

impl Child {
    fn line(&mut self, line: String) {
        if self.lines.len() == PROGRESS_LINES {
            self.lines.pop_front();
        }
        self.lines.push_back(line);
        // A new step starts a new message.
        self.text.clear();
    }

    fn text(&mut self, text: &str) {
        self.text.push_str(text);
        if self.text.len() > PROGRESS_TEXT {
            let mut cut = self.text.len() - PROGRESS_TEXT;
            while !self.text.is_char_boundary(cut) {
                cut += 1;
            }
            self.text.drain(..cut);
        }
    }

    fn render(&self) -> String {
        let mut out = self.lines.iter().cloned().collect::<Vec<_>>().join("\n");
        if !self.text.is_empty() {
            if !out.is_empty() {
                out.push_str("\n\n");
            }
            out.push_str(&self.text);
        }
        out
    }
}

/// How much of a background task's result the updates of its end show (its start).
const ENDED_RESULT: Limit = Limit::Chars(4000);
/// How much of it the message line naming the end shows.
const ENDED_LINE: Limit = Limit::Chars(300);

/// What the client is shown when a background task of the session ends outside a prompt: the
/// tool call that started it, updated to the task's status (`completed`, else `failed`) with
/// its result, and a line of agent message naming the task, its status and the start of its
/// result (a client that shows no late tool-call update still shows a message).
pub(crate) fn task_ended(task: &TaskInfo) -> Vec<SessionUpdate> {
    let status = task.state.status();
    let result = task.state.outcome().map_or_else(String::new, |outcome| {
        let mut text = match &outcome.structured {
            Some(value) => value.to_string(),
            None => outcome.text.clone(),
        };
        if let Some(diagnostic) = &outcome.diagnostic {
            if !text.is_empty() {
                text.push('\n');
            }
            text.push_str(diagnostic);
        }
        text
    });
    let call_status = match status {
        TaskStatus::Completed => ToolCallStatus::Completed,
        _ => ToolCallStatus::Failed,
    };
    let shown = format!(
        "Background task {status}:\n{}",
        truncate(&result, ENDED_RESULT)
    );
    let line = one_line(&truncate(&result, ENDED_LINE), 300);
    let message = format!(
        "\n\nBackground task “{}” {status}{}\n",
        task.description,
        if line.is_empty() {
            String::new()
        } else {
            format!(": {line}")
        }
    );
    vec![
        SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
            task.tool_use_id.clone(),
            ToolCallUpdateFields::new()
                .status(call_status)
                .content(vec![ToolCallContent::from(text_block(shown))]),
        )),
        SessionUpdate::AgentMessageChunk(ContentChunk::new(text_block(message))),
    ]
}

/// Turns one run's events into updates.
pub(crate) struct Translator {
    cwd: PathBuf,
    kinds: Arc<HashMap<String, ToolKind>>,
    seen: Arc<SeenCalls>,
    /// Live delegations of the parent, by call id.
    children: HashMap<String, Child>,
    /// A nested call's id → the parent's delegation call it belongs to.
    owner: HashMap<String, String>,
    /// The call the last update showed, made known to questions once it was sent (so that the
    /// client hears of a call before a question about it).
    staged: Option<(String, String, Value)>,
}

impl Translator {
    pub(crate) fn new(
        cwd: PathBuf,
        kinds: Arc<HashMap<String, ToolKind>>,
        seen: Arc<SeenCalls>,
    ) -> Self {
        Self {
            cwd,
            kinds,
            seen,
            children: HashMap::new(),
            owner: HashMap::new(),
            staged: None,
        }
    }

    /// The last update was sent: questions may now name its call.
    pub(crate) fn sent(&mut self) {
        if let Some((id, tool, input)) = self.staged.take() {
            self.seen.push(&id, &tool, &input);
        }
    }

    /// The delegation call a tagged event belongs to.
    fn root(&self, tag: &str) -> Option<String> {
        if self.children.contains_key(tag) {
            return Some(tag.to_owned());
        }
        self.owner.get(tag).cloned()
    }

    fn progress(&self, root: &str) -> Option<SessionUpdate> {
        let child = self.children.get(root)?;
        Some(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
            root.to_owned(),
            ToolCallUpdateFields::new()
                .status(ToolCallStatus::InProgress)
                .content(vec![ToolCallContent::from(text_block(child.render()))]),
        )))
    }

    /// The updates one event makes (none for usage, progress notes and the run's bookends).
    pub(crate) fn translate(&mut self, event: RunEvent) -> Option<SessionUpdate> {
        match event {
            RunEvent::Text {
                text,
                parent_tool_use_id: None,
            } => Some(SessionUpdate::AgentMessageChunk(ContentChunk::new(
                text_block(text),
            ))),
            RunEvent::Thinking { text } => Some(SessionUpdate::AgentThoughtChunk(
                ContentChunk::new(text_block(text)),
            )),
            RunEvent::ToolCall {
                id,
                name,
                input,
                parent_tool_use_id: None,
            } => {
                let kind = self.kinds.get(&name).copied();
                let (title, acp, locations) = describe(&name, &input, kind, &self.cwd);
                self.staged = Some((id.clone(), name, input.clone()));
                if kind == Some(ToolKind::Delegate) {
                    self.children.insert(id.clone(), Child::default());
                }
                Some(SessionUpdate::ToolCall(
                    ToolCall::new(id, title)
                        .kind(acp)
                        .status(ToolCallStatus::Pending)
                        .locations(locations)
                        .raw_input(input),
                ))
            }
            RunEvent::ToolResult {
                id,
                output,
                is_error,
                parent_tool_use_id: None,
            } => {
                self.children.remove(&id);
                self.owner.retain(|_, root| root != &id);
                let status = if is_error {
                    ToolCallStatus::Failed
                } else {
                    ToolCallStatus::Completed
                };
                Some(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
                    id,
                    ToolCallUpdateFields::new()
                        .status(status)
                        .content(vec![ToolCallContent::from(text_block(output))]),
                )))
            }
            RunEvent::Text {
                text,
                parent_tool_use_id: Some(tag),
            } => {
                let root = self.root(&tag)?;
                self.children.get_mut(&root)?.text(&text);
                self.progress(&root)
            }
            RunEvent::ToolCall {
                id,
                name,
                input,
                parent_tool_use_id: Some(tag),
            } => {
                let root = self.root(&tag)?;
                // The child's own calls are asked about under their own ids.
                self.staged = Some((id.clone(), name.clone(), input.clone()));
                self.owner.insert(id, root.clone());
                let (title, _, _) = describe(&name, &input, None, &self.cwd);
                self.children.get_mut(&root)?.line(format!("→ {title}"));
                self.progress(&root)
            }
            RunEvent::ToolResult {
                id,
                is_error,
                parent_tool_use_id: Some(tag),
                ..
            } => {
                let root = self.root(&tag)?;
                let mark = if is_error { "✗" } else { "✓" };
                let child = self.children.get_mut(&root)?;
                // Mark the call's line done rather than adding one.
                if let Some(line) = child.lines.back_mut()
                    && line.starts_with('→')
                {
                    line.replace_range(..'→'.len_utf8(), mark);
                } else {
                    child.line(format!("{mark} {id}"));
                }
                self.progress(&root)
            }
            // A child's progress summary (or a grandchild's) is a line of its call's progress.
            RunEvent::Summary {
                text,
                parent_tool_use_id: Some(tag),
            } => {
                let root = self.root(&tag)?;
                self.children
                    .get_mut(&root)?
                    .line(format!("summary: {text}"));
                self.progress(&root)
            }
            // Usage, progress notes and the run's bookends have no update.
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    #[test]
    fn titles_and_kinds() {
        let cwd = Path::new("/work/p");
        let cases = [
            (
                describe(
                    "subagent",
                    &json!({"description": "count things", "prompt": "count"}),
                    Some(ToolKind::Delegate),
                    cwd,
                ),
                ("count things".to_owned(), AcpKind::Think, Vec::new()),
            ),
            (
                describe(
                    "read_file",
                    &json!({"path": "src/a.rs"}),
                    Some(ToolKind::ReadOnly),
                    cwd,
                ),
                (
                    "read_file: src/a.rs".to_owned(),
                    AcpKind::Read,
                    vec![ToolCallLocation::new("/work/p/src/a.rs")],
                ),
            ),
            (
                describe(
                    "bash",
                    &json!({"command": "ls\n-la"}),
                    Some(ToolKind::Execute),
                    cwd,
                ),
                ("bash: ls…".to_owned(), AcpKind::Execute, Vec::new()),
            ),
            (
                describe("grep", &json!({"pattern": "fn"}), None, cwd),
                ("grep: fn".to_owned(), AcpKind::Search, Vec::new()),
            ),
        ];
        for (got, want) in cases {
            assert_eq!(got, want);
        }
    }

    #[test]
    fn a_childs_summary_is_a_line_of_its_calls_progress() {
        let mut translator = Translator::new(
            PathBuf::from("/work/p"),
            Arc::new(HashMap::new()),
            Arc::default(),
        );
        translator
            .children
            .insert("call_1".into(), Child::default());
        let update = translator.translate(RunEvent::Summary {
            text: "Reading the parser.".into(),
            parent_tool_use_id: Some("call_1".into()),
        });
        assert_eq!(
            update,
            Some(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
                "call_1".to_owned(),
                ToolCallUpdateFields::new()
                    .status(ToolCallStatus::InProgress)
                    .content(vec![ToolCallContent::from(text_block(
                        "summary: Reading the parser."
                    ))]),
            )))
        );
        // The run's own summary (untagged) has no update: nobody's call shows it.
        assert_eq!(
            translator.translate(RunEvent::Summary {
                text: "x".into(),
                parent_tool_use_id: None,
            }),
            None
        );
    }

    #[test]
    fn a_child_progress_is_bounded() {
        let mut child = Child::default();
        for n in 0..20 {
            child.line(format!("→ step {n}"));
        }
        child.text(&"x".repeat(5000));
        let lines: Vec<String> = (8..20).map(|n| format!("→ step {n}")).collect();
        assert_eq!(
            child.render(),
            format!("{}\n\n{}", lines.join("\n"), "x".repeat(PROGRESS_TEXT))
        );
    }
}
