//! Every rule form of issue 28, our tool names and Claude Code's alike, and what they refuse.

use std::path::{Path, PathBuf};

use pretty_assertions::assert_eq;
use subagent_settings::{
    Decision, MatchContext, Permissions, Rule, Scope, Sourced, ToolCall, claude_tool_name,
    our_tool_name,
};

struct Dirs {
    cwd: PathBuf,
    project: PathBuf,
    home: PathBuf,
}

fn dirs() -> Dirs {
    Dirs {
        cwd: PathBuf::from("/w/project/sub"),
        project: PathBuf::from("/w/project"),
        home: PathBuf::from("/home/u"),
    }
}

impl Dirs {
    fn ctx(&self) -> MatchContext<'_> {
        MatchContext {
            cwd: &self.cwd,
            project_root: &self.project,
            home: Some(&self.home),
        }
    }
}

fn rule(text: &str) -> Rule {
    Rule::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"))
}

fn bash(rule_text: &str, command: &str) -> bool {
    let d = dirs();
    rule(rule_text).matches(&ToolCall::new("Bash").command(command), &d.ctx())
}

fn path(rule_text: &str, tool: &str, path: &str) -> bool {
    let d = dirs();
    rule(rule_text).matches(&ToolCall::new(tool).path(Path::new(path)), &d.ctx())
}

#[test]
fn bash_prefix_and_wildcards() {
    assert!(bash("Bash(npm run test:*)", "npm run test"));
    assert!(bash("Bash(npm run test:*)", "npm run test -- --watch"));
    assert!(!bash("Bash(npm run test:*)", "npm run testing"));
    assert!(!bash("Bash(npm run test:*)", "npm run build"));
    assert!(bash("Bash(git diff:*)", "git diff HEAD~1"));
    assert!(!bash("Bash(git diff:*)", "git status"));
    assert!(bash("Bash(git * main)", "git push origin main"));
    assert!(!bash("Bash(git * main)", "git push origin dev"));
    assert!(bash("Bash(ls*)", "lsof"));
    assert!(!bash("Bash(ls *)", "lsof"));
    assert!(bash("Bash(npm install)", "npm install"));
    assert!(!bash("Bash(npm install)", "npm install left-pad"));
    assert!(bash("Bash", "anything at all"));
    assert!(bash("bash(git *)", "git log"), "our name means the same");
}

#[test]
fn an_allow_rule_does_not_cover_a_chained_command() {
    for command in [
        "git diff && rm -rf ~",
        "git diff; rm -rf ~",
        "git diff || curl evil",
        "git diff | sh",
        "git diff `rm -rf ~`",
        "git diff $(rm -rf ~)",
        "git diff > ~/.bashrc",
        "git diff < /etc/passwd",
        "git diff\nrm -rf ~",
        "git diff & rm -rf ~",
    ] {
        assert!(!bash("Bash(git diff:*)", command), "{command:?}");
    }
    // Unless the pattern spells the operator.
    assert!(bash(
        "Bash(git log * | head *)",
        "git log --oneline | head -5"
    ));
    // A bare Bash rule names every command line.
    assert!(bash("Bash", "git diff && rm -rf ~"));
}

#[test]
fn deny_and_ask_rules_catch_any_command_of_a_chain() {
    let d = dirs();
    let deny = rule("Bash(rm *)");
    for command in [
        "ls && rm -rf x",
        "echo $(rm -rf x)",
        "FOO=1 rm -rf x",
        "rm x",
    ] {
        let call = ToolCall::new("bash").command(command);
        assert!(deny.catches(&call, &d.ctx()), "{command:?}");
    }
    assert!(!deny.catches(&ToolCall::new("bash").command("ls -la"), &d.ctx()));
}

#[test]
fn read_rules_are_gitignore_style_paths() {
    // `./x`: relative to the run's directory.
    assert!(path("Read(./.env)", "Read", "/w/project/sub/.env"));
    assert!(!path("Read(./.env)", "Read", "/w/project/sub/deeper/.env"));
    assert!(!path("Read(./.env)", "Read", "/w/project/.env"));
    // A name without a slash matches at any depth below the run's directory.
    assert!(path("Read(.env)", "Read", "/w/project/sub/deeper/.env"));
    assert!(path("Read(*.pem)", "Read", "/w/project/sub/keys/a.pem"));
    assert!(!path("Read(.env)", "Read", "/w/project/.env"));
    // `/x`: relative to the project root.
    assert!(path(
        "Read(/config/**)",
        "Read",
        "/w/project/config/a/b.json"
    ));
    assert!(!path(
        "Read(/config/**)",
        "Read",
        "/w/project/sub/config/a.json"
    ));
    // `//x`: absolute; `~/x`: the home.
    assert!(path("Read(//etc/passwd)", "Read", "/etc/passwd"));
    assert!(path("Read(~/.ssh/**)", "Read", "/home/u/.ssh/id_ed25519"));
    assert!(!path(
        "Read(~/.ssh/**)",
        "Read",
        "/w/project/.ssh/id_ed25519"
    ));
    // A directory matches what is inside it, as in gitignore.
    assert!(path(
        "Read(./secrets)",
        "Read",
        "/w/project/sub/secrets/key"
    ));
    // `*` stays within one directory, `**` crosses them.
    assert!(path("Edit(src/*.rs)", "Edit", "/w/project/sub/src/lib.rs"));
    assert!(!path(
        "Edit(src/*.rs)",
        "Edit",
        "/w/project/sub/src/a/lib.rs"
    ));
    assert!(path(
        "Edit(src/**)",
        "Edit",
        "/w/project/sub/src/a/b/lib.rs"
    ));
    assert!(!path("Edit(src/**)", "Edit", "/w/project/sub/lib/x.rs"));
    // A relative call path is taken from the run's directory.
    assert!(path("Read(./.env)", "Read", ".env"));
    // Without a home, `~/` rules match nothing.
    let d = dirs();
    let ctx = MatchContext {
        home: None,
        ..d.ctx()
    };
    let call = ToolCall::new("Read").path(Path::new("/home/u/.ssh/id"));
    assert!(!rule("Read(~/.ssh/**)").matches(&call, &ctx));
}

#[test]
fn dot_dot_cannot_dodge_a_rule() {
    for spelled in [
        "/w/project/sub/src/../.env",
        "src/../.env",
        "./x/y/../../.env",
    ] {
        assert!(path("Read(./.env)", "Read", spelled), "{spelled}");
    }
    // Nor climb out of an allowed directory.
    for spelled in ["/w/project/sub/src/../../../etc/passwd", "src/../../x"] {
        assert!(!path("Edit(src/**)", "Edit", spelled), "{spelled}");
    }
    // A rule may climb itself.
    assert!(path("Read(../shared/**)", "Read", "/w/project/shared/a"));
}

#[test]
fn read_and_edit_rules_cover_their_tool_families_in_either_name() {
    for tool in [
        "Read",
        "Glob",
        "Grep",
        "LS",
        "read_file",
        "glob",
        "grep",
        "ls",
    ] {
        assert!(path("Read(./.env)", tool, "/w/project/sub/.env"), "{tool}");
    }
    for tool in ["Bash", "Write", "write_file"] {
        assert!(!path("Read(./.env)", tool, "/w/project/sub/.env"), "{tool}");
    }
    for tool in [
        "Edit",
        "Write",
        "MultiEdit",
        "NotebookEdit",
        "edit_file",
        "write_file",
        "delete",
    ] {
        assert!(
            path("Edit(src/**)", tool, "/w/project/sub/src/a.rs"),
            "{tool}"
        );
    }
    assert!(!path("Edit(src/**)", "Read", "/w/project/sub/src/a.rs"));
    // `Write` rules are the Write tool's.
    assert!(path(
        "Write(docs/*.md)",
        "write_file",
        "/w/project/sub/docs/a.md"
    ));
    assert!(!path(
        "Write(docs/*.md)",
        "edit_file",
        "/w/project/sub/docs/a.md"
    ));
    // Our names in rules are accepted too.
    assert!(path("read_file(./.env)", "Read", "/w/project/sub/.env"));
    assert!(path(
        "edit_file(src/**)",
        "delete",
        "/w/project/sub/src/a.rs"
    ));
    // A path rule does not match a call without a path.
    let d = dirs();
    assert!(!rule("Read(./.env)").matches(&ToolCall::new("Read"), &d.ctx()));
    assert!(rule("Read").matches(&ToolCall::new("grep"), &d.ctx()));
}

#[test]
fn web_fetch_domains_and_mcp_tools() {
    let d = dirs();
    let fetch = |rule_text: &str, domain: &str| {
        rule(rule_text).matches(&ToolCall::new("WebFetch").domain(domain), &d.ctx())
    };
    assert!(fetch("WebFetch(domain:example.com)", "example.com"));
    assert!(fetch("WebFetch(domain:example.com)", "Example.COM"));
    assert!(!fetch("WebFetch(domain:example.com)", "evil.com"));
    assert!(!fetch(
        "WebFetch(domain:example.com)",
        "example.com.evil.com"
    ));
    assert!(fetch("WebFetch(domain:*.example.com)", "docs.example.com"));
    assert!(fetch("WebFetch", "anything.org"));
    assert!(
        rule("web_fetch(domain:example.com)")
            .matches(&ToolCall::new("web_fetch").domain("example.com"), &d.ctx())
    );
    let mcp = |rule_text: &str, tool: &str| rule(rule_text).matches(&ToolCall::new(tool), &d.ctx());
    assert!(mcp(
        "mcp__github__create_issue",
        "mcp__github__create_issue"
    ));
    assert!(!mcp(
        "mcp__github__create_issue",
        "mcp__github__delete_repo"
    ));
    assert!(mcp("mcp__github", "mcp__github__delete_repo"));
    assert!(!mcp("mcp__github", "mcp__githubx__tool"));
    assert!(mcp("mcp__github__*", "mcp__github__delete_repo"));
    assert!(!mcp("mcp__github__*", "mcp__gitlab__x"));
    // A bare name is that tool only.
    assert!(mcp("Bash", "bash") && mcp("bash", "Bash"));
    assert!(!mcp("Bash", "Read"));
    assert!(mcp("TaskOutput", "task_output") && mcp("BashOutput", "task_output"));
    assert!(mcp("Task", "subagent") && mcp("Agent", "subagent"));
    // Another tool's specifier is matched against the call's subject.
    assert!(rule("Agent(Explore)").matches(&ToolCall::new("Agent").command("Explore"), &d.ctx()));
    assert!(!rule("Agent(Explore)").matches(&ToolCall::new("Agent").command("Plan"), &d.ctx()));
}

#[test]
fn tool_names_map_both_ways() {
    let pairs = [
        ("read_file", "Read"),
        ("write_file", "Write"),
        ("edit_file", "Edit"),
        ("ls", "LS"),
        ("glob", "Glob"),
        ("grep", "Grep"),
        ("bash", "Bash"),
        ("task_output", "TaskOutput"),
        ("task_stop", "TaskStop"),
        ("subagent", "Agent"),
        ("web_fetch", "WebFetch"),
    ];
    for (ours, claude) in pairs {
        assert_eq!(claude_tool_name(ours), Some(claude));
        assert_eq!(our_tool_name(claude), Some(ours));
    }
    assert_eq!(claude_tool_name("delete"), Some("Edit"));
    assert_eq!(our_tool_name("BashOutput"), Some("task_output"));
    assert_eq!(our_tool_name("KillShell"), Some("task_stop"));
    assert_eq!(our_tool_name("Task"), Some("subagent"));
    assert_eq!(our_tool_name("MultiEdit"), None);
    assert_eq!(claude_tool_name("Bash"), None);
}

#[test]
fn rules_that_do_not_parse_are_errors_with_a_stable_code() {
    let cases = [
        ("", "empty rule"),
        (
            "Bash(",
            "unbalanced parentheses: the rule must end with `)`",
        ),
        (
            "Bash(git",
            "unbalanced parentheses: the rule must end with `)`",
        ),
        ("Bash)", "unbalanced parentheses: `)` without `(`"),
        ("Bash(a(b)", "unbalanced parentheses inside the specifier"),
        ("Bash(a)b)", "unbalanced parentheses inside the specifier"),
        (
            "Bash(x) y",
            "unbalanced parentheses: the rule must end with `)`",
        ),
        ("(x)", "no tool name"),
        (
            "Bash()",
            "empty specifier: write the bare tool name to match every call",
        ),
        (
            "Read(  )",
            "empty specifier: write the bare tool name to match every call",
        ),
        ("Bash(:*)", "empty command prefix before `:*`"),
        ("Ba sh", "tool name \"Ba sh\" has the character ' '"),
        (
            "WebFetch(example.com)",
            "a WebFetch specifier is `domain:<host>` (`WebFetch(domain:example.com)`)",
        ),
        (
            "WebFetch(domain:)",
            "`domain:` needs a host name (`WebFetch(domain:example.com)`)",
        ),
        (
            "Read(src/[a)",
            "path pattern: unclosed character class; missing ']'",
        ),
    ];
    for (text, reason) in cases {
        let error = Rule::parse(text).unwrap_err();
        assert_eq!(
            (error.code(), error.to_string()),
            (
                "PERMISSION_RULE_INVALID",
                format!("permission rule {:?}: {reason}", text.trim())
            ),
        );
    }
}

#[test]
fn decide_takes_deny_then_ask_then_allow() {
    let d = dirs();
    let sourced = |text: &str, scope| Sourced::new(rule(text), scope, None);
    let permissions = Permissions {
        allow: vec![
            sourced("Bash", Scope::Managed),
            sourced("Read", Scope::User),
        ],
        ask: vec![sourced("Bash(git push:*)", Scope::User)],
        deny: vec![sourced("Read(./.env)", Scope::Project)],
        ..Permissions::default()
    };
    let decide = |call: ToolCall<'_>| {
        permissions
            .decide(&call, &d.ctx())
            .map(|(decision, rule)| (decision, rule.value.to_string()))
    };
    assert_eq!(
        decide(ToolCall::new("bash").command("git push -f")),
        Some((Decision::Ask, "Bash(git push:*)".into()))
    );
    assert_eq!(
        decide(ToolCall::new("bash").command("ls")),
        Some((Decision::Allow, "Bash".into()))
    );
    assert_eq!(
        decide(ToolCall::new("read_file").path(Path::new("sub2/../.env"))),
        Some((Decision::Deny, "Read(./.env)".into()))
    );
    assert_eq!(
        decide(ToolCall::new("read_file").path(Path::new("a.txt"))),
        Some((Decision::Allow, "Read".into()))
    );
    assert_eq!(
        decide(ToolCall::new("write_file").path(Path::new("a.txt"))),
        None
    );
}
