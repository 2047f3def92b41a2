//! Retries happen for 429/5xx/connect failures before the first byte, and never after.

use pretty_assertions::assert_eq;
use subagent_model::{ErrorCode, collect};
use subagent_test_support::FakeServer;
use tokio_util::sync::CancellationToken;

use super::support::{KINDS, answer, build, config, refusal, request};

const SCENARIOS: &str = r#"
- match: "^flaky$"
  steps: [{error: {status: 503, type: overloaded_error, message: "try again", times: 2}, text: "finally"}]
- match: "^limited$"
  steps: [{error: {status: 429, type: rate_limit_error, message: "wait", retry_after: 0.01, times: 1}, text: "ok"}]
- match: "^bad$"
  steps: [{error: {status: 400, type: invalid_request_error, message: "no"}}]
- match: "^cut$"
  steps: [{text: "started", disconnect: true}]
"#;

fn with_retries(url: &str, kind: subagent_model::ModelKind, n: u32) -> subagent_model::ModelConfig {
    let mut c = config(url, kind);
    c.retry.max_retries = n;
    c
}

/// A fake server on the scenarios and a `kind` client of it that retries `n` times.
async fn retrying(
    kind: subagent_model::ModelKind,
    n: u32,
) -> (FakeServer, std::sync::Arc<dyn subagent_model::Model>) {
    let server = FakeServer::from_yaml(SCENARIOS).await.unwrap();
    let model = build(&with_retries(&server.url(), kind, n));
    (server, model)
}

#[tokio::test]
async fn transient_errors_are_retried_before_the_first_byte() {
    for kind in KINDS {
        let (server, model) = retrying(kind, 2).await;
        let response = answer(&*model, request("flaky")).await;
        assert_eq!(response.message.text(), "finally", "{kind:?}");
        assert_eq!(server.model_requests().len(), 3, "{kind:?}");

        let response = answer(&*model, request("limited")).await;
        assert_eq!(response.message.text(), "ok", "{kind:?}");
        assert_eq!(server.model_requests().len(), 5, "{kind:?}");
    }
}

#[tokio::test]
async fn retries_are_bounded() {
    for kind in KINDS {
        let (server, model) = retrying(kind, 1).await;
        let error = refusal(&*model, request("flaky")).await;
        assert_eq!(error.code(), ErrorCode::ModelOverloaded, "{kind:?}");
        assert_eq!(server.model_requests().len(), 2, "{kind:?}");
    }
}

#[tokio::test]
async fn bad_requests_are_not_retried() {
    for kind in KINDS {
        let (server, model) = retrying(kind, 3).await;
        let error = refusal(&*model, request("bad")).await;
        assert_eq!(error.code(), ErrorCode::ModelBadRequest);
        assert_eq!(server.model_requests().len(), 1, "{kind:?}");
    }
}

#[tokio::test]
async fn never_resent_once_output_began() {
    for kind in KINDS {
        let (server, model) = retrying(kind, 3).await;
        let stream = model
            .stream(request("cut"), CancellationToken::new())
            .await
            .unwrap();
        let error = collect(stream).await.unwrap_err();
        assert_eq!(error.code(), ErrorCode::ModelNetwork, "{kind:?}: {error}");
        assert_eq!(
            server.model_requests().len(),
            1,
            "{kind:?}: the cut stream was re-sent"
        );
    }
}
