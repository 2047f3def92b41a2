//! The byte cap on one answer: what its text, thinking and tool calls may add up to before the
//! stream is stopped. A server (or a model gone wrong) that streams without end would otherwise
//! grow the answer, and every copy a run keeps of it, until memory runs out.

use std::collections::{HashSet, VecDeque};

use futures::StreamExt;

use crate::error::{Error, Result};
use crate::types::{ModelEvent, ModelStream};

/// `stream` bounded to `max_bytes` of answer. The bytes counted are those of text and thinking
/// deltas, thinking signatures, and tool calls (id, name and argument fragments; the arguments
/// of a call that streamed none count as their JSON). The event that crosses the cap is cut to
/// fill it where it is text or thinking, else dropped; then [`Error::AnswerTooLarge`] ends the
/// stream and the inner stream is dropped at once (an HTTP response is closed: nothing more is
/// read).
pub fn limit_answer(stream: ModelStream, max_bytes: u64) -> ModelStream {
    let limiter = Limiter {
        inner: Some(stream),
        used: 0,
        max: max_bytes,
        streamed: HashSet::new(),
        pending: VecDeque::new(),
    };
    Box::pin(futures::stream::unfold(limiter, |mut l| async move {
        if let Some(item) = l.pending.pop_front() {
            return Some((item, l));
        }
        let item = l.inner.as_mut()?.next().await?;
        let item = match item {
            Ok(event) => l.admit(event),
            Err(error) => Err(error),
        };
        Some((item, l))
    }))
}

struct Limiter {
    inner: Option<ModelStream>,
    used: u64,
    max: u64,
    /// The tool calls whose arguments came in fragments (already counted).
    streamed: HashSet<usize>,
    pending: VecDeque<Result<ModelEvent>>,
}

impl Limiter {
    fn admit(&mut self, event: ModelEvent) -> Result<ModelEvent> {
        let size = self.size(&event);
        let room = self.max.saturating_sub(self.used);
        if size <= room {
            self.used += size;
            return Ok(event);
        }
        // Over the cap: nothing more is read.
        self.inner = None;
        self.used = self.max;
        let error = Error::AnswerTooLarge { limit: self.max };
        match cut(event, room) {
            Some(part) => {
                self.pending.push_back(Err(error));
                Ok(part)
            }
            None => Err(error),
        }
    }

    fn size(&mut self, event: &ModelEvent) -> u64 {
        let bytes = match event {
            ModelEvent::TextDelta { text } | ModelEvent::ThinkingDelta { text } => text.len(),
            ModelEvent::ThinkingSignature { signature } => signature.len(),
            ModelEvent::ToolCallStart { id, name, .. } => id.len() + name.len(),
            ModelEvent::ToolCallDelta { index, fragment } => {
                self.streamed.insert(*index);
                fragment.len()
            }
            ModelEvent::ToolCallEnd { index, input, .. } => {
                if self.streamed.remove(index) {
                    0
                } else {
                    let mut count = Count(0);
                    // Writing to a counter cannot fail.
                    let _ = serde_json::to_writer(&mut count, input);
                    count.0
                }
            }
            _ => 0,
        };
        bytes as u64
    }
}

/// The part of a text or thinking delta that fits in `room` bytes (cut on a character
/// boundary), if any.
fn cut(event: ModelEvent, room: u64) -> Option<ModelEvent> {
    let fit = |text: String| {
        let end = text.floor_char_boundary(usize::try_from(room).unwrap_or(usize::MAX));
        (end > 0).then(|| text[..end].to_owned())
    };
    match event {
        ModelEvent::TextDelta { text } => fit(text).map(|text| ModelEvent::TextDelta { text }),
        ModelEvent::ThinkingDelta { text } => {
            fit(text).map(|text| ModelEvent::ThinkingDelta { text })
        }
        _ => None,
    }
}

/// Counts the bytes written to it.
struct Count(usize);

impl std::io::Write for Count {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len();
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
