//! The JSON-RPC binding: one POST path, auth and the body limit first, then the version header,
//! then the method. Answers are HTTP 200 with a JSON-RPC result or error, or an SSE stream for
//! the streaming methods; only auth (401), the body limit (413) and a full or draining server
//! (503 with `Retry-After`) answer with another status.

use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::{Request, State as Extract};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use futures::{Stream, StreamExt};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use subagent_a2a::requests::{
    CancelTaskRequest, DEFAULT_PAGE_SIZE, GetTaskRequest, ListTasksRequest, ListTasksResponse,
    MAX_PAGE_SIZE, SendMessageRequest, SubscribeToTaskRequest, trim_history,
};
use subagent_a2a::rpc::{self, Kind, RpcError, method};
use subagent_a2a::sse;
use subagent_a2a::types::StreamResponse;
use subagent_core::RunId;

use crate::State;
use crate::run::{drive, resolve, submitted};
use crate::tasks::{Entry, Hold};

/// How often an idle stream sends a keep-alive comment.
const KEEP_ALIVE: Duration = Duration::from_secs(15);

/// A task's events, as a stream the SSE response reads.
type EventStream = std::pin::Pin<Box<dyn Stream<Item = StreamResponse> + Send>>;

/// A refusal with an HTTP status of its own.
enum Reject {
    Rpc(RpcError),
    Busy(String),
}

impl From<RpcError> for Reject {
    fn from(error: RpcError) -> Self {
        Self::Rpc(error)
    }
}

fn json_body(status: StatusCode, value: &impl serde::Serialize) -> Response {
    let body = serde_json::to_vec(value).unwrap_or_default();
    (
        status,
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        body,
    )
        .into_response()
}

fn answer(id: Value, result: Result<Value, Reject>, state: &State) -> Response {
    match result {
        Ok(result) => json_body(StatusCode::OK, &rpc::Response::result(id, result)),
        Err(Reject::Rpc(error)) => json_body(StatusCode::OK, &rpc::Response::error(id, error)),
        Err(Reject::Busy(message)) => {
            let seconds = state.config.retry_after.as_secs().max(1);
            let error = busy_error(message, seconds);
            let mut response = json_body(
                StatusCode::SERVICE_UNAVAILABLE,
                &rpc::Response::error(id, error),
            );
            if let Ok(value) = HeaderValue::from_str(&seconds.to_string()) {
                response.headers_mut().insert(header::RETRY_AFTER, value);
            }
            response
        }
    }
}

/// The error of a refusal for load: A2A's internal error, plus `{"reason": "BUSY",
/// "metadata": {"retryAfterSeconds": "n"}}` in our domain (ErrorInfo metadata values are
/// strings).
fn busy_error(message: String, seconds: u64) -> RpcError {
    let mut error = RpcError::new(Kind::Internal, message);
    let detail = rpc::error_info(
        "BUSY",
        subagent_a2a::EXTENSION_URI,
        json!({"retryAfterSeconds": seconds.to_string()}),
    );
    if let Some(Value::Array(details)) = &mut error.data {
        details.push(detail);
    }
    error
}

fn unauthorized() -> Response {
    (
        StatusCode::UNAUTHORIZED,
        [(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"))],
        "a bearer token is required (Authorization: Bearer <token>)\n",
    )
        .into_response()
}

fn params<T: DeserializeOwned>(value: Value) -> Result<T, RpcError> {
    serde_json::from_value(value)
        .map_err(|error| RpcError::new(Kind::InvalidParams, format!("invalid params: {error}")))
}

fn not_found(id: &str) -> RpcError {
    RpcError::new(Kind::TaskNotFound, format!("Task {id} not found"))
}

/// `POST /a2a`.
pub(crate) async fn handle(Extract(state): Extract<Arc<State>>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    if let Some(token) = &state.config.token
        && !token.admits(
            parts
                .headers
                .get(header::AUTHORIZATION)
                .map(HeaderValue::as_bytes),
        )
    {
        return unauthorized();
    }
    let Ok(bytes) = axum::body::to_bytes(body, state.config.body_limit).await else {
        let limit = state.config.body_limit;
        return (
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("the request body is over the limit of {limit} bytes\n"),
        )
            .into_response();
    };
    dispatch(&state, &parts.headers, &bytes).await
}

async fn dispatch(state: &Arc<State>, headers: &HeaderMap, bytes: &Bytes) -> Response {
    let value: Value = match serde_json::from_slice(bytes) {
        Ok(value) => value,
        Err(error) => {
            let error = RpcError::new(Kind::ParseError, format!("parse error: {error}"));
            return answer(Value::Null, Err(error.into()), state);
        }
    };
    if value.is_array() {
        let error = RpcError::new(Kind::InvalidRequest, "batch requests are not supported");
        return answer(Value::Null, Err(error.into()), state);
    }
    let id = value.get("id").cloned().unwrap_or(Value::Null);
    let request: rpc::Request = match serde_json::from_value(value) {
        Ok(request) => request,
        Err(error) => {
            let error = RpcError::new(Kind::InvalidRequest, format!("invalid request: {error}"));
            return answer(id, Err(error.into()), state);
        }
    };
    let version = headers
        .get(rpc::VERSION_HEADER)
        .and_then(|value| value.to_str().ok());
    if !rpc::version_supported(version) {
        let error = RpcError::new(
            Kind::VersionNotSupported,
            format!(
                "A2A version {} is not supported: send the header {}: {}",
                version
                    .filter(|v| !v.is_empty())
                    .unwrap_or("0.3 (no header)"),
                rpc::VERSION_HEADER,
                rpc::PROTOCOL_VERSION
            ),
        );
        return answer(id, Err(error.into()), state);
    }
    let params = request.params;
    let result = match request.method.as_str() {
        method::SEND_MESSAGE => send(state, params).await,
        method::SEND_STREAMING_MESSAGE => {
            return match start(state, params, true).await {
                Ok((_, _, Some(events))) => stream(id, events),
                Ok((entry, _, None)) => stream(id, entry.events()),
                Err(reject) => answer(id, Err(reject), state),
            };
        }
        method::SUBSCRIBE_TO_TASK => {
            return match subscribe(state, params) {
                Ok(events) => stream(id, events),
                Err(error) => answer(id, Err(error.into()), state),
            };
        }
        method::GET_TASK => get_task(state, params).map_err(Reject::from),
        method::LIST_TASKS => list_tasks(state, params).map_err(Reject::from),
        method::CANCEL_TASK => cancel_task(state, params).await.map_err(Reject::from),
        other => {
            Err(RpcError::new(Kind::MethodNotFound, format!("Method not found: {other}")).into())
        }
    };
    answer(id, result, state)
}

/// Starts the run a `SendMessage`/`SendStreamingMessage` asks for, or refuses before anything
/// starts.
async fn start(
    state: &Arc<State>,
    params: Value,
    streaming: bool,
) -> Result<(Arc<Entry>, SendMessageRequest, Option<EventStream>), Reject> {
    if state.draining.load(Ordering::SeqCst) {
        return Err(Reject::Busy(
            "the server is shutting down and takes no new messages".to_owned(),
        ));
    }
    let request: SendMessageRequest = self::params(params)?;
    // A message naming a finished task continues it: a new task in the same context, its run
    // the `resume` of the finished one's session (refused by the gate when its provider cannot
    // resume).
    // Its transcript is held from here, so it stays for this run even if the finished task is
    // forgotten meanwhile.
    let (continues, held) = match &request.message.task_id {
        None => (None, None),
        Some(task_id) => {
            let (context, resumable, held) = continued(state, task_id)?;
            (Some((context, resumable)), Some(held))
        }
    };
    let Ok(permit) = Arc::clone(&state.slots).try_acquire_owned() else {
        let limit = state.config.max_concurrent_runs;
        let seconds = state.config.retry_after.as_secs().max(1);
        return Err(Reject::Busy(format!(
            "busy: {limit} runs are going, the most this server runs at once; retry after {seconds} s"
        )));
    };
    let resolved = resolve(
        &state.skills,
        &request.message,
        request.metadata.as_ref(),
        &state.config.cwd,
        state.config.max_depth,
        continues.as_ref().map(|(_, resumable)| resumable),
    )
    .map_err(|error| refused(&error))?;
    let mut child = resolved.request;
    // The settings' rules hold in every run: a provider that cannot keep them refuses.
    if !state.config.permission_rules.is_empty() {
        child.permission_rules = Some(state.config.permission_rules.clone());
    }
    let run = state
        .registry
        .start(&resolved.provider, child)
        .await
        .map_err(|error| refused(&error))?;
    let context_id = request
        .message
        .context_id
        .clone()
        .or_else(|| continues.map(|(context, _)| context))
        .unwrap_or_else(|| RunId::new().to_string());
    let mut message = request.message.clone();
    message.task_id = None;
    let task = submitted(&run, context_id, message);
    let entry = Entry::new(task, run.cancel_token());
    // A streaming client reads every event: its stream is taken before the task goes into the
    // table (past its byte bound, events every stream has read are dropped) and before the run
    // can end (a finished task's events are dropped once nobody reads them).
    let events = streaming.then(|| Box::pin(entry.events()) as EventStream);
    state
        .tasks
        .insert(run.id().to_string(), Arc::clone(&entry), held);
    tracing::info!(task = %run.id(), provider = %resolved.provider, "run started");
    let driven = Arc::clone(&entry);
    let keep_events = state.config.keep_events;
    let tasks = state.tasks.clone();
    state.runs.spawn(async move {
        let outcome = drive(
            Arc::clone(&driven),
            run,
            permit,
            Some(resolved.skill),
            &tasks,
        )
        .await;
        tracing::info!(status = %outcome.status, "run ended");
        // Not tracked: a shutdown does not wait for it.
        tokio::spawn(async move {
            tokio::time::sleep(keep_events).await;
            driven.expire();
        });
    });
    Ok((entry, request, events))
}

/// The context and the way to continue the finished task `task_id`, with a hold on its
/// transcript, or why it cannot be.
fn continued(
    state: &State,
    task_id: &str,
) -> Result<(String, crate::tasks::Resumable, Hold), RpcError> {
    let (entry, held) = state
        .tasks
        .continuing(task_id)
        .ok_or_else(|| not_found(task_id))?;
    let Some(held) = held else {
        return Err(RpcError::new(
            Kind::UnsupportedOperation,
            format!("Task {task_id} takes no further messages while it runs"),
        ));
    };
    let resumable = entry.resumable().ok_or_else(|| {
        RpcError::new(
            Kind::UnsupportedOperation,
            format!(
                "Task {task_id} is in terminal state: {}, and its run left no session to continue",
                entry.state().as_str()
            ),
        )
        .with_code(
            subagent_core::ErrorCode::NotResumable,
            json!({"message": format!("task {task_id} left no session to continue")}),
        )
    })?;
    Ok((entry.snapshot().context_id, resumable, held))
}

fn refused(error: &subagent_core::Error) -> Reject {
    tracing::info!(code = %error.code(), %error, "refused before anything started");
    RpcError::from_core(error).into()
}

async fn send(state: &Arc<State>, params: Value) -> Result<Value, Reject> {
    let (entry, request, _) = start(state, params, false).await?;
    let configuration = request.configuration.unwrap_or_default();
    if !configuration.return_immediately {
        entry.finished().await;
    }
    let mut task = entry.snapshot();
    trim_history(&mut task, configuration.history_length);
    Ok(json!({"task": task}))
}

fn subscribe(
    state: &Arc<State>,
    params: Value,
) -> Result<impl Stream<Item = StreamResponse> + Send + 'static + use<>, RpcError> {
    let request: SubscribeToTaskRequest = self::params(params)?;
    let entry = state
        .tasks
        .get(&request.id)
        .ok_or_else(|| not_found(&request.id))?;
    // Our extension: the events from the index the client has read up to, not a snapshot.
    if let Some(from) = resume_index(request.metadata.as_ref())? {
        let pushed = entry.pushed();
        if from > pushed {
            return Err(invalid_params(format!(
                "metadata[\"{}\"].from {from}: task {} has had {pushed} events",
                subagent_a2a::EXTENSION_URI,
                request.id
            )));
        }
        if let Some(events) = entry.resume_from(from) {
            return Ok(futures::future::Either::Left(events));
        }
    }
    entry
        .subscribe()
        .map(futures::future::Either::Right)
        .ok_or_else(|| {
            RpcError::new(
                Kind::UnsupportedOperation,
                format!(
                    "Task {} is in terminal state: {}",
                    request.id,
                    entry.state().as_str()
                ),
            )
        })
}

/// A refusal of what a request says, with our `INVALID_ARGUMENTS`.
fn invalid_params(message: String) -> RpcError {
    RpcError::from_core(&subagent_core::Error::invalid(message))
}

/// `SubscribeToTask`'s `metadata[EXTENSION_URI]`: `from`, the count of events the client has
/// read, or nothing. Our extension is ours to define, so anything else there (an unknown key,
/// a `from` that is not a count) is invalid params, never ignored: the client asked for
/// something it would not get. Other keys of the metadata belong to other extensions, and
/// extensions the server does not know are A2A's to ignore (it activates the ones it supports;
/// ours is not `required`, so a client without it gets A2A's snapshot).
fn resume_index(
    metadata: Option<&subagent_a2a::types::Metadata>,
) -> Result<Option<usize>, RpcError> {
    let uri = subagent_a2a::EXTENSION_URI;
    let Some(fields) = metadata.and_then(|metadata| metadata.get(uri)) else {
        return Ok(None);
    };
    let Value::Object(fields) = fields else {
        return Err(invalid_params(format!(
            "metadata[\"{uri}\"]: an object is expected, {{\"from\": N}}"
        )));
    };
    if let Some(key) = fields
        .keys()
        .find(|key| key.as_str() != subagent_a2a::ext::FROM_KEY)
    {
        return Err(invalid_params(format!(
            "metadata[\"{uri}\"]: unknown field `{key}`, expected `from`"
        )));
    }
    let Some(from) = fields.get(subagent_a2a::ext::FROM_KEY) else {
        return Ok(None);
    };
    subagent_a2a::u32_of(from)
        .map(|from| Some(usize::try_from(from).unwrap_or(usize::MAX)))
        .ok_or_else(|| {
            invalid_params(format!(
                "metadata[\"{uri}\"].from {from}: not a count of events (a whole number from 0)"
            ))
        })
}

fn get_task(state: &Arc<State>, params: Value) -> Result<Value, RpcError> {
    let request: GetTaskRequest = self::params(params)?;
    let entry = state
        .tasks
        .get(&request.id)
        .ok_or_else(|| not_found(&request.id))?;
    let mut task = entry.snapshot();
    trim_history(&mut task, request.history_length);
    Ok(serde_json::to_value(task).unwrap_or(Value::Null))
}

async fn cancel_task(state: &Arc<State>, params: Value) -> Result<Value, RpcError> {
    let request: CancelTaskRequest = self::params(params)?;
    let entry = state
        .tasks
        .get(&request.id)
        .ok_or_else(|| not_found(&request.id))?;
    if entry.is_done() {
        return Err(RpcError::new(
            Kind::TaskNotCancelable,
            format!("Task cannot be canceled: it is {}", entry.state().as_str()),
        ));
    }
    entry.cancel();
    entry.finished().await;
    Ok(serde_json::to_value(entry.snapshot()).unwrap_or(Value::Null))
}

fn list_tasks(state: &Arc<State>, params: Value) -> Result<Value, RpcError> {
    let request: ListTasksRequest = if params.is_null() {
        ListTasksRequest::default()
    } else {
        self::params(params)?
    };
    let page_size = request
        .page_size
        .unwrap_or(DEFAULT_PAGE_SIZE)
        .clamp(1, MAX_PAGE_SIZE);
    let start: usize = match request.page_token.as_deref() {
        None | Some("") => 0,
        Some(token) => token.parse().map_err(|_| {
            RpcError::new(Kind::InvalidParams, format!("invalid pageToken {token:?}"))
        })?,
    };
    let matching: Vec<_> = state
        .tasks
        .all()
        .into_iter()
        .map(|entry| entry.snapshot())
        .filter(|task| {
            request
                .context_id
                .as_ref()
                .is_none_or(|c| &task.context_id == c)
                && request.status.is_none_or(|s| task.status.state == s)
        })
        .collect();
    let total = matching.len();
    let size = usize::try_from(page_size).unwrap_or(usize::MAX);
    let tasks: Vec<_> = matching
        .into_iter()
        .skip(start)
        .take(size)
        .map(|mut task| {
            trim_history(&mut task, request.history_length);
            if !request.include_artifacts {
                task.artifacts.clear();
            }
            task
        })
        .collect();
    let end = start.saturating_add(tasks.len());
    let response = ListTasksResponse {
        tasks,
        next_page_token: if end < total {
            end.to_string()
        } else {
            String::new()
        },
        page_size: Some(page_size),
        total_size: Some(u32::try_from(total).unwrap_or(u32::MAX)),
    };
    Ok(serde_json::to_value(response).unwrap_or(Value::Null))
}

/// An SSE response of JSON-RPC results, one per event, with keep-alive comments while idle;
/// it ends when the events do.
fn stream(id: Value, events: impl Stream<Item = StreamResponse> + Send + 'static) -> Response {
    let events = Box::pin(events);
    let frames = futures::stream::unfold((events, id), |(mut events, id)| async move {
        let frame = tokio::select! {
            next = events.next() => {
                let event = next?;
                let result = serde_json::to_value(event).unwrap_or(Value::Null);
                sse::event(&rpc::Response::result(id.clone(), result))
            }
            () = tokio::time::sleep(KEEP_ALIVE) => sse::KEEP_ALIVE.to_owned(),
        };
        Some((Ok::<_, Infallible>(Bytes::from(frame)), (events, id)))
    });
    let mut response = Response::new(Body::from_stream(frames));
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(sse::CONTENT_TYPE),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert("x-accel-buffering", HeaderValue::from_static("no"));
    response
}
