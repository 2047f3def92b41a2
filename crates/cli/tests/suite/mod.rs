mod delegate;
mod lists;
mod preset;
mod run;
mod sigint;
mod support;
