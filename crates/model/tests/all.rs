//! Integration tests of `subagent-model`: every client against the fake server over real HTTP.

mod suite;
