//! The tools models call, in Claude Code's vocabulary: `TeamCreate`, `TeamDelete`,
//! `SendMessage`, `TaskCreate`, `TaskList`, `TaskGet`, `TaskUpdate`, and the delegation tool
//! with `name` and `team_name` ([`TeamAgentTool`]). The leader gets them all
//! ([`leader_tools`]); a teammate gets `SendMessage` and the task tools, bound to its name, and
//! `ExitPlanMode` while it is held in plan mode ([`member_tools`]). Refusals are error results
//! `CODE: message`.

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::{Map, Value, json};
use subagent_model::ToolSpec;
use subagent_runtime::{DelegationTool, Tool, ToolContext, ToolKind, ToolOutput};

use crate::live::{TeammateMode, Teams};
use crate::model::{LEADER, TaskStatus};
use crate::store::{TeamDir, TeamStore};
use crate::tasks::TaskChanges;
use crate::{Error, Result};

impl Teams {
    /// A leader's teams, kept in `store`, teammates started through `delegation` (the row the
    /// leader delegates with: its routing, gates and permission ceiling apply to teammates).
    /// Each teammate gets [`member_tools`]; this is here, not beside `Teams`, because the tools
    /// take `Teams` and `Teams` only hands them out.
    pub fn new(store: TeamStore, delegation: Arc<DelegationTool>) -> Arc<Self> {
        Self::with_member_tools(store, delegation, member_tools)
    }
}

/// The control messages `SendMessage` carries.
pub const CONTROL_TYPES: [&str; 4] = [
    "shutdown_request",
    "shutdown_response",
    "plan_approval_request",
    "plan_approval_response",
];

/// Who calls a team tool.
#[derive(Clone)]
enum Seat {
    /// The leader: its current team.
    Leader,
    /// A teammate: its team and name.
    Member { team: TeamDir, name: String },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    TeamCreate,
    TeamDelete,
    SendMessage,
    TaskCreate,
    TaskList,
    TaskGet,
    TaskUpdate,
    ExitPlanMode,
}

/// One team tool, bound to its caller.
struct TeamTool {
    teams: Arc<Teams>,
    seat: Seat,
    op: Op,
}

/// The leader's tools: the delegation tool taking `name` and `team_name` (it replaces the
/// plain one: same name), then the team tools.
pub fn leader_tools(teams: &Arc<Teams>) -> Vec<Arc<dyn Tool>> {
    let mut tools: Vec<Arc<dyn Tool>> = vec![Arc::new(TeamAgentTool {
        teams: Arc::clone(teams),
    })];
    for op in [
        Op::TeamCreate,
        Op::TeamDelete,
        Op::SendMessage,
        Op::TaskCreate,
        Op::TaskList,
        Op::TaskGet,
        Op::TaskUpdate,
    ] {
        tools.push(Arc::new(TeamTool {
            teams: Arc::clone(teams),
            seat: Seat::Leader,
            op,
        }));
    }
    tools
}

/// A teammate's tools: `SendMessage` and the task tools, as `name` of `team`, and
/// `ExitPlanMode` while it is `held` in plan mode until its plan is approved.
pub fn member_tools(
    teams: &Arc<Teams>,
    team: &TeamDir,
    name: &str,
    held: bool,
) -> Vec<Arc<dyn Tool>> {
    [
        Op::SendMessage,
        Op::TaskCreate,
        Op::TaskList,
        Op::TaskGet,
        Op::TaskUpdate,
    ]
    .into_iter()
    .chain(held.then_some(Op::ExitPlanMode))
    .map(|op| {
        Arc::new(TeamTool {
            teams: Arc::clone(teams),
            seat: Seat::Member {
                team: team.clone(),
                name: name.to_owned(),
            },
            op,
        }) as Arc<dyn Tool>
    })
    .collect()
}

fn spec(name: &str, description: &str, properties: Value, required: &[&str]) -> ToolSpec {
    ToolSpec {
        name: name.to_owned(),
        description: description.to_owned(),
        input_schema: json!({
            "type": "object",
            "properties": properties,
            "required": required,
            "additionalProperties": false
        }),
    }
}

fn string_list(description: &str) -> Value {
    json!({"type": "array", "items": {"type": "string"}, "description": description})
}

impl Op {
    fn spec(self) -> ToolSpec {
        match self {
            Self::TeamCreate => spec(
                "TeamCreate",
                "Create a team of agents you lead, with a shared task list and a mailbox per member. Start teammates with the delegation tool's name and team_name arguments; talk to them with SendMessage. Naming a team that exists (from an earlier run) reopens it: its members can be woken with a message.",
                json!({
                    "team_name": {"type": "string", "description": "The team's name (letters, digits, - and _)."},
                    "description": {"type": "string", "description": "What the team is for."},
                    "agent_type": {"type": "string", "description": "Your role in the team (informational)."}
                }),
                &["team_name"],
            ),
            Self::TeamDelete => spec(
                "TeamDelete",
                "Delete your team and its task list once every teammate has shut down (ask them with a shutdown_request).",
                json!({}),
                &[],
            ),
            Self::SendMessage => spec(
                "SendMessage",
                "Send a message to a teammate by name, or to everyone with \"*\". It reaches them at the start of their next turn (an idle teammate wakes up). message is plain text, or a control object: {\"type\":\"shutdown_request\",\"reason\":…} (lead only), {\"type\":\"shutdown_response\",\"request_id\":…,\"approve\":true|false,\"reason\":…} (to the lead), {\"type\":\"plan_approval_request\",\"plan\":…} (to the lead, from a teammate in plan mode; ExitPlanMode does the same), {\"type\":\"plan_approval_response\",\"request_id\":…,\"approve\":true|false,\"feedback\":…} (lead only: approving lets the teammate leave plan mode and make changes; rejecting keeps it read-only with your feedback).",
                json!({
                    "to": {"type": "string", "description": "Recipient: a teammate's name, team-lead, or \"*\" for everyone."},
                    "summary": {"type": "string", "description": "A 5-10 word preview.", "maxLength": 200},
                    "message": {"description": "Plain text, or a control message object with a type.", "anyOf": [{"type": "string"}, {"type": "object"}]}
                }),
                &["to", "message"],
            ),
            Self::TaskCreate => spec(
                "TaskCreate",
                "Add a task to the team's shared task list (pending, no owner).",
                json!({
                    "subject": {"type": "string", "description": "A brief title for the task."},
                    "description": {"type": "string", "description": "What needs to be done."},
                    "activeForm": {"type": "string", "description": "Present continuous form shown while in progress."},
                    "metadata": {"type": "object", "description": "Arbitrary metadata."}
                }),
                &["subject", "description"],
            ),
            Self::TaskList => spec(
                "TaskList",
                "List the team's tasks: id, status, owner, subject and open blockers. A task is available when it is pending, has no owner and is not blocked.",
                json!({}),
                &[],
            ),
            Self::TaskGet => spec(
                "TaskGet",
                "Get one task of the team's list by id, with its description and dependencies.",
                json!({"taskId": {"type": "string", "description": "The task's id."}}),
                &["taskId"],
            ),
            Self::TaskUpdate => spec(
                "TaskUpdate",
                "Update a task. Claim one by setting owner to your name (or status to in_progress): a task someone else owns, or one whose blockedBy tasks are not all completed, cannot be claimed. Mark it completed when done; deleted removes it.",
                json!({
                    "taskId": {"type": "string", "description": "The task's id."},
                    "subject": {"type": "string"},
                    "description": {"type": "string"},
                    "activeForm": {"type": "string"},
                    "status": {"type": "string", "enum": ["pending", "in_progress", "completed", "deleted"]},
                    "addBlocks": string_list("Task ids this task blocks."),
                    "addBlockedBy": string_list("Task ids that block this task."),
                    "owner": {"type": "string", "description": "The new owner (a member's name; empty releases it)."},
                    "metadata": {"type": "object", "description": "Keys to merge (null deletes a key)."}
                }),
                &["taskId"],
            ),
            Self::ExitPlanMode => spec(
                "ExitPlanMode",
                "You are in plan mode: read-only until team-lead approves your plan. When your plan is ready, call this with it: it goes to team-lead as a plan_approval_request. Then end your turn; the answer arrives as a message. Approved, you leave plan mode and make the changes; rejected, you stay in plan mode, revise the plan from the feedback and call this again.",
                json!({
                    "plan": {"type": "string", "description": "The plan: what you will change, and how (markdown)."}
                }),
                &["plan"],
            ),
        }
    }
}

fn text(input: &Value, key: &str) -> Option<String> {
    input.get(key).and_then(Value::as_str).map(str::to_owned)
}

fn required(input: &Value, key: &str) -> Result<String> {
    text(input, key).ok_or_else(|| Error::InvalidArguments(format!("\"{key}\" is required")))
}

fn strings(input: &Value, key: &str) -> Result<Vec<String>> {
    match input.get(key) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .map(|item| match item {
                Value::String(s) => Ok(s.clone()),
                Value::Number(n) => Ok(n.to_string()),
                _ => Err(Error::InvalidArguments(format!(
                    "\"{key}\" must be a list of task ids"
                ))),
            })
            .collect(),
        Some(_) => Err(Error::InvalidArguments(format!(
            "\"{key}\" must be a list of task ids"
        ))),
    }
}

/// A task id as given (Claude Code sends strings; a number is accepted).
fn task_id(input: &Value) -> Result<String> {
    match input.get("taskId") {
        Some(Value::String(id)) => Ok(id.clone()),
        Some(Value::Number(id)) => Ok(id.to_string()),
        _ => Err(Error::InvalidArguments("\"taskId\" is required".into())),
    }
}

fn metadata(input: &Value) -> Result<Option<Map<String, Value>>> {
    match input.get("metadata") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Object(map)) => Ok(Some(map.clone())),
        Some(_) => Err(Error::InvalidArguments(
            "\"metadata\" must be an object".into(),
        )),
    }
}

impl TeamTool {
    /// The caller's team and name.
    fn who(&self) -> Result<(TeamDir, String)> {
        match &self.seat {
            Seat::Leader => Ok((self.teams.current()?, LEADER.to_owned())),
            Seat::Member { team, name } => Ok((team.clone(), name.clone())),
        }
    }

    fn run(&self, input: &Value, context: &ToolContext) -> Result<String> {
        if matches!(self.seat, Seat::Leader) {
            self.teams.check_leader(context, "lead a team")?;
        }
        match self.op {
            Op::TeamCreate => {
                let name = required(input, "team_name")?;
                let description = text(input, "description").unwrap_or_default();
                let (team, reopened) = self.teams.create(&name, &description)?;
                if !reopened {
                    return Ok(format!(
                        "Created team {name}. You are its lead ({LEADER}). Start teammates with the delegation tool's name and team_name (\"{name}\") arguments."
                    ));
                }
                let config = team.config()?;
                let members: Vec<String> = config
                    .members
                    .iter()
                    .filter(|m| m.name != LEADER)
                    .map(|m| format!("{} ({}, {})", m.name, m.provider, m.status.as_str()))
                    .collect();
                Ok(format!(
                    "Reopened team {name}. Members: {}. Tasks:\n{}",
                    if members.is_empty() {
                        "none".to_owned()
                    } else {
                        members.join(", ")
                    },
                    team.task_list()?.render()
                ))
            }
            Op::TeamDelete => {
                let name = self.teams.delete()?;
                Ok(format!("Deleted team {name} and its task list."))
            }
            Op::SendMessage => self.send(input),
            Op::TaskCreate => {
                let (team, _) = self.who()?;
                let subject = required(input, "subject")?;
                let description = text(input, "description").unwrap_or_default();
                let active_form = text(input, "activeForm");
                let metadata = metadata(input)?.unwrap_or_default();
                let task = team
                    .tasks(|list| Ok(list.create(subject, description, active_form, metadata)))?;
                Ok(format!(
                    "Task #{} created successfully: {}",
                    task.id, task.subject
                ))
            }
            Op::TaskList => {
                let (team, _) = self.who()?;
                Ok(team.task_list()?.render())
            }
            Op::TaskGet => {
                let (team, _) = self.who()?;
                let id = task_id(input)?;
                let list = team.task_list()?;
                let task = list.get(&id)?;
                let mut value = serde_json::to_value(task).map_err(|e| Error::Corrupt {
                    path: team.dir().display().to_string(),
                    message: e.to_string(),
                })?;
                value["openBlockers"] = json!(list.open_blockers(task));
                Ok(serde_json::to_string_pretty(&value).unwrap_or_default())
            }
            Op::TaskUpdate => self.update(input),
            Op::ExitPlanMode => {
                let (team, me) = self.who()?;
                let plan = required(input, "plan")?;
                self.teams.submit_plan(&team, &me, &plan)
            }
        }
    }

    fn update(&self, input: &Value) -> Result<String> {
        let (team, me) = self.who()?;
        let id = task_id(input)?;
        let status = match text(input, "status").as_deref() {
            None => None,
            Some("pending") => Some(Some(TaskStatus::Pending)),
            Some("in_progress") => Some(Some(TaskStatus::InProgress)),
            Some("completed") => Some(Some(TaskStatus::Completed)),
            Some("deleted") => Some(None),
            Some(other) => {
                return Err(Error::InvalidArguments(format!(
                    "unknown status {other:?} (pending, in_progress, completed, deleted)"
                )));
            }
        };
        let owner = text(input, "owner");
        if let Some(owner) = owner.as_deref().filter(|o| !o.is_empty()) {
            let config = team.config()?;
            if config.member(owner).is_none() {
                return Err(Error::unknown_teammate(owner, team.name(), config.names()));
            }
        }
        let changes = TaskChanges {
            subject: text(input, "subject"),
            description: text(input, "description"),
            active_form: text(input, "activeForm"),
            status,
            owner: owner.clone(),
            add_blocks: strings(input, "addBlocks")?,
            add_blocked_by: strings(input, "addBlockedBy")?,
            metadata: metadata(input)?,
        };
        let Some(task) = team.tasks(|list| list.update(&id, changes, &me))? else {
            return Ok(format!("Deleted task #{id}."));
        };
        // A task handed to someone else is announced to them.
        if let Some(owner) = owner.filter(|o| !o.is_empty() && *o != me) {
            let note = format!(
                "{me} assigned task #{} to you: {}\n{}",
                task.id, task.subject, task.description
            );
            let control = json!({"type": "task_assignment", "taskId": task.id});
            self.teams
                .send(&team, &me, &owner, &note, None, Some(&control))?;
        }
        let owner = task.owner.as_deref().unwrap_or("none");
        Ok(format!(
            "Updated task #{}: status {}, owner {owner}.",
            task.id,
            task.status.as_str()
        ))
    }

    fn send(&self, input: &Value) -> Result<String> {
        let (team, me) = self.who()?;
        let mut to = required(input, "to")?;
        let summary = text(input, "summary");
        let (text, control) = match input.get("message") {
            Some(Value::String(text)) => (text.clone(), None),
            Some(Value::Object(object)) => {
                let mut object = object.clone();
                let kind = object
                    .get("type")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned();
                if !CONTROL_TYPES.contains(&kind.as_str()) {
                    return Err(Error::InvalidArguments(format!(
                        "a control message's type is one of {}",
                        CONTROL_TYPES.join(", ")
                    )));
                }
                let mut note = String::new();
                match kind.as_str() {
                    "shutdown_request" => {
                        if me != LEADER {
                            return Err(Error::NotLeader("ask for a shutdown".into()));
                        }
                        if !object.contains_key("request_id") {
                            object.insert("request_id".into(), json!(self.teams.request_id(&to)));
                        }
                        let id = object.get("request_id").cloned().unwrap_or_default();
                        note = format!(
                            "\nAnswer with SendMessage to {LEADER}, message {{\"type\":\"shutdown_response\",\"request_id\":{id},\"approve\":true or false,\"reason\":\"…\"}} (without that tool, answer with that JSON object)."
                        );
                    }
                    "shutdown_response" => {
                        if me == LEADER {
                            return Err(Error::InvalidArguments(
                                "the lead asks for shutdowns; it does not answer them".into(),
                            ));
                        }
                        let Some(approve) = object.get("approve").and_then(Value::as_bool) else {
                            return Err(Error::InvalidArguments(
                                "a shutdown_response needs \"approve\": true or false".into(),
                            ));
                        };
                        to = LEADER.to_owned();
                        if approve {
                            self.teams.approve_shutdown(&me);
                        }
                    }
                    "plan_approval_request" => {
                        if me == LEADER {
                            return Err(Error::InvalidArguments(
                                "the lead approves plans; it does not submit them".into(),
                            ));
                        }
                        let plan = ["plan", "content"]
                            .iter()
                            .find_map(|key| object.get(*key).and_then(Value::as_str))
                            .unwrap_or_default();
                        return self.teams.submit_plan(&team, &me, plan);
                    }
                    "plan_approval_response" => {
                        if me != LEADER {
                            return Err(Error::NotLeader("approve or reject a plan".into()));
                        }
                        let Some(id) = object.get("request_id").and_then(Value::as_str) else {
                            return Err(Error::InvalidArguments(
                                "a plan_approval_response needs the \"request_id\" of the plan_approval_request".into(),
                            ));
                        };
                        let id = id.to_owned();
                        let Some(approve) = object.get("approve").and_then(Value::as_bool) else {
                            return Err(Error::InvalidArguments(
                                "a plan_approval_response needs \"approve\": true or false".into(),
                            ));
                        };
                        let feedback = ["feedback", "content"]
                            .iter()
                            .find_map(|key| object.get(*key).and_then(Value::as_str))
                            .map(str::to_owned);
                        return self.teams.answer_plan(
                            &team,
                            &id,
                            approve,
                            feedback.as_deref(),
                            object,
                        );
                    }
                    _ => {}
                }
                let value = Value::Object(object);
                (format!("{value}{note}"), Some(value))
            }
            _ => {
                return Err(Error::InvalidArguments(
                    "\"message\" is required: text or a control object".into(),
                ));
            }
        };
        if to == me {
            return Err(Error::InvalidArguments(
                "you cannot send a message to yourself".into(),
            ));
        }
        let recipients =
            self.teams
                .send(&team, &me, &to, &text, summary.as_deref(), control.as_ref())?;
        let approved = control.as_ref().is_some_and(|c| {
            c.get("type").and_then(Value::as_str) == Some("shutdown_response")
                && c.get("approve").and_then(Value::as_bool) == Some(true)
        });
        if approved {
            return Ok(
                "Shutdown approved and sent to team-lead. End your turn now: you will not be woken again."
                    .into(),
            );
        }
        if recipients.is_empty() {
            return Ok(format!(
                "Nobody to send to: no other member of team {} takes messages.",
                team.name()
            ));
        }
        Ok(format!("Message sent to {}.", recipients.join(", ")))
    }
}

#[async_trait]
impl Tool for TeamTool {
    fn spec(&self) -> ToolSpec {
        let mut spec = self.op.spec();
        // What a restarted run can reopen, as the tool list is built.
        if self.op == Op::TeamCreate
            && let Ok(teams) = self.teams.store().list()
            && !teams.is_empty()
        {
            let listed: Vec<String> = teams
                .iter()
                .map(|team| {
                    let members: Vec<String> = team
                        .members
                        .iter()
                        .filter(|m| m.name != LEADER)
                        .map(|m| format!("{} {}", m.name, m.status.as_str()))
                        .collect();
                    format!("{} ({})", team.name, members.join(", "))
                })
                .collect();
            spec.description.push_str(&format!(
                "\n\nTeams of this project on disk: {}.",
                listed.join("; ")
            ));
        }
        spec
    }

    fn kind(&self) -> ToolKind {
        // Coordination, not I/O on the user's files: allowed in every mode, background included.
        ToolKind::Internal
    }

    async fn call(
        &self,
        input: Value,
        context: &ToolContext,
    ) -> subagent_runtime::Result<ToolOutput> {
        Ok(match self.run(&input, context) {
            Ok(text) => ToolOutput::ok(text),
            Err(error) => ToolOutput::error(error.to_tool_text()),
        })
    }
}

/// The leader's delegation tool: without `team_name` a plain delegation; with `name` and
/// `team_name` it starts a teammate (always in the background, under the leader's permission
/// ceiling, with its mailbox and the team tools).
pub struct TeamAgentTool {
    teams: Arc<Teams>,
}

impl TeamAgentTool {
    fn inner(&self) -> &DelegationTool {
        self.teams.delegation()
    }

    async fn start(&self, mut input: Value, context: &ToolContext) -> Result<String> {
        self.teams.check_leader(context, "start teammates")?;
        let Some(args) = input.as_object_mut() else {
            return Err(Error::InvalidArguments(
                "arguments must be an object".into(),
            ));
        };
        let team_name = args
            .remove("team_name")
            .and_then(|v| v.as_str().map(str::to_owned));
        let name = args
            .remove("name")
            .and_then(|v| v.as_str().map(str::to_owned));
        let mode = TeammateMode::take(args)?;
        let team = self.teams.current()?;
        if let Some(team_name) = &team_name
            && team_name != team.name()
        {
            return Err(Error::TeamNotFound(team_name.clone()));
        }
        let Some(name) = name else {
            return Err(Error::InvalidArguments(
                "a teammate needs a \"name\" (what messages are sent to)".into(),
            ));
        };
        self.teams.start_teammate(&name, input, mode, context).await
    }
}

#[async_trait]
impl Tool for TeamAgentTool {
    fn spec(&self) -> ToolSpec {
        let mut spec = self.inner().spec();
        if let Some(properties) = spec
            .input_schema
            .get_mut("properties")
            .and_then(Value::as_object_mut)
        {
            properties.insert(
                "name".into(),
                json!({"type": "string", "description": "With team_name: the teammate's name in the team (what messages are sent to)."}),
            );
            properties.insert(
                "mode".into(),
                json!({"type": "string", "enum": ["default", "acceptEdits", "plan", "dontAsk", "bypassPermissions"], "description": "With team_name: the teammate's permission mode (never looser than yours). \"plan\": it stays read-only until you approve its plan (it sends you a plan_approval_request; answer with a plan_approval_response)."}),
            );
            properties.insert(
                "plan_mode_required".into(),
                json!({"type": "boolean", "description": "With team_name: the teammate must have its plan approved by you before it may make changes (as mode \"plan\")."}),
            );
            properties.insert(
                "team_name".into(),
                json!({"type": "string", "description": "Start the agent as a teammate of this team (see TeamCreate): it runs in the background, with its own mailbox and the team's task list, until it approves a shutdown."}),
            );
        }
        spec.description.push_str("\n\nWith name and team_name, the agent joins your team as a teammate instead of returning one result: talk to it with SendMessage.");
        spec
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Delegate
    }

    async fn call(
        &self,
        input: Value,
        context: &ToolContext,
    ) -> subagent_runtime::Result<ToolOutput> {
        let teammate = input.get("team_name").is_some() || input.get("name").is_some();
        if !teammate {
            return self.inner().call(input, context).await;
        }
        Ok(match self.start(input, context).await {
            Ok(text) => ToolOutput::ok(text),
            Err(error) => ToolOutput::error(error.to_tool_text()),
        })
    }
}
