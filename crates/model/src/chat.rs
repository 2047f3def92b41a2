//! The OpenAI Chat Completions protocol (also Ollama, vLLM, llama.cpp's server, LM Studio):
//! request body and what its streamed chunks mean. Sending and the SSE framing are shared
//! ([`HttpModel`], [`SseDecoder`]).

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::{Value, json};
use subagent_session::{ContentBlock, Message, Role, StopReason};

use crate::body::RequestBody;
use crate::collect::parse_arguments;
use crate::config::ModelKind;
use crate::error::{Error, Result};
use crate::protocol::{HttpModel, Protocol, SseDecoder, body_with_array, unserializable};
use crate::responses::{arguments_string, server_error};
use crate::types::{ModelEvent, ModelRequest, Usage};

/// A model behind an OpenAI-compatible Chat Completions endpoint.
pub type ChatModel = HttpModel<Chat>;

/// Decodes a streamed Chat Completions answer (`data: {chunk}` lines, `data: [DONE]`).
pub type ChatDecoder = SseDecoder<Chat>;

/// One Chat Completions message, borrowed from the conversation where it can be.
#[derive(Serialize)]
#[serde(tag = "role", rename_all = "snake_case")]
enum ChatMessage<'a> {
    System {
        content: &'a str,
    },
    User {
        content: String,
    },
    Tool {
        tool_call_id: &'a str,
        content: String,
    },
    Assistant {
        content: Option<String>,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<Value>,
    },
}

/// Writes `message` after a comma unless it is the first.
fn write_one(message: &ChatMessage<'_>, out: &mut Vec<u8>, first: &mut bool) -> Result<()> {
    if !std::mem::take(first) {
        out.push(b',');
    }
    serde_json::to_writer(&mut *out, message).map_err(unserializable)
}

/// Writes one conversation message as Chat Completions messages, comma-separated: a user
/// message's tool results first (one `tool` message each), then its text; an assistant message
/// with its tool calls.
fn write_message(message: &Message, out: &mut Vec<u8>) -> Result<()> {
    let mut first = true;
    match message.role {
        Role::User => {
            for block in &message.content {
                if let ContentBlock::ToolResult {
                    tool_use_id,
                    content,
                    ..
                } = block
                {
                    let tool = ChatMessage::Tool {
                        tool_call_id: tool_use_id,
                        content: content.to_text(),
                    };
                    write_one(&tool, out, &mut first)?;
                }
            }
            // The text blocks, one a line.
            let text = message
                .content
                .iter()
                .filter_map(ContentBlock::as_text)
                .collect::<Vec<_>>()
                .join("\n");
            if !text.is_empty() {
                write_one(&ChatMessage::User { content: text }, out, &mut first)?;
            }
            Ok(())
        }
        Role::Assistant => {
            let text = message.text();
            let tool_calls = message
                .tool_uses()
                .map(|(id, name, input)| {
                    json!({"id": id, "type": "function",
                           "function": {"name": name, "arguments": arguments_string(input)}})
                })
                .collect();
            let assistant = ChatMessage::Assistant {
                content: (!text.is_empty()).then_some(text),
                tool_calls,
            };
            write_one(&assistant, out, &mut first)
        }
    }
}

#[derive(Debug, Default)]
struct PartialCall {
    call: usize,
    id: String,
    name: String,
    arguments: String,
}

/// The OpenAI Chat Completions protocol; as a value, the state of reading one answer.
#[derive(Debug, Default)]
pub struct Chat {
    calls: BTreeMap<u64, PartialCall>,
    next_call: usize,
    finish: Option<StopReason>,
    usage: Option<Usage>,
}

impl Chat {
    fn close_calls(&mut self, out: &mut Vec<ModelEvent>) -> Result<()> {
        for (_, call) in std::mem::take(&mut self.calls) {
            let input = parse_arguments(&call.name, &call.arguments)?;
            out.push(ModelEvent::ToolCallEnd {
                index: call.call,
                id: call.id,
                name: call.name,
                input,
            });
        }
        Ok(())
    }

    fn stop(&mut self, out: &mut Vec<ModelEvent>) -> Result<()> {
        self.close_calls(out)?;
        if let Some(usage) = self.usage {
            out.push(ModelEvent::Usage { usage });
        }
        out.push(ModelEvent::Stop {
            reason: self.finish.unwrap_or(StopReason::Completed),
        });
        Ok(())
    }

    /// Applies one chunk (the JSON of a `data:` line).
    fn chunk(&mut self, data: &Value, out: &mut Vec<ModelEvent>) -> Result<()> {
        if let Some(error) = data.get("error") {
            return Err(server_error(error));
        }
        if let Some(usage) = data.get("usage").filter(|u| u.is_object()) {
            let get = |p: &str| usage.pointer(p).and_then(Value::as_u64).unwrap_or(0);
            let cached = get("/prompt_tokens_details/cached_tokens");
            self.usage = Some(Usage {
                input_tokens: get("/prompt_tokens").saturating_sub(cached),
                output_tokens: get("/completion_tokens"),
                cache_read_tokens: cached,
                ..Usage::default()
            });
        }
        let choices = data.get("choices").and_then(Value::as_array);
        for choice in choices.into_iter().flatten() {
            if choice.get("index").and_then(Value::as_u64).unwrap_or(0) != 0 {
                continue;
            }
            let delta = choice.get("delta").unwrap_or(&Value::Null);
            for key in ["reasoning_content", "reasoning"] {
                if let Some(text) = delta.get(key).and_then(Value::as_str)
                    && !text.is_empty()
                {
                    out.push(ModelEvent::ThinkingDelta { text: text.into() });
                }
            }
            if let Some(text) = delta.get("content").and_then(Value::as_str)
                && !text.is_empty()
            {
                out.push(ModelEvent::TextDelta { text: text.into() });
            }
            let tool_calls = delta.get("tool_calls").and_then(Value::as_array);
            for (pos, tc) in tool_calls.into_iter().flatten().enumerate() {
                let slot = tc
                    .get("index")
                    .and_then(Value::as_u64)
                    .unwrap_or(pos as u64);
                let function = tc.get("function").unwrap_or(&Value::Null);
                if !self.calls.contains_key(&slot) {
                    let id = tc.get("id").and_then(Value::as_str).unwrap_or("");
                    let name = function.get("name").and_then(Value::as_str).unwrap_or("");
                    if name.is_empty() {
                        return Err(Error::protocol(format!(
                            "tool call {slot} starts without a function name"
                        )));
                    }
                    let call = self.next_call;
                    self.next_call += 1;
                    let id = if id.is_empty() {
                        format!("call_{call}")
                    } else {
                        id.to_owned()
                    };
                    out.push(ModelEvent::ToolCallStart {
                        index: call,
                        id: id.clone(),
                        name: name.to_owned(),
                    });
                    self.calls.insert(
                        slot,
                        PartialCall {
                            call,
                            id,
                            name: name.to_owned(),
                            arguments: String::new(),
                        },
                    );
                }
                if let Some(fragment) = function.get("arguments").and_then(Value::as_str)
                    && !fragment.is_empty()
                    && let Some(call) = self.calls.get_mut(&slot)
                {
                    call.arguments.push_str(fragment);
                    out.push(ModelEvent::ToolCallDelta {
                        index: call.call,
                        fragment: fragment.to_owned(),
                    });
                }
            }
            if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
                self.finish = Some(match reason {
                    "length" => StopReason::MaxTokens,
                    "content_filter" => StopReason::Refused,
                    _ => StopReason::Completed,
                });
                self.close_calls(out)?;
            }
        }
        Ok(())
    }
}

impl Protocol for Chat {
    const KIND: ModelKind = ModelKind::OpenaiChat;
    const PATH: &'static str = "/v1/chat/completions";
    const OUTPUT_SCHEMA: bool = true;

    /// The JSON body of a request (byte-stable for a given request).
    fn request_body(request: &ModelRequest) -> Result<RequestBody> {
        let tools: Vec<Value> = request
            .tools
            .iter()
            .map(|t| {
                json!({"type": "function", "function":
                    {"name": t.name, "description": t.description, "parameters": t.input_schema}})
            })
            .collect();
        #[derive(Serialize)]
        struct Head<'a> {
            model: &'a str,
            #[serde(skip_serializing_if = "Vec::is_empty")]
            tools: Vec<Value>,
            max_tokens: u32,
            stream: bool,
            stream_options: Value,
            #[serde(skip_serializing_if = "Option::is_none")]
            response_format: Option<Value>,
            #[serde(skip_serializing_if = "Option::is_none")]
            reasoning_effort: Option<&'static str>,
        }
        let response_format = request.output_schema.as_ref().map(|schema| {
            json!({"type": "json_schema", "json_schema": {"name": "output", "schema": schema}})
        });
        let head = Head {
            model: &request.model,
            tools,
            max_tokens: request.max_tokens,
            stream: true,
            stream_options: json!({"include_usage": true}),
            response_format,
            reasoning_effort: request.effort.map(|effort| effort.openai()),
        };
        let messages = &request.messages;
        // The system prompt first, then the conversation.
        body_with_array(&head, "messages", |out| {
            let mut first = true;
            if let Some(content) = request.system.as_deref().filter(|s| !s.is_empty()) {
                let mut system = Vec::new();
                write_one(&ChatMessage::System { content }, &mut system, &mut first)?;
                out.write(&system);
            }
            messages
                .write_encoded(Self::KIND, messages.len(), out, first, write_message)
                .map(drop)
        })
    }

    /// Every chunk is part of the answer; `[DONE]` ends it.
    fn event(&mut self, _name: &str, data: &str, out: &mut Vec<ModelEvent>) -> Result<bool> {
        if data == "[DONE]" {
            if self.finish.is_none() {
                return Err(Error::protocol(
                    "the stream said [DONE] before any finish_reason",
                ));
            }
            self.stop(out)?;
            return Ok(true);
        }
        let value: Value = serde_json::from_str(data)
            .map_err(|e| Error::protocol(format!("invalid JSON in chat chunk: {e}")))?;
        self.chunk(&value, out)?;
        Ok(true)
    }

    /// Some servers close without `[DONE]` after the finishing chunk: that is accepted.
    fn end(&mut self, out: &mut Vec<ModelEvent>) -> Result<()> {
        if self.finish.is_some() {
            self.stop(out)?;
        }
        Ok(())
    }
}
