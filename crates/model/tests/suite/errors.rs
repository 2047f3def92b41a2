//! Every error class, with the server's message, for each client; never the API key.

use std::time::Duration;

use pretty_assertions::assert_eq;
use subagent_model::{Error, ErrorCode, ModelKind, TimeoutKind, collect};
use subagent_session::StopReason;
use subagent_test_support::FakeServer;
use tokio_util::sync::CancellationToken;

use super::support::{
    KINDS, SECRET, build, closed_port_url, config, drain, model, raw_server, refusal, request,
    streamed, text_of,
};

const SCENARIOS: &str = r#"
- match: "^auth$"
  steps: [{error: {status: 401, type: authentication_error, message: "invalid x-api-key"}}]
- match: "^rate$"
  steps: [{error: {status: 429, type: rate_limit_error, message: "slow down please"}}]
- match: "^overloaded$"
  steps: [{error: {status: 529, type: overloaded_error, message: "Overloaded"}}]
- match: "^internal$"
  steps: [{error: {status: 500, type: api_error, message: "fake internal"}}]
- match: "^bad$"
  steps: [{error: {status: 400, type: invalid_request_error, message: "fake bad request: tools.0 is wrong"}}]
- match: "^model$"
  steps: [{error: {status: 404, type: not_found_error, message: "model: bogus-model-9"}}]
- match: "^context$"
  steps: [{error: {status: 400, type: invalid_request_error, message: "prompt is too long: 250000 tokens > 200000 maximum"}}]
- match: "^midstream$"
  steps: [{text: "partial answer", stream_error: {type: overloaded_error, message: "overloaded mid-stream"}}]
- match: "^cut$"
  steps: [{text: "partial answer that never ends", disconnect: true}]
"#;

#[tokio::test]
async fn http_error_classes_carry_the_server_message() {
    let server = FakeServer::from_yaml(SCENARIOS).await.unwrap();
    let cases = [
        ("auth", ErrorCode::Unauthorized, "invalid x-api-key"),
        ("rate", ErrorCode::ModelRateLimited, "slow down please"),
        ("overloaded", ErrorCode::ModelOverloaded, "Overloaded"),
        ("internal", ErrorCode::ModelOverloaded, "fake internal"),
        (
            "bad",
            ErrorCode::ModelBadRequest,
            "fake bad request: tools.0 is wrong",
        ),
        ("model", ErrorCode::ModelBadRequest, "model: bogus-model-9"),
        (
            "context",
            ErrorCode::ModelContextTooLong,
            "prompt is too long",
        ),
    ];
    for kind in KINDS {
        let model = model(&server, kind);
        for (prompt, code, message) in cases {
            let error = model
                .stream(request(prompt), CancellationToken::new())
                .await
                .err()
                .unwrap_or_else(|| panic!("{kind:?} {prompt}: no error"));
            assert_eq!(error.code(), code, "{kind:?} {prompt}: {error}");
            let text = error.to_string();
            assert!(text.contains(message), "{kind:?} {prompt}: {text}");
            assert!(!text.contains(SECRET) && !format!("{error:?}").contains(SECRET));
            assert_eq!(error.stop_reason(), StopReason::Failed);
        }
    }
    // The key was sent, redacted in the recording.
    let first = &server.model_requests()[0];
    assert_eq!(first.header("x-api-key"), Some("<redacted>"));
    let openai = server
        .model_requests()
        .into_iter()
        .find(|r| r.path == "/v1/responses")
        .unwrap();
    assert_eq!(openai.header("authorization"), Some("<redacted>"));
}

#[tokio::test]
async fn error_event_mid_stream() {
    let server = FakeServer::from_yaml(SCENARIOS).await.unwrap();
    for kind in KINDS {
        let model = model(&server, kind);
        let (events, error) = streamed(model.as_ref(), "midstream").await;
        assert_eq!(text_of(&events), "partial answer", "{kind:?}");
        let error = error.unwrap();
        assert_eq!(
            error.code(),
            ErrorCode::ModelOverloaded,
            "{kind:?}: {error}"
        );
        assert!(error.to_string().contains("overloaded mid-stream"));
    }
}

#[tokio::test]
async fn a_stream_cut_midway_is_an_error_never_partial_success() {
    let server = FakeServer::from_yaml(SCENARIOS).await.unwrap();
    for kind in KINDS {
        let model = model(&server, kind);
        let (events, error) = streamed(model.as_ref(), "cut").await;
        assert!(
            text_of(&events).starts_with("partial"),
            "{kind:?}: the text before the cut still streams"
        );
        let error = error.unwrap_or_else(|| panic!("{kind:?}: a cut stream must end in an error"));
        assert!(
            matches!(error, Error::Network { .. } | Error::Protocol { .. }),
            "{kind:?}: {error:?}"
        );
        // And through the collector: an error, not a message with partial text.
        let stream = model
            .stream(request("cut"), CancellationToken::new())
            .await
            .unwrap();
        assert!(collect(stream).await.is_err(), "{kind:?}");
    }
    assert_eq!(
        server.dropped_streams(),
        0,
        "scripted cuts are not client drops"
    );
}

#[tokio::test]
async fn connection_refused_is_a_network_error() {
    let url = closed_port_url().await;
    for kind in KINDS {
        let model = build(&config(&url, kind));
        let error = refusal(&*model, request("hi")).await;
        assert_eq!(error.code(), ErrorCode::ModelNetwork, "{kind:?}: {error}");
        assert!(!error.to_string().contains(SECRET));
    }
}

const GARBAGE: &str = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\nevent: message_start\ndata: {not json at all\n\ndata: {\"choices\": [\n\n";

const TRUNCATED_ANTHROPIC: &str = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\nevent: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\nevent: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"half\"}}\n\n";

const TRUNCATED_OPENAI: &str = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\ndata: {\"type\":\"response.output_text.delta\",\"item_id\":\"m\",\"output_index\":0,\"content_index\":0,\"delta\":\"half\"}\n\ndata: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"half\"},\"finish_reason\":null}]}\n\n";

#[tokio::test]
async fn malformed_sse_is_a_protocol_error() {
    let url = raw_server(GARBAGE).await;
    for kind in KINDS {
        let model = build(&config(&url, kind));
        let stream = model
            .stream(request("hi"), CancellationToken::new())
            .await
            .unwrap();
        let (_, error) = drain(stream).await;
        let error = error.unwrap();
        assert_eq!(error.code(), ErrorCode::Protocol, "{kind:?}: {error}");
    }
}

#[tokio::test]
async fn clean_end_without_the_final_event_is_a_protocol_error() {
    for kind in KINDS {
        let body = if kind == ModelKind::Anthropic {
            TRUNCATED_ANTHROPIC
        } else {
            TRUNCATED_OPENAI
        };
        let url = raw_server(body).await;
        let model = build(&config(&url, kind));
        let (events, error) = streamed(model.as_ref(), "hi").await;
        assert_eq!(text_of(&events), "half", "{kind:?}");
        let error = error.unwrap();
        assert_eq!(error.code(), ErrorCode::Protocol, "{kind:?}: {error}");
        let stream = model
            .stream(request("hi"), CancellationToken::new())
            .await
            .unwrap();
        assert_eq!(
            collect(stream).await.unwrap_err().code(),
            ErrorCode::Protocol
        );
    }
}

#[tokio::test]
async fn no_matching_scenario_is_a_clear_error() {
    let server = FakeServer::from_yaml("- match: \"^only this$\"\n  steps: [{text: x}]\n")
        .await
        .unwrap();
    for kind in KINDS {
        let error = model(&server, kind)
            .stream(request("something else"), CancellationToken::new())
            .await
            .err()
            .unwrap();
        assert_eq!(error.code(), ErrorCode::ModelBadRequest);
        assert!(
            error
                .to_string()
                .contains("no scenario matches the prompt \"something else\""),
            "{error}"
        );
    }
}

#[tokio::test]
async fn a_server_that_quotes_the_key_never_puts_it_in_an_error() {
    let server = FakeServer::from_yaml(&format!(
        "- match: '.*'\n  steps: [{{error: {{status: 401, type: authentication_error, message: \"invalid x-api-key: {SECRET}\"}}}}]\n"
    ))
    .await
    .unwrap();
    for kind in KINDS {
        let error = model(&server, kind)
            .stream(request("hello"), CancellationToken::new())
            .await
            .err()
            .unwrap();
        let text = error.to_string();
        assert!(
            text.contains("invalid x-api-key: [redacted]"),
            "{kind:?}: {text}"
        );
        assert!(!text.contains(SECRET) && !format!("{error:?}").contains(SECRET));
    }
}

/// Every code with a sample error, as users and callers see them: these strings are a public
/// contract (`core`'s text where `core` has the code).
#[test]
fn every_error_code_string() {
    let samples = vec![
        Error::Auth {
            message: "bad key".into(),
        },
        Error::RateLimited {
            message: "slow down".into(),
            retry_after: Some(Duration::from_secs(1)),
        },
        Error::Overloaded {
            status: 529,
            message: "Overloaded".into(),
        },
        Error::BadRequest {
            status: 404,
            message: "no model".into(),
        },
        Error::ContextTooLong {
            message: "prompt is too long".into(),
        },
        Error::Network {
            message: "connection reset".into(),
        },
        Error::Protocol {
            message: "bad json".into(),
        },
        Error::Timeout {
            kind: TimeoutKind::Idle,
            after: Duration::from_secs(2),
        },
        Error::AnswerTooLarge { limit: 64 },
        Error::Cancelled,
        Error::Config {
            message: "max_answer_bytes must be at least 1".into(),
        },
    ];
    assert_eq!(samples.len(), ErrorCode::ALL.len());
    let lines: Vec<String> = samples
        .iter()
        .zip(ErrorCode::ALL)
        .map(|(error, code)| {
            assert_eq!(error.code(), code);
            assert_eq!(code.to_string(), code.as_str());
            format!("{code}: {error}")
        })
        .collect();
    assert_eq!(
        lines,
        [
            "UNAUTHORIZED: model authentication failed: bad key",
            "MODEL_RATE_LIMITED: model rate limited: slow down",
            "MODEL_OVERLOADED: model server unavailable (529): Overloaded",
            "MODEL_BAD_REQUEST: model request rejected (404): no model",
            "MODEL_CONTEXT_TOO_LONG: model context too long: prompt is too long",
            "MODEL_NETWORK: model network error: connection reset",
            "PROTOCOL: model protocol error: bad json",
            "MODEL_TIMEOUT: model idle timeout after 2s",
            "ANSWER_TOO_LARGE: model answer too large: it passed 64 bytes of text, thinking and tool calls (max_answer_bytes); the stream was stopped",
            "CANCELLED: model call cancelled",
            "INVALID_ARGUMENTS: invalid model configuration: max_answer_bytes must be at least 1",
        ]
    );
    // An unscripted conversation is a bad request too.
    let unscripted = Error::Unscripted {
        message: "no scenario matches".into(),
    };
    assert_eq!(unscripted.code().as_str(), "MODEL_BAD_REQUEST");
}
