//! SSE framing: what we write decodes back; the SDKs' framing (pings, CRLF, `event: error`)
//! decodes in any chunking.

use pretty_assertions::assert_eq;
use serde_json::json;
use subagent_a2a::rpc::{Kind, Response, RpcError};
use subagent_a2a::sse::{Decoder, Event, LineTooLong, error_event, event};

fn decode_in_chunks(bytes: &[u8], size: usize) -> Vec<Event> {
    let mut decoder = Decoder::new(1 << 20);
    bytes
        .chunks(size)
        .flat_map(|chunk| decoder.feed(chunk).unwrap())
        .collect()
}

#[test]
fn events_decode_whatever_the_chunking() {
    let response = Response::result(json!(1), json!({"statusUpdate": {"taskId": "t"}}));
    let mut wire = event(&response);
    assert_eq!(
        wire,
        "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"statusUpdate\":{\"taskId\":\"t\"}}}\n\n"
    );
    wire.push_str(": ping - 2026-11-30 23:09:16.017046+00:00\r\n\r\n");
    wire.push_str("data: {\"a\":\r\ndata: 1}\r\n\r\n");
    wire.push_str(&error_event(
        json!(1),
        RpcError::new(Kind::Internal, "boom"),
    ));
    let expected = vec![
        Event {
            name: String::new(),
            data: serde_json::to_string(&response).unwrap(),
        },
        Event {
            name: String::new(),
            data: "{\"a\":\n1}".to_owned(),
        },
        Event {
            name: "error".to_owned(),
            data: serde_json::to_string(&Response::error(
                json!(1),
                RpcError::new(Kind::Internal, "boom"),
            ))
            .unwrap(),
        },
    ];
    for size in [1, 2, 7, wire.len()] {
        assert_eq!(
            decode_in_chunks(wire.as_bytes(), size),
            expected,
            "chunks of {size}"
        );
    }
}

#[test]
fn a_line_past_the_limit_is_an_error() {
    let mut decoder = Decoder::new(8);
    assert_eq!(
        decoder.feed(b"data: 123456789"),
        Err(LineTooLong { limit: 8 })
    );
}

/// `data:` lines each under the limit but together past it, with no blank line to end the
/// event: refused once the event passes the limit, never held whole.
#[test]
fn an_event_past_the_limit_is_an_error() {
    let mut decoder = Decoder::new(64);
    let mut refused = None;
    for round in 0..100 {
        if let Err(error) = decoder.feed(b"data: 0123456789\n") {
            refused = Some((round, error));
            break;
        }
    }
    assert_eq!(refused, Some((5, LineTooLong { limit: 64 })));
    // Events under the limit, one after the other, pass however many there are.
    let mut decoder = Decoder::new(64);
    for _ in 0..1000 {
        assert_eq!(decoder.feed(b"data: 0123456789\n\n").unwrap().len(), 1);
    }
}

/// Found by `cargo xtask fuzz a2a_client`: bytes that are not UTF-8 read as U+FFFD, three bytes
/// each, so a line under the limit could make an event's text up to three times past it. The
/// bound holds for the text the event carries.
#[test]
fn an_event_of_bytes_that_are_not_utf8_stays_within_the_limit() {
    let mut wire = b"data: ".to_vec();
    wire.extend([0xff; 40]);
    wire.extend(b"\n\n");
    let mut decoder = Decoder::new(64);
    assert_eq!(decoder.feed(&wire), Err(LineTooLong { limit: 64 }));
    let mut decoder = Decoder::new(64);
    let fits = [b"data: ".as_slice(), &[0xff; 10], b"\n\n"].concat();
    let events = decoder.feed(&fits).unwrap();
    assert_eq!(events[0].data, "\u{fffd}".repeat(10));
}
