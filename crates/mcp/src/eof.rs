//! The client's input, watched for its end: a client that goes away cancels what it started at
//! once, not after the SDK's own drain period.

use std::pin::Pin;
use std::task::{Context, Poll};

use subagent_core::CancellationToken;
use tokio::io::{AsyncRead, ReadBuf};

/// A reader that cancels `token` when its input ends (end of file or a read error).
pub(crate) struct CancelOnEof<R> {
    inner: R,
    token: CancellationToken,
}

impl<R> CancelOnEof<R> {
    pub(crate) fn new(inner: R, token: CancellationToken) -> Self {
        Self { inner, token }
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for CancelOnEof<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let wanted = buf.remaining() > 0;
        let this = &mut *self;
        let polled = Pin::new(&mut this.inner).poll_read(cx, buf);
        match &polled {
            Poll::Ready(Ok(())) if wanted && buf.filled().len() == before => this.token.cancel(),
            Poll::Ready(Err(_)) => this.token.cancel(),
            _ => {}
        }
        polled
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    #[tokio::test]
    async fn the_end_of_input_cancels_and_data_does_not() {
        let (mut client, server) = tokio::io::duplex(64);
        let token = CancellationToken::new();
        let mut reader = CancelOnEof::new(server, token.clone());
        client.write_all(b"hello").await.unwrap();
        let mut buf = [0u8; 5];
        reader.read_exact(&mut buf).await.unwrap();
        assert!(!token.is_cancelled());
        drop(client);
        let mut rest = Vec::new();
        reader.read_to_end(&mut rest).await.unwrap();
        assert!(token.is_cancelled());
    }
}
