//! The A2A 1.0 data model in its protobuf JSON form: camelCase fields, enums as their proto
//! names (`TASK_STATE_COMPLETED`, `ROLE_USER`), unset fields omitted on write.
//!
//! Readers are lenient: unknown fields are ignored, default values printed by another SDK
//! (`"filename":""`, `"extensions":[]`) read as absent, an unknown enum value reads as the
//! `…_UNSPECIFIED` one.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Free-form JSON object carried by most A2A objects.
pub type Metadata = Map<String, Value>;

/// Who sent a message.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Role {
    /// The client.
    #[serde(rename = "ROLE_USER", alias = "user")]
    User,
    /// The agent.
    #[serde(rename = "ROLE_AGENT", alias = "agent")]
    Agent,
    /// Not set (also what an unknown value reads as).
    #[default]
    #[serde(rename = "ROLE_UNSPECIFIED", other)]
    Unspecified,
}

/// The state of a task.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum TaskState {
    /// Accepted, not yet working.
    #[serde(rename = "TASK_STATE_SUBMITTED")]
    Submitted,
    /// Working.
    #[serde(rename = "TASK_STATE_WORKING")]
    Working,
    /// Finished with an answer.
    #[serde(rename = "TASK_STATE_COMPLETED")]
    Completed,
    /// Finished without one.
    #[serde(rename = "TASK_STATE_FAILED")]
    Failed,
    /// Cancelled (one L on the wire).
    #[serde(rename = "TASK_STATE_CANCELED")]
    Canceled,
    /// Waiting for the client's next message.
    #[serde(rename = "TASK_STATE_INPUT_REQUIRED")]
    InputRequired,
    /// Refused by the agent.
    #[serde(rename = "TASK_STATE_REJECTED")]
    Rejected,
    /// Waiting for credentials.
    #[serde(rename = "TASK_STATE_AUTH_REQUIRED")]
    AuthRequired,
    /// Not set (also what an unknown value reads as).
    #[default]
    #[serde(rename = "TASK_STATE_UNSPECIFIED", other)]
    Unspecified,
}

impl TaskState {
    /// Completed, failed, canceled or rejected: nothing more will happen.
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            Self::Completed | Self::Failed | Self::Canceled | Self::Rejected
        )
    }

    /// Input-required or auth-required: the agent waits for the client.
    pub fn is_interrupted(self) -> bool {
        matches!(self, Self::InputRequired | Self::AuthRequired)
    }

    /// The proto name (`TASK_STATE_WORKING`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Unspecified => "TASK_STATE_UNSPECIFIED",
            Self::Submitted => "TASK_STATE_SUBMITTED",
            Self::Working => "TASK_STATE_WORKING",
            Self::Completed => "TASK_STATE_COMPLETED",
            Self::Failed => "TASK_STATE_FAILED",
            Self::Canceled => "TASK_STATE_CANCELED",
            Self::InputRequired => "TASK_STATE_INPUT_REQUIRED",
            Self::Rejected => "TASK_STATE_REJECTED",
            Self::AuthRequired => "TASK_STATE_AUTH_REQUIRED",
        }
    }
}

fn is_empty_str(text: &Option<String>) -> bool {
    text.as_deref().is_none_or(str::is_empty)
}

fn non_empty<'de, D: serde::Deserializer<'de>>(de: D) -> Result<Option<String>, D::Error> {
    let text: Option<String> = Option::deserialize(de)?;
    Ok(text.filter(|text| !text.is_empty()))
}

fn null_as_default<'de, D, T>(de: D) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    Ok(Option::<T>::deserialize(de)?.unwrap_or_default())
}

/// One piece of content: exactly one of `text`, `raw` (base64), `url` or `data` is set.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Part {
    /// Text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Bytes, base64.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw: Option<String>,
    /// A file by URL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Any JSON value (structured output). Another SDK may send every number as a double:
    /// read it with [`crate::integral_numbers`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
    /// Its media type.
    #[serde(
        default,
        skip_serializing_if = "is_empty_str",
        deserialize_with = "non_empty"
    )]
    pub media_type: Option<String>,
    /// Its file name.
    #[serde(
        default,
        skip_serializing_if = "is_empty_str",
        deserialize_with = "non_empty"
    )]
    pub filename: Option<String>,
    /// Free-form.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

impl Part {
    /// A text part.
    pub fn text(text: impl Into<String>) -> Self {
        Self {
            text: Some(text.into()),
            ..Self::default()
        }
    }

    /// A data part (`application/json`).
    pub fn data(data: Value) -> Self {
        Self {
            data: Some(data),
            media_type: Some("application/json".to_owned()),
            ..Self::default()
        }
    }
}

/// One message of a conversation.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Message {
    /// Chosen by the sender.
    pub message_id: String,
    /// Who sent it.
    #[serde(default)]
    pub role: Role,
    /// The content (at least one part).
    #[serde(default, deserialize_with = "null_as_default")]
    pub parts: Vec<Part>,
    /// The conversation it belongs to.
    #[serde(
        default,
        skip_serializing_if = "is_empty_str",
        deserialize_with = "non_empty"
    )]
    pub context_id: Option<String>,
    /// The task it continues.
    #[serde(
        default,
        skip_serializing_if = "is_empty_str",
        deserialize_with = "non_empty"
    )]
    pub task_id: Option<String>,
    /// Free-form; our request fields travel here under [`crate::EXTENSION_URI`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
    /// Extension URIs the message uses.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "null_as_default"
    )]
    pub extensions: Vec<String>,
    /// Earlier tasks it refers to.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "null_as_default"
    )]
    pub reference_task_ids: Vec<String>,
}

impl Message {
    /// A message with one text part.
    pub fn text(message_id: impl Into<String>, role: Role, text: impl Into<String>) -> Self {
        Self {
            message_id: message_id.into(),
            role,
            parts: vec![Part::text(text)],
            ..Self::default()
        }
    }

    /// The text parts joined by newlines.
    pub fn joined_text(&self) -> String {
        joined_text(&self.parts)
    }
}

/// The text parts of `parts` joined by newlines.
pub fn joined_text(parts: &[Part]) -> String {
    parts
        .iter()
        .filter_map(|part| part.text.as_deref())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Appends a chunk's parts to an artifact: a plain text part (text and nothing else) that
/// follows one grows it rather than adding a part, so an answer streamed in thousands of chunks
/// is one text, not a part per chunk (an artifact's text parts read as one text anyway).
fn append_parts(artifact: &mut Artifact, parts: &[Part]) {
    let mut parts = parts.iter();
    if let (Some(last), Some(first)) = (artifact.parts.last_mut(), parts.as_slice().first())
        && plain_text(last).is_some()
        && let Some(more) = plain_text(first)
        && let Some(text) = &mut last.text
    {
        text.push_str(more);
        parts.next();
    }
    artifact.parts.extend(parts.cloned());
}

/// The text of a part that is text and nothing else.
fn plain_text(part: &Part) -> Option<&String> {
    let Part {
        text: Some(text),
        raw: None,
        url: None,
        data: None,
        media_type: None,
        filename: None,
        metadata: None,
    } = part
    else {
        return None;
    };
    Some(text)
}

/// Where a task stands.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskStatus {
    /// Its state.
    #[serde(default)]
    pub state: TaskState,
    /// The agent's message with this status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<Message>,
    /// RFC 3339, UTC.
    #[serde(
        default,
        skip_serializing_if = "is_empty_str",
        deserialize_with = "non_empty"
    )]
    pub timestamp: Option<String>,
}

/// An output of a task.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Artifact {
    /// Its id (unique in the task).
    pub artifact_id: String,
    /// Its name.
    #[serde(
        default,
        skip_serializing_if = "is_empty_str",
        deserialize_with = "non_empty"
    )]
    pub name: Option<String>,
    /// What it is.
    #[serde(
        default,
        skip_serializing_if = "is_empty_str",
        deserialize_with = "non_empty"
    )]
    pub description: Option<String>,
    /// Its content.
    #[serde(default, deserialize_with = "null_as_default")]
    pub parts: Vec<Part>,
    /// Free-form.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
    /// Extension URIs it uses.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "null_as_default"
    )]
    pub extensions: Vec<String>,
}

/// A unit of work the agent does for a client.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Task {
    /// Chosen by the server.
    pub id: String,
    /// The conversation it belongs to.
    #[serde(default)]
    pub context_id: String,
    /// Where it stands.
    #[serde(default)]
    pub status: TaskStatus,
    /// Its outputs.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "null_as_default"
    )]
    pub artifacts: Vec<Artifact>,
    /// The messages so far.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "null_as_default"
    )]
    pub history: Vec<Message>,
    /// Free-form; our outcome travels here under [`crate::EXTENSION_URI`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

/// A task's new status, streamed.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskStatusUpdateEvent {
    /// The task.
    pub task_id: String,
    /// Its context.
    #[serde(default)]
    pub context_id: String,
    /// The new status.
    #[serde(default)]
    pub status: TaskStatus,
    /// Free-form; our run events travel here under [`crate::EXTENSION_URI`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

/// A task's artifact (or a chunk of it), streamed.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskArtifactUpdateEvent {
    /// The task.
    pub task_id: String,
    /// Its context.
    #[serde(default)]
    pub context_id: String,
    /// The artifact or chunk.
    pub artifact: Artifact,
    /// Adds the parts to the artifact of the same id instead of replacing it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub append: bool,
    /// The artifact's last chunk.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub last_chunk: bool,
    /// Free-form.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

/// One event of a stream (`SendStreamingMessage`, `SubscribeToTask`): exactly one key.
/// There is no `final` flag in 1.0: the stream ends when the server closes it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum StreamResponse {
    /// The task, whole (first event of a task stream).
    Task(Task),
    /// A message (a stream of one).
    Message(Message),
    /// A new status.
    StatusUpdate(TaskStatusUpdateEvent),
    /// An artifact or a chunk of one.
    ArtifactUpdate(TaskArtifactUpdateEvent),
}

impl StreamResponse {
    /// The state this event puts its task in, when it says.
    pub fn state(&self) -> Option<TaskState> {
        match self {
            Self::Task(task) => Some(task.status.state),
            Self::StatusUpdate(update) => Some(update.status.state),
            Self::Message(_) | Self::ArtifactUpdate(_) => None,
        }
    }

    /// Whether the stream ends after this event (a terminal or interrupted state, a message).
    pub fn ends_stream(&self) -> bool {
        match self {
            Self::Message(_) => true,
            other => other
                .state()
                .is_some_and(|state| state.is_terminal() || state.is_interrupted()),
        }
    }
}

/// Applies a streamed event to a task snapshot the way the SDKs' task stores do: a status
/// replaces the status (the previous status message moves into the history), an artifact
/// update replaces or appends to the artifact of its id.
pub fn apply(task: &mut Task, event: &StreamResponse) {
    match event {
        StreamResponse::Task(whole) => *task = whole.clone(),
        StreamResponse::Message(message) => task.history.push(message.clone()),
        StreamResponse::StatusUpdate(update) => {
            let previous = std::mem::replace(&mut task.status, update.status.clone());
            if let Some(message) = previous.message {
                task.history.push(message);
            }
        }
        StreamResponse::ArtifactUpdate(update) => {
            let existing = task
                .artifacts
                .iter_mut()
                .find(|artifact| artifact.artifact_id == update.artifact.artifact_id);
            match existing {
                Some(artifact) if update.append => append_parts(artifact, &update.artifact.parts),
                Some(artifact) => *artifact = update.artifact.clone(),
                None => task.artifacts.push(update.artifact.clone()),
            }
        }
    }
}
