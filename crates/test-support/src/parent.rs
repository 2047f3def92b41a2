//! A parent's delegation tests, from the child's side: the read-only agent types a parent
//! offers ([`read_only_agents`]), and what the parent and its children sent the fake model,
//! read from the [`RecordedRequest`]s: the tool results its messages carried (which requests
//! are a given child's is [`crate::requests_for`], which tools each was offered
//! [`RecordedRequest::tool_names`]).

use subagent_core::agents::AgentProfile;
use subagent_core::{PermissionMode, ToolFilter};
use subagent_session::ContentBlock;

use crate::RecordedRequest;

/// The two read-only agent types of the delegation tests: `explore`, read-only by its tool
/// filter (no tool that writes or runs commands), and `plan`, read-only by its permission mode.
pub fn read_only_agents() -> Vec<AgentProfile> {
    let mut explore = AgentProfile::new("explore", "Read-only search of the code.");
    explore.tool_filter = Some(ToolFilter::deny([
        "write_file",
        "edit_file",
        "delete",
        "bash",
    ]));
    let mut plan = AgentProfile::new("plan", "Read-only planning.");
    plan.permission_mode = Some(PermissionMode::Plan);
    vec![explore, plan]
}

/// The tool results of a request's last message: (call id, text, is_error).
///
/// # Panics
/// When the request has no message.
pub fn last_results(request: &RecordedRequest) -> Vec<(String, String, bool)> {
    request
        .messages
        .last()
        .unwrap_or_else(|| panic!("a request without messages: {request:?}"))
        .content
        .iter()
        .filter_map(|b| match b {
            ContentBlock::ToolResult {
                tool_use_id,
                content,
                is_error,
            } => Some((tool_use_id.clone(), content.to_text(), *is_error)),
            _ => None,
        })
        .collect()
}

/// The scenarios a parent's nesting tests start from: a child (prompted `CHILD-NESTS…`) that
/// tries to delegate `GRANDCHILD-TASK go` as the call `call_nested`, then answers `child done`,
/// and that grandchild (`grandchild done`). The parent's own scenario follows.
pub const NESTING_CHILD: &str = r#"
- name: grandchild
  match: "GRANDCHILD-TASK"
  steps:
    - text: "grandchild done"
- name: child
  match: "CHILD-NESTS"
  steps:
    - tool_calls:
        - {id: call_nested, name: subagent, input: {prompt: "GRANDCHILD-TASK go"}}
    - text: "child done""#;

/// The tool results of a child's message whose one call, `call_id`, tried to delegate and was
/// refused under `NESTED_DELEGATION_FORBIDDEN` with `refusal` (the runtime's `NESTED_REFUSAL`):
/// what [`last_results`] reads from the child's next request.
#[must_use]
pub fn nested_refusal(call_id: &str, refusal: &str) -> Vec<(String, String, bool)> {
    vec![(
        call_id.to_owned(),
        format!("NESTED_DELEGATION_FORBIDDEN: nested delegation is forbidden: {refusal}"),
        true,
    )]
}

/// The result the model was sent for the tool call `call_id`, in the first request that
/// carries it: (text, is_error).
pub fn result_of(requests: &[RecordedRequest], call_id: &str) -> Option<(String, bool)> {
    requests
        .iter()
        .flat_map(|request| request.messages.iter())
        .flat_map(|message| message.content.iter())
        .find_map(|block| match block {
            ContentBlock::ToolResult {
                tool_use_id,
                content,
                is_error,
            } if tool_use_id == call_id => Some((content.to_text(), *is_error)),
            _ => None,
        })
}

/// Whether a text block of the request's conversation starts with `prefix` (a fork's request
/// carries the fork preamble).
pub fn has_text_starting(request: &RecordedRequest, prefix: &str) -> bool {
    request.messages.iter().any(|m| {
        m.content
            .iter()
            .any(|b| b.as_text().is_some_and(|t| t.starts_with(prefix)))
    })
}

/// Defines, in the calling module, `delegating_parent`: the agent config of a parent whose tools
/// are the runtime's built-ins and one delegation tool, that asks nothing. A macro for the
/// reason of [`crate::background_doubles`] (this crate does not depend on the runtime): the
/// calling test crate expands it against its own `subagent_runtime`, `subagent_core` and
/// `subagent_model`.
///
/// `delegating_parent(model, dir, registry, row, agents, system)`: on `model`, rooted at `dir`,
/// the delegation tool of `row` starting children through `registry` with the agent types of
/// `agents`, under the system prompt `system`.
#[macro_export]
macro_rules! delegating_parent {
    () => {
        fn delegating_parent(
            model: &::std::sync::Arc<dyn ::subagent_model::Model>,
            dir: &::std::path::Path,
            registry: &::std::sync::Arc<::subagent_core::registry::Registry>,
            row: ::subagent_runtime::DelegationToolConfig,
            agents: ::std::sync::Arc<dyn ::subagent_core::agents::AgentDirectory>,
            system: &str,
        ) -> ::subagent_runtime::AgentConfig {
            let delegation: ::std::sync::Arc<dyn ::subagent_runtime::Tool> =
                ::std::sync::Arc::new(::subagent_runtime::DelegationTool::new(
                    row,
                    ::std::sync::Arc::clone(registry),
                    agents,
                ));
            let builtin = ::subagent_runtime::ToolSet::builtin(
                ::subagent_runtime::tools::BashConfig::default(),
            );
            let roots = ::subagent_runtime::Roots::new(dir).unwrap();
            let mut config =
                ::subagent_runtime::AgentConfig::new(::std::sync::Arc::clone(model), roots);
            config.system = Some(system.to_owned());
            config.tools =
                ::subagent_runtime::ToolSet::new(builtin.into_iter().chain([delegation]));
            config.permissions = ::subagent_runtime::PermissionPolicy::bypass();
            config
        }
    };
}
