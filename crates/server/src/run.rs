//! From a sent message to a run, and from the run's events to the task's.
//!
//! A message becomes a [`StartRequest`] (its text parts the prompt, our extension's metadata the
//! request fields, the skill choosing the provider and, for an agent type, its profile) and is
//! started through the [`Registry`], so every gate applies before anything runs. The run's
//! events become `statusUpdate`s (state working, the event itself in our extension's metadata);
//! its outcome becomes a `result` artifact (the text, and the structured output as a data part)
//! and the final status (completed, canceled, or failed with the diagnostic as its message).

use std::path::Path;
use std::sync::Arc;

use futures::StreamExt;
use serde_json::Value;
use subagent_a2a::ext::{RequestFields, metadata_with};
use subagent_a2a::types::{
    Artifact, Message, Part, Role, StreamResponse, Task, TaskArtifactUpdateEvent, TaskState,
    TaskStatus, TaskStatusUpdateEvent,
};
use subagent_core::agents::AgentProfile;
use subagent_core::{Error, Outcome, Run, RunEvent, RunId, StartRequest, StopReason};

use crate::tasks::{Entry, Resumable, Tasks};

/// One skill the server offers: a delegation row, or an agent type.
#[derive(Clone, Debug)]
pub struct Skill {
    /// Its id (the row's tool name, or the agent type's name).
    pub id: String,
    /// What it does.
    pub description: String,
    /// The provider that runs it.
    pub provider: String,
    /// The agent type's profile, for an agent type.
    pub agent: Option<AgentProfile>,
}

/// What a request resolved to: the provider to start and the request.
#[derive(Debug)]
pub(crate) struct Resolved {
    /// The provider.
    pub provider: String,
    /// The skill it was sent to.
    pub skill: String,
    /// The request.
    pub request: StartRequest,
}

/// The prompt of a message: its text parts, and its data parts as JSON, joined by newlines.
fn prompt(message: &Message) -> String {
    message
        .parts
        .iter()
        .filter_map(|part| match (&part.text, &part.data) {
            (Some(text), _) => Some(text.clone()),
            (None, Some(data)) => Some(data.to_string()),
            (None, None) => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Builds the request a message asks for; `continues` is the finished task a message continues
/// (its provider runs the message as `resume` of its session, its skill is the default).
/// `INVALID_ARGUMENTS` for an empty prompt, unreadable fields or an unknown skill;
/// `UNKNOWN_AGENT_TYPE` for an agent type the server does not offer; `DEPTH_EXCEEDED` when the
/// child would run deeper than `max_depth`.
pub(crate) fn resolve(
    skills: &[Skill],
    message: &Message,
    request_metadata: Option<&subagent_a2a::types::Metadata>,
    cwd: &Path,
    max_depth: u32,
    continues: Option<&Resumable>,
) -> Result<Resolved, Error> {
    let text = prompt(message);
    if text.trim().is_empty() {
        return Err(Error::invalid(
            "the message has no text: send the task as a text part",
        ));
    }
    let fields = match RequestFields::from_metadata(message.metadata.as_ref()) {
        Ok(Some(fields)) => fields,
        Ok(None) => RequestFields::from_metadata(request_metadata)
            .map_err(Error::invalid)?
            .unwrap_or_default(),
        Err(error) => return Err(Error::invalid(error)),
    };
    let named = fields
        .skill
        .clone()
        .or_else(|| continues.and_then(|resumable| resumable.skill.clone()));
    let skill = match &named {
        Some(id) => skills.iter().find(|skill| &skill.id == id).ok_or_else(|| {
            Error::invalid(format!(
                "no skill \"{id}\" here (skills: {})",
                skills
                    .iter()
                    .map(|s| s.id.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        })?,
        None => skills
            .first()
            .ok_or_else(|| Error::invalid("this server offers no skill"))?,
    };
    let agent = match &fields.agent_type {
        Some(name) => Some(
            skills
                .iter()
                .find_map(|skill| skill.agent.as_ref().filter(|agent| &agent.name == name))
                .ok_or_else(|| Error::UnknownAgentType {
                    name: name.clone(),
                    available: skills
                        .iter()
                        .filter_map(|s| s.agent.as_ref().map(|a| a.name.clone()))
                        .collect(),
                })?,
        ),
        None => skill.agent.as_ref(),
    };
    let depth = fields.depth.unwrap_or(0);
    let child_depth = depth.saturating_add(1);
    if child_depth > max_depth {
        return Err(Error::DepthExceeded {
            child_depth,
            max_depth,
        });
    }
    let provider = match continues {
        Some(resumable) => resumable.provider.clone(),
        None => agent
            .and_then(|agent| agent.provider.clone())
            .unwrap_or_else(|| skill.provider.clone()),
    };
    let mut builder = StartRequest::builder(text)
        .cwd(cwd)
        .depth(depth)
        .background(true);
    if let Some(agent) = agent {
        builder = builder.agent(agent);
    }
    if let Some(description) = fields.description {
        builder = builder.description(description);
    }
    if let Some(schema) = fields.output_schema {
        builder = builder.output_schema(subagent_a2a::integral_numbers(schema));
    }
    if let Some(turns) = fields.max_turns {
        builder = builder.max_turns(turns);
    }
    if let Some(filter) = &fields.tool_filter {
        builder = builder.restrict_tools(filter);
    }
    if let Some(persona) = &fields.persona {
        builder = builder.add_persona(persona);
    }
    if let Some(model) = fields.model {
        builder = builder.model(model);
    }
    if let Some(cap) = fields.max_depth {
        builder = builder.max_depth(cap);
    }
    if let Some(effort) = fields.effort {
        builder = builder.effort(effort);
    }
    if let Some(ceiling) = fields.permission_ceiling {
        builder = builder.permission_ceiling(ceiling);
    }
    if let Some(resumable) = continues {
        builder = builder.resume(resumable.session.clone());
    }
    let mut request = builder.build();
    // What the agent type gives its child beyond its settings (skills, memory, MCP servers;
    // its hooks run only where a child runs in process, and not through this door).
    if let Some(agent) = agent {
        for warning in agent.give(&mut request) {
            tracing::warn!("{warning}");
        }
    }
    Ok(Resolved {
        provider,
        skill: skill.id.clone(),
        request,
    })
}

/// The submitted task of a new run: the user's message in its history.
pub(crate) fn submitted(run: &Run, context_id: String, mut message: Message) -> Task {
    let id = run.id().to_string();
    message.task_id = Some(id.clone());
    message.context_id = Some(context_id.clone());
    Task {
        id,
        context_id,
        status: status(TaskState::Submitted, None),
        artifacts: Vec::new(),
        history: vec![message],
        metadata: None,
    }
}

fn status(state: TaskState, message: Option<Message>) -> TaskStatus {
    TaskStatus {
        state,
        message,
        timestamp: Some(subagent_a2a::time::now()),
    }
}

fn agent_message(task: &Task, text: String) -> Message {
    Message {
        message_id: RunId::new().to_string(),
        role: Role::Agent,
        parts: vec![Part::text(text)],
        context_id: Some(task.context_id.clone()),
        task_id: Some(task.id.clone()),
        ..Message::default()
    }
}

fn update(
    task: &Task,
    state: TaskState,
    message: Option<Message>,
    meta: Option<Value>,
) -> StreamResponse {
    StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
        task_id: task.id.clone(),
        context_id: task.context_id.clone(),
        status: status(state, message),
        metadata: meta.map(|event| metadata_with("event", event)),
    })
}

/// The outcome as a remote caller sees it: the session names the run (to resume it), not
/// where the server keeps its transcript or which directory it ran in.
fn public(outcome: &Outcome) -> Outcome {
    let mut outcome = outcome.clone();
    if let Some(session) = &mut outcome.session {
        session.cwd = None;
        session.transcript = None;
    }
    outcome
}

/// The A2A state an outcome ends in.
pub(crate) fn final_state(status: StopReason) -> TaskState {
    match status {
        StopReason::Completed => TaskState::Completed,
        StopReason::Cancelled => TaskState::Canceled,
        _ => TaskState::Failed,
    }
}

/// Drives a started run into its task until the outcome, which it returns. `slot` (the run's
/// place among the concurrent runs) is given back before the final status goes out, so a
/// client that saw the end can start another run at once; so is what continuing the task needs
/// (its provider, `skill` and session), so a client that saw the end can continue it at once,
/// and the session's transcript is counted for the task in `tasks` (deleted once forgotten).
pub(crate) async fn drive<S>(
    entry: Arc<Entry>,
    mut run: Run,
    slot: S,
    skill: Option<String>,
    tasks: &Tasks,
) -> Outcome {
    let task = entry.snapshot();
    let provider = run.provider().to_owned();
    if let Some(mut events) = run.take_events() {
        while let Some(event) = events.next().await {
            if matches!(event, RunEvent::Finished { .. }) {
                continue;
            }
            let meta = serde_json::to_value(&event).unwrap_or(Value::Null);
            tasks.push(&entry, update(&task, TaskState::Working, None, Some(meta)));
        }
    }
    let outcome = run.outcome().await;
    let mut parts = Vec::new();
    if !outcome.text.is_empty() {
        parts.push(Part::text(outcome.text.clone()));
    }
    if let Some(structured) = &outcome.structured {
        parts.push(Part::data(structured.clone()));
    }
    if !parts.is_empty() {
        tasks.push(
            &entry,
            StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
                task_id: task.id.clone(),
                context_id: task.context_id.clone(),
                artifact: Artifact {
                    artifact_id: "result".to_owned(),
                    name: Some("result".to_owned()),
                    parts,
                    ..Artifact::default()
                },
                append: false,
                last_chunk: true,
                metadata: None,
            }),
        );
    }
    let state = final_state(outcome.status);
    let said = match (&outcome.diagnostic, state) {
        (Some(diagnostic), TaskState::Failed | TaskState::Canceled) => diagnostic.clone(),
        _ => outcome.text.clone(),
    };
    let message = (!said.is_empty()).then(|| agent_message(&task, said));
    let outcome_json = serde_json::to_value(public(&outcome)).unwrap_or(Value::Null);
    entry.set_metadata(metadata_with("outcome", outcome_json.clone()));
    let mut last = update(&task, state, message, None);
    if let StreamResponse::StatusUpdate(last) = &mut last {
        last.metadata = Some(metadata_with("outcome", outcome_json));
    }
    if let Some(session) = &outcome.session {
        // The run has ended, its transcript closed (written and closed before the outcome).
        if let Some(transcript) = &session.transcript {
            tasks.attach(&entry, transcript);
        }
        entry.set_resumable(Resumable {
            provider,
            skill,
            session: session.clone(),
        });
    }
    drop(slot);
    tasks.push(&entry, last);
    outcome
}
