//! Permission questions put to the ACP client (`session/request_permission`).
//!
//! The parent's [`PermissionPolicy`](subagent_runtime::PermissionPolicy) (and its children's,
//! which inherit the broker) asks what no rule decides; the question names the tool call the
//! client was shown (the parent's own call, or a child's under its own id) and what it asks (an
//! edit's or a write's diff, a command line), offers allow once / always allow every call of this
//! tool for the session / reject, and the answer is obeyed. A cancelled
//! prompt, a cancelled question or a failed request denies.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    ContentBlock, Diff, PermissionOption, PermissionOptionKind, RequestPermissionOutcome,
    RequestPermissionRequest, ToolCallContent, ToolCallStatus, ToolCallUpdate,
    ToolCallUpdateFields,
};
use async_trait::async_trait;
use subagent_core::CancellationToken;
use subagent_runtime::{Decision, PermissionBroker, PermissionRequest, ToolKind};

use crate::updates::{SeenCalls, describe};

/// The option ids offered with every question.
pub(crate) const ALLOW_ONCE: &str = "allow_once";
pub(crate) const ALLOW_ALWAYS: &str = "allow_always";
pub(crate) const REJECT_ONCE: &str = "reject_once";

/// One session's broker (shared by every prompt of the session).
pub(crate) struct AcpBroker {
    cx: ConnectionTo<Client>,
    session_id: String,
    cwd: PathBuf,
    /// The parent's tool kinds, for titles.
    pub(crate) kinds: Mutex<Arc<HashMap<String, ToolKind>>>,
    pub(crate) seen: Arc<SeenCalls>,
    /// Tools the user allowed for the rest of the session.
    always: Mutex<HashSet<String>>,
    /// The running prompt's cancellation: an open question is denied when it fires.
    pub(crate) cancel: Mutex<CancellationToken>,
    asked: AtomicU64,
}

impl AcpBroker {
    pub(crate) fn new(cx: ConnectionTo<Client>, session_id: String, cwd: PathBuf) -> Self {
        Self {
            cx,
            session_id,
            cwd,
            kinds: Mutex::new(Arc::new(HashMap::new())),
            seen: Arc::new(SeenCalls::default()),
            always: Mutex::new(HashSet::new()),
            cancel: Mutex::new(CancellationToken::new()),
            asked: AtomicU64::new(0),
        }
    }

    async fn question(&self, request: &PermissionRequest) -> RequestPermissionRequest {
        let kinds = Arc::clone(&self.kinds.lock().unwrap_or_else(PoisonError::into_inner));
        let kind = kinds.get(&request.tool).copied();
        let (mut title, acp, locations) = describe(&request.tool, &request.input, kind, &self.cwd);
        if request.depth > 0 {
            title = format!("{title} (subagent at depth {})", request.depth);
        }
        // A call the client was not shown (a race with its event) gets an id of its own.
        let id = self
            .seen
            .claim_soon(&request.tool, &request.input)
            .await
            .unwrap_or_else(|| {
                let n = self.asked.fetch_add(1, Ordering::Relaxed);
                format!("permission-{n}")
            });
        let fields = ToolCallUpdateFields::new()
            .title(title)
            .kind(acp)
            .status(ToolCallStatus::Pending)
            .content(asked(&request.tool, &request.input, &self.cwd))
            .locations((!locations.is_empty()).then_some(locations))
            .raw_input(request.input.clone());
        RequestPermissionRequest::new(
            self.session_id.clone(),
            ToolCallUpdate::new(id, fields),
            vec![
                PermissionOption::new(ALLOW_ONCE, "Allow", PermissionOptionKind::AllowOnce),
                PermissionOption::new(
                    ALLOW_ALWAYS,
                    format!("Always allow every {} call in this session", request.tool),
                    PermissionOptionKind::AllowAlways,
                ),
                PermissionOption::new(REJECT_ONCE, "Reject", PermissionOptionKind::RejectOnce),
            ],
        )
    }
}

/// What the client is shown of what is asked, beside the title: an edit as a diff (its old and
/// new text), a write as a diff from nothing, a command's whole command line (the title has its
/// first line only); `None` for anything else.
fn asked(
    tool: &str,
    input: &serde_json::Value,
    cwd: &std::path::Path,
) -> Option<Vec<ToolCallContent>> {
    let field = |key: &str| input.get(key).and_then(serde_json::Value::as_str);
    let path = || field("path").map(|path| cwd.join(path));
    let content: ToolCallContent = match (tool, field("old_string"), field("new_string")) {
        ("edit_file", Some(old), Some(new)) => {
            Diff::new(path()?, new).old_text(old.to_owned()).into()
        }
        _ => match (tool, field("content"), field("command")) {
            ("write_file", Some(content), _) => Diff::new(path()?, content).into(),
            (_, _, Some(command)) => ContentBlock::from(format!("$ {command}")).into(),
            _ => return None,
        },
    };
    Some(vec![content])
}

#[async_trait]
impl PermissionBroker for AcpBroker {
    async fn ask(&self, request: PermissionRequest) -> Decision {
        let known = self
            .always
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .contains(&request.tool);
        if known {
            return Decision::Allow;
        }
        let cancel = self
            .cancel
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        if cancel.is_cancelled() {
            return Decision::Deny;
        }
        let tool = request.tool.clone();
        let question = tokio::select! {
            question = self.question(&request) => question,
            () = cancel.cancelled() => return Decision::Deny,
        };
        let sent = self.cx.send_request(question).block_task();
        let answer = tokio::select! {
            answer = sent => answer,
            () = cancel.cancelled() => return Decision::Deny,
        };
        match answer.map(|response| response.outcome) {
            Ok(RequestPermissionOutcome::Selected(selected)) => match &*selected.option_id.0 {
                ALLOW_ONCE => Decision::Allow,
                ALLOW_ALWAYS => {
                    self.always
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .insert(tool);
                    Decision::Allow
                }
                _ => Decision::Deny,
            },
            Ok(_) => Decision::Deny,
            Err(error) => {
                tracing::warn!(%error, %tool, "session/request_permission failed: denied");
                Decision::Deny
            }
        }
    }
}
