//! Test doubles of the runtime's traits that two providers' tests both need. This crate does
//! not depend on `subagent-runtime` (the runtime's own tests use this crate), so the doubles
//! are a macro that the calling test crate expands against its own `subagent_runtime`,
//! `subagent_model`, `async_trait` and `serde_json`.

/// Defines, in the calling module, the doubles a background-run test needs:
///
/// - `AskUser`: a tool that would wait on a person (an embedder's `ask_user`, read-only, not
///   one of the background list) and answers `the user said yes`;
/// - `Counting`: a permission broker that allows every call it is asked about and counts them
///   (`Counting::default()`, the count in `.0`).
#[macro_export]
macro_rules! background_doubles {
    () => {
        /// A tool that would wait on a person: an embedder's, not one of the background list.
        struct AskUser;

        #[::async_trait::async_trait]
        impl ::subagent_runtime::Tool for AskUser {
            fn spec(&self) -> ::subagent_model::ToolSpec {
                ::subagent_model::ToolSpec {
                    name: "ask_user".to_owned(),
                    description: "Asks the user a question.".to_owned(),
                    input_schema: ::serde_json::json!(
                        {"type": "object", "properties": {"question": {"type": "string"}}}
                    ),
                }
            }

            fn kind(&self) -> ::subagent_runtime::ToolKind {
                ::subagent_runtime::ToolKind::ReadOnly
            }

            async fn call(
                &self,
                _: ::serde_json::Value,
                _: &::subagent_runtime::ToolContext,
            ) -> ::subagent_runtime::Result<::subagent_runtime::ToolOutput> {
                Ok(::subagent_runtime::ToolOutput::ok("the user said yes"))
            }
        }

        /// Allows every call it is asked about, and counts them.
        #[derive(Default)]
        struct Counting(::std::sync::atomic::AtomicUsize);

        #[::async_trait::async_trait]
        impl ::subagent_runtime::PermissionBroker for Counting {
            async fn ask(
                &self,
                _: ::subagent_runtime::PermissionRequest,
            ) -> ::subagent_runtime::Decision {
                self.0.fetch_add(1, ::std::sync::atomic::Ordering::SeqCst);
                ::subagent_runtime::Decision::Allow
            }
        }
    };
}
