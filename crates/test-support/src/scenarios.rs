//! Scenario files more than one crate's tests run the fake model server on.

/// The scenarios of an A2A server under test (`subagent serve`, the server crate): `HELLO` is
/// answered at once, `STRUCT` hands over structured output (`{count: 7}`), `GATED` waits on the
/// gate `go` before it answers `finally`, and `RESUB` answers `before` (with an `ls` call), then
/// waits on the gate `resume` before it answers `after`.
pub const SERVED: &str = r#"
- name: hello
  match: "HELLO"
  steps:
    - text: "Hi there."
- name: structured
  match: "STRUCT"
  steps:
    - tool_calls: [{name: structured_output, input: {count: 7}}]
- name: gated
  match: "GATED"
  steps:
    - wait_gate: go
      text: "finally"
- name: resub
  match: "RESUB"
  steps:
    - text: "before"
      tool_calls: [{name: ls, input: {}}]
    - wait_gate: resume
      text: "after"
"#;

/// The first steps of a team's leader (prompted `LEAD-TEAM`): it creates the team `crew` and
/// three tasks, `gamma` blocked by `alpha` and `beta`. Its next steps follow, then the rest of
/// the scenario file.
pub const CREW_LEAD: &str = r#"
- name: lead
  match: "LEAD-TEAM"
  steps:
    - tool_calls: [{name: TeamCreate, input: {team_name: crew, description: three tasks}}]
    - tool_calls: [{name: TaskCreate, input: {subject: alpha, description: first part}}]
    - tool_calls: [{name: TaskCreate, input: {subject: beta, description: second part}}]
    - tool_calls: [{name: TaskCreate, input: {subject: gamma, description: needs alpha and beta}}]
    - tool_calls: [{name: TaskUpdate, input: {taskId: "3", addBlockedBy: ["1", "2"]}}]"#;
