mod bash;
mod files;
mod log;
mod support;
mod transcript;
