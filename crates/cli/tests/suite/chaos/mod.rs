//! The chaos harness (issue 17, part 2): the real `subagent` binary killed and cancelled at
//! random points, counting what is left or lost.
//!
//! - `signals`: SIGINT, SIGTERM, SIGHUP and SIGKILL of `subagent delegate` mid-run for each
//!   provider kind; processes left (everything the killed tree leaves, counted by making this
//!   test process a child subreaper, see `reaper.rs`; for a2a and nats also what still runs on
//!   the server or worker after a polite signal), and runs that ended the wrong way (exit code,
//!   outcome); and a hostile ACP agent (`hostile_acp.rs`: floods, asks permission in a loop,
//!   never closes its session) signalled or left to end by itself.
//! - `cancels`: SIGINT (a user's cancel) at a random point of a run that finishes by itself,
//!   from before its first model request to after its end: outcomes missing or wrong.
//! - `server`: `subagent serve` streaming a run to a client that drops the connection at a
//!   random event and re-subscribes with `from` (events lost or doubled), and a server
//!   SIGKILLed mid-stream and restarted (what a restarted server can know).
//! - `nats`: a `subagent worker` SIGKILLed mid-run, another worker taking over: jobs lost or
//!   doubled.
//!
//! The same tests are the short version in `cargo xtask test` (a few rounds, asserting 0 left,
//! 0 lost, 0 doubled, 0 wrong) and the long runs of `cargo xtask chaos`, which sets
//! `SUBAGENT_CHAOS_ROUNDS`, `SUBAGENT_CHAOS_SEED`, `SUBAGENT_CHAOS_PROVIDERS` and
//! `SUBAGENT_CHAOS_REPORT` (a directory each test writes its table rows to). Every random
//! choice comes from one seeded generator per test, printed, so a run is repeatable up to the
//! machine's timing.

use std::path::PathBuf;
use std::time::Duration;

mod hostile_acp;
mod nats;
mod process;
mod reaper;
mod rows;
mod server;
mod signals;

use rows::Provider;

/// What one test runs: from the environment `cargo xtask chaos` sets, else the short version.
#[derive(Clone, Debug)]
pub(super) struct Plan {
    /// Rounds per (provider, scenario); `None` for the short version's own small counts.
    pub rounds: Option<u32>,
    pub seed: u64,
    pub providers: Vec<Provider>,
    pub report: Option<PathBuf>,
}

impl Plan {
    fn from_env(test: &str) -> Self {
        let rounds = std::env::var("SUBAGENT_CHAOS_ROUNDS")
            .ok()
            .map(|r| r.parse().unwrap());
        let seed = std::env::var("SUBAGENT_CHAOS_SEED")
            .ok()
            .map(|s| s.parse().unwrap())
            .unwrap_or_else(|| {
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map(|d| d.as_nanos() as u64)
                    .unwrap_or_default()
            });
        let providers = match std::env::var("SUBAGENT_CHAOS_PROVIDERS") {
            Ok(list) => list
                .split(',')
                .filter(|s| !s.is_empty())
                .map(|name| {
                    Provider::parse(name).unwrap_or_else(|| panic!("unknown provider {name}"))
                })
                .collect(),
            Err(_) if rounds.is_some() => Provider::ALL.to_vec(),
            // The short version: the in-process bash tool, and one product CLI.
            Err(_) => {
                let mut short = vec![Provider::Spawn];
                if cfg!(feature = "e2e") {
                    short.push(Provider::Codex);
                }
                short
            }
        };
        let report = std::env::var_os("SUBAGENT_CHAOS_REPORT").map(PathBuf::from);
        eprintln!("chaos {test}: seed {seed} (SUBAGENT_CHAOS_SEED={seed} repeats the choices)");
        Self {
            rounds,
            seed,
            providers,
            report,
        }
    }

    /// Rounds per scenario: the plan's, else `short`.
    pub(super) fn rounds_or(&self, short: u32) -> u32 {
        self.rounds.unwrap_or(short)
    }

    pub(super) fn has(&self, provider: Provider) -> bool {
        self.providers.contains(&provider)
    }
}

/// SplitMix64: small, seeded, good enough to pick kill points.
#[derive(Clone, Debug)]
pub(super) struct Rng(u64);

impl Rng {
    pub(super) fn new(seed: u64) -> Self {
        Self(seed)
    }

    pub(super) fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..=max`.
    pub(super) fn below(&mut self, max: u64) -> u64 {
        self.next_u64() % (max + 1)
    }

    pub(super) fn millis(&mut self, max: u64) -> Duration {
        Duration::from_millis(self.below(max))
    }
}

/// One line of the table.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct Line {
    pub provider: String,
    pub scenario: String,
    pub runs: u32,
    pub left: u32,
    pub lost: u32,
    pub doubled: u32,
    pub wrong: u32,
    pub note: String,
}

impl Line {
    pub(super) fn new(provider: &str, scenario: &str) -> Self {
        Self {
            provider: provider.to_owned(),
            scenario: scenario.to_owned(),
            ..Self::default()
        }
    }

    pub(super) fn markdown(&self) -> String {
        format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} |",
            self.provider,
            self.scenario,
            self.runs,
            self.left,
            self.lost,
            self.doubled,
            self.wrong,
            self.note
        )
    }
}

/// Prints the lines (and writes them to the report directory as `<test>.md`).
/// The start of a chaos part: this process becomes the subreaper of what it starts, then a
/// two-thread runtime and, on it, the fake model server on `scenarios`, keeping no requests
/// (a long run would hold them all).
pub(super) fn start_model(
    scenarios: &str,
) -> (tokio::runtime::Runtime, subagent_test_support::FakeServer) {
    reaper::become_subreaper();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let model = rt
        .block_on(subagent_test_support::FakeServer::from_yaml(scenarios))
        .unwrap();
    model.keep_requests(0);
    (rt, model)
}

pub(super) fn report(plan: &Plan, test: &str, lines: &[Line]) {
    let text: String = lines
        .iter()
        .map(|l| format!("{}\n", l.markdown()))
        .collect();
    eprintln!("chaos {test} (seed {}):\n{text}", plan.seed);
    if let Some(dir) = &plan.report {
        std::fs::create_dir_all(dir).unwrap();
        std::fs::write(dir.join(format!("{test}.md")), text).unwrap();
    }
}

/// The harness's one rule for its own findings: after the report is written, every count the
/// project promises to keep at zero is zero.
pub(super) fn assert_clean(lines: &[Line], details: &[String]) {
    let bad: Vec<&Line> = lines
        .iter()
        .filter(|l| l.left + l.lost + l.doubled + l.wrong > 0)
        .collect();
    assert!(
        bad.is_empty(),
        "chaos found defects: {bad:#?}\ndetails:\n{}",
        details.join("\n")
    );
}

/// Whether to run the test's body here: only in a process of its own. The harness makes its
/// process a subreaper and counts (and kills) every stray child of it, which must never be
/// another test's process (`cargo test` runs a binary's tests as threads of one).
fn in_own_process(test: &str) -> bool {
    subagent_test_support::alone::in_own_process(&format!("suite::chaos::{test}"))
}

/// One test per part of the harness (`part: its run`), each in a process of its own, under the
/// plan its name gives.
macro_rules! parts {
    ($($part:ident: $run:path),* $(,)?) => {
        $(
            #[test]
            fn $part() {
                if in_own_process(stringify!($part)) {
                    $run(&Plan::from_env(stringify!($part)));
                }
            }
        )*
    };
}

parts! {
    signals: signals::run,
    cancels: signals::cancels,
    server: server::run,
    nats: nats::run,
}

/// The harness's count is not blind: an orphan nobody guards (a shell's `setsid` background
/// job, the shell gone) is re-parented to this test process and counted as left, then killed.
#[test]
fn an_unguarded_orphan_is_counted_as_left() {
    if !in_own_process("an_unguarded_orphan_is_counted_as_left") {
        return;
    }
    reaper::become_subreaper();
    let keep = std::collections::BTreeSet::new();
    assert_eq!(reaper::strays(&keep), Vec::new());
    let marker = format!("sleep 60.{}", std::process::id());
    let status = std::process::Command::new("sh")
        .args(["-c", &format!("setsid {marker} >/dev/null 2>&1 & exit 0")])
        .status()
        .unwrap();
    assert!(status.success());
    let left = reaper::settle(&keep, Duration::from_millis(200));
    // (Its command line may still be setsid's if the exec has not happened yet.)
    assert!(
        left.len() == 1 && left[0].cmdline.contains(&marker),
        "{left:?}"
    );
    // settle killed and reaped it: the next round starts clean.
    assert_eq!(reaper::strays(&keep), Vec::new());
}
