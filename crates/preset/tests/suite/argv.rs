//! A secret variable never lands on a child's command line: a `${VAR}` naming a secret in a
//! row's argv (`command`, `args`, …) is refused at load, where the same variable in the row's
//! `env` is fine. What is secret: a variable the preset names as holding a key (the model's
//! `api_key_env`, a row's key variables: `ProviderFactory::secret_env`) and a name that looks
//! like a credential (the process owner's rule: `*_TOKEN`, `*_API_KEY`, `GITHUB_TOKEN`, …).

use std::sync::Arc;

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use subagent_core::{
    BuildContext, Capabilities, ErrorCode, ProviderFactory, Result, SubagentProvider,
};
use subagent_preset::Preset;

use super::support::env;

/// A kind that runs a command: `command`, `args`, `env`, and the variable its key is read from.
struct Runs;

impl ProviderFactory for Runs {
    fn kind(&self) -> &str {
        "runs"
    }

    fn summary(&self) -> &str {
        "runs a command"
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities::NONE
    }

    fn config_schema(&self) -> schemars::Schema {
        schemars::json_schema!({
            "type": "object",
            "properties": {
                "command": {"type": "string"},
                "args": {"type": "array", "items": {"type": "string"}},
                "env": {"type": "object", "additionalProperties": {"type": "string"}},
                "key_env": {"type": "string"}
            },
            "additionalProperties": false
        })
    }

    fn secret_env(&self, config: &Value) -> Vec<String> {
        config["key_env"]
            .as_str()
            .map(str::to_owned)
            .into_iter()
            .collect()
    }

    fn build(
        &self,
        _name: &str,
        _config: &Value,
        _context: &BuildContext,
    ) -> Result<Arc<dyn SubagentProvider>> {
        Err(subagent_core::Error::invalid("not built here"))
    }
}

const VARS: &[(&str, &str)] = &[
    ("SERVICE_TOKEN", "tok-123456789"),
    ("ROW_KEY", "row-123456789"),
    ("LLM_KEY", "llm-123456789"),
    ("PROJECT", "/src/project"),
];

fn load(config: &str) -> subagent_preset::Result<Preset> {
    let text = format!(
        "version: 1\nmodel: {{kind: anthropic, name: m, api_key_env: LLM_KEY}}\nproviders:\n  - name: mine\n    kind: runs\n    config:\n{config}"
    );
    let factories: Vec<Arc<dyn ProviderFactory>> = vec![Arc::new(Runs)];
    Preset::parse(&text, "p.yaml", &factories, &env(VARS))
}

#[test]
fn a_secret_variable_in_a_rows_command_line_is_refused() {
    let cases = [
        (
            "a credential-looking name in args",
            "      args: [\"--token\", \"${SERVICE_TOKEN}\"]\n",
            "SERVICE_TOKEN",
        ),
        (
            "the row's own key variable",
            "      key_env: ROW_KEY\n      args: [\"--key=${ROW_KEY}\"]\n",
            "ROW_KEY",
        ),
        (
            "the model's key variable, in the command",
            "      command: \"/bin/${LLM_KEY}\"\n",
            "LLM_KEY",
        ),
        (
            "with a default",
            "      args: [\"${SERVICE_TOKEN:-none}\"]\n",
            "SERVICE_TOKEN",
        ),
    ];
    for (case, config, variable) in cases {
        let error = load(config).expect_err(case);
        assert_eq!(error.code(), ErrorCode::InvalidArguments, "{case}");
        let message = error.to_string();
        assert!(
            message.starts_with("p.yaml:") && message.contains(&format!(
                ": provider \"mine\" would put ${{{variable}}} on its command line, where any process of the machine reads it (/proc/PID/cmdline); {variable} holds a secret: pass it in the row's environment instead"
            )),
            "{case}: {message}"
        );
        assert!(!message.contains("123456789"), "{case}: {message}");
    }
}

#[test]
fn other_variables_in_the_command_line_and_secrets_in_the_environment_load() {
    let preset = load(
        "      command: \"${PROJECT}/bin/agent\"\n      args: [\"--dir\", \"${PROJECT}\"]\n      env: {TOKEN: \"${SERVICE_TOKEN}\"}\n      key_env: ROW_KEY\n",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        preset.providers[0].config,
        json!({
            "command": "/src/project/bin/agent",
            "args": ["--dir", "/src/project"],
            "env": {"TOKEN": "tok-123456789"},
            "key_env": "ROW_KEY"
        })
    );
}
