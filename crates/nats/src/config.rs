//! The `config:` block of a preset row of `kind: nats`, and how a client connects.

use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// How long the provider waits, in milliseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Timeouts {
    /// Connecting to the server. Default 5 s.
    pub connect_ms: u64,
    /// After a cancel, how long the worker holding the run has to report its end before the
    /// run ends `cancelled` without it. Default 10 s.
    pub cancel_ms: u64,
    /// The longest one run may take, queueing and redeliveries included (the run is then
    /// cancelled and fails); none by default.
    pub total_ms: Option<u64>,
}

impl Default for Timeouts {
    fn default() -> Self {
        Self {
            connect_ms: 5_000,
            cancel_ms: 10_000,
            total_ms: None,
        }
    }
}

/// How to authenticate to the server: environment variable names, read once when the provider
/// (or the worker) is built; never the secret itself.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Credentials {
    /// The variable holding a token.
    pub token_env: Option<String>,
    /// The variable holding a user name (with `password_env`).
    pub user_env: Option<String>,
    /// The variable holding the user's password.
    pub password_env: Option<String>,
}

impl Credentials {
    /// The variables named, to be kept from children.
    pub fn variables(&self) -> Vec<String> {
        [&self.token_env, &self.user_env, &self.password_env]
            .into_iter()
            .flatten()
            .cloned()
            .collect()
    }

    /// Reads the variables through `lookup` (the process environment, in the CLI).
    pub fn resolve(&self, lookup: impl Fn(&str) -> Option<String>) -> Result<Auth> {
        let read = |name: &String| {
            lookup(name)
                .filter(|v| !v.is_empty())
                .ok_or_else(|| Error::config(format!("{name} is not set (or empty)")))
        };
        match (&self.token_env, &self.user_env, &self.password_env) {
            (Some(token), None, None) => Ok(Auth::Token(read(token)?)),
            (None, Some(user), Some(password)) => {
                Ok(Auth::UserPassword(read(user)?, read(password)?))
            }
            (None, None, None) => Ok(Auth::None),
            _ => Err(Error::config(
                "credentials: give token_env alone, or user_env with password_env",
            )),
        }
    }
}

/// Resolved credentials.
#[derive(Clone, Default, PartialEq, Eq)]
pub enum Auth {
    /// None.
    #[default]
    None,
    /// A token.
    Token(String),
    /// A user and a password.
    UserPassword(String, String),
}

impl std::fmt::Debug for Auth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::None => "Auth::None",
            Self::Token(_) => "Auth::Token(..)",
            Self::UserPassword(..) => "Auth::UserPassword(..)",
        })
    }
}

/// TLS beyond a `tls://` URL checked against the system's roots: PEM files, named by path (the
/// private key stays in its file; a preset can take the path from a variable, `${VAR}`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Tls {
    /// CA certificates to trust besides the system's (a private CA, a self-signed server).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ca_file: Option<PathBuf>,
    /// The client's certificate, for a server that verifies clients (with `key_file`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cert_file: Option<PathBuf>,
    /// The client's private key (with `cert_file`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key_file: Option<PathBuf>,
}

impl Tls {
    /// Whether anything is set (then TLS is required, whatever the URL's scheme).
    pub fn is_set(&self) -> bool {
        self.ca_file.is_some() || self.cert_file.is_some() || self.key_file.is_some()
    }

    /// A client certificate comes with its key.
    pub fn validate(&self) -> Result<()> {
        if self.cert_file.is_some() != self.key_file.is_some() {
            return Err(Error::config(
                "tls: give cert_file with key_file (a client certificate and its key)",
            ));
        }
        Ok(())
    }
}

/// The `config:` block of a `nats` row: which server, which worker-side row, how to
/// authenticate.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NatsConfig {
    /// The server's URL (`nats://host:4222`).
    pub url: String,
    /// The row the workers run (a provider of the worker's preset), e.g. `claude`.
    pub row: String,
    /// The variable holding a token (`authorization { token: … }` on the server).
    #[serde(default)]
    pub token_env: Option<String>,
    /// The variable holding a user name (with `password_env`).
    #[serde(default)]
    pub user_env: Option<String>,
    /// The variable holding the user's password.
    #[serde(default)]
    pub password_env: Option<String>,
    /// TLS files (a private CA, a client certificate).
    #[serde(default)]
    pub tls: Tls,
    /// Timeouts.
    #[serde(default)]
    pub timeouts: Timeouts,
}

impl NatsConfig {
    /// A config for `row` on the server at `url` with the defaults.
    pub fn new(url: impl Into<String>, row: impl Into<String>) -> Self {
        Self {
            url: url.into(),
            row: row.into(),
            token_env: None,
            user_env: None,
            password_env: None,
            tls: Tls::default(),
            timeouts: Timeouts::default(),
        }
    }

    /// Checks what serde cannot.
    pub fn validate(&self) -> Result<()> {
        check_url(&self.url)?;
        self.tls.validate()?;
        if self.row.trim().is_empty() {
            return Err(Error::config("`row` is empty"));
        }
        if self.timeouts.connect_ms == 0 || self.timeouts.cancel_ms == 0 {
            return Err(Error::config(
                "`timeouts.connect_ms` and `timeouts.cancel_ms` must be above zero",
            ));
        }
        Ok(())
    }

    /// The credentials the row names.
    pub fn credentials(&self) -> Credentials {
        Credentials {
            token_env: self.token_env.clone(),
            user_env: self.user_env.clone(),
            password_env: self.password_env.clone(),
        }
    }

    /// The connect timeout.
    pub fn connect(&self) -> Duration {
        Duration::from_millis(self.timeouts.connect_ms)
    }
}

/// A `nats://`, `tls://` or `ws://` URL (a bare `host:port` is refused: say what is meant).
pub(crate) fn check_url(url: &str) -> Result<()> {
    let url = url.trim();
    if ["nats://", "tls://", "ws://", "wss://"]
        .iter()
        .any(|scheme| url.starts_with(scheme))
    {
        Ok(())
    } else {
        Err(Error::config(format!(
            "`url` {url:?} is not a nats:// (or tls://) URL"
        )))
    }
}

/// A connection, and a count of its connects that goes up each time the client connects again
/// after losing the server (a server restarted from its store has lost what lived in memory,
/// a run's ordered consumer among them).
pub(crate) type Connection = (async_nats::Client, tokio::sync::watch::Receiver<u64>);

/// Connects to `url` once (no retry: a server that is not there is an error now).
pub(crate) async fn connect(
    url: &str,
    auth: &Auth,
    tls: &Tls,
    name: &str,
    timeout: Duration,
) -> Result<Connection> {
    let (connects, watching) = tokio::sync::watch::channel(0_u64);
    let connects = std::sync::Arc::new(connects);
    let mut options = async_nats::ConnectOptions::new()
        .name(name)
        .connection_timeout(timeout)
        .event_callback(move |event| {
            let connects = std::sync::Arc::clone(&connects);
            async move {
                if let async_nats::Event::Connected = event {
                    connects.send_modify(|count| *count += 1);
                }
            }
        });
    if tls.is_set() {
        tls.validate()?;
        options = options.require_tls(true);
    }
    if let Some(ca) = &tls.ca_file {
        options = options.add_root_certificates(ca.clone());
    }
    if let (Some(cert), Some(key)) = (&tls.cert_file, &tls.key_file) {
        options = options.add_client_certificate(cert.clone(), key.clone());
    }
    match auth {
        Auth::None => {}
        Auth::Token(token) => options = options.token(token.clone()),
        Auth::UserPassword(user, password) => {
            options = options.user_and_password(user.clone(), password.clone());
        }
    }
    let client = options.connect(url.trim()).await.map_err(|error| {
        use async_nats::ConnectErrorKind as Kind;
        match error.kind() {
            Kind::AuthorizationViolation | Kind::Authentication => Error::Unauthorized {
                url: url.to_owned(),
            },
            Kind::Tls => Error::Tls {
                url: url.to_owned(),
                message: error.to_string(),
            },
            // The handshake's own failures come as IO errors (`invalid peer certificate:
            // UnknownIssuer`, an alert from the server): told apart by what they say.
            Kind::Io if tls_failure(&error) => Error::Tls {
                url: url.to_owned(),
                message: error.to_string(),
            },
            _ => Error::unreachable(url, error),
        }
    })?;
    Ok((client, watching))
}

/// Whether `error` (or what caused it) is a failed TLS handshake.
fn tls_failure(error: &(dyn std::error::Error + 'static)) -> bool {
    let mut next = Some(error);
    while let Some(error) = next {
        let text = error.to_string().to_ascii_lowercase();
        if ["certificate", "handshake", "tls"]
            .iter()
            .any(|word| text.contains(word))
        {
            return true;
        }
        next = error.source();
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn reads_a_row() {
        let config: NatsConfig = serde_json::from_value(serde_json::json!({
            "url": "nats://queue.example.com:4222",
            "row": "claude",
            "token_env": "NATS_TOKEN",
            "timeouts": {"cancel_ms": 2000},
        }))
        .unwrap();
        config.validate().unwrap();
        assert_eq!(
            config.credentials().variables(),
            vec!["NATS_TOKEN".to_owned()]
        );
        assert_eq!(
            config
                .credentials()
                .resolve(|_| Some("s3cret".to_owned()))
                .unwrap(),
            Auth::Token("s3cret".to_owned())
        );
        assert_eq!(
            format!("{:?}", Auth::Token("s3cret".to_owned())),
            "Auth::Token(..)"
        );
    }

    #[test]
    fn refuses_what_cannot_work() {
        assert!(
            serde_json::from_value::<NatsConfig>(
                serde_json::json!({"url": "nats://a", "row": "r", "nope": 1})
            )
            .is_err()
        );
        assert!(NatsConfig::new("http://a", "r").validate().is_err());
        assert!(NatsConfig::new("nats://a", " ").validate().is_err());
        let mut no_key = NatsConfig::new("tls://a", "r");
        no_key.tls.cert_file = Some("client.pem".into());
        assert!(no_key.validate().is_err());
        let half = Credentials {
            user_env: Some("U".to_owned()),
            ..Credentials::default()
        };
        assert!(half.resolve(|_| Some("x".to_owned())).is_err());
        let unset = Credentials {
            token_env: Some("T".to_owned()),
            ..Credentials::default()
        };
        assert!(unset.resolve(|_| None).is_err());
    }
}
