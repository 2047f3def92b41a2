//! Reading the conversation out of a request body of each protocol, as session messages.
//!
//! System and developer text is dropped (a scenario never matches it). Consecutive messages of
//! one role merge (codex sends its `<environment_context>` and the prompt as two user items).
//! Blocks we do not model (images, server tools) become placeholders that are neither empty nor
//! a genuine prompt.

use serde_json::Value;
use subagent_session::{ContentBlock, Message, Role, ToolResultContent};

fn placeholder(kind: &str) -> ContentBlock {
    ContentBlock::text(format!("<fake-model:{kind}>"))
}

fn push(messages: &mut Vec<Message>, role: Role, blocks: Vec<ContentBlock>) {
    match messages.last_mut() {
        Some(last) if last.role == role => last.content.extend(blocks),
        _ => messages.push(Message::new(role, blocks)),
    }
}

fn text_of(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

fn parse_args(raw: &Value) -> Value {
    match raw {
        Value::String(s) => serde_json::from_str(s).unwrap_or_else(|_| Value::String(s.clone())),
        other => other.clone(),
    }
}

fn str_of<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

/// Anthropic Messages: `messages` (with claude's `role: "system"` entries skipped).
pub fn anthropic(body: &Value) -> Vec<Message> {
    let mut out = Vec::new();
    for m in body
        .get("messages")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let role = match str_of(m, "role") {
            "user" => Role::User,
            "assistant" => Role::Assistant,
            _ => continue,
        };
        let blocks = match m.get("content") {
            Some(Value::String(s)) => vec![ContentBlock::text(s.clone())],
            Some(Value::Array(blocks)) => blocks.iter().map(anthropic_block).collect(),
            _ => Vec::new(),
        };
        push(&mut out, role, blocks);
    }
    out
}

fn anthropic_block(b: &Value) -> ContentBlock {
    match str_of(b, "type") {
        "text" => ContentBlock::text(str_of(b, "text")),
        "tool_use" => ContentBlock::tool_use(
            str_of(b, "id"),
            str_of(b, "name"),
            b.get("input").cloned().unwrap_or(Value::Null),
        ),
        "tool_result" => ContentBlock::ToolResult {
            tool_use_id: str_of(b, "tool_use_id").to_owned(),
            content: ToolResultContent::Text(text_of(b.get("content").unwrap_or(&Value::Null))),
            is_error: b.get("is_error").and_then(Value::as_bool).unwrap_or(false),
        },
        "thinking" => ContentBlock::Thinking {
            thinking: str_of(b, "thinking").to_owned(),
            signature: b
                .get("signature")
                .and_then(Value::as_str)
                .map(str::to_owned),
        },
        other => placeholder(other),
    }
}

/// OpenAI Responses: `input` (a string or items), developer/system items skipped.
pub fn responses(body: &Value) -> Vec<Message> {
    let mut out = Vec::new();
    let items = match body.get("input") {
        Some(Value::String(s)) => {
            push(&mut out, Role::User, vec![ContentBlock::text(s.clone())]);
            return out;
        }
        Some(Value::Array(items)) => items,
        _ => return out,
    };
    for item in items {
        let kind = item
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or("message");
        match kind {
            "message" => {
                let role = match str_of(item, "role") {
                    "user" => Role::User,
                    "assistant" => Role::Assistant,
                    _ => continue,
                };
                let blocks = match item.get("content") {
                    Some(Value::String(s)) => vec![ContentBlock::text(s.clone())],
                    Some(Value::Array(parts)) => parts
                        .iter()
                        .map(|p| match p.get("text").and_then(Value::as_str) {
                            Some(t) => ContentBlock::text(t),
                            None => placeholder(str_of(p, "type")),
                        })
                        .collect(),
                    _ => Vec::new(),
                };
                push(&mut out, role, blocks);
            }
            "reasoning" => {
                let summary = item.get("summary").map(text_of).unwrap_or_default();
                push(
                    &mut out,
                    Role::Assistant,
                    vec![ContentBlock::Thinking {
                        thinking: summary,
                        signature: None,
                    }],
                );
            }
            k if k.ends_with("_call_output") => {
                let output = item.get("output").map(text_of).unwrap_or_default();
                push(
                    &mut out,
                    Role::User,
                    vec![ContentBlock::tool_result(
                        str_of(item, "call_id"),
                        output,
                        false,
                    )],
                );
            }
            k if k.ends_with("_call") => {
                let input = match (item.get("arguments"), item.get("input")) {
                    (Some(args), _) => parse_args(args),
                    (None, Some(input)) => input.clone(),
                    (None, None) => item.get("action").cloned().unwrap_or(Value::Null),
                };
                let id = match str_of(item, "call_id") {
                    "" => str_of(item, "id"),
                    id => id,
                };
                let name = match str_of(item, "name") {
                    "" => k,
                    name => name,
                };
                push(
                    &mut out,
                    Role::Assistant,
                    vec![ContentBlock::tool_use(id, name, input)],
                );
            }
            _ => {}
        }
    }
    out
}

/// OpenAI Chat Completions: `messages`, system/developer skipped, `tool` messages as results.
pub fn chat(body: &Value) -> Vec<Message> {
    let mut out = Vec::new();
    for m in body
        .get("messages")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        match str_of(m, "role") {
            "user" => {
                let blocks = match m.get("content") {
                    Some(Value::Array(parts)) => parts
                        .iter()
                        .map(|p| match p.get("text").and_then(Value::as_str) {
                            Some(t) => ContentBlock::text(t),
                            None => placeholder(str_of(p, "type")),
                        })
                        .collect(),
                    Some(other) => vec![ContentBlock::text(text_of(other))],
                    None => Vec::new(),
                };
                push(&mut out, Role::User, blocks);
            }
            "assistant" => {
                let mut blocks = Vec::new();
                let text = text_of(m.get("content").unwrap_or(&Value::Null));
                if !text.is_empty() {
                    blocks.push(ContentBlock::text(text));
                }
                for call in m
                    .get("tool_calls")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    let function = call.get("function").unwrap_or(&Value::Null);
                    blocks.push(ContentBlock::tool_use(
                        str_of(call, "id"),
                        str_of(function, "name"),
                        parse_args(function.get("arguments").unwrap_or(&Value::Null)),
                    ));
                }
                push(&mut out, Role::Assistant, blocks);
            }
            "tool" => push(
                &mut out,
                Role::User,
                vec![ContentBlock::tool_result(
                    str_of(m, "tool_call_id"),
                    text_of(m.get("content").unwrap_or(&Value::Null)),
                    false,
                )],
            ),
            _ => {}
        }
    }
    out
}
