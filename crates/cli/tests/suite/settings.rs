//! Claude Code's settings files reach every in-process run (issue 28): permission rules from
//! `~/.claude/settings.json`, a project's `.claude/settings.json` (its allow rules only once the
//! project is trusted), `.subagents/` twins, the managed policy and the command line's
//! `--allowedTools`/`--disallowedTools`/`--settings`; `subagent settings` shows them with their
//! sources and `subagent trust` records trust.

use std::path::PathBuf;

use pretty_assertions::assert_eq;
use subagent_test_support::FakeServer;
use subagent_test_support::cli::Subagent;

/// The model runs `touch made` with bash and reads `.env`, then answers.
const SCENARIO: &str = r#"
- match: "make it"
  steps:
    - tool_calls:
        - name: bash
          input: {command: "touch made"}
    - tool_calls:
        - name: read_file
          input: {path: ".env"}
    - text: "done"
"#;

/// A project (its own directory below a home) with a preset on the fake server.
struct Project {
    home: tempfile::TempDir,
    dir: PathBuf,
    preset: PathBuf,
}

impl Project {
    fn new(url: &str) -> Self {
        let home = tempfile::tempdir().unwrap();
        let dir = home.path().join("project");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(".env"), "TOKEN=from-dotenv\n").unwrap();
        let preset = home.path().join("preset.yaml");
        std::fs::write(
            &preset,
            format!(
                "version: 1\nmodel: {{kind: anthropic, name: m, base_url: \"{url}\", api_key_env: FAKE_KEY}}\nproviders: [{{name: spawn, kind: spawn}}]\ntools: [{{name: subagent, provider: spawn}}]\n"
            ),
        )
        .unwrap();
        Self {
            dir: std::fs::canonicalize(dir).unwrap(),
            home,
            preset,
        }
    }

    fn write(&self, relative: &str, text: &str) {
        let path = self.home.path().join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    fn subagent(&self) -> Subagent {
        Subagent::new(assert_cmd::cargo::cargo_bin("subagent"), self.home.path())
            .cwd(&self.dir)
            .fake_key()
            .env(
                "SUBAGENT_MANAGED_SETTINGS",
                self.home.path().join("managed.json"),
            )
    }

    /// `subagent delegate` of "make it" on the spawn row with `args`: whether `made` was
    /// created, and what the model was told of the bash and read calls.
    fn delegate(&self, server: &FakeServer, args: &[&str]) -> (bool, String, std::process::Output) {
        let _ = std::fs::remove_file(self.dir.join("made"));
        let before = server.model_requests().len();
        let mut command = self.subagent().arg("delegate");
        if !args.contains(&"--preset") {
            command = command.arg("--preset").arg(&self.preset);
        }
        let output = command
            .args(["--provider", "spawn"])
            .args(args)
            .arg("make it")
            .output();
        let told = server.model_requests()[before..]
            .iter()
            .map(|r| serde_json::to_string(&r.messages).unwrap())
            .collect::<Vec<_>>()
            .join("\n");
        (self.dir.join("made").exists(), told, output)
    }
}

fn stderr(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn stdout(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rules_from_every_source_decide_a_childs_calls() {
    let server = FakeServer::from_yaml(SCENARIO).await.unwrap();
    let project = Project::new(&server.url());

    // No rule: nobody can be asked, so the command is refused; the model is told.
    let (made, told, output) = project.delegate(&server, &[]);
    assert!(!made, "{}", stderr(&output));
    assert!(told.contains("permission denied"), "{told}");
    assert!(
        told.contains("TOKEN=from-dotenv"),
        "reads are allowed: {told}"
    );

    // The user's ~/.claude/settings.json allows it, and denies the read.
    project.write(
        ".claude/settings.json",
        r#"{"permissions": {"allow": ["Bash(touch made)"], "deny": ["Read(./.env)"]}}"#,
    );
    let (made, told, output) = project.delegate(&server, &[]);
    assert!(made, "{}", stderr(&output));
    assert!(!told.contains("TOKEN=from-dotenv"), "{told}");

    // A flag's deny beats the user's allow.
    let (made, _, output) = project.delegate(&server, &["--disallowedTools", "Bash(touch:*)"]);
    assert!(!made, "{}", stderr(&output));
    std::fs::remove_file(project.home.path().join(".claude/settings.json")).unwrap();

    // A flag's allow, in our tool name.
    let (made, _, output) = project.delegate(&server, &["--allowedTools", "bash(touch made)"]);
    assert!(made, "{}", stderr(&output));

    // The preset's `settings:` key.
    let with_settings = project.home.path().join("with-settings.yaml");
    let preset = std::fs::read_to_string(&project.preset).unwrap();
    std::fs::write(
        &with_settings,
        format!("{preset}settings:\n  permissions:\n    allow: [\"Bash(touch made)\"]\n"),
    )
    .unwrap();
    let (made, _, output) =
        project.delegate(&server, &["--preset", with_settings.to_str().unwrap()]);
    assert!(made, "{}", stderr(&output));
    let shown = project
        .subagent()
        .args(["settings", "--preset"])
        .arg(&with_settings)
        .output();
    assert!(
        stdout(&shown).contains("  allow  Bash(touch made)   preset\n"),
        "{}",
        stdout(&shown)
    );

    // --settings as JSON ranks with the flags; the managed policy's deny beats it.
    let json = r#"{"permissions": {"allow": ["Bash"]}}"#;
    let (made, _, output) = project.delegate(&server, &["--settings", json]);
    assert!(made, "{}", stderr(&output));
    project.write("managed.json", r#"{"permissions": {"deny": ["Bash"]}}"#);
    let (made, _, output) = project.delegate(&server, &["--settings", json]);
    assert!(!made, "{}", stderr(&output));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_untrusted_project_cannot_widen_what_a_child_may_do() {
    let server = FakeServer::from_yaml(SCENARIO).await.unwrap();
    let project = Project::new(&server.url());
    project.write(
        "project/.claude/settings.json",
        r#"{"permissions": {"allow": ["Bash(touch made)"], "deny": ["Read(./.env)"]}}"#,
    );

    // Its deny counts at once; its allow is ignored, with a line that says how to trust it.
    let (made, told, output) = project.delegate(&server, &[]);
    assert!(!made, "{}", stderr(&output));
    assert!(!told.contains("TOKEN=from-dotenv"), "{told}");
    assert!(
        stderr(&output).contains("warning: Ignoring 1 permissions.allow entry from .claude/settings.json: this workspace has not been trusted"),
        "{}",
        stderr(&output)
    );

    // Trusted with `subagent trust`: its allow counts; revoked: it does not.
    let trusted = project.subagent().arg("trust").output();
    assert!(trusted.status.success(), "{}", stderr(&trusted));
    let record = project.home.path().join(".subagents/trusted-projects.json");
    assert_eq!(
        stdout(&trusted),
        format!(
            "{} is trusted: its settings' allow rules count (recorded in {}; `subagent trust --revoke` takes it back)\n",
            project.dir.display(),
            record.display()
        )
    );
    let (made, _, output) = project.delegate(&server, &[]);
    assert!(made, "{}", stderr(&output));
    let listed = project.subagent().args(["trust", "--list"]).output();
    assert_eq!(
        stdout(&listed),
        format!(
            "record: {}\n  {}\n",
            record.display(),
            project.dir.display()
        )
    );
    let revoked = project.subagent().args(["trust", "--revoke"]).output();
    assert!(
        stdout(&revoked).contains("is no longer trusted"),
        "{}",
        stdout(&revoked)
    );
    let (made, _, _) = project.delegate(&server, &[]);
    assert!(!made);

    // Claude Code's own record of trust counts the same.
    project.write(
        ".claude.json",
        &format!(
            r#"{{"projects": {{"{}": {{"hasTrustDialogAccepted": true}}}}}}"#,
            project.dir.display()
        ),
    );
    let (made, _, output) = project.delegate(&server, &[]);
    assert!(made, "{}", stderr(&output));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_run_parent_obeys_the_rules_and_its_resume_hint_repeats_the_flags() {
    let server = FakeServer::from_yaml(SCENARIO).await.unwrap();
    let project = Project::new(&server.url());
    let output = project
        .subagent()
        .args(["run", "--preset"])
        .arg(&project.preset)
        .args([
            "--allowedTools",
            "Bash(touch made)",
            "--disallowedTools",
            "Read(./.env)",
        ])
        .arg("make it")
        .output();
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(project.dir.join("made").exists(), "{}", stderr(&output));
    let told = serde_json::to_string(&server.model_requests().last().unwrap().messages).unwrap();
    assert!(!told.contains("TOKEN=from-dotenv"), "{told}");
    assert!(
        stderr(&output).contains(&format!(
            "subagent run --preset {} --allowedTools 'Bash(touch made)' --disallowedTools 'Read(./.env)' --resume ",
            project.preset.display()
        )),
        "{}",
        stderr(&output)
    );
}

#[test]
fn bad_settings_are_refused_with_their_place_and_code() {
    let project = Project::new("http://127.0.0.1:9");
    project.write(
        "project/.claude/settings.json",
        "{\n  \"permissions\": {\"allow\": [\"Bash\",]}\n}\n",
    );
    let output = project.subagent().arg("settings").output();
    assert_eq!(output.status.code(), Some(2));
    let path = project.dir.join(".claude/settings.json");
    assert!(
        stderr(&output).contains(&format!(
            "\nerror[SETTINGS_INVALID]: {}:2:36: trailing comma\n",
            path.display()
        )),
        "{}",
        stderr(&output)
    );
    std::fs::remove_file(&path).unwrap();
    let output = project
        .subagent()
        .args(["delegate", "--preset"])
        .arg(&project.preset)
        .args(["--allowedTools", "Bash(npm run", "hello"])
        .output();
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("PERMISSION_RULE_INVALID"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn settings_shows_each_value_and_where_it_came_from() {
    let project = Project::new("http://127.0.0.1:9");
    project.write(
        ".claude/settings.json",
        r#"{"permissions": {"allow": ["Bash(npm run test:*)"], "defaultMode": "acceptEdits"}, "env": {"A": "1"}}"#,
    );
    project.write(
        "project/.claude/settings.json",
        r#"{"permissions": {"allow": ["Edit(src/**)"], "deny": ["Read(./.env)"]}}"#,
    );
    let output = project.subagent().arg("settings").output();
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stdout(&output).replace(&project.home.path().display().to_string(), "HOME");
    assert_eq!(
        text,
        r#"permissions
  mode     acceptEdits            user ~/.claude/settings.json
  deny     Read(./.env)           project .claude/settings.json
  allow    Bash(npm run test:*)   user ~/.claude/settings.json
  ignored  allow Edit(src/**)     project .claude/settings.json (this workspace has not been trusted)
hooks
  (none)
env
  A  1   user ~/.claude/settings.json
trust
  HOME/project is not trusted: its allow rules do not count (`subagent trust` records trust)
warnings
  Ignoring 1 permissions.allow entry from .claude/settings.json: this workspace has not been trusted. Run `subagent trust` in HOME/project to trust it (recorded in ~/.subagents/trusted-projects.json), or set projects["HOME/project"].hasTrustDialogAccepted: true in HOME/.claude.json.
files read
  managed        ~/managed.json                   absent
  project-local  .subagents/settings.local.json   absent
  project-local  .claude/settings.local.json      absent
  project        .subagents/settings.json         absent
  project        .claude/settings.json            read
  user           ~/.subagents/settings.json       absent
  user           ~/.claude/settings.json          read
"#
    );
    let json: serde_json::Value = serde_json::from_slice(
        &project
            .subagent()
            .args(["settings", "--json"])
            .output()
            .stdout,
    )
    .unwrap();
    assert_eq!(json["permissions"]["deny"][0]["value"], "Read(./.env)");
    assert_eq!(json["permissions"]["deny"][0]["scope"], "project");
    assert_eq!(json["ignored"][0]["value"], "Edit(src/**)");
    assert_eq!(json["trust"]["trusted"], false);
    assert_eq!(json["env"]["A"]["value"], "1");
}

/// A `claude-code` child gets the rules claude does not read itself (the command line's, the
/// preset's, our `.subagents/` files) as its `--settings`, in Claude Code's spelling: the real
/// pinned `claude` then runs the command an allow rule names, and not one a deny rule names.
#[cfg(feature = "e2e")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_claude_child_obeys_the_rules_handed_to_it() {
    const CLAUDE: &str = r#"
- match: "make it"
  steps:
    - tool_calls:
        - name: Bash
          input: {command: "touch made", description: "make the file"}
    - text: "done"
"#;
    let server = FakeServer::from_yaml(CLAUDE).await.unwrap();
    let project = Project::new(&server.url());
    let row = super::pinned::claude_code_row(project.home.path(), &server.url(), "");
    std::fs::write(
        &project.preset,
        format!(
            "version: 1\nproviders:\n{row}tools: [{{name: subagent, provider: claude-code}}]\n"
        ),
    )
    .unwrap();
    let delegate = |args: &[&str]| {
        let _ = std::fs::remove_file(project.dir.join("made"));
        let output = project
            .subagent()
            .args(["delegate", "--preset"])
            .arg(&project.preset)
            .args(["--provider", "claude-code"])
            .args(args)
            .arg("make it")
            .output();
        (project.dir.join("made").exists(), stderr(&output))
    };
    let (made, log) = delegate(&[]);
    assert!(
        !made,
        "claude's dontAsk mode refuses an unnamed command: {log}"
    );
    let (made, log) = delegate(&["--allowedTools", "bash(touch made)"]);
    assert!(made, "{log}");
    let (made, log) = delegate(&[
        "--allowedTools",
        "bash(touch made)",
        "--disallowedTools",
        "Bash(touch:*)",
    ]);
    assert!(!made, "{log}");
}

/// The settings' hooks around a spawn child's tool calls, Claude Code's protocol: `PreToolUse`
/// blocks (exit 2, its stderr to the model), denies or rewrites a call, `PermissionRequest`
/// answers for a child nobody can ask, `PostToolUse` adds context the model reads; each hook
/// gets the call in Claude Code's terms on stdin.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hooks_decide_block_rewrite_and_add_context() {
    let server = FakeServer::from_yaml(SCENARIO).await.unwrap();
    let project = Project::new(&server.url());
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
    let (made, _, output) = project.delegate(&server, &[]);
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
    let (made, told, output) = project.delegate(&server, &["--allowedTools", "Bash"]);
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
    let (made, told, _) = project.delegate(&server, &["--allowedTools", "Bash"]);
    assert!(!made);
    assert!(told.contains("not today"), "{told}");
    let rewrite = hook(
        "rewrite.sh",
        r#"echo '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow", "updatedInput": {"command": "touch rewritten"}}}'"#,
    );
    settings(
        serde_json::json!({"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": rewrite}]}]}),
    );
    let (made, _, output) = project.delegate(&server, &[]);
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
    let (_, told, _) = project.delegate(&server, &[]);
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
    let project = Project::new(&server.url());
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
    let row = super::pinned::claude_code_row(
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
    let project = Project::new(&server.url());
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
    let project = Project::new(&server.url());
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
    let project = Project::new(&server.url());
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
