"""Headless Chromium driven over the DevTools protocol, for the viewer and report tests.

``chromium --screenshot`` takes its picture at the page's load event, before a
WebGL page has connected its websocket and drawn anything, and
``--virtual-time-budget`` never ends on a page that animates. So the tests
start Chromium with a DevTools port, load the page, wait for a condition
evaluated in the page, and then take the screenshot.
"""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path

#: Flags for a quiet, sandbox-free headless Chromium that renders WebGL on the CPU (SwiftShader).
FLAGS = (
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--use-angle=swiftshader", "--enable-unsafe-swiftshader", "--hide-scrollbars", "--mute-audio",
)


def chromium_path() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


class Browser:
    """One headless Chromium with one page, driven over its DevTools websocket."""

    def __init__(self, width: int = 1280, height: int = 800, timeout_s: float = 30.0):
        from websockets.sync.client import connect

        executable = chromium_path()
        if executable is None:
            raise RuntimeError("chromium is not installed")
        self.profile = tempfile.mkdtemp(prefix="nexus-chromium-")
        self.process = subprocess.Popen(
            [executable, *FLAGS, f"--user-data-dir={self.profile}", f"--window-size={width},{height}",
             "--remote-debugging-port=0", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        port_file = Path(self.profile) / "DevToolsActivePort"
        deadline = time.monotonic() + timeout_s
        while not (port_file.is_file() and port_file.read_text().strip()):
            if time.monotonic() > deadline or self.process.poll() is not None:
                self.close()
                raise RuntimeError("chromium did not open its DevTools port")
            time.sleep(0.1)
        port = int(port_file.read_text().split()[0])
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=timeout_s) as answer:
            pages = [t for t in json.load(answer) if t["type"] == "page"]
        self.socket = connect(pages[0]["webSocketDebuggerUrl"], max_size=None, open_timeout=timeout_s)
        self.next_id = 0
        self.call("Page.enable")
        self.call("Runtime.enable")

    def call(self, method: str, timeout_s: float = 60.0, **params) -> dict:
        self.next_id += 1
        self.socket.send(json.dumps({"id": self.next_id, "method": method, "params": params}))
        deadline = time.monotonic() + timeout_s
        while True:
            message = json.loads(self.socket.recv(timeout=max(deadline - time.monotonic(), 0.01)))
            if message.get("id") == self.next_id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message.get("result", {})

    def open(self, url: str) -> None:
        self.call("Page.navigate", url=url)

    def evaluate(self, expression: str):
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"page script failed: {result['exceptionDetails']}")
        return result["result"].get("value")

    def wait_for(self, expression: str, timeout_s: float = 30.0, every_s: float = 0.25):
        """Poll ``expression`` in the page until it is truthy; return its value (or the last falsy one)."""
        deadline = time.monotonic() + timeout_s
        value = None
        while time.monotonic() < deadline:
            try:
                value = self.evaluate(expression)
            except RuntimeError:
                value = None
            if value:
                return value
            time.sleep(every_s)
        return value

    def screenshot(self, path: Path) -> Path:
        data = self.call("Page.captureScreenshot", format="png")["data"]
        Path(path).write_bytes(base64.b64decode(data))
        return Path(path)

    def close(self) -> None:
        try:
            if getattr(self, "socket", None) is not None:
                self.socket.close()
        finally:
            if self.process.poll() is None:
                self.process.terminate()
                try:
                    self.process.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    self.process.kill()
                    self.process.wait()
            shutil.rmtree(self.profile, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
