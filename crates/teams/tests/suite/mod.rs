mod concurrency;
mod inprocess;
mod lifecycle;
mod support;
