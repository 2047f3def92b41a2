//! The A2A 1.0 wire as both sides read it. The provider side: an SSE stream from a remote agent
//! (`subagent_a2a::sse::Decoder`), each event's data a JSON-RPC response whose result is a
//! `StreamResponse`, taken into the run (`Assembly`, the a2a provider's event handling) and
//! applied to a task; the outcome at the end. The server side: the same bytes as a JSON-RPC
//! request and as the params `subagent serve` reads (`SendMessageRequest` with our request
//! fields in the message metadata, `GetTask`/`ListTasks`/`CancelTask`/`SubscribeToTask`), and as
//! an agent card. Whatever the bytes, no panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use subagent_a2a::Assembly;
use subagent_a2a::card::AgentCard;
use subagent_a2a::ext::{CardParams, RequestFields};
use subagent_a2a::requests::{
    CancelTaskRequest, GetTaskRequest, ListTasksRequest, SendMessageRequest, SendMessageResponse,
    SubscribeToTaskRequest, trim_history,
};
use subagent_a2a::rpc;
use subagent_a2a::types::{StreamResponse, Task, apply, joined_text};

fn provider_side(data: &[u8], ours: bool) {
    let mut decoder = subagent_a2a::sse::Decoder::new(64 * 1024);
    let Ok(events) = decoder.feed(data) else {
        return;
    };
    let mut assembly = Assembly::new(ours);
    let mut task = Task::default();
    for event in events {
        let Ok(response) = serde_json::from_str::<rpc::Response>(&event.data) else {
            continue;
        };
        let Some(result) = response.result else {
            continue;
        };
        let Ok(event) = serde_json::from_value::<StreamResponse>(result) else {
            continue;
        };
        let _ = event.state();
        let _ = assembly.take(&event);
        apply(&mut task, &event);
        if assembly.ended() {
            break;
        }
    }
    let _ = assembly.task_id();
    let _ = assembly.outcome("fuzz");
    trim_history(&mut task, Some(1));
}

fn server_side(data: &[u8]) {
    let Ok(value) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    if let Ok(request) = serde_json::from_value::<rpc::Request>(value.clone()) {
        let params = request.params;
        if let Ok(send) = serde_json::from_value::<SendMessageRequest>(params.clone()) {
            let _ = RequestFields::from_metadata(send.message.metadata.as_ref());
            let _ = joined_text(&send.message.parts);
        }
        let _ = serde_json::from_value::<GetTaskRequest>(params.clone());
        let _ = serde_json::from_value::<ListTasksRequest>(params.clone());
        let _ = serde_json::from_value::<CancelTaskRequest>(params.clone());
        let _ = serde_json::from_value::<SubscribeToTaskRequest>(params);
    }
    let _ = serde_json::from_value::<SendMessageResponse>(value.clone());
    let _ = serde_json::from_value::<AgentCard>(value.clone());
    let _ = serde_json::from_value::<CardParams>(value);
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    provider_side(rest, mode & 1 == 0);
    server_side(rest);
});
