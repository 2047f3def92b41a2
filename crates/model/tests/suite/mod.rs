mod bounds;
mod clients;
mod errors;
mod request_shape;
mod retries;
mod scripted;
mod support;
mod timeouts;
