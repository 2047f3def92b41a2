#![allow(clippy::unwrap_used)]

use std::os::unix::fs::PermissionsExt;
use std::sync::Mutex;

use pretty_assertions::assert_eq;
use serde_json::json;
use subagent_core::PermissionMode;
use subagent_settings::{Hooks, Rule, Scope, Sourced};

use super::*;
use crate::permissions::{PermissionBroker, SettingsRules};

fn question(tool: &str, input: Value, cwd: &Path) -> ToolQuestion {
    ToolQuestion {
        tool: tool.to_owned(),
        input,
        tool_use_id: Some("toolu_1".into()),
        cwd: cwd.to_path_buf(),
    }
}

fn settings(root: &Path, allow: &[&str], deny: &[&str], hooks: Hooks) -> Arc<SettingsRules> {
    let rules = |texts: &[&str]| {
        texts
            .iter()
            .map(|text| Sourced::new(Rule::parse(text).unwrap(), Scope::User, None))
            .collect()
    };
    Arc::new(SettingsRules {
        permissions: subagent_settings::Permissions {
            allow: rules(allow),
            deny: rules(deny),
            ..Default::default()
        },
        project_root: root.to_path_buf(),
        home: None,
        hooks,
        env: Vec::new(),
        additional_dirs: Vec::new(),
    })
}

/// A broker that records what it was asked and answers `answer`.
struct Scripted {
    answer: Decision,
    asked: Mutex<Vec<PermissionRequest>>,
}

#[async_trait]
impl PermissionBroker for Scripted {
    async fn ask(&self, request: PermissionRequest) -> Decision {
        self.asked.lock().unwrap().push(request);
        self.answer
    }
}

fn scripted(answer: Decision) -> Arc<Scripted> {
    Arc::new(Scripted {
        answer,
        asked: Mutex::new(Vec::new()),
    })
}

#[test]
fn claude_tools_map_onto_ours() {
    let dir = tempfile::tempdir().unwrap();
    let cwd = std::fs::canonicalize(dir.path()).unwrap();
    let abs = |rel: &str| cwd.join(rel).to_string_lossy().into_owned();
    let map = |tool: &str, input: Value| map_question(&question(tool, input, &cwd));
    let mapped = |tool: &str, kind, subjects: Vec<String>| Mapped {
        tool: tool.to_owned(),
        kind,
        outside: subjects.first().is_some_and(|s| s.starts_with('/')) && kind != ToolKind::Execute,
        subjects,
    };
    assert_eq!(
        map("Bash", json!({"command": "git status", "description": "x"})),
        mapped("bash", ToolKind::Execute, vec!["git status".into()])
    );
    assert_eq!(
        map(
            "Write",
            json!({"file_path": abs("src/a.rs"), "content": ""})
        ),
        mapped(
            "write_file",
            ToolKind::Edit,
            vec!["src/a.rs".into(), abs("src/a.rs")]
        )
    );
    assert_eq!(
        map("Edit", json!({"file_path": abs("x/../b.rs")})),
        mapped(
            "edit_file",
            ToolKind::Edit,
            vec!["b.rs".into(), abs("b.rs")]
        )
    );
    assert_eq!(
        map("MultiEdit", json!({"file_path": "/elsewhere/c.rs"})),
        mapped("MultiEdit", ToolKind::Edit, vec!["/elsewhere/c.rs".into()])
    );
    assert_eq!(
        map("NotebookEdit", json!({"notebook_path": abs("n.ipynb")})),
        mapped(
            "NotebookEdit",
            ToolKind::Edit,
            vec!["n.ipynb".into(), abs("n.ipynb")]
        )
    );
    assert_eq!(
        map("Read", json!({"file_path": abs(".env")})),
        mapped(
            "read_file",
            ToolKind::ReadOnly,
            vec![".env".into(), abs(".env")]
        )
    );
    assert_eq!(
        map("Grep", json!({"pattern": "x"})),
        mapped("grep", ToolKind::ReadOnly, vec![".".into()])
    );
    assert_eq!(
        map(
            "WebFetch",
            json!({"url": "https://Docs.Example.com:443/a?b", "prompt": "x"})
        ),
        mapped(
            "web_fetch",
            ToolKind::Execute,
            vec!["docs.example.com".into()]
        )
    );
    assert_eq!(
        map("mcp__github__create_issue", json!({})),
        mapped("mcp__github__create_issue", ToolKind::Execute, Vec::new())
    );
    assert_eq!(
        map("WebSearch", json!({"query": "q"})),
        mapped("WebSearch", ToolKind::Execute, Vec::new())
    );
}

/// The parent's rules (its own and its settings', in Claude Code's names or ours) decide first;
/// a deny is never asked about.
#[tokio::test]
async fn rules_decide_before_anyone_is_asked() {
    let dir = tempfile::tempdir().unwrap();
    let cwd = std::fs::canonicalize(dir.path()).unwrap();
    let broker = scripted(Decision::Allow);
    let policy = PermissionPolicy::new(PermissionMode::Default)
        .rule(crate::PermissionRule::parse("bash(git *)", Decision::Allow).unwrap())
        .with_settings(settings(
            &cwd,
            &[
                "Write(src/**)",
                "WebFetch(domain:example.com)",
                "mcp__github",
            ],
            &["Read(./.env)", "Bash(rm *)"],
            Hooks::default(),
        ))
        .with_broker(broker.clone());
    let asker = PolicyAsker::new(policy, false, CancellationToken::new());
    let ask = |tool: &str, input: Value| asker.ask(question(tool, input, &cwd));
    let allowed = ToolAnswer::Allow {
        updated_input: None,
    };
    assert_eq!(ask("Bash", json!({"command": "git log"})).await, allowed);
    let path = cwd.join("src/main.rs").to_string_lossy().into_owned();
    assert_eq!(ask("Write", json!({"file_path": path})).await, allowed);
    assert_eq!(
        ask("WebFetch", json!({"url": "https://example.com/x"})).await,
        allowed
    );
    assert_eq!(ask("mcp__github__create_issue", json!({})).await, allowed);
    let env = cwd.join(".env").to_string_lossy().into_owned();
    assert!(!ask("Read", json!({"file_path": env})).await.is_allow());
    assert!(
        !ask("Bash", json!({"command": "ls && rm -rf x"}))
            .await
            .is_allow()
    );
    assert!(broker.asked.lock().unwrap().is_empty(), "nobody was asked");
    // Read-only calls the rules leave alone are allowed by every mode but plan's refusals.
    let readme = cwd.join("README").to_string_lossy().into_owned();
    assert_eq!(ask("Read", json!({"file_path": readme})).await, allowed);
}

/// A call the rules leave to someone: the broker in the foreground (told our tool name and
/// both spellings of the path); denied in the background, in Claude Code's words.
#[tokio::test]
async fn the_broker_answers_a_foreground_child_only() {
    let dir = tempfile::tempdir().unwrap();
    let cwd = std::fs::canonicalize(dir.path()).unwrap();
    let path = cwd.join("notes.md").to_string_lossy().into_owned();
    let write = question("Write", json!({"file_path": path, "content": "x"}), &cwd);
    for answer in [Decision::Allow, Decision::Deny] {
        let broker = scripted(answer);
        let policy = PermissionPolicy::new(PermissionMode::Default).with_broker(broker.clone());
        let asker = PolicyAsker::new(policy, false, CancellationToken::new());
        let got = asker.ask(write.clone()).await;
        assert_eq!(got.is_allow(), answer == Decision::Allow, "{got:?}");
        let asked = broker.asked.lock().unwrap().clone();
        assert_eq!(
            asked
                .iter()
                .map(|r| (r.tool.as_str(), r.subject.clone(), r.aliases.clone()))
                .collect::<Vec<_>>(),
            vec![(
                "write_file",
                Some("notes.md".to_owned()),
                vec![path.clone()]
            )]
        );
    }
    let broker = scripted(Decision::Allow);
    let policy = PermissionPolicy::new(PermissionMode::Default).with_broker(broker.clone());
    let asker = PolicyAsker::new(policy, true, CancellationToken::new());
    assert_eq!(
        asker.ask(write.clone()).await,
        ToolAnswer::Deny {
            message: background_denial("Write")
        }
    );
    assert!(broker.asked.lock().unwrap().is_empty());
    // A foreground child that moves to the background stops asking from then on.
    let flag = Arc::new(AtomicBool::new(false));
    let policy = PermissionPolicy::new(PermissionMode::Default).with_broker(broker.clone());
    let asker = PolicyAsker::new(policy, false, CancellationToken::new())
        .with_background_flag(Arc::clone(&flag));
    assert!(asker.ask(write.clone()).await.is_allow());
    flag.store(true, Ordering::Relaxed);
    assert_eq!(
        asker.ask(write.clone()).await,
        ToolAnswer::Deny {
            message: background_denial("Write")
        }
    );
    assert_eq!(broker.asked.lock().unwrap().len(), 1);
    // Modes decide as for our own calls: dontAsk denies, acceptEdits allows an edit, bypass
    // allows a command.
    let mode =
        |mode| PolicyAsker::new(PermissionPolicy::new(mode), false, CancellationToken::new());
    assert!(
        !mode(PermissionMode::DontAsk)
            .ask(write.clone())
            .await
            .is_allow()
    );
    assert!(
        mode(PermissionMode::AcceptEdits)
            .ask(write.clone())
            .await
            .is_allow()
    );
    let bash = question("Bash", json!({"command": "make"}), &cwd);
    assert!(
        !mode(PermissionMode::AcceptEdits)
            .ask(bash.clone())
            .await
            .is_allow()
    );
    assert!(mode(PermissionMode::Bypass).ask(bash).await.is_allow());
}

/// A broker still asking when the child is cancelled does not hold the question.
#[tokio::test]
async fn a_cancelled_question_is_denied() {
    struct Never;
    #[async_trait]
    impl PermissionBroker for Never {
        async fn ask(&self, _: PermissionRequest) -> Decision {
            std::future::pending().await
        }
    }
    let cancel = CancellationToken::new();
    let policy = PermissionPolicy::new(PermissionMode::Default).with_broker(Arc::new(Never));
    let asker = PolicyAsker::new(policy, false, cancel.clone());
    cancel.cancel();
    let answer = asker
        .ask(question("Bash", json!({"command": "make"}), Path::new("/")))
        .await;
    assert_eq!(
        answer,
        ToolAnswer::Deny {
            message: "cancelled while waiting for permission".into()
        }
    );
}

/// The parent's `PermissionRequest` hooks answer before the broker, and are a background
/// child's only chance; they see the tool in Claude Code's name and the input as asked.
#[tokio::test]
async fn permission_request_hooks_answer_first() {
    let dir = tempfile::tempdir().unwrap();
    let cwd = std::fs::canonicalize(dir.path()).unwrap();
    let script = cwd.join("hook.sh");
    std::fs::write(
        &script,
        "#!/usr/bin/env bash\ninput=$(cat)\necho \"$input\" >> seen.jsonl\n\
         case \"$input\" in\n\
         *allowed.txt*) echo '{\"hookSpecificOutput\":{\"hookEventName\":\"PermissionRequest\",\"decision\":{\"behavior\":\"allow\",\"updatedInput\":{\"file_path\":\"rewritten.txt\",\"content\":\"y\"}}}}' ;;\n\
         *denied.txt*) echo '{\"hookSpecificOutput\":{\"hookEventName\":\"PermissionRequest\",\"decision\":{\"behavior\":\"deny\",\"message\":\"not that file\"}}}' ;;\n\
         esac\n",
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let hooks = Hooks::from_value(
        &json!({"PermissionRequest": [{"matcher": "Write", "hooks": [{"type": "command", "command": script.to_string_lossy()}]}]}),
        Scope::User,
        None,
        "test",
    )
    .unwrap();
    let broker = scripted(Decision::Allow);
    let policy = PermissionPolicy::new(PermissionMode::Default)
        .with_settings(settings(&cwd, &[], &[], hooks))
        .with_broker(broker.clone());
    let asker = PolicyAsker::new(policy, true, CancellationToken::new()).session_id("parent-1");
    let write = |name: &str| {
        question(
            "Write",
            json!({"file_path": cwd.join(name).to_string_lossy(), "content": "x"}),
            &cwd,
        )
    };
    assert_eq!(
        asker.ask(write("allowed.txt")).await,
        ToolAnswer::Allow {
            updated_input: Some(json!({"file_path": "rewritten.txt", "content": "y"}))
        }
    );
    assert_eq!(
        asker.ask(write("denied.txt")).await,
        ToolAnswer::Deny {
            message: "permission denied by a PermissionRequest hook: not that file".into()
        }
    );
    // Undecided by the hook, in the background: denied, the broker never asked.
    assert_eq!(
        asker.ask(write("other.txt")).await,
        ToolAnswer::Deny {
            message: background_denial("Write")
        }
    );
    assert!(broker.asked.lock().unwrap().is_empty());
    let seen = subagent_session::read_user_text(&cwd.join("seen.jsonl"), 1 << 20).unwrap();
    let first: Value = serde_json::from_str(seen.lines().next().unwrap()).unwrap();
    assert_eq!(
        (
            &first["hook_event_name"],
            &first["tool_name"],
            &first["session_id"],
            &first["permission_mode"]
        ),
        (
            &json!("PermissionRequest"),
            &json!("Write"),
            &json!("parent-1"),
            &json!("default")
        )
    );
    assert_eq!(
        first["tool_input"]["file_path"],
        json!(cwd.join("allowed.txt").to_string_lossy())
    );
}

/// A file outside the child's directory is not allowed by the mode alone (the parent's own file
/// tools could not reach it): asked, as Claude Code asks; a rule or an additional directory
/// allows it.
#[tokio::test]
async fn a_file_outside_the_childs_directory_needs_a_rule() {
    let dir = tempfile::tempdir().unwrap();
    let cwd = std::fs::canonicalize(dir.path()).unwrap();
    let child = cwd.join("child");
    std::fs::create_dir(&child).unwrap();
    let elsewhere = cwd
        .join("elsewhere/notes.md")
        .to_string_lossy()
        .into_owned();
    let read = question("Read", json!({"file_path": elsewhere}), &child);
    let inside = question(
        "Read",
        json!({"file_path": child.join("a.md").to_string_lossy()}),
        &child,
    );
    let broker = scripted(Decision::Deny);
    let plain = PolicyAsker::new(
        PermissionPolicy::new(PermissionMode::Default).with_broker(broker.clone()),
        false,
        CancellationToken::new(),
    );
    assert!(plain.ask(inside).await.is_allow());
    assert!(!plain.ask(read.clone()).await.is_allow());
    assert_eq!(broker.asked.lock().unwrap().len(), 1, "the user was asked");
    let ruled = PolicyAsker::new(
        PermissionPolicy::new(PermissionMode::Default).with_settings(settings(
            &cwd,
            &["Read(/elsewhere/**)"],
            &[],
            Hooks::default(),
        )),
        false,
        CancellationToken::new(),
    );
    assert!(ruled.ask(read.clone()).await.is_allow());
    let mut rules = SettingsRules::clone(&settings(&cwd, &[], &[], Hooks::default()));
    rules.additional_dirs = vec![cwd.join("elsewhere")];
    let added = PolicyAsker::new(
        PermissionPolicy::new(PermissionMode::Default).with_settings(Arc::new(rules)),
        false,
        CancellationToken::new(),
    );
    assert!(added.ask(read).await.is_allow());
}

/// As the user is about to be asked, the parent's `Notification` hooks hear of it (Claude
/// Code's `permission_prompt`); a question nobody will be asked about notifies nobody.
#[tokio::test]
async fn notification_hooks_hear_of_a_question_before_the_user_is_asked() {
    let dir = tempfile::tempdir().unwrap();
    let cwd = std::fs::canonicalize(dir.path()).unwrap();
    let script = cwd.join("notify.sh");
    std::fs::write(
        &script,
        "#!/usr/bin/env bash\ncat >> notified.jsonl\necho >> notified.jsonl\n",
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let hooks = Hooks::from_value(
        &json!({"Notification": [{"matcher": "permission_prompt", "hooks": [{"type": "command", "command": script.to_string_lossy()}]}]}),
        Scope::User,
        None,
        "test",
    )
    .unwrap();
    let write = question(
        "Write",
        json!({"file_path": cwd.join("notes.md").to_string_lossy(), "content": "x"}),
        &cwd,
    );
    let broker = scripted(Decision::Allow);
    let policy = PermissionPolicy::new(PermissionMode::Default)
        .with_settings(settings(&cwd, &[], &[], hooks))
        .with_broker(broker.clone());
    let background = PolicyAsker::new(policy.clone(), true, CancellationToken::new());
    assert!(!background.ask(write.clone()).await.is_allow());
    assert!(!cwd.join("notified.jsonl").exists());
    let asker = PolicyAsker::new(policy, false, CancellationToken::new());
    assert!(asker.ask(write).await.is_allow());
    let seen = subagent_session::read_user_text(&cwd.join("notified.jsonl"), 1 << 20).unwrap();
    let event: Value = serde_json::from_str(seen.lines().next().unwrap()).unwrap();
    assert_eq!(
        (
            &event["hook_event_name"],
            &event["notification_type"],
            &event["message"]
        ),
        (
            &json!("Notification"),
            &json!("permission_prompt"),
            &json!("Claude needs your permission to use Write")
        )
    );
    assert_eq!(broker.asked.lock().unwrap().len(), 1);
}
