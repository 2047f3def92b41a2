mod isolation;
mod many;
mod support;
