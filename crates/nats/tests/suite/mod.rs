mod forged;
mod support;
mod worker;
