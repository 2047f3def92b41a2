//! First-byte and idle timeouts, and cancellation mid-stream, driven by gates (no sleeps).

use std::time::Duration;

use futures::StreamExt;
use pretty_assertions::assert_eq;
use subagent_model::{Error, ErrorCode, ModelEvent, TimeoutKind};
use subagent_session::StopReason;
use subagent_test_support::FakeServer;
use tokio_util::sync::CancellationToken;

use super::support::{KINDS, build, config, refusal, request};

const SCENARIOS: &str = r#"
- match: "^slow start$"
  steps: [{wait_gate: never, text: "too late"}]
- match: "^stall$"
  steps: [{text: "first words", wait_gate_mid: never, tool_calls: [{name: x, input: {}}]}]
- match: "^hold$"
  steps: [{text: "streaming", wait_gate_mid: hold}]
- match: "^gated$"
  steps: [{text: "before", wait_gate_mid: go}]
"#;

fn short(
    url: &str,
    kind: subagent_model::ModelKind,
    first_byte_ms: u64,
    idle_ms: u64,
) -> subagent_model::ModelConfig {
    let mut c = config(url, kind);
    c.timeouts.first_byte_ms = first_byte_ms;
    c.timeouts.idle_ms = idle_ms;
    c
}

async fn wait_dropped(server: &FakeServer, n: usize) {
    tokio::time::timeout(Duration::from_secs(10), server.wait_dropped(n))
        .await
        .unwrap_or_else(|_| panic!("server never saw {n} dropped stream(s)"));
}

#[tokio::test]
async fn first_byte_timeout() {
    let server = FakeServer::from_yaml(SCENARIOS).await.unwrap();
    for kind in KINDS {
        let model = build(&short(&server.url(), kind, 150, 5_000));
        let error = refusal(&*model, request("slow start")).await;
        assert!(
            matches!(
                error,
                Error::Timeout {
                    kind: TimeoutKind::FirstByte,
                    ..
                }
            ),
            "{kind:?}: {error:?}"
        );
        assert_eq!(error.code(), ErrorCode::ModelTimeout);
    }
}

#[tokio::test]
async fn idle_timeout_after_the_stream_started() {
    let server = FakeServer::from_yaml(SCENARIOS).await.unwrap();
    for (n, kind) in KINDS.into_iter().enumerate() {
        let model = build(&short(&server.url(), kind, 5_000, 150));
        let mut stream = model
            .stream(request("stall"), CancellationToken::new())
            .await
            .unwrap();
        let mut text = String::new();
        let error = loop {
            match stream.next().await.unwrap() {
                Ok(ModelEvent::TextDelta { text: t }) => text.push_str(&t),
                Ok(_) => {}
                Err(e) => break e,
            }
        };
        assert_eq!(text, "first words", "{kind:?}");
        assert!(
            matches!(
                error,
                Error::Timeout {
                    kind: TimeoutKind::Idle,
                    ..
                }
            ),
            "{kind:?}: {error:?}"
        );
        assert!(stream.next().await.is_none());
        wait_dropped(&server, n + 1).await;
    }
}

#[tokio::test]
async fn cancel_mid_stream_closes_the_connection() {
    let server = FakeServer::from_yaml(SCENARIOS).await.unwrap();
    for (n, kind) in KINDS.into_iter().enumerate() {
        let model = build(&config(&server.url(), kind));
        let cancel = CancellationToken::new();
        let mut stream = model.stream(request("hold"), cancel.clone()).await.unwrap();
        // Read until the first text arrives: the answer is under way.
        loop {
            if let ModelEvent::TextDelta { .. } = stream.next().await.unwrap().unwrap() {
                break;
            }
        }
        cancel.cancel();
        let error = stream.next().await.unwrap().unwrap_err();
        assert!(matches!(error, Error::Cancelled), "{kind:?}: {error:?}");
        assert_eq!(error.code(), ErrorCode::Cancelled);
        assert_eq!(error.stop_reason(), StopReason::Cancelled);
        assert!(stream.next().await.is_none());
        // The server sees the connection go away while its stream was still running.
        wait_dropped(&server, n + 1).await;
    }
    assert_eq!(server.dropped_streams(), 3);
}

#[tokio::test]
async fn cancel_before_the_first_byte() {
    let server = FakeServer::from_yaml(SCENARIOS).await.unwrap();
    for kind in KINDS {
        let model = build(&config(&server.url(), kind));
        let cancel = CancellationToken::new();
        let before = server.requests().len();
        let call = {
            let cancel = cancel.clone();
            let model = model.clone();
            tokio::spawn(async move { model.stream(request("slow start"), cancel).await.err() })
        };
        server.wait_requests(before + 1).await;
        cancel.cancel();
        let error = call.await.unwrap().unwrap();
        assert!(matches!(error, Error::Cancelled), "{kind:?}: {error:?}");
    }
}

#[tokio::test]
async fn a_gate_releases_the_rest_of_the_answer() {
    let server = FakeServer::from_yaml(SCENARIOS).await.unwrap();
    let gate = server.gate("go");
    for kind in KINDS {
        gate.close();
        let model = build(&config(&server.url(), kind));
        let mut stream = model
            .stream(request("gated"), CancellationToken::new())
            .await
            .unwrap();
        loop {
            if let ModelEvent::TextDelta { .. } = stream.next().await.unwrap().unwrap() {
                break;
            }
        }
        gate.open();
        let response = subagent_model::collect(stream).await.unwrap();
        assert_eq!(response.stop, StopReason::Completed, "{kind:?}");
    }
}
