//! Logs: `tracing` events of every crate, through `tracing-subscriber`'s `EnvFilter`, as text
//! lines on stderr (stdout is for results).
//!
//! Quiet by default (our crates' warnings only); `-v` adds our crates' debug logs (processes
//! started and stopped, the preset and model chosen, each run's start and end), `-vv` our
//! traces and the dependencies' debug logs (HTTP), `-vvv` everything. `RUST_LOG`, when set,
//! decides instead (the `EnvFilter` syntax: `subagent_process=debug,info`); one that does not
//! parse is named in a warning and the flags decide.
//!
//! Deliberately not here: what is logged (each crate says what it does with `tracing`).

use tracing_subscriber::EnvFilter;

/// The filter `-v` repeated `verbose` times asks for.
fn directives(verbose: u8) -> &'static str {
    match verbose {
        0 => "subagent=warn",
        1 => "subagent=debug",
        2 => "subagent=trace,debug",
        _ => "trace",
    }
}

/// The filter: `rust_log` when given (not empty) and valid, else the flags'; and a warning when
/// `rust_log` does not parse.
fn filter(verbose: u8, rust_log: Option<&str>) -> (EnvFilter, Option<String>) {
    let from_flags = || EnvFilter::new(directives(verbose));
    match rust_log.map(str::trim).filter(|value| !value.is_empty()) {
        None => (from_flags(), None),
        Some(value) => match EnvFilter::builder().parse(value) {
            Ok(filter) => (filter, None),
            Err(error) => (
                from_flags(),
                Some(format!(
                    "warning: RUST_LOG={value} is not a valid filter ({error}); using {}",
                    directives(verbose)
                )),
            ),
        },
    }
}

/// Sends logs to stderr, filtered by `-v` (`verbose`) or `RUST_LOG`. Does nothing when the
/// process already has a subscriber (an embedder's binary set its own).
pub(crate) fn init(verbose: u8) {
    let rust_log = std::env::var("RUST_LOG").ok();
    let (filter, warning) = filter(verbose, rust_log.as_deref());
    if let Some(warning) = warning {
        eprintln!("{warning}");
    }
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .try_init();
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    fn shown(verbose: u8, rust_log: Option<&str>) -> (String, Option<String>) {
        let (filter, warning) = filter(verbose, rust_log);
        (filter.to_string(), warning)
    }

    #[test]
    fn flags_then_rust_log_decide() {
        assert_eq!(shown(0, None), ("subagent=warn".to_owned(), None));
        assert_eq!(shown(1, Some("  ")), ("subagent=debug".to_owned(), None));
        assert_eq!(shown(2, None), ("subagent=trace,debug".to_owned(), None));
        assert_eq!(shown(7, None), ("trace".to_owned(), None));
        assert_eq!(
            shown(1, Some("subagent_process=trace")),
            ("subagent_process=trace".to_owned(), None)
        );
        let (filter, warning) = shown(1, Some("x=loud"));
        assert_eq!(filter, "subagent=debug");
        assert!(
            warning.as_deref().is_some_and(|w| w
                .starts_with("warning: RUST_LOG=x=loud is not a valid filter (")
                && w.ends_with("); using subagent=debug")),
            "{warning:?}"
        );
    }
}
