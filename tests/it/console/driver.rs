//! Headless Chromium driven through chromedriver (WebDriver, with `fantoccini`), one browser per test.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use fantoccini::elements::Element;
use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::{json, Value as Json};
use tempfile::TempDir;

use crate::common::{free_port, tempdir};

const CHROMIUM: &str = "/usr/bin/chromium";
const CHROMEDRIVER: &str = "/usr/bin/chromedriver";

/// Lists the visible text whose contrast with what is behind it is under WCAG AA (4.5:1, 3:1 for large
/// text); disabled controls are exempt, as WCAG has them.
const CONTRAST: &str = r#"
const parse = (s) => {
  const m = /rgba?\(([^)]+)\)/.exec(s);
  if (!m) return null;
  const p = m[1].split(/[\s,\/]+/).filter(Boolean).map(Number);
  return { rgb: p.slice(0, 3), a: p.length > 3 ? p[3] : 1 };
};
const lum = (rgb) => {
  const [r, g, b] = rgb.map((v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; });
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
};
const behind = (el) => {
  const layers = [];
  for (let e = el; e; e = e.parentElement) {
    const c = parse(getComputedStyle(e).backgroundColor);
    if (c && c.a > 0) { layers.push(c); if (c.a >= 1) break; }
  }
  let out = [255, 255, 255];
  for (const l of layers.reverse()) out = out.map((v, i) => l.rgb[i] * l.a + v * (1 - l.a));
  return out;
};
const low = [];
for (const el of document.querySelectorAll('body *')) {
  if (!el.checkVisibility() || el.closest(':disabled')) continue;
  if (![...el.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim())) continue;
  const st = getComputedStyle(el);
  const fg = parse(st.color);
  if (!fg) continue;
  const a = lum(fg.rgb), b = lum(behind(el));
  const ratio = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
  const size = parseFloat(st.fontSize), bold = Number(st.fontWeight) >= 700;
  const large = size >= 24 || (bold && size >= 18.66);
  if (ratio < (large ? 3 : 4.5)) low.push(`${el.tagName} "${el.textContent.trim().slice(0, 40)}": ${ratio.toFixed(2)}`);
}
return low;
"#;

/// How long the browser may take to show something: longer than the harness's `DEADLINE`, as a browser
/// on a busy machine is slow to start and to lay out.
pub const BROWSER_DEADLINE: Duration = Duration::from_secs(60);

/// A chromedriver process and one Chromium session in it, pointed at a worker.
pub struct Browser {
    pub client: Client,
    driver: Child,
    driver_url: String,
    session: String,
    /// The worker's URL, without a trailing slash.
    base: String,
    _profile: TempDir,
}

/// Both programs, or a failure that says how to install them: a browser test never passes silently.
fn programs() -> (&'static str, &'static str) {
    for p in [CHROMIUM, CHROMEDRIVER] {
        assert!(
            Path::new(p).exists(),
            "{p} is missing: the console's browser tests need Chromium and chromedriver from the \
             distribution; run scripts/install-test-deps (it installs chromium and chromium-driver)"
        );
    }
    (CHROMIUM, CHROMEDRIVER)
}

/// Where the tests write their screenshots for reviewers.
pub fn screenshot_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/console-screenshots");
    std::fs::create_dir_all(&dir).expect("screenshot directory");
    dir
}

impl Browser {
    /// Starts chromedriver on a free port and a headless Chromium session of `width`×`height`.
    pub async fn start(base: &str, width: u32, height: u32) -> Browser {
        let (chromium, chromedriver) = programs();
        let port = free_port();
        let driver = Command::new(chromedriver)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("chromedriver starts");
        let driver_url = format!("http://127.0.0.1:{port}");
        let http = reqwest::Client::new();
        let status = format!("{driver_url}/status");
        let deadline = Instant::now() + BROWSER_DEADLINE;
        loop {
            let ready = match http.get(&status).send().await {
                Ok(r) => r
                    .json::<Json>()
                    .await
                    .ok()
                    .map(|j| j["value"]["ready"] == true),
                Err(_) => None,
            };
            if ready == Some(true) {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "chromedriver did not become ready"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let profile = tempdir();
        let args = [
            "--headless".to_string(),
            "--no-sandbox".into(),
            "--disable-gpu".into(),
            "--disable-quic".into(),
            "--no-first-run".into(),
            "--disable-background-networking".into(),
            "--disable-component-update".into(),
            "--disable-sync".into(),
            "--disable-dev-shm-usage".into(),
            format!("--window-size={width},{height}"),
            format!("--user-data-dir={}", profile.path().display()),
        ];
        let caps = json!({
            "browserName": "chrome",
            "goog:chromeOptions": {"binary": chromium, "args": args},
            "goog:loggingPrefs": {"browser": "ALL"},
        });
        let caps = caps.as_object().unwrap().clone();
        let connector = hyper_util::client::legacy::connect::HttpConnector::new();
        let client = ClientBuilder::new(connector)
            .capabilities(caps)
            .connect(&driver_url)
            .await
            .expect("a Chromium session");
        let session = client
            .session_id()
            .await
            .expect("session id")
            .expect("a session");
        let mut browser = Browser {
            client,
            driver,
            driver_url,
            session,
            base: base.trim_end_matches('/').to_string(),
            _profile: profile,
        };
        browser.resize(width, height).await;
        browser
    }

    /// Sets the viewport's size: the window is resized, then grown by what its frame takes.
    pub async fn resize(&mut self, width: u32, height: u32) {
        self.client
            .set_window_size(width, height)
            .await
            .expect("resize");
        let inner = self
            .eval("return [window.innerWidth, window.innerHeight]")
            .await;
        let seen = |i: usize, want: u32| (inner[i].as_u64().unwrap_or(0) as u32).min(want);
        let (w, h) = (seen(0, width), seen(1, height));
        if (w, h) != (width, height) && w > 0 && h > 0 {
            self.client
                .set_window_size(2 * width - w, 2 * height - h)
                .await
                .expect("resize");
        }
    }

    /// Opens a console route, e.g. `#/connectors`. The page shown before is taken away first: a
    /// route change renders after the navigation returns, and an element of the old page (a row of
    /// the same offset on another topic) must not answer for the new one.
    /// Opening the route already shown renders it again, as a reader's reload would.
    pub async fn open(&self, route: &str) {
        let shown = self
            .eval("document.getElementById('main')?.replaceChildren(); return location.pathname + location.hash")
            .await;
        let url = format!("{}/ui/{route}", self.base);
        self.client.goto(&url).await.expect("navigate");
        if shown == format!("/ui/{route}") {
            self.eval("window.dispatchEvent(new HashChangeEvent('hashchange')); return null")
                .await;
        }
    }

    /// Runs a script in the page and returns what it returns.
    pub async fn eval(&self, script: &str) -> Json {
        self.client
            .execute(script, Vec::new())
            .await
            .unwrap_or_else(|e| panic!("script {script}: {e}"))
    }

    /// The first element `css` selects, once there is one.
    pub async fn find(&self, css: &str) -> Element {
        self.client
            .wait()
            .at_most(BROWSER_DEADLINE)
            .for_element(Locator::Css(css))
            .await
            .unwrap_or_else(|e| panic!("no element {css} appeared: {e}"))
    }

    /// Whether some element matches `css` now.
    pub async fn exists(&self, css: &str) -> bool {
        !self
            .client
            .find_all(Locator::Css(css))
            .await
            .unwrap_or_default()
            .is_empty()
    }

    /// Clicks the element `css` selects (waiting for it). The pages redraw every 2 s, so an element
    /// found a moment ago may be gone: it is found again until the click lands.
    pub async fn click(&self, css: &str) {
        let deadline = Instant::now() + BROWSER_DEADLINE;
        loop {
            let error = match self.find(css).await.click().await {
                Ok(()) => return,
                Err(e) => e,
            };
            assert!(Instant::now() < deadline, "click {css}: {error}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Replaces the text of an input or textarea.
    pub async fn type_into(&self, css: &str, text: &str) {
        let el = self.find(css).await;
        el.clear().await.expect("clear");
        el.send_keys(text).await.expect("type");
    }

    /// The text of the element `css` selects, re-read until `ok` accepts it.
    pub async fn wait_text(&self, css: &str, what: &str, ok: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + BROWSER_DEADLINE;
        let mut last = String::new();
        loop {
            if let Ok(el) = self.client.find(Locator::Css(css)).await {
                if let Ok(text) = el.text().await {
                    if ok(&text) {
                        return text;
                    }
                    last = text;
                }
            }
            assert!(
                Instant::now() < deadline,
                "{what}: {css} still reads {last:?}"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Picks the option of value `value` in the select `css`.
    pub async fn choose(&self, css: &str, value: &str) {
        self.find(css)
            .await
            .select_by_value(value)
            .await
            .unwrap_or_else(|e| panic!("choose {value} in {css}: {e}"));
    }

    /// The text of the element `css` selects, once it has some.
    pub async fn some_text(&self, css: &str) -> String {
        self.wait_text(css, "some text", |t| !t.trim().is_empty())
            .await
    }

    /// Waits until `css` selects nothing.
    pub async fn wait_gone(&self, css: &str) {
        let deadline = Instant::now() + BROWSER_DEADLINE;
        while self.exists(css).await {
            assert!(Instant::now() < deadline, "{css} is still there");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Writes a PNG of the viewport to `target/console-screenshots/<name>.png`.
    pub async fn screenshot(&self, name: &str) -> PathBuf {
        let png = self.client.screenshot().await.expect("screenshot");
        assert!(png.starts_with(b"\x89PNG"), "a PNG screenshot");
        let path = screenshot_dir().join(format!("{name}.png"));
        std::fs::write(&path, png).expect("write the screenshot");
        path
    }

    /// The browser console's messages at SEVERE level since the last call (chromedriver's log).
    pub async fn console_errors(&self) -> Vec<String> {
        let url = format!("{}/session/{}/se/log", self.driver_url, self.session);
        let answer: Json = reqwest::Client::new()
            .post(url)
            .json(&json!({"type": "browser"}))
            .send()
            .await
            .expect("the browser log")
            .json()
            .await
            .expect("the browser log as JSON");
        answer["value"]
            .as_array()
            .unwrap_or_else(|| panic!("no browser log: {answer}"))
            .iter()
            .filter(|e| e["level"] == "SEVERE")
            .map(|e| e["message"].as_str().unwrap_or_default().to_string())
            .collect()
    }

    /// The visible texts under WCAG AA contrast, with their ratios.
    pub async fn low_contrast(&self) -> Json {
        self.eval(CONTRAST).await
    }

    /// Fails when the page logged an error, scrolls sideways or shows text under WCAG AA contrast.
    pub async fn assert_clean(&self, page: &str) {
        let low = self.low_contrast().await;
        assert_eq!(low, json!([]), "text under AA contrast on {page}");
        let errors = self.console_errors().await;
        assert!(errors.is_empty(), "console errors on {page}: {errors:#?}");
        let fits = self
            .eval("return [document.documentElement.scrollWidth, window.innerWidth]")
            .await;
        assert!(
            fits[0].as_u64() <= fits[1].as_u64(),
            "{page} scrolls sideways: scrollWidth, innerWidth = {fits}"
        );
    }

    /// Ends the session and chromedriver.
    pub async fn close(self) {
        let client = self.client.clone();
        let _ = client.close().await;
        drop(self);
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        // After a failure the session is still open: end it, so that Chromium quits, then chromedriver.
        end_session(&self.driver_url, &self.session);
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}

/// `DELETE /session/{id}` with a blocking socket, for `Drop`; what it answers does not matter.
fn end_session(driver_url: &str, session: &str) {
    use std::io::{Read, Write};
    let Some(addr) = driver_url.strip_prefix("http://") else {
        return;
    };
    let Ok(mut stream) = std::net::TcpStream::connect(addr) else {
        return;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
    let request = format!(
        "DELETE /session/{session} HTTP/1.1\r\nHost: {addr}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    );
    if stream.write_all(request.as_bytes()).is_ok() {
        let _ = stream.read_to_end(&mut Vec::new());
    }
}
