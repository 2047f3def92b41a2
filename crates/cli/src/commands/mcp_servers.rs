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
    let (tools, failed) = runnable.mcp.servers.start_all().await;
    let configured = &runnable.mcp.configured;
    let mut rows: Vec<Value> = Vec::new();
    for server in &configured.servers {
        let error = failed.iter().find(|(name, _)| *name == server.name);
        let mine: Vec<&ServerTool> = tools.iter().filter(|t| t.server == server.name).collect();
        rows.push(row(server, error.map(|(_, e)| e), &mine, false));
    }
    for server in &configured.withheld {
        rows.push(row(server, None, &[], true));
    }
    let ok = failed.is_empty();
    if args.json {
        let value = json!({"servers": rows, "ok": ok});
        outln!(
            "{}",
            serde_json::to_string_pretty(&value).unwrap_or_default()
        );
    } else if rows.is_empty() {
        outln!(
            "no MCP servers are configured for {} (the preset's mcp_servers:, ~/.claude.json's mcpServers, the project's .mcp.json: docs/mcp.md)",
            runnable.cwd.display()
        );
    } else {
        for (server, row) in configured
            .servers
            .iter()
            .chain(&configured.withheld)
            .zip(&rows)
        {
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
            for tool in tools.iter().filter(|t| t.server == server.name) {
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

/// One server as `--json` shows it.
fn row(
    server: &ServerConfig,
    error: Option<&subagent_mcp_client::Error>,
    tools: &[&ServerTool],
    withheld: bool,
) -> Value {
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
