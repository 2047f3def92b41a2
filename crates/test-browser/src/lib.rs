//! A real headless Chromium for the tests of a web page (`subagent ui`'s): [`Browser::launch`]
//! starts one, [`Browser::open`] opens a [`Page`] at a URL, and the page is driven and read
//! through the Chrome DevTools Protocol: [`Page::eval`] (a script's value), [`Page::wait_for`]
//! (a condition, polled), [`Page::click`] (a real mouse click on an element),
//! [`Page::screenshot`] (a PNG file) and [`Page::console_errors`] (what the page reported as
//! errors).
//!
//! Which Chromium: the one `SUBAGENT_CHROMIUM` names, else Debian's binary
//! (`/usr/lib/chromium/chromium`, without the wrapper script that adds Debian's flags and Google
//! API keys), else `chromium`, `chromium-browser`, `google-chrome-stable` or `google-chrome` on
//! `PATH`. `cargo xtask install-clis` (run by `cargo xtask test`) installs Debian's `chromium`
//! package when none is there; a missing browser is [`Error::NotFound`], which says how to
//! install one.
//!
//! The browser runs through `subagent-process`, as every child of the project does: its own
//! process group, the parent-death signal (a test killed outright takes it along), a fresh
//! profile in a temporary directory (also its `HOME`), and the whole tree killed when the
//! [`Browser`] is dropped, a panicking test's included; [`Browser::close`] also waits until no
//! process of that profile is left. Its flags keep it on 127.0.0.1: no background networking,
//! component or extension updates, sync, crash reports, first-run tasks or default apps, and
//! every host but `localhost` and `127.0.0.1` resolves to nothing. `--no-sandbox` only when
//! running as root (Chromium refuses to start as root with its sandbox).
//!
//! The protocol goes over a WebSocket to `--remote-debugging-port=0` on 127.0.0.1, spoken by the
//! few lines of `ws.rs`, not over `--remote-debugging-pipe`: the pipe needs the
//! browser's fds 3 and 4 set between fork and exec, which only an `unsafe` `pre_exec` or a
//! change to `subagent-process`'s clone code could do, and the port is what every WebDriver and
//! CDP client uses. The cost: while a test runs, another local process could connect to that
//! port too (it is bound to 127.0.0.1 only, for the life of one test).
//!
//! Deliberately not here: waiting on protocol events (a test waits for what the page shows,
//! [`Page::wait_for`]), keyboard input, several windows' layouts, and any assertion: the
//! page reports, tests decide.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use subagent_process::{ProcessSpec, Signal, StopPolicy};

use subagent_test_support::procs;

mod cdp;
mod ws;

/// The variable naming a Chromium or Chrome to use instead of the one found.
pub const ENV: &str = "SUBAGENT_CHROMIUM";

/// How to get a browser, for the error that says none is there.
pub const INSTALL_ADVICE: &str = "install Debian's `chromium` package (`cargo xtask install-clis` \
     does, as root; or `sudo apt-get install chromium`; `chromium-browser` or Google Chrome \
     elsewhere), or set SUBAGENT_CHROMIUM=/path/to/chromium";

/// Debian's browser binary, behind the `/usr/bin/chromium` wrapper script.
const DEBIAN_BINARY: &str = "/usr/lib/chromium/chromium";

/// The names looked for on `PATH` (xtask's `chromium.rs` has the same list).
const NAMES: &[&str] = &[
    "chromium",
    "chromium-browser",
    "google-chrome-stable",
    "google-chrome",
];

/// How long the browser may take to start and say where it listens.
const LAUNCH_TIMEOUT: Duration = Duration::from_secs(30);

/// How long one protocol command may take.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(30);

/// How long an opened page may take to load.
const LOAD_TIMEOUT: Duration = Duration::from_secs(30);

/// The page's text kept in a [`Error::Timeout`].
const MAX_TEXT_CHARS: usize = 4000;

/// What went wrong driving the browser.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// No browser was found. Returned by [`Browser::launch`]; retrying helps once one is
    /// installed (the message says how).
    NotFound(String),
    /// The browser did not start or did not say where it listens. Returned by
    /// [`Browser::launch`]; the message carries its stderr's tail.
    Launch(String),
    /// A protocol command failed, or the browser went away. Returned by every [`Page`] method.
    Protocol(String),
    /// A script threw or its promise was rejected. Returned by [`Page::eval`] and
    /// [`Page::click`] (no such element).
    Script(String),
    /// A condition did not hold in time. Returned by [`Page::wait_for`], with the condition's
    /// last value, the page's text and its console errors.
    Timeout(String),
    /// Reading or writing a file, or the socket. Returned by [`Page::screenshot`] and
    /// [`Browser::launch`].
    Io(std::io::Error),
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::NotFound(what) => write!(f, "no Chromium: {what}"),
            Self::Launch(what) => write!(f, "Chromium did not start: {what}"),
            Self::Protocol(what) => write!(f, "DevTools protocol: {what}"),
            Self::Script(what) => write!(f, "the page's script failed: {what}"),
            Self::Timeout(what) => write!(f, "timed out: {what}"),
            Self::Io(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for Error {}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Self {
        Self::Io(e)
    }
}

/// `Result` with this module's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The browser to start: [`ENV`], Debian's binary, or a known name on `PATH`.
///
/// # Errors
/// [`Error::NotFound`] when there is none.
pub fn find() -> Result<PathBuf> {
    if let Some(path) = std::env::var_os(ENV) {
        let path = PathBuf::from(path);
        return if path.is_file() {
            Ok(path)
        } else {
            Err(Error::NotFound(format!(
                "{ENV}={} is no file; {INSTALL_ADVICE}",
                path.display()
            )))
        };
    }
    if Path::new(DEBIAN_BINARY).is_file() {
        return Ok(DEBIAN_BINARY.into());
    }
    std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .flat_map(|dir| NAMES.iter().map(move |name| dir.join(name)))
        .find(|candidate| candidate.is_file())
        .ok_or_else(|| {
            Error::NotFound(format!(
                "none of {} on PATH; {INSTALL_ADVICE}",
                NAMES.join(", ")
            ))
        })
}

/// Whether this process runs as root (Chromium's sandbox refuses root).
fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status").is_ok_and(|status| {
        status
            .lines()
            .find_map(|line| line.strip_prefix("Uid:"))
            .and_then(|ids| ids.split_whitespace().nth(1))
            == Some("0")
    })
}

/// The flags every launch uses (after `--user-data-dir`): headless, on loopback, quiet.
const FLAGS: &[&str] = &[
    "--headless",
    "--remote-debugging-port=0",
    "--remote-debugging-address=127.0.0.1",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--disable-extensions",
    "--disable-domain-reliability",
    "--disable-client-side-phishing-detection",
    "--disable-breakpad",
    "--disable-crash-reporter",
    "--no-pings",
    "--metrics-recording-only",
    "--safebrowsing-disable-auto-update",
    "--disable-features=Translate,OptimizationHints,MediaRouter,AutofillServerCommunication,CertificateTransparencyComponentUpdater,InterestFeedContentSuggestions",
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1",
    "--password-store=basic",
    "--disable-dev-shm-usage",
    "--mute-audio",
    "--hide-scrollbars",
    "--window-size=1280,800",
];

/// A running headless Chromium; the whole tree is killed when it is dropped.
pub struct Browser {
    connection: std::sync::Arc<cdp::Connection>,
    process: subagent_process::Process,
    profile: tempfile::TempDir,
}

impl std::fmt::Debug for Browser {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Browser")
            .field("pid", &self.process.pid())
            .field("profile", &self.profile.path())
            .finish_non_exhaustive()
    }
}

impl Browser {
    /// Starts the browser [`find`] finds, with a fresh profile, and connects to it. Needs a
    /// tokio runtime with I/O and time enabled; spawn it from a thread that lives as long as
    /// the browser should (the parent-death signal follows the spawning thread).
    ///
    /// # Errors
    /// [`Error::NotFound`] without a browser; [`Error::Launch`] when it exits or says nothing
    /// within 30 s.
    pub async fn launch() -> Result<Self> {
        Self::launch_program(&find()?).await
    }

    /// Starts `program` (a Chromium or Chrome) as [`Browser::launch`] does.
    ///
    /// # Errors
    /// As [`Browser::launch`].
    pub async fn launch_program(program: &Path) -> Result<Self> {
        let profile = tempfile::Builder::new()
            .prefix("subagent-chromium-")
            .tempdir()?;
        let dir = profile.path();
        let mut spec = ProcessSpec::new(program, dir)
            .arg(format!("--user-data-dir={}", dir.display()))
            .args(FLAGS)
            .env("HOME", dir)
            .env("XDG_CONFIG_HOME", dir.join("config"))
            .env("XDG_CACHE_HOME", dir.join("cache"))
            .stop_policy(StopPolicy::new(Signal::Terminate).grace(Duration::from_secs(2)));
        if is_root() {
            spec = spec.arg("--no-sandbox");
        }
        let process = spec.arg("about:blank").spawn().map_err(|e| match e {
            subagent_process::Error::NotFound { .. } => {
                Error::NotFound(format!("{e}; {INSTALL_ADVICE}"))
            }
            e => Error::Launch(format!("{}: {e}", program.display())),
        })?;
        let (port, path) = active_port(dir, &process).await?;
        let connection = cdp::Connection::open(port, &path).await.map_err(|e| {
            Error::Launch(format!(
                "connecting to its DevTools port {port}: {e}; stderr: {}",
                process.stderr_tail()
            ))
        })?;
        Ok(Self {
            connection: std::sync::Arc::new(connection),
            process,
            profile,
        })
    }

    /// The browser's pid (also its process group's).
    #[must_use]
    pub fn pid(&self) -> u32 {
        self.process.pid()
    }

    /// The profile directory, which every process of this browser names on its command line
    /// (a needle for [`procs::live_with`]).
    #[must_use]
    pub fn profile(&self) -> &Path {
        self.profile.path()
    }

    /// The tail of the browser's stderr, for a failure message.
    #[must_use]
    pub fn stderr_tail(&self) -> String {
        self.process.stderr_tail()
    }

    /// The browser's version (`Browser.getVersion`'s `product`, e.g. `HeadlessChrome/148.0…`).
    ///
    /// # Errors
    /// [`Error::Protocol`] when the browser does not answer.
    pub async fn version(&self) -> Result<String> {
        let answer = self
            .connection
            .call(None, "Browser.getVersion", json!({}), COMMAND_TIMEOUT)
            .await
            .map_err(Error::Protocol)?;
        Ok(answer["product"].as_str().unwrap_or_default().to_owned())
    }

    /// Opens a new tab at `url` and waits until its document has loaded.
    ///
    /// # Errors
    /// [`Error::Protocol`] when the browser refuses; [`Error::Timeout`] when the page does not
    /// load within 30 s.
    pub async fn open(&self, url: &str) -> Result<Page> {
        let call = |method: &'static str, params: Value| {
            let connection = &self.connection;
            async move {
                connection
                    .call(None, method, params, COMMAND_TIMEOUT)
                    .await
                    .map_err(Error::Protocol)
            }
        };
        let target = call("Target.createTarget", json!({"url": "about:blank"})).await?;
        let target = target["targetId"].as_str().unwrap_or_default().to_owned();
        let attached = call(
            "Target.attachToTarget",
            json!({"targetId": target, "flatten": true}),
        )
        .await?;
        let page = Page {
            connection: std::sync::Arc::clone(&self.connection),
            session: attached["sessionId"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
        };
        for domain in ["Runtime.enable", "Page.enable", "Log.enable"] {
            page.command(domain, json!({})).await?;
        }
        page.goto(url).await?;
        Ok(page)
    }

    /// Kills the browser's tree and waits until no process of its profile is left (at most
    /// 10 s; then the survivors are named). Dropping a [`Browser`] kills it too, without the
    /// wait.
    ///
    /// # Errors
    /// [`Error::Launch`] naming the processes still alive after 10 s.
    pub async fn close(mut self) -> Result<()> {
        self.process.kill();
        let needle = self.profile.path().to_string_lossy().into_owned();
        let Self {
            connection,
            process,
            profile,
        } = self;
        drop(connection);
        let _ = process.wait().await;
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let left = procs::live_lines_with(&needle);
            if left.is_empty() {
                break;
            }
            if Instant::now() > deadline {
                return Err(Error::Launch(format!(
                    "processes of the closed browser are still alive: {left:?}"
                )));
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        drop(profile);
        Ok(())
    }
}

/// Waits for the `DevToolsActivePort` file Chromium writes in its profile once it listens:
/// the port on its first line, the browser endpoint's path on its second.
async fn active_port(dir: &Path, process: &subagent_process::Process) -> Result<(u16, String)> {
    let file = dir.join("DevToolsActivePort");
    let deadline = Instant::now() + LAUNCH_TIMEOUT;
    loop {
        if let Ok(text) = std::fs::read_to_string(&file) {
            let mut lines = text.lines();
            if let (Some(Ok(port)), Some(path)) = (lines.next().map(str::parse), lines.next()) {
                return Ok((port, path.to_owned()));
            }
        }
        if procs::gone(process.pid()) {
            return Err(Error::Launch(format!(
                "it exited; stderr: {}",
                process.stderr_tail()
            )));
        }
        if Instant::now() > deadline {
            return Err(Error::Launch(format!(
                "no DevTools port within {LAUNCH_TIMEOUT:?}; stderr: {}",
                process.stderr_tail()
            )));
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// One tab of a [`Browser`].
pub struct Page {
    connection: std::sync::Arc<cdp::Connection>,
    session: String,
}

impl std::fmt::Debug for Page {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Page")
            .field("session", &self.session)
            .finish_non_exhaustive()
    }
}

impl Page {
    async fn command(&self, method: &str, params: Value) -> Result<Value> {
        self.connection
            .call(Some(&self.session), method, params, COMMAND_TIMEOUT)
            .await
            .map_err(Error::Protocol)
    }

    /// Navigates to `url` and waits until the new document has loaded (its `readyState` is
    /// `complete`).
    ///
    /// # Errors
    /// [`Error::Protocol`] when the navigation fails (the browser's `errorText`);
    /// [`Error::Timeout`] when the page does not load within 30 s.
    pub async fn goto(&self, url: &str) -> Result<()> {
        // A mark on the document being left: the new one has none, so the wait below cannot
        // mistake the old document for the new.
        self.eval("window.__subagentLeaving = true").await?;
        let navigated = self.command("Page.navigate", json!({"url": url})).await?;
        if let Some(error) = navigated["errorText"].as_str().filter(|e| !e.is_empty()) {
            return Err(Error::Protocol(format!("navigating to {url}: {error}")));
        }
        self.wait_for(
            "!window.__subagentLeaving && document.readyState === 'complete'",
            LOAD_TIMEOUT,
        )
        .await
        .map(drop)
    }

    /// The value of `script` (an expression; a promise is awaited), as JSON (`undefined` is
    /// `null`).
    ///
    /// # Errors
    /// [`Error::Script`] when it throws or its promise is rejected; [`Error::Protocol`] when
    /// the browser does not answer.
    pub async fn eval(&self, script: &str) -> Result<Value> {
        let answer = self
            .command(
                "Runtime.evaluate",
                json!({
                    "expression": script,
                    "awaitPromise": true,
                    "returnByValue": true,
                    "userGesture": true,
                }),
            )
            .await?;
        if let Some(details) = answer.get("exceptionDetails") {
            let text = details["exception"]["description"]
                .as_str()
                .or_else(|| details["text"].as_str())
                .unwrap_or("an exception");
            return Err(Error::Script(format!("{script}: {text}")));
        }
        Ok(answer["result"]
            .get("value")
            .cloned()
            .unwrap_or(Value::Null))
    }

    /// Waits until `predicate` (an expression) is truthy and returns its value; it is evaluated
    /// every 50 ms, and a throw counts as not yet.
    ///
    /// # Errors
    /// [`Error::Timeout`] after `timeout`, with the predicate's last value (or exception), the
    /// page's text and its console errors; [`Error::Protocol`] when the browser goes away.
    pub async fn wait_for(&self, predicate: &str, timeout: Duration) -> Result<Value> {
        let deadline = Instant::now() + timeout;
        let script = format!("(() => {{ const v = ({predicate}); return {{ok: !!v, v}}; }})()");
        loop {
            let last = match self.eval(&script).await {
                Ok(answer) if answer["ok"] == true => return Ok(answer["v"].clone()),
                Ok(answer) => answer["v"].to_string(),
                Err(Error::Script(thrown)) => format!("threw {thrown}"),
                Err(other) => return Err(other),
            };
            if Instant::now() > deadline {
                let text = self.text().await.unwrap_or_else(|e| format!("({e})"));
                return Err(Error::Timeout(format!(
                    "`{predicate}` still not true after {timeout:?}; last value: {last}; \
                     console errors: {:?}; the page's text:\n{text}",
                    self.console_errors()
                )));
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// The page's visible text (`document.body.innerText`, at most 4,000 characters).
    ///
    /// # Errors
    /// As [`Page::eval`].
    pub async fn text(&self) -> Result<String> {
        let text = self
            .eval("document.body ? document.body.innerText : ''")
            .await?;
        let text = text.as_str().unwrap_or_default();
        Ok(match text.char_indices().nth(MAX_TEXT_CHARS) {
            Some((at, _)) => format!("{}…", &text[..at]),
            None => text.to_owned(),
        })
    }

    /// Clicks the first element matching the CSS selector `css` with the mouse (scrolled into
    /// view, a press and a release at its centre), as a user would: a covered or hidden
    /// element does not get it.
    ///
    /// # Errors
    /// [`Error::Script`] when no element matches or it has no size; [`Error::Protocol`] when
    /// the browser refuses the input.
    pub async fn click(&self, css: &str) -> Result<()> {
        let selector = Value::String(css.to_owned());
        let centre = self
            .eval(&format!(
                "(() => {{ const e = document.querySelector({selector}); \
                 if (!e) throw new Error('no element matches ' + {selector}); \
                 e.scrollIntoView({{block: 'center', inline: 'center'}}); \
                 const r = e.getBoundingClientRect(); \
                 if (r.width === 0 || r.height === 0) throw new Error({selector} + ' has no size'); \
                 return {{x: r.left + r.width / 2, y: r.top + r.height / 2}}; }})()"
            ))
            .await?;
        for kind in ["mousePressed", "mouseReleased"] {
            self.command(
                "Input.dispatchMouseEvent",
                json!({"type": kind, "x": centre["x"], "y": centre["y"],
                       "button": "left", "buttons": 1, "clickCount": 1}),
            )
            .await?;
        }
        Ok(())
    }

    /// Writes a PNG screenshot of the viewport to `path` and returns its width and height in
    /// pixels.
    ///
    /// # Errors
    /// [`Error::Protocol`] when the browser sends no PNG; [`Error::Io`] when the file cannot be
    /// written.
    pub async fn screenshot(&self, path: &Path) -> Result<(u32, u32)> {
        let shot = self
            .command("Page.captureScreenshot", json!({"format": "png"}))
            .await?;
        let png = shot["data"]
            .as_str()
            .and_then(decode_base64)
            .ok_or_else(|| Error::Protocol("a screenshot without base64 data".to_owned()))?;
        let size = png_size(&png)
            .ok_or_else(|| Error::Protocol("a screenshot that is not a PNG".to_owned()))?;
        std::fs::write(path, &png)?;
        Ok(size)
    }

    /// What the page reported as errors so far: `console.error` calls, uncaught exceptions
    /// and rejections, and error log entries (a failed load of a resource, a violated content
    /// security policy), in order, each on one line.
    #[must_use]
    pub fn console_errors(&self) -> Vec<String> {
        self.connection.errors(&self.session)
    }
}

/// The width and height of a PNG (from its `IHDR` chunk), `None` when `bytes` is no PNG.
#[must_use]
pub fn png_size(bytes: &[u8]) -> Option<(u32, u32)> {
    const SIGNATURE: &[u8] = b"\x89PNG\r\n\x1a\n";
    if !bytes.starts_with(SIGNATURE) || bytes.get(12..16)? != b"IHDR" {
        return None;
    }
    let word = |at: usize| Some(u32::from_be_bytes(bytes.get(at..at + 4)?.try_into().ok()?));
    Some((word(16)?, word(20)?))
}

/// Standard base64 (padding optional), `None` on any other character.
fn decode_base64(text: &str) -> Option<Vec<u8>> {
    let value = |c: u8| match c {
        b'A'..=b'Z' => Some(c - b'A'),
        b'a'..=b'z' => Some(c - b'a' + 26),
        b'0'..=b'9' => Some(c - b'0' + 52),
        b'+' => Some(62),
        b'/' => Some(63),
        _ => None,
    };
    let digits = text.trim_end_matches('=').as_bytes();
    let mut out = Vec::with_capacity(digits.len() * 3 / 4);
    for chunk in digits.chunks(4) {
        let mut group = 0u32;
        for (i, &c) in chunk.iter().enumerate() {
            group |= u32::from(value(c)?) << (18 - 6 * i);
        }
        let bytes = group.to_be_bytes();
        out.extend_from_slice(&bytes[1..chunk.len()]);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::{decode_base64, png_size};

    #[test]
    fn base64_decodes_with_and_without_padding() {
        assert_eq!(decode_base64("aGk=").as_deref(), Some(&b"hi"[..]));
        assert_eq!(decode_base64("aGk").as_deref(), Some(&b"hi"[..]));
        assert_eq!(decode_base64("aGV5").as_deref(), Some(&b"hey"[..]));
        assert_eq!(decode_base64("").as_deref(), Some(&b""[..]));
        assert_eq!(decode_base64("a-b"), None);
    }

    #[test]
    fn png_size_reads_the_header() {
        let mut png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
        png.extend_from_slice(&1280u32.to_be_bytes());
        png.extend_from_slice(&800u32.to_be_bytes());
        assert_eq!(png_size(&png), Some((1280, 800)));
        assert_eq!(png_size(b"GIF89a"), None);
    }
}
