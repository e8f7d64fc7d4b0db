"""A minimal headless-Chromium driver for the docs browser check (tests/docs/test_browser.py).

It speaks the Chrome DevTools Protocol over ``--remote-debugging-pipe`` (JSON messages separated
by NUL bytes on file descriptors 3 and 4 of the browser), so it needs nothing beyond the
``chromium`` executable: no WebDriver binary, no Python package. One browser process serves every
page; each page is loaded, its scripts run (MathJax typesets), and a JavaScript probe returns what
the test checks.

Chromium is started offline (every host name resolves to nothing), so a page that needs the
network to render fails the check instead of quietly fetching from a CDN.
"""

from __future__ import annotations

import base64
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def find_chromium() -> str | None:
    """The browser executable: ``$PRIRFED_CHROMIUM`` if set, else the first of
    :data:`CHROMIUM_NAMES` on ``PATH``; None when there is none."""
    explicit = os.environ.get("PRIRFED_CHROMIUM")
    if explicit:
        return shutil.which(explicit) or (explicit if Path(explicit).is_file() else None)
    for name in CHROMIUM_NAMES:
        path = shutil.which(name)
        if path:
            return path
    return None


class CDPError(RuntimeError):
    pass


class Chromium:
    """A headless Chromium with one page (tab), driven over the DevTools pipe.

    ``timeout`` bounds every wait (a command's answer, a page load) in seconds."""

    def __init__(self, executable: str, width: int = 1280, height: int = 900, timeout: float = 60.0):
        self.timeout = timeout
        self.width, self.height = width, height
        self._profile = tempfile.mkdtemp(prefix="prirfed-chromium-")
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()
        # the browser expects to read commands on fd 3 and write answers on fd 4
        hi_r, hi_w = os.dup(to_browser_r), os.dup(from_browser_w)
        for fd in (hi_r, hi_w):
            os.set_inheritable(fd, True)

        def _fds_3_and_4():  # runs in the child between fork and exec
            os.dup2(hi_r, 3)
            os.dup2(hi_w, 4)

        args = [
            executable, "--headless", "--no-sandbox", "--disable-gpu", "--remote-debugging-pipe",
            f"--user-data-dir={self._profile}", "--no-first-run", "--no-default-browser-check",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            "--disable-extensions", "--disable-dev-shm-usage", "--mute-audio",
            "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1", f"--window-size={width},{height}", "about:blank",
        ]
        self._log = open(Path(self._profile) / "stderr.log", "wb")  # a file: a full pipe would block it
        self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=self._log, stderr=self._log,
                                     pass_fds=(3, 4), preexec_fn=_fds_3_and_4)
        for fd in (to_browser_r, from_browser_w, hi_r, hi_w):
            os.close(fd)
        self._buf = b""
        self._next_id = 0
        self._events: list[dict] = []
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.call(f"{domain}.enable", session=self.session)
        self.set_viewport(width, height)

    # ------------------------------------------------------------------------------ protocol
    def _read_message(self, deadline: float) -> dict:
        while b"\0" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise CDPError(f"Chromium did not answer within {self.timeout:g} s")
            ready, _, _ = select.select([self._from_browser], [], [], left)
            if ready:
                chunk = os.read(self._from_browser, 1 << 20)
                if not chunk:
                    err = (Path(self._profile) / "stderr.log").read_bytes().decode(errors="replace")[-2000:]
                    raise CDPError(f"Chromium closed the DevTools pipe (exit code {self.proc.poll()}): {err}")
                self._buf += chunk
        raw, _, self._buf = self._buf.partition(b"\0")
        return json.loads(raw)

    def call(self, method: str, params: dict | None = None, session: str | None = None) -> dict:
        """Send one command and return its result (events that arrive meanwhile are kept)."""
        self._next_id += 1
        msg = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self._to_browser, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + self.timeout
        while True:
            m = self._read_message(deadline)
            if m.get("id") == self._next_id:
                if "error" in m:
                    raise CDPError(f"{method}: {m['error']}")
                return m.get("result", {})
            if "method" in m:
                self._events.append(m)

    def wait_event(self, method: str, deadline: float) -> dict:
        while True:
            for i, e in enumerate(self._events):
                if e["method"] == method and e.get("sessionId") == self.session:
                    return self._events.pop(i)
            m = self._read_message(deadline)
            if "method" in m:
                self._events.append(m)

    def drain_events(self) -> list[dict]:
        ev, self._events = self._events, []
        return ev

    # ------------------------------------------------------------------------------ page
    def set_viewport(self, width: int, height: int) -> None:
        self.call("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False}, self.session)

    def goto(self, url: str) -> None:
        """Load ``url`` and wait for its load event (deferred scripts such as MathJax have run)."""
        self.drain_events()
        res = self.call("Page.navigate", {"url": url}, self.session)
        if res.get("errorText"):
            raise CDPError(f"Page.navigate {url}: {res['errorText']}")
        self.wait_event("Page.loadEventFired", time.monotonic() + self.timeout)

    def evaluate(self, expression: str):
        """Value of a JavaScript expression (a promise is awaited); its exceptions raise."""
        res = self.call("Runtime.evaluate", {"expression": expression, "awaitPromise": True,
                                             "returnByValue": True, "timeout": self.timeout * 1000}, self.session)
        if "exceptionDetails" in res:
            d = res["exceptionDetails"]
            raise CDPError(f"JavaScript error: {d.get('exception', {}).get('description') or d.get('text')}")
        return res["result"].get("value")

    def console_errors(self) -> list[str]:
        """Since the last navigation: uncaught exceptions, errors logged to the console, and every
        request that failed or got an HTTP error status (with its URL)."""
        out, urls = [], {}
        for e in self._events:
            if e.get("sessionId") != self.session:
                continue
            p = e.get("params", {})
            if e["method"] == "Runtime.exceptionThrown":
                d = p["exceptionDetails"]
                out.append(f"exception: {d.get('exception', {}).get('description') or d.get('text')}")
            elif e["method"] == "Log.entryAdded" and p["entry"]["level"] == "error" and p["entry"].get("source") != "network":
                out.append(f"{p['entry'].get('source')}: {p['entry'].get('text')} {p['entry'].get('url', '')}".strip())
            elif e["method"] == "Runtime.consoleAPICalled" and p["type"] == "error":
                out.append("console.error: " + " ".join(str(a.get("value", a.get("description", ""))) for a in p["args"]))
            elif e["method"] == "Network.requestWillBeSent":
                urls[p["requestId"]] = p["request"]["url"]
            elif e["method"] == "Network.responseReceived" and p["response"]["status"] >= 400:
                out.append(f"HTTP {p['response']['status']}: {p['response']['url']}")
            elif e["method"] == "Network.loadingFailed" and not p.get("canceled"):
                out.append(f"request failed ({p.get('errorText')}): {urls.get(p['requestId'], p['requestId'])}")
        return out

    def screenshot(self, path: Path, full_page: bool = False) -> None:
        """PNG of the viewport (or of the whole page) at the current viewport width."""
        params: dict = {"format": "png"}
        if full_page:
            size = self.call("Page.getLayoutMetrics", {}, self.session)["cssContentSize"]
            params.update(captureBeyondViewport=True,
                          clip={"x": 0, "y": 0, "width": self.width, "height": min(size["height"], 16000), "scale": 1})
        data = self.call("Page.captureScreenshot", params, self.session)["data"]
        path.write_bytes(base64.b64decode(data))

    def close(self) -> None:
        try:
            self.call("Browser.close")
        except (CDPError, OSError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for fd in (self._to_browser, self._from_browser):
            try:
                os.close(fd)
            except OSError:
                pass
        self._log.close()
        shutil.rmtree(self._profile, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
