mod auth;
mod connections;
mod drain;
mod limits;
mod refusals;
mod runs;
mod subscribe;
mod support;
