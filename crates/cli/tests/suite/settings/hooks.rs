//! The settings' hooks in real runs (issue 28): around a spawn child's tool calls, a run's own
//! events in Claude Code's order, the settings' `env`, an agent definition's `hooks:`, and parity
//! with the pinned `claude`.

use subagent_test_support::FakeServer;

use super::{SCENARIO, delegate, project, stderr, stdout};

/// The settings' hooks around a spawn child's tool calls, Claude Code's protocol: `PreToolUse`
/// blocks (exit 2, its stderr to the model), denies or rewrites a call, `PermissionRequest`
/// answers for a child nobody can ask, `PostToolUse` adds context the model reads; each hook
/// gets the call in Claude Code's terms on stdin.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hooks_decide_block_rewrite_and_add_context() {
    let server = FakeServer::from_yaml(SCENARIO).await.unwrap();
    let project = project(&server.url());
    let hook = |name: &str, body: &str| {
        let path = project.home.path().join(name);
        std::fs::write(
            &path,
            format!(
                "#!/bin/bash\ninput=$(cat)\necho \"$input\" >> {log}\n{body}\n",
                log = project.home.path().join("hooks.log").display()
            ),
        )
        .unwrap();
        format!("bash {}", path.display())
    };
    let settings = |hooks: serde_json::Value| {
        project.write(
            ".claude/settings.json",
            &serde_json::json!({"hooks": hooks}).to_string(),
        );
    };
    let log = || std::fs::read_to_string(project.home.path().join("hooks.log")).unwrap_or_default();

    // PermissionRequest allows the command nobody could be asked about.
    let allow = hook(
        "allow.sh",
        r#"echo '{"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": {"behavior": "allow"}}}'"#,
    );
    settings(
        serde_json::json!({"PermissionRequest": [{"matcher": "Bash", "hooks": [{"type": "command", "command": allow}]}]}),
    );
    let (made, _, output) = delegate(&project, &server, &[]);
    assert!(made, "{}", stderr(&output));
    let seen: serde_json::Value = serde_json::from_str(log().lines().next().unwrap()).unwrap();
    assert_eq!(seen["hook_event_name"], "PermissionRequest");
    assert_eq!(seen["tool_name"], "Bash");
    assert_eq!(seen["tool_input"]["command"], "touch made");
    assert_eq!(seen["permission_mode"], "default");

    // PreToolUse exit 2 blocks, whatever allows it; the model reads Claude Code's text.
    let block = hook("block.sh", "echo 'no touching' >&2\nexit 2");
    settings(
        serde_json::json!({"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": block}]}]}),
    );
    let (made, told, output) = delegate(&project, &server, &["--allowedTools", "Bash"]);
    assert!(!made, "{}", stderr(&output));
    assert!(
        told.contains(&format!(
            "PreToolUse:Bash hook error: [{block}]: no touching"
        )),
        "{told}"
    );

    // PreToolUse denies with a reason (JSON), or rewrites the command.
    let deny = hook(
        "deny.sh",
        r#"echo '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": "not today"}}'"#,
    );
    settings(
        serde_json::json!({"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": deny}]}]}),
    );
    let (made, told, _) = delegate(&project, &server, &["--allowedTools", "Bash"]);
    assert!(!made);
    assert!(told.contains("not today"), "{told}");
    let rewrite = hook(
        "rewrite.sh",
        r#"echo '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow", "updatedInput": {"command": "touch rewritten"}}}'"#,
    );
    settings(
        serde_json::json!({"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": rewrite}]}]}),
    );
    let (made, _, output) = delegate(&project, &server, &[]);
    assert!(!made, "{}", stderr(&output));
    assert!(
        project.dir.join("rewritten").exists(),
        "{}",
        stderr(&output)
    );

    // PostToolUse adds context to the result the model reads; it sees the file tool's
    // `file_path` as Claude Code's Read has it.
    let context = hook(
        "context.sh",
        r#"echo '{"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "checked by the hook"}}'"#,
    );
    settings(
        serde_json::json!({"PostToolUse": [{"matcher": "Read", "hooks": [{"type": "command", "command": context}]}]}),
    );
    let (_, told, _) = delegate(&project, &server, &[]);
    assert!(
        told.contains("TOKEN=from-dotenv\\n\\n\\nchecked by the hook"),
        "{told}"
    );
    let last: serde_json::Value = serde_json::from_str(log().lines().last().unwrap()).unwrap();
    assert_eq!(last["hook_event_name"], "PostToolUse");
    assert_eq!(
        last["tool_input"]["file_path"],
        project.dir.join(".env").display().to_string()
    );
}

/// Parity with the pinned `claude`: the same project settings file, whose `PreToolUse` hook
/// blocks `Bash` with exit 2, run once under the real `claude` and once under a spawn child:
/// both skip the command, the model reads the same text, and the hook reads the same keys.
#[cfg(feature = "e2e")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_blocking_hook_gives_the_model_what_claude_gives_it() {
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
    let server = FakeServer::from_yaml(BOTH).await.unwrap();
    let project = project(&server.url());
    let script = project.home.path().join("block.sh");
    let log = project.home.path().join("hooks.log");
    std::fs::write(
        &script,
        format!(
            "#!/bin/bash\ncat >> {}\necho >> {}\necho 'no touching' >&2\nexit 2\n",
            log.display(),
            log.display()
        ),
    )
    .unwrap();
    let command = format!("bash {}", script.display());
    project.write(
        "project/.claude/settings.json",
        &serde_json::json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": command}]}]}}).to_string(),
    );
    let row = super::super::pinned::claude_code_row(
        project.home.path(),
        &server.url(),
        "      permission_mode: bypassPermissions\n",
    );
    std::fs::write(
        &project.preset,
        format!(
            "version: 1\nmodel: {{kind: anthropic, name: m, base_url: \"{url}\", api_key_env: FAKE_KEY}}\nproviders:\n  - {{name: spawn, kind: spawn, config: {{permission_mode: bypass}}}}\n{row}tools: [{{name: subagent, provider: spawn}}]\n",
            url = server.url()
        ),
    )
    .unwrap();
    let mut told = Vec::new();
    for (provider, prompt) in [("claude-code", "parity claude"), ("spawn", "parity spawn")] {
        let before = server.model_requests().len();
        let output = project
            .subagent()
            .args(["delegate", "--preset"])
            .arg(&project.preset)
            .args(["--provider", provider, prompt])
            .output();
        assert!(
            !project.dir.join("made").exists(),
            "{provider}: {}",
            stderr(&output)
        );
        let result = server.model_requests()[before..]
            .iter()
            .flat_map(|r| r.messages.clone())
            .flat_map(|m| m.content)
            .find_map(|block| match block {
                subagent_session::ContentBlock::ToolResult {
                    content, is_error, ..
                } => Some((content.to_text(), is_error)),
                _ => None,
            })
            .unwrap_or_else(|| panic!("{provider}: no tool result: {}", stderr(&output)));
        told.push(result);
    }
    let expected = format!("PreToolUse:Bash hook error: [{command}]: no touching\n");
    assert_eq!(told, vec![(expected.clone(), true), (expected, true)]);
    let seen: Vec<serde_json::Value> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(seen.len(), 2);
    for key in ["hook_event_name", "tool_name"] {
        assert_eq!(seen[0][key], seen[1][key], "{key}");
    }
    assert_eq!(
        seen[0]["tool_input"]["command"],
        seen[1]["tool_input"]["command"]
    );
    assert_eq!(seen[0]["cwd"], seen[1]["cwd"]);
}

/// A `Stop` hook keeps a run going once: its exit 2 stderr is the model's next message, and the
/// next `Stop` tells it `stop_hook_active`, so it lets the run end.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stop_hook_keeps_the_run_going_once() {
    const TWICE: &str = r#"
- match: "answer twice"
  steps:
    - text: "first answer"
- match: "run the tests first"
  steps:
    - text: "second answer"
"#;
    let server = FakeServer::from_yaml(TWICE).await.unwrap();
    let project = project(&server.url());
    let script = project.home.path().join("stop.sh");
    std::fs::write(
        &script,
        "#!/bin/bash\nif grep -q '\"stop_hook_active\":true'; then exit 0; fi\necho 'run the tests first' >&2\nexit 2\n",
    )
    .unwrap();
    let command = format!("bash {}", script.display());
    project.write(
        ".claude/settings.json",
        &serde_json::json!({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": command}]}]}}).to_string(),
    );
    let output = project
        .subagent()
        .args(["delegate", "--json", "--preset"])
        .arg(&project.preset)
        .args(["--provider", "spawn", "answer twice"])
        .output();
    assert!(
        output.status.success(),
        "{}{}",
        stderr(&output),
        stdout(&output)
    );
    let outcome: serde_json::Value =
        serde_json::from_str(stdout(&output).lines().last().unwrap()).unwrap();
    assert_eq!(outcome["text"], "second answer");
    let last = server.model_requests().last().unwrap().messages.clone();
    let told = serde_json::to_string(&last).unwrap();
    assert!(
        told.contains(&format!(
            "Stop hook error: [{command}]: run the tests first"
        )),
        "{told}"
    );
    assert_eq!(server.model_requests().len(), 2);
}

/// The run's own events, in Claude Code's order: the session's `SessionStart` and
/// `UserPromptSubmit` (whose context reaches the model with the prompt), a child's
/// `SubagentStart` and `SubagentStop`, the session's `Stop` and `SessionEnd`; a blocking
/// `UserPromptSubmit` stops the run before any model call.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_calls_its_session_and_subagent_hooks_in_order() {
    const PLAN: &str = r#"
- match: "plan the day"
  steps:
    - tool_calls:
        - id: call_sub
          name: subagent
          input: {prompt: "CHILD-WORK look around", description: "look around"}
    - text: "all done"
- match: "CHILD-WORK"
  steps:
    - text: "child done"
"#;
    let server = FakeServer::from_yaml(PLAN).await.unwrap();
    let project = project(&server.url());
    let log = project.home.path().join("events.log");
    let script = project.home.path().join("log.sh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/bash\ninput=$(cat)\nevent=$(echo \"$input\" | sed -E 's/.*\"hook_event_name\":\"([A-Za-z]+)\".*/\\1/')\necho \"$event\" >> {log}\nif [ \"$event\" = UserPromptSubmit ] && echo \"$input\" | grep -q 'forbidden'; then echo 'no such prompts' >&2; exit 2; fi\nif [ \"$event\" = SessionStart ] || [ \"$event\" = UserPromptSubmit ]; then echo \"context from $event\"; fi\n",
            log = log.display()
        ),
    )
    .unwrap();
    let command = format!("bash {}", script.display());
    let every = [
        "SessionStart",
        "UserPromptSubmit",
        "SubagentStart",
        "SubagentStop",
        "Stop",
        "SessionEnd",
    ];
    let hooks: serde_json::Map<String, serde_json::Value> = every
        .iter()
        .map(|event| {
            (
                (*event).to_owned(),
                serde_json::json!([{"hooks": [{"type": "command", "command": command}]}]),
            )
        })
        .collect();
    project.write(
        ".claude/settings.json",
        &serde_json::json!({"hooks": hooks}).to_string(),
    );
    let output = project
        .subagent()
        .args(["run", "--preset"])
        .arg(&project.preset)
        .arg("plan the day")
        .output();
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(
        std::fs::read_to_string(&log)
            .unwrap()
            .lines()
            .collect::<Vec<_>>(),
        every
    );
    let first = serde_json::to_string(&server.model_requests()[0].messages).unwrap();
    assert!(
        first.contains("context from SessionStart")
            && first.contains("context from UserPromptSubmit"),
        "{first}"
    );

    // A prompt the hook refuses: no model call, the hook's text says why.
    let before = server.model_requests().len();
    let output = project
        .subagent()
        .args(["run", "--preset"])
        .arg(&project.preset)
        .arg("plan the day, forbidden")
        .output();
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert!(
        stderr(&output).contains(&format!(
            "UserPromptSubmit hook error: [{command}]: no such prompts"
        )),
        "{}",
        stderr(&output)
    );
    assert_eq!(server.model_requests().len(), before);
}

/// The settings' `env` reaches what a run starts: its commands and its hooks.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_settings_env_reaches_commands_and_hooks() {
    const ECHO: &str = r#"
- match: "say it"
  steps:
    - tool_calls:
        - name: bash
          input: {command: "echo \"greeting=$GREETING\""}
    - text: "said"
"#;
    let server = FakeServer::from_yaml(ECHO).await.unwrap();
    let project = project(&server.url());
    let seen = project.home.path().join("seen.txt");
    let command = format!("bash -c 'echo \"$GREETING\" > {}'", seen.display());
    project.write(
        ".claude/settings.json",
        &serde_json::json!({
            "env": {"GREETING": "from-settings"},
            "permissions": {"allow": ["Bash(echo:*)"]},
            "hooks": {"PostToolUse": [{"hooks": [{"type": "command", "command": command}]}]}
        })
        .to_string(),
    );
    let output = project
        .subagent()
        .args(["delegate", "--preset"])
        .arg(&project.preset)
        .args(["--provider", "spawn", "say it"])
        .output();
    assert!(output.status.success(), "{}", stderr(&output));
    let told = serde_json::to_string(&server.model_requests().last().unwrap().messages).unwrap();
    assert!(told.contains("greeting=from-settings"), "{told}");
    assert_eq!(std::fs::read_to_string(&seen).unwrap(), "from-settings\n");
}

/// An agent definition's `hooks:` run in that agent's runs only (on spawn), beside the
/// settings': `delegate --agent` and a parent's delegation to the agent type both get them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agents_own_hooks_run_in_its_runs_only() {
    const BOTH: &str = r#"
- match: "make it"
  steps:
    - tool_calls:
        - name: bash
          input: {command: "touch made"}
    - text: "done"
- match: "send the guard"
  steps:
    - tool_calls:
        - id: call_sub
          name: subagent
          input: {prompt: "make it", description: "make it", subagent_type: guarded}
    - text: "parent done"
"#;
    let server = FakeServer::from_yaml(BOTH).await.unwrap();
    let project = project(&server.url());
    let script = project.home.path().join("no.sh");
    std::fs::write(
        &script,
        "#!/bin/bash\necho 'the guard says no' >&2\nexit 2\n",
    )
    .unwrap();
    let command = format!("bash {}", script.display());
    project.write(
        "project/.subagents/agents/guarded.md",
        &format!(
            "---\nname: guarded\ndescription: Runs commands under a guard.\nhooks:\n  PreToolUse:\n    - matcher: Bash\n      hooks:\n        - type: command\n          command: \"{command}\"\n---\nDo the task.\n"
        ),
    );
    let (made, told, output) = delegate(
        &project,
        &server,
        &["--agent", "guarded", "--allowedTools", "Bash"],
    );
    assert!(!made, "{}", stderr(&output));
    assert!(
        told.contains(&format!(
            "PreToolUse:Bash hook error: [{command}]: the guard says no"
        )),
        "{told}"
    );
    // Not the agent: no guard.
    let (made, _, output) = delegate(&project, &server, &["--allowedTools", "Bash"]);
    assert!(made, "{}", stderr(&output));
    // A parent's child of that type: guarded; the parent itself is not.
    let _ = std::fs::remove_file(project.dir.join("made"));
    let output = project
        .subagent()
        .args(["run", "--preset"])
        .arg(&project.preset)
        .args(["--allowedTools", "Bash", "send the guard"])
        .output();
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(!project.dir.join("made").exists(), "{}", stderr(&output));
}

/// A background child nobody can ask: its command runs because the settings'
/// `PermissionRequest` hook allows it (Claude Code's one chance for a background agent), and is
/// denied when the hook says nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_background_childs_command_runs_when_a_permission_request_hook_allows_it() {
    let scenario = format!(
        r#"
- match: "send it away"
  steps:
    - tool_calls:
        - id: call_bg
          name: subagent
          input: {{description: bg make, prompt: "make it", run_in_background: true}}
    - tool_calls:
        - {{id: call_read, name: task_output, input: {{task_id: call_bg, timeout: 600000}}}}
    - text: "parent done"
{SCENARIO}"#
    );
    let server = FakeServer::from_yaml(&scenario).await.unwrap();
    let project = project(&server.url());
    let script = project.home.path().join("allow.sh");
    std::fs::write(
        &script,
        "#!/bin/bash\ninput=$(cat)\ncase \"$input\" in\n*'touch made'*) echo '{\"hookSpecificOutput\": {\"hookEventName\": \"PermissionRequest\", \"decision\": {\"behavior\": \"allow\"}}}' ;;\nesac\n",
    )
    .unwrap();
    let run = |hooked: bool| {
        let _ = std::fs::remove_file(project.dir.join("made"));
        let hooks = if hooked {
            serde_json::json!({"PermissionRequest": [{"matcher": "Bash", "hooks": [{"type": "command", "command": format!("bash {}", script.display())}]}]})
        } else {
            serde_json::json!({})
        };
        project.write(
            ".claude/settings.json",
            &serde_json::json!({"hooks": hooks}).to_string(),
        );
        let output = project
            .subagent()
            .args(["run", "--preset"])
            .arg(&project.preset)
            .arg("send it away")
            .output();
        assert!(output.status.success(), "{}", stderr(&output));
        (project.dir.join("made").exists(), stderr(&output))
    };
    let (made, log) = run(true);
    assert!(made, "{log}");
    let (made, log) = run(false);
    assert!(!made, "{log}");
    assert!(log.contains("background run never asks"), "{log}");
}
