//! Integration tests of subagent-codex.
