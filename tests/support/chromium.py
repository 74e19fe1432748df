"""Headless Chromium driven over the DevTools protocol on a pipe, to measure a page as it prints.

    found = evaluate_printed(Path("report.html"), "(function () { return document.title; })()", width=703,
                             profile=tmp_path / "profile")

`--dump-dom` lays a page out for the screen only. Print is measured here the way DevTools' "Emulate CSS media type:
print" does it: Emulation.setEmulatedMedia {media: "print"} (every @media print rule applies, @media screen ones do
not) with the viewport set to the printable width of the paper (Emulation.setDeviceMetricsOverride), then the
expression is evaluated in the loaded page. `--remote-debugging-pipe` speaks the protocol on file descriptors 3 (in)
and 4 (out), one JSON message per NUL-terminated frame: no port, nothing to poll, and the browser exits when the
pipe closes.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

# the printable width at 96 px per inch of A4 and US Letter less the report's @page margins (render.py: 12 mm each side)
MM = 96 / 25.4
PAPER_WIDTHS = {"A4": round((210 - 2 * 12) * MM), "Letter": round((8.5 * 25.4 - 2 * 12) * MM)}


def executable() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")


class _Pipe:
    def __init__(self, proc: subprocess.Popen, to_browser: int, from_browser: int) -> None:
        self.proc, self.to_browser, self.from_browser = proc, to_browser, from_browser
        self.buffer, self.next_id, self.events = b"", 0, []

    def _frame(self) -> dict[str, Any]:
        while b"\0" not in self.buffer:
            chunk = os.read(self.from_browser, 65536)
            if not chunk:
                raise RuntimeError("Chromium closed the DevTools pipe (exit %s)" % self.proc.poll())
            self.buffer += chunk
        frame, self.buffer = self.buffer.split(b"\0", 1)
        return json.loads(frame)

    def call(self, method: str, session: str | None = None, **params: Any) -> dict[str, Any]:
        self.next_id += 1
        message: dict[str, Any] = {"id": self.next_id, "method": method, "params": params}
        if session:
            message["sessionId"] = session
        os.write(self.to_browser, json.dumps(message).encode() + b"\0")
        while True:
            reply = self._frame()
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError("%s: %s" % (method, reply["error"]))
                return reply.get("result", {})
            self.events.append(reply)

    def wait_event(self, method: str, session: str) -> dict[str, Any]:
        """The next event of this name in this session (a page's load is an event, not a time)."""
        while True:
            found = next((e for e in self.events if e.get("method") == method and e.get("sessionId") == session), None)
            if found:
                self.events.remove(found)
                return found
            self.events.append(self._frame())


def evaluate_printed(html: Path, expression: str, width: int, profile: Path, height: int = 1100) -> Any:
    """The value of `expression` in `html` laid out for print at `width` CSS px (see the module docstring)."""
    exe = executable()
    if not exe:
        raise FileNotFoundError("no chromium on this machine (apt-get install -y chromium)")
    browser_in, ours_out = os.pipe()
    ours_in, browser_out = os.pipe()
    args = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
            "--disable-component-update", "--disable-sync", "--remote-debugging-pipe", f"--user-data-dir={profile}",
            "about:blank"]
    # the browser reads the protocol on fd 3 and writes it on fd 4
    proc = subprocess.Popen(["bash", "-c", 'exec "$@" 3<&%d 4>&%d' % (browser_in, browser_out), "chromium", *args],
                            pass_fds=(browser_in, browser_out), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.close(browser_in)
    os.close(browser_out)
    pipe = _Pipe(proc, ours_out, ours_in)
    try:
        target = pipe.call("Target.createTarget", url="about:blank")["targetId"]
        session = pipe.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        pipe.call("Emulation.setDeviceMetricsOverride", session, width=width, height=height, deviceScaleFactor=1,
                  mobile=False)
        pipe.call("Emulation.setEmulatedMedia", session, media="print")
        pipe.call("Page.enable", session)
        pipe.call("Page.navigate", session, url=html.resolve().as_uri())
        pipe.wait_event("Page.loadEventFired", session)
        result = pipe.call("Runtime.evaluate", session, expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            raise RuntimeError("the expression failed in the page: %s" % result["exceptionDetails"])
        return result["result"].get("value")
    finally:
        try:
            pipe.call("Browser.close")
        except (OSError, RuntimeError):
            pass
        os.close(ours_out)
        os.close(ours_in)
        proc.wait(timeout=60)
