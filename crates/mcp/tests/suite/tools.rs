//! `tools/list`: one tool per row, the row's name and description, the agent types listed,
//! the input schema of the provider's capabilities.

use pretty_assertions::assert_eq;
use serde_json::json;

use super::support::Harness;

#[tokio::test]
async fn every_row_is_a_tool_with_the_delegation_arguments_its_provider_declares() {
    let harness = Harness::start("[]").await;
    let tools = harness.client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(names, ["subagent", "helper"]);
    let helper = &tools[1];
    assert_eq!(
        helper.description.as_deref(),
        Some(
            "A helper.\n\nThe agent starts with a fresh context: it does not see your conversation, so put everything it needs in the prompt.\n\nAvailable agent types (subagent_type):\n- explore: Read-only search of the code.\n- elsewhere: Runs on a provider that is not here."
        )
    );
    let schema = serde_json::Value::Object((*helper.input_schema).clone());
    let properties: Vec<&String> = schema["properties"].as_object().unwrap().keys().collect();
    // spawn declares model, output_schema and resume; no isolator here, so no isolation.
    assert_eq!(
        properties,
        [
            "prompt",
            "description",
            "subagent_type",
            "model",
            "output_schema",
            "resume"
        ]
    );
    assert_eq!(schema["required"], json!(["prompt"]));
    assert_eq!(schema["additionalProperties"], json!(false));
    assert_eq!(helper.output_schema, None);
    let info = harness.client.peer_info().unwrap();
    assert_eq!(info.server_info.as_ref().unwrap().name, "subagents");
    assert!(info.capabilities.tools.is_some());
}
