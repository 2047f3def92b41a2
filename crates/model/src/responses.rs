//! The OpenAI Responses client: request body (input items) and SSE decoder.

use std::collections::HashSet;

use async_trait::async_trait;
use serde_json::{Value, json};
use subagent_session::{ContentBlock, Message, Role, StopReason};
use tokio_util::sync::CancellationToken;

use crate::collect::parse_arguments;
use crate::error::{Error, Result};
use crate::http::{AuthStyle, Decoder, HttpClient};
use crate::sse::{SseEvent, SseParser};
use crate::types::{Model, ModelEvent, ModelRequest, ModelStream, Usage};

/// A model behind the OpenAI Responses API.
#[derive(Debug)]
pub struct ResponsesModel {
    http: HttpClient,
    model: String,
}

impl ResponsesModel {
    pub(crate) fn new(http: HttpClient, model: String) -> Self {
        Self { http, model }
    }
}

pub(crate) fn arguments_string(input: &Value) -> String {
    match input {
        Value::String(raw) => raw.clone(),
        other => other.to_string(),
    }
}

fn push_message(items: &mut Vec<Value>, role: &str, texts: &mut Vec<Value>) {
    if !texts.is_empty() {
        items.push(json!({"type": "message", "role": role, "content": std::mem::take(texts)}));
    }
}

fn message_items(message: &Message, items: &mut Vec<Value>) {
    match message.role {
        Role::User => {
            let mut texts = Vec::new();
            for block in &message.content {
                match block {
                    ContentBlock::ToolResult {
                        tool_use_id,
                        content,
                        ..
                    } => items.push(json!({
                        "type": "function_call_output",
                        "call_id": tool_use_id,
                        "output": content.to_text(),
                    })),
                    ContentBlock::Text { text } => {
                        texts.push(json!({"type": "input_text", "text": text}));
                    }
                    _ => {}
                }
            }
            push_message(items, "user", &mut texts);
        }
        Role::Assistant => {
            let mut texts = Vec::new();
            for block in &message.content {
                match block {
                    ContentBlock::Text { text } => {
                        texts.push(json!({"type": "output_text", "text": text}));
                    }
                    ContentBlock::ToolUse { id, name, input } => {
                        push_message(items, "assistant", &mut texts);
                        items.push(json!({
                            "type": "function_call",
                            "call_id": id,
                            "name": name,
                            "arguments": arguments_string(input),
                        }));
                    }
                    _ => {}
                }
            }
            push_message(items, "assistant", &mut texts);
        }
    }
}

/// The JSON body of a request (byte-stable for a given request).
pub fn request_body(request: &ModelRequest) -> Result<Vec<u8>> {
    let mut input = Vec::new();
    for message in &request.messages {
        message_items(message, &mut input);
    }
    let tools: Vec<Value> = request
        .tools
        .iter()
        .map(|t| {
            json!({"type": "function", "name": t.name, "description": t.description,
                   "parameters": t.input_schema, "strict": false})
        })
        .collect();
    #[derive(serde::Serialize)]
    struct Body<'a> {
        model: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        instructions: Option<&'a str>,
        input: Vec<Value>,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        tools: Vec<Value>,
        tool_choice: &'static str,
        parallel_tool_calls: bool,
        stream: bool,
        store: bool,
        max_output_tokens: u32,
        #[serde(skip_serializing_if = "Option::is_none")]
        text: Option<Value>,
    }
    let text = request.output_schema.as_ref().map(|schema| {
        json!({"format": {"type": "json_schema", "name": "output", "schema": schema, "strict": false}})
    });
    serde_json::to_vec(&Body {
        model: &request.model,
        instructions: request.system.as_deref().filter(|s| !s.is_empty()),
        input,
        tools,
        tool_choice: "auto",
        parallel_tool_calls: true,
        stream: true,
        store: false,
        max_output_tokens: request.max_tokens,
        text,
    })
    .map_err(|e| Error::Config {
        message: format!("cannot serialize request: {e}"),
    })
}

#[async_trait]
impl Model for ResponsesModel {
    fn describe(&self) -> String {
        format!("openai-responses:{} at {}", self.model, self.http.base())
    }

    fn supports_output_schema(&self) -> bool {
        true
    }

    async fn stream(
        &self,
        mut request: ModelRequest,
        cancel: CancellationToken,
    ) -> Result<ModelStream> {
        if request.model.is_empty() {
            request.model.clone_from(&self.model);
        }
        let body = request_body(&request)?;
        self.http
            .stream(
                "/v1/responses",
                AuthStyle::Bearer,
                &[],
                body,
                ResponsesDecoder::new(),
                cancel,
            )
            .await
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

/// Decodes the Responses SSE stream into [`ModelEvent`]s.
#[derive(Debug, Default)]
pub struct ResponsesDecoder {
    sse: SseParser,
    events: Vec<SseEvent>,
    calls: Vec<OpenCall>,
    next_call: usize,
    texted_items: HashSet<String>,
    refused: bool,
    done: bool,
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

impl ResponsesDecoder {
    /// A fresh decoder.
    pub fn new() -> Self {
        Self::default()
    }

    fn find_call(&mut self, data: &Value) -> Option<&mut OpenCall> {
        let item_id = data.get("item_id").and_then(Value::as_str);
        let output_index = data.get("output_index").and_then(Value::as_u64);
        self.calls.iter_mut().find(|c| {
            item_id.is_some_and(|i| i == c.item_id) || output_index == Some(c.output_index)
        })
    }

    /// Handles one event; whether it was part of the answer (not a keep-alive: empty data, or
    /// a stray `[DONE]`).
    fn handle(&mut self, event: &SseEvent, out: &mut Vec<ModelEvent>) -> Result<bool> {
        let data = event.data.trim();
        if self.done || data.is_empty() || data == "[DONE]" {
            return Ok(false);
        }
        let data: Value = serde_json::from_str(&event.data).map_err(|e| {
            Error::protocol(format!(
                "invalid JSON in Responses event {}: {e}",
                event.event
            ))
        })?;
        let kind = data
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or(event.event.as_str())
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
                self.done = true;
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

fn server_error(error: &Value) -> Error {
    let field = |k: &str| error.get(k).and_then(Value::as_str).unwrap_or("");
    let kind = if field("code").is_empty() {
        field("type")
    } else {
        field("code")
    };
    let message = match field("message") {
        "" => "the server reported an error without a message",
        m => m,
    };
    Error::from_server(0, kind, message, None)
}

impl Decoder for ResponsesDecoder {
    fn feed(&mut self, bytes: &[u8], out: &mut Vec<ModelEvent>) -> Result<usize> {
        self.sse.feed(bytes, &mut self.events)?;
        let events = std::mem::take(&mut self.events);
        let mut answer = 0;
        for event in &events {
            if self.handle(event, out)? {
                answer += 1;
            }
        }
        Ok(answer)
    }

    fn finish(&mut self, out: &mut Vec<ModelEvent>) -> Result<()> {
        self.sse.finish(&mut self.events);
        let events = std::mem::take(&mut self.events);
        for event in &events {
            self.handle(event, out)?;
        }
        Ok(())
    }

    fn is_done(&self) -> bool {
        self.done
    }
}
