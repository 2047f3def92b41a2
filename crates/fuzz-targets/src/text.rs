//! The targets whose parsers need no harness: product CLI output, model streams, presets, agent
//! definitions, transcripts.

use std::path::Path;

use subagent_model::Decoder;
use subagent_model::anthropic::AnthropicDecoder;
use subagent_model::chat::ChatDecoder;
use subagent_model::responses::ResponsesDecoder;
use subagent_model::sse::SseParser;

/// Claude Code's `--output-format stream-json` stdout, line by line, into run events
/// (`subagent_claude_code::StreamState::on_line`).
pub fn claude_stream(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let mut state = subagent_claude_code::StreamState::default();
    for line in text.split('\n') {
        let _ = state.on_line(line);
    }
}

/// `codex exec --json` stdout, line by line, into run events
/// (`subagent_codex::StreamState::line`).
pub fn codex_events(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let mut state = subagent_codex::StreamState::default();
    let mut out = Vec::new();
    for line in text.split('\n') {
        let _ = state.line(line, &mut out);
    }
}

fn decode<D: Decoder>(mut decoder: D, chunks: &[&[u8]]) {
    let mut out = Vec::new();
    for chunk in chunks {
        if decoder.feed(chunk, &mut out).is_err() || decoder.is_done() {
            return;
        }
    }
    let _ = decoder.finish(&mut out);
}

/// A model server's streamed answer: the SSE parser, then each protocol's event handling
/// (Anthropic Messages, OpenAI Responses, Chat Completions chunks). The first byte picks the
/// size of the chunks the body is split into.
pub fn model_sse(data: &[u8]) {
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
    decode(AnthropicDecoder::new(), &chunks);
    decode(ResponsesDecoder::new(), &chunks);
    decode(ChatDecoder::new(), &chunks);
}

/// Variables for `${VAR}`: set, empty, one whose value looks like a reference, a long one.
fn env(name: &str) -> Option<String> {
    match name {
        "HOME" => Some("/home/fuzz".to_owned()),
        "EMPTY" => Some(String::new()),
        "NESTED" => Some("${HOME}/x".to_owned()),
        "API_KEY" => Some("sk-fuzz-0123456789".to_owned()),
        "LONG" => Some("x".repeat(4096)),
        _ => None,
    }
}

/// A preset file as `subagent` reads it (`subagent_preset::Preset::parse`): YAML, `${VAR}`
/// expansion, the format's rules and each provider row's config checked against its factory's
/// schema (every kind built into `subagent`: `subagent_cli::built_in_kinds`).
pub fn preset(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let factories = subagent_cli::built_in_factories();
    let _ = subagent_preset::Preset::parse(text, "/fuzz/preset.yaml", &factories, &env);
}

/// An agent-definition file (Markdown with YAML frontmatter) as the catalog reads it
/// (`subagent_catalog::parse_definition`).
pub fn agent_definition(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = subagent_catalog::parse_definition(
        Path::new("/fuzz/agents/fuzzed.md"),
        text,
        subagent_catalog::Source::Project,
    );
}

/// A skill's `SKILL.md` (Markdown, YAML frontmatter) as the catalog reads it
/// (`subagent_catalog::parse_skill`), and its body as a `Skill` call reads it
/// (`subagent_catalog::skill_body`): a body is a suffix of the text.
pub fn skill_file(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = subagent_catalog::parse_skill(
        Path::new("/fuzz/skills/fuzzed/SKILL.md"),
        text,
        subagent_catalog::Source::Project,
    );
    let body = subagent_catalog::skill_body(text);
    assert!(
        text.ends_with(body),
        "a skill's body is the end of its file"
    );
}

/// A transcript file as a resume reads it (`subagent_session::parse_transcript`, the body of
/// `load_transcript`), then the repair a resumed or forked run applies: its completed-turn
/// prefix, the dangling tool calls and their placeholder answers. Repairing leaves none.
pub fn transcript(data: &[u8]) {
    use subagent_session::{dangling_tool_calls, parse_transcript, repair_dangling_tool_calls};
    let Ok(loaded) = parse_transcript(Path::new("/fuzz/session.jsonl"), data) else {
        return;
    };
    let prefix = loaded.log.completed_turn_prefix();
    for log in [&loaded.log, &prefix] {
        let messages = log.messages();
        let _ = dangling_tool_calls(&messages);
        let repaired = repair_dangling_tool_calls(messages);
        assert!(
            dangling_tool_calls(&repaired).is_empty(),
            "a repaired conversation still has dangling tool calls"
        );
    }
}
