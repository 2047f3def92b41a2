use super::*;
use crate::config::SandboxMode;
use pretty_assertions::assert_eq;

fn strings(command: &CodexCommand) -> Vec<String> {
    command
        .args
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect()
}

fn outside_repo() -> PathBuf {
    // The filesystem root has no `.git` on any machine these tests run on.
    PathBuf::from("/")
}

#[test]
fn full_command_line() {
    let config = CodexConfig {
        model_provider: Some(ModelProviderConfig {
            id: "local".into(),
            base_url: "http://127.0.0.1:9/v1".into(),
            env_key: "OPENAI_API_KEY".into(),
            request_max_retries: 0,
            stream_max_retries: 1,
        }),
        sandbox: SandboxMode::WorkspaceWrite,
        codex_home: Some("/h/codex".into()),
        env: [("HOME".to_owned(), "/h".to_owned())].into(),
        ..CodexConfig::default()
    };
    let invocation = Invocation {
        prompt: "-say \"hi\"".into(),
        cwd: outside_repo(),
        model: Some("gpt-5.5".into()),
        persona: Some("Be \"terse\".\nAlways.".into()),
        output_schema_file: Some("/t/schema.json".into()),
        resume_thread: Some("thread-1".into()),
        permission_ceiling: None,
        no_sub_agents: false,
        effort: None,
    };
    let command = build(&config, &invocation);
    assert_eq!(
        strings(&command),
        vec![
            "exec",
            "-c",
            "model_provider=\"local\"",
            "-c",
            "model_providers.local={name=\"local\",base_url=\"http://127.0.0.1:9/v1\",wire_api=\"responses\",env_key=\"OPENAI_API_KEY\",request_max_retries=0,stream_max_retries=1}",
            "-c",
            "analytics.enabled=false",
            "-c",
            "developer_instructions=\"Be \\\"terse\\\".\\nAlways.\"",
            "--disable",
            "plugins",
            "--json",
            "--skip-git-repo-check",
            "--sandbox",
            "workspace-write",
            "-m",
            "gpt-5.5",
            "--output-schema",
            "/t/schema.json",
            "resume",
            "thread-1",
            "--",
            "-say \"hi\"",
        ]
    );
    assert_eq!(
        command.env,
        vec![
            ("HOME".to_owned(), "/h".to_owned()),
            ("CODEX_HOME".to_owned(), "/h/codex".to_owned())
        ]
    );
    assert_eq!(command.program, PathBuf::from("codex"));
}

#[test]
fn minimal_command_line_uses_config_model() {
    let config = CodexConfig {
        model: Some("gpt-5.5".into()),
        disable_analytics: false,
        disable_plugins: false,
        ephemeral: true,
        ..CodexConfig::default()
    };
    let command = build(
        &config,
        &Invocation {
            prompt: "hi".into(),
            cwd: outside_repo(),
            ..Invocation::default()
        },
    );
    assert_eq!(
        strings(&command),
        vec![
            "exec",
            "--json",
            "--skip-git-repo-check",
            "--sandbox",
            "read-only",
            "-m",
            "gpt-5.5",
            "--ephemeral",
            "--",
            "hi"
        ]
    );
}

#[test]
fn the_permission_ceiling_tightens_the_sandbox_and_never_loosens_it() {
    use subagent_core::PermissionMode as Mode;
    let sandbox_for = |configured: SandboxMode, ceiling: Option<Mode>| {
        let config = CodexConfig {
            sandbox: configured,
            ..CodexConfig::default()
        };
        let args = strings(&build(
            &config,
            &Invocation {
                prompt: "hi".into(),
                cwd: outside_repo(),
                permission_ceiling: ceiling,
                ..Invocation::default()
            },
        ));
        let at = args.iter().position(|a| a == "--sandbox").unwrap();
        args[at + 1].clone()
    };
    let full = SandboxMode::DangerFullAccess;
    let write = SandboxMode::WorkspaceWrite;
    let read = SandboxMode::ReadOnly;
    for (configured, ceiling, expected) in [
        (write, None, "workspace-write"),
        (write, Some(Mode::Plan), "read-only"),
        (write, Some(Mode::Default), "read-only"),
        (write, Some(Mode::DontAsk), "read-only"),
        (write, Some(Mode::AcceptEdits), "workspace-write"),
        (write, Some(Mode::Bypass), "workspace-write"),
        (full, Some(Mode::AcceptEdits), "workspace-write"),
        (full, Some(Mode::Bypass), "danger-full-access"),
        (read, Some(Mode::Bypass), "read-only"),
        (read, Some(Mode::AcceptEdits), "read-only"),
    ] {
        assert_eq!(
            sandbox_for(configured, ceiling),
            expected,
            "{configured:?} under {ceiling:?}"
        );
    }
}

#[test]
fn a_depth_cap_switches_off_codex_sub_agents() {
    let config = CodexConfig {
        config_overrides: vec!["agents.enabled=true".into()],
        ..CodexConfig::default()
    };
    let args = |no_sub_agents: bool| {
        strings(&build(
            &config,
            &Invocation {
                prompt: "hi".into(),
                cwd: outside_repo(),
                resume_thread: Some("thread-1".into()),
                no_sub_agents,
                ..Invocation::default()
            },
        ))
    };
    assert_eq!(
        args(true),
        vec![
            "exec",
            "-c",
            "analytics.enabled=false",
            "-c",
            "agents.enabled=true",
            "-c",
            "agents.enabled=false",
            "--disable",
            "plugins",
            "--disable",
            "multi_agent",
            "--disable",
            "multi_agent_v2",
            "--json",
            "--skip-git-repo-check",
            "--sandbox",
            "read-only",
            "resume",
            "thread-1",
            "--",
            "hi",
        ]
    );
    let uncapped = args(false);
    assert!(!uncapped.iter().any(|a| a == "agents.enabled=false"));
    assert!(!uncapped.iter().any(|a| a.starts_with("multi_agent")));

    let request = |max_depth: Option<u32>| {
        let mut builder = subagent_core::StartRequest::builder("hi");
        if let Some(depth) = max_depth {
            builder = builder.max_depth(depth);
        }
        builder.build()
    };
    assert!(!no_sub_agents(&request(None)));
    assert!(no_sub_agents(&request(Some(1))));
    assert!(no_sub_agents(&request(Some(5))));
}

#[test]
fn git_repo_detection() {
    let dir = tempfile::tempdir().unwrap();
    let nested = dir.path().join("a/b");
    std::fs::create_dir_all(&nested).unwrap();
    std::fs::create_dir(dir.path().join(".git")).unwrap();
    assert!(!inside_git_repo(&nested), "an empty .git is no repository");
    std::fs::write(dir.path().join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    assert!(inside_git_repo(&nested));
    let command = build(
        &CodexConfig::default(),
        &Invocation {
            prompt: "hi".into(),
            cwd: nested,
            ..Invocation::default()
        },
    );
    assert!(!strings(&command).contains(&"--skip-git-repo-check".to_owned()));
}

#[test]
fn validation() {
    let mut config = CodexConfig {
        model_provider: Some(ModelProviderConfig {
            id: "bad id".into(),
            base_url: "http://x/v1".into(),
            env_key: "K".into(),
            request_max_retries: 0,
            stream_max_retries: 0,
        }),
        ..CodexConfig::default()
    };
    assert!(validate(&config).is_err());
    if let Some(p) = config.model_provider.as_mut() {
        p.id = "ok".into();
        p.base_url = "ftp://x".into();
    }
    assert!(validate(&config).is_err());
    config.model_provider = None;
    config.config_overrides = vec!["novalue".into()];
    assert!(validate(&config).is_err());
    config.config_overrides = vec!["a.b=1".into()];
    assert!(validate(&config).is_ok());
}

#[test]
fn toml_strings_escape_controls() {
    assert_eq!(toml_string("a\u{1}b\\"), "\"a\\u0001b\\\\\"");
}
