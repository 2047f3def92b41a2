//! One Chrome DevTools Protocol connection: commands out with their ids, a reader task that
//! hands each answer to the command that waits for it and keeps what pages report as errors
//! (console errors, uncaught exceptions, error log entries: per session, bounded).
//!
//! Deliberately not here: any other event (a page test polls the page's own state instead of
//! following the protocol's events) and any knowledge of particular domains beyond those three
//! error reports.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::oneshot;

use super::ws;

/// How many error reports a connection keeps (the first ones: the cause comes first).
const MAX_ERRORS: usize = 200;

/// The longest one error report kept.
const MAX_ERROR_CHARS: usize = 2000;

/// The answer to a command: its `result`, or the protocol's error (or why there is none).
type Answer = Result<Value, String>;

#[derive(Default)]
struct Shared {
    pending: Mutex<HashMap<u64, oneshot::Sender<Answer>>>,
    /// `(session id, report)`: what pages reported as errors, in order.
    errors: Mutex<Vec<(String, String)>>,
    /// Why the connection ended, once it did.
    closed: Mutex<Option<String>>,
}

/// A connection to the browser's DevTools endpoint; the reader task ends when it is dropped.
pub(crate) struct Connection {
    writer: tokio::sync::Mutex<ws::Writer>,
    next_id: AtomicU64,
    shared: Arc<Shared>,
    reader: tokio::task::JoinHandle<()>,
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

fn truncated(text: &str) -> String {
    match text.char_indices().nth(MAX_ERROR_CHARS) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_owned(),
    }
}

impl Connection {
    /// Connects to `ws://127.0.0.1:{port}{path}` (the browser endpoint Chromium announces).
    pub(crate) async fn open(port: u16, path: &str) -> std::io::Result<Self> {
        let (reader, writer) = ws::connect(port, path).await?;
        let shared = Arc::new(Shared::default());
        let reader = tokio::spawn(read_loop(reader, Arc::clone(&shared)));
        Ok(Self {
            writer: tokio::sync::Mutex::new(writer),
            next_id: AtomicU64::new(1),
            shared,
            reader,
        })
    }

    /// Sends `method` with `params` (to the page of `session`, or to the browser) and waits up
    /// to `timeout` for its answer.
    pub(crate) async fn call(
        &self,
        session: Option<&str>,
        method: &str,
        params: Value,
        timeout: Duration,
    ) -> Answer {
        if let Some(why) = lock(&self.shared.closed).clone() {
            return Err(why);
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let mut message = json!({"id": id, "method": method, "params": params});
        if let Some(session) = session {
            message["sessionId"] = json!(session);
        }
        let (tx, rx) = oneshot::channel();
        lock(&self.shared.pending).insert(id, tx);
        let sent = self
            .writer
            .lock()
            .await
            .send_text(&message.to_string())
            .await;
        if let Err(e) = sent {
            lock(&self.shared.pending).remove(&id);
            return Err(format!("sending {method}: {e}"));
        }
        match tokio::time::timeout(timeout, rx).await {
            Ok(Ok(answer)) => answer,
            Ok(Err(_)) => Err(lock(&self.shared.closed)
                .clone()
                .unwrap_or_else(|| "the connection to the browser ended".to_owned())),
            Err(_) => {
                lock(&self.shared.pending).remove(&id);
                Err(format!("no answer to {method} within {timeout:?}"))
            }
        }
    }

    /// The errors the page of `session` reported so far.
    pub(crate) fn errors(&self, session: &str) -> Vec<String> {
        lock(&self.shared.errors)
            .iter()
            .filter(|(of, _)| of == session)
            .map(|(_, report)| report.clone())
            .collect()
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        self.reader.abort();
    }
}

async fn read_loop(mut reader: ws::Reader, shared: Arc<Shared>) {
    let why = loop {
        match reader.next_text().await {
            Ok(Some(text)) => match serde_json::from_str::<Value>(&text) {
                Ok(message) => dispatch(&shared, message),
                Err(e) => break format!("the browser sent a message that is not JSON: {e}"),
            },
            Ok(None) => break "the browser closed the DevTools connection".to_owned(),
            Err(e) => break format!("reading from the browser: {e}"),
        }
    };
    *lock(&shared.closed) = Some(why);
    // Every command still waiting learns it now (its sender is dropped).
    lock(&shared.pending).clear();
}

fn dispatch(shared: &Shared, message: Value) {
    if let Some(id) = message.get("id").and_then(Value::as_u64) {
        if let Some(waiter) = lock(&shared.pending).remove(&id) {
            let answer = match message.get("error") {
                Some(error) => Err(format!("the browser answered: {error}")),
                None => Ok(message.get("result").cloned().unwrap_or(Value::Null)),
            };
            let _ = waiter.send(answer);
        }
        return;
    }
    let Some(session) = message.get("sessionId").and_then(Value::as_str) else {
        return;
    };
    let params = &message["params"];
    let report = match message["method"].as_str() {
        Some("Runtime.consoleAPICalled") if params["type"] == "error" => {
            let args: Vec<String> = params["args"]
                .as_array()
                .map(Vec::as_slice)
                .unwrap_or_default()
                .iter()
                .map(|arg| match &arg["value"] {
                    Value::String(text) => text.clone(),
                    Value::Null => arg["description"].as_str().unwrap_or("").to_owned(),
                    value => value.to_string(),
                })
                .collect();
            format!("console.error: {}", args.join(" "))
        }
        Some("Runtime.exceptionThrown") => {
            let details = &params["exceptionDetails"];
            let text = details["exception"]["description"]
                .as_str()
                .or_else(|| details["text"].as_str())
                .unwrap_or("an exception");
            format!("uncaught: {text}")
        }
        Some("Log.entryAdded") if params["entry"]["level"] == "error" => {
            let entry = &params["entry"];
            let url = entry["url"].as_str().map(|u| format!(" ({u})"));
            format!(
                "log: {}{}",
                entry["text"].as_str().unwrap_or(""),
                url.unwrap_or_default()
            )
        }
        _ => return,
    };
    let mut errors = lock(&shared.errors);
    if errors.len() < MAX_ERRORS {
        errors.push((session.to_owned(), truncated(&report)));
    }
}
