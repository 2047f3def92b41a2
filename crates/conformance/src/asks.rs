//! What the kit asks a provider for: the persona, model and tool filter its requests name, and
//! the request field each capability gates. The capability-independent checks (`checks`) and
//! the capability checks (`features`) both ask with these, and the checks then look for them in
//! what the fake model server recorded.

use subagent_core::{Capability, Isolation, SessionRef, StartRequestBuilder, ToolFilter};

use crate::scenarios::schema;

/// The persona, model and tool filter the kit asks for.
pub(crate) const PERSONA: &str = "KIT-PERSONA-7a1: you answer like a conformance kit.";
pub(crate) const MODEL: &str = "kit-model-7";
pub(crate) const NO_SUCH_TOOL: &str = "KitNoSuchTool";

/// The request field a capability gates, set to a value the kit's scenarios can serve
/// (`session` for `resume`).
pub(crate) fn with_capability(
    request: StartRequestBuilder,
    capability: Capability,
    session: &SessionRef,
) -> StartRequestBuilder {
    match capability {
        Capability::OutputSchema => request.output_schema(schema()),
        Capability::DepthLimit => request.max_depth(2),
        Capability::ToolFilter => request.tool_filter(ToolFilter::deny([NO_SUCH_TOOL])),
        Capability::Persona => request.persona(PERSONA),
        Capability::ModelOverride => request.model(MODEL),
        Capability::MaxTurns => request.max_turns(5),
        Capability::Resume => request.resume(session.clone()),
        Capability::Isolation => request.isolation(Isolation::Worktree),
        Capability::Effort => request.effort(subagent_core::Effort::High),
        // A rule no call of the kit's breaks: the request needs the capability, the run is
        // unchanged.
        Capability::PermissionRules => request.permission_rules(subagent_core::PermissionRules {
            deny: vec![NO_SUCH_TOOL.to_owned()],
            ..subagent_core::PermissionRules::default()
        }),
        // The kit's server, its words written nowhere.
        Capability::McpServers => match crate::mcp::kit_server(std::path::Path::new("/dev/null")) {
            Ok(server) => request.mcp_servers(vec![server]),
            Err(failure) => panic!("{failure}"),
        },
        other => panic!("conformance: the kit does not know the capability {other}; teach it"),
    }
}
