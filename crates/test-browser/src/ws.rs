//! The client side of a WebSocket (RFC 6455), as much of it as the DevTools endpoint of a local
//! Chromium needs: the upgrade, masked text frames out, text frames in (fragmented or not), and
//! the close frame. Every read is bounded: the response head by [`MAX_HEAD`], a message by
//! [`MAX_MESSAGE`].
//!
//! Deliberately not here: TLS, extensions (no compression is offered, so none is used), binary
//! messages, answering pings (Chromium sends none), and checking `Sec-WebSocket-Accept` (the
//! peer is a browser this process started on 127.0.0.1; the `101` status is checked).

use tokio::io::{AsyncBufReadExt as _, AsyncReadExt as _, AsyncWriteExt as _, BufReader};
use tokio::net::TcpStream;
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};

/// The longest response head of the upgrade.
const MAX_HEAD: usize = 16 * 1024;

/// The longest message read: a screenshot of a large page, base64, fits.
pub(crate) const MAX_MESSAGE: usize = 64 * 1024 * 1024;

/// The receiving half.
pub(crate) struct Reader {
    stream: BufReader<OwnedReadHalf>,
}

/// The sending half.
pub(crate) struct Writer {
    stream: OwnedWriteHalf,
    /// Varies the masking key from frame to frame.
    frames: u32,
}

fn invalid(message: String) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidData, message)
}

/// Connects to `ws://127.0.0.1:{port}{path}` and upgrades the connection.
pub(crate) async fn connect(port: u16, path: &str) -> std::io::Result<(Reader, Writer)> {
    let stream = TcpStream::connect(("127.0.0.1", port)).await?;
    stream.set_nodelay(true)?;
    let (read, mut write) = stream.into_split();
    // The key is the RFC's sample nonce: it only has to be 16 bytes of base64.
    let request = format!(
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n\
         Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\
         Sec-WebSocket-Version: 13\r\n\r\n"
    );
    write.write_all(request.as_bytes()).await?;
    let mut reader = BufReader::new(read);
    let mut head = Vec::new();
    let mut status = None;
    loop {
        let mut line = Vec::new();
        (&mut reader)
            .take((MAX_HEAD - head.len()) as u64)
            .read_until(b'\n', &mut line)
            .await?;
        if !line.ends_with(b"\n") {
            return Err(invalid(format!(
                "the upgrade's response head ended early or passed {MAX_HEAD} bytes: {}",
                String::from_utf8_lossy(&head)
            )));
        }
        head.extend_from_slice(&line);
        let text = String::from_utf8_lossy(&line);
        if status.is_none() {
            status = Some(text.trim_end().to_owned());
        } else if text.trim_end().is_empty() {
            break;
        }
    }
    let status = status.unwrap_or_default();
    if status.split_whitespace().nth(1) != Some("101") {
        return Err(invalid(format!(
            "the upgrade to a WebSocket was refused: {}",
            String::from_utf8_lossy(&head)
        )));
    }
    Ok((
        Reader { stream: reader },
        Writer {
            stream: write,
            frames: 0,
        },
    ))
}

impl Reader {
    /// The next text message, `None` once the peer closed the connection (a close frame or the
    /// end of the stream between messages).
    pub(crate) async fn next_text(&mut self) -> std::io::Result<Option<String>> {
        let mut message = Vec::new();
        loop {
            let mut head = [0u8; 2];
            match self.stream.read_exact(&mut head).await {
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof && message.is_empty() => {
                    return Ok(None);
                }
                Err(e) => return Err(e),
            }
            let fin = head[0] & 0x80 != 0;
            let opcode = head[0] & 0x0f;
            let masked = head[1] & 0x80 != 0;
            let length = match head[1] & 0x7f {
                126 => u64::from(self.stream.read_u16().await?),
                127 => self.stream.read_u64().await?,
                short => u64::from(short),
            };
            let length = usize::try_from(length)
                .ok()
                .filter(|length| message.len().saturating_add(*length) <= MAX_MESSAGE)
                .ok_or_else(|| invalid(format!("a message over {MAX_MESSAGE} bytes")))?;
            let mut mask = [0u8; 4];
            if masked {
                self.stream.read_exact(&mut mask).await?;
            }
            let mut payload = vec![0u8; length];
            self.stream.read_exact(&mut payload).await?;
            if masked {
                for (i, byte) in payload.iter_mut().enumerate() {
                    *byte ^= mask[i % 4];
                }
            }
            match opcode {
                // Text, binary and their continuations.
                0..=2 => message.extend_from_slice(&payload),
                8 => return Ok(None),
                // Ping, pong: nothing to keep.
                9 | 10 => continue,
                other => return Err(invalid(format!("a frame of unknown opcode {other}"))),
            }
            if fin {
                return String::from_utf8(message)
                    .map(Some)
                    .map_err(|e| invalid(format!("a text message that is not UTF-8: {e}")));
            }
        }
    }
}

impl Writer {
    /// Sends `text` as one masked text frame.
    pub(crate) async fn send_text(&mut self, text: &str) -> std::io::Result<()> {
        let payload = text.as_bytes();
        let mut frame = Vec::with_capacity(payload.len() + 14);
        frame.push(0x81);
        match payload.len() {
            short @ 0..=125 => frame.push(0x80 | short as u8),
            medium @ 126..=0xffff => {
                frame.push(0x80 | 126);
                frame.extend_from_slice(&(medium as u16).to_be_bytes());
            }
            long => {
                frame.push(0x80 | 127);
                frame.extend_from_slice(&(long as u64).to_be_bytes());
            }
        }
        // A client must mask; the key need not be secret from a browser on loopback.
        self.frames = self.frames.wrapping_add(1);
        let mask = self.frames.wrapping_mul(0x9e37_79b9).to_be_bytes();
        frame.extend_from_slice(&mask);
        frame.extend(payload.iter().enumerate().map(|(i, b)| b ^ mask[i % 4]));
        self.stream.write_all(&frame).await?;
        self.stream.flush().await
    }
}
