mod calls;
mod cancel;
mod refusals;
mod support;
mod tools;
