#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Integration tests of `subagent-process`: real children, checked through `/proc`.

mod suite;
