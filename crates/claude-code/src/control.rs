//! Claude Code's stdio control protocol, the part a child that asks its parent needs (`claude
//! --input-format stream-json --permission-prompt-tool stdio`, as the Agent SDK runs it): the
//! prompt as a stream-json user message, claude's `control_request` `can_use_tool` questions
//! turned into [`ToolQuestion`]s, and the parent's [`ToolAnswer`] written back as the
//! `control_response` claude waits for.
//!
//! Seen with the pinned claude 2.1.197 (shared/reference transcripts): claude asks
//! `{"type":"control_request","request_id":…,"request":{"subtype":"can_use_tool","tool_name":
//! "Bash","input":{…},"tool_use_id":…,…}}`; `{"behavior":"allow","updatedInput":{…}}` runs the
//! call with that input, `{"behavior":"deny","message":…}` gives the model the message as the
//! call's error result. Claude runs its own `PermissionRequest` hooks at the same time as it asks:
//! when one decides first, claude sends `control_cancel_request` for the question. The Agent SDK
//! sends an `initialize` control request before its first
//! message; the pinned claude asks and answers the same without one, so we send none.
//!
//! Deliberately not here: deciding (the asker does), the process and its pipes (`crate::run`).

use std::path::Path;

use serde_json::{Value, json};
use subagent_core::{ToolAnswer, ToolQuestion};

/// A request claude sent on stdout that waits for our answer.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Request {
    /// `can_use_tool`: may the call run?
    CanUseTool {
        /// Echoed in the answer.
        request_id: String,
        /// The question for the parent (the tool in claude's name, its input, the child's cwd).
        question: ToolQuestion,
    },
    /// `control_cancel_request`: claude no longer waits for the answer to `request_id` (its own
    /// `PermissionRequest` hook decided first, or the call was aborted).
    Cancel {
        /// The request it no longer waits for.
        request_id: String,
    },
    /// Any other subtype: answered with an error so claude does not wait.
    Other {
        /// Echoed in the answer.
        request_id: String,
        /// The subtype, for the error text.
        subtype: String,
    },
}

/// The control request in `line`, if it is one (`None` for every other line).
pub(crate) fn parse(line: &str, cwd: &Path) -> Option<Request> {
    // Cheap test first: nearly every line is an event.
    if !line.contains("\"control_request\"") && !line.contains("\"control_cancel_request\"") {
        return None;
    }
    let value: Value = serde_json::from_str(line).ok()?;
    let kind = value.get("type").and_then(Value::as_str);
    let request_id = value.get("request_id").and_then(Value::as_str)?.to_owned();
    match kind {
        Some("control_request") => {}
        Some("control_cancel_request") => return Some(Request::Cancel { request_id }),
        _ => return None,
    }
    let request = value.get("request")?;
    let subtype = request
        .get("subtype")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if subtype != "can_use_tool" {
        return Some(Request::Other {
            request_id,
            subtype: subtype.to_owned(),
        });
    }
    let tool = request
        .get("tool_name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    Some(Request::CanUseTool {
        request_id,
        question: ToolQuestion {
            tool,
            input: request.get("input").cloned().unwrap_or_else(|| json!({})),
            tool_use_id: request
                .get("tool_use_id")
                .and_then(Value::as_str)
                .map(str::to_owned),
            cwd: cwd.to_path_buf(),
        },
    })
}

/// The `control_response` line (without its newline) answering `request_id` with `answer`; an
/// allow without a rewritten input allows `input` as asked (claude takes `updatedInput` as the
/// call's input).
pub(crate) fn answer(request_id: &str, answer: &ToolAnswer, input: &Value) -> String {
    let response = match answer {
        ToolAnswer::Allow { updated_input } => json!({
            "behavior": "allow",
            "updatedInput": updated_input.clone().unwrap_or_else(|| input.clone()),
        }),
        ToolAnswer::Deny { message } => json!({"behavior": "deny", "message": message}),
    };
    json!({
        "type": "control_response",
        "response": {"subtype": "success", "request_id": request_id, "response": response},
    })
    .to_string()
}

/// The error `control_response` for a request we do not serve.
pub(crate) fn unsupported(request_id: &str, subtype: &str) -> String {
    json!({
        "type": "control_response",
        "response": {
            "subtype": "error",
            "request_id": request_id,
            "error": format!("control request {subtype:?} is not supported by subagents"),
        },
    })
    .to_string()
}

/// The prompt as a stream-json user message.
pub(crate) fn user_message(prompt: &str) -> String {
    json!({
        "type": "user",
        "message": {"role": "user", "content": [{"type": "text", "text": prompt}]},
        "parent_tool_use_id": null,
        "session_id": "",
    })
    .to_string()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use pretty_assertions::assert_eq;

    use super::*;

    /// A question as the pinned claude sends it (from the recorded transcript), and both answers
    /// as claude took them there.
    #[test]
    fn can_use_tool_round_trip() {
        let line = r#"{"type": "control_request", "request_id": "4436e3fa", "request": {"subtype": "can_use_tool", "tool_name": "Bash", "display_name": "Bash", "input": {"command": "echo hi > out.txt", "description": "write out.txt"}, "description": "write out.txt", "permission_suggestions": [], "blocked_path": null, "tool_use_id": "toolu_3e29"}}"#;
        let input = json!({"command": "echo hi > out.txt", "description": "write out.txt"});
        assert_eq!(
            parse(line, Path::new("/p")),
            Some(Request::CanUseTool {
                request_id: "4436e3fa".into(),
                question: ToolQuestion {
                    tool: "Bash".into(),
                    input: input.clone(),
                    tool_use_id: Some("toolu_3e29".into()),
                    cwd: "/p".into(),
                },
            })
        );
        let allow = answer(
            "4436e3fa",
            &ToolAnswer::Allow {
                updated_input: None,
            },
            &input,
        );
        assert_eq!(
            serde_json::from_str::<Value>(&allow).unwrap(),
            json!({"type": "control_response", "response": {"subtype": "success", "request_id": "4436e3fa", "response": {"behavior": "allow", "updatedInput": input}}})
        );
        let deny = answer(
            "4436e3fa",
            &ToolAnswer::Deny {
                message: "denied by test driver".into(),
            },
            &input,
        );
        assert_eq!(
            serde_json::from_str::<Value>(&deny).unwrap(),
            json!({"type": "control_response", "response": {"subtype": "success", "request_id": "4436e3fa", "response": {"behavior": "deny", "message": "denied by test driver"}}})
        );
    }

    #[test]
    fn other_lines_and_subtypes() {
        assert_eq!(
            parse(r#"{"type":"assistant","message":{}}"#, Path::new("/")),
            None
        );
        assert_eq!(
            parse(
                r#"{"type":"control_response","response":{"subtype":"success","request_id":"init-1"}}"#,
                Path::new("/")
            ),
            None
        );
        assert_eq!(
            parse(
                r#"{"type":"control_request","request_id":"r2","request":{"subtype":"hook_callback"}}"#,
                Path::new("/")
            ),
            Some(Request::Other {
                request_id: "r2".into(),
                subtype: "hook_callback".into()
            })
        );
        assert_eq!(
            parse(
                r#"{"type":"control_cancel_request","request_id":"r3"}"#,
                Path::new("/")
            ),
            Some(Request::Cancel {
                request_id: "r3".into()
            })
        );
        assert_eq!(
            serde_json::from_str::<Value>(&user_message("say hi")).unwrap(),
            json!({"type": "user", "message": {"role": "user", "content": [{"type": "text", "text": "say hi"}]}, "parent_tool_use_id": null, "session_id": ""})
        );
    }
}
