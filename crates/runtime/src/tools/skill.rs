//! The `Skill` tool: loads a skill's body into the conversation, as Claude Code's does.

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::{Value, json};
use subagent_core::skills::SkillDirectory;
use subagent_model::ToolSpec;

use super::{Tool, ToolContext, ToolKind, ToolOutput, opt_str, str_arg};
use crate::skills::{SKILL_TOOL, skill_text};
use crate::{Error, Result};

/// What the model is told of the tool. The skills themselves are listed in the conversation
/// (the first message), so this text never changes and a fork's tool list stays its parent's.
const DESCRIPTION: &str = "Load a skill into the conversation.

Skills are folders of instructions (and sometimes scripts or references) for particular tasks. \
The skills you may use are listed in a system-reminder in the conversation, each with its name \
and when to use it.

- Set `skill` to the exact name of a listed skill (no leading slash); never guess a name that \
is not listed.
- Set `args` to pass arguments to the skill, if it takes any.
- When a listed skill matches the task, load it before doing anything else about the task, \
then follow its instructions.
- A skill already loaded in this conversation need not be loaded again.";

/// Loads a skill: the result says it is launching, and the skill's base directory, body and
/// other files follow it in the same message ([`ToolOutput::attached`]).
///
/// Permission: a skill whose frontmatter names `allowed-tools` is a call that needs permission
/// (rules `Skill` or `Skill(<name>)` allow it; Claude Code asks before such a skill), any other
/// skill loads without asking. Loading one grants nothing: the tools it names are decided by
/// the run's rules and mode as before (what the pinned `claude` does for a skill its model
/// loads).
pub struct SkillTool {
    directory: Arc<dyn SkillDirectory>,
}

impl SkillTool {
    /// The tool over these skills.
    pub fn new(directory: Arc<dyn SkillDirectory>) -> Self {
        Self { directory }
    }
}

impl std::fmt::Debug for SkillTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SkillTool").finish_non_exhaustive()
    }
}

#[async_trait]
impl Tool for SkillTool {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: SKILL_TOOL.to_owned(),
            description: DESCRIPTION.to_owned(),
            input_schema: json!({
                "type": "object",
                "properties": {
                    "skill": {
                        "description": "The name of a skill from the available-skills list. Do not guess names.",
                        "type": "string"
                    },
                    "args": {
                        "description": "Optional arguments for the skill",
                        "type": "string"
                    }
                },
                "required": ["skill"],
                "additionalProperties": false
            }),
        }
    }

    fn kind(&self) -> ToolKind {
        ToolKind::ReadOnly
    }

    fn call_kind(&self, input: &Value) -> ToolKind {
        let asks = input
            .get("skill")
            .and_then(Value::as_str)
            .and_then(|name| {
                self.directory
                    .skills()
                    .into_iter()
                    .find(|skill| skill.answers_to(name))
            })
            .is_some_and(|skill| !skill.allowed_tools.is_empty());
        if asks {
            ToolKind::Execute
        } else {
            ToolKind::ReadOnly
        }
    }

    fn permission_subject(&self, input: &Value) -> Option<String> {
        input
            .get("skill")
            .and_then(Value::as_str)
            .map(|name| name.trim_start_matches('/').to_owned())
    }

    async fn call(&self, input: Value, _context: &ToolContext) -> Result<ToolOutput> {
        let name = str_arg(&input, "skill")?.trim();
        let name = name.strip_prefix('/').unwrap_or(name);
        let args = opt_str(&input, "args")?;
        let skill = match self.directory.load(name) {
            Ok(skill) => skill,
            Err(error) => {
                return Err(Error::Core(error));
            }
        };
        let mut output = ToolOutput::ok(format!("Launching skill: {name}"));
        output.attached.push(skill_text(&skill, args));
        Ok(output)
    }
}
