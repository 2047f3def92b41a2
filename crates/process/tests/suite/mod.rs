mod guard;
mod helpers;
mod pdeathsig;
mod settle;
mod spawn;

// The lifecycle and capture tests run twice: directly, and under the guardian
// (`subagent_process::guard`), whose children must behave the same.
mod capture {
    const GUARDED: bool = false;
    include!("capture.rs");
}
mod capture_guarded {
    const GUARDED: bool = true;
    include!("capture.rs");
}
mod lifecycle {
    const GUARDED: bool = false;
    include!("lifecycle.rs");
}
mod lifecycle_guarded {
    const GUARDED: bool = true;
    include!("lifecycle.rs");
}
