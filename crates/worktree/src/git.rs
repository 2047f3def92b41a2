//! Running `git` through the process owner: argv only, an explicit cwd, the user's environment
//! without the model products' keys and without the variables that would point git at another
//! repository (`git rev-parse --local-env-vars`), output captured and bounded.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::time::Duration;

use subagent_process::{ProcessSpec, Scrub};

use crate::{Error, Result};

/// The most of git's stdout or stderr kept, per command.
const CAPTURE_BYTES: usize = 256 * 1024;

/// No git command of ours takes this long on a working machine; a hung one (a lock held by a
/// crashed process, a credential prompt) is stopped rather than holding a child's start.
const GIT_TIMEOUT: Duration = Duration::from_secs(300);

/// Variables that make git look at another repository, index or object store than the one
/// its cwd is in (`git rev-parse --local-env-vars`): a host run from a git hook has them set.
const LOCAL_ENV_VARS: [&str; 15] = [
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_CONFIG",
    "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_COUNT",
    "GIT_OBJECT_DIRECTORY",
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_IMPLICIT_WORK_TREE",
    "GIT_GRAFT_FILE",
    "GIT_INDEX_FILE",
    "GIT_NO_REPLACE_OBJECTS",
    "GIT_REPLACE_REF_BASE",
    "GIT_PREFIX",
    "GIT_SHALLOW_FILE",
    "GIT_COMMON_DIR",
];

/// The `git` program and the environment it runs with.
#[derive(Clone, Debug)]
pub(crate) struct Git {
    program: PathBuf,
    env: Vec<(OsString, OsString)>,
}

/// What a git command printed.
#[derive(Debug)]
pub(crate) struct Output {
    pub status_ok: bool,
    pub stdout: String,
    pub stderr: String,
}

impl Git {
    /// `program` (a bare name is looked up on `PATH`) with `base` as the environment before the
    /// git-location variables and the model keys are taken out.
    pub(crate) fn new(
        program: PathBuf,
        base: impl IntoIterator<Item = (OsString, OsString)>,
    ) -> Self {
        let env = base
            .into_iter()
            .filter(|(name, _)| !LOCAL_ENV_VARS.iter().any(|var| OsStr::new(var) == name))
            .collect();
        Self { program, env }
    }

    /// Runs `git ARGS` in `cwd` (with `index` as `GIT_INDEX_FILE` when given); the output
    /// whatever the exit status. `Err` only when git could not be run at all.
    pub(crate) async fn output<I, S>(
        &self,
        cwd: &Path,
        args: I,
        index: Option<&Path>,
    ) -> Result<Output>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let args: Vec<OsString> = args.into_iter().map(|a| a.as_ref().to_owned()).collect();
        let mut spec = ProcessSpec::new(&self.program, cwd)
            .args(&args)
            .base_env(self.env.iter().cloned())
            .scrub(Scrub::ModelKeys)
            .capture_output(CAPTURE_BYTES)
            .overall_timeout(Some(GIT_TIMEOUT));
        if let Some(index) = index {
            spec = spec.env("GIT_INDEX_FILE", index);
        }
        let described = || describe(&args);
        let captured = spec
            .spawn()
            .map_err(|source| Error::Run {
                command: described(),
                source,
            })?
            .wait_with_output()
            .await
            .map_err(|source| Error::Run {
                command: described(),
                source,
            })?;
        Ok(Output {
            status_ok: captured.exit.success(),
            stdout: String::from_utf8_lossy(&captured.stdout).into_owned(),
            stderr: brief(&String::from_utf8_lossy(&captured.stderr)),
        })
    }

    /// Runs `git ARGS` in `cwd`; its stdout, or [`Error::Git`] with its stderr when it fails.
    pub(crate) async fn run<I, S>(&self, cwd: &Path, args: I) -> Result<String>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let args: Vec<OsString> = args.into_iter().map(|a| a.as_ref().to_owned()).collect();
        let output = self.output(cwd, &args, None).await?;
        if output.status_ok {
            Ok(output.stdout)
        } else {
            Err(Error::Git {
                command: describe(&args),
                cwd: cwd.to_path_buf(),
                stderr: output.stderr,
            })
        }
    }
}

/// The first lines of git's stderr (a usage text runs to dozens), for messages.
fn brief(stderr: &str) -> String {
    const LINES: usize = 4;
    let lines: Vec<&str> = stderr.trim().lines().collect();
    let mut text = lines[..lines.len().min(LINES)].join("\n");
    if lines.len() > LINES {
        text.push_str("\n…");
    }
    text
}

/// `git a b c`, for messages.
fn describe(args: &[OsString]) -> String {
    let mut text = String::from("git");
    for arg in args {
        text.push(' ');
        text.push_str(&arg.to_string_lossy());
    }
    text
}
