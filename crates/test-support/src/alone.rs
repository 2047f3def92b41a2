//! Running a test in a process of its own, whatever the harness.
//!
//! nextest runs every test in its own process; plain `cargo test` runs a binary's tests as
//! threads of one process. A test that looks at process-wide state (this process's children,
//! a subreaper's strays, signal dispositions) sees the other tests' under `cargo test`. Such a
//! test starts with `if in_own_process("suite::mod::name") { … }`: the first call runs the test
//! binary again for just that test (`--exact`, one thread) with [`ALONE`] set and asserts that
//! it passed; in that second process the call returns `true` and the body runs.

/// Set in the environment of the test binary run again by [`in_own_process`].
pub const ALONE: &str = "SUBAGENT_TEST_ALONE";

/// Whether to run the body of the test named `test` (its full path in the binary, e.g.
/// `suite::spawn::no_child_is_left`) here: `true` in a process running only it. Otherwise runs
/// the binary again for just that test, panics if it failed, and returns `false`.
///
/// # Panics
/// When the test failed in its own process, or the binary cannot be run again.
#[must_use]
pub fn in_own_process(test: &str) -> bool {
    if std::env::var_os(ALONE).is_some_and(|name| name == test) {
        return true;
    }
    let exe = std::env::current_exe().unwrap_or_else(|e| panic!("the test binary: {e}"));
    let status = std::process::Command::new(exe)
        .args([test, "--exact", "--nocapture", "--test-threads", "1"])
        .env(ALONE, test)
        .status()
        .unwrap_or_else(|e| panic!("running {test} again: {e}"));
    assert!(
        status.success(),
        "{test} failed in its own process: {status}"
    );
    false
}
