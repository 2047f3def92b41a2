//! The append-only event log with O(1) shared prefixes.
//!
//! A log is a view `(segment, len)`. A segment is an append-only vector of events that starts at
//! global index `base` and continues the history of its parent segment (the first `base` events).
//! Cloning a log copies the view: two `Arc` pointer bumps, whatever the history's length.
//!
//! Appending to a log extends its segment in place when the log is at the segment's tip; when
//! another view already extended the segment past this log's end (the histories diverged), the
//! log starts a new segment whose parent is the old one. Nothing is ever removed from or changed
//! in a segment, so every view keeps seeing exactly its own `len` events, and one log's appends
//! never show in another.
//!
//! Reading event `i` walks from the newest segment to the one holding `i`: the walk is as long as
//! the number of divergences in the log's ancestry (one per fork that was appended to), not the
//! number of events.

use std::sync::{Arc, PoisonError, RwLock};

use crate::{Message, SessionEvent};

#[derive(Debug)]
struct Segment {
    /// The segment this one continues, if any; its first `base` events are ours.
    parent: Option<Arc<Segment>>,
    /// Global index of `events[0]`.
    base: usize,
    events: RwLock<Vec<Arc<SessionEvent>>>,
}

impl Segment {
    fn new(parent: Option<Arc<Segment>>, base: usize) -> Arc<Self> {
        Arc::new(Self {
            parent,
            base,
            events: RwLock::new(Vec::new()),
        })
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, Vec<Arc<SessionEvent>>> {
        self.events.read().unwrap_or_else(PoisonError::into_inner)
    }
}

/// An append-only log of [`SessionEvent`]s where an event's `seq` is its index.
///
/// `clone()` is the fork operation: O(1), sharing the whole history; the two logs then grow
/// independently.
#[derive(Clone, Debug)]
pub struct EventLog {
    segment: Arc<Segment>,
    len: usize,
}

impl Default for EventLog {
    fn default() -> Self {
        Self::new()
    }
}

impl EventLog {
    /// An empty log.
    pub fn new() -> Self {
        Self {
            segment: Segment::new(None, 0),
            len: 0,
        }
    }

    /// A log holding these events, in order.
    pub fn from_events(events: impl IntoIterator<Item = SessionEvent>) -> Self {
        let mut log = Self::new();
        log.extend(events);
        log
    }

    /// Number of events.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the log has no event.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// A log sharing this one's history: the same as `clone()`, named for what it is used for.
    pub fn fork(&self) -> Self {
        self.clone()
    }

    /// Appends an event and returns its `seq` (its index).
    pub fn append(&mut self, event: SessionEvent) -> usize {
        self.append_shared(Arc::new(event))
    }

    /// Appends an already shared event and returns its `seq`.
    pub fn append_shared(&mut self, event: Arc<SessionEvent>) -> usize {
        let seq = self.len;
        {
            let mut events = self
                .segment
                .events
                .write()
                .unwrap_or_else(PoisonError::into_inner);
            if self.segment.base + events.len() == seq {
                events.push(event);
                self.len += 1;
                return seq;
            }
        }
        // Another view extended this segment past our end: branch off.
        let segment = Segment::new(Some(Arc::clone(&self.segment)), seq);
        segment
            .events
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .push(event);
        self.segment = segment;
        self.len += 1;
        seq
    }

    /// Appends every event, in order.
    pub fn extend(&mut self, events: impl IntoIterator<Item = SessionEvent>) {
        for event in events {
            self.append(event);
        }
    }

    fn segment_of(&self, seq: usize) -> &Arc<Segment> {
        let mut segment = &self.segment;
        while seq < segment.base {
            match &segment.parent {
                Some(parent) => segment = parent,
                // `base` of a root segment is 0, so this is unreachable for `seq < len`.
                None => break,
            }
        }
        segment
    }

    /// The event at `seq`, shared.
    pub fn get(&self, seq: usize) -> Option<Arc<SessionEvent>> {
        if seq >= self.len {
            return None;
        }
        let segment = self.segment_of(seq);
        segment.read().get(seq - segment.base).cloned()
    }

    /// The last event.
    pub fn last(&self) -> Option<Arc<SessionEvent>> {
        self.len.checked_sub(1).and_then(|seq| self.get(seq))
    }

    /// The first `len` events as a log sharing this one's history (O(ancestry depth)).
    /// `len` past the end is clamped.
    pub fn truncated(&self, len: usize) -> Self {
        let len = len.min(self.len);
        let segment = if len == 0 {
            // Any segment will do for an empty view; keep the root so nothing else is held.
            let mut root = &self.segment;
            while let Some(parent) = &root.parent {
                root = parent;
            }
            root
        } else {
            self.segment_of(len - 1)
        };
        Self {
            segment: Arc::clone(segment),
            len,
        }
    }

    /// Whether event `seq` of both logs is the very same allocation (a shared history, not a
    /// copy). False when either log is shorter.
    pub fn shares_event(&self, other: &Self, seq: usize) -> bool {
        match (self.get(seq), other.get(seq)) {
            (Some(a), Some(b)) => Arc::ptr_eq(&a, &b),
            _ => false,
        }
    }

    /// The events in order.
    pub fn iter(&self) -> Iter {
        // Collect the chain of segments with the range each contributes, oldest first.
        let mut chain = Vec::new();
        let mut end = self.len;
        let mut segment = Some(&self.segment);
        while let Some(current) = segment {
            if end > current.base {
                chain.push((Arc::clone(current), end - current.base));
                end = current.base;
            }
            if end == 0 {
                break;
            }
            segment = current.parent.as_ref();
        }
        chain.reverse();
        Iter {
            chain,
            segment: 0,
            offset: 0,
            buffer: Vec::new(),
        }
    }

    /// The events in order, as a vector of shared events.
    pub fn to_vec(&self) -> Vec<Arc<SessionEvent>> {
        let mut out = Vec::with_capacity(self.len);
        out.extend(self.iter());
        out
    }

    /// The messages of the log, in order (cloned).
    pub fn messages(&self) -> Vec<Message> {
        self.iter()
            .filter_map(|event| event.as_message().cloned())
            .collect()
    }

    /// The log up to and including its last `turn_end`: the seed of a fork taken outside a tool
    /// call, which never contains a half turn. Empty when no turn has ended.
    pub fn completed_turn_prefix(&self) -> Self {
        let mut seq = self.len;
        while seq > 0 {
            seq -= 1;
            if let Some(event) = self.get(seq)
                && matches!(*event, SessionEvent::TurnEnd { .. })
            {
                return self.truncated(seq + 1);
            }
        }
        self.truncated(0)
    }
}

/// Iterator over the events of an [`EventLog`], in order. Reads each segment in batches so a
/// long walk takes few locks.
pub struct Iter {
    chain: Vec<(Arc<Segment>, usize)>,
    segment: usize,
    offset: usize,
    buffer: Vec<Arc<SessionEvent>>,
}

const BATCH: usize = 256;

impl Iterator for Iter {
    type Item = Arc<SessionEvent>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(event) = self.buffer.pop() {
                return Some(event);
            }
            let (segment, end) = self.chain.get(self.segment)?;
            if self.offset >= *end {
                self.segment += 1;
                self.offset = 0;
                continue;
            }
            let stop = (self.offset + BATCH).min(*end);
            let events = segment.read();
            self.buffer
                .extend(events[self.offset..stop].iter().rev().cloned());
            self.offset = stop;
        }
    }
}

impl PartialEq for EventLog {
    fn eq(&self, other: &Self) -> bool {
        self.len == other.len && self.iter().zip(other.iter()).all(|(a, b)| a == b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::StopReason;

    fn msg(text: &str) -> SessionEvent {
        SessionEvent::message(Message::user(text))
    }

    #[test]
    fn seq_is_index_and_forks_diverge() {
        let mut a = EventLog::new();
        assert_eq!(a.append(msg("0")), 0);
        assert_eq!(a.append(msg("1")), 1);
        let mut b = a.fork();
        assert_eq!(b.append(msg("b2")), 2);
        assert_eq!(a.append(msg("a2")), 2);
        assert_eq!(a.append(msg("a3")), 3);
        assert_eq!(b.len(), 3);
        assert_eq!(a.len(), 4);
        assert_eq!(*b.get(2).unwrap(), msg("b2"));
        assert_eq!(*a.get(2).unwrap(), msg("a2"));
        assert!(a.shares_event(&b, 1));
        assert!(!a.shares_event(&b, 2));
        let texts: Vec<_> = a.messages().iter().map(Message::text).collect();
        assert_eq!(texts, ["0", "1", "a2", "a3"]);
        let texts: Vec<_> = b.messages().iter().map(Message::text).collect();
        assert_eq!(texts, ["0", "1", "b2"]);
    }

    #[test]
    fn completed_turn_prefix_cuts_half_turns() {
        let mut log = EventLog::new();
        assert!(log.completed_turn_prefix().is_empty());
        log.append(SessionEvent::TurnStart { turn: 0 });
        log.append(msg("q"));
        assert!(log.completed_turn_prefix().is_empty());
        log.append(SessionEvent::TurnEnd {
            stop_reason: StopReason::Completed,
        });
        log.append(SessionEvent::TurnStart { turn: 1 });
        log.append(msg("half"));
        let prefix = log.completed_turn_prefix();
        assert_eq!(prefix.len(), 3);
        assert!(prefix.shares_event(&log, 2));
        // Appending to the prefix branches; the original keeps its half turn.
        let mut prefix = prefix;
        prefix.append(msg("new"));
        assert_eq!(*log.get(4).unwrap(), msg("half"));
        assert_eq!(*prefix.get(3).unwrap(), msg("new"));
    }
}
