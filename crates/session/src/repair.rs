//! Repair of dangling tool calls, so a copied conversation is valid for every model protocol.

use std::collections::HashSet;

use crate::{ContentBlock, Message, Role};

/// The error result given to each tool call that has no answer when a conversation is forked.
pub const FORKED_TOOL_RESULT: &str = "tool result unavailable in forked context";

/// The tool calls that no result answers: `(index of the assistant message, call id)`, in order.
///
/// A call is answered when the message right after its assistant message is a user message
/// holding a tool result with the call's id (the rule every model protocol enforces).
pub fn dangling_tool_calls(messages: &[Message]) -> Vec<(usize, String)> {
    let mut dangling = Vec::new();
    for (index, message) in messages.iter().enumerate() {
        if message.role != Role::Assistant {
            continue;
        }
        let answered: HashSet<&str> = match messages.get(index + 1) {
            Some(next) if next.role == Role::User => next.tool_result_ids().collect(),
            _ => HashSet::new(),
        };
        dangling.extend(
            message
                .tool_uses()
                .filter(|(id, _, _)| !answered.contains(id))
                .map(|(id, _, _)| (index, id.to_owned())),
        );
    }
    dangling
}

/// Answers every dangling tool call with the error result [`FORKED_TOOL_RESULT`].
///
/// The results go first in the user message that follows the call's assistant message (tool
/// results lead a user message), in call order; when no user message follows, a new one is
/// inserted. Everything else is kept as it was.
pub fn repair_dangling_tool_calls(messages: Vec<Message>) -> Vec<Message> {
    let dangling = dangling_tool_calls(&messages);
    if dangling.is_empty() {
        return messages;
    }
    let mut out = Vec::with_capacity(messages.len() + dangling.len());
    let mut pending = dangling.into_iter().peekable();
    let mut messages = messages.into_iter().enumerate().peekable();
    while let Some((index, message)) = messages.next() {
        out.push(message);
        let mut results = Vec::new();
        while let Some((_, id)) = pending.next_if(|(at, _)| *at == index) {
            results.push(ContentBlock::tool_result(id, FORKED_TOOL_RESULT, true));
        }
        if results.is_empty() {
            continue;
        }
        match messages.next_if(|(_, next)| next.role == Role::User) {
            Some((_, mut next)) => {
                // Keep existing results (answers to other calls) first, then ours, then the rest.
                let split = next
                    .content
                    .iter()
                    .take_while(|b| matches!(b, ContentBlock::ToolResult { .. }))
                    .count();
                let rest = next.content.split_off(split);
                next.content.extend(results);
                next.content.extend(rest);
                out.push(next);
            }
            None => out.push(Message::new(Role::User, results)),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    fn call(id: &str) -> ContentBlock {
        ContentBlock::tool_use(id, "bash", json!({"cmd": "ls"}))
    }

    #[test]
    fn answers_missing_results_in_order() {
        let messages = vec![
            Message::user("go"),
            Message::new(Role::Assistant, vec![call("a"), call("b"), call("c")]),
            Message::new(
                Role::User,
                vec![
                    ContentBlock::tool_result("b", "ok", false),
                    ContentBlock::text("and more"),
                ],
            ),
            Message::new(Role::Assistant, vec![call("d")]),
        ];
        assert_eq!(
            dangling_tool_calls(&messages),
            vec![(1, "a".into()), (1, "c".into()), (3, "d".into())]
        );
        let repaired = repair_dangling_tool_calls(messages);
        assert_eq!(
            repaired,
            vec![
                Message::user("go"),
                Message::new(Role::Assistant, vec![call("a"), call("b"), call("c")]),
                Message::new(
                    Role::User,
                    vec![
                        ContentBlock::tool_result("b", "ok", false),
                        ContentBlock::tool_result("a", FORKED_TOOL_RESULT, true),
                        ContentBlock::tool_result("c", FORKED_TOOL_RESULT, true),
                        ContentBlock::text("and more"),
                    ]
                ),
                Message::new(Role::Assistant, vec![call("d")]),
                Message::new(
                    Role::User,
                    vec![ContentBlock::tool_result("d", FORKED_TOOL_RESULT, true)]
                ),
            ]
        );
        assert!(dangling_tool_calls(&repaired).is_empty());
    }
}
