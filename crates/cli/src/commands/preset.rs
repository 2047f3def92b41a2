//! `subagent preset validate`.

use std::process::ExitCode;
use std::sync::Arc;

use serde_json::json;
use subagent_core::ProviderFactory;

use super::providers::providers_table;
use crate::setup::{self};
use crate::{EXIT_COMPLETED, EXIT_REFUSED, Refusal};

/// Builds what a run builds (the providers and their registry, with the offline model so that no
/// key is needed): a config a run would refuse is refused here, with the same message.
fn build_as_a_run_would(
    preset: &subagent_preset::Preset,
    factories: &[std::sync::Arc<dyn subagent_core::ProviderFactory>],
) -> Result<(), Refusal> {
    let model = setup::choose_model(
        preset.model.as_ref(),
        None,
        true,
        setup::KeySwitch::AsWritten,
        &crate::setup::env,
    )?;
    let secrets = setup::secrets(preset, factories, &model, &[]);
    let context = setup::build_context(preset, &secrets, setup::extensions(preset, &model));
    preset
        .build(factories, &context)
        .map(|_| ())
        .map_err(|error| Refusal::new(error.code(), error.to_string()))
}

pub(super) fn validate(
    file: &std::path::Path,
    json: bool,
    factories: &[Arc<dyn ProviderFactory>],
) -> ExitCode {
    let env = |name: &str| subagent_session::env::var(name);
    let loaded = subagent_preset::Preset::load(file, factories, &env);
    if let Ok(preset) = &loaded
        && let Err(refusal) = build_as_a_run_would(preset, factories)
    {
        return refusal.report(json);
    }
    match loaded {
        Ok(preset) => {
            let listing = preset.listing(factories);
            if json {
                outln!(
                    "{}",
                    json!({
                        "valid": true,
                        "file": file,
                        "max_depth": preset.max_depth,
                        "providers": listing,
                        "tools": preset.tools.iter().map(|t| &t.name).collect::<Vec<_>>(),
                    })
                );
            } else {
                outln!("{}: valid", file.display());
                outln!("{}", providers_table(&listing));
                let tools: Vec<&str> = preset.tools.iter().map(|t| t.name.as_str()).collect();
                outln!(
                    "delegation tools: {}",
                    if tools.is_empty() {
                        "none".to_owned()
                    } else {
                        tools.join(", ")
                    }
                );
            }
            ExitCode::from(EXIT_COMPLETED)
        }
        Err(error) => {
            if json {
                let mut value = error.to_json();
                if let Some(object) = value.as_object_mut() {
                    object.insert(
                        "message".into(),
                        crate::features::preset_error(&error).into(),
                    );
                }
                outln!("{value}");
                ExitCode::from(EXIT_REFUSED)
            } else {
                Refusal::new(error.code(), crate::features::preset_error(&error)).report(false)
            }
        }
    }
}
