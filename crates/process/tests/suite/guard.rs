//! The guardian: what a child starts never outlives the host, even a host killed with SIGKILL.
//!
//! The SIGKILL test re-runs this test binary as the host (a helper test that does nothing unless
//! the helper variable is set in *its* environment), has it start a guarded shell whose
//! background job escapes with `setsid`, SIGKILLs the host, and watches the escapee die.

use std::io::Write;
use std::time::Duration;

use pretty_assertions::assert_eq;
use subagent_process::{
    CancellationToken, ProcessSpec, Signal, SignalTarget, StopCause, StopPolicy,
};

use super::helpers::{CWD, Death, GUARD, alive, helper_test, lines, printed_pid, spec};

const DEATH: Duration = Duration::from_secs(5);
const HELPER: &str = "SUBAGENT_PROCESS_GUARD_HELPER";

fn guarded_sh(script: &str) -> ProcessSpec {
    spec(true, "sh", CWD).args(["-c", script])
}

#[tokio::test]
async fn the_exit_code_and_the_terminating_signal_come_through() {
    let exit = guarded_sh("exit 7").spawn().unwrap().wait().await.unwrap();
    assert_eq!((exit.code(), exit.signal()), (Some(7), None));
    let exit = guarded_sh("kill -TERM $$")
        .spawn()
        .unwrap()
        .wait()
        .await
        .unwrap();
    assert_eq!((exit.code(), exit.signal()), (None, Some(15)));
}

#[tokio::test]
async fn a_missing_program_is_still_refused_before_anything_starts() {
    let err = spec(true, "no-such-cli-7f3a", CWD).spawn().unwrap_err();
    assert!(err.to_string().contains("no-such-cli-7f3a"), "{err}");
}

#[tokio::test]
async fn an_escapee_left_behind_when_the_program_exits_dies_with_it() {
    // `setsid sleep &` from a shell that then exits: the bash tool's case. The escapee is in
    // another session and process group; the guardian adopted it and kills it.
    let mut child = guarded_sh("setsid sleep 302 >/dev/null 2>&1 & echo $!")
        .spawn()
        .unwrap();
    let escapee: i32 = child.next_line().await.unwrap().unwrap().parse().unwrap();
    let death = Death::watch(escapee);
    assert_eq!(child.next_line().await.unwrap(), None);
    assert!(child.wait().await.unwrap().success());
    death.wait(DEATH).await;
    assert!(!alive(escapee));
}

#[tokio::test]
async fn the_polite_signal_reaches_the_program_once_for_either_target() {
    for target in [SignalTarget::Leader, SignalTarget::Group] {
        let cancel = CancellationToken::new();
        let mut child = guarded_sh(
            "n=0; trap 'n=$((n+1))' TERM; echo ready; \
             while [ $n -eq 0 ]; do sleep 0.05; done; sleep 0.3; echo got $n",
        )
        .stop_policy(StopPolicy::new(Signal::Terminate).target(target))
        .cancel(cancel.clone())
        .spawn()
        .unwrap();
        assert_eq!(child.next_line().await.unwrap().as_deref(), Some("ready"));
        cancel.cancel();
        assert_eq!(lines(&mut child).await, ["got 1"], "{target:?}");
        let exit = child.wait().await.unwrap();
        assert_eq!(
            (exit.code(), exit.stopped, exit.killed),
            (Some(0), Some(StopCause::Cancelled), false),
            "{target:?}"
        );
    }
}

#[tokio::test]
async fn the_group_target_reaches_every_member_once() {
    let cancel = CancellationToken::new();
    let mut child = guarded_sh(
        "( m=0; trap 'm=$((m+1))' TERM; echo job ready; \
           while [ $m -eq 0 ]; do sleep 0.05; done; sleep 0.3; echo job got $m ) & \
         n=0; trap 'n=$((n+1))' TERM; sleep 0.2; echo ready; \
         while [ $n -eq 0 ]; do sleep 0.05; done; sleep 0.3; wait; echo got $n",
    )
    .stop_policy(StopPolicy::new(Signal::Terminate).target(SignalTarget::Group))
    .cancel(cancel.clone())
    .spawn()
    .unwrap();
    assert_eq!(
        child.next_line().await.unwrap().as_deref(),
        Some("job ready")
    );
    assert_eq!(child.next_line().await.unwrap().as_deref(), Some("ready"));
    cancel.cancel();
    assert_eq!(lines(&mut child).await, ["job got 1", "got 1"]);
    let exit = child.wait().await.unwrap();
    assert_eq!(
        (exit.code(), exit.stopped, exit.killed),
        (Some(0), Some(StopCause::Cancelled), false)
    );
}

#[tokio::test]
async fn helper_hosts_a_guarded_shell_with_an_escapee() {
    if std::env::var_os(HELPER).is_none() {
        return;
    }
    let mut child = ProcessSpec::new("sh", CWD)
        .args(["-c", "setsid sleep 303 >/dev/null 2>&1 & echo $!; wait"])
        .guard(Some(GUARD.into()))
        .spawn()
        .unwrap();
    let escapee = child.next_line().await.unwrap().unwrap();
    println!("ESCAPEE {escapee}");
    std::io::stdout().flush().unwrap();
    std::future::pending::<()>().await;
}

#[tokio::test]
async fn nothing_outlives_a_host_killed_with_sigkill() {
    let helper = "suite::guard::helper_hosts_a_guarded_shell_with_an_escapee";
    let mut host = helper_test(helper, HELPER).guard(None).spawn().unwrap();
    let escapee = printed_pid(&mut host, "ESCAPEE ").await;
    assert!(alive(escapee));
    let death = Death::watch(escapee);
    // Only the host, with SIGKILL: it can clean nothing up.
    host.signal(Signal::Kill);
    death.wait(DEATH).await;
    let exit = host.wait().await.unwrap();
    assert_eq!(exit.signal(), Some(Signal::Kill.number()));
}
