//! Every model stream ends: keep-alives (Anthropic `ping`, SSE comments, empty events) hold
//! neither the first-byte nor the idle timer, and each request has an overall limit, retries
//! included, however steadily its answer streams. Small configured limits keep these fast; an
//! outer bound turns a stream that never ends into a failure instead of a hang.

use std::future::Future;
use std::time::Duration;

use futures::StreamExt;
use pretty_assertions::assert_eq;
use subagent_model::{Error, ErrorCode, Model, ModelConfig, ModelKind, Scenarios, ScriptedModel};
use subagent_model::{TimeoutKind, collect};
use subagent_session::StopReason;
use subagent_test_support::FakeServer;
use tokio_util::sync::CancellationToken;

use super::support::{KINDS, answer, build, config, drain, refusal, request, text_of};

const STYLES: [&str; 3] = ["ping", "comment", "empty"];

fn scenarios() -> String {
    let mut yaml = String::new();
    for style in STYLES {
        yaml.push_str(&format!(
            "- match: '^before {style}$'\n  steps: [{{keep_alive: {{style: {style}, every_ms: 10}}, text: never}}]\n\
             - match: '^mid {style}$'\n  steps: [{{text: 'first words', keep_alive_mid: {{style: {style}, every_ms: 10}}, tool_calls: [{{name: x, input: {{}}}}]}}]\n\
             - match: '^few {style}$'\n  steps: [{{keep_alive: {{style: {style}, every_ms: 1, count: 3}}, text: 'all of it', keep_alive_mid: {{style: {style}, every_ms: 1, count: 3}}}}]\n"
        ));
    }
    let words = vec!["word"; 500].join(" ");
    yaml.push_str(&format!(
        "- match: '^trickle$'\n  steps: [{{text: '{words}', event_delay_ms: 10}}]\n\
         - match: '^slow start$'\n  steps: [{{wait_gate: never, text: 'too late'}}]\n\
         - match: '^down$'\n  steps: [{{error: {{status: 503, type: overloaded_error, message: 'still down'}}}}]\n\
         - match: '^hello$'\n  steps: [{{text: 'hi there', tool_calls: [{{name: x, input: {{a: 1}}}}]}}]\n"
    ));
    yaml
}

fn limits(
    url: &str,
    kind: ModelKind,
    first_byte_ms: u64,
    idle_ms: u64,
    total_ms: u64,
) -> ModelConfig {
    let mut c = config(url, kind);
    c.timeouts.first_byte_ms = first_byte_ms;
    c.timeouts.idle_ms = idle_ms;
    c.timeouts.total_ms = total_ms;
    c
}

/// Fails (instead of hanging) when `future` does not end.
async fn bounded<T>(what: &str, future: impl Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(30), future)
        .await
        .unwrap_or_else(|_| panic!("{what}: never ended"))
}

/// Which timeout, its limit, its code and what the user reads.
fn timeout_of(error: &Error) -> Option<(TimeoutKind, Duration, ErrorCode, String)> {
    match error {
        Error::Timeout { kind, after } => Some((*kind, *after, error.code(), error.to_string())),
        _ => None,
    }
}

/// Streams `{prompt} {style}` for every protocol and keep-alive style at once, each to its end;
/// returns the text each got and the error it ended with, and checks that the server saw every
/// (endless) stream dropped.
async fn every_style(
    server: &FakeServer,
    prompt: &str,
    limits: impl Fn(ModelKind) -> ModelConfig,
) -> Vec<(String, String, Option<Error>)> {
    let cases = KINDS
        .into_iter()
        .flat_map(|kind| STYLES.map(|style| (kind, style)))
        .map(|(kind, style)| {
            let model = build(&limits(kind));
            let what = format!("{kind:?} {style}");
            async move {
                let stream = model
                    .stream(
                        request(&format!("{prompt} {style}")),
                        CancellationToken::new(),
                    )
                    .await
                    .unwrap();
                let (events, error) = bounded(&what, drain(stream)).await;
                (what, text_of(&events), error)
            }
        });
    let results = futures::future::join_all(cases).await;
    // The connections are closed: the server sees its endless streams dropped.
    bounded(prompt, server.wait_dropped(results.len())).await;
    results
}

/// What [`timeout_of`] says of a `kind` timeout (`name` in its message) after 300 ms.
fn after_300ms(
    kind: TimeoutKind,
    name: &str,
) -> Option<(TimeoutKind, Duration, ErrorCode, String)> {
    let message = format!("model {name} timeout after 300ms");
    Some((
        kind,
        Duration::from_millis(300),
        ErrorCode::ModelTimeout,
        message,
    ))
}

/// Streams `{prompt} {style}` for every protocol and style under `limits` (of the server's
/// url): each of the nine got `text`, then the `kind` timer ended it after 300 ms.
async fn every_style_times_out(
    prompt: &str,
    limits: impl Fn(&str, ModelKind) -> ModelConfig,
    text: &str,
    kind: TimeoutKind,
    name: &str,
) {
    let server = FakeServer::from_yaml(&scenarios()).await.unwrap();
    let results = every_style(&server, prompt, |k| limits(&server.url(), k)).await;
    assert_eq!(results.len(), 9);
    for (what, got, error) in results {
        assert_eq!(got, text, "{what}");
        assert_eq!(
            error.as_ref().and_then(timeout_of),
            after_300ms(kind, name),
            "{what}: {error:?}"
        );
    }
}

#[tokio::test]
async fn keep_alives_before_the_answer_do_not_hold_the_first_byte_timer() {
    let first_byte = |url: &str, kind| limits(url, kind, 300, 60_000, 60_000);
    every_style_times_out(
        "before",
        first_byte,
        "",
        TimeoutKind::FirstByte,
        "first byte",
    )
    .await;
}

#[tokio::test]
async fn keep_alives_mid_answer_do_not_hold_the_idle_timer() {
    let idle = |url: &str, kind| limits(url, kind, 60_000, 300, 60_000);
    every_style_times_out("mid", idle, "first words", TimeoutKind::Idle, "idle").await;
}

#[tokio::test]
async fn a_few_keep_alives_are_ignored() {
    let server = FakeServer::from_yaml(&scenarios()).await.unwrap();
    for kind in KINDS {
        for style in STYLES {
            let model = build(&config(&server.url(), kind));
            let stream = model
                .stream(request(&format!("few {style}")), CancellationToken::new())
                .await
                .unwrap();
            let response = collect(stream).await.unwrap();
            assert_eq!(
                (response.message.text(), response.stop),
                ("all of it".to_owned(), StopReason::Completed),
                "{kind:?} {style}"
            );
        }
    }
    assert_eq!(server.dropped_streams(), 0);
}

/// An answer that streams steadily (never idle) for longer than the overall limit is cut there.
#[tokio::test]
async fn a_steady_answer_ends_at_the_overall_limit() {
    let server = FakeServer::from_yaml(&scenarios()).await.unwrap();
    for (n, kind) in KINDS.into_iter().enumerate() {
        let model = build(&limits(&server.url(), kind, 60_000, 60_000, 300));
        let what = format!("{kind:?}");
        let (events, error) = bounded(&what, async {
            let stream = model
                .stream(request("trickle"), CancellationToken::new())
                .await
                .unwrap();
            drain(stream).await
        })
        .await;
        assert!(text_of(&events).starts_with("word"), "{what}");
        assert_eq!(
            error.as_ref().and_then(timeout_of),
            after_300ms(TimeoutKind::Total, "overall"),
            "{what}: {error:?}"
        );
        bounded(&what, server.wait_dropped(n + 1)).await;
    }
}

/// The overall limit also covers the wait for the answer to start.
#[tokio::test]
async fn the_overall_limit_covers_the_wait_for_the_first_byte() {
    let server = FakeServer::from_yaml(&scenarios()).await.unwrap();
    for kind in KINDS {
        let model = build(&limits(&server.url(), kind, 60_000, 60_000, 300));
        let what = format!("{kind:?}");
        let error = bounded(&what, async {
            refusal(&*model, request("slow start")).await
        })
        .await;
        assert_eq!(
            timeout_of(&error),
            after_300ms(TimeoutKind::Total, "overall"),
            "{what}: {error:?}"
        );
    }
}

/// Retries stop at the overall limit: no attempt starts past it. The call ends with the last
/// server error (the next wait would pass the limit) or with the overall timeout (the limit ran
/// out during an attempt), whichever the machine's speed makes happen first.
#[tokio::test]
async fn retries_stop_at_the_overall_limit() {
    for kind in KINDS {
        let server = FakeServer::from_yaml(&scenarios()).await.unwrap();
        let mut config = limits(&server.url(), kind, 60_000, 60_000, 300);
        config.retry.max_retries = 1000;
        config.retry.backoff_base_ms = 10;
        config.retry.max_backoff_ms = 10;
        let model = build(&config);
        let what = format!("{kind:?}");
        let error = bounded(&what, async { refusal(&*model, request("down")).await }).await;
        assert!(
            matches!(
                error,
                Error::Overloaded { status: 503, .. }
                    | Error::Timeout {
                        kind: TimeoutKind::Total,
                        ..
                    }
            ),
            "{what}: {error:?}"
        );
        // At least 10 ms between two attempts: at most 300 / 10 retries fit in the limit.
        let attempts = server.model_requests().len();
        assert!((1..=31).contains(&attempts), "{what}: {attempts} attempts");
    }
}

/// The largest configurable limits are accepted (no overflow of a deadline).
#[tokio::test]
async fn the_largest_limits_are_accepted() {
    let server = FakeServer::from_yaml(&scenarios()).await.unwrap();
    for kind in KINDS {
        let mut config = limits(&server.url(), kind, u64::MAX, u64::MAX, u64::MAX);
        config.timeouts.connect_ms = u64::MAX;
        let response = collect(
            build(&config)
                .stream(request("hello"), CancellationToken::new())
                .await
                .unwrap(),
        )
        .await
        .unwrap();
        assert_eq!(response.message.text(), "hi there", "{kind:?}");
    }
}

/// The scripted model lets keep-alives' time pass (nothing to stream in-process); endless ones
/// wait until cancelled.
#[tokio::test(start_paused = true)]
async fn the_scripted_model_waits_out_keep_alives() {
    let model = ScriptedModel::new("s", Scenarios::from_yaml(&scenarios()).unwrap());
    let start = tokio::time::Instant::now();
    let response = answer(&model, request("few ping")).await;
    assert_eq!(response.message.text(), "all of it");
    assert_eq!(start.elapsed(), Duration::from_millis(6));

    let cancel = CancellationToken::new();
    let mut stream = model
        .stream(request("mid ping"), cancel.clone())
        .await
        .unwrap();
    let mut text = String::new();
    while let Some(Ok(subagent_model::ModelEvent::TextDelta { text: t })) = stream.next().await {
        text.push_str(&t);
        if text == "first words" {
            break;
        }
    }
    cancel.cancel();
    assert!(matches!(stream.next().await, Some(Err(Error::Cancelled))));
}
