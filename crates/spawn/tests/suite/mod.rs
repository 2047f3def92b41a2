mod delegation;
mod depth;
mod structured;
mod support;
