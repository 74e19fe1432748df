# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin of storageperf.k8s.bench_measure: runs the module and relays its progress.

How progress gets to the screen: when the task runs on the controller (connection local, which
is how the collection's playbooks run it), this plugin gives the module a fresh progress file
(option progress_file) and, while the module runs, reads that file from a thread every
progress_interval seconds and prints, with Display.display, every finished step at once and the
running step at most every 5 seconds:

    bench_measure [localhost]: csi_lifecycle · concurrency on #1 · Publish (Attach): 312/1000 vol done, 41.20 vol/s, 7.6s

ansible-playbook writes these lines to its stdout between task results; AWX captures the
controller's stdout, so they appear in the job output while the job runs. On any other
connection the module runs on a remote host whose files this plugin cannot read cheaply: it then
runs without live progress and says so once; results are the same.
"""


import os
import shutil
import signal
import tempfile
import threading
import time
from typing import Any, Callable

from ansible.plugins.action import ActionBase
from ansible.utils.display import Display

from ansible_collections.storageperf.k8s.plugins.module_utils.bench import progress as P

display = Display()
MODULE = "storageperf.k8s.bench_measure"
# a running step is shown at most this often (a 1000-volume step at cluster speed runs for many minutes);
# finished steps are shown as soon as they are seen
SHOW_EVERY = 5.0


class Relay:
    """Reads the progress file on a thread and prints every finished step and the running one."""

    def __init__(self, path: str, interval: float, host: str, clock: Callable[[], float] = time.monotonic) -> None:
        self.path = path
        self.interval = max(0.5, float(interval))
        self.host = host
        self.clock = clock
        self.stop = threading.Event()
        self.printed = 0
        self.last: str | None = None
        self.last_shown: float | None = None
        self.thread = threading.Thread(target=self._loop, name="bench-progress")
        self.thread.daemon = True

    def _show(self, text: str) -> None:
        display.display("bench_measure [%s]: %s" % (self.host, text))

    def poll(self) -> None:
        data = P.read(self.path)
        if not data:
            return
        finished = data.get("finished") or []
        for p in finished[self.printed:]:
            self._show(P.line(p))
        self.printed = len(finished)
        current = data.get("current")
        if current and not current.get("final"):
            text = P.line(current)
            now = self.clock()
            if text != self.last and (self.last_shown is None or now - self.last_shown >= SHOW_EVERY):
                self._show(text)
                self.last = text
                self.last_shown = now

    def _loop(self) -> None:
        # SIGINT/SIGTERM are for the worker's main thread, whose handler passes them on to the module's process
        # group (ansible-playbook interrupted, an AWX cancel). A process-directed signal the kernel hands to this
        # thread instead leaves the main thread asleep in its wait for the module, and the module never hears it.
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
        while not self.stop.wait(self.interval):
            try:
                self.poll()
            except Exception:  # noqa: BLE001 - progress display must never break the task
                pass

    def start(self) -> None:
        self.thread.start()

    def finish(self) -> None:
        self.stop.set()
        self.thread.join(5)
        try:
            self.poll()  # the last finished steps
        except Exception:  # noqa: BLE001
            pass


class ActionModule(ActionBase):
    _requires_connection = True
    _supports_check_mode = True
    _supports_async = True

    def run(self, tmp: str | None = None, task_vars: dict[str, Any] | None = None) -> dict[str, Any]:
        result = super().run(tmp, task_vars)
        args = dict(self._task.args)
        local = getattr(self._connection, "transport", None) == "local"
        relay: Relay | None = None
        tmpdir: str | None = None
        wants_progress = not args.get("progress_file") and not self._task.async_val
        if wants_progress and local:
            tmpdir = tempfile.mkdtemp(prefix="storageperf-progress-")
            args["progress_file"] = os.path.join(tmpdir, "progress.json")
            host = (task_vars or {}).get("inventory_hostname", "localhost")
            relay = Relay(args["progress_file"], args.get("progress_interval") or 2.0, host)
            relay.start()
        elif wants_progress:
            display.vvv("bench_measure: no live progress on connection %s (the module's host is not the controller)"
                        % getattr(self._connection, "transport", "?"))
        try:
            result.update(self._execute_module(module_name=MODULE, module_args=args, task_vars=task_vars,
                                               wrap_async=self._task.async_val))
        finally:
            if relay is not None:
                relay.finish()
            if tmpdir:
                shutil.rmtree(tmpdir, ignore_errors=True)
        return result
