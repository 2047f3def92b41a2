//! The params and results of the JSON-RPC methods (the same objects are the HTTP+JSON bodies).

use serde::{Deserialize, Serialize};

use crate::lenient::opt_u32_lenient;
use crate::types::{Message, Metadata, Task, TaskState};

/// How a send should be answered.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SendMessageConfiguration {
    /// Output media types the client accepts.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub accepted_output_modes: Vec<String>,
    /// How much history the returned task carries (absent: all).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "opt_u32_lenient"
    )]
    pub history_length: Option<u32>,
    /// Answer at once with the submitted task instead of waiting for its end.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub return_immediately: bool,
}

/// `SendMessage` and `SendStreamingMessage` params.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SendMessageRequest {
    /// The message.
    pub message: Message,
    /// How to answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub configuration: Option<SendMessageConfiguration>,
    /// Free-form.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

/// `SendMessage`'s result: a task or a message (a oneof, never a bare task).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum SendMessageResponse {
    /// The task the message started.
    Task(Task),
    /// A direct answer.
    Message(Message),
}

/// `GetTask` params.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GetTaskRequest {
    /// The task.
    pub id: String,
    /// How much history to return (absent: all; 0: none).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "opt_u32_lenient"
    )]
    pub history_length: Option<u32>,
}

/// `CancelTask` params.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CancelTaskRequest {
    /// The task.
    pub id: String,
    /// Free-form.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

/// `SubscribeToTask` params.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubscribeToTaskRequest {
    /// The task.
    pub id: String,
    /// Not in A2A's request: our extension reads `metadata[EXTENSION_URI].from`
    /// ([`crate::ext::FROM_KEY`]); other servers ignore it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

/// The most `ListTasks` returns per page.
pub const MAX_PAGE_SIZE: u32 = 100;
/// `ListTasks`' page size when none is asked.
pub const DEFAULT_PAGE_SIZE: u32 = 50;

/// `ListTasks` params.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListTasksRequest {
    /// Only tasks of this context.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_id: Option<String>,
    /// Only tasks in this state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<TaskState>,
    /// At most this many (default 50, at most 100).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "opt_u32_lenient"
    )]
    pub page_size: Option<u32>,
    /// Where the previous page ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page_token: Option<String>,
    /// How much history each task carries.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "opt_u32_lenient"
    )]
    pub history_length: Option<u32>,
    /// Keep artifacts (stripped otherwise).
    #[serde(default)]
    pub include_artifacts: bool,
}

/// `ListTasks`' result.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListTasksResponse {
    /// The page.
    #[serde(default)]
    pub tasks: Vec<Task>,
    /// The next page's token ("" at the end).
    #[serde(default)]
    pub next_page_token: String,
    /// The page size used.
    #[serde(default, deserialize_with = "opt_u32_lenient")]
    pub page_size: Option<u32>,
    /// How many tasks match.
    #[serde(default, deserialize_with = "opt_u32_lenient")]
    pub total_size: Option<u32>,
}

/// Keeps the last `length` messages of `task`'s history (`None`: all; `0`: none).
pub fn trim_history(task: &mut Task, length: Option<u32>) {
    if let Some(length) = length {
        let keep = usize::try_from(length).unwrap_or(usize::MAX);
        let cut = task.history.len().saturating_sub(keep);
        task.history.drain(..cut);
    }
}
