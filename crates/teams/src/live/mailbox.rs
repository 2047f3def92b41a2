//! The leader's and the teammates' mailboxes as the runtime's [`TurnInput`]: what `Teams`
//! hands a run so it takes its unread messages at the start of each turn.

use std::sync::Arc;

use async_trait::async_trait;
use subagent_runtime::TurnInput;
use subagent_session::ContentBlock;

use super::Teams;
use crate::model::LEADER;
use crate::store::TeamDir;

/// An in-process teammate's mailbox, taken at the start of each of its turns.
pub(crate) struct MemberInput {
    pub(crate) teams: Arc<Teams>,
    pub(crate) team: TeamDir,
    pub(crate) name: String,
}

#[async_trait]
impl TurnInput for MemberInput {
    fn take(&self) -> Vec<ContentBlock> {
        match self.teams.take_unread(&self.team, &self.name) {
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
