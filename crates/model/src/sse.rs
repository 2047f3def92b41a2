//! An incremental Server-Sent Events parser: bytes in (any split), events out.
//!
//! Follows the WHATWG rules that matter for model APIs: lines end in `\n`, `\r\n` or `\r`;
//! `event:` sets the type, `data:` lines are joined with `\n`, `:` starts a comment, a blank line
//! dispatches. Bytes that are not UTF-8 are replaced, never a panic. An event (its pending
//! `data:` lines and the line being read, together) is bounded by [`MAX_LINE`] so a server cannot
//! make us buffer without end.

use crate::error::{Error, Result};

/// The most bytes of one event (its `data:` lines so far plus the line being read) we buffer
/// before declaring the stream malformed.
pub const MAX_LINE: usize = 16 * 1024 * 1024;

/// One dispatched event.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event:` field (empty when absent).
    pub event: String,
    /// The `data:` lines joined with `\n`.
    pub data: String,
}

/// The parser state.
#[derive(Debug, Default)]
pub struct SseParser {
    line: Vec<u8>,
    last_was_cr: bool,
    event: String,
    data: String,
    has_data: bool,
}

impl SseParser {
    /// A fresh parser.
    pub fn new() -> Self {
        Self::default()
    }

    /// Feeds bytes; completed events are appended to `out`.
    pub fn feed(&mut self, bytes: &[u8], out: &mut Vec<SseEvent>) -> Result<()> {
        let mut rest = bytes;
        while !rest.is_empty() {
            if self.last_was_cr {
                self.last_was_cr = false;
                if rest[0] == b'\n' {
                    rest = &rest[1..];
                    continue;
                }
            }
            match rest.iter().position(|&b| b == b'\n' || b == b'\r') {
                Some(pos) => {
                    self.push_bytes(&rest[..pos])?;
                    self.last_was_cr = rest[pos] == b'\r';
                    rest = &rest[pos + 1..];
                    self.end_line(out);
                }
                None => {
                    self.push_bytes(rest)?;
                    rest = &[];
                }
            }
        }
        Ok(())
    }

    /// The end of the input: a pending event without its blank line is dispatched (servers
    /// that close right after the last `data:` line are common).
    pub fn finish(&mut self, out: &mut Vec<SseEvent>) {
        if !self.line.is_empty() {
            self.end_line(out);
        }
        self.end_line(out);
    }

    fn push_bytes(&mut self, bytes: &[u8]) -> Result<()> {
        if self.data.len() + self.line.len() + bytes.len() > MAX_LINE {
            return Err(Error::protocol(format!(
                "server-sent event longer than {MAX_LINE} bytes"
            )));
        }
        self.line.extend_from_slice(bytes);
        Ok(())
    }

    fn end_line(&mut self, out: &mut Vec<SseEvent>) {
        if self.line.is_empty() {
            if self.has_data || !self.event.is_empty() {
                out.push(SseEvent {
                    event: std::mem::take(&mut self.event),
                    data: std::mem::take(&mut self.data),
                });
            }
            self.has_data = false;
            self.event.clear();
            self.data.clear();
            return;
        }
        let line = String::from_utf8_lossy(&self.line).into_owned();
        self.line.clear();
        if line.starts_with(':') {
            return;
        }
        let (field, value) = match line.find(':') {
            Some(i) => {
                let value = &line[i + 1..];
                (&line[..i], value.strip_prefix(' ').unwrap_or(value))
            }
            None => (line.as_str(), ""),
        };
        match field {
            "event" => value.clone_into(&mut self.event),
            "data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.has_data = true;
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use proptest::prelude::*;

    fn parse_all(chunks: &[&[u8]]) -> Vec<SseEvent> {
        let mut parser = SseParser::new();
        let mut out = Vec::new();
        for chunk in chunks {
            parser.feed(chunk, &mut out).unwrap();
        }
        parser.finish(&mut out);
        out
    }

    #[test]
    fn events_split_anywhere() {
        let text =
            b"event: a\ndata: 1\n\n: comment\r\nevent: b\r\ndata: x\r\ndata:y\r\n\r\ndata: last";
        let whole = parse_all(&[text]);
        assert_eq!(
            whole,
            vec![
                SseEvent {
                    event: "a".into(),
                    data: "1".into()
                },
                SseEvent {
                    event: "b".into(),
                    data: "x\ny".into()
                },
                SseEvent {
                    event: String::new(),
                    data: "last".into()
                },
            ]
        );
        for split in 0..text.len() {
            let (a, b) = text.split_at(split);
            assert_eq!(parse_all(&[a, b]), whole, "split at {split}");
        }
        let bytes: Vec<&[u8]> = text.chunks(1).collect();
        assert_eq!(parse_all(&bytes), whole);
    }

    #[test]
    fn one_event_is_bounded_across_its_data_lines() {
        let mut parser = SseParser::new();
        let mut out = Vec::new();
        let half = format!("data: {}\n", "x".repeat(MAX_LINE / 2 + 1));
        parser.feed(half.as_bytes(), &mut out).unwrap();
        let error = parser
            .feed(half.as_bytes(), &mut out)
            .err()
            .map(|e| e.to_string());
        assert_eq!(
            error.as_deref(),
            Some("model protocol error: server-sent event longer than 16777216 bytes")
        );
        assert_eq!(out, Vec::new());
    }

    proptest! {
        #[test]
        fn never_panics(chunks in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..64), 0..16)) {
            let mut parser = SseParser::new();
            let mut out = Vec::new();
            for chunk in &chunks {
                let _ = parser.feed(chunk, &mut out);
            }
            parser.finish(&mut out);
        }

        #[test]
        fn split_does_not_matter(text in "(event: [a-z]{0,3}\r?\n|data: [a-z ]{0,5}\r?\n|\r?\n|: c\n){0,12}", split in 0usize..200) {
            let bytes = text.as_bytes();
            let split = split.min(bytes.len());
            let (a, b) = bytes.split_at(split);
            prop_assert_eq!(parse_all(&[a, b]), parse_all(&[bytes]));
        }
    }
}
