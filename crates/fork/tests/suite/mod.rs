mod background;
mod conformance;
mod effort;
mod prefix;
mod resume;
mod sharing;
mod support;
mod worktree;
