//! Integration tests of `subagent-test-support`: the fake server as the real CLIs use it.

mod suite;
