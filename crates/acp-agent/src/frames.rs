//! The client's lines, framed before the SDK sees them, and stdout shared between the SDK and
//! the answers to bad lines.
//!
//! The SDK reads its input with `BufReader::lines`, which fails on the first line that is not
//! UTF-8 and ends the connection (every session with it), and buffers a line without bound. So
//! the lines are framed here, through the SDK's line-level transport (`Lines`): a line that is
//! not UTF-8 is answered with a JSON-RPC parse error (`-32700`, `id: null`), a line over
//! [`MAX_FRAME`] with an invalid request (`-32600`, `id: null`) as soon as it passes the bound
//! (the rest of it is skipped, never buffered), and every other line goes to the SDK as it is,
//! which answers what is not JSON or not JSON-RPC itself. A frame split across reads is joined;
//! a last line without its newline is a frame when the input ends.
//!
//! Both the SDK's messages and those answers go through one queue to one writer, so a line on
//! stdout is always whole.
//!
//! Public but not part of the API: the way in for the `acp_frames` fuzz target.

use std::future::Future;

use futures::channel::mpsc;
use futures::{Sink, SinkExt, Stream, StreamExt};
use serde_json::json;
use subagent_core::ErrorCode;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio_util::bytes::BytesMut;
use tokio_util::codec::{Decoder, FramedRead, LinesCodec, LinesCodecError};

/// The largest frame read, in bytes (a CR before the newline counts, the newline does not): a longer
/// line is refused and skipped. The same as rmcp's bound on `subagent mcp`'s input.
pub const MAX_FRAME: usize = 16 * 1024 * 1024;

/// Messages queued for stdout before the SDK (or the reader) waits for the writer.
const QUEUED: usize = 32;

/// One frame of the input, numbered from 1.
#[derive(Debug, PartialEq, Eq)]
pub enum Frame {
    /// A line, without its newline (and a CR before it).
    Line(String),
    /// A line that is not UTF-8.
    NotUtf8,
    /// A line over the bound (reported once, when it passes the bound).
    TooLong,
}

/// The input's frames: [`Frame`]s with their line number. Never fails on content.
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

/// The answer to a frame that never reaches the SDK, as a line of JSON (`None` for a line).
pub fn answer(number: u64, frame: &Frame, max: usize) -> Option<String> {
    let (code, title, message) = match frame {
        Frame::Line(_) => return None,
        Frame::NotUtf8 => (
            -32700,
            "Parse error",
            format!("line {number} of the input is not UTF-8; it was skipped"),
        ),
        Frame::TooLong => (
            -32600,
            "Invalid Request",
            format!("line {number} of the input is longer than {max} bytes; it was skipped"),
        ),
    };
    Some(
        json!({
            "jsonrpc": "2.0",
            "id": null,
            "error": {
                "code": code,
                "message": title,
                "data": {"code": ErrorCode::Protocol.as_str(), "message": message},
            },
        })
        .to_string(),
    )
}

/// The lines the SDK reads from `incoming` (frames of at most `max` bytes), the sink it writes
/// its lines to, and the writer that puts both its lines and the answers to bad frames on
/// `outgoing`. The writer ends once the sink and the lines are dropped, having flushed
/// everything; it fails when `outgoing` does.
pub fn transport<R, W>(
    incoming: R,
    outgoing: W,
    max: usize,
) -> (
    impl Sink<String, Error = std::io::Error> + Send + 'static,
    impl Stream<Item = std::io::Result<String>> + Send + 'static,
    impl Future<Output = std::io::Result<()>> + Send + 'static,
)
where
    R: AsyncRead + Send + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    let (queue, mut queued) = mpsc::channel::<String>(QUEUED);
    let sink = queue.clone().sink_map_err(|_| gone());
    let lines = FramedRead::new(incoming, Frames::new(max)).filter_map(move |frame| {
        let mut queue = queue.clone();
        async move {
            let (number, frame) = match frame {
                Ok(frame) => frame,
                Err(error) => return Some(Err(error)),
            };
            let Some(answer) = answer(number, &frame, max) else {
                let Frame::Line(line) = frame else {
                    return None;
                };
                return Some(Ok(line));
            };
            tracing::debug!(line = number, ?frame, "answered a bad frame");
            // The writer is gone (stdout is closed): so is the client.
            queue.send(answer).await.err().map(|_| Err(gone()))
        }
    });
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
    (sink, lines, writer)
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
    fn a_line_at_the_bound_is_read_and_one_past_it_is_refused_without_its_newline() {
        assert_eq!(
            frames(4, &[b"abcd\nabcde", b"fgh"]),
            [(1, line("abcd")), (2, Frame::TooLong)]
        );
    }

    #[test]
    fn answers_are_json_rpc_errors_without_an_id() {
        let not_utf8: serde_json::Value =
            serde_json::from_str(&answer(3, &Frame::NotUtf8, 9).unwrap()).unwrap();
        assert_eq!(
            not_utf8,
            json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "Parse error",
                "data": {"code": "PROTOCOL", "message": "line 3 of the input is not UTF-8; it was skipped"}}})
        );
        let too_long: serde_json::Value =
            serde_json::from_str(&answer(4, &Frame::TooLong, 9).unwrap()).unwrap();
        assert_eq!(too_long["error"]["code"], -32600);
        assert_eq!(answer(5, &line("x"), 9), None);
    }
}
