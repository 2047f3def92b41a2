//! A model server's streamed answer: the SSE parser, then each protocol's event handling
//! (Anthropic Messages, OpenAI Responses, Chat Completions chunks). The first byte picks where
//! the body is split into chunks (the decoders must give the same events however it is split,
//! which the crate's property tests check; here: no panic, whatever the bytes).
#![no_main]

use libfuzzer_sys::fuzz_target;
use subagent_model::Decoder;
use subagent_model::anthropic::AnthropicDecoder;
use subagent_model::chat::ChatDecoder;
use subagent_model::responses::ResponsesDecoder;
use subagent_model::sse::SseParser;

fn run<D: Decoder>(mut decoder: D, chunks: &[&[u8]]) {
    let mut out = Vec::new();
    for chunk in chunks {
        if decoder.feed(chunk, &mut out).is_err() {
            return;
        }
        if decoder.is_done() {
            return;
        }
    }
    let _ = decoder.finish(&mut out);
}

fuzz_target!(|data: &[u8]| {
    let Some((&split, body)) = data.split_first() else {
        return;
    };
    let step = usize::from(split).max(1);
    let chunks: Vec<&[u8]> = body.chunks(step).collect();

    let mut parser = SseParser::new();
    let mut events = Vec::new();
    for chunk in &chunks {
        if parser.feed(chunk, &mut events).is_err() {
            break;
        }
    }
    parser.finish(&mut events);

    run(AnthropicDecoder::new(), &chunks);
    run(ResponsesDecoder::new(), &chunks);
    run(ChatDecoder::new(), &chunks);
});
