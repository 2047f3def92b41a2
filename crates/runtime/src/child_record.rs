//! What a delegated child ran with, kept beside its transcript so a resumed child keeps it.
//!
//! A child's session is continued by its id alone (`resume`, `delegate --resume`); what the id
//! does not say — the provider whose session it is, the agent type it ran as, the directory it
//! ran in and the git worktree it kept — is written, when its outcome names a session, to
//! `<session id>.child.json` in the [`SessionStore`]'s directory (mode 0600, through
//! `subagent_session::private`), before the outcome is delivered. Resuming reads it back: the
//! child continues on the same provider, as the same agent type, in the same worktree (rather
//! than going to the fork provider, as an untyped call would, or losing its worktree).
//!
//! A record that is missing or unreadable is no record: the resume goes on as the call says.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use subagent_core::{Outcome, Run, WorktreeReport};

use crate::sessions::SessionStore;

/// The largest record read, in bytes.
const MAX_RECORD: u64 = 64 * 1024;

/// What a child ran with.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChildRecord {
    /// The provider whose session it is.
    pub provider: String,
    /// The agent type it ran as (`None`: none, a fork or a plain child).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_type: Option<String>,
    /// The directory it ran in (its session's `cwd`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<PathBuf>,
    /// The worktree it kept (changed), if it ran in one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worktree: Option<WorktreeReport>,
}

impl ChildRecord {
    /// The directory a resumed child continues in: the one it ran in, when it ran in a worktree
    /// that is still there (`None` otherwise: the call's own directory and isolation apply).
    pub fn kept_cwd(&self) -> Option<PathBuf> {
        let worktree = self.worktree.as_ref()?;
        if !worktree.path.is_dir() {
            return None;
        }
        let cwd = self
            .cwd
            .clone()
            .filter(|cwd| cwd.starts_with(&worktree.path) && cwd.is_dir());
        Some(cwd.unwrap_or_else(|| worktree.path.clone()))
    }
}

impl SessionStore {
    /// The record file of session `id`; `None` when `id` is not a session id (a UUID).
    pub(crate) fn record_path(&self, id: &str) -> Option<PathBuf> {
        let id: subagent_core::RunId = id.trim().parse().ok()?;
        Some(self.dir().join(format!("{id}.child.json")))
    }

    /// Keeps what the child whose session is `id` ran with (a failure is logged: the child's
    /// outcome stands without it).
    pub fn record(&self, id: &str, record: &ChildRecord) {
        let Some(path) = self.record_path(id) else {
            return;
        };
        let written = serde_json::to_vec(record)
            .map_err(std::io::Error::other)
            .and_then(|bytes| {
                subagent_session::private::create_dir_all(self.dir())?;
                subagent_session::private::write(&path, &bytes)
            });
        if let Err(error) = written {
            tracing::warn!(path = %path.display(), %error, "could not keep what a child ran with");
        }
    }

    /// What the child whose session is `id` ran with, if it was kept.
    pub fn recall(&self, id: &str) -> Option<ChildRecord> {
        let path = self.record_path(id)?;
        let text = subagent_session::read_user_text(&path, MAX_RECORD).ok()?;
        serde_json::from_str(&text).ok()
    }

    /// `run` as it is, except that when its outcome names a session, what it ran with is
    /// recorded first: `ran` (its provider, its agent type, and the worktree a resumed child
    /// continued in) with the session's `cwd` and the worktree the outcome reports.
    pub fn recording(&self, run: Run, ran: ChildRecord) -> Run {
        let (sender, relayed) = Run::relay(&run);
        let store = self.clone();
        tokio::spawn(async move {
            let outcome = sender.forward(run).await;
            store.keep(&outcome, ran);
            sender.finish(outcome);
        });
        relayed
    }

    fn keep(&self, outcome: &Outcome, mut ran: ChildRecord) {
        if let Some(session) = &outcome.session {
            ran.cwd.clone_from(&session.cwd);
            if outcome.worktree.is_some() {
                ran.worktree.clone_from(&outcome.worktree);
            }
            self.record(&session.id, &ran);
        }
    }
}
