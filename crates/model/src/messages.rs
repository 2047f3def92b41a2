//! [`Messages`]: a conversation shared between turns, requests and forks without copying it.
//!
//! A [`crate::ModelRequest`] carries the whole conversation on every turn, and a fork starts
//! from its parent's. With an owned `Vec<Message>` each turn (and each fork) deep-copied the
//! history. `Messages` is a persistent list instead: a view `(head, len)` over immutable chunks
//! that continue their parent chunk. Cloning is two words and one reference count, whatever the
//! length; `push` extends the head chunk in place when this view is its only owner (the usual
//! case: the previous request was dropped when its call ended) and otherwise starts a new chunk
//! on top of the shared one, so one view's pushes never show in another. No message is ever
//! copied, except when a long chain of divergences is flattened (every [`MAX_CHAIN`] chunks).
//!
//! [`Conversation`] is the read access scenario selection needs (from the end backwards),
//! implemented for slices, vectors and `Messages` alike.

use std::sync::{Arc, OnceLock};

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use subagent_session::Message;

use bytes::Bytes;

use crate::body::BodyWriter;
use crate::config::ModelKind;
use crate::error::Result;

/// Chunks in a chain before a push flattens it into one (bounds the walk of [`Messages::get`]).
pub const MAX_CHAIN: usize = 64;

#[derive(Debug)]
struct Chunk {
    /// The chunk this one continues; its first `base` messages are ours.
    parent: Option<Arc<Chunk>>,
    /// Global index of `items[0]`.
    base: usize,
    /// Chunks in the chain, this one included.
    chain: usize,
    items: Vec<Message>,
    /// Each item's wire encoding, filled by the first request that sends it (see
    /// [`Messages::write_encoded`]); parallel to `items`.
    encoded: Vec<OnceLock<Encoded>>,
}

/// One message's wire encoding for one protocol.
#[derive(Clone, Debug)]
struct Encoded {
    kind: ModelKind,
    bytes: Bytes,
}

impl Chunk {
    fn new(parent: Option<Arc<Chunk>>, base: usize, chain: usize, items: Vec<Message>) -> Self {
        let encoded = items.iter().map(|_| OnceLock::new()).collect();
        Self {
            parent,
            base,
            chain,
            items,
            encoded,
        }
    }
}

/// A conversation as a shared, append-only list of messages: `clone()` is O(1) and shares the
/// history; `push` never changes what another clone sees.
#[derive(Clone, Default)]
pub struct Messages {
    head: Option<Arc<Chunk>>,
    len: usize,
}

impl Messages {
    /// An empty conversation.
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of messages.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there is no message.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Appends a message: in place when this view owns its head chunk alone, else on a new chunk
    /// sharing everything before it.
    pub fn push(&mut self, message: Message) {
        if let Some(head) = self.head.as_mut()
            && let Some(chunk) = Arc::get_mut(head)
            && chunk.base + chunk.items.len() == self.len
        {
            chunk.items.push(message);
            chunk.encoded.push(OnceLock::new());
            self.len += 1;
            return;
        }
        let chain = self.head.as_ref().map_or(0, |h| h.chain) + 1;
        let chunk = if chain > MAX_CHAIN {
            let mut items = Vec::with_capacity(self.len + 8);
            let mut encoded = Vec::with_capacity(self.len + 8);
            for (slice, cache) in self.cached_slices() {
                items.extend_from_slice(slice);
                encoded.extend_from_slice(cache);
            }
            items.push(message);
            encoded.push(OnceLock::new());
            Chunk {
                parent: None,
                base: 0,
                chain: 1,
                items,
                encoded,
            }
        } else {
            let mut items = Vec::with_capacity(4);
            items.push(message);
            Chunk::new(self.head.take(), self.len, chain, items)
        };
        self.head = Some(Arc::new(chunk));
        self.len += 1;
    }

    /// The message at `index` (O(chunks walked back), usually 1).
    pub fn get(&self, index: usize) -> Option<&Message> {
        if index >= self.len {
            return None;
        }
        let mut chunk = self.head.as_deref()?;
        while index < chunk.base {
            chunk = chunk.parent.as_deref()?;
        }
        chunk.items.get(index - chunk.base)
    }

    /// The first message.
    pub fn first(&self) -> Option<&Message> {
        self.get(0)
    }

    /// The last message.
    pub fn last(&self) -> Option<&Message> {
        self.len.checked_sub(1).and_then(|i| self.get(i))
    }

    /// The slices of the chain, oldest first.
    fn slices(&self) -> Vec<&[Message]> {
        self.cached_slices()
            .into_iter()
            .map(|(items, _)| items)
            .collect()
    }

    /// The slices of the chain with their encoding caches, oldest first.
    fn cached_slices(&self) -> Vec<(&[Message], &[OnceLock<Encoded>])> {
        let mut out = Vec::with_capacity(self.head.as_ref().map_or(0, |h| h.chain));
        let mut end = self.len;
        let mut next = self.head.as_deref();
        while let Some(chunk) = next {
            let n = end - chunk.base;
            out.push((&chunk.items[..n], &chunk.encoded[..n]));
            end = chunk.base;
            next = chunk.parent.as_deref();
        }
        out.reverse();
        out
    }

    /// The messages, oldest first.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &Message> + '_ {
        self.slices().into_iter().flatten()
    }

    /// Writes the wire encoding of the first `end` messages to `out` as the inside of a JSON
    /// array: `encode` writes one message's items (comma-separated, possibly none), and the
    /// non-empty ones are joined by commas. `first` says whether nothing precedes them in the
    /// array; the result says whether that is still so.
    ///
    /// Each message's encoding is kept beside it, in the chunk every clone and fork shares, the
    /// first time `kind`'s encoder sends it, so a conversation's later requests (and its forks'
    /// first ones) reuse those bytes (copied when small, shared when large) instead of encoding
    /// the whole history again. A message is immutable once pushed, so a kept encoding never
    /// goes stale; one encoded for another protocol is not kept over (that message is encoded
    /// afresh each time for the second).
    pub(crate) fn write_encoded(
        &self,
        kind: ModelKind,
        end: usize,
        out: &mut BodyWriter,
        mut first: bool,
        encode: fn(&Message, &mut Vec<u8>) -> Result<()>,
    ) -> Result<bool> {
        let mut left = end.min(self.len);
        let mut scratch = Vec::new();
        for (items, caches) in self.cached_slices() {
            if left == 0 {
                break;
            }
            let n = items.len().min(left);
            left -= n;
            for (message, cache) in items[..n].iter().zip(&caches[..n]) {
                let kept = match cache.get() {
                    Some(kept) => Some(kept),
                    None => {
                        let mut fresh = Vec::new();
                        encode(message, &mut fresh)?;
                        Some(cache.get_or_init(|| Encoded {
                            kind,
                            bytes: fresh.into(),
                        }))
                    }
                };
                let bytes = match kept {
                    Some(kept) if kept.kind == kind => &kept.bytes,
                    _ => {
                        scratch.clear();
                        encode(message, &mut scratch)?;
                        if scratch.is_empty() {
                            continue;
                        }
                        if !first {
                            out.write(b",");
                        }
                        out.write(&scratch);
                        first = false;
                        continue;
                    }
                };
                if bytes.is_empty() {
                    continue;
                }
                if !first {
                    out.write(b",");
                }
                out.write_shared(bytes);
                first = false;
            }
        }
        Ok(first)
    }

    /// The messages, newest first (no allocation).
    pub fn iter_rev(&self) -> RevIter<'_> {
        RevIter {
            chunk: self.head.as_deref(),
            end: self.len,
        }
    }

    /// The messages as an owned vector (a deep copy: for callers that need one).
    pub fn to_vec(&self) -> Vec<Message> {
        self.iter().cloned().collect()
    }

    /// The first `len` messages (all of them when `len` is larger), sharing them: O(chunks
    /// walked back), no message copied. A push onto the prefix never shows in `self`.
    pub fn prefix(&self, len: usize) -> Self {
        let len = len.min(self.len);
        if len == 0 {
            return Self::new();
        }
        // The head of the prefix is the chunk holding its last message.
        let mut head = self.head.as_ref();
        while let Some(chunk) = head
            && chunk.base >= len
        {
            head = chunk.parent.as_ref();
        }
        Self {
            head: head.cloned(),
            len,
        }
    }

    /// Whether message `index` of both lists is the very same allocation (a shared history,
    /// not a copy). False when either is shorter.
    pub fn shares(&self, other: &Self, index: usize) -> bool {
        match (self.get(index), other.get(index)) {
            (Some(a), Some(b)) => std::ptr::eq(a, b),
            _ => false,
        }
    }
}

/// Iterator over [`Messages`] from the newest to the oldest.
#[derive(Debug)]
pub struct RevIter<'a> {
    chunk: Option<&'a Chunk>,
    end: usize,
}

impl<'a> Iterator for RevIter<'a> {
    type Item = &'a Message;

    fn next(&mut self) -> Option<&'a Message> {
        loop {
            let chunk = self.chunk?;
            if self.end > chunk.base {
                self.end -= 1;
                return chunk.items.get(self.end - chunk.base);
            }
            self.chunk = chunk.parent.as_deref();
        }
    }
}

impl std::fmt::Debug for Messages {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl PartialEq for Messages {
    fn eq(&self, other: &Self) -> bool {
        self.len == other.len && self.iter().eq(other.iter())
    }
}

impl From<Vec<Message>> for Messages {
    fn from(items: Vec<Message>) -> Self {
        if items.is_empty() {
            return Self::new();
        }
        let len = items.len();
        Self {
            head: Some(Arc::new(Chunk::new(None, 0, 1, items))),
            len,
        }
    }
}

impl FromIterator<Message> for Messages {
    fn from_iter<I: IntoIterator<Item = Message>>(iter: I) -> Self {
        Self::from(iter.into_iter().collect::<Vec<_>>())
    }
}

impl Extend<Message> for Messages {
    fn extend<I: IntoIterator<Item = Message>>(&mut self, iter: I) {
        for message in iter {
            self.push(message);
        }
    }
}

impl<'a> IntoIterator for &'a Messages {
    type Item = &'a Message;
    type IntoIter = std::iter::Flatten<std::vec::IntoIter<&'a [Message]>>;

    fn into_iter(self) -> Self::IntoIter {
        self.slices().into_iter().flatten()
    }
}

impl Serialize for Messages {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.iter())
    }
}

impl<'de> Deserialize<'de> for Messages {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Vec::<Message>::deserialize(deserializer).map(Self::from)
    }
}

/// Read access to a conversation from its end, for a slice, a vector or [`Messages`] alike.
pub trait Conversation {
    /// Number of messages.
    fn len(&self) -> usize;

    /// Whether there is no message.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The messages from the newest to the oldest.
    fn newest_first(&self) -> impl Iterator<Item = &Message>;
}

/// The text of the newest tool result in `messages`, if any.
pub(crate) fn newest_tool_result<C: Conversation + ?Sized>(messages: &C) -> Option<String> {
    messages.newest_first().find_map(|message| {
        message.content.iter().rev().find_map(|block| match block {
            subagent_session::ContentBlock::ToolResult { content, .. } => Some(content.to_text()),
            _ => None,
        })
    })
}

impl Conversation for [Message] {
    fn len(&self) -> usize {
        <[Message]>::len(self)
    }

    fn newest_first(&self) -> impl Iterator<Item = &Message> {
        self.iter().rev()
    }
}

impl<const N: usize> Conversation for [Message; N] {
    fn len(&self) -> usize {
        N
    }

    fn newest_first(&self) -> impl Iterator<Item = &Message> {
        self.iter().rev()
    }
}

impl Conversation for Vec<Message> {
    fn len(&self) -> usize {
        Vec::len(self)
    }

    fn newest_first(&self) -> impl Iterator<Item = &Message> {
        self.iter().rev()
    }
}

impl Conversation for Messages {
    fn len(&self) -> usize {
        self.len
    }

    fn newest_first(&self) -> impl Iterator<Item = &Message> {
        self.iter_rev()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(messages: &Messages) -> Vec<String> {
        messages.iter().map(Message::text).collect()
    }

    #[test]
    fn clones_share_and_diverge() {
        let mut a: Messages = ["0", "1"].into_iter().map(Message::user).collect();
        let mut b = a.clone();
        b.push(Message::user("b2"));
        a.push(Message::user("a2"));
        a.push(Message::user("a3"));
        assert_eq!(texts(&a), ["0", "1", "a2", "a3"]);
        assert_eq!(texts(&b), ["0", "1", "b2"]);
        assert!(a.shares(&b, 0) && a.shares(&b, 1));
        assert!(!a.shares(&b, 2));
        let rev: Vec<String> = a.iter_rev().map(Message::text).collect();
        assert_eq!(rev, ["a3", "a2", "1", "0"]);
        assert_eq!(a.last().map(Message::text).as_deref(), Some("a3"));
        assert_eq!(b.get(2).map(Message::text).as_deref(), Some("b2"));
        assert_eq!(b.get(3), None);
        assert_eq!(a, Messages::from(a.to_vec()));
    }

    #[test]
    fn a_prefix_shares_and_diverges() {
        let mut a: Messages = ["0", "1"].into_iter().map(Message::user).collect();
        let held = a.clone();
        a.push(Message::user("2"));
        a.push(Message::user("3"));
        drop(held);
        // `a` is now two chunks: [0, 1] and [2, 3].
        for len in 0..=5 {
            let prefix = a.prefix(len);
            let expected: Vec<String> = (0..len.min(4)).map(|i| i.to_string()).collect();
            assert_eq!(texts(&prefix), expected, "prefix {len}");
            assert_eq!(prefix.len(), len.min(4));
            let rev: Vec<String> = prefix.iter_rev().map(Message::text).collect();
            assert_eq!(rev, expected.iter().rev().cloned().collect::<Vec<_>>());
            for i in 0..prefix.len() {
                assert!(prefix.shares(&a, i));
            }
        }
        let mut short = a.prefix(3);
        short.push(Message::user("x"));
        assert_eq!(texts(&short), ["0", "1", "2", "x"]);
        assert_eq!(texts(&a), ["0", "1", "2", "3"]);
        let mut two = a.prefix(2);
        two.push(Message::user("y"));
        assert_eq!(texts(&two), ["0", "1", "y"]);
        assert_eq!(texts(&a), ["0", "1", "2", "3"]);
    }

    #[test]
    fn a_sole_owner_appends_in_place() {
        let mut a = Messages::new();
        for i in 0..10 {
            let request = a.clone();
            drop(request);
            a.push(Message::user(i.to_string()));
        }
        assert_eq!(a.head.as_ref().map(|h| h.chain), Some(1));
    }

    #[test]
    fn long_chains_are_flattened() {
        let mut a = Messages::new();
        let mut held = Vec::new();
        for i in 0..(MAX_CHAIN * 2 + 3) {
            held.push(a.clone());
            a.push(Message::user(i.to_string()));
        }
        assert!(a.head.as_ref().is_some_and(|h| h.chain <= MAX_CHAIN));
        assert_eq!(a.len(), MAX_CHAIN * 2 + 3);
        let expected: Vec<String> = (0..MAX_CHAIN * 2 + 3).map(|i| i.to_string()).collect();
        assert_eq!(texts(&a), expected);
        for (i, view) in held.iter().enumerate() {
            assert_eq!(view.len(), i);
        }
    }

    #[test]
    fn serializes_as_a_plain_array() {
        let mut a = Messages::from(vec![Message::user("x")]);
        let b = a.clone();
        a.push(Message::assistant("y"));
        let json = serde_json::to_value(&a).unwrap_or_default();
        let plain = serde_json::to_value(a.to_vec()).unwrap_or_default();
        assert_eq!(json, plain);
        let back: Messages = serde_json::from_value(json).unwrap_or_default();
        assert_eq!(back, a);
        assert_eq!(b.len(), 1);
    }

    static ENCODED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

    fn count_and_write_text(message: &Message, out: &mut Vec<u8>) -> Result<()> {
        ENCODED.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        out.extend_from_slice(message.text().as_bytes());
        Ok(())
    }

    fn written(messages: &Messages, kind: ModelKind) -> (String, usize) {
        let before = ENCODED.load(std::sync::atomic::Ordering::SeqCst);
        let mut out = BodyWriter::new();
        let first =
            messages.write_encoded(kind, messages.len(), &mut out, true, count_and_write_text);
        assert_eq!(first.ok(), Some(messages.is_empty()));
        let calls = ENCODED.load(std::sync::atomic::Ordering::SeqCst) - before;
        (
            String::from_utf8(out.finish().to_vec()).unwrap_or_default(),
            calls,
        )
    }

    #[test]
    fn a_message_is_encoded_once_for_every_view_that_shares_it() {
        let mut parent: Messages = ["a", "b"].into_iter().map(Message::user).collect();
        assert_eq!(written(&parent, ModelKind::Anthropic), ("a,b".into(), 2));
        assert_eq!(written(&parent, ModelKind::Anthropic), ("a,b".into(), 0));
        let mut fork = parent.clone();
        fork.push(Message::user("f"));
        parent.push(Message::user("p"));
        assert_eq!(written(&fork, ModelKind::Anthropic), ("a,b,f".into(), 1));
        assert_eq!(written(&parent, ModelKind::Anthropic), ("a,b,p".into(), 1));
        // Another protocol's encoding is not kept over the first one's.
        assert_eq!(written(&parent, ModelKind::OpenaiChat), ("a,b,p".into(), 3));
        assert_eq!(written(&parent, ModelKind::Anthropic), ("a,b,p".into(), 0));
        // A message that encodes to nothing adds no comma.
        parent.push(Message::user(""));
        parent.push(Message::user("q"));
        assert_eq!(
            written(&parent, ModelKind::Anthropic),
            ("a,b,p,q".into(), 2)
        );
        // Flattening a long chain keeps what was encoded.
        let mut long = parent.clone();
        let mut held = Vec::new();
        for i in 0..=MAX_CHAIN {
            held.push(long.clone());
            long.push(Message::user(i.to_string()));
        }
        assert_eq!(written(&long, ModelKind::Anthropic).1, MAX_CHAIN + 1);
        long.push(Message::user("z"));
        assert_eq!(written(&long, ModelKind::Anthropic).1, 1);
    }
}
