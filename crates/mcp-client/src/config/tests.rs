use std::collections::BTreeMap;
use std::path::Path;

use pretty_assertions::assert_eq;
use serde_json::json;

use super::*;
use subagent_core::mcp::expand;

fn env(name: &str) -> Option<String> {
    match name {
        "TOKEN" => Some("t0k".to_owned()),
        "EMPTY" => Some(String::new()),
        _ => None,
    }
}

fn preset() -> Source {
    Source::Preset {
        path: "/p/preset.yaml".into(),
    }
}

#[test]
fn variables_expand_with_defaults_and_an_unset_one_without_is_an_error() {
    assert_eq!(expand("a ${TOKEN} b", &env).unwrap(), "a t0k b");
    assert_eq!(expand("${MISSING:-fallback}", &env).unwrap(), "fallback");
    assert_eq!(expand("${EMPTY:-fallback}", &env).unwrap(), "fallback");
    assert_eq!(expand("${EMPTY}", &env).unwrap(), "");
    assert_eq!(expand("$HOME and $", &env).unwrap(), "$HOME and $");
    let error = expand("${MISSING}", &env).unwrap_err();
    assert!(error.contains("`MISSING` is not set"), "{error}");
    assert!(expand("${TOKEN", &env).unwrap_err().contains("without its"));
}

#[test]
fn stdio_and_url_servers_parse_in_their_order() {
    let servers = parse_servers(
        &json!({
            "files": {"command": "npx", "args": ["-y", "server", "${MISSING:-dflt}"], "env": {"KEY": "${TOKEN}"}, "timeout": 5000},
            "remote": {"type": "http", "url": "https://example.com/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}},
            "bare": {"url": "http://127.0.0.1:1/mcp"}
        }),
        &preset(),
        Path::new("/p/preset.yaml"),
        &env,
    )
    .unwrap();
    assert_eq!(servers.len(), 3);
    assert_eq!(
        servers[0].transport,
        Transport::Stdio {
            command: "npx".into(),
            args: vec!["-y".into(), "server".into(), "dflt".into()],
            env: BTreeMap::from([("KEY".into(), "t0k".into())]),
        }
    );
    assert_eq!(servers[0].timeout_ms, Some(5000));
    assert_eq!(
        servers[1].transport,
        Transport::Http {
            kind: "http".into(),
            url: "https://example.com/mcp".into(),
            headers: BTreeMap::from([("Authorization".into(), "Bearer t0k".into())]),
        }
    );
    assert!(matches!(&servers[2].transport, Transport::Http { kind, .. } if kind == "http"));
    // A listing names variables and headers, never their values.
    let listed = serde_json::to_string(&servers).unwrap();
    assert!(!listed.contains("t0k"), "{listed}");
    assert!(listed.contains("\"env\":[\"KEY\"]"), "{listed}");
    assert!(
        listed.contains("\"transport\":\"http\",\"type\":\"http\""),
        "{listed}"
    );
}

#[test]
fn a_bad_server_is_refused_with_the_file_and_its_name() {
    let cases = [
        (
            json!({"x": "npx"}),
            "server `x`: its definition must be an object",
        ),
        (
            json!({"x": {"type": "stdio"}}),
            "server `x`: a stdio server needs a `command`",
        ),
        (json!({"x": {}}), "a `command` (stdio) or a `url`"),
        (
            json!({"x": {"type": "ws", "url": "u"}}),
            "unknown `type` `ws`",
        ),
        (
            json!({"x": {"command": "c", "args": "a"}}),
            "`args` must be a list of strings",
        ),
        (
            json!({"x": {"command": "c", "env": {"A": 1}}}),
            "`env.A` must be a string",
        ),
        (json!({"x": {"command": "${NOPE}"}}), "`NOPE` is not set"),
        (
            json!({"x": {"command": "c", "timeout": 0}}),
            "`timeout` must be a positive",
        ),
        (
            json!({"a__b": {"command": "c"}}),
            "must not be empty nor contain `__`",
        ),
        (json!(["x"]), "`mcpServers` must be an object"),
    ];
    for (value, wanted) in cases {
        let error =
            parse_servers(&value, &preset(), Path::new("/p/preset.yaml"), &env).unwrap_err();
        assert_eq!(error.code, ErrorCode::ConfigInvalid);
        assert!(error.message.starts_with("/p/preset.yaml: "), "{error}");
        assert!(error.message.contains(wanted), "{value}: {error}");
    }
}

#[test]
fn discovery_reads_claudes_files_in_their_precedence_and_withholds_an_untrusted_projects() {
    let home = tempfile::tempdir().unwrap();
    let project = home.path().join("project");
    std::fs::create_dir_all(&project).unwrap();
    let mut projects = serde_json::Map::new();
    projects.insert(
        project.to_string_lossy().into_owned(),
        json!({"mcpServers": {"mine": {"command": "local-mine"}}}),
    );
    std::fs::write(
        home.path().join(".claude.json"),
        json!({
            "mcpServers": {"shared": {"command": "user-shared"}, "mine": {"command": "user-mine"}},
            "projects": projects,
        })
        .to_string(),
    )
    .unwrap();
    std::fs::write(
        project.join(".mcp.json"),
        json!({"mcpServers": {"shared": {"command": "project-shared"}, "repo": {"command": "project-repo"}}})
            .to_string(),
    )
    .unwrap();
    let preset = parse_servers(
        &json!({"shared": {"command": "preset-shared"}, "extra": {"command": "preset-extra"}}),
        &Source::Preset { path: "/p".into() },
        Path::new("/p"),
        &env,
    )
    .unwrap();
    let command = |server: &ServerConfig| match &server.transport {
        Transport::Stdio { command, .. } => format!("{}={command}", server.name),
        Transport::Http { url, .. } => format!("{}={url}", server.name),
    };
    let trusted = discover(&project, Some(home.path()), true, preset.clone(), &env).unwrap();
    assert_eq!(
        trusted.servers.iter().map(command).collect::<Vec<_>>(),
        [
            "shared=project-shared",
            "extra=preset-extra",
            "mine=local-mine",
            "repo=project-repo"
        ]
    );
    assert!(trusted.withheld.is_empty());
    let untrusted = discover(&project, Some(home.path()), false, preset, &env).unwrap();
    assert_eq!(
        untrusted.servers.iter().map(command).collect::<Vec<_>>(),
        [
            "shared=user-shared",
            "extra=preset-extra",
            "mine=local-mine"
        ]
    );
    assert_eq!(
        untrusted.withheld.iter().map(command).collect::<Vec<_>>(),
        ["shared=project-shared", "repo=project-repo"]
    );
}

#[test]
fn a_file_that_does_not_parse_is_named_with_its_line_and_column() {
    let project = tempfile::tempdir().unwrap();
    std::fs::write(
        project.path().join(".mcp.json"),
        "{\n  \"mcpServers\": {,}\n}",
    )
    .unwrap();
    let error = discover(project.path(), None, true, Vec::new(), &env).unwrap_err();
    assert_eq!(error.code, ErrorCode::ConfigInvalid);
    assert!(error.message.contains(".mcp.json:2:"), "{error}");
}
