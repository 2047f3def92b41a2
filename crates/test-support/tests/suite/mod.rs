mod binary;
mod cli_shapes;
