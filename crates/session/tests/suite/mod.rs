mod fork_memory;
mod serde_round_trip;
mod transcript;
