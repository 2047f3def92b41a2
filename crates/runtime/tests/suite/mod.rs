mod bash;
mod files;
mod log;
mod summary;
mod support;
mod task_dirs;
mod tasks;
mod transcript;
