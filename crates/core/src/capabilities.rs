//! The static capability table.

use serde::{Deserialize, Serialize};

/// What a provider can honour. One flag per optional request field, plus descriptive flags.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema,
)]
#[non_exhaustive]
pub struct Capabilities {
    /// `output_schema`: the outcome carries `structured` output valid against the schema.
    pub output_schema: bool,
    /// `max_depth`: the provider enforces the cap on its own nested delegation.
    pub depth_limit: bool,
    /// `tool_filter`: the child cannot call tools outside the filter.
    pub tool_filter: bool,
    /// `persona`: the child's instructions carry the persona.
    pub persona: bool,
    /// `model`: the child runs the requested model.
    pub model_override: bool,
    /// `max_turns`: the child stops after that many turns.
    pub max_turns: bool,
    /// `resume`: a finished run can be continued.
    pub resume: bool,
    /// `isolation`: the child works only in `parent.cwd` (its file tools' root, its commands'
    /// working directory, the product's cwd), so the registry's isolator can move it into a
    /// worktree of its own.
    #[serde(default)]
    pub isolation: bool,
    /// `effort`: the child's model reasons with the requested effort (a thinking budget, a
    /// reasoning effort, the product CLI's effort setting).
    #[serde(default)]
    pub effort: bool,
    /// `permission_rules`: the child holds to the parent's `deny` and `ask` rules (settings
    /// files, `--disallowedTools`) for every tool call it makes.
    #[serde(default)]
    pub permission_rules: bool,
    /// `mcp_servers`: the child gets the MCP servers an agent definition defines, started
    /// for it (in process, or handed to the product in its own terms) and stopped with it.
    #[serde(default)]
    pub mcp_servers: bool,
    /// Descriptive: the child starts from the parent's conversation.
    pub inherits_parent_context: bool,
}

impl Capabilities {
    /// Nothing optional.
    pub const NONE: Self = Self {
        output_schema: false,
        depth_limit: false,
        tool_filter: false,
        persona: false,
        model_override: false,
        max_turns: false,
        resume: false,
        isolation: false,
        effort: false,
        permission_rules: false,
        mcp_servers: false,
        inherits_parent_context: false,
    };

    /// Every gated capability (the descriptive `inherits_parent_context` stays false).
    pub const ALL: Self = Self {
        output_schema: true,
        depth_limit: true,
        tool_filter: true,
        persona: true,
        model_override: true,
        max_turns: true,
        resume: true,
        isolation: true,
        effort: true,
        permission_rules: true,
        mcp_servers: true,
        inherits_parent_context: false,
    };

    /// Whether a gated capability is declared.
    pub fn supports(&self, capability: Capability) -> bool {
        match capability {
            Capability::OutputSchema => self.output_schema,
            Capability::DepthLimit => self.depth_limit,
            Capability::ToolFilter => self.tool_filter,
            Capability::Persona => self.persona,
            Capability::ModelOverride => self.model_override,
            Capability::MaxTurns => self.max_turns,
            Capability::Resume => self.resume,
            Capability::Isolation => self.isolation,
            Capability::Effort => self.effort,
            Capability::PermissionRules => self.permission_rules,
            Capability::McpServers => self.mcp_servers,
        }
    }

    /// Returns a copy with `capability` set to `on`.
    #[must_use]
    pub fn with(mut self, capability: Capability, on: bool) -> Self {
        let flag = match capability {
            Capability::OutputSchema => &mut self.output_schema,
            Capability::DepthLimit => &mut self.depth_limit,
            Capability::ToolFilter => &mut self.tool_filter,
            Capability::Persona => &mut self.persona,
            Capability::ModelOverride => &mut self.model_override,
            Capability::MaxTurns => &mut self.max_turns,
            Capability::Resume => &mut self.resume,
            Capability::Isolation => &mut self.isolation,
            Capability::Effort => &mut self.effort,
            Capability::PermissionRules => &mut self.permission_rules,
            Capability::McpServers => &mut self.mcp_servers,
        };
        *flag = on;
        self
    }

    /// Returns a copy with the descriptive `inherits_parent_context` flag set to `on`.
    #[must_use]
    pub fn inheriting_parent_context(mut self, on: bool) -> Self {
        self.inherits_parent_context = on;
        self
    }
}

/// A gated capability: one optional field of [`StartRequest`](crate::StartRequest).
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Capability {
    /// `output_schema`.
    OutputSchema,
    /// `max_depth`.
    DepthLimit,
    /// `tool_filter`.
    ToolFilter,
    /// `persona`.
    Persona,
    /// `model`.
    ModelOverride,
    /// `max_turns`.
    MaxTurns,
    /// `resume`.
    Resume,
    /// `isolation`.
    Isolation,
    /// `effort`.
    Effort,
    /// `permission_rules`.
    PermissionRules,
    /// `mcp_servers`.
    McpServers,
}

impl Capability {
    /// Every gated capability, in table order.
    pub const ALL: [Capability; 11] = [
        Self::OutputSchema,
        Self::DepthLimit,
        Self::ToolFilter,
        Self::Persona,
        Self::ModelOverride,
        Self::MaxTurns,
        Self::Resume,
        Self::Isolation,
        Self::Effort,
        Self::PermissionRules,
        Self::McpServers,
    ];

    /// The snake_case name (as in the capability table and error messages).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::OutputSchema => "output_schema",
            Self::DepthLimit => "depth_limit",
            Self::ToolFilter => "tool_filter",
            Self::Persona => "persona",
            Self::ModelOverride => "model_override",
            Self::MaxTurns => "max_turns",
            Self::Resume => "resume",
            Self::Isolation => "isolation",
            Self::Effort => "effort",
            Self::PermissionRules => "permission_rules",
            Self::McpServers => "mcp_servers",
        }
    }

    /// The request field this capability gates.
    pub fn request_field(self) -> &'static str {
        match self {
            Self::OutputSchema => "output_schema",
            Self::DepthLimit => "max_depth",
            Self::ToolFilter => "tool_filter",
            Self::Persona => "persona",
            Self::ModelOverride => "model",
            Self::MaxTurns => "max_turns",
            Self::Resume => "resume",
            Self::Isolation => "isolation",
            Self::Effort => "effort",
            Self::PermissionRules => "permission_rules",
            Self::McpServers => "mcp_servers",
        }
    }
}

impl std::fmt::Display for Capability {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
