//! A claude child asks its parent (issue 28): the real claude 2.1.197 runs with
//! `--permission-prompt-tool stdio` and its `can_use_tool` questions reach the parent's decision
//! chain (`subagent_runtime::PolicyAsker`): the parent's rules, its `PermissionRequest` hooks, a
//! scripted user for a foreground child, and a denial in Claude Code's words for a background
//! child nothing decides for.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use pretty_assertions::assert_eq;
use subagent_core::agents::StaticAgents;
use subagent_core::registry::Registry;
use subagent_core::{
    Asker, CancellationToken, ParentAsker, PermissionMode, StopReason, SubagentProvider,
    ToolAnswer, ToolQuestion,
};
use subagent_model::ModelKind;
use subagent_runtime::{
    Agent, AgentConfig, Decision, DelegationTool, DelegationToolConfig, PermissionBroker,
    PermissionPolicy, PermissionRequest, PolicyAsker, Roots, SettingsRules, Tool, ToolSet,
};
use subagent_settings::{Hooks, Rule, Scope, Sourced};
use subagent_test_support::parent::last_results;
use tokio::sync::Notify;

use subagent_test_support::runs::assert_answered;

use super::harness::{Harness, finish, live_processes};

/// A child that writes `file` in the project when its prompt carries `marker`, then answers;
/// and a parent that delegates `marker` to it when its prompt carries `PARENT-<marker>`.
fn scenarios(project: &Path, cases: &[(&str, &str)]) -> String {
    let mut yaml = String::new();
    for (marker, file) in cases {
        let path = project.join(file);
        yaml.push_str(&format!(
            r#"
- name: parent-{marker}
  match: "PARENT-{marker}"
  steps:
    - tool_calls:
        - name: subagent
          input: {{prompt: "{marker} write the file", description: "write a file"}}
    - text: "parent done"
- name: child-{marker}
  match: "{marker}"
  steps:
    - text: "Writing it."
      tool_calls:
        - name: Write
          input: {{file_path: "{path}", content: "written by the child\n"}}
    - text: "child done"
"#,
            path = path.display()
        ));
    }
    yaml
}

fn rules(root: &Path, allow: &[&str], hooks: Hooks) -> Arc<SettingsRules> {
    Arc::new(SettingsRules {
        permissions: subagent_settings::Permissions {
            allow: allow
                .iter()
                .map(|text| Sourced::new(Rule::parse(text).unwrap(), Scope::User, None))
                .collect(),
            ..Default::default()
        },
        project_root: root.to_path_buf(),
        home: None,
        hooks,
        env: Vec::new(),
        additional_dirs: Vec::new(),
    })
}

/// Runs the claude child on `marker` with `asker` to its end: whether the file was written and
/// what the child's model got back for its Write call.
async fn child_writes(h: &Harness, marker: &str, file: &str, asker: PolicyAsker) -> (bool, String) {
    let request = h
        .request(marker)
        .permission_ceiling(PermissionMode::Default)
        .build();
    let mut request = request;
    request.parent.asker = Some(Asker(Arc::new(asker)));
    let run = h.provider(|_| {}).start(request).await.unwrap();
    let (_, outcome) = finish(run).await;
    assert_answered(&outcome, "child done");
    let requests = h.model_requests();
    let results = last_results(requests.last().unwrap());
    assert_eq!(results.len(), 1, "{results:?}");
    (h.project().join(file).is_file(), results[0].1.clone())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_parent_rule_allows_the_childs_write() {
    let h = Harness::with_scenarios(|p| scenarios(p, &[("WRITE-RULE", "ruled.txt")])).await;
    let policy = PermissionPolicy::new(PermissionMode::Default).with_settings(rules(
        &h.project(),
        &["Write(ruled.txt)"],
        Hooks::default(),
    ));
    let asker = PolicyAsker::new(policy, false, CancellationToken::new());
    let (written, result) = child_writes(&h, "WRITE-RULE", "ruled.txt", asker).await;
    assert!(written, "the rule allowed it: {result}");
    assert_eq!(
        std::fs::read_to_string(h.project().join("ruled.txt")).unwrap(),
        "written by the child\n"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_parent_permission_request_hook_denies_the_childs_write() {
    let h = Harness::with_scenarios(|p| scenarios(p, &[("WRITE-HOOK", "hooked.txt")])).await;
    let script = h.project().join("../deny.sh");
    std::fs::write(
        &script,
        "#!/usr/bin/env bash\ncat > /dev/null\necho '{\"hookSpecificOutput\":{\"hookEventName\":\"PermissionRequest\",\"decision\":{\"behavior\":\"deny\",\"message\":\"no writes from children\"}}}'\n",
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let hooks = Hooks::from_value(
        &serde_json::json!({"PermissionRequest": [{"matcher": "Write", "hooks": [{"type": "command", "command": script.to_string_lossy()}]}]}),
        Scope::User,
        None,
        "test",
    )
    .unwrap();
    let policy = PermissionPolicy::new(PermissionMode::Default)
        .with_settings(rules(&h.project(), &[], hooks))
        .with_broker(Arc::new(User::default()));
    let asker = PolicyAsker::new(policy, false, CancellationToken::new());
    let (written, result) = child_writes(&h, "WRITE-HOOK", "hooked.txt", asker).await;
    assert!(!written);
    assert_eq!(
        result,
        "permission denied by a PermissionRequest hook: no writes from children"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_background_childs_write_nothing_decides_is_denied() {
    let h = Harness::with_scenarios(|p| scenarios(p, &[("WRITE-BACKGROUND", "bg.txt")])).await;
    let user = Arc::new(User::default());
    let policy = PermissionPolicy::new(PermissionMode::Default).with_broker(user.clone());
    let asker = PolicyAsker::new(policy, true, CancellationToken::new());
    let (written, result) = child_writes(&h, "WRITE-BACKGROUND", "bg.txt", asker).await;
    assert!(!written);
    assert_eq!(result, subagent_runtime::asking::background_denial("Write"));
    assert!(
        user.asked().is_empty(),
        "a background child never asks the user"
    );
}

/// The scripted user: answers yes for a path with `yes` in it, no otherwise.
#[derive(Default)]
struct User {
    asked: Mutex<Vec<(String, Option<String>)>>,
}

impl User {
    fn asked(&self) -> Vec<(String, Option<String>)> {
        self.asked.lock().unwrap().clone()
    }
}

#[async_trait]
impl PermissionBroker for User {
    async fn ask(&self, request: PermissionRequest) -> Decision {
        let yes = request
            .subject
            .as_deref()
            .is_some_and(|s| s.contains("yes"));
        self.asked
            .lock()
            .unwrap()
            .push((request.tool, request.subject));
        if yes { Decision::Allow } else { Decision::Deny }
    }
}

/// Through the real delegation: an in-process parent (default mode, a scripted user, no rule)
/// delegates to a claude child in the foreground; the child's Write is asked of the user, who
/// says yes (the file is written) and then no (it is not, and the child's model reads why).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn through_delegation_the_parents_user_answers_a_claude_child() {
    let h = Harness::with_scenarios(|p| {
        scenarios(p, &[("WRITE-YES", "yes.txt"), ("WRITE-NO", "no.txt")])
    })
    .await;
    let registry = Registry::new();
    registry
        .register(Arc::new(h.provider(|_| {})) as Arc<dyn SubagentProvider>)
        .unwrap();
    let registry = Arc::new(registry);
    let user = Arc::new(User::default());
    for marker in ["WRITE-YES", "WRITE-NO"] {
        let delegation: Arc<dyn Tool> = Arc::new(DelegationTool::new(
            DelegationToolConfig::new("claude"),
            Arc::clone(&registry),
            Arc::new(StaticAgents::default()),
        ));
        let mut config = AgentConfig::new(
            h.server.model(ModelKind::Anthropic),
            Roots::new(h.project()).unwrap(),
        );
        config.tools = ToolSet::new([delegation]);
        config.permissions =
            PermissionPolicy::new(PermissionMode::Default).with_broker(user.clone());
        let run = Agent::new(config)
            .unwrap()
            .start_prompt(format!("PARENT-{marker}"), CancellationToken::new());
        let (_, outcome) = finish(run).await;
        assert_answered(&outcome, "parent done");
    }
    let project = std::fs::canonicalize(h.project()).unwrap();
    assert_eq!(
        user.asked(),
        [
            ("write_file".to_owned(), Some("yes.txt".to_owned())),
            ("write_file".to_owned(), Some("no.txt".to_owned())),
        ],
        "the user was asked once per write, with the path relative to {}",
        project.display()
    );
    assert!(h.project().join("yes.txt").is_file());
    assert!(!h.project().join("no.txt").exists());
    // The child's model read the refusal as its Write call's result.
    let refused = h
        .model_requests()
        .iter()
        .flat_map(last_results)
        .any(|(_, text, is_error)| {
            is_error && text == "permission denied: approval for write_file was refused"
        });
    assert!(
        refused,
        "{:?}",
        h.model_requests()
            .iter()
            .map(last_results)
            .collect::<Vec<_>>()
    );
}

/// An asker that never answers: the question is pending, the run is cancelled, and nothing
/// waits on the answer (the run ends cancelled, claude is gone).
struct Silent(Arc<Notify>);

#[async_trait]
impl ParentAsker for Silent {
    async fn ask(&self, _: ToolQuestion) -> ToolAnswer {
        self.0.notify_one();
        std::future::pending().await
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_question_never_answered_does_not_hold_a_cancelled_run() {
    let h = Harness::with_scenarios(|p| scenarios(p, &[("WRITE-SILENT", "silent.txt")])).await;
    let asked = Arc::new(Notify::new());
    let mut request = h.request("WRITE-SILENT").build();
    request.parent.asker = Some(Asker(Arc::new(Silent(Arc::clone(&asked)))));
    let run = h.provider(|_| {}).start(request).await.unwrap();
    asked.notified().await;
    run.cancel();
    let (_, outcome) = finish(run).await;
    assert_eq!(outcome.status, StopReason::Cancelled, "{outcome:?}");
    assert!(!h.project().join("silent.txt").exists());
    assert_eq!(
        live_processes(&h.project(), "subagent-claude-e2e-no-such-marker"),
        Vec::<String>::new()
    );
}

/// An agent type's `hooks:` (as the delegation tool hands them, `AgentHooks` in the request's
/// extensions) run in its claude child: a `PreToolUse` hook that exits 2 blocks a Write the row
/// pre-approves, and the child's model reads the hook's words.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_types_hooks_run_in_its_claude_child() {
    let h = Harness::with_scenarios(|p| scenarios(p, &[("WRITE-AGENT-HOOK", "agent.txt")])).await;
    let script = h.project().join("../block.sh");
    std::fs::write(
        &script,
        "#!/usr/bin/env bash\ncat > /dev/null\necho 'the agent type says no' >&2\nexit 2\n",
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let command = script.to_string_lossy().into_owned();
    let hooks = Hooks::from_value(
        &serde_json::json!({"PreToolUse": [{"matcher": "Write", "hooks": [{"type": "command", "command": command}]}]}),
        Scope::Agent,
        None,
        "agent writer's hooks",
    )
    .unwrap();
    let mut request = h.request("WRITE-AGENT-HOOK").build();
    request
        .parent
        .extensions
        .insert(subagent_runtime::AgentHooks(hooks));
    let provider = h.provider(|c| c.allowed_tools = vec!["Write".into()]);
    let (_, outcome) = finish(provider.start(request).await.unwrap()).await;
    assert_eq!(outcome.status, StopReason::Completed, "{outcome:?}");
    assert!(!h.project().join("agent.txt").exists());
    let requests = h.model_requests();
    let results = last_results(requests.last().unwrap());
    assert_eq!(
        results
            .iter()
            .map(|(_, text, _)| text.as_str())
            .collect::<Vec<_>>(),
        [format!("PreToolUse:Write hook error: [{command}]: the agent type says no\n").as_str()]
    );
}
