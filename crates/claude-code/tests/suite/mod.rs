mod factory;
mod fake_cli;

#[cfg(feature = "e2e")]
mod conformance;
#[cfg(feature = "e2e")]
mod e2e;
#[cfg(feature = "e2e")]
mod e2e_admission;
#[cfg(feature = "e2e")]
mod e2e_asking;
#[cfg(feature = "e2e")]
mod e2e_isolation;
#[cfg(feature = "e2e")]
mod harness;
