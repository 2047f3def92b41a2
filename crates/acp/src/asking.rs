//! An ACP agent's `session/request_permission`, asked of the child's parent (issue 28): the
//! request's tool call becomes a [`ToolQuestion`] in Claude Code's vocabulary, and the parent's
//! [`ToolAnswer`] picks the allow or the reject option.
//!
//! The tool: `_meta.claudeCode.toolName` where the agent names it (claude-agent-acp does on its
//! tool calls), else from the call's kind: `execute` → `Bash` (its `command`, a codex-style
//! `["bash", "-lc", "…"]` read as its script), `read`/`search` → `Read`, `edit`/`delete`/`move` →
//! `Write` when the input carries `content`, else `Edit`, `fetch` → `WebFetch`, anything else by
//! its title. A file's path is the input's `file_path` (or `path`), else the call's first
//! location.
//!
//! Deliberately not here: deciding (the parent's asker), and rewriting a call: ACP has no way to
//! run a call with other input, so a parent's allow with a rewritten input is a reject.

use std::path::Path;

use agent_client_protocol::v1::schema::{
    RequestPermissionRequest, RequestPermissionResponse, ToolKind,
};
use serde_json::{Map, Value};
use subagent_core::{PermissionMode, ToolAnswer, ToolQuestion};

use crate::client::{choose, mode_allows};

/// The question `request` asks, for a child working in `cwd`.
pub(crate) fn question(request: &RequestPermissionRequest, cwd: &Path) -> ToolQuestion {
    let call = &request.tool_call;
    let fields = &call.fields;
    let kind = fields.kind.unwrap_or(ToolKind::Other);
    let mut input = match &fields.raw_input {
        Some(Value::Object(map)) => map.clone(),
        _ => Map::new(),
    };
    let named = call
        .meta
        .as_ref()
        .and_then(|meta| meta.get("claudeCode")?.get("toolName")?.as_str())
        .map(str::to_owned);
    let tool = named.unwrap_or_else(|| match kind {
        ToolKind::Execute => "Bash".to_owned(),
        ToolKind::Read | ToolKind::Search => "Read".to_owned(),
        ToolKind::Edit | ToolKind::Delete | ToolKind::Move => {
            if input.contains_key("content") {
                "Write".to_owned()
            } else {
                "Edit".to_owned()
            }
        }
        ToolKind::Fetch => "WebFetch".to_owned(),
        _ => fields.title.clone().unwrap_or_else(|| "unknown".to_owned()),
    });
    if tool == "Bash"
        && let Some(Value::Array(argv)) = input.get("command")
    {
        let words: Vec<&str> = argv.iter().filter_map(Value::as_str).collect();
        let script = match words.as_slice() {
            [shell, flag, script] if shell.ends_with("sh") && flag.starts_with('-') => {
                (*script).to_owned()
            }
            _ => words.join(" "),
        };
        input.insert("command".into(), Value::String(script));
    }
    if matches!(tool.as_str(), "Read" | "Write" | "Edit" | "MultiEdit")
        && !input.contains_key("file_path")
    {
        let path = input
            .get("path")
            .and_then(Value::as_str)
            .map(str::to_owned)
            .or_else(|| {
                fields
                    .locations
                    .as_ref()?
                    .first()
                    .map(|location| location.path.to_string_lossy().into_owned())
            });
        if let Some(path) = path {
            input.insert("file_path".into(), Value::String(path));
        }
    }
    ToolQuestion {
        tool,
        input: Value::Object(input),
        tool_use_id: Some(call.tool_call_id.0.to_string()),
        cwd: cwd.to_path_buf(),
    }
}

/// The response to `request` for the parent's `answer`, capped by the run's `mode` (the row's
/// mode under the request's ceiling) as the row's own policy is.
pub(crate) fn response(
    answer: &ToolAnswer,
    mode: PermissionMode,
    request: &RequestPermissionRequest,
) -> RequestPermissionResponse {
    let kind = request.tool_call.fields.kind.unwrap_or(ToolKind::Other);
    let allowed = match answer {
        ToolAnswer::Allow { updated_input } => {
            updated_input.is_none()
                || updated_input.as_ref() == request.tool_call.fields.raw_input.as_ref()
        }
        ToolAnswer::Deny { message } => {
            tracing::debug!(message, "the parent denied the ACP agent's tool call");
            false
        }
    };
    choose(allowed && mode_allows(mode, kind), request)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use agent_client_protocol::v1::schema::RequestPermissionOutcome;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    fn request(tool_call: Value) -> RequestPermissionRequest {
        serde_json::from_value(json!({
            "sessionId": "s",
            "toolCall": tool_call,
            "options": [
                {"optionId": "always", "name": "Always", "kind": "allow_always"},
                {"optionId": "once", "name": "Once", "kind": "allow_once"},
                {"optionId": "no", "name": "No", "kind": "reject_once"},
            ]
        }))
        .unwrap()
    }

    fn asked(tool_call: Value) -> (String, Value) {
        let q = question(&request(tool_call), Path::new("/p"));
        (q.tool, q.input)
    }

    /// As claude-agent-acp and codex-acp send them (shared/reference transcripts).
    #[test]
    fn tool_calls_become_questions() {
        assert_eq!(
            asked(
                json!({"toolCallId": "toolu_1", "kind": "execute", "title": "echo hi > out.txt",
                "rawInput": {"command": "echo hi > out.txt", "description": "write out.txt"}})
            ),
            (
                "Bash".into(),
                json!({"command": "echo hi > out.txt", "description": "write out.txt"})
            )
        );
        assert_eq!(
            asked(json!({"toolCallId": "c", "kind": "execute", "title": "x",
                "rawInput": {"command": ["/bin/bash", "-lc", "echo hi > out.txt"], "cwd": "/p"}})),
            (
                "Bash".into(),
                json!({"command": "echo hi > out.txt", "cwd": "/p"})
            )
        );
        assert_eq!(
            asked(
                json!({"toolCallId": "t", "kind": "edit", "title": "Write notes.md",
                "_meta": {"claudeCode": {"toolName": "Write"}},
                "rawInput": {"file_path": "/p/notes.md", "content": "x"}})
            ),
            (
                "Write".into(),
                json!({"file_path": "/p/notes.md", "content": "x"})
            )
        );
        assert_eq!(
            asked(json!({"toolCallId": "t", "kind": "edit", "title": "patch",
                "locations": [{"path": "/p/hello.txt"}]})),
            ("Edit".into(), json!({"file_path": "/p/hello.txt"}))
        );
        assert_eq!(
            asked(json!({"toolCallId": "t", "kind": "fetch", "title": "f",
                "rawInput": {"url": "https://example.com"}})),
            ("WebFetch".into(), json!({"url": "https://example.com"}))
        );
        assert_eq!(
            asked(
                json!({"toolCallId": "t", "kind": "other", "title": "mcp__github__create_issue"})
            ),
            ("mcp__github__create_issue".into(), json!({}))
        );
    }

    #[test]
    fn answers_pick_an_option_under_the_mode() {
        let bash = request(json!({"toolCallId": "t", "kind": "execute", "title": "x",
            "rawInput": {"command": "make"}}));
        let chosen = |response: RequestPermissionResponse| match response.outcome {
            RequestPermissionOutcome::Selected(selected) => selected.option_id.0.to_string(),
            _ => "cancelled".to_owned(),
        };
        let allow = ToolAnswer::Allow {
            updated_input: None,
        };
        let deny = ToolAnswer::Deny {
            message: "no".into(),
        };
        let rewritten = ToolAnswer::Allow {
            updated_input: Some(json!({"command": "make -n"})),
        };
        let same = ToolAnswer::Allow {
            updated_input: Some(json!({"command": "make"})),
        };
        assert_eq!(
            chosen(response(&allow, PermissionMode::Default, &bash)),
            "once"
        );
        assert_eq!(
            chosen(response(&deny, PermissionMode::Default, &bash)),
            "no"
        );
        assert_eq!(
            chosen(response(&rewritten, PermissionMode::Default, &bash)),
            "no"
        );
        assert_eq!(
            chosen(response(&same, PermissionMode::Default, &bash)),
            "once"
        );
        assert_eq!(chosen(response(&allow, PermissionMode::Plan, &bash)), "no");
    }
}
