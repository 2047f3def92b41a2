mod prefix;
mod support;
