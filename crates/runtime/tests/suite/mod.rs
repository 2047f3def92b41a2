mod bash;
mod files;
mod log;
mod support;
mod task_dirs;
mod tasks;
mod transcript;
