"""A small driver for headless Chromium over the DevTools protocol, standard library only.

The page's tests need a real browser (JavaScript renders the page), and the project needs
no heavy dependency for that: Chromium's `--remote-debugging-pipe` speaks JSON messages,
each ended by a NUL byte, on file descriptors 3 (commands in) and 4 (replies and events
out). Playwright would download its own browser build, which the CI machines cannot.

`python -m etsuite.tools.headless PAGE [--screenshot PNG]` opens a page, waits until its
script says it is ready, and prints how long that took: the measure of the page's load
time in docs/measurements.md.
"""

from __future__ import annotations

import argparse
import base64
import fcntl
import json
import os
import shutil
import signal
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
INSTALL_HINT = ("install Debian's chromium package (apt-get install -y chromium; .ci/run does "
                "it) or name the browser in $ETSUITE_CHROMIUM")


class BrowserError(RuntimeError):
    """The browser is missing, died, or answered a command with an error."""


def find_chromium() -> str:
    named = os.environ.get("ETSUITE_CHROMIUM")
    if named:
        found = shutil.which(named)
        if not found:
            raise BrowserError(f"$ETSUITE_CHROMIUM={named!r} is not an executable")
        return found
    for name in CANDIDATES:
        found = shutil.which(name)
        if found:
            return found
    raise BrowserError(f"no Chromium found on PATH (looked for {', '.join(CANDIDATES)}): "
                       f"{INSTALL_HINT}")


class Browser:
    """One headless Chromium process; use as a context manager."""

    def __init__(self, executable: str | None = None, timeout: float = 60.0):
        self.executable = executable or find_chromium()
        self.timeout = timeout
        self._profile = tempfile.TemporaryDirectory(prefix="etsuite-chromium-")
        commands_read, self._commands = os.pipe()
        self._replies, replies_write = os.pipe()
        arguments = [
            self.executable, "--headless", "--remote-debugging-pipe", "--disable-gpu",
            "--no-first-run", "--no-default-browser-check", "--disable-extensions",
            "--disable-dev-shm-usage", "--mute-audio", f"--user-data-dir={self._profile.name}",
        ]
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            arguments.append("--no-sandbox")  # Chromium refuses to sandbox as root
        self._log = os.path.join(self._profile.name, "chromium.log")
        # The protocol wants the pipe ends at 3 and 4. They are first copied above 10 so
        # that moving one to its place never overwrites the other; every other descriptor
        # of ours is close-on-exec, as Python opens them.
        high = [fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10) for fd in (commands_read, replies_write)]
        try:
            self._pid = os.posix_spawn(self.executable, arguments, os.environ, file_actions=[
                (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
                (os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
                (os.POSIX_SPAWN_OPEN, 2, self._log, os.O_WRONLY | os.O_CREAT, 0o600),
                (os.POSIX_SPAWN_DUP2, high[0], 3),
                (os.POSIX_SPAWN_DUP2, high[1], 4),
            ])
        finally:
            for fd in (*high, commands_read, replies_write):
                os.close(fd)
        self._exit: int | None = None
        self._buffer = b""
        self._next_id = 0
        self.events: list[dict] = []

    def __enter__(self) -> "Browser":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def running(self) -> bool:
        if self._exit is None:
            pid, status = os.waitpid(self._pid, os.WNOHANG)
            if pid:
                self._exit = os.waitstatus_to_exitcode(status)
        return self._exit is None

    def close(self) -> None:
        if self.running():
            try:
                self.send("Browser.close")
            except BrowserError:
                pass
            deadline = time.monotonic() + 10
            while self.running() and time.monotonic() < deadline:
                time.sleep(0.05)
            if self.running():
                os.kill(self._pid, signal.SIGKILL)
                self._exit = os.waitstatus_to_exitcode(os.waitpid(self._pid, 0)[1])
        for fd in (self._commands, self._replies):
            try:
                os.close(fd)
            except OSError:
                pass
        self._profile.cleanup()

    # ------------------------------------------------------------ the protocol
    def send(self, method: str, params: dict | None = None, session: str | None = None) -> dict:
        """Send one command and wait for its reply; events that arrive meanwhile are kept."""
        self._next_id += 1
        message = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        try:
            os.write(self._commands, json.dumps(message).encode() + b"\0")
        except BrokenPipeError:
            raise BrowserError(f"the browser is gone: {self._stderr_tail()}") from None
        deadline = time.monotonic() + self.timeout
        while True:
            reply = self._read(deadline)
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise BrowserError(f"{method}: {reply['error'].get('message')}")
                return reply.get("result", {})
            self.events.append(reply)

    def _read(self, deadline: float) -> dict:
        while b"\0" not in self._buffer:
            if time.monotonic() > deadline:
                raise BrowserError(f"no reply within {self.timeout} s")
            chunk = os.read(self._replies, 1 << 20)
            if not chunk:
                raise BrowserError(f"the browser closed the pipe: {self._stderr_tail()}")
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(message)

    def _stderr_tail(self) -> str:
        time.sleep(0.2)  # let a dying browser finish
        state = "still running" if self.running() else f"exit status {self._exit}"
        try:
            with open(self._log, encoding="utf-8", errors="replace") as handle:
                return f"{state}; its stderr ends: {handle.read()[-2000:]}"
        except OSError:
            return state

    def new_page(self, width: int = 1440, height: int = 900) -> "Page":
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        page = Page(self, session)
        page.send("Page.enable")
        page.send("Runtime.enable")
        page.send("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})
        return page


class Page:
    """One tab: navigate, evaluate JavaScript, click and type like a user, screenshot."""

    def __init__(self, browser: Browser, session: str):
        self.browser = browser
        self.session = session

    def send(self, method: str, params: dict | None = None) -> dict:
        return self.browser.send(method, params, self.session)

    def open(self, path: str | Path, ready: str = "window.etsuiteReady",
             timeout: float = 120.0) -> float:
        """Load a file and wait until `ready` is truthy; returns the seconds it took."""
        url = Path(path).resolve().as_uri()
        begun = time.monotonic()
        self.send("Page.navigate", {"url": url})
        self.wait_for(ready, timeout)
        return time.monotonic() - begun

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression (promises are awaited); a thrown error
        raises BrowserError with its text."""
        result = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                                "awaitPromise": True, "userGesture": True})
        if "exceptionDetails" in result:
            details = result["exceptionDetails"]
            text = (details.get("exception") or {}).get("description") or details.get("text")
            raise BrowserError(f"JavaScript error: {text}")
        return result["result"].get("value")

    def wait_for(self, expression: str, timeout: float = 30.0, every: float = 0.05) -> Any:
        deadline = time.monotonic() + timeout
        while True:
            try:
                value = self.evaluate(expression)
            except BrowserError:
                value = None  # the page is still navigating
            if value:
                return value
            if time.monotonic() > deadline:
                raise BrowserError(f"still false after {timeout} s: {expression}")
            time.sleep(every)

    def click(self, selector: str) -> None:
        """A real mouse click (pressed and released) at the middle of the element."""
        box = self.evaluate(
            f"(() => {{ const e = document.querySelector({json.dumps(selector)});"
            f" if (!e) return null; e.scrollIntoView({{block: 'center', inline: 'nearest'}});"
            f" const r = e.getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; }})()")
        if box is None:
            raise BrowserError(f"nothing matches {selector!r}")
        x, y = box
        for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
            self.send("Input.dispatchMouseEvent",
                      {"type": kind, "x": x, "y": y, "button": "left", "clickCount": 1})

    def type(self, selector: str, text: str) -> None:
        """Focus the element and type the text, as a keyboard would."""
        self.click(selector)
        self.send("Input.insertText", {"text": text})

    def screenshot(self, path: str | Path, full_page: bool = False) -> Path:
        params = {"format": "png", "captureBeyondViewport": full_page}
        data = self.send("Page.captureScreenshot", params)["data"]
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(data))
        return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m etsuite.tools.headless",
        description="Open a page in headless Chromium and print how long it took to become "
                    "usable (its script sets window.etsuiteReady).")
    parser.add_argument("page", help="an HTML file, e.g. reports/index.html")
    parser.add_argument("--screenshot", metavar="PNG", help="also save a screenshot here")
    args = parser.parse_args(argv)
    try:
        with Browser() as browser:
            page = browser.new_page()
            wall = page.open(args.page)
            ready = page.evaluate("window.etsuiteReady")
            if args.screenshot:
                page.screenshot(args.screenshot)
    except BrowserError as error:
        sys.stderr.write(f"headless: error: {error}\n")
        return 2
    print(f"{args.page}: {ready['results']} tests, {ready['cases']} cases; usable after "
          f"{ready['ms'] / 1000:.2f} s (navigation start to first render), "
          f"{wall:.2f} s wall time including the browser's own work")
    if args.screenshot:
        print(f"screenshot: {args.screenshot}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
