"""Test-only callback: append every task result as one JSON line to $RECORD_RESULTS_FILE."""
from __future__ import annotations

import json
import os

from ansible.plugins.callback import CallbackBase

DOCUMENTATION = """
name: record_results
type: aggregate
short_description: write task results as JSON lines for tests
description: Appends one JSON object per task result to the file named by RECORD_RESULTS_FILE.
"""


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "record_results"
    CALLBACK_NEEDS_ENABLED = True

    def _write(self, status, result):
        path = os.environ.get("RECORD_RESULTS_FILE")
        if not path:
            return
        line = {
            "task": result._task.get_name(),
            "action": result._task.action,
            "host": result._host.get_name(),
            "status": status,
            "result": result._result,
        }
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(line, default=str) + "\n")

    def v2_runner_on_ok(self, result):
        self._write("ok", result)

    def v2_runner_on_failed(self, result, ignore_errors=False):
        self._write("failed", result)

    def v2_runner_on_skipped(self, result):
        self._write("skipped", result)

    def v2_runner_on_unreachable(self, result):
        self._write("unreachable", result)
