//! Claude Code's settings files reach every in-process run (issue 28): permission rules from
//! `~/.claude/settings.json`, a project's `.claude/settings.json` (its allow rules only once the
//! project is trusted), `.subagents/` twins, the managed policy and the command line's
//! `--allowedTools`/`--disallowedTools`/`--settings`; `subagent settings` shows them with their
//! sources and `subagent trust` records trust.

use pretty_assertions::assert_eq;
use subagent_test_support::FakeServer;

use super::support::Home;

mod hooks;
#[cfg(feature = "e2e")]
mod parity;

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

/// A project (its own directory below a home, a `.env` in it) with a preset on the fake server.
fn project(url: &str) -> Home {
    let home = Home::new(url, "");
    std::fs::write(home.dir.join(".env"), "TOKEN=from-dotenv\n").unwrap();
    home
}

/// `subagent delegate` of "make it" on the spawn row with `args`: whether `made` was
/// created, and what the model was told of the bash and read calls.
fn delegate(
    project: &Home,
    server: &FakeServer,
    args: &[&str],
) -> (bool, String, std::process::Output) {
    let _ = std::fs::remove_file(project.dir.join("made"));
    let before = server.model_requests().len();
    let mut command = project.subagent().arg("delegate");
    if !args.contains(&"--preset") {
        command = command.arg("--preset").arg(&project.preset);
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
    (project.dir.join("made").exists(), told, output)
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
    let project = project(&server.url());

    // No rule: nobody can be asked, so the command is refused; the model is told.
    let (made, told, output) = delegate(&project, &server, &[]);
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
    let (made, told, output) = delegate(&project, &server, &[]);
    assert!(made, "{}", stderr(&output));
    assert!(!told.contains("TOKEN=from-dotenv"), "{told}");

    // A flag's deny beats the user's allow.
    let (made, _, output) = delegate(&project, &server, &["--disallowedTools", "Bash(touch:*)"]);
    assert!(!made, "{}", stderr(&output));
    std::fs::remove_file(project.home.path().join(".claude/settings.json")).unwrap();

    // A flag's allow, in our tool name.
    let (made, _, output) = delegate(&project, &server, &["--allowedTools", "bash(touch made)"]);
    assert!(made, "{}", stderr(&output));

    // The preset's `settings:` key.
    let with_settings = project.home.path().join("with-settings.yaml");
    let preset = std::fs::read_to_string(&project.preset).unwrap();
    std::fs::write(
        &with_settings,
        format!("{preset}settings:\n  permissions:\n    allow: [\"Bash(touch made)\"]\n"),
    )
    .unwrap();
    let (made, _, output) = delegate(
        &project,
        &server,
        &["--preset", with_settings.to_str().unwrap()],
    );
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
    let (made, _, output) = delegate(&project, &server, &["--settings", json]);
    assert!(made, "{}", stderr(&output));
    project.write("managed.json", r#"{"permissions": {"deny": ["Bash"]}}"#);
    let (made, _, output) = delegate(&project, &server, &["--settings", json]);
    assert!(!made, "{}", stderr(&output));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_untrusted_project_cannot_widen_what_a_child_may_do() {
    let server = FakeServer::from_yaml(SCENARIO).await.unwrap();
    let project = project(&server.url());
    project.write(
        "project/.claude/settings.json",
        r#"{"permissions": {"allow": ["Bash(touch made)"], "deny": ["Read(./.env)"]}}"#,
    );

    // Its deny counts at once; its allow is ignored, with a line that says how to trust it.
    let (made, told, output) = delegate(&project, &server, &[]);
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
    let (made, _, output) = delegate(&project, &server, &[]);
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
    let (made, _, _) = delegate(&project, &server, &[]);
    assert!(!made);

    // Claude Code's own record of trust counts the same.
    project.write(
        ".claude.json",
        &format!(
            r#"{{"projects": {{"{}": {{"hasTrustDialogAccepted": true}}}}}}"#,
            project.dir.display()
        ),
    );
    let (made, _, output) = delegate(&project, &server, &[]);
    assert!(made, "{}", stderr(&output));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_run_parent_obeys_the_rules_and_its_resume_hint_repeats_the_flags() {
    let server = FakeServer::from_yaml(SCENARIO).await.unwrap();
    let project = project(&server.url());
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
    let project = project("http://127.0.0.1:9");
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
    let project = project("http://127.0.0.1:9");
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

/// A project whose preset has one row, the pinned `claude` on the fake server, whose model runs
/// `touch made` with claude's `Bash`, then answers.
#[cfg(feature = "e2e")]
async fn claude_project() -> (FakeServer, Home) {
    const CLAUDE: &str = r#"
- match: "make it"
  steps:
    - tool_calls:
        - name: Bash
          input: {command: "touch made", description: "make the file"}
    - text: "done"
"#;
    let server = FakeServer::from_yaml(CLAUDE).await.unwrap();
    let project = project(&server.url());
    let row = super::pinned::claude_code_row(project.home.path(), &server.url(), "");
    std::fs::write(
        &project.preset,
        format!(
            "version: 1\nproviders:\n{row}tools: [{{name: subagent, provider: claude-code}}]\n"
        ),
    )
    .unwrap();
    (server, project)
}

/// A `claude-code` child gets the rules claude does not read itself (the command line's, the
/// preset's, our `.subagents/` files) as its `--settings`, in Claude Code's spelling: the real
/// pinned `claude` then runs the command an allow rule names, and not one a deny rule names.
#[cfg(feature = "e2e")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_claude_child_obeys_the_rules_handed_to_it() {
    let (_server, project) = claude_project().await;
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

/// `subagent delegate` answers a claude child's questions as `run` answers its own calls: a
/// command no rule names goes to the settings' `PermissionRequest` hooks and, with no terminal
/// to ask, is denied when no hook decides. claude gets the hook too (in its `--settings`) and
/// runs it beside asking; the hook allows only where `SUBAGENT_PROJECT_DIR` is set, i.e. when we
/// run it, so only our answer can let the command through.
#[cfg(feature = "e2e")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_delegated_claude_childs_question_goes_to_the_settings_hooks() {
    let (_server, project) = claude_project().await;
    let allow = r#"test -n "$SUBAGENT_PROJECT_DIR" && echo '{"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": {"behavior": "allow"}}}'"#;
    let delegate = |hooked: bool| {
        let _ = std::fs::remove_file(project.dir.join("made"));
        let hooks = if hooked {
            serde_json::json!({"PermissionRequest": [{"matcher": "Bash", "hooks": [{"type": "command", "command": allow}]}]})
        } else {
            serde_json::json!({})
        };
        project.write(
            ".subagents/settings.json",
            &serde_json::json!({"hooks": hooks}).to_string(),
        );
        let output = project
            .subagent()
            .args(["delegate", "--preset"])
            .arg(&project.preset)
            .args(["--provider", "claude-code", "make it"])
            .output();
        assert!(output.status.success(), "{}", stderr(&output));
        (project.dir.join("made").exists(), stderr(&output))
    };
    let (made, log) = delegate(true);
    assert!(made, "the hook allows the command: {log}");
    let (made, log) = delegate(false);
    assert!(!made, "nobody to ask, no hook: denied: {log}");
}

/// The settings' `additionalDirectories` open a directory beside the working directory to a
/// run's file tools (the parent's and a top-level child's).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn additional_directories_open_a_directory_beside_the_project() {
    let home = tempfile::tempdir().unwrap();
    let shared = home.path().join("shared");
    std::fs::create_dir_all(&shared).unwrap();
    std::fs::write(shared.join("note.txt"), "the shared note\n").unwrap();
    let scenario = format!(
        "- match: \"read the note\"\n  steps:\n    - tool_calls:\n        - name: read_file\n          input: {{path: \"{}\"}}\n    - text: \"read\"\n",
        shared.join("note.txt").display()
    );
    let server = FakeServer::from_yaml(&scenario).await.unwrap();
    let project = project(&server.url());
    let run = |command: &str| {
        let before = server.model_requests().len();
        let output = project
            .subagent()
            .args([command, "--preset"])
            .arg(&project.preset)
            .args(if command == "delegate" {
                vec!["--provider", "spawn"]
            } else {
                Vec::new()
            })
            .arg("read the note")
            .output();
        assert!(output.status.success(), "{}", stderr(&output));
        serde_json::to_string(&server.model_requests()[before..].last().unwrap().messages).unwrap()
    };
    for command in ["delegate", "run"] {
        assert!(
            !run(command).contains("the shared note"),
            "{command}: outside the roots"
        );
    }
    project.write(
        ".claude/settings.json",
        &serde_json::json!({"permissions": {"additionalDirectories": [shared.display().to_string()]}})
            .to_string(),
    );
    for command in ["delegate", "run"] {
        assert!(run(command).contains("the shared note"), "{command}");
    }
}

/// A child holds to its parent's deny rules or does not start: the pinned `codex` cannot
/// express them (`codex exec` has no per-call rules), so while the project's settings deny
/// something a delegation to a codex row is refused before codex runs, naming the capability
/// and why; without the rule the same delegation runs codex.
#[cfg(feature = "e2e")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_product_child_that_cannot_hold_the_rules_is_refused_before_it_starts() {
    const CODEX: &str = r#"
- match: "say hi"
  steps:
    - text: "hi from codex"
"#;
    let server = FakeServer::from_yaml(CODEX).await.unwrap();
    let project = project(&server.url());
    let row = super::pinned::codex_row(project.home.path(), &server.url(), "", "");
    std::fs::write(
        &project.preset,
        format!("version: 1\nproviders:\n{row}tools: [{{name: subagent, provider: codex}}]\n"),
    )
    .unwrap();
    let delegate = || {
        project
            .subagent()
            .args(["delegate", "--json", "--preset"])
            .arg(&project.preset)
            .args(["--provider", "codex", "say hi"])
            .output()
    };
    project.write(
        "project/.claude/settings.json",
        r#"{"permissions": {"deny": ["Bash(rm -rf:*)"]}}"#,
    );
    let refused = delegate();
    let said = format!("{}{}", stdout(&refused), stderr(&refused));
    assert!(!refused.status.success(), "{said}");
    assert!(said.contains("UNSUPPORTED_CAPABILITY"), "{said}");
    assert!(said.contains("permission_rules"), "{said}");
    assert!(
        said.contains("codex exec has no per-call permission rules"),
        "{said}"
    );
    assert!(
        server.model_requests().is_empty(),
        "codex must not have run: {said}"
    );
    std::fs::remove_file(project.dir.join(".claude/settings.json")).unwrap();
    let ran = delegate();
    assert!(
        stdout(&ran).contains("hi from codex"),
        "{}{}",
        stdout(&ran),
        stderr(&ran)
    );
}
