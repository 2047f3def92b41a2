mod prefix;
mod sharing;
mod support;
