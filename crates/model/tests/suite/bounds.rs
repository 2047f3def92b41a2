//! Untrusted numbers and sizes never panic the client or make it buffer without end:
//! `retry-after(-ms)` headers, scenario `retry_after`, token counts, error bodies.

use std::time::Duration;

use pretty_assertions::assert_eq;
use subagent_model::parse_retry_after;
use subagent_model::{Error, ModelKind, Scenarios, ScriptedModel, Usage};
use tokio_util::sync::CancellationToken;

use super::support::{KINDS, build, config, endless_server, raw_server, refusal, request};

/// The longest `retry-after` the client keeps (larger values are clamped to it).
const DAY: Duration = Duration::from_secs(24 * 60 * 60);

fn rate_limited(header: &str) -> String {
    format!(
        "HTTP/1.1 429 Too Many Requests\r\ncontent-type: application/json\r\n{header}\r\ncontent-length: 2\r\nconnection: close\r\n\r\n{{}}"
    )
}

/// What a 429 answer's header becomes in the error, through the real client.
#[tokio::test]
async fn any_retry_after_header_is_bounded_or_ignored() {
    let cases: [(&str, Option<Duration>); 12] = [
        ("retry-after-ms: 1e300", Some(DAY)),
        ("retry-after-ms: 1e20", Some(DAY)),
        ("retry-after-ms: inf", Some(DAY)),
        ("retry-after-ms: NaN", None),
        ("retry-after-ms: -1", None),
        ("retry-after-ms: soon", None),
        ("retry-after-ms: 1500", Some(Duration::from_millis(1500))),
        ("retry-after: 1e300", Some(DAY)),
        ("retry-after: -0.5", None),
        ("retry-after: Wed, 21 Oct 2015 07:28:00 GMT", None),
        ("retry-after: 2.5", Some(Duration::from_millis(2500))),
        ("retry-after: 86401", Some(DAY)),
    ];
    for (header, expected) in cases {
        let url = raw_server(rate_limited(header).leak()).await;
        let mut config = config(&url, ModelKind::Anthropic);
        // One retry: the wait is capped by max_backoff_ms (20 ms), whatever the header says.
        config.retry.max_retries = 1;
        let error = build(&config)
            .stream(request("hi"), CancellationToken::new())
            .await
            .err()
            .unwrap();
        let Error::RateLimited { retry_after, .. } = error else {
            panic!("{header}: {error:?}");
        };
        assert_eq!(retry_after, expected, "{header}");
    }
}

#[test]
fn retry_after_ms_wins_over_retry_after() {
    let mut headers = reqwest::header::HeaderMap::new();
    headers.insert("retry-after", "7".parse().unwrap());
    headers.insert("retry-after-ms", "250".parse().unwrap());
    assert_eq!(
        parse_retry_after(&headers),
        Some(Duration::from_millis(250))
    );
    headers.insert("retry-after-ms", "garbage".parse().unwrap());
    assert_eq!(parse_retry_after(&headers), Some(Duration::from_secs(7)));
}

/// A scenario's `retry_after` (the scripted model) is bounded the same way.
#[tokio::test]
async fn scenario_retry_after_is_bounded_or_ignored() {
    let cases: [(&str, Option<Duration>); 5] = [
        ("1e300", Some(DAY)),
        (".inf", Some(DAY)),
        ("-3", None),
        (".nan", None),
        ("0.25", Some(Duration::from_millis(250))),
    ];
    for (value, expected) in cases {
        let yaml = format!(
            "- match: '.*'\n  steps: [{{error: {{status: 429, type: rate_limit_error, message: slow, retry_after: {value}}}}}]\n"
        );
        let model = ScriptedModel::new("s", Scenarios::from_yaml(&yaml).unwrap());
        let error = refusal(&model, request("hi")).await;
        let Error::RateLimited { retry_after, .. } = error else {
            panic!("{value}: {error:?}");
        };
        assert_eq!(retry_after, expected, "{value}");
    }
}

#[test]
fn token_counts_saturate() {
    let huge = Usage {
        input_tokens: u64::MAX,
        output_tokens: u64::MAX - 1,
        cache_read_tokens: 1,
        cache_write_tokens: u64::MAX,
        ..Usage::default()
    };
    let mut total = huge;
    total.add(&huge);
    assert_eq!(
        total,
        Usage {
            input_tokens: u64::MAX,
            output_tokens: u64::MAX,
            cache_read_tokens: 2,
            cache_write_tokens: u64::MAX,
            ..Usage::default()
        }
    );
}

/// An error answer whose body never ends is read up to a bound, not until the first-byte
/// deadline (and not into memory without end); its message is cut to 2000 bytes.
#[tokio::test]
async fn an_endless_error_body_is_read_up_to_a_bound() {
    let url = endless_server("HTTP/1.1 500 Internal Server Error\r\ncontent-type: text/plain\r\nconnection: close\r\n\r\n").await;
    for kind in KINDS {
        let mut config = config(&url, kind);
        // Were the body read to its end, the call would fail on this deadline instead.
        config.timeouts.first_byte_ms = 60_000;
        let error = build(&config)
            .stream(request("hi"), CancellationToken::new())
            .await
            .err()
            .unwrap();
        let Error::Overloaded { status, message } = error else {
            panic!("{kind:?}: {error:?}");
        };
        assert_eq!((status, message), (500, "x".repeat(2000)), "{kind:?}");
    }
}

/// A JSON error whose message is huge: the message is cut to 2000 bytes.
#[tokio::test]
async fn a_huge_error_message_is_cut() {
    let message = "é".repeat(5000);
    let body =
        format!("{{\"error\":{{\"type\":\"invalid_request_error\",\"message\":\"{message}\"}}}}");
    let response = format!(
        "HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    let url = raw_server(response.leak()).await;
    for kind in KINDS {
        let error = build(&config(&url, kind))
            .stream(request("hi"), CancellationToken::new())
            .await
            .err()
            .unwrap();
        let Error::BadRequest { status, message } = error else {
            panic!("{kind:?}: {error:?}");
        };
        // "é" is two bytes: the cut lands on a character boundary.
        assert_eq!((status, message), (400, "é".repeat(1000)), "{kind:?}");
    }
}
