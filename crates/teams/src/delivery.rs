//! What a team hands its members: the leader's and the teammates' mailboxes as the runtime's
//! [`TurnInput`], a teammate's first prompt, its events as the leader's stream shows them, and
//! a product teammate's shutdown answer read from its text.

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::Value;
use subagent_core::text::{Limit, truncate};
use subagent_runtime::TurnInput;
use subagent_session::ContentBlock;

use crate::live::Teams;
use crate::model::LEADER;
use crate::store::TeamDir;

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

/// An in-process teammate's mailbox, taken at the start of each of its turns.
pub(crate) struct MemberInput {
    pub(crate) teams: Arc<Teams>,
    pub(crate) team: TeamDir,
    pub(crate) name: String,
}

#[async_trait]
impl TurnInput for MemberInput {
    fn take(&self) -> Vec<ContentBlock> {
        if self.teams.holding(&self.name) {
            return Vec::new();
        }
        match self.team.take_unread(&self.name) {
            Ok(messages) => messages
                .iter()
                .map(|m| ContentBlock::text(m.to_prompt()))
                .collect(),
            Err(error) => {
                tracing::warn!(%error, member = %self.name, "taking a teammate's messages");
                Vec::new()
            }
        }
    }
}

/// The leader's mailbox; the leader's run waits while teammates work.
pub(crate) struct LeaderInput {
    pub(crate) teams: Arc<Teams>,
}

#[async_trait]
impl TurnInput for LeaderInput {
    fn take(&self) -> Vec<ContentBlock> {
        let Ok(team) = self.teams.current() else {
            return Vec::new();
        };
        match team.take_unread(LEADER) {
            Ok(messages) => messages
                .iter()
                .map(|m| ContentBlock::text(m.to_prompt()))
                .collect(),
            Err(error) => {
                tracing::warn!(%error, "taking the leader's messages");
                Vec::new()
            }
        }
    }

    async fn wait(&self) -> bool {
        let mut changes = self.teams.changes.subscribe();
        loop {
            if let Ok(team) = self.teams.current()
                && team.unread(LEADER).is_ok_and(|unread| !unread.is_empty())
            {
                return true;
            }
            if !self.teams.any_active() {
                return false;
            }
            if changes.changed().await.is_err() {
                return false;
            }
        }
    }

    async fn close(&self) {
        self.teams.close().await;
    }
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
