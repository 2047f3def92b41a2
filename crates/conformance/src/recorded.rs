//! Reading what a child asked the model, whatever protocol it speaks (Anthropic Messages, OpenAI
//! Responses, OpenAI Chat Completions): the tools offered, the instructions, the model name, the
//! reasoning effort.

use serde_json::Value;
use subagent_core::Effort;
use subagent_test_support::RecordedRequest;

/// The latest genuine user prompt of a recorded request (what scenarios match), or `""`.
pub fn genuine_prompt(request: &RecordedRequest) -> String {
    subagent_model::scenario::genuine_prompt(&request.messages)
        .map(|(_, prompt)| prompt)
        .unwrap_or_default()
}

/// The names of the tools a request offered, sorted and without duplicates. A tool of an OpenAI
/// Responses namespace is `namespace/name`; a hosted tool without a name is its `type`.
pub fn offered_tools(request: &RecordedRequest) -> Vec<String> {
    let mut names = Vec::new();
    let tools = request
        .body
        .as_ref()
        .and_then(|body| body.get("tools"))
        .and_then(Value::as_array);
    for tool in tools.into_iter().flatten() {
        let name = tool
            .get("name")
            .and_then(Value::as_str)
            .or_else(|| tool.pointer("/function/name").and_then(Value::as_str))
            .or_else(|| tool.get("type").and_then(Value::as_str))
            .unwrap_or_default();
        match tool.get("tools").and_then(Value::as_array) {
            Some(children) => names.extend(children.iter().map(|child| {
                let child = child
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                format!("{name}/{child}")
            })),
            None => names.push(name.to_owned()),
        }
    }
    names.sort();
    names.dedup();
    names
}

fn text_of(content: &Value) -> Vec<String> {
    match content {
        Value::String(text) => vec![text.clone()],
        Value::Array(parts) => parts
            .iter()
            .filter_map(|part| part.get("text").and_then(Value::as_str).map(str::to_owned))
            .collect(),
        _ => Vec::new(),
    }
}

/// Every instruction text of a request, joined by newlines: Anthropic's `system`, Responses'
/// `instructions` and its `system`/`developer` input items, Chat's `system`/`developer`
/// messages.
pub fn instructions(request: &RecordedRequest) -> String {
    let Some(body) = request.body.as_ref() else {
        return String::new();
    };
    let mut texts = Vec::new();
    for key in ["system", "instructions"] {
        if let Some(value) = body.get(key) {
            texts.extend(text_of(value));
        }
    }
    for key in ["input", "messages"] {
        for item in body
            .get(key)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let role = item.get("role").and_then(Value::as_str).unwrap_or_default();
            if role == "system" || role == "developer" {
                texts.extend(item.get("content").map(text_of).unwrap_or_default());
            }
        }
    }
    texts.join("\n")
}

/// The model a request names.
pub fn model_name(request: &RecordedRequest) -> Option<String> {
    request
        .body
        .as_ref()
        .and_then(|body| body.get("model"))
        .and_then(Value::as_str)
        .map(str::to_owned)
}

/// The reasoning effort a request asks for, in whichever spelling its protocol has: OpenAI
/// Responses' `reasoning.effort`, Chat's `reasoning_effort`, Anthropic's `output_config.effort`
/// (Claude Code) or a `thinking` budget of [`Effort::thinking_budget`] (our Anthropic client).
/// OpenAI's `xhigh` reads as [`Effort::XHigh`].
pub fn effort(request: &RecordedRequest) -> Option<Effort> {
    let body = request.body.as_ref()?;
    let named = [
        "/reasoning/effort",
        "/reasoning_effort",
        "/output_config/effort",
    ]
    .into_iter()
    .find_map(|pointer| body.pointer(pointer).and_then(Value::as_str));
    if let Some(name) = named {
        return Effort::parse(name);
    }
    let budget = body
        .pointer("/thinking/budget_tokens")
        .and_then(Value::as_u64)?;
    Effort::ALL
        .into_iter()
        .find(|effort| u64::from(effort.thinking_budget()) == budget)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn recorded(body: Value) -> RecordedRequest {
        RecordedRequest {
            method: "POST".into(),
            path: "/v1/messages".into(),
            headers: Vec::new(),
            body: Some(body),
            messages: Vec::new(),
            scenario: None,
        }
    }

    #[test]
    fn tools_of_every_protocol() {
        let anthropic = recorded(json!({"tools": [{"name": "Read"}, {"name": "Bash"}]}));
        assert_eq!(offered_tools(&anthropic), ["Bash", "Read"]);
        let responses = recorded(json!({"tools": [
            {"type": "function", "name": "exec_command"},
            {"type": "namespace", "name": "multi_agent_v1", "tools": [{"name": "spawn_agent"}]},
            {"type": "web_search"},
        ]}));
        assert_eq!(
            offered_tools(&responses),
            ["exec_command", "multi_agent_v1/spawn_agent", "web_search"]
        );
        let chat = recorded(json!({"tools": [{"type": "function", "function": {"name": "ls"}}]}));
        assert_eq!(offered_tools(&chat), ["ls"]);
        assert_eq!(offered_tools(&recorded(json!({}))), Vec::<String>::new());
    }

    #[test]
    fn instructions_of_every_protocol() {
        let anthropic = recorded(json!({"system": [{"type": "text", "text": "a"}, {"text": "b"}]}));
        assert_eq!(instructions(&anthropic), "a\nb");
        let responses = recorded(json!({"instructions": "base", "input": [
            {"role": "developer", "content": [{"type": "input_text", "text": "persona"}]},
            {"role": "user", "content": [{"type": "input_text", "text": "not this"}]},
        ]}));
        assert_eq!(instructions(&responses), "base\npersona");
        let chat = recorded(json!({"messages": [
            {"role": "system", "content": "sys"},
            {"role": "user", "content": "not this"},
        ], "model": "m-1"}));
        assert_eq!(instructions(&chat), "sys");
        assert_eq!(model_name(&chat).as_deref(), Some("m-1"));
    }

    #[test]
    fn effort_of_every_protocol() {
        let cases = [
            (json!({"reasoning": {"effort": "low"}}), Some(Effort::Low)),
            (json!({"reasoning_effort": "high"}), Some(Effort::High)),
            (
                json!({"output_config": {"effort": "medium"}}),
                Some(Effort::Medium),
            ),
            (
                json!({"thinking": {"type": "enabled", "budget_tokens": Effort::High.thinking_budget()}}),
                Some(Effort::High),
            ),
            (
                json!({"thinking": {"type": "enabled", "budget_tokens": 7}}),
                None,
            ),
            (json!({"reasoning": {"summary": "auto"}}), None),
            (json!({}), None),
        ];
        for (body, expected) in cases {
            assert_eq!(effort(&recorded(body.clone())), expected, "{body}");
        }
    }
}
