//! Draining a stream into a finished assistant message.

use futures::StreamExt;
use serde_json::Value;
use subagent_session::{ContentBlock, Message, Role, StopReason};
use tokio_util::sync::CancellationToken;

use crate::error::{Error, Result};
use crate::types::{Model, ModelEvent, ModelRequest, ModelStream, Usage};

/// A finished answer.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelResponse {
    /// The assistant message: thinking, text and tool calls in the order they streamed.
    pub message: Message,
    /// Token counts (zero when the server reported none).
    pub usage: Usage,
    /// Why the answer ended.
    pub stop: StopReason,
}

/// Builds an assistant message from events, one at a time (for callers that forward events
/// while they arrive).
#[derive(Debug, Default)]
pub struct ResponseBuilder {
    blocks: Vec<ContentBlock>,
    open: Vec<(usize, String, String, String)>,
    usage: Usage,
    stop: Option<StopReason>,
}

impl ResponseBuilder {
    /// An empty builder.
    pub fn new() -> Self {
        Self::default()
    }

    /// Applies one event. An event after `Stop` is a protocol error.
    pub fn push(&mut self, event: ModelEvent) -> Result<()> {
        if self.stop.is_some() {
            return Err(Error::protocol("event after the end of the answer"));
        }
        match event {
            ModelEvent::TextDelta { text } => match self.blocks.last_mut() {
                Some(ContentBlock::Text { text: last }) => last.push_str(&text),
                _ => self.blocks.push(ContentBlock::Text { text }),
            },
            ModelEvent::ThinkingDelta { text } => match self.blocks.last_mut() {
                Some(ContentBlock::Thinking { thinking, .. }) => thinking.push_str(&text),
                _ => self.blocks.push(ContentBlock::Thinking {
                    thinking: text,
                    signature: None,
                }),
            },
            ModelEvent::ThinkingSignature { signature } => {
                let target = self
                    .blocks
                    .iter_mut()
                    .rev()
                    .find(|b| matches!(b, ContentBlock::Thinking { .. }));
                match target {
                    Some(ContentBlock::Thinking { signature: s, .. }) => {
                        s.get_or_insert_with(String::new).push_str(&signature);
                    }
                    _ => self.blocks.push(ContentBlock::Thinking {
                        thinking: String::new(),
                        signature: Some(signature),
                    }),
                }
            }
            ModelEvent::ToolCallStart { index, id, name } => {
                self.open.push((index, id, name, String::new()));
            }
            ModelEvent::ToolCallDelta { index, fragment } => {
                if let Some(open) = self.open.iter_mut().find(|o| o.0 == index) {
                    open.3.push_str(&fragment);
                }
            }
            ModelEvent::ToolCallEnd {
                index,
                id,
                name,
                input,
            } => {
                self.open.retain(|o| o.0 != index);
                self.blocks.push(ContentBlock::ToolUse { id, name, input });
            }
            ModelEvent::Usage { usage } => self.usage = usage,
            ModelEvent::Stop { reason } => {
                if let Some((_, id, name, _)) = self.open.first() {
                    return Err(Error::protocol(format!(
                        "answer ended with tool call {name} ({id}) still open"
                    )));
                }
                self.stop = Some(reason);
            }
        }
        Ok(())
    }

    /// Whether `Stop` was seen.
    pub fn is_finished(&self) -> bool {
        self.stop.is_some()
    }

    /// The finished response; a protocol error when the stream never said it was complete
    /// (partial text is never a success).
    pub fn finish(self) -> Result<ModelResponse> {
        let Some(stop) = self.stop else {
            return Err(Error::protocol(
                "the stream ended before the model finished its answer",
            ));
        };
        Ok(ModelResponse {
            message: Message::new(Role::Assistant, self.blocks),
            usage: self.usage,
            stop,
        })
    }
}

/// Drains a stream into the finished answer. The first error of the stream is returned; a
/// stream that ends without [`ModelEvent::Stop`] is a [`Error::Protocol`].
pub async fn collect(mut stream: ModelStream) -> Result<ModelResponse> {
    let mut builder = ResponseBuilder::new();
    while let Some(event) = stream.next().await {
        builder.push(event?)?;
        if builder.is_finished() {
            break;
        }
    }
    builder.finish()
}

/// Calls the model and drains its answer: `model.stream(...)` then [`collect`].
pub async fn complete(
    model: &dyn Model,
    request: ModelRequest,
    cancel: CancellationToken,
) -> Result<ModelResponse> {
    collect(model.stream(request, cancel).await?).await
}

/// Parses accumulated tool-call arguments: empty means `{}`.
pub(crate) fn parse_arguments(name: &str, raw: &str) -> Result<Value> {
    if raw.trim().is_empty() {
        return Ok(Value::Object(serde_json::Map::new()));
    }
    serde_json::from_str(raw).map_err(|e| {
        Error::protocol(format!(
            "arguments of tool call {name} are not valid JSON: {e}"
        ))
    })
}
