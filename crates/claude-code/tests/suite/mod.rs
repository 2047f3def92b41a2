mod factory;

#[cfg(feature = "e2e")]
mod e2e;
#[cfg(feature = "e2e")]
mod harness;
