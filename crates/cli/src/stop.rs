//! The signal a long-lived command (`serve`, `mcp --listen`, `worker`) stops on. Its own module,
//! not `serve`'s: each of those commands is a cargo feature of its own, and a build with `mcp`
//! or `nats` but not `serve` must still have it.

/// Resolves when the process is told to stop (SIGTERM, SIGINT or SIGHUP). The handlers are
/// installed when this is called, not when the future is first polled: a signal that comes
/// right after the address is announced must drain, not kill.
pub(crate) fn stop_signal() -> impl std::future::Future<Output = ()> + Send + 'static {
    use tokio::signal::unix::{SignalKind, signal};
    let kinds = [
        SignalKind::terminate(),
        SignalKind::interrupt(),
        SignalKind::hangup(),
    ];
    let mut streams: Vec<_> = kinds.into_iter().filter_map(|k| signal(k).ok()).collect();
    async move {
        if streams.is_empty() {
            std::future::pending::<()>().await;
        }
        let waits = streams.iter_mut().map(|s| Box::pin(s.recv()));
        futures::future::select_all(waits).await;
    }
}
