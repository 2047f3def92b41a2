//! The OpenAI Responses protocol: request body (input items) and what its streamed events
//! mean. Sending and the SSE framing are shared ([`HttpModel`], [`SseDecoder`]).

use std::collections::HashSet;

use serde::Serialize;
use serde_json::{Value, json};
use subagent_session::{ContentBlock, Message, Role, StopReason};

use crate::body::RequestBody;
use crate::collect::parse_arguments;
use crate::config::ModelKind;
use crate::error::{Error, Result};
use crate::protocol::{HttpModel, Protocol, SseDecoder, body_with_array, unserializable};
use crate::types::{ModelEvent, ModelRequest, Usage};

/// A model behind the OpenAI Responses API.
pub type ResponsesModel = HttpModel<Responses>;

/// Decodes the Responses SSE stream into [`ModelEvent`]s.
pub type ResponsesDecoder = SseDecoder<Responses>;

pub(crate) fn arguments_string(input: &Value) -> String {
    match input {
        Value::String(raw) => raw.clone(),
        other => other.to_string(),
    }
}

/// One input item as the API takes it, borrowed from the conversation.
#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Item<'a> {
    Message {
        role: &'static str,
        content: Vec<Part<'a>>,
    },
    FunctionCall {
        call_id: &'a str,
        name: &'a str,
        arguments: String,
    },
    FunctionCallOutput {
        call_id: &'a str,
        output: String,
    },
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Part<'a> {
    InputText { text: &'a str },
    OutputText { text: &'a str },
}

/// Writes `item` after a comma unless it is the first.
fn write_item(item: &Item<'_>, out: &mut Vec<u8>, first: &mut bool) -> Result<()> {
    if !std::mem::take(first) {
        out.push(b',');
    }
    serde_json::to_writer(&mut *out, item).map_err(unserializable)
}

/// Writes the pending texts as one message item.
fn flush_texts<'a>(
    role: &'static str,
    texts: &mut Vec<Part<'a>>,
    out: &mut Vec<u8>,
    first: &mut bool,
) -> Result<()> {
    if texts.is_empty() {
        return Ok(());
    }
    let content = std::mem::take(texts);
    write_item(&Item::Message { role, content }, out, first)
}

/// Writes one message's input items, comma-separated (none when it has nothing to send).
fn write_message(message: &Message, out: &mut Vec<u8>) -> Result<()> {
    let mut first = true;
    let mut texts = Vec::new();
    match message.role {
        Role::User => {
            for block in &message.content {
                match block {
                    ContentBlock::ToolResult {
                        tool_use_id,
                        content,
                        ..
                    } => {
                        let item = Item::FunctionCallOutput {
                            call_id: tool_use_id,
                            output: content.to_text(),
                        };
                        write_item(&item, out, &mut first)?;
                    }
                    ContentBlock::Text { text } => texts.push(Part::InputText { text }),
                    _ => {}
                }
            }
            flush_texts("user", &mut texts, out, &mut first)
        }
        Role::Assistant => {
            for block in &message.content {
                match block {
                    ContentBlock::Text { text } => texts.push(Part::OutputText { text }),
                    ContentBlock::ToolUse { id, name, input } => {
                        flush_texts("assistant", &mut texts, out, &mut first)?;
                        let item = Item::FunctionCall {
                            call_id: id,
                            name,
                            arguments: arguments_string(input),
                        };
                        write_item(&item, out, &mut first)?;
                    }
                    _ => {}
                }
            }
            flush_texts("assistant", &mut texts, out, &mut first)
        }
    }
}

#[derive(Debug)]
struct OpenCall {
    item_id: String,
    output_index: u64,
    call: usize,
    id: String,
    name: String,
    arguments: String,
}

/// The OpenAI Responses protocol; as a value, the state of reading one answer.
#[derive(Debug, Default)]
pub struct Responses {
    calls: Vec<OpenCall>,
    next_call: usize,
    texted_items: HashSet<String>,
    refused: bool,
}

fn usage_of(response: &Value) -> Usage {
    let get = |p: &str| response.pointer(p).and_then(Value::as_u64).unwrap_or(0);
    let input = get("/usage/input_tokens");
    let cached = get("/usage/input_tokens_details/cached_tokens");
    Usage {
        input_tokens: input.saturating_sub(cached),
        output_tokens: get("/usage/output_tokens"),
        cache_read_tokens: cached,
        ..Usage::default()
    }
}

impl Responses {
    fn find_call(&mut self, data: &Value) -> Option<&mut OpenCall> {
        let item_id = data.get("item_id").and_then(Value::as_str);
        let output_index = data.get("output_index").and_then(Value::as_u64);
        self.calls.iter_mut().find(|c| {
            item_id.is_some_and(|i| i == c.item_id) || output_index == Some(c.output_index)
        })
    }
}

impl Protocol for Responses {
    const KIND: ModelKind = ModelKind::OpenaiResponses;
    const PATH: &'static str = "/v1/responses";
    const OUTPUT_SCHEMA: bool = true;
    const EFFORT: bool = true;

    /// The JSON body of a request (byte-stable for a given request).
    fn request_body(request: &ModelRequest) -> Result<RequestBody> {
        let tools: Vec<Value> = request
            .tools
            .iter()
            .map(|t| {
                json!({"type": "function", "name": t.name, "description": t.description,
                       "parameters": t.input_schema, "strict": false})
            })
            .collect();
        #[derive(Serialize)]
        struct Head<'a> {
            model: &'a str,
            #[serde(skip_serializing_if = "Option::is_none")]
            instructions: Option<&'a str>,
            #[serde(skip_serializing_if = "Vec::is_empty")]
            tools: Vec<Value>,
            tool_choice: &'static str,
            parallel_tool_calls: bool,
            stream: bool,
            store: bool,
            max_output_tokens: u32,
            #[serde(skip_serializing_if = "Option::is_none")]
            text: Option<Value>,
            #[serde(skip_serializing_if = "Option::is_none")]
            reasoning: Option<Reasoning>,
        }
        #[derive(Serialize)]
        struct Reasoning {
            effort: &'static str,
        }
        let text = request.output_schema.as_ref().map(|schema| {
            json!({"format": {"type": "json_schema", "name": "output", "schema": schema,
                              "strict": false}})
        });
        let head = Head {
            model: &request.model,
            instructions: request.system.as_deref().filter(|s| !s.is_empty()),
            tools,
            tool_choice: "auto",
            parallel_tool_calls: true,
            stream: true,
            store: false,
            max_output_tokens: request.max_tokens,
            text,
            reasoning: request.effort.map(|effort| Reasoning {
                effort: effort.openai(),
            }),
        };
        let messages = &request.messages;
        body_with_array(&head, "input", |out| {
            messages
                .write_encoded(Self::KIND, messages.len(), out, true, write_message)
                .map(drop)
        })
    }

    /// A stray `[DONE]` (the Chat Completions ending) counts as a keep-alive.
    fn event(&mut self, name: &str, data: &str, out: &mut Vec<ModelEvent>) -> Result<bool> {
        if data == "[DONE]" {
            return Ok(false);
        }
        let data: Value = serde_json::from_str(data)
            .map_err(|e| Error::protocol(format!("invalid JSON in Responses event {name}: {e}")))?;
        let kind = data
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or(name)
            .to_owned();
        let delta = || {
            data.get("delta")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned()
        };
        match kind.as_str() {
            "response.output_text.delta" => {
                if let Some(id) = data.get("item_id").and_then(Value::as_str) {
                    self.texted_items.insert(id.to_owned());
                }
                out.push(ModelEvent::TextDelta { text: delta() });
            }
            "response.refusal.delta" => {
                self.refused = true;
                out.push(ModelEvent::TextDelta { text: delta() });
            }
            "response.reasoning_summary_text.delta" | "response.reasoning_text.delta" => {
                out.push(ModelEvent::ThinkingDelta { text: delta() });
            }
            "response.output_item.added" => {
                let item = data.get("item").unwrap_or(&Value::Null);
                let item_type = item.get("type").and_then(Value::as_str).unwrap_or("");
                if item_type == "function_call" || item_type == "custom_tool_call" {
                    let call = self.next_call;
                    self.next_call += 1;
                    let id = item
                        .get("call_id")
                        .or_else(|| item.get("id"))
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_owned();
                    let name = item
                        .get("name")
                        .and_then(Value::as_str)
                        .ok_or_else(|| Error::protocol("function_call item without a name"))?
                        .to_owned();
                    out.push(ModelEvent::ToolCallStart {
                        index: call,
                        id: id.clone(),
                        name: name.clone(),
                    });
                    self.calls.push(OpenCall {
                        item_id: item
                            .get("id")
                            .and_then(Value::as_str)
                            .unwrap_or("")
                            .to_owned(),
                        output_index: data
                            .get("output_index")
                            .and_then(Value::as_u64)
                            .unwrap_or(u64::MAX),
                        call,
                        id,
                        name,
                        arguments: String::new(),
                    });
                }
            }
            "response.function_call_arguments.delta" | "response.custom_tool_call_input.delta" => {
                let fragment = delta();
                let Some(call) = self.find_call(&data) else {
                    return Err(Error::protocol(
                        "arguments delta for an unknown function call",
                    ));
                };
                call.arguments.push_str(&fragment);
                let index = call.call;
                out.push(ModelEvent::ToolCallDelta { index, fragment });
            }
            "response.output_item.done" => {
                let item = data.get("item").unwrap_or(&Value::Null);
                match item.get("type").and_then(Value::as_str).unwrap_or("") {
                    t @ ("function_call" | "custom_tool_call") => {
                        let item_id = item.get("id").and_then(Value::as_str).unwrap_or("");
                        let probe =
                            json!({"item_id": item_id, "output_index": data.get("output_index")});
                        let Some(pos) = self
                            .find_call(&probe)
                            .map(|c| c.call)
                            .and_then(|n| self.calls.iter().position(|c| c.call == n))
                        else {
                            return Err(Error::protocol("done for an unknown function call"));
                        };
                        let open = self.calls.remove(pos);
                        let input = if t == "custom_tool_call" {
                            let raw = item.get("input").and_then(Value::as_str);
                            Value::String(raw.map_or(open.arguments.clone(), str::to_owned))
                        } else {
                            let raw = item
                                .get("arguments")
                                .and_then(Value::as_str)
                                .unwrap_or(&open.arguments);
                            parse_arguments(&open.name, raw)?
                        };
                        out.push(ModelEvent::ToolCallEnd {
                            index: open.call,
                            id: open.id,
                            name: open.name,
                            input,
                        });
                    }
                    "message" => {
                        let id = item.get("id").and_then(Value::as_str).unwrap_or("");
                        if !self.texted_items.contains(id) {
                            let parts = item.get("content").and_then(Value::as_array);
                            for part in parts.into_iter().flatten() {
                                if let Some(text) = part.get("text").and_then(Value::as_str) {
                                    out.push(ModelEvent::TextDelta { text: text.into() });
                                }
                            }
                        }
                    }
                    _ => {}
                }
            }
            "response.completed" | "response.incomplete" | "response.done" => {
                if let Some(open) = self.calls.first() {
                    return Err(Error::protocol(format!(
                        "response ended with function call {} still open",
                        open.name
                    )));
                }
                let response = data.get("response").unwrap_or(&Value::Null);
                let reason = response
                    .pointer("/incomplete_details/reason")
                    .and_then(Value::as_str);
                let stop = match reason {
                    Some("max_output_tokens") => StopReason::MaxTokens,
                    Some("content_filter") => StopReason::Refused,
                    _ if self.refused => StopReason::Refused,
                    _ => StopReason::Completed,
                };
                out.push(ModelEvent::Usage {
                    usage: usage_of(response),
                });
                out.push(ModelEvent::Stop { reason: stop });
            }
            "response.failed" => {
                let error = data.pointer("/response/error").unwrap_or(&Value::Null);
                return Err(server_error(error));
            }
            "error" => {
                let error = data.get("error").unwrap_or(&data);
                return Err(server_error(error));
            }
            _ => {}
        }
        Ok(true)
    }
}

/// An error an OpenAI stream reports (`{code, type, message}`, or just a message string).
pub(crate) fn server_error(error: &Value) -> Error {
    let field = |k: &str| error.get(k).and_then(Value::as_str).unwrap_or("");
    let kind = if field("code").is_empty() {
        field("type")
    } else {
        field("code")
    };
    let message = match (field("message"), error.as_str()) {
        ("", Some(m)) => m,
        ("", None) => "the server reported an error without a message",
        (m, _) => m,
    };
    Error::from_server(0, kind, message, None)
}
