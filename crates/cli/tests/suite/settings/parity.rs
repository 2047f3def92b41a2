//! Parity with the pinned `claude` (issue 28): the same project settings file and the same hook
//! script run once under the real `claude` and once under a spawn child, against the fake model
//! server; the decisions (was the command run, and which one) and what reached the model are
//! compared. One case per hook behaviour: allow, deny with a reason, ask, rewrite the input, add
//! context, block a prompt, a hook that times out and one that fails.

use subagent_test_support::FakeServer;

use super::{project, stderr};

/// Both children's model runs `touch made` with their shell tool, then answers.
const BOTH: &str = r#"
- match: "parity claude"
  steps:
    - tool_calls:
        - name: Bash
          input: {command: "touch made", description: "make the file"}
    - text: "done"
- match: "parity spawn"
  steps:
    - tool_calls:
        - name: bash
          input: {command: "touch made"}
    - text: "done"
"#;

/// One hook behaviour: its event, its script (after it has read its stdin), its timeout, the
/// modes the two children run in, and what both must agree on.
struct Case {
    name: &'static str,
    event: &'static str,
    script: &'static str,
    timeout: Option<u64>,
    /// claude's `--permission-mode` and spawn's `permission_mode`.
    modes: (&'static str, &'static str),
    /// The file the command leaves (`made`, `rewritten`), if it runs.
    leaves: Option<&'static str>,
    /// Text the model must be shown (in a tool result or beside it), if any.
    shown: Option<&'static str>,
    /// Whether the prompt reaches the model at all.
    asked: bool,
}

const CASES: [Case; 8] = [
    Case {
        name: "allow",
        event: "PreToolUse",
        script: r#"echo '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow", "permissionDecisionReason": "fine by the hook"}}'"#,
        timeout: None,
        modes: ("dontAsk", "dont-ask"),
        leaves: Some("made"),
        shown: None,
        asked: true,
    },
    Case {
        name: "deny",
        event: "PreToolUse",
        script: r#"echo '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": "not today"}}'"#,
        timeout: None,
        modes: ("bypassPermissions", "bypass"),
        leaves: None,
        shown: Some("not today"),
        asked: true,
    },
    Case {
        name: "ask",
        event: "PreToolUse",
        script: r#"echo '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "ask", "permissionDecisionReason": "a person should look"}}'"#,
        timeout: None,
        modes: ("bypassPermissions", "bypass"),
        leaves: None,
        shown: None,
        asked: true,
    },
    Case {
        name: "rewrite",
        event: "PreToolUse",
        script: r#"echo '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow", "updatedInput": {"command": "touch rewritten"}}}'"#,
        timeout: None,
        modes: ("bypassPermissions", "bypass"),
        leaves: Some("rewritten"),
        shown: None,
        asked: true,
    },
    Case {
        name: "context",
        event: "PostToolUse",
        script: r#"echo '{"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "checked by the hook"}}'"#,
        timeout: None,
        modes: ("bypassPermissions", "bypass"),
        leaves: Some("made"),
        shown: Some("checked by the hook"),
        asked: true,
    },
    Case {
        name: "block a prompt",
        event: "UserPromptSubmit",
        script: "echo 'not this prompt' >&2\nexit 2",
        timeout: None,
        modes: ("bypassPermissions", "bypass"),
        leaves: None,
        shown: None,
        asked: false,
    },
    Case {
        name: "timeout",
        event: "PreToolUse",
        script: "sleep 30",
        timeout: Some(1),
        modes: ("bypassPermissions", "bypass"),
        leaves: Some("made"),
        shown: None,
        asked: true,
    },
    Case {
        name: "fails",
        event: "PreToolUse",
        script: "echo 'broken hook' >&2\nexit 1",
        timeout: None,
        modes: ("bypassPermissions", "bypass"),
        leaves: Some("made"),
        shown: None,
        asked: true,
    },
];

/// What one child's run came to: the files its command left, whether the model was asked, and
/// everything the model was shown after its first answer.
#[derive(Debug, PartialEq)]
struct Seen {
    made: bool,
    rewritten: bool,
    asked: bool,
    shown: Option<bool>,
}

#[cfg(feature = "e2e")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_hook_behaviour_decides_as_claude_decides() {
    let server = FakeServer::from_yaml(BOTH).await.unwrap();
    let project = project(&server.url());
    let mut failures = Vec::new();
    for case in &CASES {
        let script = project.home.path().join("hook.sh");
        std::fs::write(
            &script,
            format!("#!/bin/bash\ncat > /dev/null\n{}\n", case.script),
        )
        .unwrap();
        let mut hook =
            serde_json::json!({"type": "command", "command": format!("bash {}", script.display())});
        if let Some(timeout) = case.timeout {
            hook["timeout"] = timeout.into();
        }
        let mut group = serde_json::json!({"hooks": [hook]});
        if case.event.ends_with("ToolUse") {
            group["matcher"] = "Bash".into();
        }
        project.write(
            "project/.claude/settings.json",
            &serde_json::json!({"hooks": {case.event: [group]}}).to_string(),
        );
        let row = super::super::pinned::claude_code_row(
            project.home.path(),
            &server.url(),
            &format!("      permission_mode: {}\n", case.modes.0),
        );
        std::fs::write(
            &project.preset,
            format!(
                "version: 1\nmodel: {{kind: anthropic, name: m, base_url: \"{url}\", api_key_env: FAKE_KEY}}\nproviders:\n  - {{name: spawn, kind: spawn, config: {{permission_mode: {spawn}}}}}\n{row}tools: [{{name: subagent, provider: spawn}}]\n",
                url = server.url(),
                spawn = case.modes.1,
            ),
        )
        .unwrap();
        let mut seen = Vec::new();
        for (provider, prompt) in [("claude-code", "parity claude"), ("spawn", "parity spawn")] {
            for file in ["made", "rewritten"] {
                let _ = std::fs::remove_file(project.dir.join(file));
            }
            let before = server.model_requests().len();
            let output = project
                .subagent()
                .args(["delegate", "--preset"])
                .arg(&project.preset)
                .args(["--provider", provider, prompt])
                .output();
            let requests = &server.model_requests()[before..];
            let shown = case.shown.map(|text| {
                requests
                    .iter()
                    .skip(1)
                    .any(|r| serde_json::to_string(&r.messages).unwrap().contains(text))
            });
            let one = Seen {
                made: project.dir.join("made").exists(),
                rewritten: project.dir.join("rewritten").exists(),
                asked: !requests.is_empty(),
                shown,
            };
            seen.push((one, stderr(&output)));
        }
        let expected = Seen {
            made: case.leaves == Some("made"),
            rewritten: case.leaves == Some("rewritten"),
            asked: case.asked,
            shown: case.shown.map(|_| true),
        };
        for ((one, log), provider) in seen.iter().zip(["claude", "spawn"]) {
            if *one != expected {
                failures.push(format!(
                    "{} ({provider}): {one:?}, expected {expected:?}; stderr: {log}",
                    case.name
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
