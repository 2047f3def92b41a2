//! The front doors behind cargo features of `subagent-cli` (all on by default): what a lean
//! build (`--no-default-features`) leaves out, and the words that say so when a command or a
//! preset asks for one of them.

/// The provider kinds behind a feature: (kind, feature, whether this build has it).
const GATED_KINDS: &[(&str, &str, bool)] = &[
    ("acp", "acp", cfg!(feature = "acp")),
    ("nats", "nats", cfg!(feature = "nats")),
];

/// How to get a build that has `feature`.
fn how_to_get(feature: &str) -> String {
    format!(
        "this `subagent` was built without the `{feature}` feature of subagent-cli; the default \
         build has it (`cargo install --locked --path crates/cli`), a lean one adds it with \
         `--no-default-features --features {feature}`"
    )
}

/// Why a preset's `kind:` is unknown when this build left that kind out, else `None`.
pub fn kind_not_built(kind: &str) -> Option<String> {
    GATED_KINDS
        .iter()
        .find(|(gated, _, built)| *gated == kind && !built)
        .map(|(_, feature, _)| {
            format!(
                "the provider kind \"{kind}\" is not in this build: {}",
                how_to_get(feature)
            )
        })
}

/// The message of a preset error, with the reason when it names a kind this build left out.
pub fn preset_error(error: &subagent_preset::Error) -> String {
    match error {
        subagent_preset::Error::UnknownKind { kind, .. } => match kind_not_built(kind) {
            Some(reason) => format!("{error} ({reason})"),
            None => error.to_string(),
        },
        _ => error.to_string(),
    }
}

/// The refusal of a subcommand this build left out with its `feature` (`INVALID_ARGUMENTS`,
/// exit 2).
#[cfg(not(all(feature = "serve", feature = "mcp", feature = "acp", feature = "nats")))]
pub fn not_built(command: &str, feature: &str) -> crate::Refusal {
    crate::Refusal::invalid(format!(
        "`subagent {command}` is not in this build: {}",
        how_to_get(feature)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_gated_kind_names_its_feature_only_when_left_out() {
        for (kind, feature, built) in GATED_KINDS {
            match kind_not_built(kind) {
                None => assert!(built, "{kind}"),
                Some(reason) => {
                    assert!(!built, "{kind}");
                    assert!(
                        reason.contains(&format!("--features {feature}")),
                        "{reason}"
                    );
                }
            }
        }
        assert_eq!(kind_not_built("spawn"), None);
        assert_eq!(kind_not_built("a2a"), None);
    }
}
