//! An ACP agent's `session/request_permission` asked of the child's parent (issue 28): the real
//! claude-agent-acp (running claude 2.1.197 in its default mode, which asks before Bash) with a
//! `subagent_runtime::PolicyAsker` in the request. The parent's answer wins over the row's own
//! policy either way.

use std::sync::Arc;

use pretty_assertions::assert_eq;
use subagent_acp::PermissionPolicy;
use subagent_core::{Asker, CancellationToken, PermissionMode, StopReason, SubagentProvider};
use subagent_runtime::{Decision, PermissionPolicy as ParentPolicy, PermissionRule, PolicyAsker};
use subagent_test_support::runs::finish_within;

use super::harness::{Adapter, Harness};

const SCENARIOS: &str = r#"
- name: claude-bash
  match: "(?i)run bash"
  steps:
    - text: "Running."
      tool_calls:
        - name: Bash
          input: {command: "echo ran > ran.txt", description: "write ran.txt"}
    - text: "ran"
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_agent_acp_asks_the_parent_not_the_rows_policy() {
    // (row policy, the parent's policy, written)
    let cases = [
        (
            PermissionPolicy::Reject,
            ParentPolicy::new(PermissionMode::Default)
                .rule(PermissionRule::parse("bash(echo ran > ran.txt)", Decision::Allow).unwrap()),
            true,
        ),
        (
            PermissionPolicy::Allow,
            ParentPolicy::new(PermissionMode::DontAsk),
            false,
        ),
    ];
    for (row, parent, written) in cases {
        let harness = Harness::new(SCENARIOS).await;
        let provider = harness.provider(Adapter::Claude, |c| c.permissions = row);
        let mut request = harness.request("run bash").build();
        let asker = PolicyAsker::new(parent, false, CancellationToken::new());
        request.parent.asker = Some(Asker(Arc::new(asker)));
        let run = provider.start(request).await.unwrap();
        let (events, outcome) = finish_within(run, std::time::Duration::from_secs(120)).await;
        assert_eq!(
            outcome.status,
            StopReason::Completed,
            "{row:?}: {outcome:?}"
        );
        assert_eq!(
            harness.project().join("ran.txt").exists(),
            written,
            "{row:?}: {events:#?}"
        );
    }
}
