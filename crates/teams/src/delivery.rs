//! What a team tells its members and reads from them: a teammate's first prompt (and what a
//! teammate held in plan mode is told), a turn's answer bounded for the leader's note, and a
//! product teammate's shutdown answer read from its text. The mailboxes the runtime takes at each turn (`TurnInput`) are `live`'s, beside the
//! `Teams` they read.

use serde_json::Value;
use subagent_core::text::{Limit, truncate};

use crate::model::LEADER;

/// The longest turn answer put into an idle notification, in bytes.
pub(crate) const ANSWER_LIMIT: usize = 8000;

/// The start of a teammate's first prompt: who it is, who else is in the team, how to talk.
pub(crate) fn introduction(team: &str, name: &str, members: &[String], task: &str) -> String {
    let others: Vec<&str> = members
        .iter()
        .map(String::as_str)
        .filter(|m| *m != name)
        .collect();
    format!(
        "You are {name}, a member of team {team} (lead: {LEADER}; members: {}). Messages from your team arrive as <teammate-message> blocks. With the SendMessage and Task* tools, talk to teammates by name and share the task list; without them, your answer at the end of each turn is sent to {LEADER} as your message. When {LEADER} asks you to shut down, answer with a shutdown_response (approve true or false, and a reason).\n\n{task}",
        others.join(", ")
    )
}

/// What a teammate held in plan mode is told at its start (after its introduction): how to
/// get its plan approved.
pub(crate) fn plan_mode_note() -> String {
    format!(
        "You start in plan mode: read-only (no edits, no commands) until {LEADER} approves your plan. Explore, then submit your plan with the ExitPlanMode tool (its plan argument) and end your turn; without that tool, your answer at the end of your turn is your plan. The answer arrives as a message: approved, you leave plan mode and make the changes; rejected, you stay in plan mode, revise the plan from the feedback and submit it again."
    )
}

/// Why a teammate held in plan mode is refused what is not read-only (its permission layer
/// says it after "This run is in plan mode …").
pub(crate) fn plan_reason() -> String {
    format!(
        "until {LEADER} approves your plan: submit it with ExitPlanMode (or as your answer), end your turn, and wait for the answer"
    )
}

/// `text` cut at [`ANSWER_LIMIT`] bytes on a character boundary.
pub(crate) fn bounded(text: &str) -> String {
    truncate(text, Limit::Bytes(ANSWER_LIMIT)).into_owned()
}

/// A `shutdown_response` object written in a turn's answer (a product teammate's way to
/// answer a shutdown request), if there is one.
pub(crate) fn shutdown_response(text: &str) -> Option<Value> {
    let start = text.find('{')?;
    let end = text.rfind('}')?;
    let value: Value = serde_json::from_str(text.get(start..=end)?).ok()?;
    (value.get("type").and_then(Value::as_str) == Some("shutdown_response")).then_some(value)
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    #[test]
    fn a_shutdown_answer_is_read_from_a_product_teammates_text() {
        assert_eq!(
            shutdown_response(
                "Done here. {\"type\":\"shutdown_response\",\"approve\":true,\"reason\":\"ok\"}"
            ),
            Some(json!({"type": "shutdown_response", "approve": true, "reason": "ok"}))
        );
        assert_eq!(
            shutdown_response("{\"type\":\"plan_approval_request\"}"),
            None
        );
        assert_eq!(shutdown_response("no json {here"), None);
        assert_eq!(shutdown_response("} backwards {"), None);
    }

    #[test]
    fn a_long_answer_is_cut_on_a_character_boundary() {
        let text = "é".repeat(ANSWER_LIMIT);
        let cut = bounded(&text);
        assert!(cut.len() <= ANSWER_LIMIT + '…'.len_utf8());
        assert!(cut.ends_with('…'));
        assert_eq!(bounded("short"), "short");
    }
}
