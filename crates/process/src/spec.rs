//! What to run and how: [`ProcessSpec`].

use std::ffi::{OsStr, OsString};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::env::{Scrub, Secrets, child_env_withholding};
use crate::kill::Signal;
use crate::{Error, Result};

/// Default bound of one stdout line: 8 MiB.
pub const DEFAULT_MAX_LINE_BYTES: usize = 8 * 1024 * 1024;
/// Default size of the kept stderr tail: 16 KiB.
pub const DEFAULT_STDERR_TAIL_BYTES: usize = 16 * 1024;
/// Default grace period between the polite signal and SIGKILL: 5 s.
pub const DEFAULT_GRACE: Duration = Duration::from_secs(5);

/// Who gets the polite stop signal.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum SignalTarget {
    /// The whole process group (what a terminal's Ctrl-C does).
    #[default]
    Group,
    /// Only the child itself, which then stops its own children (Claude Code on SIGINT).
    Leader,
}

/// How a child is stopped: `signal` to `target`, then after `grace` SIGKILL to the whole tree.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StopPolicy {
    /// The polite signal.
    pub signal: Signal,
    /// Who receives it.
    pub target: SignalTarget,
    /// How long the child may take to exit after it before everything is killed.
    pub grace: Duration,
}

impl StopPolicy {
    /// `signal` to the group with the default grace.
    pub fn new(signal: Signal) -> Self {
        Self {
            signal,
            target: SignalTarget::Group,
            grace: DEFAULT_GRACE,
        }
    }

    /// With another target.
    #[must_use]
    pub fn target(mut self, target: SignalTarget) -> Self {
        self.target = target;
        self
    }

    /// With another grace period.
    #[must_use]
    pub fn grace(mut self, grace: Duration) -> Self {
        self.grace = grace;
        self
    }
}

impl Default for StopPolicy {
    /// SIGTERM to the group, 5 s grace.
    fn default() -> Self {
        Self::new(Signal::Terminate)
    }
}

/// The child's standard input.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum StdinMode {
    /// `/dev/null`: the CLIs wait for stdin's end otherwise.
    #[default]
    Null,
    /// A pipe the caller writes to ([`crate::Process::write_line`], [`crate::Process::take_stdin`]).
    Piped,
}

/// A child process to start: program and argv (never a shell), an explicit working directory,
/// the environment policy, timeouts, the stop policy and the output bounds.
///
/// The environment is ours (`subagent_session::env::vars_os`: the variables [`crate::withdraw`]
/// took out of our environment block included) or [`ProcessSpec::base_env`], minus what [`crate::is_scrubbed`]
/// names and the [`ProcessSpec::withhold`] secrets, except variables passed with
/// [`ProcessSpec::pass_env`], plus those set with [`ProcessSpec::env`].
#[derive(Clone, Debug)]
pub struct ProcessSpec {
    pub(crate) program: PathBuf,
    pub(crate) args: Vec<OsString>,
    pub(crate) cwd: PathBuf,
    pub(crate) base_env: Option<Vec<(OsString, OsString)>>,
    pub(crate) pass_env: Vec<OsString>,
    pub(crate) set_env: Vec<(OsString, OsString)>,
    pub(crate) stdin: StdinMode,
    pub(crate) stop: StopPolicy,
    pub(crate) overall_timeout: Option<Duration>,
    pub(crate) idle_timeout: Option<Duration>,
    pub(crate) max_line_bytes: usize,
    pub(crate) stderr_tail_bytes: usize,
    pub(crate) cancel: CancellationToken,
    pub(crate) parent_death_signal: Option<Signal>,
    pub(crate) scrub: Scrub,
    pub(crate) withheld: Secrets,
    pub(crate) capture_bytes: usize,
    pub(crate) guard: GuardChoice,
}

/// Which guardian a child runs under ([`ProcessSpec::guard`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) enum GuardChoice {
    /// The host's guardian, if the host made itself one ([`crate::guard::init`]).
    #[default]
    Host,
    /// This guardian binary.
    Program(PathBuf),
    /// None.
    Off,
}

impl ProcessSpec {
    /// Runs `program` in `cwd` (which must be an absolute, existing directory). A bare name is
    /// looked up on the child's `PATH`; a relative path with a `/` is taken relative to `cwd`.
    pub fn new(program: impl Into<PathBuf>, cwd: impl Into<PathBuf>) -> Self {
        Self {
            program: program.into(),
            args: Vec::new(),
            cwd: cwd.into(),
            base_env: None,
            pass_env: Vec::new(),
            set_env: Vec::new(),
            stdin: StdinMode::Null,
            stop: StopPolicy::default(),
            overall_timeout: None,
            idle_timeout: None,
            max_line_bytes: DEFAULT_MAX_LINE_BYTES,
            stderr_tail_bytes: DEFAULT_STDERR_TAIL_BYTES,
            cancel: CancellationToken::new(),
            parent_death_signal: Some(Signal::Kill),
            scrub: Scrub::Credentials,
            withheld: Secrets::new(),
            capture_bytes: 0,
            guard: GuardChoice::Host,
        }
    }

    /// Adds one argument.
    #[must_use]
    pub fn arg(mut self, arg: impl Into<OsString>) -> Self {
        self.args.push(arg.into());
        self
    }

    /// Adds arguments.
    #[must_use]
    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// Sets a variable in the child (wins over everything, scrubbed names included).
    #[must_use]
    pub fn env(mut self, name: impl Into<OsString>, value: impl Into<OsString>) -> Self {
        let name = name.into();
        self.set_env.retain(|(n, _)| *n != name);
        self.set_env.push((name, value.into()));
        self
    }

    /// Sets variables in the child.
    #[must_use]
    pub fn envs<I, K, V>(mut self, vars: I) -> Self
    where
        I: IntoIterator<Item = (K, V)>,
        K: Into<OsString>,
        V: Into<OsString>,
    {
        for (name, value) in vars {
            self = self.env(name, value);
        }
        self
    }

    /// Lets a variable that would be scrubbed through from the base environment.
    #[must_use]
    pub fn pass_env(mut self, name: impl Into<OsString>) -> Self {
        self.pass_env.push(name.into());
        self
    }

    /// Replaces the base environment (default: this process's, withdrawn variables included)
    /// before scrubbing. Tests use it
    /// instead of changing their own environment.
    #[must_use]
    pub fn base_env<I, K, V>(mut self, vars: I) -> Self
    where
        I: IntoIterator<Item = (K, V)>,
        K: Into<OsString>,
        V: Into<OsString>,
    {
        self.base_env = Some(
            vars.into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect(),
        );
        self
    }

    /// The child's stdin (default `/dev/null`).
    #[must_use]
    pub fn stdin(mut self, stdin: StdinMode) -> Self {
        self.stdin = stdin;
        self
    }

    /// How the child is stopped (default SIGTERM to the group, 5 s grace).
    #[must_use]
    pub fn stop_policy(mut self, stop: StopPolicy) -> Self {
        self.stop = stop;
        self
    }

    /// Stops the child this long after the start (default: never).
    #[must_use]
    pub fn overall_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.overall_timeout = timeout;
        self
    }

    /// Stops the child when stdout stays silent this long (default: never). Only complete
    /// stdout lines count as output.
    #[must_use]
    pub fn idle_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.idle_timeout = timeout;
        self
    }

    /// The bound of one stdout line (default [`DEFAULT_MAX_LINE_BYTES`]).
    #[must_use]
    pub fn max_line_bytes(mut self, bytes: usize) -> Self {
        self.max_line_bytes = bytes;
        self
    }

    /// How much of stderr's end is kept (default [`DEFAULT_STDERR_TAIL_BYTES`]).
    #[must_use]
    pub fn stderr_tail_bytes(mut self, bytes: usize) -> Self {
        self.stderr_tail_bytes = bytes;
        self
    }

    /// Stops the child (politely, then by force) when `cancel` fires.
    #[must_use]
    pub fn cancel(mut self, cancel: CancellationToken) -> Self {
        self.cancel = cancel;
        self
    }

    /// The signal the kernel sends the child when the thread that spawned it dies (Linux
    /// `PR_SET_PDEATHSIG`; default SIGKILL, `None` for none). Spawn from a long-lived thread
    /// (an async runtime's worker), not from a short-lived blocking-pool thread.
    #[must_use]
    pub fn parent_death_signal(mut self, signal: Option<Signal>) -> Self {
        self.parent_death_signal = signal;
        self
    }

    /// Runs the child under this guardian binary (one whose `main` starts with
    /// [`crate::guard::serve_if_requested`], like this crate's `subagent-guard` or the `subagent`
    /// CLI), or under none with `None`. By default a child runs under the host's own binary when
    /// the host called [`crate::guard::init`], and under none otherwise. See [`crate::guard`]
    /// for what the guardian does: with it, nothing the child starts outlives the host, even a
    /// host killed with SIGKILL.
    #[must_use]
    pub fn guard(mut self, guardian: Option<PathBuf>) -> Self {
        self.guard = guardian.map_or(GuardChoice::Off, GuardChoice::Program);
        self
    }

    /// Which of the base environment's variables the child does not inherit (default
    /// [`Scrub::Credentials`]; variables passed with [`ProcessSpec::pass_env`] or set with
    /// [`ProcessSpec::env`] always reach it).
    #[must_use]
    pub fn scrub(mut self, scrub: Scrub) -> Self {
        self.scrub = scrub;
        self
    }

    /// Also withholds the configured `secrets`: their variables and any variable holding one of
    /// their values (variables passed with [`ProcessSpec::pass_env`] or set with
    /// [`ProcessSpec::env`] still reach the child).
    #[must_use]
    pub fn withhold(mut self, secrets: Secrets) -> Self {
        self.withheld = secrets;
        self
    }

    /// Keeps the first `bytes` of stdout and of stderr (each) for
    /// [`crate::Process::wait_with_output`] (default 0: nothing is kept). For children whose output
    /// is a blob rather than lines, like a shell command's.
    #[must_use]
    pub fn capture_output(mut self, bytes: usize) -> Self {
        self.capture_bytes = bytes;
        self
    }

    /// The program as configured.
    pub fn program(&self) -> &Path {
        &self.program
    }

    /// The arguments.
    pub fn get_args(&self) -> &[OsString] {
        &self.args
    }

    /// The working directory.
    pub fn cwd(&self) -> &Path {
        &self.cwd
    }

    /// The stop policy.
    pub fn get_stop_policy(&self) -> StopPolicy {
        self.stop
    }

    /// The environment the child gets, sorted by name.
    pub fn child_env(&self) -> Vec<(OsString, OsString)> {
        match &self.base_env {
            Some(base) => child_env_withholding(
                self.scrub,
                &self.withheld,
                base.iter().cloned(),
                &self.pass_env,
                &self.set_env,
            ),
            None => child_env_withholding(
                self.scrub,
                &self.withheld,
                subagent_session::env::vars_os(),
                &self.pass_env,
                &self.set_env,
            ),
        }
    }

    /// The program's path as it will be executed: a bare name found on the child's `PATH`.
    pub fn resolve_program(&self) -> Result<PathBuf> {
        self.resolve_in(&self.child_env())
    }

    /// [`ProcessSpec::resolve_program`] with the child's environment already built.
    pub(crate) fn resolve_in(&self, env: &[(OsString, OsString)]) -> Result<PathBuf> {
        let path = env
            .iter()
            .find(|(name, _)| name == "PATH")
            .map(|(_, value)| value.as_os_str());
        resolve(&self.program, &self.cwd, path)
    }
}

pub(crate) fn is_executable(path: &Path) -> bool {
    path.metadata()
        .is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
}

fn resolve(program: &Path, cwd: &Path, path_var: Option<&OsStr>) -> Result<PathBuf> {
    if program.as_os_str().is_empty() {
        return Err(Error::NotFound {
            program: program.to_path_buf(),
            searched: Vec::new(),
        });
    }
    if program.components().count() > 1 || program.is_absolute() {
        let full = if program.is_absolute() {
            program.to_path_buf()
        } else {
            cwd.join(program)
        };
        if !full.exists() {
            return Err(Error::NotFound {
                program: full,
                searched: Vec::new(),
            });
        }
        if !is_executable(&full) {
            return Err(Error::NotExecutable { program: full });
        }
        return Ok(full);
    }
    let searched: Vec<PathBuf> = path_var
        .map(|value| std::env::split_paths(value).collect())
        .unwrap_or_default();
    for dir in &searched {
        let candidate = dir.join(program);
        if is_executable(&candidate) {
            return Ok(candidate);
        }
    }
    Err(Error::NotFound {
        program: program.to_path_buf(),
        searched,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolution() {
        let cwd = Path::new("/");
        assert_eq!(
            resolve(Path::new("sh"), cwd, Some(OsStr::new("/nonexistent:/bin"))).ok(),
            Some(PathBuf::from("/bin/sh"))
        );
        let missing = resolve(Path::new("no-such-tool-x"), cwd, Some(OsStr::new("/a:/b")));
        assert_eq!(
            missing.map_err(|e| e.to_string()),
            Err("no-such-tool-x was not found on PATH (searched /a:/b)".to_owned())
        );
        assert!(matches!(
            resolve(Path::new("/etc/passwd"), cwd, None),
            Err(Error::NotExecutable { .. })
        ));
        assert!(matches!(
            resolve(Path::new("/no/such/file"), cwd, None),
            Err(Error::NotFound { .. })
        ));
    }

    #[test]
    fn a_spec_withholds_its_secrets() {
        let secrets = || {
            let values = [
                ("ADV_MODEL_KEY", "adv-secret-value-0123456789"),
                ("LONGER_KEY", "adv-secret-value-0123456789-and-more"),
            ];
            Secrets::from_names(["ADV_MODEL_KEY", "LONGER_KEY"], |name| {
                values
                    .iter()
                    .find(|(n, _)| *n == name)
                    .map(|(_, v)| (*v).to_owned())
            })
        };
        let os = |pairs: &[(&str, &str)]| -> Vec<(OsString, OsString)> {
            pairs
                .iter()
                .map(|(k, v)| ((*k).into(), (*v).into()))
                .collect()
        };
        let spec = ProcessSpec::new("env", "/")
            .base_env([
                ("PATH", "/bin"),
                ("ADV_MODEL_KEY", "adv-secret-value-0123456789"),
                ("SAME_VALUE_COPY", "adv-secret-value-0123456789"),
                ("PASSED_COPY", "adv-secret-value-0123456789"),
            ])
            .scrub(Scrub::ModelKeys)
            .withhold(secrets())
            .pass_env("PASSED_COPY");
        assert_eq!(
            spec.child_env(),
            os(&[
                ("PASSED_COPY", "adv-secret-value-0123456789"),
                ("PATH", "/bin")
            ])
        );
        let debug = format!("{:?}", ProcessSpec::new("env", "/").withhold(secrets()));
        assert!(
            debug.contains(r#"withheld: Secrets(["LONGER_KEY", "ADV_MODEL_KEY"])"#),
            "{debug}"
        );
        assert!(!debug.contains("adv-secret"), "{debug}");
    }
}
