mod files;
mod hooks;
mod parser;
mod precedence;
mod render;
mod rules;
mod support;
mod trust;
