mod binary;
mod cli_shapes;
mod recording;
mod repeat;
