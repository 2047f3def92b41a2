mod bash;
mod files;
mod log;
mod support;
mod tasks;
mod transcript;
