mod argv;
mod errors;
mod load;
mod shipped;
mod support;
