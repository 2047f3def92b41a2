//! A reasoning effort on the wire: Anthropic's `thinking` budget, OpenAI's `reasoning.effort`,
//! Chat's `reasoning_effort` only where the configuration says the server takes it.

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use subagent_model::{Effort, ModelKind};
use subagent_test_support::FakeServer;

use super::support::{answer, build, config, request};

const SCENARIOS: &str = "- match: \".*\"\n  steps: [{text: done}]\n";

/// The top-level fields of the recorded body that carry reasoning, and `max_tokens`.
async fn sent(kind: ModelKind, effort: Option<Effort>, chat_takes_it: bool) -> (bool, Value) {
    let server = FakeServer::from_yaml(SCENARIOS).await.unwrap();
    let mut config = config(&server.url(), kind);
    config.reasoning_effort = chat_takes_it;
    let model = build(&config);
    let mut request = request("think about it");
    request.max_tokens = 1000;
    request.effort = effort;
    let response = answer(&*model, request).await;
    assert_eq!(response.message.text(), "done");
    assert_eq!(server.violations(), Vec::<String>::new());
    let body = server.model_requests()[0].body.clone().unwrap();
    let picked: serde_json::Map<String, Value> = [
        "thinking",
        "reasoning",
        "reasoning_effort",
        "max_tokens",
        "max_output_tokens",
    ]
    .into_iter()
    .filter_map(|key| body.get(key).map(|value| (key.to_owned(), value.clone())))
    .collect();
    (model.supports_effort(), Value::Object(picked))
}

#[tokio::test]
async fn each_protocol_sends_the_effort_its_way() {
    let cases = [
        (
            ModelKind::Anthropic,
            false,
            (
                true,
                json!({"thinking": {"type": "enabled", "budget_tokens": 10000}, "max_tokens": 11000}),
            ),
        ),
        (
            ModelKind::OpenaiResponses,
            false,
            (
                true,
                json!({"reasoning": {"effort": "high"}, "max_output_tokens": 1000}),
            ),
        ),
        (
            ModelKind::OpenaiChat,
            true,
            (
                true,
                json!({"reasoning_effort": "high", "max_tokens": 1000}),
            ),
        ),
        // A chat server not known to take it is never sent it, and the model says so.
        (
            ModelKind::OpenaiChat,
            false,
            (false, json!({"max_tokens": 1000})),
        ),
    ];
    for (kind, chat_takes_it, expected) in cases {
        assert_eq!(
            sent(kind, Some(Effort::High), chat_takes_it).await,
            expected,
            "{kind:?}"
        );
    }
}

#[tokio::test]
async fn no_effort_sends_nothing_and_max_is_openais_highest() {
    assert_eq!(
        sent(ModelKind::Anthropic, None, false).await,
        (true, json!({"max_tokens": 1000}))
    );
    assert_eq!(
        sent(ModelKind::OpenaiResponses, None, false).await,
        (true, json!({"max_output_tokens": 1000}))
    );
    assert_eq!(
        sent(ModelKind::OpenaiResponses, Some(Effort::Max), false).await,
        (
            true,
            json!({"reasoning": {"effort": "xhigh"}, "max_output_tokens": 1000})
        )
    );
    assert_eq!(
        sent(ModelKind::Anthropic, Some(Effort::Low), false).await,
        (
            true,
            json!({"thinking": {"type": "enabled", "budget_tokens": 1024}, "max_tokens": 2024})
        )
    );
}
