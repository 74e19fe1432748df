"""Benchmark-only callback: one JSON line per task result with its wall time, for benchmarks/controller_cost.py."""
from __future__ import annotations

import json
import os
import time

from ansible.plugins.callback import CallbackBase

DOCUMENTATION = """
name: task_profile
type: aggregate
short_description: per host and task, the wall time and whether a module ran (JSON lines)
description: Appends one JSON object per task result to the file named by TASK_PROFILE_FILE.
"""

# actions that run inside the controller's worker and start no module process
CONTROLLER_ONLY = frozenset(
    f"{prefix}{name}" for prefix in ("", "ansible.builtin.", "ansible.legacy.")
    for name in ("set_fact", "set_stats", "debug", "assert", "fail", "meta", "include_tasks", "import_tasks",
                 "include_role", "import_role", "include_vars", "add_host", "group_by", "pause", "end_play"))


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "task_profile"
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self) -> None:
        super().__init__()
        self._started: dict[tuple[str, str], float] = {}
        self._path = os.environ.get("TASK_PROFILE_FILE")

    def v2_runner_on_start(self, host, task):
        self._started[(host.get_name(), task._uuid)] = time.monotonic()

    def _write(self, status, result):
        if not self._path:
            return
        host, task = result._host.get_name(), result._task
        start = self._started.pop((host, task._uuid), None)
        items = result._result.get("results")
        line = {
            "host": host,
            "task": task.get_name(),
            "action": task.action,
            "status": status,
            "seconds": round(time.monotonic() - start, 4) if start is not None else None,
            # a loop runs its module once per item; a skipped task runs none
            "modules": 0 if status == "skipped" or task.action in CONTROLLER_ONLY
            else (len(items) if isinstance(items, list) else 1),
        }
        with open(self._path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(line) + "\n")

    def v2_runner_on_ok(self, result):
        self._write("ok", result)

    def v2_runner_on_failed(self, result, ignore_errors=False):
        self._write("failed", result)

    def v2_runner_on_skipped(self, result):
        self._write("skipped", result)

    def v2_runner_on_unreachable(self, result):
        self._write("unreachable", result)
