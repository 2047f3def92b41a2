//! Turning a scenario [`Plan`] into the SSE bytes of each protocol.

use std::time::Duration;

use bytes::Bytes;
use serde_json::{Value, json};
use subagent_model::scenario::{
    Action, HttpErrorSpec, KeepAliveStyle, Plan, PlannedCall, Repeater, StepStop,
};

/// One unit of a response body.
#[derive(Clone, Debug)]
pub enum Chunk {
    /// Bytes to send.
    Bytes(Bytes),
    /// Pause.
    Sleep(Duration),
    /// Wait for a gate.
    Gate(String),
    /// Send `bytes` after each pause of `every`, `count` times (`None`: until the client goes
    /// away).
    Repeat {
        /// What is sent each time.
        bytes: Bytes,
        /// The pause before each.
        every: Duration,
        /// How many times.
        count: Option<u64>,
    },
    /// Cut the connection.
    Disconnect,
    /// Generated text (a step's `repeat`): one event per piece of `repeater`, each `head`, the
    /// piece as JSON string content, then `tail`. The event of a whole piece is made once
    /// (`whole`) and shared, so a long answer costs no memory and little time per event.
    Generate {
        /// The event up to the text.
        head: Bytes,
        /// The event after the text.
        tail: Bytes,
        /// The event of a whole piece.
        whole: Bytes,
        /// The pieces still to send.
        repeater: Repeater,
    },
}

/// Where the text of a generated event goes in its template.
const MARK: &str = "@@subagent-repeat@@";

/// `text` as the inside of a JSON string.
pub(crate) fn escaped(text: &str) -> String {
    let quoted = Value::String(text.to_owned()).to_string();
    quoted
        .get(1..quoted.len().saturating_sub(1))
        .unwrap_or_default()
        .to_owned()
}

/// Generated text as events like `data`, whose text field is [`MARK`].
fn generated(event: Option<&str>, data: &Value, text: &str, bytes: Option<u64>) -> Chunk {
    let framed = sse_text(event, data);
    let (head, tail) = framed.split_once(MARK).unwrap_or((&framed, ""));
    let repeater = Repeater::new(text, bytes);
    let whole = [head, &escaped(repeater.block()), tail].concat();
    Chunk::Generate {
        head: Bytes::copy_from_slice(head.as_bytes()),
        tail: Bytes::copy_from_slice(tail.as_bytes()),
        whole: Bytes::from(whole),
        repeater,
    }
}

/// Which wire protocol a request speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Protocol {
    /// Anthropic Messages.
    Anthropic,
    /// OpenAI Responses.
    Responses,
    /// OpenAI Chat Completions.
    Chat,
}

fn sse_text(event: Option<&str>, data: &Value) -> String {
    match event {
        Some(e) => format!("event: {e}\ndata: {data}\n\n"),
        None => format!("data: {data}\n\n"),
    }
}

fn sse(event: Option<&str>, data: &Value) -> Chunk {
    Chunk::Bytes(Bytes::from(sse_text(event, data)))
}

fn keep_alive(protocol: Protocol, style: KeepAliveStyle) -> Bytes {
    Bytes::from_static(match (style, protocol) {
        (KeepAliveStyle::Ping, Protocol::Anthropic) => {
            b"event: ping\ndata: {\"type\": \"ping\"}\n\n"
        }
        (KeepAliveStyle::Ping | KeepAliveStyle::Comment, _) => b": keep-alive\n\n",
        (KeepAliveStyle::Empty, _) => b"data:\n\n",
    })
}

/// The protocol-neutral units: pauses, gates, keep-alives, disconnects.
fn passthrough(protocol: Protocol, action: &Action, out: &mut Vec<Chunk>) -> bool {
    match action {
        Action::Sleep(d) => out.push(Chunk::Sleep(*d)),
        Action::WaitGate(g) => out.push(Chunk::Gate(g.clone())),
        Action::Disconnect => out.push(Chunk::Disconnect),
        Action::KeepAlive {
            style,
            every,
            count,
        } => out.push(Chunk::Repeat {
            bytes: keep_alive(protocol, *style),
            every: *every,
            count: *count,
        }),
        _ => return false,
    }
    true
}

fn call_id(call: &PlannedCall, prefix: &str) -> String {
    if call.explicit_id {
        call.id.clone()
    } else {
        format!("{prefix}{}", call.id)
    }
}

/// The JSON body of an HTTP error answer.
pub fn error_body(protocol: Protocol, error: &HttpErrorSpec) -> Value {
    match protocol {
        Protocol::Anthropic => {
            json!({"type": "error", "error": {"type": error.kind, "message": error.message}})
        }
        _ => {
            json!({"error": {"message": error.message, "type": error.kind, "code": error.kind, "param": null}})
        }
    }
}

/// Encodes a plan as a streamed body.
pub fn encode(protocol: Protocol, plan: &Plan, model: &str, seed: usize) -> Vec<Chunk> {
    let mut out = Vec::new();
    for action in &plan.opening {
        passthrough(protocol, action, &mut out);
    }
    out.extend(match protocol {
        Protocol::Anthropic => anthropic(plan, model, seed),
        Protocol::Responses => responses(plan, model, seed),
        Protocol::Chat => chat(plan, model, seed),
    });
    out
}

#[derive(PartialEq)]
enum Open {
    None,
    Text,
    Thinking,
}

fn anthropic(plan: &Plan, model: &str, seed: usize) -> Vec<Chunk> {
    let mut out = Vec::new();
    let u = plan.usage;
    out.push(sse(
        Some("message_start"),
        &json!({"type": "message_start", "message": {
            "id": format!("msg_fake_{seed}"), "type": "message", "role": "assistant", "model": model,
            "content": [], "stop_reason": null, "stop_sequence": null,
            "usage": {"input_tokens": u.input_tokens, "output_tokens": 1,
                      "cache_creation_input_tokens": u.cache_write_tokens,
                      "cache_read_input_tokens": u.cache_read_tokens}}}),
    ));
    out.push(sse(Some("ping"), &json!({"type": "ping"})));
    let mut index = 0usize;
    let mut open = Open::None;
    let close = |open: &mut Open, index: &mut usize, out: &mut Vec<Chunk>| {
        if *open == Open::Thinking {
            out.push(sse(
                Some("content_block_delta"),
                &json!({"type": "content_block_delta", "index": *index,
                "delta": {"type": "signature_delta", "signature": "fake-signature"}}),
            ));
        }
        if *open != Open::None {
            out.push(sse(
                Some("content_block_stop"),
                &json!({"type": "content_block_stop", "index": *index}),
            ));
            *index += 1;
            *open = Open::None;
        }
    };
    for action in &plan.actions {
        if passthrough(Protocol::Anthropic, action, &mut out) {
            continue;
        }
        match action {
            Action::Thinking(text) | Action::Text(text) => {
                let thinking = matches!(action, Action::Thinking(_));
                let want = if thinking { Open::Thinking } else { Open::Text };
                if open != want {
                    close(&mut open, &mut index, &mut out);
                    let block = if thinking {
                        json!({"type": "thinking", "thinking": "", "signature": ""})
                    } else {
                        json!({"type": "text", "text": ""})
                    };
                    out.push(sse(Some("content_block_start"), &json!({"type": "content_block_start", "index": index, "content_block": block})));
                    open = want;
                }
                let delta = if thinking {
                    json!({"type": "thinking_delta", "thinking": text})
                } else {
                    json!({"type": "text_delta", "text": text})
                };
                out.push(sse(
                    Some("content_block_delta"),
                    &json!({"type": "content_block_delta", "index": index, "delta": delta}),
                ));
            }
            Action::Repeat { text, bytes } => {
                if open != Open::Text {
                    close(&mut open, &mut index, &mut out);
                    out.push(sse(Some("content_block_start"), &json!({"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}})));
                    open = Open::Text;
                }
                out.push(generated(
                    Some("content_block_delta"),
                    &json!({"type": "content_block_delta", "index": index,
                        "delta": {"type": "text_delta", "text": MARK}}),
                    text,
                    *bytes,
                ));
            }
            Action::ToolCall(call) => {
                close(&mut open, &mut index, &mut out);
                out.push(sse(Some("content_block_start"), &json!({"type": "content_block_start", "index": index,
                    "content_block": {"type": "tool_use", "id": call_id(call, "toolu_"), "name": call.name, "input": {}}})));
                for fragment in &call.fragments {
                    out.push(sse(
                        Some("content_block_delta"),
                        &json!({"type": "content_block_delta", "index": index,
                        "delta": {"type": "input_json_delta", "partial_json": fragment}}),
                    ));
                }
                out.push(sse(
                    Some("content_block_stop"),
                    &json!({"type": "content_block_stop", "index": index}),
                ));
                index += 1;
            }
            Action::StreamError(e) => {
                out.push(sse(
                    Some("error"),
                    &json!({"type": "error", "error": {"type": e.kind, "message": e.message}}),
                ));
            }
            _ => {}
        }
    }
    if plan.complete {
        close(&mut open, &mut index, &mut out);
        let reason = match plan.stop {
            StepStop::MaxTokens => "max_tokens",
            StepStop::Refusal => "refusal",
            StepStop::EndTurn if plan.has_tool_calls => "tool_use",
            StepStop::EndTurn => "end_turn",
        };
        out.push(sse(
            Some("message_delta"),
            &json!({"type": "message_delta",
            "delta": {"stop_reason": reason, "stop_sequence": null},
            "usage": {"output_tokens": u.output_tokens}}),
        ));
        out.push(sse(Some("message_stop"), &json!({"type": "message_stop"})));
    }
    out
}

struct Seq(u64);

impl Seq {
    /// `data` as the next event of `kind`.
    fn data(&mut self, kind: &str, mut data: Value) -> Value {
        if let Value::Object(map) = &mut data {
            map.insert("type".into(), json!(kind));
            map.insert("sequence_number".into(), json!(self.0));
        }
        self.0 += 1;
        data
    }

    fn ev(&mut self, out: &mut Vec<Chunk>, kind: &str, data: Value) {
        let data = self.data(kind, data);
        out.push(sse(Some(kind), &data));
    }
}

/// Opens a reasoning or message item at output index `oi`; its id.
fn open_item(
    thinking: bool,
    seed: usize,
    oi: usize,
    seq: &mut Seq,
    out: &mut Vec<Chunk>,
) -> String {
    let item_id = format!("{}_fake_{seed}_{oi}", if thinking { "rs" } else { "msg" });
    if thinking {
        seq.ev(out, "response.output_item.added", json!({"output_index": oi, "item": {"type": "reasoning", "id": item_id, "summary": []}}));
        seq.ev(out, "response.reasoning_summary_part.added", json!({"item_id": item_id, "output_index": oi, "summary_index": 0, "part": {"type": "summary_text", "text": ""}}));
    } else {
        seq.ev(out, "response.output_item.added", json!({"output_index": oi, "item": {"type": "message", "id": item_id, "status": "in_progress", "role": "assistant", "content": []}}));
        seq.ev(out, "response.content_part.added", json!({"item_id": item_id, "output_index": oi, "content_index": 0, "part": {"type": "output_text", "text": "", "annotations": []}}));
    }
    item_id
}

fn responses(plan: &Plan, model: &str, seed: usize) -> Vec<Chunk> {
    let mut out = Vec::new();
    let mut seq = Seq(0);
    let id = format!("resp_fake_{seed}");
    let base = json!({"id": id, "object": "response", "created_at": 0, "model": model});
    let mut response = base.clone();
    if let Value::Object(m) = &mut response {
        m.insert("status".into(), json!("in_progress"));
        m.insert("output".into(), json!([]));
    }
    seq.ev(&mut out, "response.created", json!({"response": response}));
    seq.ev(
        &mut out,
        "response.in_progress",
        json!({"response": response}),
    );
    let mut items: Vec<Value> = Vec::new();
    // The open item: (kind, id, accumulated text).
    let mut open: Option<(Open, String, String)> = None;
    let close = |open: &mut Option<(Open, String, String)>,
                 items: &mut Vec<Value>,
                 seq: &mut Seq,
                 out: &mut Vec<Chunk>| {
        let Some((kind, item_id, text)) = open.take() else {
            return;
        };
        let oi = items.len();
        let item = if kind == Open::Thinking {
            seq.ev(
                out,
                "response.reasoning_summary_text.done",
                json!({"item_id": item_id, "output_index": oi, "summary_index": 0, "text": text}),
            );
            seq.ev(out, "response.reasoning_summary_part.done", json!({"item_id": item_id, "output_index": oi, "summary_index": 0, "part": {"type": "summary_text", "text": text}}));
            json!({"type": "reasoning", "id": item_id, "summary": [{"type": "summary_text", "text": text}]})
        } else {
            let part = json!({"type": "output_text", "text": text, "annotations": []});
            seq.ev(
                out,
                "response.output_text.done",
                json!({"item_id": item_id, "output_index": oi, "content_index": 0, "text": text}),
            );
            seq.ev(
                out,
                "response.content_part.done",
                json!({"item_id": item_id, "output_index": oi, "content_index": 0, "part": part}),
            );
            json!({"type": "message", "id": item_id, "status": "completed", "role": "assistant", "content": [part]})
        };
        seq.ev(
            out,
            "response.output_item.done",
            json!({"output_index": oi, "item": item}),
        );
        items.push(item);
    };
    for action in &plan.actions {
        if passthrough(Protocol::Responses, action, &mut out) {
            continue;
        }
        match action {
            Action::Thinking(text) | Action::Text(text) => {
                let thinking = matches!(action, Action::Thinking(_));
                let want = if thinking { Open::Thinking } else { Open::Text };
                if open.as_ref().is_some_and(|o| o.0 != want) {
                    close(&mut open, &mut items, &mut seq, &mut out);
                }
                let oi = items.len();
                if open.is_none() {
                    let item_id = open_item(thinking, seed, oi, &mut seq, &mut out);
                    open = Some((want, item_id, String::new()));
                }
                if let Some((_, item_id, acc)) = open.as_mut() {
                    acc.push_str(text);
                    if thinking {
                        seq.ev(&mut out, "response.reasoning_summary_text.delta", json!({"item_id": item_id, "output_index": oi, "summary_index": 0, "delta": text}));
                    } else {
                        seq.ev(&mut out, "response.output_text.delta", json!({"item_id": item_id, "output_index": oi, "content_index": 0, "delta": text}));
                    }
                }
            }
            Action::Repeat { text, bytes } => {
                if open.as_ref().is_some_and(|o| o.0 != Open::Text) {
                    close(&mut open, &mut items, &mut seq, &mut out);
                }
                let oi = items.len();
                let item_id = match &open {
                    Some((_, item_id, _)) => item_id.clone(),
                    None => {
                        let item_id = open_item(false, seed, oi, &mut seq, &mut out);
                        open = Some((Open::Text, item_id.clone(), String::new()));
                        item_id
                    }
                };
                // The done events carry the step's text without the generated part: the
                // clients read the deltas, and the whole would have to be held to send it.
                let kind = "response.output_text.delta";
                let data = seq.data(
                    kind,
                    json!({"item_id": item_id, "output_index": oi, "content_index": 0, "delta": MARK}),
                );
                out.push(generated(Some(kind), &data, text, *bytes));
            }
            Action::ToolCall(call) => {
                close(&mut open, &mut items, &mut seq, &mut out);
                let oi = items.len();
                let cid = call_id(call, "call_");
                let raw: String = call.fragments.concat();
                let (item_id, mut item, delta_kind, done_kind, field) = if call.custom {
                    (
                        format!("ctc_fake_{seed}_{oi}"),
                        json!({"type": "custom_tool_call", "call_id": cid, "name": call.name}),
                        "response.custom_tool_call_input.delta",
                        "response.custom_tool_call_input.done",
                        "input",
                    )
                } else {
                    (
                        format!("fc_fake_{seed}_{oi}"),
                        json!({"type": "function_call", "call_id": cid, "name": call.name}),
                        "response.function_call_arguments.delta",
                        "response.function_call_arguments.done",
                        "arguments",
                    )
                };
                if let Value::Object(m) = &mut item {
                    m.insert("id".into(), json!(item_id));
                    if let Some(ns) = &call.namespace {
                        m.insert("namespace".into(), json!(ns));
                    }
                    m.insert(field.into(), json!(""));
                    m.insert("status".into(), json!("in_progress"));
                }
                seq.ev(
                    &mut out,
                    "response.output_item.added",
                    json!({"output_index": oi, "item": item}),
                );
                for fragment in &call.fragments {
                    seq.ev(
                        &mut out,
                        delta_kind,
                        json!({"item_id": item_id, "output_index": oi, "delta": fragment}),
                    );
                }
                seq.ev(
                    &mut out,
                    done_kind,
                    json!({"item_id": item_id, "output_index": oi, field: raw}),
                );
                if let Value::Object(m) = &mut item {
                    m.insert(field.into(), json!(raw));
                    m.insert("status".into(), json!("completed"));
                }
                seq.ev(
                    &mut out,
                    "response.output_item.done",
                    json!({"output_index": oi, "item": item}),
                );
                items.push(item);
            }
            Action::StreamError(e) => {
                let mut failed = base.clone();
                if let Value::Object(m) = &mut failed {
                    m.insert("status".into(), json!("failed"));
                    m.insert(
                        "error".into(),
                        json!({"code": e.kind, "message": e.message}),
                    );
                }
                seq.ev(&mut out, "response.failed", json!({"response": failed}));
            }
            _ => {}
        }
    }
    if plan.complete {
        close(&mut open, &mut items, &mut seq, &mut out);
        let u = plan.usage;
        let mut done = base;
        let (kind, status) = match plan.stop {
            StepStop::MaxTokens => ("response.incomplete", "incomplete"),
            _ => ("response.completed", "completed"),
        };
        if let Value::Object(m) = &mut done {
            m.insert("status".into(), json!(status));
            m.insert("output".into(), Value::Array(items));
            m.insert(
                "usage".into(),
                json!({
                "input_tokens": u.input_tokens + u.cache_read_tokens,
                "input_tokens_details": {"cached_tokens": u.cache_read_tokens},
                "output_tokens": u.output_tokens,
                "output_tokens_details": {"reasoning_tokens": 0},
                "total_tokens": u.input_tokens + u.cache_read_tokens + u.output_tokens}),
            );
            if plan.stop == StepStop::MaxTokens {
                m.insert(
                    "incomplete_details".into(),
                    json!({"reason": "max_output_tokens"}),
                );
            }
        }
        seq.ev(&mut out, kind, json!({"response": done}));
    }
    out
}

fn chat(plan: &Plan, model: &str, seed: usize) -> Vec<Chunk> {
    let mut out = Vec::new();
    let id = format!("chatcmpl-fake-{seed}");
    let data = |delta: Value, finish: Value| {
        json!({"id": id, "object": "chat.completion.chunk", "created": 0, "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
    };
    let chunk = |delta: Value, finish: Value| sse(None, &data(delta, finish));
    out.push(chunk(
        json!({"role": "assistant", "content": ""}),
        Value::Null,
    ));
    let mut calls = 0usize;
    for action in &plan.actions {
        if passthrough(Protocol::Chat, action, &mut out) {
            continue;
        }
        match action {
            Action::Thinking(text) => {
                out.push(chunk(json!({"reasoning_content": text}), Value::Null));
            }
            Action::Text(text) => out.push(chunk(json!({"content": text}), Value::Null)),
            Action::Repeat { text, bytes } => out.push(generated(
                None,
                &data(json!({"content": MARK}), Value::Null),
                text,
                *bytes,
            )),
            Action::ToolCall(call) => {
                let i = calls;
                calls += 1;
                out.push(chunk(json!({"tool_calls": [{"index": i, "id": call_id(call, "call_"), "type": "function",
                    "function": {"name": call.name, "arguments": ""}}]}), Value::Null));
                for fragment in &call.fragments {
                    out.push(chunk(
                        json!({"tool_calls": [{"index": i, "function": {"arguments": fragment}}]}),
                        Value::Null,
                    ));
                }
            }
            Action::StreamError(e) => out.push(sse(
                None,
                &json!({"error": {"message": e.message, "type": e.kind, "code": e.kind}}),
            )),
            _ => {}
        }
    }
    if plan.complete {
        let reason = match plan.stop {
            StepStop::MaxTokens => "length",
            StepStop::Refusal => "content_filter",
            StepStop::EndTurn if plan.has_tool_calls => "tool_calls",
            StepStop::EndTurn => "stop",
        };
        out.push(chunk(json!({}), json!(reason)));
        let u = plan.usage;
        out.push(sse(
            None,
            &json!({"id": id, "object": "chat.completion.chunk", "created": 0, "model": model, "choices": [],
                "usage": {"prompt_tokens": u.input_tokens + u.cache_read_tokens,
                          "completion_tokens": u.output_tokens,
                          "total_tokens": u.input_tokens + u.cache_read_tokens + u.output_tokens,
                          "prompt_tokens_details": {"cached_tokens": u.cache_read_tokens}}}),
        ));
        out.push(Chunk::Bytes(Bytes::from_static(b"data: [DONE]\n\n")));
    }
    out
}
