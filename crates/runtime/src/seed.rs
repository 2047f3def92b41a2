//! How a run starts: a fresh conversation, a fork's inherited one, or a resumed transcript.

use subagent_model::Messages;
use subagent_session::{ContentBlock, EventLog, Message, Role, SessionEvent};

/// The result given to each tool call a resumed transcript left unanswered (its run stopped,
/// killed say, after the model asked for the calls and before their results were written).
pub const UNANSWERED_TOOL_RESULT: &str =
    "tool result unavailable: the run stopped before this call was answered";

/// How a run starts: a log to continue (empty for a fresh conversation, a parent's prefix for a
/// fork, a transcript for a resume) and the user message that opens the first turn.
#[derive(Clone, Debug)]
pub struct Seed {
    /// The conversation so far (shared with whoever else holds it).
    pub log: EventLog,
    /// The messages of `log`, in order, when the caller has them shared already (a fork takes
    /// its parent's list: O(1)). `None`: they are read from the log (a copy of each message).
    pub messages: Option<Messages>,
    /// The message that opens the first turn.
    pub prompt: Message,
}

impl Seed {
    /// A fresh conversation opened by `prompt`.
    pub fn fresh(prompt: Vec<ContentBlock>) -> Self {
        Self {
            log: EventLog::new(),
            messages: Some(Messages::new()),
            prompt: Message::new(Role::User, prompt),
        }
    }

    /// The continuation of `log` (a loaded transcript) opened by `prompt`. The log is kept as
    /// it is, so the run appends right after it. When it ends on an assistant message whose
    /// tool calls were never answered (its run was killed between the model's answer and the
    /// results), the opening message answers each of them first with the error result
    /// [`UNANSWERED_TOOL_RESULT`], so the conversation stays valid for every model protocol.
    pub fn resumed(log: EventLog, prompt: Vec<ContentBlock>) -> Self {
        let messages = log.messages();
        let mut content: Vec<ContentBlock> = match messages.last() {
            Some(last) if last.role == Role::Assistant => last
                .tool_uses()
                .map(|(id, _, _)| ContentBlock::tool_result(id, UNANSWERED_TOOL_RESULT, true))
                .collect(),
            _ => Vec::new(),
        };
        content.extend(prompt);
        Self {
            log,
            messages: Some(Messages::from(messages)),
            prompt: Message::new(Role::User, content),
        }
    }
}

/// The number of the next turn of `log`: one past its last `turn_start` (read from the end, so
/// a long history is not walked).
pub(crate) fn next_turn(log: &EventLog) -> u32 {
    (0..log.len())
        .rev()
        .find_map(|seq| match log.get(seq).as_deref() {
            Some(SessionEvent::TurnStart { turn }) => Some(turn + 1),
            _ => None,
        })
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;
    use subagent_session::StopReason;

    use super::*;

    fn turn(log: &mut EventLog, turn: u32, messages: Vec<Message>) {
        log.append(SessionEvent::TurnStart { turn });
        log.extend(messages.into_iter().map(SessionEvent::message));
        log.append(SessionEvent::TurnEnd {
            stop_reason: StopReason::Completed,
        });
    }

    #[test]
    fn a_resume_continues_the_log_with_the_prompt() {
        let mut log = EventLog::new();
        turn(
            &mut log,
            0,
            vec![
                Message::user("remember 7"),
                Message::assistant("remembered"),
            ],
        );
        let seed = Seed::resumed(log.clone(), vec![ContentBlock::text("which number?")]);
        assert_eq!(
            (seed.log, seed.messages.map(|m| m.to_vec()), seed.prompt),
            (
                log,
                Some(vec![
                    Message::user("remember 7"),
                    Message::assistant("remembered")
                ]),
                Message::user("which number?")
            )
        );
    }

    #[test]
    fn a_resume_answers_the_calls_its_run_left_unanswered() {
        let mut log = EventLog::new();
        let calls = Message::new(
            Role::Assistant,
            vec![
                ContentBlock::tool_use("c1", "ls", json!({})),
                ContentBlock::tool_use("c2", "ls", json!({})),
            ],
        );
        turn(&mut log, 0, vec![Message::user("list"), calls]);
        let seed = Seed::resumed(log, vec![ContentBlock::text("go on")]);
        assert_eq!(
            seed.prompt,
            Message::new(
                Role::User,
                vec![
                    ContentBlock::tool_result("c1", UNANSWERED_TOOL_RESULT, true),
                    ContentBlock::tool_result("c2", UNANSWERED_TOOL_RESULT, true),
                    ContentBlock::text("go on"),
                ]
            )
        );
    }

    #[test]
    fn the_next_turn_follows_the_last_turn_start() {
        let mut log = EventLog::new();
        assert_eq!(next_turn(&log), 0);
        turn(&mut log, 0, vec![Message::user("a")]);
        turn(&mut log, 1, vec![Message::user("b")]);
        assert_eq!(next_turn(&log), 2);
    }
}
