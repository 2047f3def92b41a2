mod codes;
mod description;
mod gating;
mod helpers;
mod run_helper;
