//! The client's lines, framed and parsed before rmcp's service sees them, and stdout shared
//! between rmcp and the answers to bad lines.
//!
//! rmcp's own stdio transport skips a line it cannot parse without a word (on purpose: its
//! maintainers answer nothing to input that is not JSON, rust-sdk#938), answers well-formed
//! JSON of the wrong shape with an error that has no `id`, drops a line over its bound
//! silently, and drops a last line without its newline. JSON-RPC 2.0 asks for an answer to
//! each, so `subagent mcp` frames its input here and hands rmcp parsed messages (its
//! `(Sink, Stream)` transport):
//!
//! - a line that is not UTF-8, or not JSON: a parse error (`-32700`, `id: null`);
//! - a line over [`MAX_FRAME`] bytes: an invalid request (`-32600`, `id: null`) as soon as it
//!   passes the bound (the rest of it is skipped, never buffered);
//! - JSON that is not a message rmcp reads: an invalid request with the request's `id` when it
//!   has a readable one (else `null`); a notification or an answer of that kind is skipped
//!   (neither is ever answered), as rmcp skips unknown notifications;
//! - a blank line, or a byte-order mark before a message: skipped, as rmcp does.
//!
//! A frame split across reads is joined; a last line without its newline is a frame when the
//! input ends. Each bad line gets one answer and is never echoed back; a client that answers
//! our errors with more bad lines gets one answer a line, no more. rmcp's messages and those
//! answers go through one queue to one writer, so a line on stdout is always whole.
//!
//! Public but not part of the API: the way in for the `mcp_frames` fuzz target.

use std::future::Future;

use futures::channel::mpsc;
use futures::{Sink, SinkExt, Stream, StreamExt};
use rmcp::RoleServer;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use serde_json::{Value, json};
use subagent_core::ErrorCode;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio_util::bytes::BytesMut;
use tokio_util::codec::{Decoder, FramedRead, LinesCodec, LinesCodecError};

/// The largest frame read, in bytes (a CR before the newline counts, the newline does not): a
/// longer line is refused and skipped. rmcp's own bound on a stdio line.
pub const MAX_FRAME: usize = 16 * 1024 * 1024;

/// Messages queued for stdout before rmcp (or the reader) waits for the writer.
const QUEUED: usize = 32;

/// How much of a parser's complaint an answer quotes.
const QUOTED: usize = 200;

/// One frame of the input.
#[derive(Debug, PartialEq, Eq)]
pub enum Frame {
    /// A line, without its newline (and a CR before it).
    Line(String),
    /// A line that is not UTF-8.
    NotUtf8,
    /// A line over the bound (reported once, when it passes the bound).
    TooLong,
}

/// The input's frames: [`Frame`]s with their line number, from 1. Never fails on content.
#[derive(Debug)]
pub struct Frames {
    lines: LinesCodec,
    number: u64,
}

impl Frames {
    /// Frames of at most `max` bytes.
    pub fn new(max: usize) -> Self {
        Self {
            lines: LinesCodec::new_with_max_length(max),
            number: 0,
        }
    }

    fn frame(
        &mut self,
        decoded: Result<Option<String>, LinesCodecError>,
    ) -> std::io::Result<Option<(u64, Frame)>> {
        let frame = match decoded {
            Ok(None) => return Ok(None),
            Ok(Some(line)) => Frame::Line(line),
            Err(LinesCodecError::MaxLineLengthExceeded) => Frame::TooLong,
            // The codec's one I/O error while decoding: the line was not UTF-8 (it is consumed).
            Err(LinesCodecError::Io(_)) => Frame::NotUtf8,
        };
        self.number += 1;
        Ok(Some((self.number, frame)))
    }
}

impl Decoder for Frames {
    type Item = (u64, Frame);
    type Error = std::io::Error;

    fn decode(&mut self, buf: &mut BytesMut) -> std::io::Result<Option<(u64, Frame)>> {
        let decoded = self.lines.decode(buf);
        self.frame(decoded)
    }

    fn decode_eof(&mut self, buf: &mut BytesMut) -> std::io::Result<Option<(u64, Frame)>> {
        let decoded = self.lines.decode_eof(buf);
        self.frame(decoded)
    }
}

/// What becomes of one frame.
#[derive(Debug)]
pub enum Read {
    /// A message for rmcp's service.
    Message(Box<RxJsonRpcMessage<RoleServer>>),
    /// A line of JSON to write back: the error that answers the frame.
    Answer(String),
    /// Nothing (a blank line, a notification or an answer rmcp does not read).
    Skip,
}

/// Reads frame `number` (of at most `max` bytes).
pub fn read(number: u64, frame: Frame, max: usize) -> Read {
    let line = match frame {
        Frame::Line(line) => line,
        Frame::NotUtf8 => {
            return parse_error(format!(
                "line {number} of the input is not UTF-8; it was skipped"
            ));
        }
        Frame::TooLong => {
            return invalid(
                Value::Null,
                format!("line {number} of the input is longer than {max} bytes; it was skipped"),
            );
        }
    };
    let text = line.strip_prefix('\u{feff}').unwrap_or(&line);
    if text.trim().is_empty() {
        return Read::Skip;
    }
    let error = match serde_json::from_str::<RxJsonRpcMessage<RoleServer>>(text) {
        Ok(message) => return Read::Message(Box::new(message)),
        Err(error) => error,
    };
    let value = match serde_json::from_str::<Value>(text) {
        Ok(value) => value,
        Err(_) => {
            return parse_error(format!(
                "line {number} of the input is not JSON ({}); it was skipped",
                quoted(&error.to_string())
            ));
        }
    };
    let id = value
        .get("id")
        .filter(|id| id.is_string() || id.is_number());
    let answer = value.get("result").is_some() || value.get("error").is_some();
    let notification = value.get("id").is_none() && value.get("method").is_some();
    if notification || (answer && value.get("method").is_none()) {
        // A parser's complaint can quote the input: only its category goes to the log.
        tracing::debug!(
            line = number,
            category = ?error.classify(),
            "skipped a notification or an answer rmcp does not read"
        );
        return Read::Skip;
    }
    invalid(
        id.cloned().unwrap_or(Value::Null),
        format!(
            "line {number} of the input is not a JSON-RPC message this server reads ({}); it was skipped",
            quoted(&error.to_string())
        ),
    )
}

fn parse_error(message: String) -> Read {
    Read::Answer(error_line(Value::Null, -32700, "Parse error", message))
}

fn invalid(id: Value, message: String) -> Read {
    Read::Answer(error_line(id, -32600, "Invalid Request", message))
}

fn error_line(id: Value, code: i32, title: &str, message: String) -> String {
    json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {
            "code": code,
            "message": title,
            "data": {"code": ErrorCode::Protocol.as_str(), "message": message},
        },
    })
    .to_string()
}

/// At most [`QUOTED`] characters of `text`.
fn quoted(text: &str) -> String {
    match text.char_indices().nth(QUOTED) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_owned(),
    }
}

/// The messages rmcp reads from `incoming` (frames of at most `max` bytes), the sink it writes
/// its messages to, and the writer that puts both its messages and the answers to bad frames
/// on `outgoing`. The writer ends once the sink and the messages are dropped, having flushed
/// everything; it fails when `outgoing` does.
pub fn transport<R, W>(
    incoming: R,
    outgoing: W,
    max: usize,
) -> (
    impl Sink<TxJsonRpcMessage<RoleServer>, Error = std::io::Error> + Send + Unpin + 'static,
    impl Stream<Item = RxJsonRpcMessage<RoleServer>> + Send + Unpin + 'static,
    impl Future<Output = std::io::Result<()>> + Send + 'static,
)
where
    R: AsyncRead + Send + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    let (queue, mut queued) = mpsc::channel::<String>(QUEUED);
    let sink =
        queue
            .clone()
            .sink_map_err(|_| gone())
            .with(|message: TxJsonRpcMessage<RoleServer>| {
                futures::future::ready(
                    serde_json::to_string(&message).map_err(std::io::Error::other),
                )
            });
    let frames = FramedRead::new(incoming, Frames::new(max));
    let messages = frames
        .then(move |frame| {
            let mut queue = queue.clone();
            async move {
                let (number, frame) = match frame {
                    Ok(frame) => frame,
                    Err(error) => {
                        tracing::debug!(%error, "reading the input failed");
                        return None;
                    }
                };
                match read(number, frame, max) {
                    Read::Message(message) => Some(Some(*message)),
                    Read::Skip => Some(None),
                    Read::Answer(answer) => {
                        tracing::debug!(line = number, "answered a bad frame");
                        // The writer is gone (stdout is closed): so is the client.
                        queue.send(answer).await.ok().map(|()| None)
                    }
                }
            }
        })
        // The input ends at its end, at a read error, or when the answers cannot be written.
        .take_while(|read| futures::future::ready(read.is_some()))
        .filter_map(|read| futures::future::ready(read.flatten()))
        .boxed();
    let writer = async move {
        let mut outgoing = outgoing;
        while let Some(line) = queued.next().await {
            let mut bytes = line.into_bytes();
            bytes.push(b'\n');
            outgoing.write_all(&bytes).await?;
            outgoing.flush().await?;
        }
        outgoing.shutdown().await
    };
    (sink, messages, writer)
}

fn gone() -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::BrokenPipe, "stdout is closed")
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    /// Feeds `chunks` one by one, then the end of input.
    fn frames(max: usize, chunks: &[&[u8]]) -> Vec<(u64, Frame)> {
        let mut frames = Frames::new(max);
        let mut buf = BytesMut::new();
        let mut out = Vec::new();
        for chunk in chunks {
            buf.extend_from_slice(chunk);
            while let Some(frame) = frames.decode(&mut buf).unwrap() {
                out.push(frame);
            }
        }
        while let Some(frame) = frames.decode_eof(&mut buf).unwrap() {
            out.push(frame);
        }
        out
    }

    fn line(text: &str) -> Frame {
        Frame::Line(text.to_owned())
    }

    /// The answer to `frame`, as JSON; `Value::Null` when there is none.
    fn answer(frame: Frame) -> Value {
        match read(7, frame, 9) {
            Read::Answer(answer) => serde_json::from_str(&answer).unwrap(),
            Read::Message(message) => panic!("a message: {message:?}"),
            Read::Skip => Value::Null,
        }
    }

    #[test]
    fn a_bad_line_is_one_frame_and_the_next_is_read() {
        assert_eq!(
            frames(8, &[b"{}\n\xff\xfe\nabcdefghi", b"jk\n", b"x\r\n", b"last"]),
            [
                (1, line("{}")),
                (2, Frame::NotUtf8),
                (3, Frame::TooLong),
                (4, line("x")),
                (5, line("last")),
            ]
        );
    }

    #[test]
    fn a_split_character_and_a_split_crlf_are_joined() {
        let text = "é\r\n".as_bytes();
        assert_eq!(
            frames(8, &[&text[..1], &text[1..3], &text[3..]]),
            [(1, line("é"))]
        );
    }

    #[test]
    fn bad_lines_are_answered_with_errors_and_messages_are_read() {
        let error = |id: Value, code: i64| (id, code, Value::from("PROTOCOL"));
        let shape = |answer: Value| {
            (
                answer["id"].clone(),
                answer["error"]["code"].as_i64().unwrap(),
                answer["error"]["data"]["code"].clone(),
            )
        };
        assert_eq!(
            answer(Frame::NotUtf8),
            json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "Parse error",
                "data": {"code": "PROTOCOL", "message": "line 7 of the input is not UTF-8; it was skipped"}}})
        );
        assert_eq!(shape(answer(Frame::TooLong)), error(Value::Null, -32600));
        assert_eq!(shape(answer(line("not json"))), error(Value::Null, -32700));
        assert_eq!(shape(answer(line("{\"id\":1"))), error(Value::Null, -32700));
        assert_eq!(shape(answer(line("[]"))), error(Value::Null, -32600));
        assert_eq!(
            shape(answer(line(
                r#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":7}"#
            ))),
            error(json!("a"), -32600)
        );
        // Never answered: blank lines, notifications, answers.
        for skipped in [
            "",
            " \t",
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":7}"#,
            r#"{"jsonrpc":"2.0","id":3,"result":{},"error":{}}"#,
        ] {
            assert_eq!(answer(line(skipped)), Value::Null, "{skipped}");
        }
        let ping = "\u{feff}{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}";
        assert!(matches!(read(1, line(ping), 99), Read::Message(_)));
    }
}
