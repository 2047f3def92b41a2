//! The stdin of `subagent acp` and `subagent mcp`: how each frames its client's lines, split
//! across reads at fuzzed places, with lines over a small bound, bytes that are not UTF-8, CRs
//! and a last line without its newline.

use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;

use futures::StreamExt;
use serde_json::Value;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// A reader that hands out its chunks one read at a time (a read never joins two chunks).
struct Chunked(VecDeque<Vec<u8>>);

impl AsyncRead for Chunked {
    fn poll_read(
        mut self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        if let Some(chunk) = self.0.front_mut() {
            let n = chunk.len().min(buf.remaining());
            buf.put_slice(&chunk[..n]);
            chunk.drain(..n);
            if chunk.is_empty() {
                self.0.pop_front();
            }
        }
        Poll::Ready(Ok(()))
    }
}

/// Stdout: what is written stays readable after the writer is gone.
#[derive(Clone, Default)]
struct Written(Arc<Mutex<Vec<u8>>>);

impl Written {
    fn bytes(&self) -> Vec<u8> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

impl AsyncWrite for Written {
    fn poll_write(
        self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .extend_from_slice(buf);
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

/// What the reference says one frame is.
#[derive(Debug, PartialEq, Eq)]
enum Expected {
    Line(String),
    NotUtf8,
    TooLong,
}

/// The frames of `input` with lines of at most `max` bytes, computed on the whole input at once
/// (the reference the chunked readers are held to): split at each newline; a line over `max`
/// bytes (a CR before its newline included) is too long; else a CR before its newline is
/// dropped and the rest is UTF-8 or not; the last piece, without a newline, is a frame unless
/// it is empty or a lone CR.
fn expected(input: &[u8], max: usize) -> Vec<Expected> {
    let mut pieces: Vec<&[u8]> = input.split(|&b| b == b'\n').collect();
    let tail = pieces.pop().unwrap_or_default();
    if !tail.is_empty() && tail != b"\r" {
        pieces.push(tail);
    }
    pieces
        .into_iter()
        .map(|piece| {
            if piece.len() > max {
                return Expected::TooLong;
            }
            let piece = piece.strip_suffix(b"\r").unwrap_or(piece);
            match std::str::from_utf8(piece) {
                Ok(text) => Expected::Line(text.to_owned()),
                Err(_) => Expected::NotUtf8,
            }
        })
        .collect()
}

/// How an input is read: the bound, the chunks, and the bytes. The first byte picks the bound
/// (its high bit: the real one; else 1 to 64 bytes, so short inputs have lines over it), the
/// second seeds the chunk sizes (1 to 32 bytes, or one chunk when zero).
struct Plan {
    max: usize,
    chunks: Vec<Vec<u8>>,
    input: Vec<u8>,
}

fn plan(data: &[u8], real: usize) -> Option<Plan> {
    let (&[bound, seed], input) = data.split_first_chunk::<2>()?;
    let max = if bound & 0x80 != 0 {
        real
    } else {
        1 + usize::from(bound & 0x3f)
    };
    let mut chunks = Vec::new();
    if seed == 0 {
        chunks.push(input.to_vec());
    } else {
        let mut state = u32::from(seed) | 0x100;
        let mut rest = input;
        while !rest.is_empty() {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            let size = (1 + state as usize % 32).min(rest.len());
            let (chunk, after) = rest.split_at(size);
            chunks.push(chunk.to_vec());
            rest = after;
        }
    }
    Some(Plan {
        max,
        chunks,
        input: input.to_vec(),
    })
}

fn runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        match tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
        {
            Ok(runtime) => runtime,
            Err(error) => panic!("no tokio runtime: {error}"),
        }
    })
}

/// Runs `future` on the shared runtime; one that does not end within 5 s is a finding.
fn run<T>(future: impl Future<Output = T>) -> T {
    runtime().block_on(async {
        match tokio::time::timeout(Duration::from_secs(5), future).await {
            Ok(value) => value,
            Err(_) => panic!("the reader did not end within 5 s"),
        }
    })
}

/// The line number an error's message names (`line N of the input …`), 0 when it names none.
fn said_line(answer: &Value) -> u64 {
    answer["error"]["data"]["message"]
        .as_str()
        .and_then(|message| message.strip_prefix("line "))
        .and_then(|rest| rest.split(' ').next())
        .and_then(|number| number.parse().ok())
        .unwrap_or(0)
}

/// The frames `decoder` reads from `chunks` fed one by one, then the end of input; they are
/// numbered from 1.
fn decoded<F, D>(mut decoder: D, chunks: &[Vec<u8>], kind: fn(F) -> Expected) -> Vec<Expected>
where
    D: tokio_util::codec::Decoder<Item = (u64, F), Error = std::io::Error>,
{
    let mut buf = tokio_util::bytes::BytesMut::new();
    let mut got = Vec::new();
    for chunk in chunks {
        buf.extend_from_slice(chunk);
        while let Ok(Some(frame)) = decoder.decode(&mut buf) {
            got.push(frame);
        }
    }
    while let Ok(Some(frame)) = decoder.decode_eof(&mut buf) {
        got.push(frame);
    }
    let numbers: Vec<u64> = got.iter().map(|(number, _)| *number).collect();
    let counted: Vec<u64> = (1..).take(got.len()).collect();
    assert_eq!(numbers, counted, "frames are numbered from 1");
    got.into_iter().map(|(_, frame)| kind(frame)).collect()
}

/// The lines written to stdout, each parsed: every one is a JSON-RPC error with `id: null`.
fn answers(written: &[u8]) -> Vec<Value> {
    let text = match std::str::from_utf8(written) {
        Ok(text) => text,
        Err(error) => panic!("stdout is not UTF-8: {error}"),
    };
    assert!(
        text.is_empty() || text.ends_with('\n'),
        "stdout ends inside a line"
    );
    text.lines()
        .map(|line| match serde_json::from_str::<Value>(line) {
            Ok(answer) => answer,
            Err(error) => panic!("stdout carries a line that is not JSON ({error}): {line}"),
        })
        .collect()
}

/// `subagent acp`'s reader (`subagent_acp_agent::frames`, doc-hidden): the frames of the chunked
/// input equal the reference's, numbered from 1; then through the transport the SDK gets, the
/// lines it is handed are exactly the reference's lines, and stdout carries exactly one error
/// (`-32700` not UTF-8, `-32600` too long, `id: null`) for each other frame, in order, each a
/// whole line.
pub fn acp_frames(data: &[u8]) {
    use subagent_acp_agent::frames::{Frame, Frames, transport};

    let Some(plan) = plan(data, subagent_acp_agent::MAX_FRAME) else {
        return;
    };
    let reference = expected(&plan.input, plan.max);
    let frames = decoded(Frames::new(plan.max), &plan.chunks, |frame| match frame {
        Frame::Line(line) => Expected::Line(line),
        Frame::NotUtf8 => Expected::NotUtf8,
        Frame::TooLong => Expected::TooLong,
    });
    assert_eq!(
        frames, reference,
        "the chunked frames differ from the whole input's"
    );
    // The transport.
    let written = Written::default();
    let (sink, lines, writer) = transport(Chunked(plan.chunks.into()), written.clone(), plan.max);
    drop(sink);
    let (lines, result) = run(async move { futures::join!(lines.collect::<Vec<_>>(), writer) });
    if let Err(error) = result {
        panic!("the writer failed: {error}");
    }
    let passed: Vec<String> = lines
        .into_iter()
        .map(|line| match line {
            Ok(line) => line,
            Err(error) => panic!("reading failed: {error}"),
        })
        .collect();
    let lines: Vec<String> = reference
        .iter()
        .filter_map(|frame| match frame {
            Expected::Line(line) => Some(line.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(passed, lines, "the SDK was handed other lines");
    // One error a bad frame, in order: its kind's code, `id: null`, its line number said.
    let bad: Vec<(Value, i64, u64)> = reference
        .iter()
        .zip(1..)
        .filter_map(|(frame, number)| match frame {
            Expected::Line(_) => None,
            Expected::NotUtf8 => Some((Value::Null, -32700, number)),
            Expected::TooLong => Some((Value::Null, -32600, number)),
        })
        .collect();
    assert_eq!(
        answers(&written.bytes())
            .iter()
            .map(|answer| (
                answer["id"].clone(),
                answer["error"]["code"].as_i64().unwrap_or(0),
                said_line(answer)
            ))
            .collect::<Vec<_>>(),
        bad,
        "stdout differs from one error a bad frame"
    );
}

/// `subagent mcp`'s reader (`subagent_mcp::frames`, doc-hidden): the frames of the chunked
/// input equal the reference's, numbered from 1; then through the transport rmcp gets, the
/// messages it is handed and the errors on stdout are exactly what `frames::read` makes of the
/// reference's frames, in order (a parse error for a line not UTF-8 or not JSON, an invalid
/// request for one too long or not a message, nothing for a blank line, a notification or an
/// answer rmcp does not read), each error a whole line.
pub fn mcp_frames(data: &[u8]) {
    use subagent_mcp::frames::{Frame, Frames, Read, read, transport};

    let Some(plan) = plan(data, subagent_mcp::MAX_FRAME) else {
        return;
    };
    let reference = expected(&plan.input, plan.max);
    let frames = decoded(Frames::new(plan.max), &plan.chunks, |frame| match frame {
        Frame::Line(line) => Expected::Line(line),
        Frame::NotUtf8 => Expected::NotUtf8,
        Frame::TooLong => Expected::TooLong,
    });
    assert_eq!(
        frames, reference,
        "the chunked frames differ from the whole input's"
    );
    let (mut messages, mut errors) = (Vec::new(), Vec::new());
    for (at, frame) in reference.into_iter().enumerate() {
        let frame = match frame {
            Expected::Line(line) => Frame::Line(line),
            Expected::NotUtf8 => Frame::NotUtf8,
            Expected::TooLong => Frame::TooLong,
        };
        let number = at as u64 + 1;
        // What the frame must come to, whatever `read` does: a bad frame is answered with its
        // code and `id: null`, a blank line is skipped, a notification is never answered.
        let must = match &frame {
            Frame::NotUtf8 => Some(-32700),
            Frame::TooLong => Some(-32600),
            Frame::Line(line) => {
                let text = line.strip_prefix('\u{feff}').unwrap_or(line);
                if text.trim().is_empty() {
                    Some(0)
                } else if serde_json::from_str::<Value>(text).is_err() {
                    Some(-32700)
                } else {
                    None
                }
            }
        };
        let notification = match &frame {
            Frame::Line(line) => {
                serde_json::from_str::<Value>(line.strip_prefix('\u{feff}').unwrap_or(line))
                    .is_ok_and(|value| value.get("method").is_some() && value.get("id").is_none())
            }
            _ => false,
        };
        match read(number, frame, plan.max) {
            Read::Message(message) => {
                assert_eq!(must, None, "frame {number} was read as a message");
                messages.push(serde_json::to_value(&*message).ok());
            }
            Read::Answer(answer) => {
                let answer = match serde_json::from_str::<Value>(&answer) {
                    Ok(answer) => answer,
                    Err(error) => panic!("an answer that is not JSON ({error}): {answer}"),
                };
                assert!(!notification, "a notification was answered: {answer}");
                if let Some(code) = must {
                    assert_eq!(
                        (
                            answer["id"].clone(),
                            answer["error"]["code"].as_i64(),
                            said_line(&answer)
                        ),
                        (Value::Null, Some(code), number),
                        "frame {number}"
                    );
                }
                errors.push(answer);
            }
            Read::Skip => assert!(
                matches!(must, None | Some(0)),
                "frame {number} was skipped without an answer"
            ),
        }
    }
    for error in &errors {
        let code = &error["error"]["code"];
        assert!(
            error["jsonrpc"] == "2.0" && (code == -32700 || code == -32600),
            "not a JSON-RPC parse error or invalid request: {error}"
        );
    }
    let written = Written::default();
    let (sink, stream, writer) = transport(Chunked(plan.chunks.into()), written.clone(), plan.max);
    drop(sink);
    let (read_messages, result) =
        run(async move { futures::join!(stream.collect::<Vec<_>>(), writer) });
    if let Err(error) = result {
        panic!("the writer failed: {error}");
    }
    let read_messages: Vec<Option<Value>> = read_messages
        .iter()
        .map(|message| serde_json::to_value(message).ok())
        .collect();
    assert_eq!(read_messages, messages, "rmcp was handed other messages");
    assert_eq!(
        answers(&written.bytes()),
        errors,
        "stdout differs from one error a bad frame"
    );
}
