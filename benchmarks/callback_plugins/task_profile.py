"""Benchmark-only callback: one JSON line per task result with its wall time, for benchmarks/controller_cost.py.

Module runs are counted where they happen: ActionBase._execute_module, wrapped once in the controller before the
workers fork, appends {"module": name} per call. So an action that runs two modules (copy runs stat, then copy)
counts two, and one that runs none (validate_argument_spec, set_fact) counts none. Each line also has the CPU
seconds the call cost: the module process's (the children the worker reaped meanwhile) and the worker's own
(building and writing the AnsiballZ payload), from getrusage in the worker, which runs one task at a time.
"""
from __future__ import annotations

import json
import os
import resource
import time

from ansible.plugins.action import ActionBase
from ansible.plugins.callback import CallbackBase

DOCUMENTATION = """
name: task_profile
type: aggregate
short_description: per host and task, the wall time, and every module run (JSON lines)
description: Appends one JSON object per task result and one per module run to the file named by TASK_PROFILE_FILE.
"""


def _cpu() -> tuple[float, float]:
    """(CPU-s of the reaped children, CPU-s of this process): user + system."""
    children, own = resource.getrusage(resource.RUSAGE_CHILDREN), resource.getrusage(resource.RUSAGE_SELF)
    return children.ru_utime + children.ru_stime, own.ru_utime + own.ru_stime


def _count_module_runs(path: str) -> None:
    """Wrap ActionBase._execute_module (once): every module a worker starts appends one line to path."""
    if getattr(ActionBase._execute_module, "_task_profile", False):
        return
    execute = ActionBase._execute_module

    def counted(self, module_name=None, *args, **kwargs):
        task_vars = kwargs.get("task_vars") or (args[2] if len(args) > 2 else None) or {}
        line = {"host": task_vars.get("inventory_hostname"), "task": self._task.get_name(),
                "module": module_name or self._task.action}
        before = _cpu()
        try:
            return execute(self, module_name, *args, **kwargs)
        finally:
            after = _cpu()
            line.update(module_cpu=round(after[0] - before[0], 4), worker_cpu=round(after[1] - before[1], 4))
            with open(path, "a", encoding="utf-8") as fh:
                fh.write(json.dumps(line) + "\n")

    counted._task_profile = True  # type: ignore[attr-defined]
    ActionBase._execute_module = counted  # type: ignore[method-assign]


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "task_profile"
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self) -> None:
        super().__init__()
        self._started: dict[tuple[str, str], float] = {}
        self._path = os.environ.get("TASK_PROFILE_FILE")
        if self._path:
            _count_module_runs(self._path)

    def v2_runner_on_start(self, host, task):
        self._started[(host.get_name(), task._uuid)] = time.monotonic()

    def _write(self, status, result):
        if not self._path:
            return
        host, task = result._host.get_name(), result._task
        start = self._started.pop((host, task._uuid), None)
        line = {
            "host": host,
            "task": task.get_name(),
            "action": task.action,
            "status": status,
            "seconds": round(time.monotonic() - start, 4) if start is not None else None,
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

    def v2_playbook_on_stats(self, stats):
        # ansible-playbook's own CPU (parsing, templating, the strategy, callbacks) against its reaped workers'
        if self._path:
            own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
            with open(self._path, "a", encoding="utf-8") as fh:
                fh.write(json.dumps({"playbook_cpu": round(own.ru_utime + own.ru_stime, 4),
                                     "workers_cpu": round(children.ru_utime + children.ru_stime, 4)}) + "\n")
