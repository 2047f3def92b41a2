//! Client-side parse throughput of a long streamed answer: 10,000 text deltas plus a tool call
//! with 1,000 argument fragments, fed to each protocol decoder in 4 KiB chunks (as a socket
//! delivers them).

use std::sync::LazyLock;

use divan::{Bencher, black_box};
use subagent_model::Decoder;
use subagent_model::ModelEvent;
use subagent_model::anthropic::AnthropicDecoder;
use subagent_model::chat::ChatDecoder;
use subagent_model::responses::ResponsesDecoder;

const DELTAS: usize = 10_000;
const FRAGMENTS: usize = 1_000;

fn main() {
    divan::main();
}

/// An SSE body: `head`, [`DELTAS`] text deltas (`delta(i)`), `open` (a tool call and the start
/// of its arguments), [`FRAGMENTS`] argument `fragment`s, then `tail`.
fn body(
    head: &str,
    delta: impl Fn(usize) -> String,
    open: &str,
    fragment: &str,
    tail: &str,
) -> Vec<u8> {
    let mut s = String::from(head);
    for i in 0..DELTAS {
        s.push_str(&delta(i));
    }
    s.push_str(open);
    for _ in 0..FRAGMENTS {
        s.push_str(fragment);
    }
    s.push_str(tail);
    s.into_bytes()
}

fn anthropic_body() -> Vec<u8> {
    body(
        "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":10}}}\n\nevent: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n",
        |i| {
            format!(
                "event: content_block_delta\ndata: {{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{{\"type\":\"text_delta\",\"text\":\" word{i}\"}}}}\n\n"
            )
        },
        concat!(
            "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\nevent: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"n\",\"input\":{}}}\n\n",
            "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"a\\\":\\\"\"}}\n\n"
        ),
        "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"xxxxxxxx\"}}\n\n",
        concat!(
            "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"\\\"}\"}}\n\n",
            "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":1}\n\nevent: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"},\"usage\":{\"output_tokens\":5}}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
        ),
    )
}

fn responses_body() -> Vec<u8> {
    body(
        "",
        |i| {
            format!(
                "event: response.output_text.delta\ndata: {{\"type\":\"response.output_text.delta\",\"item_id\":\"msg_1\",\"output_index\":0,\"content_index\":0,\"delta\":\" word{i}\"}}\n\n"
            )
        },
        concat!(
            "event: response.output_item.added\ndata: {\"type\":\"response.output_item.added\",\"output_index\":1,\"item\":{\"type\":\"function_call\",\"id\":\"fc_1\",\"call_id\":\"c\",\"name\":\"n\",\"arguments\":\"\"}}\n\n",
            "data: {\"type\":\"response.function_call_arguments.delta\",\"item_id\":\"fc_1\",\"output_index\":1,\"delta\":\"{\\\"a\\\":\\\"\"}\n\n"
        ),
        "event: response.function_call_arguments.delta\ndata: {\"type\":\"response.function_call_arguments.delta\",\"item_id\":\"fc_1\",\"output_index\":1,\"delta\":\"xxxxxxxx\"}\n\n",
        concat!(
            "data: {\"type\":\"response.function_call_arguments.delta\",\"item_id\":\"fc_1\",\"output_index\":1,\"delta\":\"\\\"}\"}\n\n",
            "data: {\"type\":\"response.output_item.done\",\"output_index\":1,\"item\":{\"type\":\"function_call\",\"id\":\"fc_1\",\"call_id\":\"c\",\"name\":\"n\"}}\n\n",
            "data: {\"type\":\"response.completed\",\"response\":{\"usage\":{\"input_tokens\":10,\"output_tokens\":5}}}\n\n"
        ),
    )
}

fn chat_body() -> Vec<u8> {
    body(
        "",
        |i| {
            format!(
                "data: {{\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\" word{i}\"}},\"finish_reason\":null}}]}}\n\n"
            )
        },
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c1\",\"type\":\"function\",\"function\":{\"name\":\"n\",\"arguments\":\"{\\\"a\\\":\\\"\"}}]}}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"xxxxxxxx\"}}]}}]}\n\n",
        concat!(
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"\\\"}\"}}]},\"finish_reason\":\"tool_calls\"}]}\n\n",
            "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":10,\"completion_tokens\":5}}\n\ndata: [DONE]\n\n"
        ),
    )
}

static ANTHROPIC: LazyLock<Vec<u8>> = LazyLock::new(anthropic_body);
static RESPONSES: LazyLock<Vec<u8>> = LazyLock::new(responses_body);
static CHAT: LazyLock<Vec<u8>> = LazyLock::new(chat_body);

fn decode<D: Decoder>(mut decoder: D, body: &[u8]) -> usize {
    let mut out: Vec<ModelEvent> = Vec::with_capacity(16);
    let mut events = 0;
    for chunk in body.chunks(4096) {
        decoder
            .feed(chunk, &mut out)
            .unwrap_or_else(|e| panic!("{e}"));
        events += out.len();
        out.clear();
    }
    decoder.finish(&mut out).unwrap_or_else(|e| panic!("{e}"));
    assert!(decoder.is_done());
    events + out.len()
}

#[divan::bench]
fn anthropic(bencher: Bencher) {
    let body: &[u8] = &ANTHROPIC;
    bencher
        .counter(divan::counter::BytesCount::new(body.len()))
        .bench(|| decode(AnthropicDecoder::new(), black_box(body)));
}

#[divan::bench]
fn responses(bencher: Bencher) {
    let body: &[u8] = &RESPONSES;
    bencher
        .counter(divan::counter::BytesCount::new(body.len()))
        .bench(|| decode(ResponsesDecoder::new(), black_box(body)));
}

#[divan::bench]
fn chat(bencher: Bencher) {
    let body: &[u8] = &CHAT;
    bencher
        .counter(divan::counter::BytesCount::new(body.len()))
        .bench(|| decode(ChatDecoder::new(), black_box(body)));
}
