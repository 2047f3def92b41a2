//! Gates: a scenario step waits on one (`wait_gate`, `wait_gate_mid`) until the test opens it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use tokio::sync::watch;

/// A gate a scenario step can wait on; the test opens it.
#[derive(Clone, Debug)]
pub struct Gate {
    tx: Arc<watch::Sender<bool>>,
}

impl Gate {
    /// Opens the gate: every waiter (now and later) proceeds.
    pub fn open(&self) {
        self.tx.send_replace(true);
    }

    /// Closes the gate again.
    pub fn close(&self) {
        self.tx.send_replace(false);
    }

    /// Whether the gate is open.
    pub fn is_open(&self) -> bool {
        *self.tx.borrow()
    }

    /// How many are waiting at the gate right now.
    pub fn waiting(&self) -> usize {
        self.tx.receiver_count()
    }

    /// Waits until the gate is open.
    pub async fn wait(&self) {
        let mut rx = self.tx.subscribe();
        let _ = rx.wait_for(|open| *open).await;
    }
}

/// Named gates, created on first use.
#[derive(Clone, Debug, Default)]
pub struct Gates {
    gates: Arc<Mutex<HashMap<String, Gate>>>,
}

impl Gates {
    /// The gate of this name.
    pub fn gate(&self, name: &str) -> Gate {
        let mut gates = self.gates.lock().unwrap_or_else(PoisonError::into_inner);
        gates
            .entry(name.to_owned())
            .or_insert_with(|| Gate {
                tx: Arc::new(watch::channel(false).0),
            })
            .clone()
    }
}
