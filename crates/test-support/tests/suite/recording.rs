//! A long load run keeps only the latest requests (`keep_requests`, `fake-model
//! --keep-requests`): memory stays flat while every request is still counted and answered.

use pretty_assertions::assert_eq;
use subagent_test_support::FakeServer;

async fn ask(server: &FakeServer, prompt: &str) -> String {
    reqwest::Client::new()
        .post(format!("{}/v1/messages", server.url()))
        .json(
            &serde_json::json!({"model": "m", "max_tokens": 10, "stream": true,
            "messages": [{"role": "user", "content": prompt}]}),
        )
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap()
}

fn prompts(server: &FakeServer) -> Vec<String> {
    server
        .requests()
        .iter()
        .map(|r| r.body.as_ref().unwrap()["messages"][0]["content"].to_string())
        .collect()
}

#[tokio::test]
async fn only_the_latest_requests_are_kept_and_every_one_is_answered() {
    let server = FakeServer::from_yaml("- match: \".*\"\n  steps: [{text: \"hi\"}]\n")
        .await
        .unwrap();
    assert!(ask(&server, "one").await.contains("message_stop"));
    assert!(ask(&server, "two").await.contains("message_stop"));
    server.keep_requests(1);
    assert_eq!(prompts(&server), vec!["\"two\""]);
    assert!(ask(&server, "three").await.contains("message_stop"));
    assert_eq!(prompts(&server), vec!["\"three\""]);
    server.keep_requests(0);
    assert!(ask(&server, "four").await.contains("message_stop"));
    server.wait_requests(4).await;
    assert_eq!(prompts(&server), Vec::<String>::new());
}
