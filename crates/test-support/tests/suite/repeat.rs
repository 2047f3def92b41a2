//! A step's `repeat` streams generated text: every protocol's events carry exactly the bytes
//! asked for, read by the real model clients, and an answer without end goes on until the
//! client goes away.

use futures::StreamExt;
use pretty_assertions::assert_eq;
use subagent_model::{ModelConfig, ModelEvent, ModelKind, ModelRequest, build_with_env};
use subagent_session::{Message, StopReason};
use subagent_test_support::FakeServer;
use tokio_util::sync::CancellationToken;

const KINDS: [ModelKind; 3] = [
    ModelKind::Anthropic,
    ModelKind::OpenaiResponses,
    ModelKind::OpenaiChat,
];

fn model(server: &FakeServer, kind: ModelKind) -> std::sync::Arc<dyn subagent_model::Model> {
    let mut config = ModelConfig::new(kind, "fake").with_base_url(server.url());
    config.api_key_env = Some("KEY".into());
    build_with_env(&config, |_| Some("k".into())).unwrap()
}

fn request(prompt: &str) -> ModelRequest {
    ModelRequest::new("fake", vec![Message::user(prompt)])
}

#[tokio::test]
async fn every_protocol_streams_the_generated_bytes() {
    let server = FakeServer::from_yaml(
        "- match: \"ascii\"\n  steps: [{text: \"start:\", repeat: {text: \"ab\", bytes: 100001}}]\n\
         - match: \"wide\"\n  steps: [{repeat: {text: \"é\\\"\", bytes: 40000}}]\n",
    )
    .await
    .unwrap();
    for kind in KINDS {
        let model = model(&server, kind);
        let answer = subagent_model::complete(&*model, request("ascii"), CancellationToken::new())
            .await
            .unwrap();
        let text = answer.message.text();
        assert_eq!(answer.stop, StopReason::Completed, "{kind:?}");
        assert_eq!(text.len(), "start:".len() + 100_001, "{kind:?}");
        // Compared whole, but not printed whole.
        assert!(
            text == format!("start:{}a", "ab".repeat(50_000)),
            "{kind:?}"
        );
        // A character of two bytes and one that JSON escapes, 3 bytes a repetition: 40,000
        // bytes would end inside the 13,334th "é", so the text ends one byte short.
        let answer = subagent_model::complete(&*model, request("wide"), CancellationToken::new())
            .await
            .unwrap();
        let text = answer.message.text();
        assert_eq!(text.len(), 39_999, "{kind:?}");
        assert!(text == "é\"".repeat(13_333), "{kind:?}");
    }
    assert_eq!(server.violations(), Vec::<String>::new());
}

#[tokio::test]
async fn without_bytes_the_answer_goes_on_until_the_client_leaves() {
    let server = FakeServer::from_yaml("- match: \".*\"\n  steps: [{repeat: {}}]\n")
        .await
        .unwrap();
    let mut stream = model(&server, ModelKind::Anthropic)
        .stream(request("go"), CancellationToken::new())
        .await
        .unwrap();
    let mut bytes = 0;
    while bytes < 4 << 20 {
        match stream.next().await {
            Some(Ok(ModelEvent::TextDelta { text })) => {
                assert!(text.bytes().all(|b| b == b'x'));
                bytes += text.len();
            }
            Some(Ok(ModelEvent::Stop { .. })) | None => panic!("the answer ended"),
            Some(other) => {
                other.unwrap();
            }
        }
    }
    drop(stream);
    server.wait_dropped(1).await;
    assert_eq!(server.dropped_streams(), 1);
}
