//! The `nats` provider kind: a preset row whose runs go to `subagent worker`s through a NATS
//! JetStream work queue.

use std::sync::Arc;

use async_nats::jetstream::message::PublishMessage;
use async_trait::async_trait;
use futures::StreamExt;
use serde_json::Value;
use subagent_core::time::now_ms;
use subagent_core::{
    BuildContext, Capabilities, Endpoint, Error as CoreError, ProviderFactory, Requirements, Run,
    StartRequest, SubagentProvider,
};
use tokio::sync::OnceCell;

use crate::config::{Auth, NatsConfig, connect};
use crate::error::{Error, Result};
use crate::follow::{Plan, follow, open_events};
use crate::topology::Topology;
use crate::wire::{Announcement, Job, carried, job_subject, token, wake_subject};

/// The provider kind, as written in a preset.
pub const KIND: &str = "nats";

/// What the kind can carry at most (a row's table is its workers' cut to this).
pub const CARRIED: Capabilities = {
    let mut caps = Capabilities::ALL;
    caps.isolation = false;
    // The parent's permission rules do not cross the wire: a request carrying deny or ask
    // rules is refused rather than run without them.
    caps.permission_rules = false;
    // An agent definition's own MCP servers are programs of this machine: a worker does not
    // start what a caller names.
    caps.mcp_servers = false;
    caps
};

/// Sends a row's runs to the workers serving it.
#[derive(Debug)]
pub struct NatsProvider {
    name: String,
    config: Arc<NatsConfig>,
    auth: Auth,
    capabilities: Capabilities,
    topology: OnceCell<Topology>,
}

/// Reads the row's announcements and returns the table of the newest one still live (a worker
/// refreshes its announcements while it runs and deletes them when it stops; a lost worker's
/// run out): none → [`Error::NoWorker`].
async fn announced(topology: &Topology, row: &str) -> Result<Capabilities> {
    let bucket = |e: &dyn std::fmt::Display| {
        Error::unreachable(&topology.url, format!("reading the rows bucket: {e}"))
    };
    let prefix = format!("{}.", token(row));
    let keys: Vec<String> = topology
        .rows
        .keys()
        .await
        .map_err(|e| bucket(&e))?
        .filter_map(|key| std::future::ready(key.ok()))
        .filter(|key| std::future::ready(key.starts_with(&prefix)))
        .collect()
        .await;
    let now = now_ms();
    let mut newest: Option<Announcement> = None;
    for key in keys {
        let Some(bytes) = topology.rows.get(&key).await.map_err(|e| bucket(&e))? else {
            continue;
        };
        let Ok(announcement) = serde_json::from_slice::<Announcement>(&bytes) else {
            tracing::warn!(key, "nats: an announcement that does not read; skipped");
            continue;
        };
        if announcement.is_live(now)
            && newest
                .as_ref()
                .is_none_or(|newest| newest.refreshed_ms < announcement.refreshed_ms)
        {
            newest = Some(announcement);
        }
    }
    match newest {
        Some(announcement) => Ok(carried(announcement.capabilities)),
        None => Err(Error::NoWorker {
            url: topology.url.clone(),
            row: row.to_owned(),
        }),
    }
}

impl NatsProvider {
    /// Connects, makes the streams if needed, and freezes the row's capability table from
    /// what its workers announced. The connection is kept for the provider's runs (it lives
    /// on the runtime this is called on).
    pub async fn connect(name: impl Into<String>, config: NatsConfig, auth: Auth) -> Result<Self> {
        config.validate()?;
        let name = name.into();
        let client = connect(
            &config.url,
            &auth,
            &config.tls,
            &format!("subagents provider {name}"),
            config.connect(),
        )
        .await?;
        let topology = Topology::ensure(&config.url, client).await?;
        let capabilities = announced(&topology, &config.row).await?;
        Ok(Self {
            name,
            config: Arc::new(config),
            auth,
            capabilities,
            topology: OnceCell::new_with(Some(topology)),
        })
    }

    /// [`NatsProvider::connect`] from synchronous code (a factory's `build`): the table is read
    /// on a connection of its own, and the provider connects again on its first run, on the
    /// runtime that starts it.
    pub fn connect_blocking(
        name: impl Into<String>,
        config: NatsConfig,
        auth: Auth,
    ) -> Result<Self> {
        config.validate()?;
        let name = name.into();
        let read = || {
            std::thread::scope(|scope| {
                let worker = scope.spawn(|| {
                    let runtime = tokio::runtime::Builder::new_current_thread()
                        .enable_all()
                        .build()
                        .map_err(|e| {
                            Error::unreachable(&config.url, format!("cannot start a runtime: {e}"))
                        })?;
                    runtime.block_on(async {
                        let client = connect(
                            &config.url,
                            &auth,
                            &config.tls,
                            &format!("subagents provider {name}"),
                            config.connect(),
                        )
                        .await?;
                        let topology = Topology::ensure(&config.url, client).await?;
                        announced(&topology, &config.row).await
                    })
                });
                worker.join().unwrap_or_else(|_| {
                    Err(Error::unreachable(
                        &config.url,
                        "reading the table panicked",
                    ))
                })
            })
        };
        let capabilities = match tokio::runtime::Handle::try_current() {
            Ok(handle) if handle.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
                tokio::task::block_in_place(read)
            }
            _ => read(),
        }?;
        Ok(Self {
            name,
            config: Arc::new(config),
            auth,
            capabilities,
            topology: OnceCell::new(),
        })
    }

    async fn topology(&self) -> Result<&Topology> {
        self.topology
            .get_or_try_init(|| async {
                let client = connect(
                    &self.config.url,
                    &self.auth,
                    &self.config.tls,
                    &format!("subagents provider {}", self.name),
                    self.config.connect(),
                )
                .await?;
                Topology::ensure(&self.config.url, client).await
            })
            .await
    }

    /// The worker-side row.
    pub fn row(&self) -> &str {
        &self.config.row
    }
}

#[async_trait]
impl SubagentProvider for NatsProvider {
    fn name(&self) -> &str {
        &self.name
    }

    fn capabilities(&self) -> Capabilities {
        self.capabilities
    }

    fn capability_reason(&self, capability: subagent_core::Capability) -> Option<String> {
        if capability == subagent_core::Capability::McpServers {
            return Some(
                "an agent's own MCP servers are programs of this machine, which the workers do \
                 not start; run the agent on a spawn, claude-code, codex or acp row"
                    .to_owned(),
            );
        }
        if capability == subagent_core::Capability::PermissionRules
            && !self.capabilities.supports(capability)
        {
            return Some(
                "the parent's permission rules do not cross to the workers: they would run \
                 without the deny and ask rules"
                    .to_owned(),
            );
        }
        (!self.capabilities.supports(capability)).then(|| {
            format!(
                "the workers of row \"{}\" at {} announce a table without it",
                self.config.row, self.config.url
            )
        })
    }

    async fn start(&self, request: StartRequest) -> subagent_core::Result<Run> {
        if request.cancel.is_cancelled() {
            return Err(CoreError::Cancelled);
        }
        let topology = tokio::select! {
            topology = self.topology() => topology?.clone(),
            () = request.cancel.cancelled() => return Err(CoreError::Cancelled),
        };
        let (sender, run) = Run::channel(&self.name, &request);
        let id = sender.id();
        let unreachable = |what: &str, e: &dyn std::fmt::Display| -> CoreError {
            Error::unreachable(&topology.url, format!("{what}: {e}")).into()
        };
        // The run's events are followed by an ordered consumer that replays them from the
        // first whatever comes first: it is made while the job is published.
        let follow_events = async {
            open_events(&topology, id, 0)
                .await
                .map_err(|e| unreachable("following the run's events", &e))
        };
        let job = Job::new(id, &self.config.row, &request);
        let payload = serde_json::to_vec(&job).map_err(|e| unreachable("encoding the job", &e))?;
        let subject = job_subject(&self.config.row, id);
        let publish_job = async {
            let published = topology
                .js
                .send_publish(
                    subject.clone(),
                    PublishMessage::build()
                        .payload(payload.into())
                        .message_id(id.to_string()),
                )
                .await
                .map_err(|e| unreachable("publishing the job", &e))?;
            let ack = published
                .await
                .map_err(|e| unreachable("publishing the job (no ack from the server)", &e))?;
            // Stored: wake the idle workers of the row (lost if none listens: they poll
            // anyway).
            if let Err(error) = topology
                .client
                .publish(wake_subject(&self.config.row), bytes::Bytes::new())
                .await
            {
                tracing::debug!(%error, "nats: waking the workers");
            }
            Ok::<_, CoreError>(ack.sequence)
        };
        let (followed, published) = tokio::join!(follow_events, publish_job);
        let (consumer_name, events) = match (followed, published) {
            (Ok(followed), Ok(_)) => followed,
            (Err(error), Ok(sequence)) => {
                // Nobody would follow it: take the job back out of the queue.
                let _ = topology.jobs.delete_message(sequence).await;
                return Err(error);
            }
            (Ok((name, _)), Err(error)) => {
                let _ = topology.events.delete_consumer(&name).await;
                return Err(error);
            }
            (Err(_), Err(error)) => return Err(error),
        };
        let plan = Plan {
            topology,
            id,
            consumer: consumer_name,
            job_subject: subject,
            key: job.key.clone(),
            cancel_grace: std::time::Duration::from_millis(self.config.timeouts.cancel_ms),
            total: self
                .config
                .timeouts
                .total_ms
                .map(std::time::Duration::from_millis),
        };
        tokio::spawn(follow(plan, events, sender));
        Ok(run)
    }
}

/// Builds nats providers from a preset's `config:` block ([`NatsConfig`]): connects once when
/// the preset is built to read the row's announced table.
#[derive(Clone, Copy, Debug, Default)]
pub struct NatsFactory;

impl ProviderFactory for NatsFactory {
    fn kind(&self) -> &str {
        KIND
    }

    fn summary(&self) -> &str {
        "sends runs to `subagent worker`s on other machines through a NATS JetStream work queue (the worker-side row's table, as its workers announce it)"
    }

    fn capabilities(&self) -> Capabilities {
        CARRIED
    }

    fn config_schema(&self) -> schemars::Schema {
        schemars::schema_for!(NatsConfig)
    }

    /// The NATS servers of the row's `url` (a list: any one reachable is enough).
    fn requirements(
        &self,
        name: &str,
        config: &Value,
        _context: &BuildContext,
    ) -> subagent_core::Result<Requirements> {
        let config: NatsConfig = BuildContext::parse_config(KIND, name, config)?;
        Ok(Requirements {
            program: None,
            endpoints: vec![Endpoint {
                urls: config
                    .url
                    .split(',')
                    .map(|url| url.trim().to_owned())
                    .collect(),
                origin: "the row's `url` (is nats-server up, with -js?)".to_owned(),
            }],
        })
    }

    fn secret_env(&self, config: &Value) -> Vec<String> {
        serde_json::from_value::<NatsConfig>(config.clone())
            .map(|config| config.credentials().variables())
            .unwrap_or_default()
    }

    fn build(
        &self,
        name: &str,
        config: &Value,
        context: &BuildContext,
    ) -> subagent_core::Result<Arc<dyn SubagentProvider>> {
        let _ = context;
        let config: NatsConfig = BuildContext::parse_config(KIND, name, config)?;
        config.validate()?;
        let auth = config.credentials().resolve(subagent_session::env::var)?;
        Ok(Arc::new(NatsProvider::connect_blocking(
            name, config, auth,
        )?))
    }
}
