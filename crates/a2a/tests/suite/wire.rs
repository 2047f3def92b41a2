//! Messages, tasks and stream events: read as the SDKs write them, written as they accept.

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use subagent_a2a::requests::{ListTasksRequest, SendMessageRequest, SendMessageResponse};
use subagent_a2a::types::{
    Artifact, Message, Part, Role, StreamResponse, Task, TaskArtifactUpdateEvent, TaskState,
    TaskStatus, TaskStatusUpdateEvent, apply,
};

#[test]
fn a_send_message_request_reads_and_writes_back_the_same_json() {
    let wire =
        json!({"message": {"messageId": "m3", "role": "ROLE_USER", "parts": [{"text": "hello"}]}});
    let request: SendMessageRequest = serde_json::from_value(wire.clone()).unwrap();
    assert_eq!(
        request,
        SendMessageRequest {
            message: Message::text("m3", Role::User, "hello"),
            configuration: None,
            metadata: None,
        }
    );
    assert_eq!(serde_json::to_value(&request).unwrap(), wire);
}

#[test]
fn the_send_message_result_is_a_oneof_wrapper_around_the_task() {
    let wire = json!({"task": {"id": "52b8", "contextId": "a3b8", "status": {"state": "TASK_STATE_COMPLETED",
        "message": {"messageId": "r1", "role": "ROLE_AGENT", "parts": [{"text": "done"}]}, "timestamp": "2026-11-30T23:09:16.017046Z"},
        "artifacts": [{"artifactId": "a1", "parts": [{"data": {"answer": 42.0}, "mediaType": "application/json"}]}],
        "history": [{"messageId": "m3", "role": "ROLE_USER", "parts": [{"text": "hello"}]}]}});
    let response: SendMessageResponse = serde_json::from_value(wire.clone()).unwrap();
    let SendMessageResponse::Task(task) = &response else {
        panic!("expected a task: {response:?}");
    };
    assert_eq!(
        task.status,
        TaskStatus {
            state: TaskState::Completed,
            message: Some(Message::text("r1", Role::Agent, "done")),
            timestamp: Some("2026-11-30T23:09:16.017046Z".to_owned()),
        }
    );
    assert_eq!(
        subagent_a2a::integral_numbers(task.artifacts[0].parts[0].data.clone().unwrap()),
        json!({"answer": 42})
    );
    assert_eq!(serde_json::to_value(&response).unwrap(), wire);
}

#[test]
fn defaults_printed_by_another_sdk_and_unknown_fields_read_as_absent() {
    // ListTasks in Python prints defaults; JS prints every field; 0.3 readers add `kind`.
    let wire = json!({"messageId": "m1", "role": "ROLE_AGENT", "kind": "message",
        "parts": [{"text": "hi", "filename": "", "mediaType": "", "metadata": null}],
        "contextId": "", "taskId": "", "extensions": [], "referenceTaskIds": null, "future": 1});
    let message: Message = serde_json::from_value(wire).unwrap();
    assert_eq!(message, Message::text("m1", Role::Agent, "hi"));
}

#[test]
fn roles_and_states_are_proto_enum_names_and_unknown_ones_read_as_unspecified() {
    let states: Vec<TaskState> = serde_json::from_value(json!([
        "TASK_STATE_SUBMITTED",
        "TASK_STATE_WORKING",
        "TASK_STATE_COMPLETED",
        "TASK_STATE_FAILED",
        "TASK_STATE_CANCELED",
        "TASK_STATE_INPUT_REQUIRED",
        "TASK_STATE_REJECTED",
        "TASK_STATE_AUTH_REQUIRED",
        "TASK_STATE_UNSPECIFIED",
        "TASK_STATE_PAUSED"
    ]))
    .unwrap();
    assert_eq!(
        states,
        [
            TaskState::Submitted,
            TaskState::Working,
            TaskState::Completed,
            TaskState::Failed,
            TaskState::Canceled,
            TaskState::InputRequired,
            TaskState::Rejected,
            TaskState::AuthRequired,
            TaskState::Unspecified,
            TaskState::Unspecified
        ]
    );
    let terminal: Vec<bool> = states.iter().map(|s| s.is_terminal()).collect();
    assert_eq!(
        terminal,
        [
            false, false, true, true, true, false, true, false, false, false
        ]
    );
    for state in &states[..9] {
        assert_eq!(serde_json::to_value(state).unwrap(), json!(state.as_str()));
    }
    let roles: Vec<Role> = serde_json::from_value(json!([
        "ROLE_USER",
        "ROLE_AGENT",
        "user",
        "agent",
        "ROLE_X"
    ]))
    .unwrap();
    assert_eq!(
        roles,
        [
            Role::User,
            Role::Agent,
            Role::User,
            Role::Agent,
            Role::Unspecified
        ]
    );
    assert_eq!(
        serde_json::to_value(Role::User).unwrap(),
        json!("ROLE_USER")
    );
}

#[test]
fn stream_events_carry_exactly_one_key_and_no_final_flag() {
    let lines = [
        json!({"task": {"id": "t", "contextId": "c", "status": {"state": "TASK_STATE_SUBMITTED"},
            "history": [{"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "hello"}]}]}}),
        json!({"statusUpdate": {"taskId": "t", "contextId": "c", "status": {"state": "TASK_STATE_WORKING"}}}),
        json!({"artifactUpdate": {"taskId": "t", "contextId": "c", "artifact": {"artifactId": "a", "parts": [{"text": "echo: hello"}]}}}),
        json!({"artifactUpdate": {"taskId": "t", "contextId": "c", "artifact": {"artifactId": "a", "parts": [{"text": " (more)"}]}, "append": true, "lastChunk": true}}),
        json!({"statusUpdate": {"taskId": "t", "contextId": "c", "status": {"state": "TASK_STATE_COMPLETED",
            "message": {"messageId": "r", "role": "ROLE_AGENT", "parts": [{"text": "done"}]}}}}),
    ];
    let events: Vec<StreamResponse> = lines
        .iter()
        .map(|line| serde_json::from_value(line.clone()).unwrap())
        .collect();
    let written: Vec<Value> = events
        .iter()
        .map(|e| serde_json::to_value(e).unwrap())
        .collect();
    assert_eq!(written, lines);
    let ends: Vec<bool> = events.iter().map(StreamResponse::ends_stream).collect();
    assert_eq!(ends, [false, false, false, false, true]);

    let mut task = Task::default();
    for event in &events {
        apply(&mut task, event);
    }
    assert_eq!(
        task,
        Task {
            id: "t".to_owned(),
            context_id: "c".to_owned(),
            status: TaskStatus {
                state: TaskState::Completed,
                message: Some(Message::text("r", Role::Agent, "done")),
                timestamp: None,
            },
            artifacts: vec![Artifact {
                artifact_id: "a".to_owned(),
                parts: vec![Part::text("echo: hello (more)")],
                ..Artifact::default()
            }],
            history: vec![Message::text("m", Role::User, "hello")],
            metadata: None,
        }
    );
    // The typed events serialise without the 0.3 `final`/`kind`.
    let update = serde_json::to_value(StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
        task_id: "t".to_owned(),
        context_id: "c".to_owned(),
        status: TaskStatus {
            state: TaskState::Canceled,
            message: None,
            timestamp: None,
        },
        metadata: None,
    }))
    .unwrap();
    assert_eq!(
        update,
        json!({"statusUpdate": {"taskId": "t", "contextId": "c", "status": {"state": "TASK_STATE_CANCELED"}}})
    );
    let chunk = TaskArtifactUpdateEvent {
        task_id: "t".to_owned(),
        artifact: Artifact {
            artifact_id: "a".to_owned(),
            ..Artifact::default()
        },
        ..TaskArtifactUpdateEvent::default()
    };
    assert_eq!(
        serde_json::to_value(chunk).unwrap(),
        json!({"taskId": "t", "contextId": "", "artifact": {"artifactId": "a", "parts": []}})
    );
}

#[test]
fn parts_are_one_of_text_raw_url_data() {
    let wire = json!([{"text": "hi"}, {"data": {"answer": 42, "items": ["a"]}, "mediaType": "application/json"},
        {"url": "https://example.invalid/f.pdf", "filename": "f.pdf", "mediaType": "application/pdf"}, {"raw": "aGk="}]);
    let parts: Vec<Part> = serde_json::from_value(wire.clone()).unwrap();
    assert_eq!(parts[1], Part::data(json!({"answer": 42, "items": ["a"]})));
    assert_eq!(serde_json::to_value(&parts).unwrap(), wire);
}

#[test]
fn list_tasks_params_read_numbers_written_as_doubles_or_strings() {
    let request: ListTasksRequest = serde_json::from_value(json!({"contextId": "c",
        "status": "TASK_STATE_WORKING", "pageSize": 10.0, "historyLength": "2", "includeArtifacts": true}))
    .unwrap();
    assert_eq!(
        request,
        ListTasksRequest {
            context_id: Some("c".to_owned()),
            status: Some(TaskState::Working),
            page_size: Some(10),
            page_token: None,
            history_length: Some(2),
            include_artifacts: true,
        }
    );
}

/// A streamed answer is thousands of appended text chunks: the task keeps them as one text
/// part, not one part (of some 200 bytes) per chunk (issue 26.5: 64 tasks of 200 KB answers in
/// 5-byte chunks held ~500 MiB of parts). Parts that are not plain text stay as they came.
#[test]
fn appended_text_chunks_grow_one_part() {
    let chunk = |parts: Vec<Part>, append: bool| {
        StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
            task_id: "t".to_owned(),
            artifact: Artifact {
                artifact_id: "a".to_owned(),
                parts,
                ..Artifact::default()
            },
            append,
            ..TaskArtifactUpdateEvent::default()
        })
    };
    let mut task = Task::default();
    apply(&mut task, &chunk(vec![Part::text("w0 ")], false));
    for i in 1..10_000 {
        apply(&mut task, &chunk(vec![Part::text(format!("w{i} "))], true));
    }
    let whole: String = (0..10_000).map(|i| format!("w{i} ")).collect();
    assert_eq!(task.artifacts[0].parts, vec![Part::text(whole.clone())]);

    // A data part, a text part with a media type and a second part of one chunk stay apart.
    let typed = Part {
        media_type: Some("text/markdown".to_owned()),
        ..Part::text("# h")
    };
    apply(
        &mut task,
        &chunk(vec![Part::data(json!({"k": 1})), Part::text("x")], true),
    );
    apply(
        &mut task,
        &chunk(vec![typed.clone(), Part::text("y")], true),
    );
    apply(&mut task, &chunk(vec![Part::text("z")], true));
    assert_eq!(
        task.artifacts[0].parts,
        vec![
            Part::text(whole),
            Part::data(json!({"k": 1})),
            Part::text("x"),
            typed,
            Part::text("yz"),
        ]
    );
}
