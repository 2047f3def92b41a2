//! Property tests: no decoder panics on arbitrary bytes, split anywhere, and every decoder
//! yields the same events however its input is split.

use proptest::prelude::*;

use crate::anthropic::AnthropicDecoder;
use crate::chat::ChatDecoder;
use crate::http::Decoder;
use crate::responses::ResponsesDecoder;
use crate::types::ModelEvent;

fn run<D: Decoder>(mut decoder: D, chunks: &[Vec<u8>]) -> (Vec<ModelEvent>, bool) {
    let mut out = Vec::new();
    for chunk in chunks {
        if decoder.feed(chunk, &mut out).is_err() {
            return (out, false);
        }
    }
    let ok = decoder.finish(&mut out).is_ok();
    (out, ok)
}

const CHAT: &str = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"héllo\"}}]}\n\n\
data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c\",\"function\":{\"name\":\"f\",\"arguments\":\"{\\\"a\\\"\"}}]}}]}\n\n\
data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\":1}\"}}]},\"finish_reason\":\"tool_calls\"}]}\n\n\
data: {\"choices\":[],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":2}}\n\ndata: [DONE]\n\n";

fn json_fragments() -> impl Strategy<Value = Vec<Vec<u8>>> {
    let piece = prop_oneof![
        Just(b"data: ".to_vec()),
        Just(b"event: message_start\n".to_vec()),
        Just(b"{\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"x\",\"name\":\"n\"}}".to_vec()),
        Just(b"{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\"}}".to_vec()),
        Just(b"{\"type\":\"message_stop\"}".to_vec()),
        Just(b"{\"type\":\"response.output_item.added\",\"item\":{\"type\":\"function_call\",\"name\":\"f\"}}".to_vec()),
        Just(b"{\"type\":\"response.completed\",\"response\":{}}".to_vec()),
        Just(b"{\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":7}]}}]}".to_vec()),
        Just(b"{\"type\":\"message_delta\",\"usage\":{\"input_tokens\":18446744073709551615,\"output_tokens\":1e300}}".to_vec()),
        Just(b"{\"type\":\"content_block_stop\",\"index\":18446744073709551615}".to_vec()),
        Just(b"{\"type\":\"response.function_call_arguments.delta\",\"output_index\":-1,\"delta\":\"x\"}".to_vec()),
        Just(b"{\"type\":\"response.completed\",\"response\":{\"usage\":{\"input_tokens\":1,\"input_tokens_details\":{\"cached_tokens\":18446744073709551615}}}}".to_vec()),
        Just(b"{\"choices\":[{\"index\":18446744073709551615,\"delta\":{}}],\"usage\":{\"prompt_tokens\":0,\"prompt_tokens_details\":{\"cached_tokens\":18446744073709551615}}}".to_vec()),
        Just(b"{\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":18446744073709551615,\"function\":{\"name\":\"f\"}}]},\"finish_reason\":\"length\"}]}".to_vec()),
        Just(b"[DONE]".to_vec()),
        Just(b"\n\n".to_vec()),
        Just(b"\r\n".to_vec()),
        proptest::collection::vec(any::<u8>(), 0..16),
    ];
    proptest::collection::vec(piece, 0..24)
}

proptest! {
    #[test]
    fn decoders_never_panic_on_arbitrary_bytes(chunks in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..64), 0..12)) {
        let _ = run(AnthropicDecoder::new(), &chunks);
        let _ = run(ResponsesDecoder::new(), &chunks);
        let _ = run(ChatDecoder::new(), &chunks);
    }

    #[test]
    fn decoders_never_panic_on_plausible_events(chunks in json_fragments()) {
        let _ = run(AnthropicDecoder::new(), &chunks);
        let _ = run(ResponsesDecoder::new(), &chunks);
        let _ = run(ChatDecoder::new(), &chunks);
    }

    #[test]
    fn chat_split_does_not_matter(split in 0usize..CHAT.len()) {
        let bytes = CHAT.as_bytes();
        let whole = run(ChatDecoder::new(), &[bytes.to_vec()]);
        let (a, b) = bytes.split_at(split);
        let parts = run(ChatDecoder::new(), &[a.to_vec(), b.to_vec()]);
        prop_assert_eq!(&parts, &whole);
        prop_assert!(whole.1);
        prop_assert_eq!(whole.0.len(), 7);
    }
}

/// How many answer events (not keep-alives) each chunk completes, fed one after the other.
fn answer_events<D: Decoder>(mut decoder: D, chunks: &[&str]) -> Vec<usize> {
    let mut out = Vec::new();
    chunks
        .iter()
        .map(|c| decoder.feed(c.as_bytes(), &mut out).unwrap())
        .collect()
}

const KEEP_ALIVES: [&str; 4] = [": keep-alive\n\n", "data:\n\n", "data:   \n\n", ":\n"];

#[test]
fn keep_alives_are_not_answer_events() {
    let anthropic = [
        &KEEP_ALIVES[..],
        &[
            "event: ping\ndata: {\"type\": \"ping\"}\n\n",
            "data: {\"type\":\"ping\"}\n\n",
            "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{}}\n\n",
            "event: ping\ndata: {\"type\": \"ping\"}\n\nevent: content_block_start\n",
            "data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n",
        ],
    ]
    .concat();
    assert_eq!(
        answer_events(AnthropicDecoder::new(), &anthropic),
        vec![0, 0, 0, 0, 0, 0, 1, 0, 1]
    );
    let responses = [
        &KEEP_ALIVES[..],
        &["data: {\"type\":\"response.created\",\"response\":{}}\n\n"],
    ]
    .concat();
    assert_eq!(
        answer_events(ResponsesDecoder::new(), &responses),
        vec![0, 0, 0, 0, 1]
    );
    let chat = [
        &KEEP_ALIVES[..],
        &["data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\"}}]}\n\n"],
    ]
    .concat();
    assert_eq!(
        answer_events(ChatDecoder::new(), &chat),
        vec![0, 0, 0, 0, 1]
    );
}
