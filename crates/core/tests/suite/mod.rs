mod codes;
mod description;
mod gating;
mod helpers;
mod isolation;
mod run_helper;
