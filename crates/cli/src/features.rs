//! The front doors behind cargo features of `subagent-cli` (all on by default): what a lean
//! build (`--no-default-features`) leaves out, and the words that say so when a command or a
//! preset asks for one of them.

/// How to get a build that has `feature`.
fn how_to_get(feature: &str) -> String {
    format!(
        "this `subagent` was built without the `{feature}` feature of subagent-cli; the default \
         build has it (`cargo install --locked --path crates/cli`), a lean one adds it with \
         `--no-default-features --features {feature}`"
    )
}

/// Why a preset's `kind:` is unknown when this build left that kind out, else `None`.
pub(crate) fn kind_not_built(kind: &str) -> Option<String> {
    crate::kinds::built_in_kinds()
        .into_iter()
        .find(|built_in| built_in.kind == kind && built_in.factory.is_none())
        .and_then(|built_in| built_in.feature)
        .map(|feature| {
            format!(
                "the provider kind \"{kind}\" is not in this build: {}",
                how_to_get(feature)
            )
        })
}

/// The message of a preset error, with the reason when it names a kind this build left out.
pub(crate) fn preset_error(error: &subagent_preset::Error) -> String {
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
pub(crate) fn not_built(command: &str, feature: &str) -> crate::Refusal {
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
        let gated: Vec<_> = crate::kinds::built_in_kinds()
            .into_iter()
            .filter_map(|kind| Some((kind.kind, kind.feature?, kind.factory.is_some())))
            .collect();
        assert_eq!(
            gated.iter().map(|(kind, ..)| *kind).collect::<Vec<_>>(),
            ["acp", "nats"]
        );
        for (kind, feature, built) in gated {
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
