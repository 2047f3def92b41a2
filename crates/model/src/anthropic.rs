//! The Anthropic Messages protocol: request body (with prompt-cache markers) and what its
//! streamed events mean. Sending and the SSE framing are shared ([`HttpModel`], [`SseDecoder`]).

use serde::Serialize;
use serde_json::{Value, json};
use subagent_session::{ContentBlock, Message, Role, StopReason, ToolResultContent};

use crate::body::RequestBody;
use crate::collect::parse_arguments;
use crate::config::ModelKind;
use crate::error::{Error, Result};
use crate::http::AuthStyle;
use crate::protocol::{HttpModel, Protocol, SseDecoder, body_with_array, unserializable};
use crate::types::{ModelEvent, ModelRequest, Usage};

/// The `anthropic-version` header value.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";

/// A model behind the Anthropic Messages API.
pub type AnthropicModel = HttpModel<Anthropic>;

/// Decodes the Anthropic SSE stream into [`ModelEvent`]s.
pub type AnthropicDecoder = SseDecoder<Anthropic>;

fn ephemeral() -> Value {
    json!({"type": "ephemeral"})
}

/// A content block as the API takes it, borrowed from the conversation (serialized straight to
/// bytes, no intermediate `Value`).
#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum WireBlock<'a> {
    Text {
        text: &'a str,
    },
    ToolUse {
        id: &'a str,
        name: &'a str,
        input: &'a Value,
    },
    ToolResult {
        tool_use_id: &'a str,
        content: WireResult<'a>,
        is_error: bool,
    },
    Thinking {
        thinking: &'a str,
        signature: &'a str,
    },
}

#[derive(Serialize)]
#[serde(untagged)]
enum WireResult<'a> {
    Text(&'a str),
    Blocks(Vec<WireBlock<'a>>),
}

fn wire_block(block: &ContentBlock) -> Option<WireBlock<'_>> {
    Some(match block {
        ContentBlock::Text { text } => WireBlock::Text { text },
        ContentBlock::ToolUse { id, name, input } => WireBlock::ToolUse { id, name, input },
        ContentBlock::ToolResult {
            tool_use_id,
            content,
            is_error,
        } => WireBlock::ToolResult {
            tool_use_id,
            content: match content {
                ToolResultContent::Text(text) => WireResult::Text(text),
                ToolResultContent::Blocks(blocks) => {
                    WireResult::Blocks(blocks.iter().filter_map(wire_block).collect())
                }
            },
            is_error: *is_error,
        },
        // A thinking block without its signature is refused by the API: leave it out.
        ContentBlock::Thinking {
            thinking,
            signature: Some(signature),
        } => WireBlock::Thinking {
            thinking,
            signature,
        },
        _ => return None,
    })
}

/// Writes one message (`{"role":…,"content":[…]}`), nothing when none of its blocks is sent.
/// With `mark`, the last block that is not thinking carries the prompt-cache marker.
fn write_message(message: &Message, out: &mut Vec<u8>, mark: bool) -> Result<()> {
    let blocks: Vec<WireBlock<'_>> = message.content.iter().filter_map(wire_block).collect();
    if blocks.is_empty() {
        return Ok(());
    }
    let marked = mark
        .then(|| {
            blocks
                .iter()
                .rposition(|b| !matches!(b, WireBlock::Thinking { .. }))
        })
        .flatten();
    out.extend_from_slice(match message.role {
        Role::User => br#"{"role":"user","content":["#,
        Role::Assistant => br#"{"role":"assistant","content":["#,
    });
    for (i, block) in blocks.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        serde_json::to_writer(&mut *out, block).map_err(unserializable)?;
        if marked == Some(i) && out.pop() == Some(b'}') {
            out.extend_from_slice(br#","cache_control":{"type":"ephemeral"}}"#);
        }
    }
    out.extend_from_slice(b"]}");
    Ok(())
}

/// Whether a message sends anything.
fn sends_anything(message: &Message) -> bool {
    message.content.iter().any(|b| wire_block(b).is_some())
}

fn set_cache(value: &mut Value) {
    if let Value::Object(map) = value {
        map.insert("cache_control".into(), ephemeral());
    }
}

#[derive(Debug)]
enum Open {
    Text,
    Thinking,
    Tool {
        call: usize,
        id: String,
        name: String,
        json: String,
    },
}

/// The Anthropic Messages protocol; as a value, the state of reading one answer.
#[derive(Debug, Default)]
pub struct Anthropic {
    open: Vec<(u64, Open)>,
    calls: usize,
    usage: Usage,
    stop: Option<StopReason>,
}

impl Anthropic {
    fn read_usage(&mut self, usage: &Value) {
        let get = |k: &str| usage.get(k).and_then(Value::as_u64);
        if let Some(v) = get("input_tokens") {
            self.usage.input_tokens = v;
        }
        if let Some(v) = get("output_tokens") {
            self.usage.output_tokens = v;
        }
        if let Some(v) = get("cache_read_input_tokens") {
            self.usage.cache_read_tokens = v;
        }
        if let Some(v) = get("cache_creation_input_tokens") {
            self.usage.cache_write_tokens = v;
        }
    }
}

impl Protocol for Anthropic {
    const KIND: ModelKind = ModelKind::Anthropic;
    const EFFORT: bool = true;
    const PATH: &'static str = "/v1/messages";
    const AUTH: AuthStyle = AuthStyle::XApiKey;
    const HEADERS: &'static [(&'static str, &'static str)] =
        &[("anthropic-version", ANTHROPIC_VERSION)];

    /// The JSON body of a request. Field order and content are a pure function of the request
    /// (byte-stable), with `cache_control` markers on the last system block, the last tool and the
    /// last (non-thinking) block of the last message.
    fn request_body(request: &ModelRequest) -> Result<RequestBody> {
        let mut tools: Vec<Value> = request
            .tools
            .iter()
            .map(|t| {
                json!({"name": t.name, "description": t.description,
                       "input_schema": t.input_schema})
            })
            .collect();
        if let Some(last) = tools.last_mut() {
            set_cache(last);
        }
        // A struct keeps the top-level order fixed: model, max_tokens, stream, thinking, system,
        // tools, then messages.
        #[derive(Serialize)]
        struct Thinking {
            r#type: &'static str,
            budget_tokens: u32,
        }
        #[derive(Serialize)]
        struct Head<'a> {
            model: &'a str,
            max_tokens: u32,
            stream: bool,
            #[serde(skip_serializing_if = "Option::is_none")]
            thinking: Option<Thinking>,
            #[serde(skip_serializing_if = "Option::is_none")]
            system: Option<Value>,
            #[serde(skip_serializing_if = "Vec::is_empty")]
            tools: Vec<Value>,
        }
        let system = request
            .system
            .as_ref()
            .filter(|s| !s.is_empty())
            .map(|s| json!([{"type": "text", "text": s, "cache_control": ephemeral()}]));
        // An effort is a thinking budget on top of the answer's own limit.
        let thinking = request.effort.map(|effort| Thinking {
            r#type: "enabled",
            budget_tokens: effort.thinking_budget(),
        });
        let head = Head {
            model: &request.model,
            max_tokens: request
                .max_tokens
                .saturating_add(thinking.as_ref().map_or(0, |t| t.budget_tokens)),
            stream: true,
            thinking,
            system,
            tools,
        };
        let messages = &request.messages;
        // The last message that sends anything carries the cache marker, so it is written
        // afresh; every message before it is the same bytes in every request (kept).
        let marked = messages.len()
            - messages
                .iter_rev()
                .position(sends_anything)
                .map_or(messages.len(), |from_end| from_end + 1);
        body_with_array(&head, "messages", |out| {
            let first = messages.write_encoded(Self::KIND, marked, out, true, |m, out| {
                write_message(m, out, false)
            })?;
            if let Some(message) = messages.get(marked) {
                if !first {
                    out.write(b",");
                }
                let mut last = Vec::new();
                write_message(message, &mut last, true)?;
                out.write(&last);
            }
            Ok(())
        })
    }

    /// A keep-alive is a `ping` event.
    fn event(&mut self, name: &str, data: &str, out: &mut Vec<ModelEvent>) -> Result<bool> {
        let data: Value = serde_json::from_str(data)
            .map_err(|e| Error::protocol(format!("invalid JSON in Anthropic event {name}: {e}")))?;
        let kind = data.get("type").and_then(Value::as_str).unwrap_or(name);
        let index = data.get("index").and_then(Value::as_u64).unwrap_or(0);
        match kind {
            "message_start" => {
                if let Some(usage) = data.pointer("/message/usage") {
                    self.read_usage(usage);
                }
            }
            "content_block_start" => {
                let block = data.get("content_block").unwrap_or(&Value::Null);
                let open = match block.get("type").and_then(Value::as_str) {
                    Some("text") => {
                        if let Some(text) = block.get("text").and_then(Value::as_str)
                            && !text.is_empty()
                        {
                            out.push(ModelEvent::TextDelta { text: text.into() });
                        }
                        Open::Text
                    }
                    Some("thinking") => Open::Thinking,
                    Some("tool_use") => {
                        let id = str_field(block, "id")?;
                        let name = str_field(block, "name")?;
                        let call = self.calls;
                        self.calls += 1;
                        out.push(ModelEvent::ToolCallStart {
                            index: call,
                            id: id.clone(),
                            name: name.clone(),
                        });
                        Open::Tool {
                            call,
                            id,
                            name,
                            json: String::new(),
                        }
                    }
                    // redacted_thinking, server tools…: ignored, but tracked to stay aligned.
                    _ => Open::Text,
                };
                self.open.push((index, open));
            }
            "content_block_delta" => {
                let delta = data.get("delta").unwrap_or(&Value::Null);
                let text = |k: &str| {
                    delta
                        .get(k)
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_owned()
                };
                match delta.get("type").and_then(Value::as_str) {
                    Some("text_delta") => out.push(ModelEvent::TextDelta { text: text("text") }),
                    Some("thinking_delta") => out.push(ModelEvent::ThinkingDelta {
                        text: text("thinking"),
                    }),
                    Some("signature_delta") => out.push(ModelEvent::ThinkingSignature {
                        signature: text("signature"),
                    }),
                    Some("input_json_delta") => {
                        let fragment = text("partial_json");
                        match self.open.iter_mut().find(|(i, _)| *i == index) {
                            Some((_, Open::Tool { call, json, .. })) => {
                                json.push_str(&fragment);
                                out.push(ModelEvent::ToolCallDelta {
                                    index: *call,
                                    fragment,
                                });
                            }
                            _ => {
                                return Err(Error::protocol(format!(
                                    "input_json_delta for block {index}, which is not an open tool call"
                                )));
                            }
                        }
                    }
                    _ => {}
                }
            }
            "content_block_stop" => {
                if let Some(pos) = self.open.iter().position(|(i, _)| *i == index) {
                    let (_, open) = self.open.remove(pos);
                    if let Open::Tool {
                        call,
                        id,
                        name,
                        json,
                    } = open
                    {
                        let input = parse_arguments(&name, &json)?;
                        out.push(ModelEvent::ToolCallEnd {
                            index: call,
                            id,
                            name,
                            input,
                        });
                    }
                }
            }
            "message_delta" => {
                if let Some(usage) = data.get("usage") {
                    self.read_usage(usage);
                }
                if let Some(reason) = data.pointer("/delta/stop_reason").and_then(Value::as_str) {
                    self.stop = Some(match reason {
                        "max_tokens" | "model_context_window_exceeded" => StopReason::MaxTokens,
                        "refusal" => StopReason::Refused,
                        _ => StopReason::Completed,
                    });
                }
            }
            "message_stop" => {
                if let Some((_, Open::Tool { name, .. })) = self
                    .open
                    .iter()
                    .find(|(_, o)| matches!(o, Open::Tool { .. }))
                {
                    return Err(Error::protocol(format!(
                        "message ended with tool call {name} still open"
                    )));
                }
                out.push(ModelEvent::Usage { usage: self.usage });
                out.push(ModelEvent::Stop {
                    reason: self.stop.unwrap_or(StopReason::Completed),
                });
            }
            "error" => {
                let kind = data
                    .pointer("/error/type")
                    .and_then(Value::as_str)
                    .unwrap_or("");
                let message = data
                    .pointer("/error/message")
                    .and_then(Value::as_str)
                    .unwrap_or("error event without a message");
                return Err(Error::from_server(0, kind, message, None));
            }
            "ping" => return Ok(false),
            _ => {} // future events
        }
        Ok(true)
    }
}

fn str_field(value: &Value, key: &str) -> Result<String> {
    value
        .get(key)
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| Error::protocol(format!("missing string field {key}")))
}
