//! The JSON-RPC 2.0 binding: envelopes, method names, and the errors with A2A's codes.
//!
//! Every JSON-RPC answer is HTTP 200, errors included. An error's `data` is an array of typed
//! details (`google.rpc.ErrorInfo`); ours add a second `ErrorInfo` in the domain
//! [`crate::EXTENSION_URI`] whose `reason` is the stable [`ErrorCode`].

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use subagent_core::ErrorCode;

/// The version header every request must carry.
pub const VERSION_HEADER: &str = "A2A-Version";
/// The version we speak.
pub const PROTOCOL_VERSION: &str = "1.0";
/// The header naming the extensions a client asks for (comma-separated URIs).
pub const EXTENSIONS_HEADER: &str = "A2A-Extensions";
/// The domain of A2A's own `ErrorInfo` details.
pub const A2A_DOMAIN: &str = "a2a-protocol.org";
/// The `@type` of an `ErrorInfo` detail.
pub const ERROR_INFO_TYPE: &str = "type.googleapis.com/google.rpc.ErrorInfo";

/// The methods of the JSON-RPC binding (PascalCase; 0.3's `message/send` are unknown).
pub mod method {
    /// Send a message, answer when the task ends.
    pub const SEND_MESSAGE: &str = "SendMessage";
    /// Send a message, answer with an SSE stream.
    pub const SEND_STREAMING_MESSAGE: &str = "SendStreamingMessage";
    /// A task's snapshot.
    pub const GET_TASK: &str = "GetTask";
    /// Tasks, paged.
    pub const LIST_TASKS: &str = "ListTasks";
    /// Cancel a task.
    pub const CANCEL_TASK: &str = "CancelTask";
    /// A live task's snapshot then its new events, as SSE.
    pub const SUBSCRIBE_TO_TASK: &str = "SubscribeToTask";
}

/// Whether a version header value is one we speak: any `1.x` (the Python SDK's rule). Absent
/// or empty means 0.3.
pub fn version_supported(header: Option<&str>) -> bool {
    header.is_some_and(|value| {
        let value = value.trim();
        value == "1" || value.starts_with("1.")
    })
}

/// A request.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Request {
    /// `"2.0"`.
    pub jsonrpc: String,
    /// A string or a number, echoed; `null` when absent.
    #[serde(default)]
    pub id: Value,
    /// The method.
    pub method: String,
    /// Its params.
    #[serde(default)]
    pub params: Value,
}

impl Request {
    /// A request of `method` with `params`.
    pub fn new(id: impl Into<Value>, method: &str, params: Value) -> Self {
        Self {
            jsonrpc: "2.0".to_owned(),
            id: id.into(),
            method: method.to_owned(),
            params,
        }
    }
}

/// An error object.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, thiserror::Error)]
#[error("{message} (JSON-RPC error {code})")]
pub struct RpcError {
    /// The code (A2A's -32001…-32009 or JSON-RPC's).
    pub code: i64,
    /// For people.
    pub message: String,
    /// Typed details.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

/// A response: a result or an error.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Response {
    /// `"2.0"`.
    pub jsonrpc: String,
    /// The request's id.
    #[serde(default)]
    pub id: Value,
    /// The result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    /// The error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<RpcError>,
}

impl Response {
    /// A success.
    pub fn result(id: Value, result: Value) -> Self {
        Self {
            jsonrpc: "2.0".to_owned(),
            id,
            result: Some(result),
            error: None,
        }
    }

    /// A failure.
    pub fn error(id: Value, error: RpcError) -> Self {
        Self {
            jsonrpc: "2.0".to_owned(),
            id,
            result: None,
            error: Some(error),
        }
    }
}

/// A2A's error kinds with their JSON-RPC codes and `ErrorInfo` reasons.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// -32700.
    ParseError,
    /// -32600.
    InvalidRequest,
    /// -32601.
    MethodNotFound,
    /// -32602.
    InvalidParams,
    /// -32603.
    Internal,
    /// -32001.
    TaskNotFound,
    /// -32002.
    TaskNotCancelable,
    /// -32003.
    PushNotificationNotSupported,
    /// -32004.
    UnsupportedOperation,
    /// -32005.
    ContentTypeNotSupported,
    /// -32006.
    InvalidAgentResponse,
    /// -32007.
    ExtendedAgentCardNotConfigured,
    /// -32008.
    ExtensionSupportRequired,
    /// -32009.
    VersionNotSupported,
}

impl Kind {
    /// Every kind.
    pub const ALL: [Kind; 14] = [
        Self::ParseError,
        Self::InvalidRequest,
        Self::MethodNotFound,
        Self::InvalidParams,
        Self::Internal,
        Self::TaskNotFound,
        Self::TaskNotCancelable,
        Self::PushNotificationNotSupported,
        Self::UnsupportedOperation,
        Self::ContentTypeNotSupported,
        Self::InvalidAgentResponse,
        Self::ExtendedAgentCardNotConfigured,
        Self::ExtensionSupportRequired,
        Self::VersionNotSupported,
    ];

    /// The JSON-RPC code.
    pub fn code(self) -> i64 {
        match self {
            Self::ParseError => -32700,
            Self::InvalidRequest => -32600,
            Self::MethodNotFound => -32601,
            Self::InvalidParams => -32602,
            Self::Internal => -32603,
            Self::TaskNotFound => -32001,
            Self::TaskNotCancelable => -32002,
            Self::PushNotificationNotSupported => -32003,
            Self::UnsupportedOperation => -32004,
            Self::ContentTypeNotSupported => -32005,
            Self::InvalidAgentResponse => -32006,
            Self::ExtendedAgentCardNotConfigured => -32007,
            Self::ExtensionSupportRequired => -32008,
            Self::VersionNotSupported => -32009,
        }
    }

    /// The `ErrorInfo` reason.
    pub fn reason(self) -> &'static str {
        match self {
            Self::ParseError | Self::InvalidRequest => "INVALID_REQUEST",
            Self::MethodNotFound => "METHOD_NOT_FOUND",
            Self::InvalidParams => "INVALID_PARAMS",
            Self::Internal => "INTERNAL_ERROR",
            Self::TaskNotFound => "TASK_NOT_FOUND",
            Self::TaskNotCancelable => "TASK_NOT_CANCELABLE",
            Self::PushNotificationNotSupported => "PUSH_NOTIFICATION_NOT_SUPPORTED",
            Self::UnsupportedOperation => "UNSUPPORTED_OPERATION",
            Self::ContentTypeNotSupported => "CONTENT_TYPE_NOT_SUPPORTED",
            Self::InvalidAgentResponse => "INVALID_AGENT_RESPONSE",
            Self::ExtendedAgentCardNotConfigured => "EXTENDED_AGENT_CARD_NOT_CONFIGURED",
            Self::ExtensionSupportRequired => "EXTENSION_SUPPORT_REQUIRED",
            Self::VersionNotSupported => "VERSION_NOT_SUPPORTED",
        }
    }

    /// The kind of a code, if A2A or JSON-RPC defines it.
    pub fn from_code(code: i64) -> Option<Self> {
        Self::ALL.into_iter().find(|kind| kind.code() == code)
    }
}

/// An `ErrorInfo` detail.
pub fn error_info(reason: &str, domain: &str, metadata: Value) -> Value {
    json!({"@type": ERROR_INFO_TYPE, "reason": reason, "domain": domain, "metadata": metadata})
}

impl RpcError {
    /// An error of `kind` with A2A's `ErrorInfo` detail.
    pub fn new(kind: Kind, message: impl Into<String>) -> Self {
        Self {
            code: kind.code(),
            message: message.into(),
            data: Some(Value::Array(vec![error_info(
                kind.reason(),
                A2A_DOMAIN,
                json!({}),
            )])),
        }
    }

    /// Adds our `ErrorInfo` (domain [`crate::EXTENSION_URI`], reason the stable code).
    pub fn with_code(mut self, code: ErrorCode, metadata: Value) -> Self {
        let ours = error_info(code.as_str(), crate::EXTENSION_URI, metadata);
        match &mut self.data {
            Some(Value::Array(details)) => details.push(ours),
            _ => self.data = Some(Value::Array(vec![ours])),
        }
        self
    }

    /// The error of a refusal by the registry's gate: `-32602` (invalid params) for what the
    /// caller asked wrong, `-32004` (unsupported operation) for what this agent cannot do,
    /// `-32603` otherwise; our stable code in the data either way.
    pub fn from_core(error: &subagent_core::Error) -> Self {
        let code = error.code();
        let kind = match code {
            ErrorCode::UnsupportedCapability | ErrorCode::NotResumable => {
                Kind::UnsupportedOperation
            }
            ErrorCode::SpawnFailed
            | ErrorCode::Protocol
            | ErrorCode::Cancelled
            | ErrorCode::MissingApiKey => Kind::Internal,
            _ => Kind::InvalidParams,
        };
        Self::new(kind, error.to_string()).with_code(code, refusal_fields(error))
    }

    /// The seam's error this one carries, when a `subagent serve` sent it: the same variant
    /// with the same fields (read from our `ErrorInfo`'s metadata), so a refusal crosses the
    /// wire with its code unchanged. `None` for an error without our detail.
    pub fn core_error(&self) -> Option<subagent_core::Error> {
        use subagent_core::Error as E;
        let code = self.stable_code()?;
        let fields = self
            .our_detail()?
            .get("metadata")
            .cloned()
            .unwrap_or(Value::Null);
        let text = |key: &str| {
            fields
                .get(key)
                .and_then(Value::as_str)
                .map(str::to_owned)
                .unwrap_or_default()
        };
        let list = |key: &str| -> Vec<String> {
            text(key)
                .split(',')
                .filter(|item| !item.is_empty())
                .map(str::to_owned)
                .collect()
        };
        let number = |key: &str| text(key).parse::<u32>().unwrap_or_default();
        let message = match text("message") {
            empty if empty.is_empty() => self.message.clone(),
            message => message,
        };
        Some(match code {
            ErrorCode::UnknownProvider => E::UnknownProvider {
                name: text("name"),
                known: list("known"),
            },
            ErrorCode::DuplicateProvider => E::DuplicateProvider { name: text("name") },
            ErrorCode::UnsupportedCapability => E::UnsupportedCapability {
                provider: text("provider"),
                missing: list("missing")
                    .iter()
                    .filter_map(|name| {
                        subagent_core::Capability::ALL
                            .into_iter()
                            .find(|capability| capability.as_str() == name)
                    })
                    .collect(),
                because: Some(text("because")).filter(|why| !why.is_empty()),
            },
            ErrorCode::DepthExceeded => E::DepthExceeded {
                child_depth: number("childDepth"),
                max_depth: number("maxDepth"),
            },
            ErrorCode::NestedDelegationForbidden => {
                E::NestedDelegationForbidden { reason: message }
            }
            ErrorCode::UnknownAgentType => E::UnknownAgentType {
                name: text("name"),
                available: list("available"),
            },
            ErrorCode::AgentTypeNotAllowed => E::AgentTypeNotAllowed {
                name: text("name"),
                allowed: list("allowed"),
            },
            ErrorCode::SpawnFailed => E::SpawnFailed { message },
            ErrorCode::Cancelled => E::Cancelled,
            ErrorCode::Unauthorized => E::Unauthorized { message },
            ErrorCode::NotResumable => E::NotResumable { message },
            ErrorCode::Protocol => E::Protocol { message },
            ErrorCode::MissingApiKey => E::MissingApiKey { message },
            _ => E::InvalidArguments { message },
        })
    }

    fn our_detail(&self) -> Option<&Value> {
        self.data.as_ref()?.as_array()?.iter().find(|detail| {
            detail.get("domain").and_then(Value::as_str) == Some(crate::EXTENSION_URI)
        })
    }

    /// Our stable code, when the data carries one (from a `subagent serve`).
    pub fn stable_code(&self) -> Option<ErrorCode> {
        let reason = self.our_detail()?.get("reason")?.clone();
        serde_json::from_value(reason).ok()
    }

    /// A2A's kind of this error, when the code is one it defines.
    pub fn kind(&self) -> Option<Kind> {
        Kind::from_code(self.code)
    }
}

/// A refusal's fields as `ErrorInfo` metadata (string values, lists comma-separated), read back
/// by [`RpcError::core_error`].
fn refusal_fields(error: &subagent_core::Error) -> Value {
    use subagent_core::Error as E;
    let joined = |items: &[String]| items.join(",");
    match error {
        E::UnknownProvider { name, known } => json!({"name": name, "known": joined(known)}),
        E::DuplicateProvider { name } => json!({"name": name}),
        E::UnsupportedCapability {
            provider,
            missing,
            because,
        } => {
            let mut data = json!({
                "provider": provider,
                "missing": missing.iter().map(|c| c.as_str()).collect::<Vec<_>>().join(","),
            });
            if let Some(why) = because {
                data["because"] = json!(why);
            }
            data
        }
        E::DepthExceeded {
            child_depth,
            max_depth,
        } => json!({"childDepth": child_depth.to_string(), "maxDepth": max_depth.to_string()}),
        E::UnknownAgentType { name, available } => {
            json!({"name": name, "available": joined(available)})
        }
        E::AgentTypeNotAllowed { name, allowed } => {
            json!({"name": name, "allowed": joined(allowed)})
        }
        E::NestedDelegationForbidden { reason: message }
        | E::InvalidArguments { message }
        | E::SpawnFailed { message }
        | E::Unauthorized { message }
        | E::NotResumable { message }
        | E::Protocol { message } => json!({"message": message}),
        _ => json!({}),
    }
}
