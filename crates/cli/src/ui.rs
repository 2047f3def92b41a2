//! `subagent ui`: a live page of the record of runs (crate `subagent-runs`) and of the teams in
//! the state dir, served on 127.0.0.1 (or `--listen`) behind a random token printed in its URL.
//! The page (`ui/page.html`: its styles and script inline, built into the binary, nothing
//! fetched from elsewhere) polls the JSON of this module: the tree of runs, one run's events
//! from an offset, the teams (members, task list with owners and blockers, messages), and a stop
//! button per running run that asks its owner as `subagent stop` does. It reads the record, so
//! it shows the runs of every `subagent` process of the user, those started before it included.
//!
//! Deliberately not here: writing the record (`crate::recording`), the HTTP accept loop and its
//! bounds (`subagent-http`).

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use axum::Router;
use axum::extract::{Path as UrlPath, State};
use axum::http::{HeaderMap, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};
use subagent_http::Token;
use subagent_runs::{Lookup, Runs};

use crate::args::UiArgs;
use crate::{EXIT_COMPLETED, Refusal, RefusalCode};

/// The page.
const PAGE: &str = include_str!("ui/page.html");
/// The most of a run's events one answer carries.
const EVENTS_CHUNK: u64 = 1 << 20;
/// The most finished runs the page lists.
const FINISHED_SHOWN: usize = 200;

struct Shared {
    runs: Runs,
    token: Token,
    /// `<state dir>/subagents/teams`.
    teams: Option<PathBuf>,
}

/// A fresh random token (two random UUIDs' hex: 244 random bits).
fn random_token() -> String {
    format!(
        "{}{}",
        subagent_core::RunId::new().to_string().replace('-', ""),
        subagent_core::RunId::new().to_string().replace('-', "")
    )
}

pub(crate) async fn ui(args: &UiArgs) -> Result<ExitCode, Refusal> {
    let runs = crate::recording::runs().ok_or_else(|| {
        Refusal::new(
            RefusalCode::Runs("RUNS_UNAVAILABLE"),
            "no runs are recorded without a state dir (set HOME or XDG_STATE_HOME to an absolute path)",
        )
    })?;
    let secret = random_token();
    let token = Token::new(&secret).ok_or_else(|| Refusal::invalid("no token"))?;
    let addr = crate::listen::address(&args.listen, Some(&token))?;
    let (listener, bound) = crate::listen::bind(addr)?;
    let teams = crate::recording::state_root(&|name| subagent_session::env::var(name))
        .map(|root| root.join("teams"));
    let shared = Arc::new(Shared {
        runs,
        token: token.clone(),
        teams,
    });
    let router = Router::new()
        .route("/", get(page))
        .route("/api/runs", get(list))
        .route("/api/runs/{id}/events", get(events))
        .route("/api/runs/{id}/stop", post(stop))
        .route("/api/teams", get(teams_json))
        .with_state(shared);
    let host = if bound.ip().is_unspecified() {
        "127.0.0.1".to_owned()
    } else {
        bound.ip().to_string()
    };
    let url = format!("http://{host}:{}/?token={secret}", bound.port());
    outln!("{url}");
    eprintln!(
        "the page of your runs is at the URL above (it holds the page's token); Ctrl-C stops serving it"
    );
    let (max, per_peer) = subagent_http::default_bounds(subagent_http::fd_limit());
    let bounds = subagent_http::Bounds {
        max,
        per_peer,
        header_timeout: std::time::Duration::from_secs(10),
        sockets: subagent_http::socket_bound(max, subagent_http::fd_limit()),
    };
    let stop = subagent_core::CancellationToken::new();
    let serving = tokio::spawn(subagent_http::serve(
        listener,
        router,
        bounds,
        Some(token),
        stop.clone(),
    ));
    crate::stop::stop_signal().await;
    stop.cancel();
    let _ = serving.await;
    Ok(ExitCode::from(EXIT_COMPLETED))
}

/// Whether the request carries the token: `Authorization: Bearer …`, or `?token=…`.
fn admitted(shared: &Shared, headers: &HeaderMap, query: &TokenQuery) -> bool {
    if shared
        .token
        .admits(headers.get(header::AUTHORIZATION).map(|v| v.as_bytes()))
    {
        return true;
    }
    query.token.as_ref().is_some_and(|token| {
        shared
            .token
            .admits(Some(format!("Bearer {token}").as_bytes()))
    })
}

fn refused() -> Response {
    (
        StatusCode::UNAUTHORIZED,
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        "this page needs its token: open the URL `subagent ui` printed\n",
    )
        .into_response()
}

/// What a request's query says: `token=…` and `from=…` (plain text: a token is hex, an offset
/// digits).
#[derive(Default)]
struct TokenQuery {
    token: Option<String>,
    from: Option<u64>,
}

impl TokenQuery {
    fn of(uri: &Uri) -> Self {
        let mut query = Self::default();
        for pair in uri.query().unwrap_or_default().split('&') {
            match pair.split_once('=') {
                Some(("token", value)) => query.token = Some(value.to_owned()),
                Some(("from", value)) => query.from = value.parse().ok(),
                _ => {}
            }
        }
        query
    }
}

/// `value` as a JSON answer with `status`.
fn json_answer(status: StatusCode, value: &Value) -> Response {
    (
        status,
        [
            (header::CONTENT_TYPE, "application/json"),
            (header::CACHE_CONTROL, "no-store"),
        ],
        value.to_string(),
    )
        .into_response()
}

async fn page(State(shared): State<Arc<Shared>>, headers: HeaderMap, uri: Uri) -> Response {
    let query = TokenQuery::of(&uri);
    if !admitted(&shared, &headers, &query) {
        return refused();
    }
    (
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::CACHE_CONTROL, "no-store"),
            (header::REFERRER_POLICY, "no-referrer"),
            (
                header::CONTENT_SECURITY_POLICY,
                "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; img-src data:",
            ),
        ],
        PAGE,
    )
        .into_response()
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

async fn list(State(shared): State<Arc<Shared>>, headers: HeaderMap, uri: Uri) -> Response {
    let query = TokenQuery::of(&uri);
    if !admitted(&shared, &headers, &query) {
        return refused();
    }
    let shared = Arc::clone(&shared);
    let runs = tokio::task::spawn_blocking(move || {
        let mut records = shared.runs.live();
        let done = shared.runs.done();
        let skip = done.len().saturating_sub(FINISHED_SHOWN);
        records.extend(done.into_iter().skip(skip));
        subagent_runs::tree(records)
            .into_iter()
            .map(|(depth, record)| {
                let mut value = serde_json::to_value(&record).unwrap_or(Value::Null);
                value["depth"] = json!(depth);
                value["short"] = json!(record.id.short());
                value
            })
            .collect::<Vec<Value>>()
    })
    .await
    .unwrap_or_default();
    json_answer(StatusCode::OK, &json!({"runs": runs, "now_ms": now_ms()}))
}

/// The request's query and the run `id` names, for a request that carries the token; else the
/// answer (401, or 404 `RUN_NOT_FOUND`).
fn the_run(
    shared: &Shared,
    headers: &HeaderMap,
    id: &str,
    uri: &Uri,
) -> Result<(TokenQuery, subagent_runs::Record), Box<Response>> {
    let query = TokenQuery::of(uri);
    if !admitted(shared, headers, &query) {
        return Err(Box::new(refused()));
    }
    match shared.runs.find(id) {
        Lookup::Found(record) => Ok((query, *record)),
        _ => Err(Box::new(json_answer(
            StatusCode::NOT_FOUND,
            &json!({"code": "RUN_NOT_FOUND"}),
        ))),
    }
}

async fn events(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    UrlPath(id): UrlPath<String>,
    uri: Uri,
) -> Response {
    let (query, record) = match the_run(&shared, &headers, &id, &uri) {
        Ok(found) => found,
        Err(answer) => return *answer,
    };
    let from = query.from.unwrap_or(0);
    let runs = shared.runs.clone();
    let running = record.running();
    // The first look (no `from`) starts with the run's start.
    let first = query
        .from
        .is_none()
        .then(|| subagent_runs::Runs::started(&record));
    let (mut lines, next) =
        tokio::task::spawn_blocking(move || runs.events_from(&record, from, EVENTS_CHUNK))
            .await
            .unwrap_or((Vec::new(), from));
    lines.splice(0..0, first);
    let events: Vec<Value> = lines
        .iter()
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect();
    json_answer(
        StatusCode::OK,
        &json!({
            "events": events,
            "next": next,
            "running": running,
        }),
    )
}

async fn stop(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    UrlPath(id): UrlPath<String>,
    uri: Uri,
) -> Response {
    let record = match the_run(&shared, &headers, &id, &uri) {
        Ok((_, record)) => record,
        Err(answer) => return *answer,
    };
    if !record.running() {
        return json_answer(
            StatusCode::CONFLICT,
            &json!({"code": "RUN_NOT_RUNNING", "status": record.status.as_str()}),
        );
    }
    match shared.runs.request_stop(record.id) {
        Ok(()) => json_answer(StatusCode::OK, &json!({"asked": true, "id": record.id})),
        Err(error) => json_answer(
            StatusCode::INTERNAL_SERVER_ERROR,
            &json!({"code": "RUNS_UNAVAILABLE", "message": error.to_string()}),
        ),
    }
}

async fn teams_json(State(shared): State<Arc<Shared>>, headers: HeaderMap, uri: Uri) -> Response {
    let query = TokenQuery::of(&uri);
    if !admitted(&shared, &headers, &query) {
        return refused();
    }
    let root = shared.teams.clone();
    let teams =
        tokio::task::spawn_blocking(move || root.map(|root| read_teams(&root)).unwrap_or_default())
            .await
            .unwrap_or_default();
    json_answer(StatusCode::OK, &json!({"teams": teams}))
}

/// Every team of every project under `root`: its members, tasks and messages.
fn read_teams(root: &Path) -> Vec<Value> {
    let Ok(projects) = std::fs::read_dir(root) else {
        return Vec::new();
    };
    let mut teams = Vec::new();
    for project in projects.flatten() {
        let store = subagent_teams::TeamStore::new(project.path());
        let Ok(configs) = store.list() else { continue };
        for config in configs {
            let Ok(team) = store.open(&config.name) else {
                continue;
            };
            let tasks = team.task_list().map(|list| list.tasks).unwrap_or_default();
            let mut messages = Vec::new();
            for member in std::iter::once(config.lead.clone())
                .chain(config.members.iter().map(|m| m.name.clone()))
            {
                for message in team.messages(&member).unwrap_or_default() {
                    messages.push(json!({
                        "to": member,
                        "from": message.from,
                        "text": message.text,
                        "summary": message.summary,
                        "timestamp": message.timestamp,
                    }));
                }
            }
            messages.sort_by_key(|m| m["timestamp"].as_u64().unwrap_or(0));
            teams.push(json!({
                "project": project.file_name().to_string_lossy(),
                "name": config.name,
                "description": config.description,
                "lead": config.lead,
                "members": config.members,
                "tasks": tasks,
                "messages": messages,
            }));
        }
    }
    teams
}
