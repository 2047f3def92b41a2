mod support;
mod worker;
