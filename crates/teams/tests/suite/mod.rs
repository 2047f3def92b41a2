mod concurrency;
mod inprocess;
mod support;
