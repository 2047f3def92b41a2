//! A bounded, cancel-safe line reader and the stderr tail.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncRead, AsyncReadExt};

use crate::{Error, Result};

/// Reads `\n`-terminated lines, refusing any longer than `limit` bytes (without the newline).
/// `next_line` is cancel-safe: a partial line survives a dropped future.
#[derive(Debug)]
pub(crate) struct LineReader<R> {
    inner: R,
    partial: Vec<u8>,
    limit: usize,
    done: bool,
}

impl<R: AsyncBufRead + Unpin> LineReader<R> {
    pub(crate) fn new(inner: R, limit: usize) -> Self {
        Self {
            inner,
            partial: Vec::new(),
            limit,
            done: false,
        }
    }

    /// The next line without its `\n` (and `\r`), `None` at end of input. After an error or the
    /// end, always `None`.
    pub(crate) async fn next_line(&mut self) -> Result<Option<Vec<u8>>> {
        while !self.done {
            let available = match self.inner.fill_buf().await {
                Ok(available) => available,
                Err(err) => {
                    self.done = true;
                    return Err(Error::Io(err));
                }
            };
            if available.is_empty() {
                self.done = true;
                if self.partial.is_empty() {
                    return Ok(None);
                }
                return Ok(Some(std::mem::take(&mut self.partial)));
            }
            let (chunk, found) = match available.iter().position(|&b| b == b'\n') {
                Some(at) => (at, true),
                None => (available.len(), false),
            };
            if self.partial.len() + chunk > self.limit {
                self.done = true;
                self.partial = Vec::new();
                return Err(Error::LineTooLong { limit: self.limit });
            }
            self.partial.extend_from_slice(&available[..chunk]);
            self.inner.consume(chunk + usize::from(found));
            if found {
                let mut line = std::mem::take(&mut self.partial);
                if line.last() == Some(&b'\r') {
                    line.pop();
                }
                return Ok(Some(line));
            }
        }
        Ok(None)
    }

    /// Whether the end (or an error) was reached.
    pub(crate) fn is_done(&self) -> bool {
        self.done
    }

    /// Stops reading before the end: what is still unread is dropped, a partial line already
    /// read is returned (as at the end of input).
    pub(crate) fn abandon(&mut self) -> Option<Vec<u8>> {
        self.done = true;
        let partial = std::mem::take(&mut self.partial);
        (!partial.is_empty()).then_some(partial)
    }

    /// Reads the rest into `head` (a partial line first), to the end. Cancel-safe: what was read
    /// is in `head` when the future is dropped.
    pub(crate) async fn read_into(&mut self, head: &Head) {
        if !self.partial.is_empty() {
            head.push(&std::mem::take(&mut self.partial));
        }
        while !self.done {
            match self.inner.fill_buf().await {
                Ok([]) | Err(_) => self.done = true,
                Ok(available) => {
                    let n = available.len();
                    head.push(available);
                    self.inner.consume(n);
                }
            }
        }
    }

    /// Reads and throws away the rest, so a child blocked on a full pipe can go on.
    pub(crate) async fn discard(&mut self) {
        while !self.done {
            match self.inner.fill_buf().await {
                Ok([]) | Err(_) => self.done = true,
                Ok(available) => {
                    let n = available.len();
                    self.inner.consume(n);
                }
            }
        }
    }
}

/// The last `capacity` bytes a reader produced, shared with the task that fills it.
#[derive(Clone, Debug, Default)]
pub(crate) struct Tail {
    bytes: Arc<Mutex<VecDeque<u8>>>,
    capacity: usize,
}

impl Tail {
    pub(crate) fn new(capacity: usize) -> Self {
        Self {
            bytes: Arc::new(Mutex::new(VecDeque::with_capacity(capacity.min(64 * 1024)))),
            capacity,
        }
    }

    fn push(&self, chunk: &[u8]) {
        let Ok(mut bytes) = self.bytes.lock() else {
            return;
        };
        let keep = &chunk[chunk.len().saturating_sub(self.capacity)..];
        let overflow = (bytes.len() + keep.len()).saturating_sub(self.capacity);
        bytes.drain(..overflow);
        bytes.extend(keep);
    }

    /// The tail as text (lossy UTF-8; a character cut at the front is dropped).
    pub(crate) fn text(&self) -> String {
        let Ok(bytes) = self.bytes.lock() else {
            return String::new();
        };
        let (front, back) = bytes.as_slices();
        let mut all = Vec::with_capacity(bytes.len());
        all.extend_from_slice(front);
        all.extend_from_slice(back);
        let text = String::from_utf8_lossy(&all);
        text.trim_start_matches('\u{fffd}').to_owned()
    }

    /// Copies everything `reader` yields into the tail and into `head` until its end.
    pub(crate) async fn fill_from<R: AsyncRead + Unpin>(self, mut reader: R, head: Head) {
        let mut chunk = vec![0_u8; 8192];
        loop {
            match reader.read(&mut chunk).await {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    self.push(&chunk[..n]);
                    head.push(&chunk[..n]);
                }
            }
        }
    }
}

/// The first `capacity` bytes a reader produced and whether more came, shared with the task
/// that fills it.
#[derive(Clone, Debug, Default)]
pub(crate) struct Head {
    inner: Arc<Mutex<(Vec<u8>, bool)>>,
    capacity: usize,
}

impl Head {
    pub(crate) fn new(capacity: usize) -> Self {
        Self {
            inner: Arc::default(),
            capacity,
        }
    }

    pub(crate) fn push(&self, chunk: &[u8]) {
        let Ok(mut inner) = self.inner.lock() else {
            return;
        };
        let (bytes, truncated) = &mut *inner;
        let room = self.capacity.saturating_sub(bytes.len());
        if chunk.len() > room {
            *truncated = true;
        }
        bytes.extend_from_slice(&chunk[..chunk.len().min(room)]);
    }

    /// The bytes kept and whether more came.
    pub(crate) fn take(&self) -> (Vec<u8>, bool) {
        match self.inner.lock() {
            Ok(mut inner) => std::mem::take(&mut *inner),
            Err(_) => (Vec::new(), false),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn lines_and_bounds() {
        let input: &[u8] = b"one\r\ntwo\n\nlast";
        let mut reader = LineReader::new(input, 16);
        let mut lines = Vec::new();
        while let Some(line) = reader.next_line().await.ok().flatten() {
            lines.push(String::from_utf8_lossy(&line).into_owned());
        }
        assert_eq!(lines, ["one", "two", "", "last"]);

        let long = [b'a'; 100];
        let mut reader = LineReader::new(&long[..], 16);
        assert!(matches!(
            reader.next_line().await,
            Err(Error::LineTooLong { limit: 16 })
        ));
        assert!(reader.next_line().await.ok().flatten().is_none());
    }

    #[test]
    fn head_keeps_the_start_and_notes_the_rest() {
        let head = Head::new(8);
        head.push(b"hello ");
        assert_eq!(head.take(), (b"hello ".to_vec(), false));
        head.push(b"hello ");
        head.push(b"world!");
        assert_eq!(head.take(), (b"hello wo".to_vec(), true));
    }

    #[test]
    fn tail_keeps_the_end() {
        let tail = Tail::new(8);
        tail.push(b"hello ");
        tail.push(b"world!");
        assert_eq!(tail.text(), "o world!");
        tail.push(b"0123456789abc");
        assert_eq!(tail.text(), "56789abc");
    }
}
