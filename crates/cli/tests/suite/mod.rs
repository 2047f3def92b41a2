#[cfg(feature = "e2e")]
mod cross_product;
mod delegate;
mod embedding;
mod guide;
mod lists;
mod logging;
mod newcomer;
mod permissions;
mod preset;
mod progress;
mod routing;
mod run;
mod secrets;
mod sigint;
mod special_files;
mod support;
mod termination;
