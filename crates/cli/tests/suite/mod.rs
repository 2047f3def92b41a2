mod delegate;
mod lists;
mod permissions;
mod preset;
mod run;
mod sigint;
mod support;
