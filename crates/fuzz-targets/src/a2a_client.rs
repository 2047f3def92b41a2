//! What a hostile A2A agent sends the a2a provider: its card and its streams.

use subagent_a2a::card;
use subagent_a2a::sse::Decoder;
use subagent_a2a::{A2aConfig, endpoint_of, same_host};

/// The row's URL every card is read against.
const ROW: &str = "http://127.0.0.1:9";

/// The event bounds the mode byte picks from (the default, 8 MiB, among them).
const LIMITS: [usize; 8] = [64, 256, 1024, 4096, 65_536, 1 << 20, 8 << 20, 16];

/// The a2a provider against a hostile agent. The first byte is a mode: bit 0 lets the row
/// allow another host (`allow_other_host`), bits 1–3 pick the event bound, bits 4–7 the size of
/// the chunks a stream comes in. The rest is read twice:
/// - as the agent's card (`card::read_card`, then `endpoint_of`, what building the provider
///   checks): a card the provider takes sends its requests to one of its own interfaces, on
///   the row's host unless the row allows another (`same_host`);
/// - as an SSE stream (`sse::Decoder` with the bound), fed in chunks: no event it gives is
///   past the bound.
pub fn a2a_client(data: &[u8]) {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let allow = mode & 1 == 1;
    let limit = LIMITS[usize::from((mode >> 1) & 7)];
    let chunk = usize::from(mode >> 4) * 7 + 1;
    card_side(rest, allow);
    stream_side(rest, limit, chunk);
}

fn card_side(body: &[u8], allow: bool) {
    let Ok(card) = card::read_card(body, "application/json") else {
        return;
    };
    let mut config = A2aConfig::new(ROW);
    config.allow_other_host = allow;
    let Ok(endpoint) = endpoint_of(&card, &config) else {
        return;
    };
    assert!(
        card.interfaces()
            .iter()
            .any(|interface| interface.url == endpoint),
        "the endpoint {endpoint:?} is none of the card's interfaces"
    );
    assert!(
        allow || same_host(ROW, &endpoint),
        "a card took the token to {endpoint:?}, not on the row's host"
    );
}

fn stream_side(bytes: &[u8], limit: usize, chunk: usize) {
    let mut decoder = Decoder::new(limit);
    for piece in bytes.chunks(chunk) {
        let Ok(events) = decoder.feed(piece) else {
            return;
        };
        for event in events {
            assert!(
                event.data.len() <= limit,
                "an event of {} bytes passed the bound of {limit}",
                event.data.len()
            );
        }
    }
}
