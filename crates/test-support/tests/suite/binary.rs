//! The `fake-model` binary serves a scenario file and reports its port.

use std::process::{Command, Stdio};

#[tokio::test]
async fn fake_model_binary_serves_until_killed() {
    let dir = std::env::temp_dir().join(format!("fake-model-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let scenario = dir.join("s.yaml");
    std::fs::write(
        &scenario,
        "- match: \".*\"\n  steps: [{text: \"hi from fake\"}]\n",
    )
    .unwrap();
    let port_file = dir.join("port");
    let mut child = Command::new(env!("CARGO_BIN_EXE_fake-model"))
        .arg("--scenario")
        .arg(&scenario)
        .arg("--port-file")
        .arg(&port_file)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let line = subagent_test_support::procs::first_line(&mut child);
    let port: u16 = line.trim().parse().unwrap();
    assert_eq!(
        std::fs::read_to_string(&port_file).unwrap().trim(),
        port.to_string()
    );
    let text = reqwest::Client::new()
        .post(format!("http://127.0.0.1:{port}/v1/messages?beta=true"))
        .json(
            &serde_json::json!({"model": "m", "max_tokens": 10, "stream": true,
            "messages": [{"role": "user", "content": "hello"}]}),
        )
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(text.contains("\" fake\""), "{text}");
    assert!(text.contains("message_stop"));
    child.kill().unwrap();
    child.wait().unwrap();
    std::fs::remove_dir_all(&dir).unwrap();

    let bad = Command::new(env!("CARGO_BIN_EXE_fake-model"))
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("--scenario is required"));
}
