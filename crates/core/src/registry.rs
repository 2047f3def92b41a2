//! The registry: providers by name, and the gates every start passes.
//!
//! Gating, in [`Registry::check`] and [`Registry::start`]: lookup (`UNKNOWN_PROVIDER`) →
//! capabilities (`UNSUPPORTED_CAPABILITY`, naming every missing one) → depth (`DEPTH_EXCEEDED`
//! past the smaller of the request's `max_depth` and the registry's cap) → output schema
//! (`INVALID_ARGUMENTS` unless object-rooted) → isolation (`INVALID_ARGUMENTS` when the request
//! asks for it and no [`Isolator`] is installed) → the isolator prepares the child's place (it
//! may refuse too: a parent outside any git repository) → the provider's `start` (a refusal
//! there abandons the place) → the isolator takes over the run. A refused start calls nothing
//! of the provider and notifies no [`RegistryObserver`]. Nothing is global: a registry is a
//! value built once and passed.

use std::sync::{Arc, PoisonError, RwLock};

use serde_json::Value;

use crate::isolation::Isolator;
use crate::{Error, Result, Run, StartRequest, SubagentProvider};

/// The depth cap when none is configured: a top-level agent (depth 0) may delegate three levels
/// down.
pub const DEFAULT_MAX_DEPTH: u32 = 3;

/// Told about every run the registry started (never about refused starts).
pub trait RegistryObserver: Send + Sync {
    /// A provider accepted a start.
    fn started(&self, provider: &str, run: &Run);
}

/// What a [`RunRecorder`] is told of a run the registry started, taken from its request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StartedRun {
    /// The provider's name.
    pub provider: String,
    /// Its description.
    pub description: String,
    /// The runs it descends from, the top-level one first (empty for a top-level start).
    pub lineage: Vec<crate::RunId>,
    /// Where it works.
    pub cwd: std::path::PathBuf,
    /// Its agent type, when it runs one.
    pub agent_type: Option<String>,
    /// Its name in a team, when it is a teammate.
    pub teammate: Option<String>,
    /// Whether it runs in the background.
    pub background: bool,
}

/// Keeps a record of every run the registry starts (the CLI's is a file record every `subagent`
/// command of a user shares: `subagent ps`). Called after every gate passed and the provider
/// started; it returns the run the caller gets: `run` itself, or a relay of it
/// ([`Run::relay`]) that records what passes through and may cancel it.
pub trait RunRecorder: Send + Sync {
    /// Records `run`, started as `started` says.
    fn record(&self, started: StartedRun, run: Run) -> Run;
}

/// Providers by name, in insertion order, behind the gates of the seam.
///
/// A value built once and passed around (wrap it in an `Arc` to share); nothing is global.
pub struct Registry {
    providers: RwLock<Vec<Arc<dyn SubagentProvider>>>,
    max_depth: u32,
    observers: Vec<Arc<dyn RegistryObserver>>,
    isolator: Option<Arc<dyn Isolator>>,
    recorder: Option<Arc<dyn RunRecorder>>,
}

impl Default for Registry {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registry")
            .field("providers", &self.names())
            .field("max_depth", &self.max_depth)
            .field("isolator", &self.isolator.is_some())
            .finish_non_exhaustive()
    }
}

impl Registry {
    /// An empty registry with the default depth cap.
    pub fn new() -> Self {
        Self::with_max_depth(DEFAULT_MAX_DEPTH)
    }

    /// An empty registry whose starts may not run deeper than `max_depth`.
    pub fn with_max_depth(max_depth: u32) -> Self {
        Self {
            providers: RwLock::new(Vec::new()),
            max_depth,
            observers: Vec::new(),
            isolator: None,
            recorder: None,
        }
    }

    /// The registry's absolute depth cap.
    pub fn max_depth(&self) -> u32 {
        self.max_depth
    }

    /// Adds an observer of started runs.
    pub fn add_observer(&mut self, observer: Arc<dyn RegistryObserver>) {
        self.observers.push(observer);
    }

    /// Installs the recorder every started run passes through (see [`RunRecorder`]).
    pub fn set_recorder(&mut self, recorder: Arc<dyn RunRecorder>) {
        self.recorder = Some(recorder);
    }

    /// Installs the isolator that serves requests asking for `isolation` (without one, such
    /// requests are refused with `INVALID_ARGUMENTS`).
    pub fn set_isolator(&mut self, isolator: Arc<dyn Isolator>) {
        self.isolator = Some(isolator);
    }

    /// Whether an isolator is installed.
    pub fn has_isolator(&self) -> bool {
        self.isolator.is_some()
    }

    /// Adds a provider. `DUPLICATE_PROVIDER` if its name is taken.
    pub fn register(&self, provider: Arc<dyn SubagentProvider>) -> Result<()> {
        let mut providers = self
            .providers
            .write()
            .unwrap_or_else(PoisonError::into_inner);
        if providers.iter().any(|p| p.name() == provider.name()) {
            return Err(Error::DuplicateProvider {
                name: provider.name().to_owned(),
            });
        }
        providers.push(provider);
        Ok(())
    }

    /// Removes a provider: new starts are refused, runs already started go on.
    pub fn remove(&self, name: &str) -> Option<Arc<dyn SubagentProvider>> {
        let mut providers = self
            .providers
            .write()
            .unwrap_or_else(PoisonError::into_inner);
        let index = providers.iter().position(|p| p.name() == name)?;
        Some(providers.remove(index))
    }

    /// The provider of that name.
    pub fn get(&self, name: &str) -> Option<Arc<dyn SubagentProvider>> {
        self.providers
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .find(|p| p.name() == name)
            .cloned()
    }

    /// The providers, in insertion order.
    pub fn providers(&self) -> Vec<Arc<dyn SubagentProvider>> {
        self.providers
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The names, in insertion order.
    pub fn names(&self) -> Vec<String> {
        self.providers
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .map(|p| p.name().to_owned())
            .collect()
    }

    /// Runs every gate without starting anything; returns the provider that would start.
    ///
    /// Order: lookup (`UNKNOWN_PROVIDER`) → capabilities (`UNSUPPORTED_CAPABILITY`, naming every
    /// missing one) → depth (`DEPTH_EXCEEDED`) → output schema (`INVALID_ARGUMENTS`) → isolation
    /// without an isolator (`INVALID_ARGUMENTS`).
    pub fn check(&self, name: &str, request: &StartRequest) -> Result<Arc<dyn SubagentProvider>> {
        let provider = self.get(name).ok_or_else(|| Error::UnknownProvider {
            name: name.to_owned(),
            known: self.names(),
        })?;
        let missing = provider.capabilities().missing_for(request);
        if !missing.is_empty() {
            let reasons: Vec<String> = missing
                .iter()
                .filter_map(|capability| {
                    provider
                        .capability_reason(*capability)
                        .map(|why| format!("{capability}: {why}"))
                })
                .collect();
            return Err(Error::UnsupportedCapability {
                provider: name.to_owned(),
                missing,
                because: (!reasons.is_empty()).then(|| reasons.join("; ")),
            });
        }
        let cap = request
            .max_depth
            .map_or(self.max_depth, |requested| requested.min(self.max_depth));
        let child_depth = request.child_depth();
        if child_depth > cap {
            return Err(Error::DepthExceeded {
                child_depth,
                max_depth: cap,
            });
        }
        if let Some(schema) = &request.output_schema {
            check_object_schema(schema)?;
        }
        if let Some(isolation) = request.isolation
            && self.isolator.is_none()
        {
            return Err(Error::invalid(format!(
                "isolation \"{isolation}\" is not available here: no isolator is installed in the registry"
            )));
        }
        Ok(provider)
    }

    /// Gates the request (see [`Registry::check`]), fills in the default description, has the
    /// isolator prepare the child's place when the request asks for isolation, and starts the
    /// child (the isolator then takes over its run). On a refusal nothing of the provider runs,
    /// no isolated place is left behind and no observer hears of it.
    pub async fn start(&self, name: &str, mut request: StartRequest) -> Result<Run> {
        let provider = self.check(name, &request)?;
        if request.cancel.is_cancelled() {
            return Err(Error::Cancelled);
        }
        if request.description.is_none() {
            request.description = Some(request.description_or_default());
        }
        let isolated = match (request.isolation, &self.isolator) {
            (Some(isolation), Some(isolator)) => {
                Some(isolator.prepare(isolation, &mut request).await?)
            }
            _ => None,
        };
        let started = self.recorder.as_ref().map(|_| StartedRun {
            provider: name.to_owned(),
            description: request.description_or_default(),
            lineage: request.parent.lineage.clone(),
            cwd: request.parent.cwd.clone(),
            agent_type: request
                .parent
                .extensions
                .get::<crate::agents::AgentType>()
                .map(|agent| agent.0.clone()),
            teammate: request
                .parent
                .extensions
                .get::<crate::agents::Teammate>()
                .map(|name| name.0.clone()),
            background: request.background,
        });
        let run = match (provider.start(request).await, isolated) {
            (Ok(run), Some(isolated)) => isolated.attach(run),
            (Ok(run), None) => run,
            (Err(error), Some(isolated)) => {
                isolated.abandon().await;
                return Err(error);
            }
            (Err(error), None) => return Err(error),
        };
        for observer in &self.observers {
            observer.started(name, &run);
        }
        Ok(match (&self.recorder, started) {
            (Some(recorder), Some(started)) => recorder.record(started, run),
            _ => run,
        })
    }
}

/// `INVALID_ARGUMENTS` unless `schema` is an object-rooted JSON Schema.
pub(crate) fn check_object_schema(schema: &Value) -> Result<()> {
    let Some(object) = schema.as_object() else {
        return Err(Error::invalid(format!(
            "output_schema must be a JSON Schema object with \"type\": \"object\", got {}",
            json_kind(schema)
        )));
    };
    match object.get("type") {
        Some(Value::String(kind)) if kind == "object" => Ok(()),
        Some(other) => Err(Error::invalid(format!(
            "output_schema must have \"type\": \"object\" at its root, got \"type\": {other}"
        ))),
        None => Err(Error::invalid(
            "output_schema must have \"type\": \"object\" at its root (no \"type\" given)",
        )),
    }
}

fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
