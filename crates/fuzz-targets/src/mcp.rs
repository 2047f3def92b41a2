//! A `tools/call`'s arguments as `subagent mcp` reads them.

use std::sync::{Arc, OnceLock};

use async_trait::async_trait;
use serde_json::Value;
use subagent_core::agents::{AgentProfile, StaticAgents};
use subagent_core::registry::Registry;
use subagent_core::{
    Capabilities, PermissionMode, Run, StartRequest, SubagentProvider, ToolFilter,
};
use subagent_mcp::{McpConfig, McpServer};
use subagent_preset::ToolRow;

/// The registry's cap and the server's permission ceiling: no argument may go past them.
const MAX_DEPTH: u32 = 3;
const CEILING: PermissionMode = PermissionMode::AcceptEdits;

/// A provider the gates can look at; never started.
struct Gated {
    name: &'static str,
    capabilities: Capabilities,
}

#[async_trait]
impl SubagentProvider for Gated {
    fn name(&self) -> &str {
        self.name
    }

    fn capabilities(&self) -> Capabilities {
        self.capabilities
    }

    async fn start(&self, _request: StartRequest) -> subagent_core::Result<Run> {
        Err(subagent_core::Error::invalid(
            "the fuzz target starts nothing",
        ))
    }
}

fn row(name: &str, provider: &str) -> ToolRow {
    ToolRow {
        name: name.to_owned(),
        provider: provider.to_owned(),
        fork: None,
        max_depth: None,
        background: Default::default(),
        foreground_timeout_ms: None,
        tool_filter: None,
        persona: None,
        description: None,
        budget: None,
        location: Default::default(),
    }
}

fn filter(allow: &[&str]) -> ToolFilter {
    ToolFilter {
        allow: Some(allow.iter().map(|s| (*s).to_owned()).collect()),
        deny: Vec::new(),
    }
}

struct Harness {
    registry: Arc<Registry>,
    server: McpServer,
    tools: Vec<String>,
}

fn harness() -> &'static Harness {
    static HARNESS: OnceLock<Harness> = OnceLock::new();
    HARNESS.get_or_init(|| {
        let registry = Arc::new(Registry::with_max_depth(MAX_DEPTH));
        for (name, capabilities) in [("all", Capabilities::ALL), ("none", Capabilities::NONE)] {
            if registry
                .register(Arc::new(Gated { name, capabilities }))
                .is_err()
            {
                panic!("registering {name} failed");
            }
        }
        let mut limited = row("limited", "none");
        limited.tool_filter = Some(filter(&["read_file"]));
        limited.persona = Some("Be brief.".to_owned());
        let mut nested = row("nested", "all");
        nested.max_depth = Some(2);
        let rows = vec![row("subagent", "all"), limited, nested];
        let mut explore = AgentProfile::new("explore", "Reads.");
        explore.permission_mode = Some(PermissionMode::Plan);
        explore.tool_filter = Some(filter(&["read_file", "grep"]));
        let mut elsewhere = AgentProfile::new("elsewhere", "On the plain provider.");
        elsewhere.provider = Some("none".to_owned());
        let mut worker = AgentProfile::new("worker", "Works.");
        worker.agent_types = Some(vec!["explore".to_owned()]);
        worker.permission_mode = Some(PermissionMode::Bypass);
        worker.isolation = Some("worktree".to_owned());
        worker.model = Some("m".to_owned());
        worker.max_turns = Some(3);
        let mut missing = AgentProfile::new("missing", "On a provider that is not here.");
        missing.provider = Some("nowhere".to_owned());
        let agents = StaticAgents(vec![explore, elsewhere, worker, missing]);
        let mut config = McpConfig::new("/fuzz/project");
        config.max_depth = MAX_DEPTH;
        config.permission_ceiling = Some(CEILING);
        let server = McpServer::new(Arc::clone(&registry), &rows, Arc::new(agents), config);
        let tools = server.tool_names();
        Harness {
            registry,
            server,
            tools,
        }
    })
}

/// A `tools/call`'s arguments into the provider and the start request, as `subagent mcp`
/// reads them (`McpServer::call_request`, doc-hidden: rmcp hands us the arguments as a JSON
/// object), then the registry's gates (`Registry::check`, nothing started). The first byte
/// picks the tool (and, with the high bit and nothing after it, a call without arguments); the
/// rest is the arguments' JSON. Whatever they hold, no panic, and the request never asks for
/// more than the server allows: a depth within the cap, a permission ceiling no looser than
/// the server's.
pub fn mcp_arguments(data: &[u8]) {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let harness = harness();
    let Some(tool) = harness
        .tools
        .get(usize::from(mode & 0x7f) % harness.tools.len().max(1))
    else {
        return;
    };
    let arguments = match serde_json::from_slice::<Value>(rest) {
        Ok(Value::Object(map)) => Some(map),
        Ok(_) => return,
        Err(_) if rest.is_empty() && mode & 0x80 != 0 => None,
        Err(_) => return,
    };
    let Some(prepared) = harness.server.call_request(tool, arguments) else {
        panic!("the server does not know its own tool {tool}");
    };
    let Ok((provider, request)) = prepared else {
        return;
    };
    assert!(
        request.max_depth.is_none_or(|depth| depth <= MAX_DEPTH),
        "a call asked for depth {:?} past the cap {MAX_DEPTH}",
        request.max_depth
    );
    let ceiling = request.permission_ceiling;
    assert!(
        ceiling.is_some_and(|mode| mode.intersect(CEILING) == mode),
        "a call loosened the permission ceiling to {ceiling:?}"
    );
    let _ = harness.registry.check(&provider, &request);
}
