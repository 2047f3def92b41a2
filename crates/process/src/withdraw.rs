//! Secrets out of the host's environment block: what a descendant can read of the host's
//! environment (`/proc/<pid>/environ`) holds no key.
//!
//! A command a model runs is a descendant of the host, as the host's user: it can read
//! `/proc/<host pid>/environ`, the block the host was started with, whatever the host removed
//! since (`unsetenv` leaves those bytes in place) and whatever the child's own environment says.
//! Root reads it whatever the process's dumpable state. So [`withdraw`], first in the host's
//! `main`, before any thread, starts the host again (`execve` of `/proc/self/exe`, same pid,
//! same argv and `argv[0]`) with an environment block that lacks the secrets, and hands their
//! values to the new image through a pipe it inherits, named by the private
//! [`HANDOFF_VAR`] (`<fd>:<inode>:<generation>:<name>`, the name the kernel gave the first image,
//! which the new one takes back for `ps` and `pkill`). The new image reads the pipe, keeps the values
//! in [`subagent_session::env`] (where every crate reads the environment, and whence every
//! child's environment is built, so children get what they got before) and makes itself
//! non-dumpable ([`not_dumpable`]): processes of the same user can no longer read its memory or
//! its `/proc` files.
//!
//! Which variables: those whose name says secret ([`is_secret_name`]: [`SECRET_NAME_SUFFIXES`],
//! [`SECRET_NAMES`]), those a flag of the command line names (`--<word>-env VAR`, e.g.
//! `--token-env`: [`flagged_names`]), and any other variable holding one of their values (at
//! least [`crate::MIN_SECRET_VALUE_LEN`] bytes). A configuration may name a variable no rule
//! knows (a preset's `api_key_env: LLM_ACCESS`); once it is read, but before any thread starts,
//! [`withdraw_also`] withdraws those the same way (a second re-execution, only when such a
//! variable is set). A host re-executes at most [`MAX_GENERATIONS`] times.
//!
//! Limits: the pipe's read end stays open in the new image, empty and without a writer (closing
//! an inherited descriptor by number needs `unsafe`): a child that inherits it reads nothing
//! from it. The values live on in the host's memory, readable by root (and by nothing else once
//! the process is non-dumpable). Everything the handover needs is bounded by a pipe's buffer
//! (64 KiB, at least 4 KiB when the user's pipe quota is spent); more does not fit, and the
//! secrets then stay where they were, with an error to say so.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::os::unix::process::CommandExt;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

pub use subagent_session::env::HANDOFF_VAR;

use crate::env::MIN_SECRET_VALUE_LEN;

/// Name suffixes of variables withdrawn from the environment block (compared
/// case-insensitively): anything that names a key, a token, a secret or a password.
pub const SECRET_NAME_SUFFIXES: &[&str] = &[
    "_KEY",
    "_APIKEY",
    "_TOKEN",
    "_SECRET",
    "_PASSWORD",
    "_PASSPHRASE",
    "_CREDENTIALS",
    "_AUTH",
];

/// Names withdrawn exactly, besides the suffixes (compared case-insensitively).
pub const SECRET_NAMES: &[&str] = &["PGPASSWORD", "DOCKER_AUTH_CONFIG"];

/// The most times a host starts itself again (the rule and the command line's flags, then the
/// configuration's names).
pub const MAX_GENERATIONS: u32 = 2;

/// The most bytes read from the handover pipe (a pipe holds less).
const MAX_HANDOFF_BYTES: u64 = 1 << 20;

/// Whether [`withdraw`] ran in this process (else [`withdraw_also`] does nothing).
static ENABLED: AtomicBool = AtomicBool::new(false);
/// How many times this process was started again.
static GENERATION: AtomicU32 = AtomicU32::new(0);

/// Whether `name` is withdrawn by its name alone: it ends with one of
/// [`SECRET_NAME_SUFFIXES`] or is one of [`SECRET_NAMES`]. Names that are not UTF-8 are not.
pub fn is_secret_name(name: &OsStr) -> bool {
    let Some(name) = name.to_str() else {
        return false;
    };
    let upper = name.to_ascii_uppercase();
    SECRET_NAMES.contains(&upper.as_str())
        || SECRET_NAME_SUFFIXES
            .iter()
            .any(|suffix| upper.len() > suffix.len() && upper.ends_with(suffix))
}

/// The variables the flags of a command line name: the argument after `--<word>-env`, or the
/// value of `--<word>-env=VAR` (`--token-env`, `--password-env`, …), up to a `--`.
pub fn flagged_names<I>(args: I) -> Vec<OsString>
where
    I: IntoIterator<Item = OsString>,
{
    fn env_flag(flag: &str) -> bool {
        flag.len() > "-env".len() && flag.ends_with("-env")
    }
    let mut names = Vec::new();
    let mut value_next = false;
    for arg in args {
        if std::mem::take(&mut value_next) {
            names.push(arg);
            continue;
        }
        let Some(flag) = arg.to_str().and_then(|arg| arg.strip_prefix("--")) else {
            continue;
        };
        if flag.is_empty() {
            break;
        }
        match flag.split_once('=') {
            Some((flag, name)) if env_flag(flag) => names.push(OsString::from(name)),
            None if env_flag(flag) => value_next = true,
            _ => {}
        }
    }
    names
}

/// Run first in a host's `main`, before any thread starts (after `guard::init`, whose guardian
/// runs with its program's environment): withdraws the secrets of the environment block
/// ([`is_secret_name`], [`flagged_names`] of the command line, and copies of their values),
/// starting the process again when there are any — this call then does not return — and makes
/// the process non-dumpable. In the image started again, it takes the values handed over into
/// [`subagent_session::env`].
///
/// An error says what did not happen: the values handed over were lost (the handover was
/// tampered with), or the secrets stay in the block (the re-execution failed); the process can
/// go on either way, and every secret still in the block is still read.
pub fn withdraw() -> io::Result<()> {
    ENABLED.store(true, Ordering::Relaxed);
    // Values that did not arrive are lost either way; the block is still cleaned.
    let received = receive();
    GENERATION.store(
        received.as_ref().map_or(0, |generation| *generation),
        Ordering::Relaxed,
    );
    let flagged = flagged_names(std::env::args_os().skip(1));
    let withdrawn =
        withdraw_where(|name| is_secret_name(name) || flagged.iter().any(|f| f == name));
    not_dumpable()?;
    received.and(withdrawn)
}

/// After [`withdraw`], once the configuration says which variables hold secrets, and still
/// before any thread starts: withdraws `names` (and copies of their values) that are still in
/// the environment block, starting the process again when there are any (this call then does
/// not return). Without [`withdraw`] first (a host that did not ask for it), it does nothing.
pub fn withdraw_also<I, S>(names: I) -> io::Result<()>
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    if !ENABLED.load(Ordering::Relaxed) {
        return Ok(());
    }
    let names: Vec<OsString> = names
        .into_iter()
        .map(|name| name.as_ref().to_owned())
        .collect();
    withdraw_where(|name| names.iter().any(|n| n == name))
}

/// Makes this process non-dumpable: no core dump, and its memory and `/proc/<pid>` files
/// (`environ`, `mem`, `fd`) belong to root, out of reach of the user's other processes. A
/// program it executes is dumpable again.
pub fn not_dumpable() -> io::Result<()> {
    rustix::process::set_dumpable_behavior(rustix::process::DumpableBehavior::NotDumpable)?;
    Ok(())
}

/// Withdraws the variables of the environment block that `wanted` names, and copies of their
/// values: starts the process again, or says why not.
fn withdraw_where(wanted: impl Fn(&OsStr) -> bool) -> io::Result<()> {
    let kept = subagent_session::env::kept();
    let taken = select(std::env::vars_os(), wanted, &kept);
    if taken.is_empty() {
        return Ok(());
    }
    let generation = GENERATION.load(Ordering::Relaxed) + 1;
    let error = if generation > MAX_GENERATIONS {
        io::Error::other(format!(
            "started {MAX_GENERATIONS} times already: the secrets stay in the environment block"
        ))
    } else {
        let mut handed = kept;
        handed.extend(taken.iter().cloned());
        reexec(&handed, generation)
    };
    // Still here: the values stay in the block, and in the store for whoever reads it first.
    subagent_session::env::keep(taken);
    Err(error)
}

/// The variables of `vars` to withdraw: those `wanted` names (empty ones hold no secret), and
/// any other whose value is one of theirs or one of `kept`'s (when at least
/// [`MIN_SECRET_VALUE_LEN`] bytes long). Never [`HANDOFF_VAR`], nor a variable kept already
/// (still in the block only when starting again failed: there is no trying twice).
fn select(
    vars: impl IntoIterator<Item = (OsString, OsString)>,
    wanted: impl Fn(&OsStr) -> bool,
    kept: &[(OsString, OsString)],
) -> Vec<(OsString, OsString)> {
    let (mut taken, rest): (Vec<_>, Vec<_>) = vars
        .into_iter()
        .filter(|(name, _)| name != HANDOFF_VAR && !kept.iter().any(|(kept, _)| kept == name))
        .partition(|(name, value)| !value.is_empty() && wanted(name));
    let values: Vec<OsString> = taken
        .iter()
        .chain(kept)
        .map(|(_, value)| value.clone())
        .filter(|value| value.len() >= MIN_SECRET_VALUE_LEN)
        .collect();
    taken.extend(rest.into_iter().filter(|(_, value)| values.contains(value)));
    taken
}

/// Executes `/proc/self/exe` again, same argv, without `handed` in its environment block and
/// with their values in a pipe it inherits. Returns only on failure.
fn reexec(handed: &[(OsString, OsString)], generation: u32) -> io::Error {
    let stay = |error: io::Error, what: &str| {
        io::Error::new(
            error.kind(),
            format!("{what} ({error}): the secrets stay in the environment block"),
        )
    };
    let pipe = match handover(handed) {
        Ok(pipe) => pipe,
        Err(error) => return stay(error, "cannot hand the secrets over"),
    };
    let inode = match pipe.metadata() {
        Ok(metadata) => metadata.ino(),
        Err(error) => return stay(error, "cannot hand the secrets over"),
    };
    // The kernel names the new image after the file executed (`exe`): the name it had comes
    // along, for `ps` and `pkill` to keep seeing it.
    let name = std::fs::read_to_string("/proc/self/comm").unwrap_or_default();
    let mut args = std::env::args_os();
    let mut command = std::process::Command::new("/proc/self/exe");
    if let Some(arg0) = args.next() {
        command.arg0(arg0);
    }
    command
        .args(args)
        .env_clear()
        .envs(std::env::vars_os().filter(|(name, _)| {
            name != HANDOFF_VAR && !handed.iter().any(|(handed, _)| handed == name)
        }))
        .env(
            HANDOFF_VAR,
            format!(
                "{}:{inode}:{generation}:{}",
                pipe.as_raw_fd(),
                name.trim_end_matches('\n')
            ),
        );
    stay(command.exec(), "cannot start /proc/self/exe again")
}

/// A pipe holding `vars`, its write end closed, its read end inherited across `execve`.
fn handover(vars: &[(OsString, OsString)]) -> io::Result<File> {
    let (reader, mut writer) = io::pipe()?;
    // Nobody reads until the exec: a payload larger than the pipe must fail, not block.
    rustix::io::ioctl_fionbio(&writer, true)?;
    writer.write_all(&encode(vars)).map_err(|error| {
        if error.kind() == io::ErrorKind::WouldBlock {
            io::Error::other("the secrets do not fit in a pipe")
        } else {
            error
        }
    })?;
    drop(writer);
    let reader = File::from(OwnedFd::from(reader));
    rustix::io::fcntl_setfd(&reader, rustix::io::FdFlags::empty())?;
    Ok(reader)
}

/// In an image started again: the variables handed over (kept in the store) and the generation;
/// `0` when this image was not started again.
fn receive() -> io::Result<u32> {
    let Some(raw) = std::env::var_os(HANDOFF_VAR) else {
        return Ok(0);
    };
    let malformed = || {
        io::Error::other(format!(
            "{HANDOFF_VAR} is malformed: the secrets it stands for are lost"
        ))
    };
    let (fd, inode, generation, name) = parse_handoff(&raw).ok_or_else(malformed)?;
    if !name.is_empty() {
        // Best effort: only `ps` would tell.
        let _ = std::fs::write("/proc/self/comm", name);
    }
    let lost = |what: &str| {
        io::Error::other(format!(
            "the secrets handed over through fd {fd} are lost: {what}"
        ))
    };
    // A new reader of the same pipe (the inherited descriptor itself cannot be closed without
    // `unsafe`; emptied, it holds nothing).
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(format!("/proc/self/fd/{fd}"))
        .map_err(|error| lost(&error.to_string()))?;
    let metadata = file.metadata().map_err(|error| lost(&error.to_string()))?;
    if !metadata.file_type().is_fifo() || metadata.ino() != inode {
        return Err(lost("not the pipe it was"));
    }
    let mut bytes = Vec::new();
    (&file)
        .take(MAX_HANDOFF_BYTES)
        .read_to_end(&mut bytes)
        .map_err(|error| lost(&error.to_string()))?;
    let vars = decode(&bytes).ok_or_else(|| lost("malformed"))?;
    subagent_session::env::keep(vars);
    Ok(generation)
}

/// `<fd>:<inode>:<generation>:<process name>`.
fn parse_handoff(raw: &OsStr) -> Option<(i32, u64, u32, &str)> {
    let mut parts = raw.to_str()?.splitn(4, ':');
    let fd = parts.next()?.parse().ok().filter(|fd| *fd > 2)?;
    let inode = parts.next()?.parse().ok()?;
    let generation = parts.next()?.parse().ok()?;
    Some((fd, inode, generation, parts.next()?))
}

/// Each variable as its name's length (4 bytes, little-endian), the name, its value's length
/// and the value.
fn encode(vars: &[(OsString, OsString)]) -> Vec<u8> {
    let mut bytes = Vec::new();
    for (name, value) in vars {
        for part in [name, value] {
            let part = part.as_bytes();
            bytes.extend_from_slice(&u32::try_from(part.len()).unwrap_or(u32::MAX).to_le_bytes());
            bytes.extend_from_slice(part);
        }
    }
    bytes
}

/// The variables [`encode`] wrote; `None` when the bytes are not that.
fn decode(mut bytes: &[u8]) -> Option<Vec<(OsString, OsString)>> {
    fn part(bytes: &mut &[u8]) -> Option<OsString> {
        let (len, rest) = bytes.split_first_chunk::<4>()?;
        let len = usize::try_from(u32::from_le_bytes(*len)).ok()?;
        let part = rest.get(..len)?;
        *bytes = &rest[len..];
        Some(OsString::from_vec(part.to_vec()))
    }
    let mut vars = Vec::new();
    while !bytes.is_empty() {
        let name = part(&mut bytes)?;
        let value = part(&mut bytes)?;
        vars.push((name, value));
    }
    Some(vars)
}

#[cfg(test)]
mod tests;
