//! The kit passes a provider that does what it declares, with or without a model, and fails
//! each defect in the check about it, saying what it saw in one line; a false capability claim
//! fails `capabilities` and `all_declared` too, naming the capability.

use pretty_assertions::assert_eq;
use subagent_conformance::{Adapter, Check, Verdict, check_blocking};

use super::free::{Claim, ScriptAdapter, as_written};
use super::probe::{Defect, ProbeAdapter};

/// The verdict of a failed check, or `None` when it passed.
fn failure(check: Check, defect: Defect) -> Option<String> {
    check_blocking(check, || ProbeAdapter::new(Some(defect)))
        .err()
        .map(|failure| failure.message().to_owned())
}

/// Each check's expected verdict: passed when `declared` lists it, else not declared.
fn expected(declared: &[Check]) -> Vec<(Check, Verdict)> {
    Check::ALL
        .into_iter()
        .map(|check| {
            let verdict = if declared.contains(&check) {
                Verdict::Passed
            } else {
                Verdict::NotDeclared
            };
            (check, verdict)
        })
        .collect()
}

/// The generic checks every provider passes whatever it declares.
const GENERIC: [Check; 6] = [
    Check::Capabilities,
    Check::Lifecycle,
    Check::Cancel,
    Check::ChildFailure,
    Check::PermissionCeiling,
    Check::AllDeclared,
];

/// Every check's verdict on the adapter `adapter` makes; none may fail.
fn every_verdict<A: Adapter>(adapter: impl Fn() -> A + Copy) -> Vec<(Check, Verdict)> {
    Check::ALL
        .into_iter()
        .map(|check| {
            let verdict = check_blocking(check, adapter);
            (check, verdict.unwrap_or_else(|failure| panic!("{failure}")))
        })
        .collect()
}

#[test]
fn a_sound_provider_passes_every_check() {
    let verdicts = every_verdict(|| ProbeAdapter::new(None));
    let mut declared = GENERIC.to_vec();
    declared.extend([Check::Persona, Check::ModelOverride, Check::Effort]);
    assert_eq!(verdicts, expected(&declared));
}

#[test]
fn a_provider_without_a_model_passes_every_check() {
    let verdicts = every_verdict(|| ScriptAdapter::new(None));
    let mut declared = GENERIC.to_vec();
    declared.extend([Check::OutputSchema, Check::DepthLimit]);
    assert_eq!(verdicts, expected(&declared));
}

#[test]
fn each_defect_fails_its_check() {
    let cases = [
        (Defect::DropsPersona, Check::Persona, "conformance persona"),
        (
            Defect::IgnoresModel,
            Check::ModelOverride,
            "conformance model_override",
        ),
        (
            Defect::DropsEffort,
            Check::Effort,
            "conformance effort: declares effort but does not honour it",
        ),
        (Defect::StartsTwice, Check::Lifecycle, "exactly one Started"),
        (
            Defect::HidesFailures,
            Check::ChildFailure,
            "conformance child failure",
        ),
        (
            Defect::FactoryOverclaims,
            Check::Capabilities,
            "must declare the same table",
        ),
    ];
    for (defect, check, said) in cases {
        let message = failure(check, defect)
            .unwrap_or_else(|| panic!("{check:?} passed a provider that {defect:?}"));
        assert!(message.contains(said), "{defect:?}: {message}");
    }
}

#[test]
fn a_false_claim_fails_capabilities_and_all_declared_naming_the_capability() {
    for (defect, claimed) in [
        (Defect::ClaimsOutputSchema, "output_schema"),
        (Defect::ClaimsToolFilter, "tool_filter"),
    ] {
        for check in [Check::Capabilities, Check::AllDeclared] {
            let message = failure(check, defect)
                .unwrap_or_else(|| panic!("{check:?} passed a provider that {defect:?}"));
            assert!(
                message.contains(&format!("declares {claimed} but does not honour it")),
                "{defect:?} {check:?}: {message}"
            );
        }
    }
    // Without a model: what only a model request shows cannot be claimed; a schema ignored is
    // seen in the outcome.
    for (claim, claimed, checks) in [
        (
            Claim::Persona,
            "persona",
            vec![Check::Capabilities, Check::AllDeclared, Check::Persona],
        ),
        (
            Claim::IgnoredSchema,
            "output_schema",
            vec![Check::Capabilities, Check::AllDeclared],
        ),
    ] {
        for check in checks {
            let message = check_blocking(check, || ScriptAdapter::new(Some(claim)))
                .err()
                .unwrap_or_else(|| panic!("{check:?} passed a provider that claims {claim:?}"));
            assert!(
                message
                    .message()
                    .contains(&format!("declares {claimed} but does not honour it")),
                "{claim:?} {check:?}: {message}"
            );
        }
    }
}

#[test]
fn a_failing_check_says_its_verdict_in_one_line() {
    for (defect, check) in [
        (Defect::StartsTwice, Check::Lifecycle),
        (Defect::ClaimsToolFilter, Check::ToolFilter),
        (Defect::HidesFailures, Check::ChildFailure),
    ] {
        let message = failure(check, defect)
            .unwrap_or_else(|| panic!("{check:?} passed a provider that {defect:?}"));
        assert!(
            message.starts_with("conformance ") && !message.contains('\n'),
            "{defect:?} {check:?}: {message}"
        );
    }
}

/// The `capabilities` test of [`as_written`]'s suite, run alone in a child process of this
/// test binary as `cargo test` and `cargo nextest` run a test (captured, and not), with a
/// backtrace asked for.
fn suite_test_of_a_false_claim(nocapture: bool) -> String {
    let mut command = std::process::Command::new(
        std::env::current_exe().unwrap_or_else(|e| panic!("this test binary: {e}")),
    );
    command
        .args(["--exact", "suite::free::as_written::capabilities"])
        .env(as_written::CLAIM, "1")
        .env("RUST_BACKTRACE", "1");
    if nocapture {
        command.arg("--nocapture");
    }
    let output = command
        .output()
        .unwrap_or_else(|e| panic!("cannot run this test binary: {e}"));
    assert!(!output.status.success(), "the false claim passed");
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

#[test]
fn a_failing_suite_test_prints_one_line_and_no_backtrace() {
    for nocapture in [false, true] {
        let output = suite_test_of_a_false_claim(nocapture);
        let verdicts: Vec<&str> = output
            .lines()
            .filter(|line| line.contains("conformance"))
            .collect();
        assert_eq!(verdicts.len(), 1, "{output}");
        assert!(
            verdicts[0].starts_with(
                "Error: conformance capabilities: declares persona but does not honour it: "
            ),
            "{output}"
        );
        assert!(
            !output.contains("backtrace") && !output.contains("panicked"),
            "{output}"
        );
    }
}
