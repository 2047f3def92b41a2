mod a2a_provider;
mod a2a_remote;
#[cfg(feature = "e2e")]
mod a2a_sdk_peer;
mod acp;
mod acp_background;
#[cfg(feature = "e2e")]
mod acp_provider;
mod background;
mod budgets;
mod caps;
mod chaos;
mod config;
#[cfg(feature = "e2e")]
mod cross_product;
mod daily_loop;
mod delegate;
mod doc_examples;
mod doctor;
mod effort;
mod embedding;
mod environ;
mod guide;
mod kept;
mod lists;
mod logging;
mod mcp;
#[cfg(feature = "e2e")]
mod mcp_client;
mod mcp_http;
mod memory;
mod nats;
mod nesting;
mod newcomer;
mod offline_team;
mod permissions;
mod pinned;
mod preset;
mod progress;
mod reach_for;
mod readme_tour;
mod resume;
mod routing;
mod run;
mod runs;
mod scenarios_doc;
mod secrets;
mod serve;
mod serve_transcripts;
mod sessions;
mod settings;
mod shell_echo;
mod sigint;
mod skills;
mod special_files;
mod stdio_frames;
mod summaries;
mod support;
#[cfg(feature = "e2e")]
mod teams;
#[cfg(feature = "e2e")]
mod teams_products;
mod termination;
mod ui;
mod worktree;
