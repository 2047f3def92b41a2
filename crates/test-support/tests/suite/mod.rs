mod binary;
mod browser;
mod cli_shapes;
mod recording;
mod repeat;
