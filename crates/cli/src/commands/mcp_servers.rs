//! `subagent mcp-servers`: the MCP servers a run in this directory would use, started to see
//! whether they answer and what tools they offer.

use std::process::ExitCode;
use std::sync::Arc;

use serde_json::{Value, json};
use subagent_core::ProviderFactory;
use subagent_mcp_client::{ServerConfig, ServerTool, Transport};

use crate::args::McpServersArgs;
use crate::line::one_line;
use crate::setup::{self};
use crate::{EXIT_COMPLETED, EXIT_NOT_COMPLETED, Refusal};

pub(super) async fn mcp_servers(
    args: &McpServersArgs,
    factories: &[Arc<dyn ProviderFactory>],
) -> Result<ExitCode, Refusal> {
    let runnable = setup::listing(&args.preset, factories)?;
    let (tools, mut failed) = runnable.mcp.servers.start_all().await;
    let configured = &runnable.mcp.configured;
    let mut listed: Vec<Listed> = Vec::new();
    for server in &configured.servers {
        let error = failed.iter().find(|(name, _)| *name == server.name);
        let mine = tools
            .iter()
            .filter(|t| t.server == server.name)
            .cloned()
            .collect();
        listed.push(Listed {
            server: server.clone(),
            error: error.map(|(_, e)| e.clone()),
            tools: mine,
            withheld: false,
        });
    }
    for server in &configured.withheld {
        listed.push(Listed {
            server: server.clone(),
            error: None,
            tools: Vec::new(),
            withheld: true,
        });
    }
    // The servers agent definitions define, each agent's started as its child would start them.
    for (server, error, mine) in agents_servers(&runnable).await {
        if let Some(error) = &error {
            failed.push((server.name.clone(), error.clone()));
        }
        listed.push(Listed {
            server,
            error,
            tools: mine,
            withheld: false,
        });
    }
    let rows: Vec<Value> = listed.iter().map(row).collect();
    let ok = failed.is_empty();
    if args.json {
        let value = json!({"servers": rows, "ok": ok});
        outln!(
            "{}",
            serde_json::to_string_pretty(&value).unwrap_or_default()
        );
    } else if rows.is_empty() {
        outln!(
            "no MCP servers are configured for {} (the preset's mcp_servers:, ~/.claude.json's mcpServers, the project's .mcp.json, an agent definition's mcpServers: docs/mcp.md)",
            runnable.cwd.display()
        );
    } else {
        for (listed, row) in listed.iter().zip(&rows) {
            let server = &listed.server;
            outln!(
                "{:<16} {:<9} {}",
                server.name,
                row["status"].as_str().unwrap_or_default(),
                reach(&server.transport)
            );
            outln!("{:<16} from {}", "", server.source);
            if let Some(error) = row.get("error") {
                outln!(
                    "{:<16} error[{}]: {}",
                    "",
                    error["code"].as_str().unwrap_or_default(),
                    one_line(error["message"].as_str().unwrap_or_default(), 160)
                );
            }
            if row["status"] == "untrusted" {
                outln!(
                    "{:<16} the project is not trusted: `subagent trust` lets its .mcp.json start",
                    ""
                );
            }
            for tool in &listed.tools {
                outln!(
                    "{:<16}   {} {}",
                    "",
                    tool.qualified_name(),
                    one_line(&tool.description, 80)
                );
            }
        }
    }
    Ok(ExitCode::from(if ok {
        EXIT_COMPLETED
    } else {
        EXIT_NOT_COMPLETED
    }))
}

/// One server listed: how it went when it was started.
struct Listed {
    server: ServerConfig,
    error: Option<subagent_mcp_client::Error>,
    tools: Vec<ServerTool>,
    /// A project's server that waits for trust (not started).
    withheld: bool,
}

/// The servers the agent definitions of this directory define, each agent's started together
/// (as a child of it starts them), with what failed and the tools each offers. A definition
/// whose `${VAR}`s cannot be expanded lists that server as failed.
async fn agents_servers(
    runnable: &setup::Runnable,
) -> Vec<(
    ServerConfig,
    Option<subagent_mcp_client::Error>,
    Vec<ServerTool>,
)> {
    use subagent_core::agents::AgentDirectory as _;
    use subagent_mcp_client::{McpServers, Options, Source};
    let lookup = |name: &str| subagent_session::env::var(name);
    let mut listed = Vec::new();
    for agent in runnable.catalog.agents() {
        let source = Source::Agent {
            agent: agent.name.clone(),
        };
        let mut configs = Vec::new();
        for server in &agent.mcp_servers {
            match server.expand(&lookup) {
                Ok(Some(spec)) => configs.push(ServerConfig::from_spec(spec, source.clone())),
                Ok(None) => {}
                Err(message) => {
                    // Shown as written, its variables left empty.
                    let Ok(Some(spec)) = server.expand(&|_| Some(String::new())) else {
                        continue;
                    };
                    let config = ServerConfig::from_spec(spec, source.clone());
                    let error = subagent_mcp_client::Error::new(
                        subagent_mcp_client::ErrorCode::ConfigInvalid,
                        message,
                    );
                    listed.push((config, Some(error), Vec::new()));
                }
            }
        }
        if configs.is_empty() {
            continue;
        }
        let servers = McpServers::new(
            configs.clone(),
            Options::new(&runnable.cwd, runnable.secrets.clone()),
        );
        let (tools, failed) = servers.start_all().await;
        for config in configs {
            let error = failed
                .iter()
                .find(|(name, _)| *name == config.name)
                .map(|(_, e)| e.clone());
            let mine = tools
                .iter()
                .filter(|t| t.server == config.name)
                .cloned()
                .collect();
            listed.push((config, error, mine));
        }
    }
    listed
}

/// One server as `--json` shows it.
fn row(listed: &Listed) -> Value {
    let Listed {
        server,
        error,
        tools,
        withheld,
    } = listed;
    let mut value = serde_json::to_value(server).unwrap_or(Value::Null);
    let status = match (withheld, error) {
        (true, _) => "untrusted",
        (false, Some(_)) => "failed",
        (false, None) => "ok",
    };
    value["status"] = json!(status);
    value["tools"] = tools
        .iter()
        .map(|tool| {
            json!({
                "name": tool.qualified_name(),
                "description": tool.description,
                "read_only": tool.read_only,
            })
        })
        .collect();
    if let Some(error) = error {
        value["error"] = json!({"code": error.code.as_str(), "message": error.message});
    }
    value
}

/// How a server is reached, in a few words.
fn reach(transport: &Transport) -> String {
    match transport {
        Transport::Stdio { command, args, .. } => {
            one_line(&format!("stdio: {command} {}", args.join(" ")), 100)
        }
        Transport::Http { kind, url, .. } => format!("{kind}: {url}"),
    }
}
