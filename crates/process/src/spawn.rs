//! Starting a child: [`ProcessSpec::spawn`] turns the spec (data, in `spec`) into a running
//! [`Process`] (owned in `child`), under the guardian the spec chooses ([`crate::guard`]).
//!
//! Deliberately not here: what to run (`spec`: program, argv, environment, policies, the
//! program's resolution on `PATH`), the clone and exec themselves (`vfork`), and what happens to
//! the child once it runs (`child`).

use std::ffi::OsString;
use std::path::PathBuf;

use crate::child::{Process, Started};
use crate::guard::{self, Forward, GUARD_ARG};
use crate::kill::Signal;
use crate::spec::{GuardChoice, ProcessSpec, SignalTarget, StdinMode};
use crate::vfork;
use crate::{Error, Result};

impl ProcessSpec {
    /// The guardian binary the child will run under, if any.
    pub fn guardian(&self) -> Option<PathBuf> {
        match &self.guard {
            GuardChoice::Host => guard::host_guardian(),
            GuardChoice::Program(program) => Some(program.clone()),
            GuardChoice::Off => None,
        }
    }

    /// Refuses a working directory that is empty, relative or not an existing directory.
    fn check_cwd(&self) -> Result<()> {
        let invalid = |reason| Error::InvalidCwd {
            cwd: self.cwd.clone(),
            reason,
        };
        if self.cwd.as_os_str().is_empty() {
            return Err(invalid("no working directory was given"));
        }
        if !self.cwd.is_absolute() {
            return Err(invalid("must be absolute"));
        }
        if !self.cwd.is_dir() {
            return Err(invalid("is not an existing directory"));
        }
        Ok(())
    }

    /// Starts the child: own process group, the parent-death signal, stdout and stderr piped.
    pub fn spawn(self) -> Result<Process> {
        self.check_cwd()?;
        let env = self.child_env();
        let program = self.resolve_in(&env)?;
        let guardian = self.guardian();
        let spawn_error = |source: std::io::Error| match source.kind() {
            std::io::ErrorKind::NotFound => Error::NotFound {
                program: program.clone(),
                searched: Vec::new(),
            },
            std::io::ErrorKind::PermissionDenied => Error::NotExecutable {
                program: program.clone(),
            },
            _ => Error::Spawn {
                program: program.clone(),
                source,
            },
        };
        // Started the way `posix_spawn` starts a child, plus the parent-death signal the child
        // must ask for itself between the clone and the exec (`std` would fork the whole host
        // for that hook: ≈ 1.7 ms against 0.3 ms), see `crate::vfork`. A guardian asks for its
        // own signal first thing and checks that the host still lives, so it gets none.
        let (command_program, args, death_signal) = match &guardian {
            Some(guardian) => {
                let forward = match self.stop.target {
                    SignalTarget::Leader => Forward::Leader,
                    SignalTarget::Group => Forward::Group,
                };
                let mut args: Vec<OsString> = vec![
                    GUARD_ARG.into(),
                    rustix::process::getpid().as_raw_pid().to_string().into(),
                    forward.as_arg().into(),
                    program.clone().into_os_string(),
                ];
                args.extend(self.args.iter().cloned());
                (guardian.clone(), args, None)
            }
            None => (
                program.clone(),
                self.args.clone(),
                self.parent_death_signal.map(Signal::raw),
            ),
        };
        let command = vfork::Command {
            program: &command_program,
            args: &args,
            env: &env,
            cwd: &self.cwd,
            stdin_piped: matches!(self.stdin, StdinMode::Piped),
            death_signal,
        };
        let started = vfork::spawn(&command)
            .and_then(Started::cloned)
            .map_err(spawn_error)?;
        tracing::debug!(
            program = %program.display(),
            pid = started.pid.as_raw_pid(),
            guarded = guardian.is_some(),
            "spawned"
        );
        Process::start(started, program, guardian.is_some(), &self)
    }
}
