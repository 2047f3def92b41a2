//! What travels over NATS: the names (streams, subjects, buckets), a job, the envelope of a
//! run's events, a worker's announcement of a row. JSON everywhere, so a job or an event can be
//! read with any NATS tool.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use subagent_core::{
    Capabilities, Effort, ErrorCode, Outcome, ParentContext, PermissionMode, RunEvent, RunId,
    SessionRef, StartRequest, ToolFilter,
};
use subagent_session::ContentBlock;

/// The work-queue stream of jobs (`subagents.jobs.<row>.<run id>`).
pub const JOBS_STREAM: &str = "SUBAGENT_JOBS";
/// The limits stream of run events (`subagents.events.<run id>`), kept a day for replay.
pub const EVENTS_STREAM: &str = "SUBAGENT_EVENTS";
/// The key-value bucket where workers announce the rows they serve (key: the row's token, a
/// dot, the worker's token: see [`announcement_key`]).
pub const ROWS_BUCKET: &str = "SUBAGENT_ROWS";
/// The key-value bucket of run state: `<run id>.attempt` (the newest attempt a worker took)
/// and `<run id>.cancel` (set when the submitter cancelled).
pub const RUNS_BUCKET: &str = "SUBAGENT_RUNS";

/// A row name as one subject token, consumer name or key: ASCII letters, digits, `-` and `_`
/// stay, any other byte is `=` and two hex digits.
pub fn token(row: &str) -> String {
    let mut out = String::with_capacity(row.len());
    for byte in row.bytes() {
        if byte.is_ascii_alphanumeric() || byte == b'-' || byte == b'_' {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("={byte:02x}"));
        }
    }
    out
}

/// The subject a job for `row` with this run id is published on.
pub fn job_subject(row: &str, run: RunId) -> String {
    format!("subagents.jobs.{}.{run}", token(row))
}

/// The subjects of every job of `row` (the row's consumer's filter).
pub fn row_jobs(row: &str) -> String {
    format!("subagents.jobs.{}.*", token(row))
}

/// The subject a submitter publishes on (core NATS) once a job of `row` is stored: it wakes
/// the idle workers of the row (a wake-up on the job's own subject could come before the
/// stream stored it).
pub fn wake_subject(row: &str) -> String {
    format!("subagents.wake.{}", token(row))
}

/// The key under which `worker` announces `row` in [`ROWS_BUCKET`].
pub fn announcement_key(row: &str, worker: &str) -> String {
    format!("{}.{}", token(row), token(worker))
}

/// The durable consumer every worker serving `row` shares.
pub fn consumer_name(row: &str) -> String {
    format!("row-{}", token(row))
}

/// The subject a run's events are published on.
pub fn events_subject(run: RunId) -> String {
    format!("subagents.events.{run}")
}

/// The subject the worker holding a run listens on for a cancel (a request: the reply says it
/// was heard).
pub fn cancel_subject(run: RunId) -> String {
    format!("subagents.cancel.{run}")
}

/// The run-state key holding the newest attempt.
pub fn attempt_key(run: RunId) -> String {
    format!("{run}.attempt")
}

/// The run-state key set when the run was cancelled.
pub fn cancel_key(run: RunId) -> String {
    format!("{run}.cancel")
}

/// A request as it travels: the fields of [`StartRequest`] a worker can honour, and the run id
/// the submitter knows the run by (also the message id, so a retried publish is stored once).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Job {
    /// The submitter's run id.
    pub run_id: RunId,
    /// The worker-side row to run.
    pub row: String,
    /// The task.
    pub prompt: Vec<ContentBlock>,
    /// A short label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The submitter's depth (the child runs one deeper).
    pub depth: u32,
    /// Structured output wanted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Value>,
    /// A lower depth cap.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_depth: Option<u32>,
    /// Which tools the child may use.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_filter: Option<ToolFilter>,
    /// Instructions added to the child's own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub persona: Option<String>,
    /// The model the child runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Turn limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_turns: Option<u32>,
    /// A finished run of the same row to continue.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resume: Option<SessionRef>,
    /// How hard the child's model reasons.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effort: Option<Effort>,
    /// The agent types the child may start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_types: Option<Vec<String>>,
    /// The loosest permission mode the child may run in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permission_ceiling: Option<PermissionMode>,
    /// The key the worker holding the job seals the run's envelopes with
    /// ([`crate::seal`]): made by the submitter, known to it and to whoever holds the job,
    /// never sent on the events subject. (A job of an older submitter has none.)
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub key: String,
}

/// A fresh key for a job ([`Job::key`], what [`crate::seal`] seals with): 244 random bits (two v4 UUIDs from the OS's generator), hex.
pub fn new_key() -> String {
    format!("{}{}", RunId::new(), RunId::new()).replace('-', "")
}

impl Job {
    /// The job for `request`, to run on `row` under `run_id`.
    pub fn new(run_id: RunId, row: &str, request: &StartRequest) -> Self {
        Self {
            run_id,
            row: row.to_owned(),
            prompt: request.prompt.clone(),
            description: Some(request.description_or_default()),
            depth: request.parent.depth,
            output_schema: request.output_schema.clone(),
            max_depth: request.max_depth,
            tool_filter: request.tool_filter.clone(),
            persona: request.persona.clone(),
            model: request.model.clone(),
            max_turns: request.max_turns,
            resume: request.resume.clone(),
            effort: request.effort,
            agent_types: request.agent_types.clone(),
            permission_ceiling: request.permission_ceiling,
            key: new_key(),
        }
    }

    /// Whether the job is the one its subject names (`subagents.jobs.<row>.<run id>`: the same
    /// row and run): a worker runs only such a job, so a job published on another job's
    /// subject (or naming another row) never runs under a run id it was not sent for.
    pub fn matches_subject(&self, subject: &str) -> bool {
        subject == job_subject(&self.row, self.run_id)
    }

    /// The request a worker starts through its registry: in `cwd` (the worker's, not the
    /// submitter's), as a background run (nobody on the worker can be asked anything).
    pub fn request(&self, cwd: PathBuf) -> StartRequest {
        let mut request = StartRequest::new(String::new(), cwd);
        request.prompt = self.prompt.clone();
        request.description = self.description.clone();
        request.parent = ParentContext {
            depth: self.depth,
            ..request.parent
        };
        request.output_schema = self.output_schema.clone();
        request.max_depth = self.max_depth;
        request.tool_filter = self.tool_filter.clone();
        request.persona = self.persona.clone();
        request.model = self.model.clone();
        request.max_turns = self.max_turns;
        request.resume = self.resume.clone();
        request.effort = self.effort;
        request.agent_types = self.agent_types.clone();
        request.permission_ceiling = self.permission_ceiling;
        request.background = true;
        request
    }
}

/// One message on a run's events subject, sealed by the worker that holds the job
/// ([`crate::seal`]: the seal travels in a header, over these exact bytes).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Envelope {
    /// The attempt (the job's delivery count) that published it.
    pub attempt: u32,
    /// The run it belongs to (the job's run id): one naming another run is not the run's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<RunId>,
    /// Its place among its attempt's envelopes, from 1: one that does not come after the last
    /// one read (a replay) is dropped.
    #[serde(default)]
    pub seq: u64,
    /// What happened.
    pub body: Body,
}

/// What an [`Envelope`] says.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Body {
    /// A worker took the job (first message of each attempt).
    Taken {
        /// The worker's name.
        worker: String,
    },
    /// An event of the run (its `Started` and `Finished` are the submitter's own, never sent).
    Event {
        /// The event.
        event: RunEvent,
    },
    /// The worker's registry refused the request: the run ends failed with this code.
    Refused {
        /// The refusal's stable code.
        code: ErrorCode,
        /// The refusal's text.
        message: String,
    },
    /// The run ended.
    Outcome {
        /// How.
        outcome: Outcome,
    },
}

/// What a worker announces for each row it serves, under [`announcement_key`] in
/// [`ROWS_BUCKET`]: put again every third of `ttl_ms` while the worker runs, deleted when it
/// stops; one not refreshed within `ttl_ms` is a lost worker's.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Announcement {
    /// The row.
    pub row: String,
    /// The worker.
    pub worker: String,
    /// The row's capability table on the worker.
    pub capabilities: Capabilities,
    /// When the worker put it (milliseconds since the Unix epoch, the worker's clock).
    #[serde(default)]
    pub refreshed_ms: u64,
    /// How long it holds without being put again (0: an entry of an older worker, never live).
    #[serde(default)]
    pub ttl_ms: u64,
}

impl Announcement {
    /// Whether it still holds at `now_ms` (the reader's clock: the machines' clocks are
    /// assumed to agree to well within the time to live).
    pub fn is_live(&self, now_ms: u64) -> bool {
        self.refreshed_ms.saturating_add(self.ttl_ms) > now_ms
    }
}

/// What crosses the wire of a worker's row: every gated capability but `isolation` (the
/// worker's registry prepares its places on its own machine, and a submitter's isolator has
/// nothing to move there); never `inherits_parent_context` (the submitter's conversation
/// does not travel).
pub fn carried(worker: Capabilities) -> Capabilities {
    let mut caps = worker;
    caps.isolation = false;
    caps.inherits_parent_context = false;
    // Not carried across the wire (see `CARRIED`).
    caps.permission_rules = false;
    caps.mcp_servers = false;
    caps
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn row_names_become_single_tokens() {
        assert_eq!(token("spawn_1-a"), "spawn_1-a");
        assert_eq!(token("a.b *>"), "a=2eb=20=2a=3e");
        let run = RunId::new();
        assert_eq!(
            job_subject("x.y", run),
            format!("subagents.jobs.x=2ey.{run}")
        );
        assert_eq!(row_jobs("x"), "subagents.jobs.x.*");
        assert_eq!(announcement_key("a.b", "w-1@h"), "a=2eb.w-1=40h");
    }

    #[test]
    fn an_announcement_holds_for_its_time_to_live() {
        let announcement = Announcement {
            row: "r".to_owned(),
            worker: "w".to_owned(),
            capabilities: Capabilities::NONE,
            refreshed_ms: 1_000,
            ttl_ms: 500,
        };
        assert_eq!(
            (announcement.is_live(1_499), announcement.is_live(1_500)),
            (true, false)
        );
        let older: Announcement = serde_json::from_value(serde_json::json!({
            "row": "r", "worker": "w", "capabilities": Capabilities::NONE,
        }))
        .unwrap();
        assert!(!older.is_live(0));
    }

    #[test]
    fn a_job_carries_the_request_fields() {
        let request = StartRequest::builder("do it")
            .cwd("/submitter")
            .depth(2)
            .persona("terse")
            .max_turns(3)
            .build();
        let job = Job::new(RunId::new(), "spawn", &request);
        let back: Job = serde_json::from_slice(&serde_json::to_vec(&job).unwrap()).unwrap();
        assert_eq!(back, job);
        let rebuilt = back.request(PathBuf::from("/worker"));
        assert_eq!(
            (
                rebuilt.prompt_text(),
                rebuilt.parent.depth,
                rebuilt.parent.cwd,
                rebuilt.persona,
                rebuilt.max_turns,
                rebuilt.background
            ),
            (
                "do it".to_owned(),
                2,
                PathBuf::from("/worker"),
                Some("terse".to_owned()),
                Some(3),
                true
            )
        );
    }
}
