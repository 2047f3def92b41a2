//! The tools: one per delegation row, described from the row, the agent types and the
//! capabilities of the row's provider.

use std::sync::Arc;

use rmcp::model::{JsonObject, Tool};
use serde_json::{Value, json};
use subagent_core::Capabilities;
use subagent_core::agents::AgentDirectory;
use subagent_core::registry::Registry;
use subagent_preset::ToolRow;

/// One tool and the row it serves.
pub(crate) struct Entry {
    /// The row.
    pub row: ToolRow,
    /// What the MCP client sees.
    pub tool: Tool,
}

/// The tools of `rows`, in order; a row whose provider is not registered (a disabled one) is
/// skipped with a warning.
pub(crate) fn entries(
    registry: &Registry,
    rows: &[ToolRow],
    agents: &dyn AgentDirectory,
) -> Vec<Entry> {
    rows.iter()
        .filter_map(|row| {
            let Some(provider) = registry.get(&row.provider) else {
                tracing::warn!(tool = %row.name, provider = %row.provider, "the row's provider is not registered: no tool");
                return None;
            };
            let capabilities = provider.capabilities();
            let isolates = capabilities.isolation && registry.has_isolator();
            let tool = Tool::new(
                row.name.clone(),
                description(row, agents),
                Arc::new(input_schema(&capabilities, isolates)),
            );
            Some(Entry {
                row: row.clone(),
                tool,
            })
        })
        .collect()
}

/// The row's description (or a default naming its provider), then the agent types.
pub(crate) fn description(row: &ToolRow, agents: &dyn AgentDirectory) -> String {
    let mut text = row.description.clone().unwrap_or_else(|| {
        format!(
            "Delegate a self-contained task to the \"{}\" agent. It works on its own and its final report comes back as this tool's result.",
            row.provider
        )
    });
    text.push_str(
        "\n\nThe agent starts with a fresh context: it does not see your conversation, so put everything it needs in the prompt.",
    );
    let agents = agents.agents();
    if !agents.is_empty() {
        text.push_str("\n\nAvailable agent types (subagent_type):");
        for agent in &agents {
            text.push_str(&format!("\n- {}: {}", agent.name, agent.description));
        }
    }
    text
}

fn property(description: &str, kind: &str) -> Value {
    json!({"type": kind, "description": description})
}

/// The delegation tool's arguments that `capabilities` lets a call use.
pub(crate) fn input_schema(capabilities: &Capabilities, isolates: bool) -> JsonObject {
    let mut properties = serde_json::Map::new();
    properties.insert(
        "prompt".to_owned(),
        property("The complete task for the agent.", "string"),
    );
    properties.insert(
        "description".to_owned(),
        property("A short (3-5 word) label for the task.", "string"),
    );
    properties.insert(
        "subagent_type".to_owned(),
        property(
            "The agent type to use (see the list in the tool description).",
            "string",
        ),
    );
    if capabilities.model_override {
        properties.insert(
            "model".to_owned(),
            property(
                "A model for the agent (default: the agent type's, else its own).",
                "string",
            ),
        );
    }
    if isolates {
        properties.insert(
            "isolation".to_owned(),
            property(
                "\"worktree\": the agent works in a new git worktree of the repository, on a branch of its own; a worktree it changed is kept and its path, branch and diffstat come back with the result.",
                "string",
            ),
        );
    }
    if capabilities.output_schema {
        properties.insert(
            "output_schema".to_owned(),
            property(
                "A JSON Schema (type object) the agent's result must follow; the result then carries it as structured content.",
                "object",
            ),
        );
    }
    if capabilities.resume {
        properties.insert(
            "resume".to_owned(),
            property(
                "The <session_id> of an earlier result of this tool: that agent continues its conversation, with prompt as its next message.",
                "string",
            ),
        );
    }
    let mut schema = serde_json::Map::new();
    schema.insert("type".to_owned(), json!("object"));
    schema.insert("properties".to_owned(), Value::Object(properties));
    schema.insert("required".to_owned(), json!(["prompt"]));
    schema.insert("additionalProperties".to_owned(), json!(false));
    schema
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use subagent_core::agents::{AgentProfile, StaticAgents};

    fn row(description: Option<&str>) -> ToolRow {
        ToolRow {
            name: "codex".to_owned(),
            provider: "codex".to_owned(),
            fork: None,
            max_depth: None,
            background: Default::default(),
            foreground_timeout_ms: None,
            tool_filter: None,
            persona: None,
            description: description.map(str::to_owned),
            budget: None,
            location: Default::default(),
        }
    }

    fn keys(schema: &JsonObject) -> Vec<String> {
        schema["properties"]
            .as_object()
            .map(|p| p.keys().cloned().collect())
            .unwrap_or_default()
    }

    #[test]
    fn the_schema_offers_only_what_the_provider_declares() {
        let none = input_schema(&Capabilities::NONE, false);
        assert_eq!(keys(&none), ["prompt", "description", "subagent_type"]);
        assert_eq!(none["required"], json!(["prompt"]));
        let all = input_schema(&Capabilities::ALL, true);
        assert_eq!(
            keys(&all),
            [
                "prompt",
                "description",
                "subagent_type",
                "model",
                "isolation",
                "output_schema",
                "resume"
            ]
        );
        // Isolation needs the registry's isolator too.
        assert!(!keys(&input_schema(&Capabilities::ALL, false)).contains(&"isolation".to_owned()));
    }

    #[test]
    fn the_description_is_the_rows_then_the_agent_types() {
        let agents = StaticAgents(vec![
            AgentProfile::new("explore", "Reads only."),
            AgentProfile::new("plan", "Plans."),
        ]);
        let text = description(&row(Some("Ask Codex.")), &agents);
        assert_eq!(
            text,
            "Ask Codex.\n\nThe agent starts with a fresh context: it does not see your conversation, so put everything it needs in the prompt.\n\nAvailable agent types (subagent_type):\n- explore: Reads only.\n- plan: Plans."
        );
        let text = description(&row(None), &StaticAgents::default());
        assert!(
            text.starts_with("Delegate a self-contained task to the \"codex\" agent."),
            "{text}"
        );
        assert!(!text.contains("Available agent types"), "{text}");
    }
}
