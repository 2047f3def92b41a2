//! What the three clients share: one [`Model`] over HTTP ([`HttpModel`]) and one SSE
//! [`Decoder`] ([`SseDecoder`]), both generic over a [`Protocol`] that says only what differs:
//! where and how a request is posted, its body, and what one event of the answer means.
//!
//! Keep-alives are told apart in two places: here (SSE comments never become events; events
//! with empty data are skipped) and in the protocol (Anthropic's `ping`). Neither moves the
//! first-byte or idle timer of the HTTP layer.

use std::fmt;
use std::marker::PhantomData;

use async_trait::async_trait;
use tokio_util::sync::CancellationToken;

use crate::body::{BodyWriter, RequestBody};
use crate::config::ModelKind;
use crate::error::Result;
use crate::http::{AuthStyle, Decoder, HttpClient};
use crate::sse::{SseEvent, SseParser};
use crate::types::{Model, ModelEvent, ModelRequest, ModelStream};

/// One wire protocol: how its requests are sent, and (as a value) the state of reading one
/// streamed answer, event by event.
pub trait Protocol: fmt::Debug + Default + Send + 'static {
    /// Which protocol of the configuration this is (its name starts [`Model::describe`]).
    const KIND: ModelKind;
    /// The path requests are posted to (`/v1/messages`, …).
    const PATH: &'static str;
    /// How the key travels: by default the standard `authorization: Bearer`.
    const AUTH: AuthStyle = AuthStyle::Bearer;
    /// Headers besides content type, accept and the key.
    const HEADERS: &'static [(&'static str, &'static str)] = &[];
    /// Whether the server is sent [`ModelRequest::output_schema`] natively.
    const OUTPUT_SCHEMA: bool = false;
    /// Whether every server of the protocol takes [`ModelRequest::effort`] (when not, a
    /// configuration may say that its server does: [`ModelConfig::reasoning_effort`]).
    ///
    /// [`ModelConfig::reasoning_effort`]: crate::ModelConfig::reasoning_effort
    const EFFORT: bool = false;

    /// The JSON body of a request (byte-stable for a given request).
    fn request_body(request: &ModelRequest) -> Result<RequestBody>;

    /// Reads one event: its name (`event:`, empty when absent) and its data, trimmed and never
    /// empty. Returns whether it was part of the answer (`false`: a keep-alive, such as
    /// Anthropic's `ping`). The answer is complete once this pushed [`ModelEvent::Stop`]; no
    /// event reaches the protocol after that.
    fn event(&mut self, name: &str, data: &str, out: &mut Vec<ModelEvent>) -> Result<bool>;

    /// The body ended cleanly before [`ModelEvent::Stop`]. A protocol that accepts some such
    /// endings pushes `Stop` here; by default nothing happens (and the caller reports the
    /// stream as incomplete).
    fn end(&mut self, out: &mut Vec<ModelEvent>) -> Result<()> {
        let _ = out;
        Ok(())
    }
}

/// A request body: `head` (a struct serialized as a JSON object) with one more field, `field`,
/// last: an array whose inside `items` writes (e.g. [`crate::Messages::write_encoded`]).
/// Serializing the head alone and writing the array's pieces straight after it is what lets a
/// long conversation's kept encodings be reused instead of re-encoded.
pub(crate) fn body_with_array(
    head: &impl serde::Serialize,
    field: &str,
    items: impl FnOnce(&mut BodyWriter) -> Result<()>,
) -> Result<RequestBody> {
    let mut start = serde_json::to_vec(head).map_err(unserializable)?;
    if start.pop() != Some(b'}') {
        return Err(crate::Error::Config {
            message: "cannot serialize request: the head is not an object".into(),
        });
    }
    if start.last() != Some(&b'{') {
        start.push(b',');
    }
    serde_json::to_writer(&mut start, field).map_err(unserializable)?;
    start.extend_from_slice(b":[");
    let mut out = BodyWriter::new();
    out.write(&start);
    items(&mut out)?;
    out.write(b"]}");
    Ok(out.finish())
}

/// A request that cannot be serialized (a map with non-string keys cannot happen with our
/// types; the error stays a configuration error rather than a panic).
pub(crate) fn unserializable(e: serde_json::Error) -> crate::Error {
    crate::Error::Config {
        message: format!("cannot serialize request: {e}"),
    }
}

/// Decodes a streamed SSE answer of protocol `P` into [`ModelEvent`]s.
#[derive(Debug, Default)]
pub struct SseDecoder<P> {
    sse: SseParser,
    events: Vec<SseEvent>,
    protocol: P,
    done: bool,
}

impl<P: Protocol> SseDecoder<P> {
    /// A fresh decoder.
    pub fn new() -> Self {
        Self::default()
    }

    /// Hands the parsed events to the protocol; how many were part of the answer.
    fn drain(&mut self, out: &mut Vec<ModelEvent>) -> Result<usize> {
        let events = std::mem::take(&mut self.events);
        let mut answer = 0;
        for event in &events {
            let data = event.data.trim();
            if self.done || data.is_empty() {
                continue;
            }
            let from = out.len();
            let part_of_answer = self.protocol.event(&event.event, data, out)?;
            self.note_stop(out, from);
            answer += usize::from(part_of_answer);
        }
        // The buffer's capacity is kept for the next chunk.
        self.events = events;
        self.events.clear();
        Ok(answer)
    }

    fn note_stop(&mut self, out: &[ModelEvent], from: usize) {
        self.done = out[from..]
            .iter()
            .any(|e| matches!(e, ModelEvent::Stop { .. }));
    }
}

impl<P: Protocol> Decoder for SseDecoder<P> {
    fn feed(&mut self, bytes: &[u8], out: &mut Vec<ModelEvent>) -> Result<usize> {
        self.sse.feed(bytes, &mut self.events)?;
        self.drain(out)
    }

    fn finish(&mut self, out: &mut Vec<ModelEvent>) -> Result<()> {
        self.sse.finish(&mut self.events);
        self.drain(out)?;
        if !self.done {
            let from = out.len();
            self.protocol.end(out)?;
            self.note_stop(out, from);
        }
        Ok(())
    }

    fn is_done(&self) -> bool {
        self.done
    }
}

/// A model behind an HTTP endpoint speaking protocol `P`.
#[derive(Debug)]
pub struct HttpModel<P> {
    http: HttpClient,
    model: String,
    effort: bool,
    protocol: PhantomData<fn() -> P>,
}

impl<P: Protocol> HttpModel<P> {
    pub(crate) fn new(http: HttpClient, model: String) -> Self {
        Self {
            http,
            model,
            effort: P::EFFORT,
            protocol: PhantomData,
        }
    }

    /// Sends [`ModelRequest::effort`] even if the protocol does not always take it (the
    /// configuration says this server does).
    pub(crate) fn with_effort(mut self, effort: bool) -> Self {
        self.effort |= effort;
        self
    }
}

#[async_trait]
impl<P: Protocol> Model for HttpModel<P> {
    fn describe(&self) -> String {
        format!(
            "{}:{} at {}",
            P::KIND.as_str(),
            self.model,
            self.http.base()
        )
    }

    fn supports_output_schema(&self) -> bool {
        P::OUTPUT_SCHEMA
    }

    fn supports_effort(&self) -> bool {
        self.effort
    }

    async fn stream(
        &self,
        mut request: ModelRequest,
        cancel: CancellationToken,
    ) -> Result<ModelStream> {
        if request.model.is_empty() {
            request.model.clone_from(&self.model);
        }
        if !self.effort {
            request.effort = None;
        }
        let body = P::request_body(&request)?;
        self.http
            .stream(
                P::PATH,
                P::AUTH,
                P::HEADERS,
                body,
                SseDecoder::<P>::new(),
                cancel,
            )
            .await
    }
}
