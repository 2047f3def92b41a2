//! The kit passes a provider that does what it declares, and fails each defect in the check
//! about it, saying what it saw.

use std::panic::AssertUnwindSafe;

use pretty_assertions::assert_eq;
use subagent_conformance::{Check, Verdict, check_blocking};

use super::probe::{Defect, ProbeAdapter};

/// The panic message of a failed check, or `None` when it passed.
fn failure(check: Check, defect: Defect) -> Option<String> {
    let result = std::panic::catch_unwind(AssertUnwindSafe(|| {
        check_blocking(check, || ProbeAdapter::new(Some(defect)))
    }));
    match result {
        Ok(_) => None,
        Err(panic) => Some(
            panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                .unwrap_or_default(),
        ),
    }
}

#[test]
fn a_sound_provider_passes_every_check() {
    let verdicts: Vec<(Check, Verdict)> = Check::ALL
        .into_iter()
        .map(|check| (check, check_blocking(check, || ProbeAdapter::new(None))))
        .collect();
    let declared = [
        Check::Capabilities,
        Check::Lifecycle,
        Check::Cancel,
        Check::ChildFailure,
        Check::PermissionCeiling,
        Check::Persona,
        Check::ModelOverride,
        Check::AllDeclared,
    ];
    let expected: Vec<(Check, Verdict)> = Check::ALL
        .into_iter()
        .map(|check| {
            let verdict = if declared.contains(&check) {
                Verdict::Passed
            } else {
                Verdict::NotDeclared
            };
            (check, verdict)
        })
        .collect();
    assert_eq!(verdicts, expected);
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
