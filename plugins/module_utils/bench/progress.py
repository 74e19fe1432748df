# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Progress of a running step, from the bench_measure module to its action plugin on the controller.

The module rewrites one small JSON file (atomically: temp file + rename) every couple of seconds;
the action plugin (plugins/action/bench_measure.py) reads it while the module runs and prints one line
with display.display, which ansible-playbook writes to its stdout and AWX shows in the job output.
"""
from __future__ import annotations

import json
import os
import tempfile
from typing import Any, Mapping


class ProgressFile:
    """Writer side (the module): {"current": progress of the running step, "finished": [final progress
    of every step done so far]}. Write failures are ignored: progress never fails a measurement."""

    def __init__(self, path: str | None, context: Mapping[str, Any] | None = None) -> None:
        self.path = path
        self.context = dict(context or {})
        self.finished: list[dict[str, Any]] = []

    def __call__(self, progress: Mapping[str, Any]) -> None:
        if not self.path:
            return
        current = dict(self.context, **progress)
        if current.get("final"):
            self.finished.append(current)
        data = {"current": current, "finished": self.finished}
        try:
            directory = os.path.dirname(os.path.abspath(self.path))
            fd, tmp = tempfile.mkstemp(prefix=".progress.", dir=directory)
            with os.fdopen(fd, "w") as f:
                json.dump(data, f)
            os.chmod(tmp, 0o644)
            os.replace(tmp, self.path)
        except OSError:
            pass

    def update(self, **context: Any) -> None:
        self.context.update(context)


def read(path: str) -> Any:
    """The last progress written, or None (not written yet, or unreadable)."""
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def line(p: Mapping[str, Any]) -> str:
    """'csi_lifecycle · concurrency on #1 · Publish (Attach): 312/1000 vol done, 41.2 vol/s, 7.6s'."""
    variant = "%s #%s" % (p.get("variant"), p.get("repetition")) if p.get("variant") else None
    where = " · ".join(x for x in (p.get("benchmark"), variant) if x)
    rate = p.get("rate")
    text = "%s: %s/%s %s done" % (p.get("label") or p.get("step"), p.get("done"), p.get("total"), p.get("unit") or "obj")
    if p.get("errors"):
        text += ", %s failed" % p["errors"]
    if rate is not None:
        text += ", %.2f %s/s" % (rate, p.get("unit") or "obj")
    text += ", %.1fs" % float(p.get("elapsed_s") or 0)
    if p.get("final"):
        text += " (step finished)"
    return ("%s · %s" % (where, text)) if where else text
