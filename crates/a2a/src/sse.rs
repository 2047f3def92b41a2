//! Server-sent events as A2A uses them: each event is one `data:` line of JSON and a blank line
//! (no `event:` name, no `id:`), errors are `event: error`, keep-alives are comments.

use serde::Serialize;

use crate::rpc::{Response, RpcError};

/// The response headers of an SSE stream.
pub const CONTENT_TYPE: &str = "text/event-stream; charset=utf-8";

/// A keep-alive comment (ignored by every reader).
pub const KEEP_ALIVE: &str = ": ping\n\n";

/// `value` as one event: `data: <json>\n\n` (serde_json writes no newline inside).
pub fn event<T: Serialize>(value: &T) -> String {
    let json = serde_json::to_string(value).unwrap_or_else(|error| {
        // Our own types always serialize; say so on the wire rather than panic.
        format!(r#"{{"error":{{"code":-32603,"message":"cannot serialize an event: {error}"}}}}"#)
    });
    format!("data: {json}\n\n")
}

/// A JSON-RPC error as the last event of a stream: `event: error` then its data.
pub fn error_event(id: serde_json::Value, error: RpcError) -> String {
    let body = event(&Response::error(id, error));
    format!("event: error\n{body}")
}

/// One decoded event.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Event {
    /// The `event:` name (empty for a plain message).
    pub name: String,
    /// The `data:` lines joined by `\n`.
    pub data: String,
}

/// Decodes an SSE byte stream fed in arbitrary chunks. Comments and fields other than `event`
/// and `data` are ignored; a line longer than the limit, or an event whose `data:` lines
/// together pass it (the line being read counted in), is an error, not an allocation: the
/// decoder never holds much more than the limit.
#[derive(Debug)]
pub struct Decoder {
    line: Vec<u8>,
    current: Event,
    has_data: bool,
    max_line: usize,
}

/// A line, or an event's data, past the decoder's limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LineTooLong {
    /// The limit, in bytes.
    pub limit: usize,
}

impl std::fmt::Display for LineTooLong {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "an SSE line or event is longer than {} bytes",
            self.limit
        )
    }
}

impl Decoder {
    /// A decoder refusing lines, and events' data, over `max_line` bytes.
    pub fn new(max_line: usize) -> Self {
        Self {
            line: Vec::new(),
            current: Event::default(),
            has_data: false,
            max_line,
        }
    }

    /// Feeds bytes; returns the events they complete.
    pub fn feed(&mut self, bytes: &[u8]) -> Result<Vec<Event>, LineTooLong> {
        let mut events = Vec::new();
        for &byte in bytes {
            if byte != b'\n' {
                if self.line.len() + self.current.data.len() >= self.max_line {
                    return Err(LineTooLong {
                        limit: self.max_line,
                    });
                }
                self.line.push(byte);
                continue;
            }
            if self.line.last() == Some(&b'\r') {
                self.line.pop();
            }
            let line = String::from_utf8_lossy(&self.line).into_owned();
            self.line.clear();
            if line.is_empty() {
                if self.has_data {
                    events.push(std::mem::take(&mut self.current));
                }
                self.current = Event::default();
                self.has_data = false;
                continue;
            }
            if line.starts_with(':') {
                continue;
            }
            let (field, value) = line.split_once(':').unwrap_or((&line, ""));
            let value = value.strip_prefix(' ').unwrap_or(value);
            match field {
                "event" => value.clone_into(&mut self.current.name),
                "data" => {
                    // Counted as text: a byte that is not UTF-8 reads as U+FFFD, three bytes.
                    let separator = usize::from(self.has_data);
                    if self.current.data.len() + separator + value.len() > self.max_line {
                        return Err(LineTooLong {
                            limit: self.max_line,
                        });
                    }
                    if self.has_data {
                        self.current.data.push('\n');
                    }
                    self.current.data.push_str(value);
                    self.has_data = true;
                }
                _ => {}
            }
        }
        Ok(events)
    }
}
