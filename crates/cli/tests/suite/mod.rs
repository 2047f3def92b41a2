mod a2a_provider;
mod a2a_remote;
#[cfg(feature = "e2e")]
mod a2a_sdk_peer;
mod acp;
#[cfg(feature = "e2e")]
mod acp_provider;
mod background;
mod budgets;
mod chaos;
mod config;
#[cfg(feature = "e2e")]
mod cross_product;
mod daily_loop;
mod delegate;
mod doc_examples;
mod effort;
mod embedding;
mod guide;
mod kept;
mod lists;
mod logging;
mod mcp;
mod nats;
mod nesting;
mod newcomer;
mod offline_team;
mod permissions;
mod preset;
mod progress;
mod reach_for;
mod readme_tour;
mod resume;
mod routing;
mod run;
mod scenarios_doc;
mod secrets;
mod serve;
mod serve_transcripts;
mod sigint;
mod special_files;
mod summaries;
mod support;
#[cfg(feature = "e2e")]
mod teams;
mod termination;
mod worktree;
