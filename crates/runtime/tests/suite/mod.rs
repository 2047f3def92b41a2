mod bash;
mod files;
mod support;
