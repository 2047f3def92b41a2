mod conformance;
mod prefix;
mod resume;
mod sharing;
mod support;
mod worktree;
