//! One answer is bounded in bytes (`max_answer_bytes`: its text, thinking and tool calls
//! together): past the cap the stream is stopped (the response dropped, nothing more read) and
//! the call fails with `ANSWER_TOO_LARGE`; an answer within it is whole. For each client over
//! real HTTP, and for the scripted model.

use pretty_assertions::assert_eq;
use subagent_model::{
    DEFAULT_MAX_ANSWER_BYTES, Error, ErrorCode, Model, ModelConfig, ModelEvent, ModelKind,
    Scenarios, ScriptedModel, build_with_env,
};
use subagent_session::StopReason;
use subagent_test_support::FakeServer;
use tokio_util::sync::CancellationToken;

use super::support::{KINDS, build, config, drain, request, streamed, text_of};

const SCENARIOS: &str = r#"
- name: endless
  match: "endless"
  steps:
    - text: "Here it comes:"
      repeat: {text: "ab"}
- name: exact
  match: "exact"
  steps:
    - repeat: {text: "ab", bytes: 50000}
- name: thinking
  match: "think"
  steps:
    - thinking: "a long thought"
      repeat: {bytes: 10}
- name: arguments
  match: "call"
  steps:
    - text: "Writing."
      tool_calls:
        - name: write_file
          fragments: 40
          input: {path: "big.txt", content: "0123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789"}
"#;

fn capped(
    server: &FakeServer,
    kind: ModelKind,
    max_answer_bytes: u64,
) -> std::sync::Arc<dyn Model> {
    let mut config = config(&server.url(), kind);
    config.max_answer_bytes = max_answer_bytes;
    build(&config)
}

/// The events and the error of `prompt`'s answer from a `kind` model capped at `max_answer_bytes`.
async fn capped_answer(
    server: &FakeServer,
    kind: ModelKind,
    max_answer_bytes: u64,
    prompt: &str,
) -> (Vec<ModelEvent>, Option<Error>) {
    let stream = capped(server, kind, max_answer_bytes)
        .stream(request(prompt), CancellationToken::new())
        .await
        .unwrap();
    drain(stream).await
}

/// The code of the error an answer ended with, if any.
fn code(error: Option<Error>) -> Option<ErrorCode> {
    error.map(|e| e.code())
}

#[tokio::test]
async fn an_endless_answer_is_stopped_at_its_cap_and_its_response_dropped() {
    let server = FakeServer::from_yaml(SCENARIOS).await.unwrap();
    for (n, kind) in KINDS.into_iter().enumerate() {
        let (events, error) = capped_answer(&server, kind, 100_000, "endless").await;
        let error = error.unwrap_or_else(|| panic!("{kind:?}: the answer ended"));
        assert_eq!(error.code(), ErrorCode::AnswerTooLarge, "{kind:?}");
        assert_eq!(error.stop_reason(), StopReason::Failed, "{kind:?}");
        assert!(!error.is_retryable());
        assert_eq!(
            error.to_string(),
            "model answer too large: it passed 100000 bytes of text, thinking and tool calls (max_answer_bytes); the stream was stopped"
        );
        assert!(matches!(error, Error::AnswerTooLarge { limit: 100_000 }));
        // What arrived up to the cap is delivered, cut to fill it exactly.
        let text = text_of(&events);
        assert_eq!(text.len(), 100_000, "{kind:?}");
        assert!(text.starts_with("Here it comes:abab"), "{kind:?}");
        assert!(
            !events.iter().any(|e| matches!(e, ModelEvent::Stop { .. })),
            "{kind:?}"
        );
        // The fake server sees the client go away: nothing more is read.
        server.wait_dropped(n + 1).await;
    }
    assert_eq!(server.dropped_streams(), 3);
}

#[tokio::test]
async fn an_answer_at_its_cap_is_whole() {
    let server = FakeServer::from_yaml(SCENARIOS).await.unwrap();
    for kind in KINDS {
        let (events, error) = capped_answer(&server, kind, 50_000, "exact").await;
        assert!(error.is_none(), "{kind:?}: {error:?}");
        assert_eq!(text_of(&events).len(), 50_000, "{kind:?}");
        assert_eq!(
            events.last(),
            Some(&ModelEvent::Stop {
                reason: StopReason::Completed
            }),
            "{kind:?}"
        );
        // One byte less is too little.
        let (events, error) = capped_answer(&server, kind, 49_999, "exact").await;
        assert_eq!(code(error), Some(ErrorCode::AnswerTooLarge), "{kind:?}");
        assert_eq!(text_of(&events).len(), 49_999, "{kind:?}");
    }
}

#[tokio::test]
async fn thinking_and_tool_call_arguments_count() {
    let server = FakeServer::from_yaml(SCENARIOS).await.unwrap();
    for kind in KINDS {
        let (events, error) = capped_answer(&server, kind, 20, "think").await;
        assert_eq!(code(error), Some(ErrorCode::AnswerTooLarge), "{kind:?}");
        let thought: String = events
            .iter()
            .filter_map(|e| match e {
                ModelEvent::ThinkingDelta { text } => Some(text.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(thought, "a long thought", "{kind:?}");
        // The thought took 14 bytes. The OpenAI protocols then bring 6 of the 10 generated
        // bytes; Anthropic's thinking signature (`fake-signature`, 14 bytes) crosses the cap
        // before any text.
        let text = if kind == ModelKind::Anthropic {
            ""
        } else {
            "xxxxxx"
        };
        assert_eq!(text_of(&events), text, "{kind:?}");
    }
    // A call: "Writing." (8 bytes), its id and name, 139 bytes of arguments in 40 fragments.
    for kind in KINDS {
        let (events, error) = capped_answer(&server, kind, 100, "call").await;
        assert_eq!(code(error), Some(ErrorCode::AnswerTooLarge), "{kind:?}");
        assert!(
            events
                .iter()
                .any(|e| matches!(e, ModelEvent::ToolCallDelta { .. })),
            "{kind:?}"
        );
        assert!(
            !events
                .iter()
                .any(|e| matches!(e, ModelEvent::ToolCallEnd { .. })),
            "{kind:?}"
        );
        let (_, error) = capped_answer(&server, kind, 1000, "call").await;
        assert!(error.is_none(), "{kind:?}: {error:?}");
    }
}

#[tokio::test]
async fn the_scripted_model_is_capped_the_same_way() {
    let scenarios = Scenarios::from_yaml(SCENARIOS).unwrap();
    let model = ScriptedModel::new("s", scenarios).with_max_answer_bytes(100_000);
    let (events, error) = streamed(&model, "endless").await;
    assert_eq!(code(error), Some(ErrorCode::AnswerTooLarge));
    assert_eq!(text_of(&events).len(), 100_000);
}

#[test]
fn the_cap_is_configured_and_checked() {
    let config = ModelConfig::new(ModelKind::OpenaiChat, "m").with_base_url("http://127.0.0.1:9");
    assert_eq!(config.max_answer_bytes, DEFAULT_MAX_ANSWER_BYTES);
    assert_eq!(DEFAULT_MAX_ANSWER_BYTES, 8 * 1024 * 1024);
    // Absent from a configuration: the default.
    let parsed: ModelConfig =
        serde_json::from_value(serde_json::json!({"kind": "scripted", "model": "s"})).unwrap();
    assert_eq!(parsed.max_answer_bytes, DEFAULT_MAX_ANSWER_BYTES);
    let schema = serde_json::to_value(schemars::schema_for!(ModelConfig)).unwrap();
    assert_eq!(schema["properties"]["max_answer_bytes"]["minimum"], 1);
    // No answer fits in 0 bytes: refused when the model is built.
    for kind in [ModelKind::OpenaiChat, ModelKind::Scripted] {
        let mut zero = ModelConfig::new(kind, "m").with_base_url("http://127.0.0.1:9");
        zero.max_answer_bytes = 0;
        let error = build_with_env(&zero, |_| None).err().unwrap();
        assert_eq!(error.code(), ErrorCode::InvalidArguments);
        assert_eq!(
            error.to_string(),
            "invalid model configuration: max_answer_bytes must be at least 1"
        );
    }
}
