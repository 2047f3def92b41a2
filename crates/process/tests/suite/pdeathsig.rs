//! The parent-death signal: a child dies when the process that owns it is killed.
//!
//! The test re-runs its own test binary as the owner (a helper test that does nothing unless
//! the helper variable is set in *its* environment, which the outer test passes through the
//! spec), SIGKILLs that owner, and watches the orphaned child die.

use std::io::Write;
use std::time::Duration;

use subagent_process::{ProcessSpec, Signal};

use super::helpers::{CWD, Death, alive, helper_test, printed_pid};

const HELPER: &str = "SUBAGENT_PROCESS_PDEATHSIG_HELPER";

#[tokio::test]
async fn helper_owns_a_sleeping_child() {
    if std::env::var_os(HELPER).is_none() {
        return;
    }
    let child = ProcessSpec::new("sleep", CWD).arg("300").spawn().unwrap();
    println!("PID {}", child.pid());
    std::io::stdout().flush().unwrap();
    std::future::pending::<()>().await;
}

#[tokio::test]
async fn the_child_dies_when_its_owner_is_killed() {
    let mut owner = helper_test("suite::pdeathsig::helper_owns_a_sleeping_child", HELPER)
        .spawn()
        .unwrap();
    let pid = printed_pid(&mut owner, "PID ").await;
    assert!(alive(pid));
    let death = Death::watch(pid);
    // Only the owner: its child is in a process group of its own and is not signalled by us.
    owner.signal(Signal::Kill);
    death.wait(Duration::from_secs(5)).await;
    let exit = owner.wait().await.unwrap();
    assert_eq!(exit.signal(), Some(Signal::Kill.number()));
}
