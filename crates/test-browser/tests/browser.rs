#![allow(clippy::unwrap_used, clippy::expect_used)]

//! The headless browser of the page tests (`subagent_test_support::browser`) against a small
//! live page served from 127.0.0.1: items appear over time, a button stops them, the page is
//! read, clicked and photographed, and no process of the browser is left afterwards, also when
//! the test holding it panics.

use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;
use subagent_test_browser::{Browser, Error, png_size};
use subagent_test_support::procs;

/// A list that grows every 50 ms until the button is clicked; the click says so on the page and
/// on the console (as an error, which the browser collects).
const PAGE: &str = r#"<!doctype html>
<html><head><meta charset="utf-8"><title>live list</title><link rel="icon" href="data:,">
<style>body { font: 16px sans-serif; margin: 2em } button { padding: .5em 1em }</style>
</head><body>
<h1>Live list</h1>
<p id="status">running</p>
<button id="stop">Stop</button>
<ul id="items"></ul>
<script>
  let n = 0;
  const timer = setInterval(() => {
    const li = document.createElement('li');
    li.textContent = 'item ' + (++n);
    document.getElementById('items').append(li);
  }, 50);
  document.getElementById('stop').addEventListener('click', (event) => {
    clearInterval(timer);
    window.stoppedAt = n;
    window.trusted = event.isTrusted;
    document.getElementById('status').textContent = 'stopped at ' + n;
    console.error('stopped by a click');
  });
</script>
</body></html>"#;

/// Serves [`PAGE`] at `/` on 127.0.0.1 until the runtime ends; its URL.
async fn serve_page() -> String {
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
        .await
        .unwrap();
    let addr = listener.local_addr().unwrap();
    let app = axum::Router::new().route(
        "/",
        axum::routing::get(|| async { axum::response::Html(PAGE) }),
    );
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{addr}/")
}

/// Waits (at most 10 s) until no live process names `profile`; what is left, if anything.
async fn left_after(profile: &str) -> Vec<String> {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let left = procs::live_lines_with(profile);
        if left.is_empty() || Instant::now() > deadline {
            return left;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn a_live_page_is_read_clicked_and_photographed_and_the_browser_leaves_nothing() {
    let url = serve_page().await;
    let started = Instant::now();
    let browser = Browser::launch().await.unwrap();
    let launched = started.elapsed();
    let page = browser.open(&url).await.unwrap();
    eprintln!(
        "browser: {} started in {launched:?}, page loaded after {:?}",
        browser.version().await.unwrap(),
        started.elapsed()
    );
    let profile = browser.profile().to_string_lossy().into_owned();
    assert!(
        !procs::live_lines_with(&profile).is_empty(),
        "the browser runs"
    );

    // Items appear while the test watches.
    let count = page
        .wait_for(
            "document.querySelectorAll('#items li').length >= 3 && document.querySelectorAll('#items li').length",
            Duration::from_secs(10),
        )
        .await
        .unwrap();
    assert!(count.as_u64().unwrap() >= 3, "{count}");
    assert_eq!(page.eval("document.title").await.unwrap(), "live list");
    assert_eq!(page.console_errors(), Vec::<String>::new());

    // A real click stops them, and the page says so.
    page.click("#stop").await.unwrap();
    let status = page
        .wait_for(
            "document.getElementById('status').textContent.startsWith('stopped') && document.getElementById('status').textContent",
            Duration::from_secs(10),
        )
        .await
        .unwrap();
    let stopped_at = page.eval("window.stoppedAt").await.unwrap();
    assert_eq!(status, format!("stopped at {stopped_at}"));
    assert_eq!(
        page.eval("window.trusted").await.unwrap(),
        true,
        "a mouse click, not a script's"
    );
    assert_eq!(page.console_errors(), ["console.error: stopped by a click"]);
    assert!(
        page.text()
            .await
            .unwrap()
            .contains(&format!("item {stopped_at}"))
    );

    // A PNG of the viewport.
    let dir = tempfile::tempdir().unwrap();
    let shot = dir.path().join("page.png");
    let (width, height) = page.screenshot(&shot).await.unwrap();
    let png = std::fs::read(&shot).unwrap();
    assert_eq!(png_size(&png), Some((width, height)));
    assert!(
        (640..=4000).contains(&width) && (400..=4000).contains(&height) && png.len() > 2000,
        "a {width}×{height} screenshot of {} bytes",
        png.len()
    );

    // Failures say what the page showed.
    let Err(Error::Timeout(timeout)) = page
        .wait_for(
            "document.getElementById('nothing')",
            Duration::from_millis(200),
        )
        .await
    else {
        panic!("a condition that never holds times out");
    };
    assert!(timeout.contains("last value: null"), "{timeout}");
    assert!(
        timeout.contains(&format!("stopped at {stopped_at}")),
        "{timeout}"
    );
    let Err(Error::Script(thrown)) = page.eval("missing.call()").await else {
        panic!("a throwing script is an error");
    };
    assert!(thrown.contains("ReferenceError"), "{thrown}");
    let Err(Error::Script(absent)) = page.click("#absent").await else {
        panic!("clicking no element is an error");
    };
    assert!(absent.contains("no element matches #absent"), "{absent}");

    let closing = Instant::now();
    browser.close().await.unwrap();
    eprintln!("browser: closed in {:?}", closing.elapsed());
    assert_eq!(procs::live_lines_with(&profile), Vec::<String>::new());
    // The page outlived its browser: it fails, it does not hang.
    assert!(matches!(page.eval("1").await, Err(Error::Protocol(_))));
}

#[tokio::test]
async fn a_test_that_panics_while_holding_the_browser_leaves_no_process() {
    let (tx, rx) = tokio::sync::oneshot::channel();
    let holder = tokio::spawn(async move {
        let browser = Browser::launch().await.unwrap();
        let page = browser.open("about:blank").await.unwrap();
        let _ = tx.send(browser.profile().to_string_lossy().into_owned());
        assert_eq!(
            page.eval("1 + 1").await.unwrap(),
            3,
            "this test panics here on purpose"
        );
    });
    let profile = rx.await.unwrap();
    assert!(holder.await.unwrap_err().is_panic());
    assert_eq!(left_after(&profile).await, Vec::<String>::new());
}

#[tokio::test]
async fn a_missing_browser_is_named_with_how_to_install_one() {
    let Err(error) = Browser::launch_program(std::path::Path::new("/nonexistent/chromium")).await
    else {
        panic!("no browser at that path");
    };
    let message = error.to_string();
    assert!(matches!(error, Error::NotFound(_)), "{message}");
    assert!(message.contains("apt-get install chromium"), "{message}");
    assert!(message.contains("SUBAGENT_CHROMIUM"), "{message}");
}
