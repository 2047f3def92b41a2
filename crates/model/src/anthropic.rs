//! The Anthropic Messages protocol: request body (with prompt-cache markers) and what its
//! streamed events mean. Sending and the SSE framing are shared ([`HttpModel`], [`SseDecoder`]).

use serde_json::{Value, json};
use subagent_session::{ContentBlock, Role, StopReason, ToolResultContent};

use crate::collect::parse_arguments;
use crate::config::ModelKind;
use crate::error::{Error, Result};
use crate::http::AuthStyle;
use crate::protocol::{HttpModel, Protocol, SseDecoder};
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

fn block_json(block: &ContentBlock) -> Option<Value> {
    Some(match block {
        ContentBlock::Text { text } => json!({"type": "text", "text": text}),
        ContentBlock::ToolUse { id, name, input } => {
            json!({"type": "tool_use", "id": id, "name": name, "input": input})
        }
        ContentBlock::ToolResult {
            tool_use_id,
            content,
            is_error,
        } => {
            let content = match content {
                ToolResultContent::Text(text) => Value::String(text.clone()),
                ToolResultContent::Blocks(blocks) => {
                    Value::Array(blocks.iter().filter_map(block_json).collect())
                }
            };
            json!({"type": "tool_result", "tool_use_id": tool_use_id, "content": content, "is_error": is_error})
        }
        // A thinking block without its signature is refused by the API: leave it out.
        ContentBlock::Thinking {
            thinking,
            signature: Some(signature),
        } => json!({"type": "thinking", "thinking": thinking, "signature": signature}),
        _ => return None,
    })
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
    const PATH: &'static str = "/v1/messages";
    const AUTH: AuthStyle = AuthStyle::XApiKey;
    const HEADERS: &'static [(&'static str, &'static str)] =
        &[("anthropic-version", ANTHROPIC_VERSION)];

    /// The JSON body of a request. Field order and content are a pure function of the request
    /// (byte-stable), with `cache_control` markers on the last system block, the last tool and the
    /// last (non-thinking) block of the last message.
    fn request_body(request: &ModelRequest) -> Result<Vec<u8>> {
        let mut messages: Vec<Value> = Vec::with_capacity(request.messages.len());
        for message in &request.messages {
            let blocks: Vec<Value> = message.content.iter().filter_map(block_json).collect();
            if blocks.is_empty() {
                continue;
            }
            let role = match message.role {
                Role::User => "user",
                Role::Assistant => "assistant",
            };
            messages.push(json!({"role": role, "content": blocks}));
        }
        if let Some(Value::Array(blocks)) = messages.last_mut().and_then(|m| m.get_mut("content"))
            && let Some(block) = blocks
                .iter_mut()
                .rev()
                .find(|b| b.get("type").and_then(Value::as_str) != Some("thinking"))
        {
            set_cache(block);
        }
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
        // A struct keeps the top-level order fixed: model, max_tokens, stream, system, tools,
        // messages.
        #[derive(serde::Serialize)]
        struct Body<'a> {
            model: &'a str,
            max_tokens: u32,
            stream: bool,
            #[serde(skip_serializing_if = "Option::is_none")]
            system: Option<Value>,
            #[serde(skip_serializing_if = "Vec::is_empty")]
            tools: Vec<Value>,
            messages: Vec<Value>,
        }
        let system = request
            .system
            .as_ref()
            .filter(|s| !s.is_empty())
            .map(|s| json!([{"type": "text", "text": s, "cache_control": ephemeral()}]));
        serde_json::to_vec(&Body {
            model: &request.model,
            max_tokens: request.max_tokens,
            stream: true,
            system,
            tools,
            messages,
        })
        .map_err(|e| Error::Config {
            message: format!("cannot serialize request: {e}"),
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
