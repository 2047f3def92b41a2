//! Command-line arguments.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

/// Delegate a task to another agent — in-process, Claude Code, Codex — through one seam.
#[derive(Debug, Parser)]
#[command(
    name = "subagent",
    version,
    about = "Delegate a task to another agent (in-process, Claude Code, Codex) through one seam.",
    after_help = EXIT_CODES
)]
pub(crate) struct Cli {
    /// Log what happens inside on stderr: -v our crates' debug logs, -vv also their traces
    /// and the dependencies' debug logs (RUST_LOG, when set, decides instead).
    #[arg(short, long, action = clap::ArgAction::Count, global = true, display_order = 100)]
    pub verbose: u8,
    #[command(subcommand)]
    pub command: Command,
}

/// The exit codes, shown in `--help`.
pub(crate) const EXIT_CODES: &str = "\
Exit codes:
  0    the run completed
  1    the child ran but did not complete (failed, max_turns, max_tokens, refused,
       budget_exceeded); doctor: something the preset enables cannot run
  2    refused before anything started (bad arguments or preset, unknown provider or agent,
       unsupported capability, depth, the child could not be spawned)
  130  cancelled (Ctrl-C); 143 on SIGTERM, 129 on SIGHUP (the run is cancelled the same way)";

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Start one child on a provider (or agent type) and print its outcome.
    Delegate(DelegateArgs),
    /// Run a parent agent with the built-in tools, the task tools and the preset's delegation
    /// tools; print its answer, the delegations it made and its session (to resume).
    Run(RunArgs),
    /// Serve the `run` parent to an editor over the Agent Client Protocol on stdin/stdout
    /// (Zed: an agent_servers entry running `subagent acp --preset FILE`); logs on stderr.
    #[cfg_attr(
        not(feature = "acp"),
        command(about = "Not in this build (needs the `acp` feature of subagent-cli): serve the `run` parent to an editor over the Agent Client Protocol.", long_about = None)
    )]
    Acp(AcpArgs),
    /// Show the capability table of the preset's providers (disabled rows marked).
    Providers(ProvidersArgs),
    /// Show the effective agent catalog with sources and warnings.
    Agents(AgentsArgs),
    /// Show the skills (SKILL.md folders of the user's and the project's .claude/skills/ and
    /// .subagents/skills/) with their sources, what they override, and warnings.
    Skills(SkillsArgs),
    /// Serve the preset's agents to A2A clients (Agent2Agent 1.0: JSON-RPC + SSE) until
    /// SIGTERM/SIGINT, which drains; logs on stderr (docs/remote.md).
    #[cfg_attr(
        not(feature = "serve"),
        command(about = "Not in this build (needs the `serve` feature of subagent-cli): serve the preset's agents to A2A clients.", long_about = None)
    )]
    Serve(ServeArgs),
    /// Serve the preset's delegation tools to an MCP client (Claude Code, Codex, an editor) on
    /// stdin/stdout, one MCP tool per row, until stdin closes, or with --listen to MCP clients
    /// over streamable HTTP until SIGTERM/SIGINT; logs on stderr (docs/mcp.md).
    #[cfg_attr(
        not(feature = "mcp"),
        command(about = "Not in this build (needs the `mcp` feature of subagent-cli): serve the preset's delegation tools to an MCP client.", long_about = None)
    )]
    Mcp(McpArgs),
    /// Run the preset's providers for `nats` rows elsewhere: pull jobs from a NATS JetStream
    /// work queue, run each through the preset's registry, publish its events, until
    /// SIGTERM/SIGINT, which drains; logs on stderr (docs/scale.md).
    #[cfg_attr(
        not(feature = "nats"),
        command(about = "Not in this build (needs the `nats` feature of subagent-cli): run the preset's providers for `nats` rows elsewhere.", long_about = None)
    )]
    Worker(WorkerArgs),
    /// Check a preset file or print the JSON Schema of the format.
    #[command(subcommand)]
    Preset(PresetCommand),
    /// List the sessions of this directory (what --resume and --continue continue), newest
    /// first; `sessions show ID` prints one, `sessions rm ID` deletes one.
    Sessions(SessionsArgs),
    /// Show the effective settings (permission rules and mode, hooks, environment) and where
    /// each value came from: managed policy, flags, the preset, the project's and the user's
    /// .claude/ and .subagents/ settings files; and whether the project is trusted.
    Settings(SettingsArgs),
    /// Trust a project, so that its own settings' allow rules count (its deny rules and hooks
    /// count at once); --revoke takes it back, --list shows the record.
    Trust(TrustArgs),
    /// List the MCP servers the in-process agents of this directory use (the preset's
    /// mcp_servers:, ~/.claude.json's, a trusted project's .mcp.json), where each is
    /// configured, whether it starts and the tools it offers (as mcp__<server>__<tool>). Exit 0
    /// when every configured server starts, else 1.
    McpServers(McpServersArgs),
    /// Check what the preset's enabled rows need and whether it is there: the product CLIs and
    /// their versions, the model's key and endpoint, the state dir, remote agents and NATS
    /// servers; one line each (ok, warn, missing: what to do). Exit 0 when everything enabled
    /// can run, else 1.
    Doctor(DoctorArgs),
    /// List the runs of every `subagent` process of yours as a tree (parent, children,
    /// teammates, background tasks): status, provider, elapsed time, tokens; --all adds the
    /// recent finished ones (docs/runs.md).
    Ps(PsArgs),
    /// Print a run's events as `run` prints them (--json: one event a line); -f follows a
    /// running one until it ends. ID is a run id or its first characters, as `ps` shows.
    Logs(LogsArgs),
    /// Serve a live page of your runs (the tree of agents, each run's stream, teams and their
    /// tasks, a stop button per run) on 127.0.0.1 behind a random token printed in its URL,
    /// until SIGTERM/SIGINT (docs/runs.md).
    #[cfg_attr(
        not(feature = "ui"),
        command(about = "Not in this build (needs the `ui` feature of subagent-cli): serve a live page of your runs.", long_about = None)
    )]
    Ui(UiArgs),
    /// Stop a run (and its children) through the process that owns it, as Ctrl-C would; its
    /// outcome says cancelled.
    Stop(StopArgs),
    /// Print the completion script of SHELL on stdout, e.g. `source <(subagent completions
    /// bash)` in ~/.bashrc.
    Completions(CompletionsArgs),
    /// Print the manual page (roff) of subagent, or of one of its commands, on stdout, e.g.
    /// `subagent man > subagent.1 && man -l subagent.1`.
    Man(ManArgs),
}

impl Command {
    /// The subcommand's name: the kind of the runs it starts in the record of runs.
    pub(crate) fn kind(&self) -> &'static str {
        match self {
            Self::Delegate(_) => "delegate",
            Self::Run(_) => "run",
            Self::Acp(_) => "acp",
            Self::Serve(_) => "serve",
            Self::Mcp(_) => "mcp",
            Self::Worker(_) => "worker",
            _ => "other",
        }
    }
}

#[derive(Debug, Args)]
pub(crate) struct PsArgs {
    /// Add the recent finished runs.
    #[arg(long)]
    pub all: bool,
    /// Print JSON (every record, in tree order) instead of a table.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub(crate) struct LogsArgs {
    /// The run: its id, or its first characters as `ps` shows them.
    pub id: String,
    /// Follow a running run until it ends.
    #[arg(short = 'f', long)]
    pub follow: bool,
    /// Print the events as JSON, one a line.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub(crate) struct UiArgs {
    /// The address to serve on (port 0: any free one); the page's token is in the printed URL.
    #[arg(long, value_name = "IP:PORT", default_value = "127.0.0.1:0")]
    pub listen: String,
}

#[derive(Debug, Args)]
pub(crate) struct StopArgs {
    /// The run: its id, or its first characters as `ps` shows them.
    pub id: String,
    /// Return at once instead of waiting (up to 30 s) for the run to end.
    #[arg(long)]
    pub no_wait: bool,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub(crate) struct SessionsArgs {
    #[command(subcommand)]
    pub command: Option<SessionsCommand>,
    /// The directory whose sessions to list (default: the current one).
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Subcommand)]
pub(crate) enum SessionsCommand {
    /// Print one session: what is recorded of it, then its conversation.
    Show {
        /// The session id (`subagent sessions` lists them).
        id: String,
        /// The directory whose session it is (default: the current one).
        #[arg(long, value_name = "DIR")]
        cwd: Option<PathBuf>,
        /// Print JSON: the record and the transcript's events.
        #[arg(long)]
        json: bool,
    },
    /// Delete one session (its transcript and record); one still running is refused.
    Rm {
        /// The session id.
        id: String,
        /// The directory whose session it is (default: the current one).
        #[arg(long, value_name = "DIR")]
        cwd: Option<PathBuf>,
    },
}

/// The preset: every command that loads one.
#[derive(Debug, Args)]
pub(crate) struct PresetArgs {
    /// The preset file (default: $SUBAGENT_PRESET, else .subagents/preset.yaml found from the
    /// working directory up to the repository root, else the built-in standard preset).
    #[arg(long, short = 'p', value_name = "FILE")]
    pub preset: Option<PathBuf>,
}

/// The preset and the project: the commands that read the project (its agent definitions).
#[derive(Debug, Args)]
pub(crate) struct ProjectArgs {
    #[command(flatten)]
    pub preset: PresetArgs,
    /// The working directory of the parent (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,
}

/// The preset, the project and the model choice: the commands that run an agent.
#[derive(Debug, Args)]
pub(crate) struct RunnableArgs {
    #[command(flatten)]
    pub project: ProjectArgs,
    /// Use the scripted offline model even when an API key is set (no network).
    #[arg(long)]
    pub offline: bool,
    #[command(flatten)]
    pub settings: SettingsFlags,
}

/// Claude Code's settings flags: permission rules and settings above every settings file but
/// the managed policy (docs/permissions.md).
#[derive(Clone, Debug, Default, Args)]
pub(crate) struct SettingsFlags {
    /// Permission rules that allow, in Claude Code's syntax (`Bash(npm run test:*)`,
    /// `Edit(src/**)`, `Read`), separated by commas or spaces; repeatable. Our tool names work
    /// too (`bash(git diff:*)`).
    #[arg(
        long = "allowedTools",
        visible_alias = "allowed-tools",
        value_name = "RULES"
    )]
    pub allowed_tools: Vec<String>,
    /// Permission rules that deny, the same way (`Bash(git push:*)`, `WebFetch`); a deny beats
    /// every allow.
    #[arg(
        long = "disallowedTools",
        visible_alias = "disallowed-tools",
        value_name = "RULES"
    )]
    pub disallowed_tools: Vec<String>,
    /// Settings as Claude Code's `--settings` takes them: a settings file (relative to the
    /// working directory), or a JSON object; ranked with the command line.
    #[arg(long, value_name = "FILE|JSON")]
    pub settings: Option<String>,
}

#[derive(Debug, Args)]
pub(crate) struct DelegateArgs {
    #[command(flatten)]
    pub preset: RunnableArgs,
    /// Run in the background: print the run's id and return at once; the run goes on detached
    /// from the terminal (closing it, or Ctrl-C, does not stop it), its output in a file that
    /// `subagent ps` and `subagent logs ID` show (docs/runs.md).
    #[arg(long)]
    pub bg: bool,
    /// The provider to run the child on (default: the agent type's `provider`, else the
    /// provider of the preset's first delegation tool, else its first enabled provider). With
    /// --agent, the definition runs on this provider instead of its own.
    #[arg(long)]
    pub provider: Option<String>,
    /// The agent type (definition) to run: its instructions, tools, model, turn limit and
    /// permission mode apply; a capability the provider lacks is refused before it starts.
    #[arg(long)]
    pub agent: Option<String>,
    /// Agent definitions for this command, as JSON (Claude Code's --agents): `{"NAME":
    /// {"description": …, "prompt": …, "tools": […], "model": …}}`, any frontmatter field; they
    /// override definitions of the same name from files.
    #[arg(long, value_name = "JSON")]
    pub agents: Option<String>,
    /// The model the child runs.
    #[arg(long)]
    pub model: Option<String>,
    /// A JSON Schema (object-rooted), inline (a value starting with `{`) or in a file: the
    /// outcome then carries structured output.
    #[arg(long, value_name = "FILE|JSON")]
    pub output_schema: Option<PathBuf>,
    /// Stop the child after this many turns (at least 1).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    pub max_turns: Option<u32>,
    /// `worktree`: the child works in a new git worktree of the repository containing --cwd, on
    /// a branch of its own; a worktree it changed is kept and the outcome says where (default:
    /// the agent type's `isolation`, else none).
    #[arg(long, value_name = "worktree")]
    pub isolation: Option<String>,
    /// Instructions added to the child's own.
    #[arg(long)]
    pub persona: Option<String>,
    /// How hard the child's model reasons: low, medium, high, xhigh or max (an agent
    /// definition's `effort:` values); a provider that does not declare `effort` (fork, say)
    /// refuses before the child starts (default: the agent type's, else the model's own).
    #[arg(long, value_name = "LEVEL", value_parser = parse_effort)]
    pub effort: Option<subagent_core::Effort>,
    /// The most tokens the child may use (input, cache included, and output, its own nested
    /// agents' too); past it the child is stopped `budget_exceeded` (exit code 1).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_tokens_budget: Option<u64>,
    /// The most US dollars the child may spend, at the price the preset's `model.price` gives
    /// (refused where no price is known); past it the child is stopped `budget_exceeded`.
    #[arg(long, value_name = "USD", value_parser = parse_usd)]
    pub max_budget_usd: Option<f64>,
    /// Continue a finished run: the session id it printed at its end (`session: ID`, the
    /// `session.id` of its `--json` outcome), on the same provider and from the same `--cwd`.
    #[arg(long, value_name = "SESSION_ID")]
    pub resume: Option<String>,
    /// Continue the latest session of this directory that a child ran (of --provider, when
    /// given; else on the provider that ran it), as --resume would.
    #[arg(short = 'c', long = "continue", conflicts_with = "resume")]
    pub continue_latest: bool,
    /// Print events as JSON lines, then the outcome object (for machines).
    #[arg(long)]
    pub json: bool,
    /// The task; `-` reads it from stdin.
    pub prompt: String,
}

#[derive(Debug, Args)]
pub(crate) struct RunArgs {
    #[command(flatten)]
    pub preset: RunnableArgs,
    /// Run in the background: print the run's id and return at once; the run goes on detached
    /// from the terminal (closing it, or Ctrl-C, does not stop it), its output in a file that
    /// `subagent ps` and `subagent logs ID` show (docs/runs.md).
    #[arg(long)]
    pub bg: bool,
    /// The parent's model (default: the preset's).
    #[arg(long)]
    pub model: Option<String>,
    /// Stop the parent after this many turns (at least 1).
    #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u32).range(1..))]
    pub max_turns: u32,
    /// How the parent's tool calls are permitted: default (edits and commands are asked on a
    /// terminal, denied otherwise), accept-edits, plan (read-only), dont-ask (deny what is not
    /// allowed), bypass (allow everything); Claude Code's spellings (acceptEdits, dontAsk,
    /// bypassPermissions) work too. Children inherit it, never looser. Default: the settings'
    /// `permissions.defaultMode` (`subagent settings` shows it), else default.
    #[arg(long, value_parser = parse_mode)]
    pub permission_mode: Option<subagent_core::PermissionMode>,
    /// How hard the parent's model reasons: low, medium, high, xhigh or max (refused on a
    /// model that takes no effort); forks share it, other children inherit it where their
    /// provider takes an effort (default: the model's own).
    #[arg(long, value_name = "LEVEL", value_parser = parse_effort)]
    pub effort: Option<subagent_core::Effort>,
    /// Agent definitions for this run's delegations, as JSON (as for delegate --agents).
    #[arg(long, value_name = "JSON")]
    pub agents: Option<String>,
    /// The most tokens the run may use, its subagents' included; past it the run is stopped
    /// `budget_exceeded` (exit code 1).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_tokens_budget: Option<u64>,
    /// The most US dollars the run may spend, its subagents' included, at the price the
    /// preset's `model.price` gives (refused where no price is known).
    #[arg(long, value_name = "USD", value_parser = parse_usd)]
    pub max_budget_usd: Option<f64>,
    /// Continue an earlier run: the session id it printed at its end (`session: ID`, the
    /// `session.id` of its `--json` outcome), from the same `--cwd`; the model sees that
    /// conversation first, then PROMPT.
    #[arg(long, value_name = "SESSION_ID")]
    pub resume: Option<String>,
    /// Continue the latest `run` session of this directory, as --resume would.
    #[arg(short = 'c', long = "continue", conflicts_with = "resume")]
    pub continue_latest: bool,
    /// With --resume: take over a session a child began (a delegate's, a subagent's) as this
    /// parent's conversation; without it, such a session is refused (NOT_RESUMABLE).
    #[arg(long, requires = "resume")]
    pub adopt: bool,
    /// Print events as JSON lines, then the outcome object (for machines).
    #[arg(long)]
    pub json: bool,
    /// Lead teams (docs/teams.md): the team tools (TeamCreate, SendMessage, Task*) and
    /// teammates started by the first delegation tool with name and team_name.
    #[arg(long)]
    pub teams: bool,
    /// The task; `-` reads it from stdin.
    pub prompt: String,
}

#[derive(Debug, Args)]
pub(crate) struct AcpArgs {
    /// The preset; `--cwd` is only where it is checked at start: each ACP session runs in the
    /// directory the editor gives it.
    #[command(flatten)]
    pub preset: RunnableArgs,
    /// The parent's model (default: the preset's).
    #[arg(long)]
    pub model: Option<String>,
    /// Stop the parent after this many turns per prompt (the prompt ends with
    /// max_turn_requests; at least 1).
    #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u32).range(1..))]
    pub max_turns: u32,
    /// How the parent's tool calls are permitted (as for run); what the mode leaves open is
    /// asked in the editor (session/request_permission). Children inherit it, never looser.
    /// Default: the settings' `permissions.defaultMode`, else default.
    #[arg(long, value_parser = parse_mode)]
    pub permission_mode: Option<subagent_core::PermissionMode>,
}

#[derive(Debug, Args)]
pub(crate) struct ProvidersArgs {
    #[command(flatten)]
    pub preset: PresetArgs,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Print the table as Markdown (what docs/providers.md holds).
    #[arg(long, conflicts_with = "json")]
    pub markdown: bool,
}

#[derive(Debug, Args)]
pub(crate) struct SkillsArgs {
    /// The project directory whose skills are listed (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub(crate) struct AgentsArgs {
    #[command(flatten)]
    pub preset: ProjectArgs,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub(crate) struct McpServersArgs {
    #[command(flatten)]
    pub preset: ProjectArgs,
    /// Print one JSON object: every server with its source, transport, status and tools.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub(crate) struct ServeArgs {
    #[command(flatten)]
    pub preset: RunnableArgs,
    /// The address to listen on, IP:PORT (port 0 picks a free one; the address is printed on
    /// stderr). Anything but loopback needs a token.
    #[arg(long, value_name = "ADDR")]
    pub listen: String,
    #[command(flatten)]
    pub token: TokenArgs,
    /// The URL clients reach this server at when it is behind a reverse proxy (written into
    /// the agent card), e.g. https://agents.example.com.
    #[arg(long, value_name = "URL")]
    pub public_url: Option<String>,
    /// The model of in-process children (default: the preset's).
    #[arg(long)]
    pub model: Option<String>,
    /// The most runs going at once; more are refused with 503 and Retry-After.
    #[arg(long, default_value_t = 64)]
    pub max_runs: usize,
    /// The largest request body, in bytes.
    #[arg(long, default_value_t = 1 << 20)]
    pub max_body: usize,
    /// On SIGTERM, how long runs may go on before they are cancelled, in seconds.
    #[arg(long, default_value_t = 30)]
    pub drain_secs: u64,
    /// How many tasks the server remembers (for GetTask, ListTasks, SubscribeToTask and
    /// continuing a task); past it the oldest finished ones are forgotten, with their
    /// transcripts.
    #[arg(long, value_name = "N", default_value_t = 10_000)]
    pub keep_tasks: usize,
    /// How many bytes of tasks the server remembers (their snapshots as JSON, each kept event as JSON plus its fixed size in memory);
    /// past it the oldest finished tasks' events are dropped first (they stay readable whole
    /// with GetTask), then the oldest finished tasks themselves.
    #[arg(long, value_name = "BYTES", default_value_t = 64 << 20)]
    pub keep_task_bytes: usize,
    /// The most connections open at once (default: half the open files the process may
    /// have, at most 16,384); past it a newcomer takes the place of the oldest connection that
    /// has made no authenticated request, or is answered 503 when there is none.
    #[arg(long, value_name = "N")]
    pub max_connections: Option<usize>,
    /// The most connections open at once from one address (an IPv6 /64) (default: a quarter
    /// of --max-connections); behind a reverse proxy every client has the proxy's address.
    #[arg(long, value_name = "N")]
    pub max_connections_per_peer: Option<usize>,
    /// How long a connection may take to send a request's head, from its opening or the end
    /// of its previous response (an idle connection is closed then), in seconds.
    #[arg(long, value_name = "S", default_value_t = 10)]
    pub header_timeout_secs: u64,
    /// Keep the transcripts of the runs served (for an audit). By default a task's transcript
    /// is deleted from the session store once the server forgets the task (past --keep-tasks)
    /// and when it stops on SIGTERM/SIGINT/SIGHUP, since no client can reach it then; a
    /// killed server (SIGKILL) leaves its files. The user's own sessions there are never
    /// touched.
    #[arg(long)]
    pub keep_transcripts: bool,
}

/// The bearer token of a server (`serve`, `mcp --listen`): a variable's value or a file's
/// content, never the command line's.
#[derive(Debug, Args)]
pub(crate) struct TokenArgs {
    /// Clients must send `Authorization: Bearer <token>`, the token being this environment
    /// variable's value (never pass a token on the command line).
    #[arg(
        long,
        value_name = "VAR",
        conflicts_with = "token_file",
        requires = "listen"
    )]
    pub token_env: Option<String>,
    /// Clients must send `Authorization: Bearer <token>`, the token being this file's content
    /// (surrounding whitespace ignored).
    #[arg(long, value_name = "FILE", requires = "listen")]
    pub token_file: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub(crate) struct McpArgs {
    #[command(flatten)]
    pub preset: RunnableArgs,
    /// Serve MCP streamable HTTP on this address, IP:PORT, at /mcp, instead of stdio (port 0
    /// picks a free one; the URL is printed on stderr). Anything but loopback needs a token.
    #[arg(long, value_name = "ADDR")]
    pub listen: Option<String>,
    #[command(flatten)]
    pub token: TokenArgs,
    /// The model of in-process children (default: the preset's).
    #[arg(long)]
    pub model: Option<String>,
    /// The loosest permission mode a child may run in (as for run; default: what each
    /// provider's row and agent type say). No argument of an MCP call loosens it.
    #[arg(long, value_parser = parse_mode)]
    pub permission_mode: Option<subagent_core::PermissionMode>,
}

#[derive(Debug, Args)]
pub(crate) struct WorkerArgs {
    #[command(flatten)]
    pub preset: RunnableArgs,
    /// The NATS server's URL (nats://host:4222); JetStream must be enabled (nats-server -js).
    #[arg(long, value_name = "URL")]
    pub nats: String,
    /// The most jobs run at once.
    #[arg(long, default_value_t = 1)]
    pub concurrency: usize,
    /// The server's token is this environment variable's value (never on the command line).
    #[arg(long, value_name = "VAR", conflicts_with_all = ["user_env", "password_env"])]
    pub token_env: Option<String>,
    /// The server's user name is this environment variable's value (with --password-env).
    #[arg(long, value_name = "VAR", requires = "password_env")]
    pub user_env: Option<String>,
    /// The server's password is this environment variable's value (with --user-env).
    #[arg(long, value_name = "VAR", requires = "user_env")]
    pub password_env: Option<String>,
    /// CA certificates (PEM) to trust for the server's TLS certificate, besides the system's.
    #[arg(long, value_name = "FILE")]
    pub tls_ca: Option<std::path::PathBuf>,
    /// A client certificate (PEM) for a server that verifies clients (with --tls-key).
    #[arg(long, value_name = "FILE", requires = "tls_key")]
    pub tls_cert: Option<std::path::PathBuf>,
    /// The client certificate's private key (PEM; with --tls-cert).
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    pub tls_key: Option<std::path::PathBuf>,
    /// The model of in-process children (default: the preset's).
    #[arg(long)]
    pub model: Option<String>,
    /// How long a job whose worker stopped answering waits before another worker runs it,
    /// in milliseconds (the queue's ack wait; progress acks go out every third of it).
    #[arg(long, default_value_t = 30_000, value_name = "MS")]
    pub ack_wait_ms: u64,
    /// How many times a job is tried before its run fails.
    #[arg(long, default_value_t = 3)]
    pub attempts: u32,
    /// On SIGTERM, how long runs may go on before they are handed back to the queue, in
    /// seconds.
    #[arg(long, default_value_t = 30)]
    pub drain_secs: u64,
    /// The worker's name in announcements and logs (default: worker-<pid>@<host>).
    #[arg(long)]
    pub name: Option<String>,
}

#[derive(Debug, Args)]
pub(crate) struct SettingsArgs {
    #[command(flatten)]
    pub project: ProjectArgs,
    #[command(flatten)]
    pub settings: SettingsFlags,
    /// Print one JSON object (every value with its source, the trust, the files read).
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub(crate) struct TrustArgs {
    /// The project directory to trust (default: the current directory).
    #[arg(value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// Take the trust back (only ours: a trust given in Claude Code's ~/.claude.json is
    /// revoked there).
    #[arg(long, conflicts_with = "list")]
    pub revoke: bool,
    /// List the projects trusted here, and where the record is.
    #[arg(long)]
    pub list: bool,
}

#[derive(Debug, Args)]
pub(crate) struct DoctorArgs {
    #[command(flatten)]
    pub preset: ProjectArgs,
    /// Print one JSON object (every check, and whether everything enabled can run).
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub(crate) struct CompletionsArgs {
    /// The shell.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

#[derive(Debug, Args)]
pub(crate) struct ManArgs {
    /// The command whose page to print, as `subagent-COMMAND(1)` (default: `subagent(1)`, which
    /// lists them all).
    #[arg(value_name = "COMMAND")]
    pub command: Option<String>,
}

#[derive(Debug, Subcommand)]
pub(crate) enum PresetCommand {
    /// Load and check a preset; print what it configures, or its errors with file:line:column.
    Validate {
        /// The preset file.
        file: PathBuf,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Print the JSON Schema of the preset format (for editor completion).
    Schema,
}

fn parse_effort(text: &str) -> Result<subagent_core::Effort, String> {
    subagent_core::Effort::parse(text).ok_or_else(|| {
        format!(
            "unknown effort `{text}` (valid: {})",
            subagent_core::Effort::valid()
        )
    })
}

fn parse_usd(text: &str) -> Result<f64, String> {
    match text.trim().trim_start_matches('$').parse::<f64>() {
        Ok(usd) if usd.is_finite() && usd > 0.0 => Ok(usd),
        _ => Err(format!(
            "`{text}` is not an amount of US dollars above 0 (e.g. 0.50)"
        )),
    }
}

fn parse_mode(text: &str) -> Result<subagent_core::PermissionMode, String> {
    subagent_core::PermissionMode::parse(text).ok_or_else(|| {
        format!(
            "unknown permission mode `{text}` (valid: {})",
            subagent_core::PermissionMode::valid_spellings()
        )
    })
}
