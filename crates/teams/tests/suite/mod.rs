mod concurrency;
mod inprocess;
mod lifecycle;
mod permissions;
mod plan;
mod support;
