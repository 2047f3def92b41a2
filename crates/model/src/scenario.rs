//! Scenario files: what a scripted model (offline, in-process) or a fake model server (over
//! HTTP, in `subagent-test-support`) answers. Both use this module, so a scenario behaves the
//! same in both.
//!
//! A file is a YAML list of scenarios. A scenario matches the latest *genuine* user prompt
//! ([`genuine_prompt`]) with a regex; its step N answers the Nth assistant turn since that
//! prompt:
//!
//! ```yaml
//! - name: delegate
//!   match: "(?i)delegate"
//!   steps:
//!     - text: "Delegating."
//!       tool_calls:
//!         - name: subagent
//!           input: {prompt: "count the files"}
//!           fragments: 4          # arguments stream in 4 pieces (default 3)
//!     - text: "The subagent is done."
//! - name: fallback
//!   match: ".*"
//!   steps:
//!     - text: "Hello from the scripted model."
//! ```
//!
//! Step fields, all optional, in the order they take effect: `delay_ms` and `wait_gate` (before
//! anything is sent), `error` (an HTTP error answer: `status`, `type`, `message`,
//! `retry_after`), `keep_alive` (after the response headers, before the answer's first event:
//! `style` `ping` | `comment` | `empty`, `every_ms`, `count`; no count = without end),
//! `thinking`, `text`, `repeat` (after the text, more text generated while it streams: `text`
//! repeated, `bytes` in all, without end when absent; never held whole, so a test can stream a
//! very long answer cheaply), `wait_gate_mid` and `keep_alive_mid` (after it), `disconnect` (cut
//! the connection after the text), `stream_error` (an error event after the text: `type`,
//! `message`), `tool_calls` (`name`, `input`, `id`, `fragments`, `namespace`, `custom`),
//! `usage`, `stop` (`end_turn` | `max_tokens` | `refusal`), `event_delay_ms` (pause between
//! streamed events).

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;
use subagent_session::{ContentBlock, Message, Role};

use crate::error::{Error, Result};
use crate::messages::Conversation;
use crate::types::Usage;

mod gate;
mod repeat;
pub use gate::{Gate, Gates};
pub use repeat::{Piece, Repeater};

/// One scenario of a file.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// A name for diagnostics (default: `scenario-N`).
    #[serde(default)]
    pub name: Option<String>,
    /// A regex searched in the latest genuine user prompt (`.*` makes a fallback).
    #[serde(rename = "match")]
    pub pattern: String,
    /// Step N answers the Nth assistant turn since the prompt.
    pub steps: Vec<Step>,
}

/// An HTTP error answer.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct HttpErrorSpec {
    /// The HTTP status.
    pub status: u16,
    /// The provider's error type (e.g. `rate_limit_error`, `overloaded_error`).
    #[serde(rename = "type", default)]
    pub kind: String,
    /// The message.
    pub message: String,
    /// `retry-after` in seconds (the client ignores NaN and negative values and keeps at
    /// most [`crate::MAX_RETRY_AFTER`]).
    #[serde(default)]
    pub retry_after: Option<f64>,
    /// Fail only the first `times` requests that reach this step (a flaky server); later
    /// attempts get the normal answer. Default: always.
    #[serde(default)]
    pub times: Option<u32>,
}

/// An error event in the middle of the stream.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct StreamErrorSpec {
    /// The provider's error type.
    #[serde(rename = "type", default)]
    pub kind: String,
    /// The message.
    pub message: String,
}

/// A tool call a step makes.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ToolCallSpec {
    /// The tool's name.
    pub name: String,
    /// The arguments (for `custom` calls: a string).
    #[serde(default)]
    pub input: Value,
    /// The call id (default: generated, unique in the conversation).
    #[serde(default)]
    pub id: Option<String>,
    /// In how many pieces the arguments stream (default 3).
    #[serde(default)]
    pub fragments: Option<usize>,
    /// Responses API: the tool's namespace (codex's `multi_agent_v1`).
    #[serde(default)]
    pub namespace: Option<String>,
    /// Responses API: a `custom_tool_call` (codex's `apply_patch`) whose input is raw text.
    #[serde(default)]
    pub custom: bool,
}

/// Token counts a step reports.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct UsageSpec {
    /// Input tokens.
    pub input_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
    /// Cache reads.
    pub cache_read_tokens: u64,
    /// Cache writes.
    pub cache_write_tokens: u64,
}

/// The largest scenario file [`Scenarios::load`] reads, in bytes: 4 MiB.
pub const MAX_SCENARIO_FILE: u64 = 4 << 20;

/// What a keep-alive looks like on the wire.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum KeepAliveStyle {
    /// The protocol's own keep-alive: Anthropic's `ping` event (the OpenAI protocols have none,
    /// so a comment line there).
    #[default]
    Ping,
    /// An SSE comment line (`: keep-alive`), what proxies and SSE libraries send.
    Comment,
    /// An event with empty data (`data:`).
    Empty,
}

fn one_second() -> u64 {
    1000
}

/// Keep-alives a step sends: the server shows it is there but says nothing of the answer.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct KeepAliveSpec {
    /// What each one looks like (default `ping`).
    #[serde(default)]
    pub style: KeepAliveStyle,
    /// The pause before each one, in milliseconds (default 1000).
    #[serde(default = "one_second")]
    pub every_ms: u64,
    /// How many (default: without end; the stream then never finishes).
    #[serde(default)]
    pub count: Option<u64>,
}

fn one_x() -> String {
    "x".to_owned()
}

/// Text a step generates while it streams (`repeat`): `text` over and over, `bytes` bytes in
/// all. It is never held whole (it goes out in pieces of at most [`REPEAT_PIECE`] bytes), so a
/// test can stream a very long answer cheaply.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct RepeatSpec {
    /// What is repeated (default `x`; not empty).
    #[serde(default = "one_x")]
    pub text: String,
    /// How many bytes in all; the last repetition is cut on a character boundary (so a few
    /// bytes less when `text` is not ASCII). Absent: without end (the answer never finishes).
    #[serde(default)]
    pub bytes: Option<u64>,
}

/// The most bytes of generated text (`repeat`) in one streamed event.
pub const REPEAT_PIECE: usize = 16 * 1024;

/// How a step's answer ends.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum StepStop {
    /// A normal end (`tool_use` when the step calls tools).
    EndTurn,
    /// The output limit was hit.
    MaxTokens,
    /// The model refused.
    Refusal,
}

/// One scripted answer.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Step {
    /// Wait before answering (no byte sent yet).
    #[serde(default)]
    pub delay_ms: Option<u64>,
    /// Wait for this gate before answering (no byte sent yet).
    #[serde(default)]
    pub wait_gate: Option<String>,
    /// Answer with this HTTP error instead.
    #[serde(default)]
    pub error: Option<HttpErrorSpec>,
    /// Keep-alives after the response headers, before the answer's first event.
    #[serde(default)]
    pub keep_alive: Option<KeepAliveSpec>,
    /// Visible reasoning.
    #[serde(default)]
    pub thinking: Option<String>,
    /// The text.
    #[serde(default)]
    pub text: Option<String>,
    /// After the text (and `text_from_tool_result`): more text, generated while it streams.
    #[serde(default)]
    pub repeat: Option<RepeatSpec>,
    /// Append the text of the conversation's newest tool result to the text (a scripted
    /// model repeating what a tool, or another agent, answered).
    #[serde(default)]
    pub text_from_tool_result: bool,
    /// Wait for this gate after the text (the answer has started).
    #[serde(default)]
    pub wait_gate_mid: Option<String>,
    /// Keep-alives after the text (after `wait_gate_mid`).
    #[serde(default)]
    pub keep_alive_mid: Option<KeepAliveSpec>,
    /// Cut the connection after the text, without the final events.
    #[serde(default)]
    pub disconnect: bool,
    /// Send an error event after the text and end the stream.
    #[serde(default)]
    pub stream_error: Option<StreamErrorSpec>,
    /// Tool calls.
    #[serde(default)]
    pub tool_calls: Vec<ToolCallSpec>,
    /// Token counts (default: 10 in, 5 out).
    #[serde(default)]
    pub usage: Option<UsageSpec>,
    /// How the answer ends.
    #[serde(default)]
    pub stop: Option<StepStop>,
    /// Pause between streamed events.
    #[serde(default)]
    pub event_delay_ms: Option<u64>,
}

/// A planned tool call: arguments already split into fragments.
#[derive(Clone, Debug, PartialEq)]
pub struct PlannedCall {
    /// The call id without protocol prefix (e.g. `fake_4_0`) or the scenario's id.
    pub id: String,
    /// Whether `id` came from the scenario (then no prefix is added).
    pub explicit_id: bool,
    /// The tool's name.
    pub name: String,
    /// The parsed input.
    pub input: Value,
    /// The serialized arguments (for custom calls: the raw text), in fragments.
    pub fragments: Vec<String>,
    /// Responses API namespace.
    pub namespace: Option<String>,
    /// Responses API custom tool call.
    pub custom: bool,
}

/// One unit of a streamed answer, protocol-neutral.
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    /// Pause.
    Sleep(Duration),
    /// Wait for a gate.
    WaitGate(String),
    /// Keep-alives: each after a pause of `every`, `count` of them (`None`: without end).
    KeepAlive {
        /// What each looks like.
        style: KeepAliveStyle,
        /// The pause before each.
        every: Duration,
        /// How many (`None`: without end).
        count: Option<u64>,
    },
    /// A thinking delta.
    Thinking(String),
    /// A text delta.
    Text(String),
    /// Text generated while it streams: `text` repeated, `bytes` bytes in all (`None`: without
    /// end), sent in pieces of at most [`REPEAT_PIECE`] bytes.
    Repeat {
        /// What is repeated (not empty).
        text: String,
        /// How many bytes are left (`None`: without end).
        bytes: Option<u64>,
    },
    /// A whole tool call (start, fragments, end).
    ToolCall(PlannedCall),
    /// An error event; the stream ends after it.
    StreamError(StreamErrorSpec),
    /// Cut the connection; the stream ends.
    Disconnect,
}

/// What to do for one request.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    /// The matched scenario's name.
    pub scenario: String,
    /// The step index.
    pub step: usize,
    /// Before anything is sent: sleeps and gates.
    pub before: Vec<Action>,
    /// An HTTP error answer instead of a stream.
    pub http_error: Option<HttpErrorSpec>,
    /// The body's first units, before the answer's first event (keep-alives).
    pub opening: Vec<Action>,
    /// The body's events.
    pub actions: Vec<Action>,
    /// Whether the stream ends normally (no disconnect or stream error).
    pub complete: bool,
    /// Reported usage.
    pub usage: Usage,
    /// How it ends.
    pub stop: StepStop,
    /// Whether the answer calls tools.
    pub has_tool_calls: bool,
}

/// Why no plan could be made.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SelectError {
    /// No scenario's regex matches the prompt.
    #[error("fake model: no scenario matches the prompt {prompt:?} (scenarios: {names})")]
    NoMatch {
        /// The genuine prompt (may be empty).
        prompt: String,
        /// The scenario names tried.
        names: String,
    },
    /// The matched scenario has no step for this turn.
    #[error(
        "fake model: scenario {scenario:?} has {steps} step(s) but the conversation asks for step {step} (0-based)"
    )]
    NoStep {
        /// The scenario.
        scenario: String,
        /// Its number of steps.
        steps: usize,
        /// The step asked for.
        step: usize,
    },
}

/// Text prefixes of user content that a harness injected (never a genuine prompt).
pub const INJECTED_PREFIXES: &[&str] = &[
    "<system-reminder>",
    "<environment_context>",
    "<permissions",
    "<user_instructions>",
    "<INSTRUCTIONS>",
    "# AGENTS.md",
    "<skills_instructions>",
    "<user_shell_command>",
    "<turn_aborted>",
    "<local-command",
    "<command-name>",
    "[structured-output-enforce]",
    "Caveat: The messages below were generated",
    "<fake-model:",
];

/// Whether a user text block was injected by a harness rather than typed as a prompt.
pub fn is_injected(text: &str) -> bool {
    let t = text.trim_start();
    t.is_empty() || INJECTED_PREFIXES.iter().any(|p| t.starts_with(p))
}

/// The latest genuine user prompt: the genuine text blocks of the last user message that has
/// any, joined with `\n`, and that message's index. Tool results, `<system-reminder>` blocks
/// and other injected items are skipped; system and developer text never reaches `messages`.
pub fn genuine_prompt<C: Conversation + ?Sized>(messages: &C) -> Option<(usize, String)> {
    let len = messages.len();
    messages.newest_first().enumerate().find_map(|(back, m)| {
        let i = len - 1 - back;
        if m.role != Role::User {
            return None;
        }
        let texts: Vec<&str> = m
            .content
            .iter()
            .filter_map(|b| match b {
                ContentBlock::Text { text } if !is_injected(text) => Some(text.as_str()),
                _ => None,
            })
            .collect();
        (!texts.is_empty()).then(|| (i, texts.join("\n")))
    })
}

/// Checks the invariants a real API enforces: no empty message; each tool result answers a
/// call of the previous assistant message; each call of an assistant message followed by
/// another message is answered in the next one. Returns one line per violation.
pub fn check_invariants(messages: &[Message]) -> Vec<String> {
    let mut violations = Vec::new();
    for (i, m) in messages.iter().enumerate() {
        let empty = m.content.iter().all(|b| match b {
            ContentBlock::Text { text } => text.is_empty(),
            _ => false,
        });
        if empty {
            violations.push(format!("message {i} ({:?}) is empty", m.role));
        }
        if m.role == Role::User {
            let previous = i.checked_sub(1).map(|p| &messages[p]);
            for id in m.tool_result_ids() {
                let answered = previous.is_some_and(|p| {
                    p.role == Role::Assistant && p.tool_uses().any(|(call, _, _)| call == id)
                });
                if !answered {
                    violations.push(format!(
                        "message {i}: tool result {id} answers no tool call of the previous assistant message"
                    ));
                }
            }
        }
        if m.role == Role::Assistant
            && let Some(next) = messages.get(i + 1)
        {
            for (id, name, _) in m.tool_uses() {
                if !next.tool_result_ids().any(|r| r == id) {
                    violations.push(format!(
                        "message {i}: tool call {name} ({id}) is not answered by the next message"
                    ));
                }
            }
        }
    }
    violations
}

/// Splits `text` into about `n` pieces on character boundaries.
pub fn split_fragments(text: &str, n: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let n = n.clamp(1, chars.len().max(1));
    let size = chars.len().div_ceil(n).max(1);
    chars.chunks(size).map(|c| c.iter().collect()).collect()
}

/// Splits text into word-sized deltas, keeping the spaces (`"a b"` → `"a"`, `" b"`).
pub fn split_words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    for c in text.chars() {
        if c.is_whitespace() && !current.trim().is_empty() {
            out.push(std::mem::take(&mut current));
        }
        current.push(c);
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

impl Step {
    fn plan(&self, scenario: &str, step: usize, seed: usize) -> Plan {
        let mut before = Vec::new();
        if let Some(ms) = self.delay_ms {
            before.push(Action::Sleep(Duration::from_millis(ms)));
        }
        if let Some(gate) = &self.wait_gate {
            before.push(Action::WaitGate(gate.clone()));
        }
        let keep_alive = |spec: &KeepAliveSpec| Action::KeepAlive {
            style: spec.style,
            every: Duration::from_millis(spec.every_ms),
            count: spec.count,
        };
        let opening = self.keep_alive.iter().map(keep_alive).collect();
        let pause = self.event_delay_ms.map(Duration::from_millis);
        let mut actions = Vec::new();
        let mut push = |action: Action| {
            if let Some(d) = pause
                && !actions.is_empty()
            {
                actions.push(Action::Sleep(d));
            }
            actions.push(action);
        };
        if let Some(thinking) = &self.thinking {
            for piece in split_words(thinking) {
                push(Action::Thinking(piece));
            }
        }
        if let Some(text) = &self.text {
            for piece in split_words(text) {
                push(Action::Text(piece));
            }
        }
        if let Some(repeat) = &self.repeat {
            push(Action::Repeat {
                text: repeat.text.clone(),
                bytes: repeat.bytes,
            });
        }
        if let Some(gate) = &self.wait_gate_mid {
            push(Action::WaitGate(gate.clone()));
        }
        if let Some(spec) = &self.keep_alive_mid {
            push(keep_alive(spec));
        }
        let mut complete = true;
        if self.disconnect {
            push(Action::Disconnect);
            complete = false;
        } else if let Some(error) = &self.stream_error {
            push(Action::StreamError(error.clone()));
            complete = false;
        } else {
            for (i, call) in self.tool_calls.iter().enumerate() {
                let raw = match (&call.input, call.custom) {
                    (Value::String(s), true) => s.clone(),
                    (Value::Null, false) => "{}".to_owned(),
                    (other, _) => other.to_string(),
                };
                let input = match &call.input {
                    Value::Null if !call.custom => Value::Object(serde_json::Map::new()),
                    other => other.clone(),
                };
                push(Action::ToolCall(PlannedCall {
                    id: call
                        .id
                        .clone()
                        .unwrap_or_else(|| format!("fake_{seed}_{i}")),
                    explicit_id: call.id.is_some(),
                    name: call.name.clone(),
                    input,
                    fragments: split_fragments(&raw, call.fragments.unwrap_or(3)),
                    namespace: call.namespace.clone(),
                    custom: call.custom,
                }));
            }
        }
        let usage = self.usage.unwrap_or(UsageSpec {
            input_tokens: 10,
            output_tokens: 5,
            ..UsageSpec::default()
        });
        Plan {
            scenario: scenario.to_owned(),
            step,
            before,
            http_error: self.error.clone(),
            opening,
            actions,
            complete,
            usage: Usage {
                input_tokens: usage.input_tokens,
                output_tokens: usage.output_tokens,
                cache_read_tokens: usage.cache_read_tokens,
                cache_write_tokens: usage.cache_write_tokens,
                ..Usage::default()
            },
            stop: self.stop.unwrap_or(StepStop::EndTurn),
            has_tool_calls: !self.tool_calls.is_empty() && complete,
        }
    }
}

/// A loaded, compiled scenario file.
#[derive(Clone, Debug)]
pub struct Scenarios {
    entries: Vec<(regex_lite::Regex, String, Scenario)>,
    hits: Arc<Mutex<HashMap<(String, usize), u32>>>,
}

/// The scenario file the offline main job uses.
pub const OFFLINE_DEMO: &str = include_str!("../scenarios/offline.yaml");

impl Scenarios {
    /// Parses and compiles a YAML scenario list.
    pub fn from_yaml(text: &str) -> Result<Self> {
        let list: Vec<Scenario> = serde_saphyr::from_str(text).map_err(|e| Error::Config {
            message: format!("invalid scenario file: {e}"),
        })?;
        Self::new(list)
    }

    /// Compiles scenarios.
    pub fn new(list: Vec<Scenario>) -> Result<Self> {
        let mut entries = Vec::with_capacity(list.len());
        for (i, scenario) in list.into_iter().enumerate() {
            let name = scenario
                .name
                .clone()
                .unwrap_or_else(|| format!("scenario-{i}"));
            let regex = regex_lite::Regex::new(&scenario.pattern).map_err(|e| Error::Config {
                message: format!("scenario {name}: invalid match regex: {e}"),
            })?;
            if let Some(step) = scenario
                .steps
                .iter()
                .position(|step| step.repeat.as_ref().is_some_and(|r| r.text.is_empty()))
            {
                return Err(Error::Config {
                    message: format!("scenario {name}: step {step}: repeat.text must not be empty"),
                });
            }
            entries.push((regex, name, scenario));
        }
        Ok(Self {
            entries,
            hits: Arc::default(),
        })
    }

    /// Reads a scenario file: a regular file of at most [`MAX_SCENARIO_FILE`] bytes (a FIFO, a
    /// device or a larger file is refused without reading it whole).
    pub fn load(path: &Path) -> Result<Self> {
        let text = subagent_session::read_user_text(path, MAX_SCENARIO_FILE).map_err(|e| {
            Error::Config {
                message: format!("cannot read scenario file {}: {e}", path.display()),
            }
        })?;
        Self::from_yaml(&text).map_err(|e| match e {
            Error::Config { message } => Error::Config {
                message: format!("{}: {message}", path.display()),
            },
            other => other,
        })
    }

    /// The built-in offline demo ([`OFFLINE_DEMO`]).
    pub fn offline_demo() -> Result<Self> {
        Self::from_yaml(OFFLINE_DEMO)
    }

    /// The scenario names, in order.
    pub fn names(&self) -> Vec<&str> {
        self.entries.iter().map(|(_, n, _)| n.as_str()).collect()
    }

    /// Picks the scenario and step for a conversation (system text is never looked at) and
    /// plans the answer. Each call counts as one attempt of that step (for `error.times`).
    pub fn plan<C: Conversation + ?Sized>(&self, messages: &C) -> Result<Plan, SelectError> {
        let (index, prompt) = genuine_prompt(messages).unwrap_or((0, String::new()));
        let Some((_, name, scenario)) = self.entries.iter().find(|(r, _, _)| r.is_match(&prompt))
        else {
            return Err(SelectError::NoMatch {
                prompt,
                names: self.names().join(", "),
            });
        };
        // The assistant messages after the prompt, counted from the end: no walk of the history.
        let step = messages
            .newest_first()
            .take(messages.len().saturating_sub(index + 1))
            .filter(|m| m.role == Role::Assistant)
            .count();
        let Some(spec) = scenario.steps.get(step) else {
            return Err(SelectError::NoStep {
                scenario: name.clone(),
                steps: scenario.steps.len(),
                step,
            });
        };
        let mut plan = if spec.text_from_tool_result {
            let mut spec = spec.clone();
            let echoed = crate::messages::newest_tool_result(messages).unwrap_or_default();
            spec.text = Some(spec.text.unwrap_or_default() + &echoed);
            spec.plan(name, step, messages.len())
        } else {
            spec.plan(name, step, messages.len())
        };
        // Count attempts per step so `error.times` can let later attempts through.
        let hits = {
            let mut hits = self.hits.lock().unwrap_or_else(PoisonError::into_inner);
            let count = hits.entry((name.clone(), step)).or_insert(0);
            *count += 1;
            *count
        };
        if plan
            .http_error
            .as_ref()
            .and_then(|e| e.times)
            .is_some_and(|times| hits > times)
        {
            plan.http_error = None;
        }
        Ok(plan)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use proptest::prelude::*;

    #[test]
    fn genuine_prompt_skips_injections_and_tool_results() {
        let messages = vec![
            Message::new(
                Role::User,
                vec![
                    ContentBlock::text("<system-reminder>\nrun a command</system-reminder>"),
                    ContentBlock::text("please delegate"),
                ],
            ),
            Message::new(
                Role::Assistant,
                vec![ContentBlock::tool_use("t1", "x", serde_json::json!({}))],
            ),
            Message::new(
                Role::User,
                vec![
                    ContentBlock::tool_result("t1", "ok", false),
                    ContentBlock::text("<system-reminder>x</system-reminder>"),
                ],
            ),
        ];
        assert_eq!(
            genuine_prompt(&messages),
            Some((0, "please delegate".into()))
        );
        assert!(check_invariants(&messages).is_empty());
    }

    #[test]
    fn invariants_report_orphans_and_empties() {
        let messages = vec![
            Message::user("hi"),
            Message::new(Role::Assistant, vec![]),
            Message::new(
                Role::User,
                vec![ContentBlock::tool_result("nope", "x", false)],
            ),
        ];
        assert_eq!(
            check_invariants(&messages),
            vec![
                "message 1 (Assistant) is empty".to_owned(),
                "message 2: tool result nope answers no tool call of the previous assistant message"
                    .to_owned()
            ]
        );
    }

    #[test]
    fn offline_demo_parses() {
        let scenarios = Scenarios::offline_demo().unwrap();
        let plan = scenarios
            .plan(&[Message::user("please delegate: count files")])
            .unwrap();
        assert!(plan.has_tool_calls);
        let plan = scenarios.plan(&[Message::user("hello")]).unwrap();
        assert!(!plan.has_tool_calls);
    }

    #[test]
    fn words_and_fragments() {
        assert_eq!(split_words("hi from fake"), vec!["hi", " from", " fake"]);
        assert_eq!(split_fragments("abcdefg", 3), vec!["abc", "def", "g"]);
        assert_eq!(split_fragments("", 3), Vec::<String>::new());
    }

    proptest! {
        #[test]
        fn fragments_rejoin(text in ".{0,40}", n in 1usize..10) {
            prop_assert_eq!(&split_fragments(&text, n).concat(), &text);
            prop_assert_eq!(split_words(&text).concat(), text);
        }
    }
}
