mod calls;
mod cancel;
mod http;
mod refusals;
mod support;
mod tools;
