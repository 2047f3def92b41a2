mod conformance;
mod prefix;
mod sharing;
mod support;
mod worktree;
