//! [`RequestBody`]: a request's JSON body as a list of byte pieces, sent without being joined.
//!
//! A long conversation's body is megabytes. Built as one `Vec<u8>` it would be copied from the
//! kept per-message encodings into one fresh allocation on every request (growing, and touching
//! fresh pages: on a virtual machine the kernel's page clearing alone cost several
//! milliseconds at 10,000 messages). Instead the body is small pieces of at most [`PIECE`]
//! bytes filled by copying small encodings, and large encodings shared as they are (an
//! `Arc`-counted [`Bytes`], no copy). The HTTP client streams the pieces with an exact length,
//! so the wire is the same `content-length` request as before.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::{Bytes, BytesMut};
use http_body::{Frame, SizeHint};

/// The size of a piece that small encodings are copied into.
pub const PIECE: usize = 64 * 1024;

/// An encoding at least this large is sent as its own piece instead of being copied.
const SHARE_FROM: usize = 4 * 1024;

/// A request body: its pieces, in order, and their total length.
#[derive(Clone, Debug, Default)]
pub struct RequestBody {
    pieces: Vec<Bytes>,
    len: usize,
}

impl RequestBody {
    /// The body's length in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the body is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// How many pieces it is sent as.
    pub fn pieces(&self) -> usize {
        self.pieces.len()
    }

    /// The body joined into one vector (tests, logs; the client never joins it).
    pub fn to_vec(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.len);
        for piece in &self.pieces {
            out.extend_from_slice(piece);
        }
        out
    }

    /// The body for the HTTP client: its pieces streamed with an exact size (so a
    /// `content-length` request, not a chunked one). Cloning the pieces is a reference count
    /// each, so every retry sends the same bytes.
    pub(crate) fn to_http(&self) -> reqwest::Body {
        reqwest::Body::wrap(Pieces {
            pieces: self.pieces.iter().cloned().collect(),
            left: self.len as u64,
        })
    }
}

impl From<Vec<u8>> for RequestBody {
    fn from(bytes: Vec<u8>) -> Self {
        let len = bytes.len();
        Self {
            pieces: if len == 0 {
                Vec::new()
            } else {
                vec![bytes.into()]
            },
            len,
        }
    }
}

/// Builds a [`RequestBody`]: small writes are copied into the current piece, large shared
/// encodings become pieces of their own.
#[derive(Debug, Default)]
pub struct BodyWriter {
    done: RequestBody,
    current: BytesMut,
}

impl BodyWriter {
    /// An empty body.
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends a copy of `bytes`.
    pub fn write(&mut self, bytes: &[u8]) {
        if self.current.capacity() - self.current.len() < bytes.len() {
            self.cut();
            self.current.reserve(bytes.len().max(PIECE));
        }
        self.current.extend_from_slice(bytes);
    }

    /// Appends `bytes`, shared when it is large, else copied.
    pub fn write_shared(&mut self, bytes: &Bytes) {
        if bytes.len() < SHARE_FROM {
            self.write(bytes);
            return;
        }
        self.cut();
        self.done.len += bytes.len();
        self.done.pieces.push(bytes.clone());
    }

    /// The last byte written, if any.
    pub fn last(&self) -> Option<u8> {
        self.current
            .last()
            .or_else(|| self.done.pieces.last().and_then(|p| p.last()))
            .copied()
    }

    /// Ends the current piece.
    fn cut(&mut self) {
        if !self.current.is_empty() {
            let piece = self.current.split().freeze();
            self.done.len += piece.len();
            self.done.pieces.push(piece);
        }
    }

    /// The body written.
    pub fn finish(mut self) -> RequestBody {
        self.cut();
        self.done
    }
}

impl std::io::Write for BodyWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        BodyWriter::write(self, buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The pieces as an HTTP body of exact size.
struct Pieces {
    pieces: VecDeque<Bytes>,
    left: u64,
}

impl http_body::Body for Pieces {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        let next = self.pieces.pop_front();
        if let Some(piece) = &next {
            self.left = self.left.saturating_sub(piece.len() as u64);
        }
        Poll::Ready(next.map(|piece| Ok(Frame::data(piece))))
    }

    fn is_end_stream(&self) -> bool {
        self.pieces.is_empty()
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::with_exact(self.left)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_writes_share_pieces_and_large_ones_are_not_copied() {
        let mut writer = BodyWriter::new();
        writer.write(b"[");
        let large = Bytes::from(vec![b'x'; SHARE_FROM]);
        for _ in 0..3 {
            writer.write_shared(&Bytes::from_static(b"ab"));
            writer.write(b",");
        }
        writer.write_shared(&large);
        assert_eq!(writer.last(), Some(b'x'));
        writer.write(b"]");
        let body = writer.finish();
        assert_eq!(body.pieces(), 3);
        assert_eq!(body.len(), 1 + 9 + SHARE_FROM + 1);
        let joined = body.to_vec();
        assert_eq!(&joined[..10], b"[ab,ab,ab,");
        assert_eq!(joined.len(), body.len());
        // The large piece is the very same allocation.
        assert_eq!(body.pieces[1].as_ptr(), large.as_ptr());
    }

    #[test]
    fn pieces_are_cut_at_the_piece_size() {
        let mut writer = BodyWriter::new();
        let chunk = vec![b'y'; 1000];
        for _ in 0..200 {
            writer.write(&chunk);
        }
        let body = writer.finish();
        assert_eq!(body.len(), 200_000);
        assert!(body.pieces.iter().all(|p| p.len() <= PIECE));
        assert_eq!(body.pieces(), 200_000usize.div_ceil(PIECE / 1000 * 1000));
    }
}
